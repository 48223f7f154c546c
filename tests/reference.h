/*
 * Helpers of tests that compute references entry by entry (test_indexing.c, test_scatter.c,
 * test_manip.c, test_binary.c): a seeded generator, element counts, row-major coordinates and
 * positions, and an exact comparison of a result with them.
 */
#ifndef WGT_TEST_COORDS_H
#define WGT_TEST_COORDS_H

#include <stdint.h>
#include <stdlib.h>

#include "test.h"

/* The next value of a splitmix64 sequence. */
static inline uint64_t next_u64(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline int64_t numel_of(int ndim, const int64_t *shape) {
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) n *= shape[i];
    return n;
}

/* Coordinates at[0..ndim) of flat position i in shape. */
static inline void coords(int ndim, const int64_t *shape, int64_t i, int64_t *at) {
    for (int d = ndim - 1; d >= 0; d--) {
        at[d] = shape[d] ? i % shape[d] : 0;
        i = shape[d] ? i / shape[d] : 0;
    }
}

/* The flat position of coordinates at in shape. */
static inline int64_t flat_of(int ndim, const int64_t *shape, const int64_t *at) {
    int64_t p = 0;
    for (int d = 0; d < ndim; d++) p = p * shape[d] + at[d];
    return p;
}

/* A new contiguous f32, f16, i32 or u32 tensor of shape holding v converted to dt (NULL when
 * out of memory). */
static inline wgt_tensor *tensor_of_doubles(wgt_context *ctx, wgt_dtype dt, int ndim, const int64_t *shape,
                                            const double *v) {
    int64_t n = numel_of(ndim, shape);
    size_t es = wgt_dtype_size(dt);
    char *raw = malloc((size_t)(n > 0 ? n : 1) * es);
    for (int64_t i = 0; raw && i < n; i++) {
        switch (dt) {
        case WGT_F32: ((float *)raw)[i] = (float)v[i]; break;
        case WGT_F16: ((uint16_t *)raw)[i] = wgt_f32_to_f16((float)v[i]); break;
        case WGT_I32: ((int32_t *)raw)[i] = (int32_t)v[i]; break;
        default: ((uint32_t *)raw)[i] = (uint32_t)v[i]; break;
        }
    }
    wgt_tensor *t = raw ? wgt_tensor_from_data(ctx, dt, ndim, shape, raw, (size_t)n * es, WGT_USAGE_DEFAULT) : NULL;
    free(raw);
    return t;
}

/* Compares t (read as doubles) with want exactly; names what. */
static inline void check_exact(wgt_tensor *t, const double *want, int64_t n, const char *what) {
    CHECK(t, "%s: %s", what, wgt_last_error());
    if (!t) return;
    CHECK(wgt_tensor_numel(t) == n, "%s: %lld elements, wanted %lld", what, (long long)wgt_tensor_numel(t),
          (long long)n);
    double *got = test_read_f64(t);
    CHECK(got || n == 0, "%s: read: %s", what, wgt_last_error());
    int bad = 0;
    for (int64_t i = 0; got && i < n && bad < 3; i++)
        if (got[i] != want[i]) {
            bad++;
            CHECK(0, "%s: element %lld is %g, wanted %g", what, (long long)i, got[i], want[i]);
        }
    free(got);
}

#endif
