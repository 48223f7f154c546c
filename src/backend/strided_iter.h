/*
 * Walks the elements of a strided view in row-major order, yielding each element's
 * storage index. Used by the CPU kernels and by host-side gathers in the core. The
 * innermost dimension is left to the caller's loop so the common case stays a tight loop.
 */
#ifndef WGT_STRIDED_ITER_H
#define WGT_STRIDED_ITER_H

#include <stdint.h>

#include "wgtensor.h"

typedef struct wgt_strided_iter {
    int ndim; /* outer dimensions only (the innermost is the caller's) */
    int64_t shape[WGT_MAX_DIMS];
    int64_t index[WGT_MAX_DIMS];
    int nops;
    int64_t strides[4][WGT_MAX_DIMS];
    int64_t base[4]; /* current storage index of each operand at inner position 0 */
} wgt_strided_iter;

/* Up to 4 operands over the same shape. inner_len and inner_stride[k] describe the innermost
 * dimension (1 and 0 for rank 0). */
static inline void wgt_strided_iter_init(wgt_strided_iter *it, int ndim, const int64_t *shape, int nops,
                                         const int64_t *const *strides, const int64_t *offsets,
                                         int64_t *inner_len, int64_t *inner_stride) {
    it->ndim = ndim > 0 ? ndim - 1 : 0;
    it->nops = nops;
    for (int d = 0; d < it->ndim; d++) {
        it->shape[d] = shape[d];
        it->index[d] = 0;
    }
    for (int k = 0; k < nops; k++) {
        for (int d = 0; d < it->ndim; d++) it->strides[k][d] = strides[k][d];
        it->base[k] = offsets[k];
        inner_stride[k] = ndim > 0 ? strides[k][ndim - 1] : 0;
    }
    *inner_len = ndim > 0 ? shape[ndim - 1] : 1;
}

/* Advances to the next inner row; returns 0 when done. */
static inline int wgt_strided_iter_next(wgt_strided_iter *it) {
    for (int d = it->ndim - 1; d >= 0; d--) {
        if (++it->index[d] < it->shape[d]) {
            for (int k = 0; k < it->nops; k++) it->base[k] += it->strides[k][d];
            return 1;
        }
        for (int k = 0; k < it->nops; k++) it->base[k] -= it->strides[k][d] * (it->shape[d] - 1);
        it->index[d] = 0;
    }
    return 0;
}

#endif
