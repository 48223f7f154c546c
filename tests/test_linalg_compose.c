/*
 * Differential tests of the composed linear-algebra ops on both backends: matrix_power
 * against repeated products in double (positive, zero and negative powers, batches, a
 * transposed input, an empty batch, f16) and cross against the exact formula on small
 * integers (f32 and i32, broadcasting, an axis other than the last, strided operands, empty
 * tensors), with the argument errors.
 *
 * matrix_power's tolerance: each matmul rounds its sums to f32, so the power computed with
 * p multiplications differs from the exact one by at most about (p + 1) n 2^-24 times the
 * same power of |a| (a sum over magnitudes, computed here too); a negative power starts
 * from the inverse, rounded once (relative 2^-24 per element).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "reference.h"

#define U32 5.9604644775390625e-8

/* c = a b for n x n blocks, batch of them (row-major). */
static void matmul_ref(const double *a, const double *b, double *c, int64_t batch, int n) {
    for (int64_t z = 0; z < batch; z++)
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                double s = 0;
                for (int k = 0; k < n; k++) s += a[z * n * n + i * n + k] * b[z * n * n + k * n + j];
                c[z * n * n + i * n + j] = s;
            }
}

TEST_BACKENDS(linalg_matrix_power_matches_reference) {
    static const struct {
        int nd;
        int64_t shape[3];
        int64_t p;
        int transposed;
    } cases[] = {{3, {2, 4, 4}, 5, 0}, {2, {3, 3}, 0, 0}, {2, {5, 5}, 1, 1}, {3, {3, 2, 2}, 2, 1},
                 {2, {4, 4}, -1, 0}, {3, {2, 3, 3}, -3, 1}, {3, {0, 3, 3}, 3, 0}, {2, {0, 0}, 2, 0}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int nd = cases[c].nd, n = (int)cases[c].shape[nd - 1];
        int64_t batch = numel_of(nd - 2, cases[c].shape), count = batch * n * n, p = cases[c].p;
        /* Diagonally dominant, scaled to norm about 1, so powers neither blow up nor vanish. */
        float *f = calloc((size_t)(count + 1), sizeof(float));
        uint64_t seed = 700 + c;
        for (int64_t i = 0; i < count; i++)
            f[i] = (float)((((double)(next_u64(&seed) >> 11) / 4503599627370496.0 - 0.5) + ((i % (n * n)) % (n + 1) == 0 ? n : 0)) / (n + 1));
        wgt_tensor *raw = wgt_tensor_from_data(ctx, WGT_F32, nd, cases[c].shape, f, sizeof(float) * (size_t)count, WGT_USAGE_DEFAULT);
        wgt_tensor *a = cases[c].transposed ? wgt_transpose(raw, -1, -2) : wgt_retain(raw);
        double *x = test_read_f64(a), *base = malloc(sizeof(double) * (size_t)(count + 1));
        double *want = malloc(sizeof(double) * (size_t)(count + 1)), *mag = malloc(sizeof(double) * (size_t)(count + 1));
        double *tmp = malloc(sizeof(double) * (size_t)(count + 1)), *absb = malloc(sizeof(double) * (size_t)(count + 1));
        if (p < 0) { /* the base is the inverse, as the library's (rounded to f32) */
            wgt_tensor *inv = wgt_linalg_inv(a);
            double *iv = test_read_f64(inv);
            memcpy(base, iv, sizeof(double) * (size_t)count);
            free(iv);
            wgt_release(inv);
        } else {
            memcpy(base, x, sizeof(double) * (size_t)count);
        }
        for (int64_t i = 0; i < count; i++) want[i] = mag[i] = (i % (n * n)) % (n + 1) == 0, absb[i] = fabs(base[i]);
        int64_t k = p < 0 ? -p : p;
        for (int64_t s = 0; s < k; s++) {
            matmul_ref(want, base, tmp, batch, n);
            memcpy(want, tmp, sizeof(double) * (size_t)count);
            matmul_ref(mag, absb, tmp, batch, n);
            memcpy(mag, tmp, sizeof(double) * (size_t)count);
        }
        wgt_tensor *r = wgt_linalg_matrix_power(a, p);
        CHECK(r, "matrix_power case %zu: %s", c, wgt_last_error());
        if (r) {
            CHECK(wgt_tensor_ndim(r) == nd && !memcmp(wgt_tensor_shape(r), cases[c].shape, sizeof(int64_t) * (size_t)nd),
                  "matrix_power case %zu: shape", c);
            double *g = test_read_f64(r);
            for (int64_t i = 0, bad = 0; i < count && bad < 3; i++)
                if (!(fabs(g[i] - want[i]) <= (double)(k + 1) * (n + 1) * U32 * mag[i]) && bad++ < 3)
                    CHECK(0, "matrix_power case %zu (p %lld): element %lld is %.9g, wanted %.9g", c, (long long)p, (long long)i, g[i], want[i]);
            free(g);
        }
        wgt_release(r), wgt_release(a), wgt_release(raw);
        free(f), free(x), free(base), free(want), free(mag), free(tmp), free(absb);
    }
    /* f16: computed by f16 matmuls; [[1, 1], [0, 1]]^5 = [[1, 5], [0, 1]] exactly. */
    float j[4] = {1, 1, 0, 1};
    int64_t s22[2] = {2, 2};
    wgt_tensor *jf = wgt_tensor_from_data(ctx, WGT_F32, 2, s22, j, sizeof j, WGT_USAGE_DEFAULT), *jh = wgt_cast(jf, WGT_F16);
    wgt_tensor *r = wgt_linalg_matrix_power(jh, 5), *r0 = wgt_linalg_matrix_power(jh, 0);
    CHECK(r && r0 && wgt_tensor_dtype(r) == WGT_F16 && wgt_tensor_dtype(r0) == WGT_F16, "f16 power: %s", wgt_last_error());
    if (r && r0) {
        double *g = test_read_f64(r), *g0 = test_read_f64(r0);
        CHECK(g[0] == 1 && g[1] == 5 && g[2] == 0 && g[3] == 1, "f16 power 5: %g %g %g %g", g[0], g[1], g[2], g[3]);
        CHECK(g0[0] == 1 && g0[1] == 0 && g0[2] == 0 && g0[3] == 1, "f16 power 0: %g %g %g %g", g0[0], g0[1], g0[2], g0[3]);
        free(g), free(g0);
    }
    wgt_release(r), wgt_release(r0);
    wgt_tensor *rn = wgt_linalg_matrix_power(jh, -5); /* through the host inverse, read as f32 */
    CHECK(rn && wgt_tensor_dtype(rn) == WGT_F16, "f16 power -5: %s", wgt_last_error());
    if (rn) {
        double *g = test_read_f64(rn);
        CHECK(g[0] == 1 && g[1] == -5 && g[2] == 0 && g[3] == 1, "f16 power -5: %g %g %g %g", g[0], g[1], g[2], g[3]);
        free(g);
    }
    wgt_release(rn);
    int64_t s23[2] = {2, 3};
    wgt_tensor *rect = wgt_zeros(ctx, WGT_F32, 2, s23), *ints = wgt_zeros(ctx, WGT_I32, 2, s22);
    CHECK_ERROR(!wgt_linalg_matrix_power(rect, 2), WGT_ERR_SHAPE, "[2, 3]");
    CHECK_ERROR(!wgt_linalg_matrix_power(ints, 2), WGT_ERR_DTYPE, "i32");
    float sing[4] = {1, 2, 2, 4};
    wgt_tensor *s = wgt_tensor_from_data(ctx, WGT_F32, 2, s22, sing, sizeof sing, WGT_USAGE_DEFAULT);
    CHECK_ERROR(!wgt_linalg_matrix_power(s, -2), WGT_ERR_INVALID_ARGUMENT, "singular");
    wgt_release(s), wgt_release(rect), wgt_release(ints), wgt_release(jf), wgt_release(jh);
}

/* Small integers of dtype in shape (exact in f32 and i32), seen transposed if asked. */
static wgt_tensor *ints_of(wgt_context *ctx, wgt_dtype dtype, int nd, const int64_t *shape, uint64_t seed, int transposed,
                           double **values) {
    int64_t count = numel_of(nd, shape), st[4];
    memcpy(st, shape, sizeof(int64_t) * (size_t)nd);
    if (transposed) st[0] = shape[1], st[1] = shape[0]; /* 2-D only */
    float *f = calloc((size_t)(count + 1), sizeof(float));
    for (int64_t i = 0; i < count; i++) f[i] = (float)((int)(next_u64(&seed) % 19) - 9);
    wgt_tensor *t = wgt_tensor_from_data(ctx, WGT_F32, nd, st, f, sizeof(float) * (size_t)count, WGT_USAGE_DEFAULT);
    free(f);
    wgt_tensor *v = transposed ? wgt_transpose(t, 0, 1) : wgt_retain(t), *r = dtype == WGT_F32 ? wgt_retain(v) : wgt_cast(v, dtype);
    wgt_release(t), wgt_release(v);
    *values = test_read_f64(r);
    return r;
}

TEST_BACKENDS(linalg_cross_matches_reference) {
    static const struct {
        int na, nb, nout, axis, ta, tb;
        int64_t sa[3], sb[3], so[3];
    } cases[] = {
        {2, 1, 2, -1, 0, 0, {4, 3}, {3}, {4, 3}},       /* b broadcast against rows */
        {2, 2, 2, 0, 1, 0, {3, 5}, {3, 5}, {3, 5}},     /* along the first axis, a strided */
        {3, 2, 3, -2, 0, 1, {2, 3, 4}, {3, 4}, {2, 3, 4}}, /* a middle axis, b strided */
        {3, 3, 3, -1, 0, 0, {2, 1, 3}, {1, 4, 3}, {2, 4, 3}},
        {2, 2, 2, -1, 0, 0, {0, 3}, {0, 3}, {0, 3}},    /* empty */
    };
    for (int dt = 0; dt < 2; dt++)
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            wgt_dtype dtype = dt ? WGT_I32 : WGT_F32;
            double *x, *y;
            wgt_tensor *a = ints_of(ctx, dtype, cases[c].na, cases[c].sa, 800 + c, cases[c].ta, &x);
            wgt_tensor *b = ints_of(ctx, dtype, cases[c].nb, cases[c].sb, 900 + c, cases[c].tb, &y);
            wgt_tensor *r = wgt_linalg_cross(a, b, cases[c].axis);
            int nd = cases[c].nout, ax = cases[c].axis < 0 ? nd + cases[c].axis : cases[c].axis;
            CHECK(r && wgt_tensor_dtype(r) == dtype, "cross case %zu %s: %s", c, dt ? "i32" : "f32", wgt_last_error());
            if (r) {
                CHECK(wgt_tensor_ndim(r) == nd && !memcmp(wgt_tensor_shape(r), cases[c].so, sizeof(int64_t) * (size_t)nd),
                      "cross case %zu: shape", c);
                double *g = test_read_f64(r);
                int64_t count = numel_of(nd, cases[c].so), at[3], pa[3], pb[3];
                for (int64_t i = 0, bad = 0; i < count && bad < 3; i++) {
                    coords(nd, cases[c].so, i, at);
                    int comp = (int)at[ax];
                    double v[2][3];
                    for (int k = 0; k < 3; k++) {
                        at[ax] = k;
                        for (int d = 0; d < cases[c].na; d++) { /* right-aligned, length 1 broadcast */
                            int64_t o = at[nd - cases[c].na + d];
                            pa[d] = cases[c].sa[d] == 1 ? 0 : o;
                        }
                        for (int d = 0; d < cases[c].nb; d++) {
                            int64_t o = at[nd - cases[c].nb + d];
                            pb[d] = cases[c].sb[d] == 1 ? 0 : o;
                        }
                        v[0][k] = x[flat_of(cases[c].na, cases[c].sa, pa)];
                        v[1][k] = y[flat_of(cases[c].nb, cases[c].sb, pb)];
                    }
                    int i1 = (comp + 1) % 3, i2 = (comp + 2) % 3;
                    double want = v[0][i1] * v[1][i2] - v[0][i2] * v[1][i1];
                    if (g[i] != want && bad++ < 3) CHECK(0, "cross case %zu: element %lld is %g, wanted %g", c, (long long)i, g[i], want);
                }
                free(g);
            }
            wgt_release(r), wgt_release(a), wgt_release(b);
            free(x), free(y);
        }
    int64_t s3[1] = {3}, s2[1] = {2}, s43[2] = {4, 3};
    wgt_tensor *v3 = wgt_zeros(ctx, WGT_F32, 1, s3), *v2 = wgt_zeros(ctx, WGT_F32, 1, s2), *m = wgt_zeros(ctx, WGT_F32, 2, s43);
    wgt_tensor *h = wgt_zeros(ctx, WGT_I32, 1, s3);
    CHECK_ERROR(!wgt_linalg_cross(v3, v2, -1), WGT_ERR_SHAPE, "length 3");
    CHECK_ERROR(!wgt_linalg_cross(v3, v3, -2), WGT_ERR_INVALID_ARGUMENT, "axis -2");
    CHECK_ERROR(!wgt_linalg_cross(m, v3, 1), WGT_ERR_INVALID_ARGUMENT, "axis 1");
    CHECK_ERROR(!wgt_linalg_cross(m, m, 0), WGT_ERR_SHAPE, "length 3");
    CHECK_ERROR(!wgt_linalg_cross(v3, h, -1), WGT_ERR_DTYPE, "");
    wgt_release(v3), wgt_release(v2), wgt_release(m), wgt_release(h);
}
