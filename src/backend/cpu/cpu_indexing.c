/*
 * Row gather and row scatter of the CPU backend. Elements move as bytes, whatever their
 * type, so NaN payloads and signed zeros pass through unchanged, as they do on the GPU.
 * Both walk the index list in order and copy one row at a time through the operands'
 * strides; set_rows therefore lets the last of repeated indices win simply by writing it
 * last. Indices arrive checked (0 <= index < rows), so an i32 index is read as a
 * non-negative value.
 */
#include <string.h>

#include "backend/strided_iter.h"
#include "cpu_kernels.h"

static int64_t load_index(const wgt_operand *indices, int64_t i) {
    int64_t at = indices->offset + i * indices->strides[0];
    if (indices->dtype == WGT_I32) return ((const int32_t *)indices->host)[at];
    return ((const uint32_t *)indices->host)[at];
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
        copy_row(out->host, out->offset + i * out->strides[0], out->strides, table->host,
                 table->offset + row * table->strides[0], table->strides, table->ndim, table->shape, es);
    }
    return WGT_OK;
}

wgt_status wgt_cpu_set_rows(wgt_backend *be, const wgt_operand *dst, const wgt_operand *indices,
                            const wgt_operand *rows) {
    (void)be;
    size_t es = wgt_dtype_size(dst->dtype);
    for (int64_t i = 0; i < rows->shape[0]; i++) {
        int64_t row = load_index(indices, i);
        copy_row(dst->host, dst->offset + row * dst->strides[0], dst->strides, rows->host,
                 rows->offset + i * rows->strides[0], rows->strides, dst->ndim, dst->shape, es);
    }
    return WGT_OK;
}
