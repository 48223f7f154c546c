/*
 * The array API's view functions of the C API: wgt_reshape_view (a reshape that never
 * copies), on both backends: views share the storage (a write through the base shows), a
 * layout that needs a copy is WGT_ERR_SHAPE naming the shapes, and results match the
 * row-major reference.
 */
#include <stdlib.h>

#include "reference.h"
#include "test.h"

static wgt_tensor *iota(wgt_context *ctx, int ndim, const int64_t *shape) {
    int64_t n = numel_of(ndim, shape);
    double *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    for (int64_t i = 0; v && i < n; i++) v[i] = (double)i;
    wgt_tensor *t = v ? tensor_of_doubles(ctx, WGT_F32, ndim, shape, v) : NULL;
    free(v);
    return t;
}

TEST_BACKENDS(reshape_view_never_copies) {
    int64_t shape[2] = {4, 6}, to[3] = {2, -1, 3}, flat[1] = {24};
    wgt_tensor *a = iota(ctx, 2, shape);
    wgt_tensor *v = wgt_reshape_view(a, 3, to);
    CHECK(v && wgt_tensor_ndim(v) == 3 && wgt_tensor_shape(v)[1] == 4, "reshape_view: %s", wgt_last_error());
    double want[24];
    for (int i = 0; i < 24; i++) want[i] = i;
    check_exact(v, want, 24, "reshape_view of a contiguous tensor");
    /* A view: a write to the base shows through it. */
    float one = -5;
    wgt_tensor *row = wgt_slice(a, 0, 0, 1, 1), *corner = wgt_slice(row, 1, 0, 1, 1);
    CHECK(corner && wgt_tensor_write(corner, &one, sizeof one) == WGT_OK, "write: %s", wgt_last_error());
    want[0] = -5;
    check_exact(v, want, 24, "reshape_view after a write to its base");
    /* A transposed view cannot be flattened without a copy; stepped rows can be split. */
    wgt_tensor *t = wgt_transpose(a, 0, 1);
    CHECK_ERROR(wgt_reshape_view(t, 1, flat) == NULL, WGT_ERR_SHAPE, "without a copy");
    CHECK_ERROR(wgt_reshape_view(t, 1, flat) == NULL, WGT_ERR_SHAPE, "[6, 4]");
    wgt_tensor *r = wgt_reshape(t, 1, flat); /* wgt_reshape copies instead */
    for (int i = 0; i < 24; i++) want[i] = i % 4 * 6 + i / 4 + (i == 0 ? -5 : 0);
    check_exact(r, want, 24, "wgt_reshape of the transpose");
    int64_t split[3] = {2, 2, 6};
    wgt_tensor *rows = wgt_slice(a, 1, 0, 6, 1), *s = wgt_reshape_view(rows, 3, split);
    CHECK(s != NULL, "reshape_view of a slice: %s", wgt_last_error());
    int64_t bad[1] = {25};
    CHECK_ERROR(wgt_reshape_view(a, 1, bad) == NULL, WGT_ERR_SHAPE, "25");
    int64_t empty[2] = {0, 3}, to_empty[3] = {3, 0, 5};
    wgt_tensor *e = wgt_zeros(ctx, WGT_F32, 2, empty), *ev = wgt_reshape_view(e, 3, to_empty);
    CHECK(ev && wgt_tensor_numel(ev) == 0, "empty reshape_view: %s", wgt_last_error());
    wgt_tensor *bytes = wgt_cast(a, WGT_U8), *bv = wgt_reshape_view(bytes, 3, to); /* narrow types are views too */
    CHECK(bv && wgt_tensor_dtype(bv) == WGT_U8, "reshape_view of u8: %s", wgt_last_error());
    wgt_release(bv), wgt_release(bytes);
    wgt_release(ev), wgt_release(e), wgt_release(s), wgt_release(r), wgt_release(t), wgt_release(corner), wgt_release(row), wgt_release(rows);
    wgt_release(v), wgt_release(a);
}

/* Shapes [3, 1], [4], [] and [2, 1, 1] broadcast to [2, 3, 4]: each output a view whose
 * element at (i, j, k) is its input's at the broadcast position. */
TEST_BACKENDS(broadcast_arrays_views) {
    int64_t s0[2] = {3, 1}, s1[1] = {4}, s3[3] = {2, 1, 1}, want_shape[3] = {2, 3, 4};
    wgt_tensor *in[4] = {iota(ctx, 2, s0), iota(ctx, 1, s1), wgt_scalar(ctx, WGT_F32, 7), iota(ctx, 3, s3)}, *out[4];
    CHECK(wgt_broadcast_arrays(4, in, out) == WGT_OK, "broadcast_arrays: %s", wgt_last_error());
    for (int t = 0; t < 4; t++) {
        CHECK(out[t] && wgt_tensor_ndim(out[t]) == 3, "output %d: %s", t, wgt_last_error());
        for (int d = 0; out[t] && d < 3; d++) CHECK(wgt_tensor_shape(out[t])[d] == want_shape[d], "output %d dim %d", t, d);
        CHECK(out[t] && wgt_tensor_strides(out[t])[t == 0 ? 0 : 1] == 0, "output %d repeats by stride 0", t);
        double want[24];
        for (int i = 0; i < 24; i++) {
            int64_t at[3];
            coords(3, want_shape, i, at);
            want[i] = t == 0 ? (double)at[1] : t == 1 ? (double)at[2] : t == 2 ? 7 : (double)at[0];
        }
        check_exact(out[t], want, 24, "broadcast_arrays output");
        wgt_release(out[t]);
        wgt_release(in[t]);
    }
    CHECK(wgt_broadcast_arrays(0, NULL, NULL) == WGT_OK, "no tensors: %s", wgt_last_error());
}

/* meshgrid of lengths 2, 3 and 4 in both indexings against NumPy's rule, and its gradient:
 * each element of an input is repeated (product of the other lengths) times. */
TEST_BACKENDS(meshgrid_views_and_gradient) {
    int64_t n[3] = {2, 3, 4};
    wgt_tensor *in[3], *out[3];
    for (int t = 0; t < 3; t++) in[t] = iota(ctx, 1, &n[t]);
    for (int ij = 0; ij < 2; ij++) {
        CHECK(wgt_meshgrid(3, in, ij, out) == WGT_OK, "meshgrid: %s", wgt_last_error());
        int64_t grid[3] = {ij ? 2 : 3, ij ? 3 : 2, 4};
        for (int t = 0; t < 3; t++) {
            CHECK(out[t] && wgt_tensor_shape(out[t])[0] == grid[0] && wgt_tensor_shape(out[t])[1] == grid[1],
                  "meshgrid %s output %d: %s", ij ? "ij" : "xy", t, wgt_last_error());
            double want[24];
            for (int i = 0; i < 24; i++) {
                int64_t at[3];
                coords(3, grid, i, at);
                int axis = !ij && t < 2 ? 1 - t : t;
                want[i] = (double)at[axis];
            }
            check_exact(out[t], want, 24, ij ? "meshgrid ij" : "meshgrid xy");
            wgt_release(out[t]);
        }
    }
    CHECK(wgt_requires_grad(in[1], 1) == WGT_OK, "%s", wgt_last_error());
    CHECK(wgt_meshgrid(3, in, 0, out) == WGT_OK, "meshgrid: %s", wgt_last_error());
    wgt_tensor *s = wgt_sum(out[1], 0, NULL, 0);
    CHECK(s && wgt_backward(s, NULL) == WGT_OK, "backward: %s", wgt_last_error());
    wgt_tensor *g = wgt_grad(in[1]);
    double want_g[3] = {8, 8, 8};
    check_exact(g, want_g, 3, "meshgrid gradient");
    wgt_release(g), wgt_release(s);
    for (int t = 0; t < 3; t++) wgt_release(out[t]), wgt_release(in[t]);
}

TEST_BACKENDS(broadcast_arrays_meshgrid_errors_and_types) {
    int64_t s2[2] = {2, 3}, s4[1] = {4}, s0[1] = {0};
    wgt_tensor *a = iota(ctx, 2, s2), *b = iota(ctx, 1, s4), *out[9] = {0};
    wgt_tensor *pair[2] = {a, b};
    CHECK_ERROR(wgt_broadcast_arrays(2, pair, out) != WGT_OK, WGT_ERR_SHAPE, "do not broadcast");
    CHECK(!out[0] && !out[1], "outputs stay NULL on failure");
    CHECK_ERROR(wgt_meshgrid(2, pair, 1, out) != WGT_OK, WGT_ERR_SHAPE, "tensors[0] has 2 dimensions");
    wgt_tensor *with_null[2] = {b, NULL};
    CHECK_ERROR(wgt_meshgrid(2, with_null, 1, out) != WGT_OK, WGT_ERR_INVALID_ARGUMENT, "tensors[1] is NULL");
    CHECK_ERROR(wgt_broadcast_arrays(-1, pair, out) != WGT_OK, WGT_ERR_INVALID_ARGUMENT, "count -1");
    wgt_tensor *nine[9] = {b, b, b, b, b, b, b, b, b};
    CHECK_ERROR(wgt_meshgrid(9, nine, 1, out) != WGT_OK, WGT_ERR_SHAPE, "at most 8");
    /* Narrow types are views too; an empty input gives empty grids. */
    wgt_tensor *flags = wgt_cast(b, WGT_BOOL), *e = wgt_zeros(ctx, WGT_U8, 1, s0);
    wgt_tensor *mixed[2] = {flags, e};
    CHECK(wgt_meshgrid(2, mixed, 0, out) == WGT_OK, "meshgrid of bool and empty u8: %s", wgt_last_error());
    CHECK(out[0] && wgt_tensor_dtype(out[0]) == WGT_BOOL && wgt_tensor_numel(out[0]) == 0 &&
              wgt_tensor_shape(out[0])[0] == 0 && wgt_tensor_shape(out[0])[1] == 4,
          "empty grid: %s", wgt_last_error());
    wgt_release(out[0]), wgt_release(out[1]), wgt_release(flags), wgt_release(e), wgt_release(a), wgt_release(b);
}
