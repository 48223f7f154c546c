/*
 * Shape kernels of the CPU backend: write_box (concat and stack write each input into its
 * box of the output) and pad (a gather: each output element is the input element it
 * covers, or the pad value). Both only move elements, so they work on the bits of 1-, 2-, 4-
 * and 8-byte elements: NaN payloads and signed zeros pass through unchanged, and every dtype
 * of a size shares one loop.
 */
#include <math.h>
#include <string.h>

#include "backend/strided_iter.h"
#include "cpu_kernels.h"

/* n elements from s[si], s[si + sstride], ... to d[di], d[di + dstride], ...; strides may be
 * 0 or negative. */
static void copy_run(void *d, int64_t di, int64_t dstride, const void *s, int64_t si, int64_t sstride, int64_t n,
                     size_t es) {
    if (es == 1) {
        uint8_t *pd = d;
        const uint8_t *ps = s;
        for (int64_t i = 0; i < n; i++) pd[di + i * dstride] = ps[si + i * sstride];
    } else if (es == 2) {
        uint16_t *pd = d;
        const uint16_t *ps = s;
        for (int64_t i = 0; i < n; i++) pd[di + i * dstride] = ps[si + i * sstride];
    } else if (es == 4) {
        uint32_t *pd = d;
        const uint32_t *ps = s;
        for (int64_t i = 0; i < n; i++) pd[di + i * dstride] = ps[si + i * sstride];
    } else {
        uint64_t *pd = d;
        const uint64_t *ps = s;
        for (int64_t i = 0; i < n; i++) pd[di + i * dstride] = ps[si + i * sstride];
    }
}

/* n contiguous elements from d[di] set to the element whose bits are `bits`. */
static void fill_run(void *d, int64_t di, int64_t n, size_t es, uint64_t bits) {
    if (es == 1) {
        memset((uint8_t *)d + di, (int)(bits & 0xffu), (size_t)n);
    } else if (es == 2) {
        uint16_t *pd = d;
        for (int64_t i = 0; i < n; i++) pd[di + i] = (uint16_t)bits;
    } else if (es == 4) {
        uint32_t *pd = d;
        for (int64_t i = 0; i < n; i++) pd[di + i] = (uint32_t)bits;
    } else {
        uint64_t *pd = d;
        for (int64_t i = 0; i < n; i++) pd[di + i] = bits;
    }
}

wgt_status wgt_cpu_write_box(wgt_backend *be, const wgt_operand *dst, const int64_t *box_start,
                             const wgt_operand *src) {
    (void)be;
    if (src->ndim != dst->ndim || src->dtype != dst->dtype)
        return wgt_error(WGT_ERR_INTERNAL, "write_box of rank %d %s into rank %d %s", src->ndim,
                         wgt_dtype_name(src->dtype), dst->ndim, wgt_dtype_name(dst->dtype));
    for (int d = 0; d < src->ndim; d++)
        if (src->shape[d] == 0) return WGT_OK;
    size_t es = wgt_dtype_size(src->dtype);
    int64_t base = dst->offset; /* the box's first element in dst */
    for (int d = 0; d < dst->ndim; d++) base += box_start[d] * dst->strides[d];
    const int64_t *strides[2] = {dst->strides, src->strides};
    int64_t offsets[2] = {base, src->offset};
    int64_t inner, is[2];
    wgt_strided_iter it;
    wgt_strided_iter_init(&it, src->ndim, src->shape, 2, strides, offsets, &inner, is);
    do {
        copy_run(dst->host, it.base[0], is[0], src->host, it.base[1], is[1], inner, es);
    } while (wgt_strided_iter_next(&it));
    return WGT_OK;
}

wgt_status wgt_cpu_pad(wgt_backend *be, const wgt_operand *out, const wgt_operand *in, const int64_t *before,
                       uint64_t value_bits) {
    (void)be;
    if (in->ndim != out->ndim || in->dtype != out->dtype)
        return wgt_error(WGT_ERR_INTERNAL, "pad of rank %d %s into rank %d %s", in->ndim, wgt_dtype_name(in->dtype),
                         out->ndim, wgt_dtype_name(out->dtype));
    for (int d = 0; d < out->ndim; d++)
        if (out->shape[d] == 0) return WGT_OK;
    size_t es = wgt_dtype_size(out->dtype);
    uint64_t bits = value_bits;
    int nd = out->ndim;
    const int64_t *strides[1] = {out->strides};
    int64_t offsets[1] = {out->offset};
    int64_t inner, is[1];
    wgt_strided_iter it;
    wgt_strided_iter_init(&it, nd, out->shape, 1, strides, offsets, &inner, is);
    /* The last dimension of a row: [0, lo) value, [lo, hi) input, [hi, inner) value. */
    int64_t lo = nd > 0 ? before[nd - 1] : 0, n_in = nd > 0 ? in->shape[nd - 1] : 1;
    int64_t hi = lo + n_in, in_step = nd > 0 ? in->strides[nd - 1] : 0;
    if (nd > 0 && is[0] != 1) return wgt_error(WGT_ERR_INTERNAL, "pad output is not contiguous");
    /* An empty input is never read: every row is the value (and its strides may be huge). */
    int in_empty = n_in == 0;
    for (int d = 0; d < nd - 1; d++) in_empty |= in->shape[d] == 0;
    do {
        /* The row lies inside the input when every outer coordinate does (the iterator's
         * index holds them); then it maps to one input row. Offsets are added only for
         * coordinates inside: a length-1 dimension may have any stride. */
        int inside = !in_empty;
        int64_t src = in->offset;
        for (int d = 0; d < nd - 1 && inside; d++) {
            int64_t c = it.index[d] - before[d];
            inside = c >= 0 && c < in->shape[d];
            if (inside) src += c * in->strides[d];
        }
        int64_t o = it.base[0];
        if (!inside || n_in == 0) {
            fill_run(out->host, o, inner, es, bits);
            continue;
        }
        fill_run(out->host, o, lo, es, bits);
        copy_run(out->host, o + lo, 1, in->host, src, in_step, n_in, es);
        fill_run(out->host, o + hi, inner - hi, es, bits);
    } while (wgt_strided_iter_next(&it));
    return WGT_OK;
}
