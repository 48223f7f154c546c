/*
 * take and take_along_axis count negative indices from the end, as NumPy and the array API
 * do: -1 is the last entry along the axis. Each result is compared exactly (the ops move
 * values) with the same op given the wrapped, non-negative indices, for indices whose values
 * are on the host (wrapped there) and for indices computed by pending work (wrapped by a
 * lazy where), as i32 and i64, on strided views; a value below -n is refused and named as
 * given, at the call or at the read; and gradients flow back to the wrapped positions.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

enum { N_AXIS = 5 };

/* Indices with values v (n of them, shape [2, 3] or [3, 2]) of type dt: from the host, or
 * computed (v + 7 - 7 on the device, so the values are not on the host when the op runs). */
static wgt_tensor *indices_of(wgt_context *ctx, wgt_dtype dt, int computed, int ndim, const int64_t *shape,
                              const int64_t *v, int64_t n) {
    void *buf = malloc((size_t)n * 8);
    if (!buf) return NULL;
    for (int64_t i = 0; i < n; i++) {
        if (dt == WGT_I64) ((int64_t *)buf)[i] = v[i];
        else ((int32_t *)buf)[i] = (int32_t)v[i];
    }
    wgt_tensor *t = wgt_tensor_from_data(ctx, dt, ndim, shape, buf, (size_t)n * (dt == WGT_I64 ? 8 : 4),
                                         WGT_USAGE_DEFAULT);
    free(buf);
    if (!t || !computed) return t;
    wgt_tensor *up = wgt_add_scalar(t, 7), *back = up ? wgt_sub_scalar(up, 7) : NULL;
    wgt_release(t), wgt_release(up);
    return back;
}

/* a [4, 5] as a transposed view of a contiguous [5, 4], values distinct. */
static wgt_tensor *strided_table(wgt_context *ctx) {
    float v[20];
    for (int i = 0; i < 20; i++) v[i] = (float)(i * 3 - 17) * 0.25f;
    wgt_tensor *t = wgt_tensor_from_data(ctx, WGT_F32, 2, (int64_t[]){N_AXIS, 4}, v, sizeof v, WGT_USAGE_DEFAULT);
    wgt_tensor *tr = t ? wgt_transpose(t, 0, 1) : NULL;
    wgt_release(t);
    return tr;
}

static int same_values(wgt_tensor *got, wgt_tensor *want, int64_t n, const char *what) {
    float g[64], w[64];
    CHECK(got && want && n <= 64, "%s: %s", what, wgt_last_error());
    if (!got || !want || n > 64) return 0;
    CHECK(wgt_tensor_read(got, g, (size_t)n * 4) == WGT_OK && wgt_tensor_read(want, w, (size_t)n * 4) == WGT_OK,
          "%s: %s", what, wgt_last_error());
    CHECK(memcmp(g, w, (size_t)n * 4) == 0, "%s: values differ from the wrapped indices' (first %g vs %g)", what,
          g[0], w[0]);
    return 1;
}

TEST_BACKENDS(take_negative_indices_count_from_the_end) {
    wgt_tensor *a = strided_table(ctx); /* [4, 5]: axis 1 has N_AXIS entries */
    const int64_t neg[6] = {-1, 0, -5, 3, -2, 4}, pos[6] = {4, 0, 0, 3, 3, 4};
    const wgt_dtype types[2] = {WGT_I32, WGT_I64};
    for (int t = 0; t < 2; t++)
        for (int computed = 0; computed < 2; computed++) {
            char what[96];
            snprintf(what, sizeof what, "%s indices%s", wgt_dtype_name(types[t]), computed ? ", computed" : "");
            wgt_tensor *in = indices_of(ctx, types[t], computed, 2, (int64_t[]){2, 3}, neg, 6);
            wgt_tensor *ip = indices_of(ctx, WGT_I32, 0, 2, (int64_t[]){2, 3}, pos, 6);
            /* take along axis -1: [4, 2, 3]. */
            wgt_tensor *got = wgt_take(a, in, -1), *want = wgt_take(a, ip, 1);
            same_values(got, want, 24, what);
            wgt_release(got), wgt_release(want);
            /* take_along_axis: indices [1, 6], broadcast over a's 4 rows. */
            wgt_tensor *rn = in ? wgt_reshape(in, 2, (int64_t[]){1, 6}) : NULL;
            wgt_tensor *rp = ip ? wgt_reshape(ip, 2, (int64_t[]){1, 6}) : NULL;
            got = rn ? wgt_take_along_axis(a, rn, 1) : NULL;
            want = rp ? wgt_take_along_axis(a, rp, 1) : NULL;
            same_values(got, want, 24, what);
            wgt_tensor *all[] = {in, ip, rn, rp, got, want};
            for (size_t i = 0; i < sizeof all / sizeof *all; i++) wgt_release(all[i]);
        }
    wgt_release(a);
}

/* Below -n is out of range: named as given, with the range that take accepts. */
TEST_BACKENDS(take_negative_indices_below_minus_n_are_errors) {
    wgt_tensor *a = strided_table(ctx);
    const int64_t bad[2] = {-1, -6};
    for (int computed = 0; computed < 2; computed++) {
        wgt_tensor *idx = indices_of(ctx, WGT_I32, computed, 1, (int64_t[]){2}, bad, 2), *r = NULL;
        float out[8];
        /* At the call the message names the axis; from the device, "the axis". */
        CHECK_ERROR(!(r = wgt_take(a, idx, 1)) || wgt_tensor_read(r, out, sizeof out) != WGT_OK,
                    WGT_ERR_INVALID_ARGUMENT,
                    computed ? "wgt_take: index -6 at position [1] of indices is out of range for 5 entries along the "
                               "axis (valid: -5..4)"
                             : "wgt_take: index -6 at position [1] of indices is out of range for 5 entries along axis "
                               "1 (valid: -5..4)");
        wgt_release(r);
        r = NULL;
        wgt_tensor *col = idx ? wgt_reshape(idx, 2, (int64_t[]){1, 2}) : NULL;
        CHECK_ERROR(!(r = wgt_take_along_axis(a, col, 1)) || wgt_tensor_read(r, out, sizeof out) != WGT_OK,
                    WGT_ERR_INVALID_ARGUMENT,
                    "wgt_take_along_axis: index -6 at position [0, 1] of indices is out of range");
        wgt_release(r), wgt_release(col), wgt_release(idx);
    }
    /* scatter and index_add keep [0, n): a negative index there is still an error. */
    wgt_tensor *base = wgt_zeros(ctx, WGT_F32, 2, (int64_t[]){4, 5});
    wgt_tensor *src = wgt_ones(ctx, WGT_F32, 2, (int64_t[]){1, 2});
    wgt_tensor *idx = indices_of(ctx, WGT_I32, 0, 2, (int64_t[]){1, 2}, bad, 2);
    CHECK_ERROR(!wgt_scatter(base, 1, idx, src, WGT_SCATTER_ADD), WGT_ERR_INVALID_ARGUMENT,
                "wgt_scatter: index -1 at position [0, 0] of indices is negative");
    wgt_release(base), wgt_release(src), wgt_release(idx), wgt_release(a);
}

/* The gradient goes to the entries the wrapped indices picked (repeats summed). */
TEST_BACKENDS(take_negative_indices_gradients) {
    const int64_t neg[6] = {-1, 0, -5, 3, -2, 4}, pos[6] = {4, 0, 0, 3, 3, 4};
    float g[2][20];
    for (int k = 0; k < 2; k++) {
        wgt_tensor *a = strided_table(ctx), *c = a ? wgt_contiguous(a) : NULL;
        wgt_tensor *idx = indices_of(ctx, WGT_I32, 0, 1, (int64_t[]){6}, k ? pos : neg, 6);
        wgt_tensor *t = NULL, *s = NULL, *grad = NULL;
        CHECK(c && wgt_requires_grad(c, 1) == WGT_OK, "%s", wgt_last_error());
        if (c && idx && (t = wgt_take(c, idx, 1))) s = wgt_sum(t, 0, NULL, 0);
        grad = s && wgt_backward(s, NULL) == WGT_OK ? wgt_grad(c) : NULL;
        CHECK(grad && wgt_tensor_read(grad, g[k], sizeof g[k]) == WGT_OK, "%s", wgt_last_error());
        wgt_tensor *all[] = {a, c, idx, t, s, grad};
        for (size_t i = 0; i < sizeof all / sizeof *all; i++) wgt_release(all[i]);
    }
    CHECK(!memcmp(g[0], g[1], sizeof g[0]), "negative indices' gradient differs from the wrapped ones'");
    CHECK(g[1][0] == 2 && g[1][4] == 2 && g[1][3] == 2 && g[1][1] == 0, "row 0 of the gradient: %g %g %g %g %g",
          g[1][0], g[1][1], g[1][2], g[1][3], g[1][4]);
}
