/*
 * What the row ops' tests share (tests/test_norm.c, tests/test_norm_special.c): the types
 * they run in, f32's unit roundoff and the output types' final rounding, and tensors made
 * from double values.
 */
#ifndef WGT_TESTS_NORM_UTIL_H
#define WGT_TESTS_NORM_UTIL_H

#include <stdint.h>
#include <stdlib.h>

#include "test.h"

static const wgt_dtype float_types[2] = {WGT_F32, WGT_F16};

/* The kernels compute in f32: U is its unit roundoff. */
#define U 5.97e-8
/* The final rounding into the output type (f16: one rounding is 4.9e-4; the margin covers
 * the f32 steps before it). */
static inline double out_rel(wgt_dtype dt) { return dt == WGT_F16 ? 2e-3 : 2 * U; }

/* Raw storage of n values of dt. */
static inline void *pack(wgt_dtype dt, int64_t n, const double *v) {
    void *raw = malloc((size_t)(n > 0 ? n : 1) * wgt_dtype_size(dt));
    for (int64_t i = 0; raw && i < n; i++) {
        if (dt == WGT_F16) ((uint16_t *)raw)[i] = wgt_f32_to_f16((float)v[i]);
        else ((float *)raw)[i] = (float)v[i];
    }
    return raw;
}

static inline wgt_tensor *from_doubles(wgt_context *ctx, wgt_dtype dt, int ndim, const int64_t *shape, const double *v) {
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) n *= shape[i];
    void *raw = pack(dt, n, v);
    wgt_tensor *t = raw ? wgt_tensor_from_data(ctx, dt, ndim, shape, raw, (size_t)n * wgt_dtype_size(dt), WGT_USAGE_DEFAULT)
                        : NULL;
    free(raw);
    return t;
}

#endif
