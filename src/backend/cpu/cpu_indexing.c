/*
 * Row gather and row scatter of the CPU backend. Elements move as bytes, whatever their
 * type, so NaN payloads and signed zeros pass through unchanged, as they do on the GPU.
 * Both walk the index list in order and copy one row at a time through the operands'
 * strides; set_rows therefore lets the last of repeated indices win simply by writing it
 * last. Indices the core could not check on the host arrive unchecked: a gather writes zeros
 * for a row whose index is out of range, set_rows writes nothing when any index is, and
 * index_check records the first such index for the core to report. index_narrow turns i64 and
 * u64 indices into the u32 these kernels take, a value out of range into one still out of range.
 */
#include <string.h>

#include "backend/strided_iter.h"
#include "cpu_kernels.h"

/* Index i's bits, widened to 64 (i32 sign-extended). */
static uint64_t index_bits(const wgt_operand *indices, int64_t i) {
    int64_t at = indices->offset + i * indices->strides[0];
    switch (indices->dtype) {
    case WGT_I32: return (uint64_t)(int64_t)((const int32_t *)indices->host)[at];
    case WGT_U32: return ((const uint32_t *)indices->host)[at];
    default: return ((const uint64_t *)indices->host)[at]; /* i64, u64 */
    }
}

/* Whether the index's bits lie in [0, bound): a u64 past 2^63 is as far out as any. */
static int in_range(const wgt_operand *indices, uint64_t bits, int64_t bound) {
    if (indices->dtype != WGT_U64 && (int64_t)bits < 0) return 0;
    return bits < (uint64_t)bound;
}

static int64_t load_index(const wgt_operand *indices, int64_t i) { return (int64_t)index_bits(indices, i); }

/* The first position whose index lies outside [0, bound), or -1. */
static int64_t first_bad(const wgt_operand *indices, int64_t n, int64_t bound) {
    for (int64_t i = 0; i < n; i++)
        if (!in_range(indices, index_bits(indices, i), bound)) return i;
    return -1;
}

wgt_status wgt_cpu_index_check(wgt_backend *be, const wgt_operand *indices, int64_t bound,
                               const wgt_operand *record) {
    (void)be;
    int64_t i = first_bad(indices, indices->shape[0], bound);
    uint32_t *slot = (uint32_t *)record->host + record->offset;
    uint64_t v = i < 0 ? 0 : index_bits(indices, i);
    if (wgt_dtype_size(indices->dtype) == 4) v &= 0xffffffffu; /* the record holds 32-bit values in one word */
    slot[0] = i < 0 ? 0xffffffffu : (uint32_t)i;
    slot[1] = (uint32_t)v;
    slot[2] = (uint32_t)(v >> 32);
    return WGT_OK;
}

wgt_status wgt_cpu_index_narrow(wgt_backend *be, const wgt_operand *out, const wgt_operand *in, int64_t bound) {
    (void)be;
    uint32_t *o = (uint32_t *)out->host + out->offset;
    for (int64_t i = 0; i < in->shape[0]; i++) {
        uint64_t v = index_bits(in, i);
        o[i * out->strides[0]] = in_range(in, v, bound) ? (uint32_t)v : 0xffffffffu;
    }
    return WGT_OK;
}

/* Copies one row: the dimensions 1..ndim-1 of shape, from src at src_off to dst at
 * dst_off, each through its own strides (dimension 0's entries are not used). */
static void copy_row(char *dst, int64_t dst_off, const int64_t *dst_strides, const char *src, int64_t src_off,
                     const int64_t *src_strides, int ndim, const int64_t *shape, size_t es) {
    const int64_t *strides[2] = {dst_strides + 1, src_strides + 1};
    int64_t offsets[2] = {dst_off, src_off}, inner, is[2];
    wgt_strided_iter it;
    wgt_strided_iter_init(&it, ndim - 1, shape + 1, 2, strides, offsets, &inner, is);
    do {
        char *d = dst + (size_t)it.base[0] * es;
        const char *s = src + (size_t)it.base[1] * es;
        if (is[0] == 1 && is[1] == 1) {
            memcpy(d, s, (size_t)inner * es);
            continue;
        }
        for (int64_t k = 0; k < inner; k++)
            memcpy(d + (ptrdiff_t)(k * is[0]) * (ptrdiff_t)es, s + (ptrdiff_t)(k * is[1]) * (ptrdiff_t)es, es);
    } while (wgt_strided_iter_next(&it));
}

wgt_status wgt_cpu_gather_rows(wgt_backend *be, const wgt_operand *out, const wgt_operand *table,
                               const wgt_operand *indices) {
    (void)be;
    size_t es = wgt_dtype_size(table->dtype);
    for (int64_t i = 0; i < out->shape[0]; i++) {
        int64_t row = load_index(indices, i);
        if (row < 0 || row >= table->shape[0]) { /* out is contiguous: its row is one run */
            int64_t n = 1;
            for (int d = 1; d < out->ndim; d++) n *= out->shape[d];
            memset((char *)out->host + (size_t)(out->offset + i * out->strides[0]) * es, 0, (size_t)n * es);
            continue;
        }
        copy_row(out->host, out->offset + i * out->strides[0], out->strides, table->host,
                 table->offset + row * table->strides[0], table->strides, table->ndim, table->shape, es);
    }
    return WGT_OK;
}

wgt_status wgt_cpu_set_rows(wgt_backend *be, const wgt_operand *dst, const wgt_operand *indices,
                            const wgt_operand *rows) {
    (void)be;
    size_t es = wgt_dtype_size(dst->dtype);
    if (first_bad(indices, rows->shape[0], dst->shape[0]) >= 0) return WGT_OK; /* all or nothing */
    for (int64_t i = 0; i < rows->shape[0]; i++) {
        int64_t row = load_index(indices, i);
        copy_row(dst->host, dst->offset + row * dst->strides[0], dst->strides, rows->host,
                 rows->offset + i * rows->strides[0], rows->strides, dst->ndim, dst->shape, es);
    }
    return WGT_OK;
}
