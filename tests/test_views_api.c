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
    wgt_release(ev), wgt_release(e), wgt_release(s), wgt_release(r), wgt_release(t), wgt_release(corner), wgt_release(row), wgt_release(rows);
    wgt_release(v), wgt_release(a);
}
