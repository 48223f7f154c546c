/* The reductions' shared check of an axes list (reduce.c), for reductions composed elsewhere. */
#ifndef WGT_REDUCE_AXES_H
#define WGT_REDUCE_AXES_H

#include "node.h"

/* Flags in reduced[] the axes listed (negative count from the end; naxes 0: every axis) after
 * checking each is in range and none is listed twice; 0 with the error set (fn named). */
int wgt_reduce_mark_axes(const char *fn, const wgt_tensor *a, int naxes, const int *axes, int *reduced);

/* A reduction computed in f32 with keepdims finished: r (consumed) with the kept length-1
 * axes dropped unless keepdims (to nd, shape), then cast to dtype. */
wgt_tensor *wgt_reduce_f32_finish(wgt_tensor *r, int keepdims, int nd, const int64_t *shape, wgt_dtype dtype);

/* logsumexp over the last axis of a (f32 or f16, rank >= 1, checked by the caller) by the
 * backend's row kernel, one read of a: f32, a's shape with the last dimension 1 (norm.c). A
 * row whose maximum is not finite gives that maximum (+inf, or -inf for a row of -inf), or
 * NaN where it holds one. */
wgt_tensor *wgt_rows_logsumexp(const char *fn, wgt_tensor *a);

#endif
