/*
 * Row gather, row scatter and index checks on WebGPU (wgsl/gather_rows.wgsl,
 * wgsl/set_rows.wgsl, wgsl/set_rows_pick.wgsl, wgsl/index_check.wgsl, wgsl/index_narrow.wgsl).
 * Nothing here reads indices back: gather writes zero rows for indices out of range, set_rows
 * writes nothing when any index is out of range, and index_check writes the first bad
 * position and value into the core's check record, read at the next synchronisation.
 * index_narrow turns i64 and u64 indices (word pairs) into the u32 the row kernels take, so
 * only it and index_check read 64-bit indices.
 *
 * The row kernels move raw bits and so depend only on the element size: one pipeline for
 * 32-bit types and one for f16, packed two to a word. gather_rows runs one invocation per
 * output element (per word for f16). set_rows lets the last of repeated indices win, as the
 * CPU's sequential loop does: with few indices each invocation scans them all; with many a
 * pick pass first leaves, per dst row, the last position naming it (atomicMax into a zeroed
 * buffer of dst rows + 1 words, the last one flagging a bad index). f16 rows that cover
 * whole words (a KV cache's rows, say) are written a word an invocation, in one dispatch;
 * rows that start at odd positions share a word with a neighbouring row, and the scatter then
 * runs twice, once per storage parity, so each word has a single writer per dispatch.
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
    uint32_t rows;
    uint32_t row_shape[8];
    int32_t row_strides[8];
} gather_params;

typedef struct {
    uint32_t count, row, row_ndim, parity;
    uint32_t dst_offset, rows_offset;
    int32_t dst_stride0, rows_stride0;
    uint32_t index_offset;
    int32_t index_stride;
    uint32_t n, dst_rows, is_signed, winners, words, pad;
    uint32_t row_shape[8];
    int32_t dst_strides[8];
    int32_t rows_strides[8];
} set_rows_params;

typedef struct {
    uint32_t count, offset;
    int32_t stride;
    uint32_t bound, is_signed, slot, wide, pad;
} check_params;

typedef struct {
    uint32_t count, offset;
    int32_t stride;
    uint32_t bound;
} narrow_params;

/* Set_rows with more indices than this runs the pick pass; with fewer each invocation scans
 * them all, which costs less than zeroing a buffer of every dst row. */
#define SCAN_INDICES 64u

typedef struct {
    const char *name; /* the template: "gather_rows", "set_rows", "set_rows_pick", "index_check" or "index_narrow" */
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

/* storage: the kernel's storage bindings (the last one written). */
static wgt_status indexing_pipeline(wgt_webgpu *w, const char *name, wgt_dtype dtype, int storage,
                                    wgt_pipeline **out) {
    indexing_kernel k = {name, dtype == WGT_F16};
    char key[64];
    snprintf(key, sizeof key, "%s:%s", name, k.half ? "16bit" : "32bit");
    return wgt_wgpu_pipeline(w, key, storage, build_indexing, &k, out);
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
    if (wgt_dtype_size(table->dtype) == 8) return wgt_wgpu_gather_rows64(be, out, table, indices);
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
    p.rows = (uint32_t)table->shape[0];
    wgt_pipeline *pl;
    wgt_status st = indexing_pipeline(w, "gather_rows", table->dtype, 3, &pl);
    if (st != WGT_OK) return st;
    uint64_t invocations = table->dtype == WGT_F16 ? (count + 1) / 2 : count;
    wgt_buffer *buffers[3] = {table->buffer, indices->buffer, out->buffer};
    return wgt_wgpu_dispatch(w, pl, buffers, &p, sizeof p, (invocations + WORKGROUP_SIZE - 1) / WORKGROUP_SIZE);
}

wgt_status wgt_wgpu_index_check(wgt_backend *be, const wgt_operand *indices, int64_t bound,
                                const wgt_operand *record) {
    wgt_webgpu *w = (wgt_webgpu *)be;
    check_params p;
    memset(&p, 0, sizeof p);
    p.count = (uint32_t)indices->shape[0];
    p.offset = (uint32_t)indices->offset;
    p.stride = (int32_t)indices->strides[0];
    p.bound = (uint32_t)bound; /* a table's rows: below 2^31 */
    p.is_signed = indices->dtype == WGT_I32;
    p.slot = (uint32_t)record->offset;
    p.wide = wgt_dtype_size(indices->dtype) == 8;
    wgt_pipeline *pl;
    wgt_status st = indexing_pipeline(w, "index_check", WGT_U32, 2, &pl);
    if (st != WGT_OK) return st;
    wgt_buffer *buffers[2] = {indices->buffer, record->buffer};
    return wgt_wgpu_dispatch(w, pl, buffers, &p, sizeof p, 1);
}

wgt_status wgt_wgpu_index_narrow(wgt_backend *be, const wgt_operand *out, const wgt_operand *in, int64_t bound) {
    wgt_webgpu *w = (wgt_webgpu *)be;
    if (out->offset != 0 || out->strides[0] != 1 || bound < 0 || bound > 0xffffffffll)
        return wgt_error(WGT_ERR_INTERNAL, "index_narrow to offset %lld, stride %lld, bound %lld",
                         (long long)out->offset, (long long)out->strides[0], (long long)bound);
    narrow_params p = {(uint32_t)in->shape[0], (uint32_t)in->offset, (int32_t)in->strides[0], (uint32_t)bound};
    if (p.count == 0) return WGT_OK;
    wgt_pipeline *pl;
    wgt_status st = indexing_pipeline(w, "index_narrow", WGT_U32, 2, &pl);
    if (st != WGT_OK) return st;
    wgt_buffer *buffers[2] = {in->buffer, out->buffer};
    return wgt_wgpu_dispatch(w, pl, buffers, &p, sizeof p, ((uint64_t)p.count + WORKGROUP_SIZE - 1) / WORKGROUP_SIZE);
}

/* Whether every f16 element pair (2m, 2m + 1) of dst's rows lies in one storage word: the
 * innermost dimension even and dense, every other stride and the offset even. */
static int rows_are_whole_words(const wgt_operand *dst) {
    int last = dst->ndim - 1;
    if (last < 1 || dst->shape[last] % 2 || dst->strides[last] != 1 || dst->offset % 2) return 0;
    for (int d = 0; d < last; d++)
        if (dst->strides[d] % 2) return 0;
    return 1;
}

wgt_status wgt_wgpu_set_rows(wgt_backend *be, const wgt_operand *dst, const wgt_operand *indices,
                             const wgt_operand *rows) {
    wgt_webgpu *w = (wgt_webgpu *)be;
    if (wgt_dtype_size(dst->dtype) == 8) return wgt_wgpu_set_rows64(be, dst, indices, rows);
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
    p.count = (uint32_t)(n * p.row);
    p.row_ndim = (uint32_t)(dst->ndim - 1);
    p.dst_offset = (uint32_t)dst->offset;
    p.rows_offset = (uint32_t)rows->offset;
    p.dst_stride0 = (int32_t)dst->strides[0];
    p.rows_stride0 = (int32_t)rows->strides[0];
    for (int d = 1; d < dst->ndim; d++) {
        p.dst_strides[d - 1] = (int32_t)dst->strides[d];
        p.rows_strides[d - 1] = (int32_t)rows->strides[d];
    }
    p.index_offset = (uint32_t)indices->offset;
    p.index_stride = (int32_t)indices->strides[0];
    p.n = (uint32_t)n;
    p.dst_rows = (uint32_t)dst->shape[0];
    p.is_signed = indices->dtype == WGT_I32;
    p.winners = n > SCAN_INDICES;
    wgt_status st;
    wgt_buffer *winners = NULL;
    wgt_pipeline *pl;
    if (p.winners) {
        if ((st = wgt_wgpu_buffer_create(be, ((size_t)p.dst_rows + 1) * 4, 1, &winners)) != WGT_OK ||
            (st = indexing_pipeline(w, "set_rows_pick", WGT_U32, 2, &pl)) != WGT_OK)
            goto done;
        wgt_buffer *pick[2] = {indices->buffer, winners};
        if ((st = wgt_wgpu_dispatch(w, pl, pick, &p, sizeof p, (n + WORKGROUP_SIZE - 1) / WORKGROUP_SIZE)) != WGT_OK)
            goto done;
    }
    if ((st = indexing_pipeline(w, "set_rows", dst->dtype, 4, &pl)) != WGT_OK) goto done;
    wgt_buffer *buffers[4] = {rows->buffer, indices->buffer, winners ? winners : indices->buffer, dst->buffer};
    p.words = dst->dtype == WGT_F16 && rows_are_whole_words(dst);
    uint64_t invocations = p.words ? p.count / 2 : p.count, groups = (invocations + WORKGROUP_SIZE - 1) / WORKGROUP_SIZE;
    for (p.parity = 0; p.parity < (dst->dtype == WGT_F16 && !p.words ? 2u : 1u) && st == WGT_OK; p.parity++)
        st = wgt_wgpu_dispatch(w, pl, buffers, &p, sizeof p, groups);
done:
    wgt_wgpu_buffer_destroy(be, winners); /* a release: the recorded dispatches keep it alive */
    return st;
}
