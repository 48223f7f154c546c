/*
 * Row gather and row scatter on WebGPU (wgsl/gather_rows.wgsl, wgsl/set_rows.wgsl). Both
 * kernels move raw bits and so depend only on the element size: one pipeline for 32-bit
 * types and one for f16, packed two to a word. gather_rows runs one invocation per output
 * element (per word for f16). set_rows first resolves repeated indices on the host: it
 * reads the indices back, keeps the last occurrence of each dst row, and uploads the kept
 * (dst row, source row) pairs, so no two invocations write the same row and the result
 * matches the CPU's sequential "last wins". f16 rows can start at odd positions, sharing a
 * word with a neighbouring row; the scatter then runs twice, once per storage parity, so
 * each word has a single writer per dispatch.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "webgpu_internal.h"

#define WORKGROUP_SIZE 256u

typedef struct {
    uint32_t count, row, row_ndim, table_offset;
    uint32_t index_offset;
    int32_t index_stride, table_stride0;
    uint32_t pad;
    uint32_t row_shape[8];
    int32_t row_strides[8];
} gather_params;

typedef struct {
    uint32_t count, row, row_ndim, parity;
    uint32_t dst_offset, rows_offset;
    int32_t dst_stride0, rows_stride0;
    uint32_t row_shape[8];
    int32_t dst_strides[8];
    int32_t rows_strides[8];
} set_rows_params;

typedef struct {
    const char *name; /* the template: "gather_rows" or "set_rows" */
    int half;
} indexing_kernel;

static char *build_indexing(wgt_webgpu *w, const void *arg) {
    (void)w;
    const indexing_kernel *k = arg;
    const char *text = wgt_wgsl_source(k->name);
    if (!text) return NULL;
    const char *pairs[] = {"HALF", k->half ? "true" : "false", NULL};
    return wgt_wgsl_expand(text, pairs);
}

static wgt_status indexing_pipeline(wgt_webgpu *w, const char *name, wgt_dtype dtype, wgt_pipeline **out) {
    indexing_kernel k = {name, dtype == WGT_F16};
    char key[64];
    snprintf(key, sizeof key, "%s:%s", name, k.half ? "16bit" : "32bit");
    return wgt_wgpu_pipeline(w, key, 3, build_indexing, &k, out);
}

/* Row dimensions (1..ndim-1) and the element count of one row. */
static uint32_t row_layout(const wgt_operand *t, uint32_t *shape) {
    uint64_t row = 1;
    for (int d = 1; d < t->ndim; d++) {
        shape[d - 1] = (uint32_t)t->shape[d];
        row *= (uint64_t)t->shape[d];
    }
    return (uint32_t)row;
}

wgt_status wgt_wgpu_gather_rows(wgt_backend *be, const wgt_operand *out, const wgt_operand *table,
                                const wgt_operand *indices) {
    wgt_webgpu *w = (wgt_webgpu *)be;
    /* The f16 kernel packs output words from element 0 on. */
    if (out->offset != 0)
        return wgt_error(WGT_ERR_INTERNAL, "gather_rows output at offset %lld", (long long)out->offset);
    if (table->ndim < 1 || table->ndim > WGT_MAX_DIMS)
        return wgt_error(WGT_ERR_INTERNAL, "gather_rows table of rank %d", table->ndim);
    gather_params p;
    memset(&p, 0, sizeof p);
    p.row = row_layout(table, p.row_shape);
    uint64_t count = (uint64_t)out->shape[0] * p.row;
    if (count == 0) return WGT_OK;
    if (count > 0x7fffffffu)
        return wgt_error(WGT_ERR_LIMIT, "gather_rows of %llu elements is beyond 32-bit indexing",
                         (unsigned long long)count);
    p.count = (uint32_t)count;
    p.row_ndim = (uint32_t)(table->ndim - 1);
    p.table_offset = (uint32_t)table->offset;
    p.table_stride0 = (int32_t)table->strides[0];
    for (int d = 1; d < table->ndim; d++) p.row_strides[d - 1] = (int32_t)table->strides[d];
    p.index_offset = (uint32_t)indices->offset;
    p.index_stride = (int32_t)indices->strides[0];
    wgt_pipeline *pl;
    wgt_status st = indexing_pipeline(w, "gather_rows", table->dtype, &pl);
    if (st != WGT_OK) return st;
    uint64_t invocations = table->dtype == WGT_F16 ? (count + 1) / 2 : count;
    wgt_buffer *buffers[3] = {table->buffer, indices->buffer, out->buffer};
    return wgt_wgpu_dispatch(w, pl, buffers, &p, sizeof p, (invocations + WORKGROUP_SIZE - 1) / WORKGROUP_SIZE);
}

/* The n index values, in order, on the host. A strided or broadcast index view is first
 * compacted on the device, so the read is n words whatever the stride. */
static wgt_status read_indices(wgt_backend *be, const wgt_operand *indices, uint32_t *host, size_t n) {
    if (indices->strides[0] == 1)
        return wgt_wgpu_buffer_read(be, indices->buffer, (size_t)indices->offset * 4, host, n * 4);
    wgt_buffer *tmp;
    wgt_status st = wgt_wgpu_buffer_create(be, n * 4, 0, &tmp);
    if (st != WGT_OK) return st;
    wgt_operand dense = *indices;
    dense.offset = 0;
    dense.strides[0] = 1;
    dense.buffer = tmp;
    dense.host = NULL;
    st = wgt_wgpu_copy(be, &dense, indices);
    if (st == WGT_OK) st = wgt_wgpu_buffer_read(be, tmp, 0, host, n * 4);
    wgt_wgpu_buffer_destroy(be, tmp);
    return st;
}

static int compare_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Keeps the last occurrence of each index: sorting (index, position) keys groups equal
 * indices with the latest position last. Writes (dst row, source row) pairs; returns
 * how many. */
static size_t last_occurrences(const uint32_t *idx, size_t n, uint64_t *keys, uint32_t *pairs) {
    for (size_t i = 0; i < n; i++) keys[i] = (uint64_t)idx[i] << 32 | (uint64_t)i;
    qsort(keys, n, sizeof *keys, compare_u64);
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        if (i + 1 < n && keys[i + 1] >> 32 == keys[i] >> 32) continue;
        pairs[2 * kept] = (uint32_t)(keys[i] >> 32);
        pairs[2 * kept + 1] = (uint32_t)keys[i];
        kept++;
    }
    return kept;
}

wgt_status wgt_wgpu_set_rows(wgt_backend *be, const wgt_operand *dst, const wgt_operand *indices,
                             const wgt_operand *rows) {
    wgt_webgpu *w = (wgt_webgpu *)be;
    if (dst->ndim < 1 || dst->ndim > WGT_MAX_DIMS)
        return wgt_error(WGT_ERR_INTERNAL, "set_rows destination of rank %d", dst->ndim);
    set_rows_params p;
    memset(&p, 0, sizeof p);
    p.row = row_layout(dst, p.row_shape);
    uint64_t n = (uint64_t)rows->shape[0];
    if (n == 0 || p.row == 0) return WGT_OK;
    if (n * p.row > 0x7fffffffu)
        return wgt_error(WGT_ERR_LIMIT, "set_rows of %llu elements is beyond 32-bit indexing",
                         (unsigned long long)(n * p.row));
    uint32_t *idx = malloc((size_t)n * 4);
    uint64_t *keys = malloc((size_t)n * 8);
    uint32_t *pairs = malloc((size_t)n * 8);
    wgt_status st = WGT_OK;
    wgt_buffer *pair_buf = NULL;
    if (!idx || !keys || !pairs) {
        st = wgt_error(WGT_ERR_OUT_OF_MEMORY, "out of host memory for %llu set_rows indices", (unsigned long long)n);
        goto done;
    }
    if ((st = read_indices(be, indices, idx, (size_t)n)) != WGT_OK) goto done;
    size_t kept = last_occurrences(idx, (size_t)n, keys, pairs);
    if ((st = wgt_wgpu_buffer_create(be, kept * 8, 0, &pair_buf)) != WGT_OK ||
        (st = wgt_wgpu_buffer_write(be, pair_buf, 0, pairs, kept * 8)) != WGT_OK)
        goto done;
    p.count = (uint32_t)(kept * p.row);
    p.row_ndim = (uint32_t)(dst->ndim - 1);
    p.dst_offset = (uint32_t)dst->offset;
    p.rows_offset = (uint32_t)rows->offset;
    p.dst_stride0 = (int32_t)dst->strides[0];
    p.rows_stride0 = (int32_t)rows->strides[0];
    for (int d = 1; d < dst->ndim; d++) {
        p.dst_strides[d - 1] = (int32_t)dst->strides[d];
        p.rows_strides[d - 1] = (int32_t)rows->strides[d];
    }
    wgt_pipeline *pl;
    if ((st = indexing_pipeline(w, "set_rows", dst->dtype, &pl)) != WGT_OK) goto done;
    wgt_buffer *buffers[3] = {rows->buffer, pair_buf, dst->buffer};
    uint64_t groups = (p.count + WORKGROUP_SIZE - 1) / WORKGROUP_SIZE;
    for (p.parity = 0; p.parity < (dst->dtype == WGT_F16 ? 2u : 1u) && st == WGT_OK; p.parity++)
        st = wgt_wgpu_dispatch(w, pl, buffers, &p, sizeof p, groups);
done:
    wgt_wgpu_buffer_destroy(be, pair_buf); /* a release: the recorded dispatches keep it alive */
    free(idx);
    free(keys);
    free(pairs);
    return st;
}
