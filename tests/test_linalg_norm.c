/*
 * Differential tests of wgt_linalg_vector_norm and wgt_linalg_matrix_norm on both backends,
 * against float64 references from the inputs as read back: every ord (inf, -inf, 0, 1, 2, 3,
 * 0.5, -1), axis subsets with and without keepdims, transposed inputs, f16, values near the f32
 * limits (1e30 and 1e-30: the 2-norm's squares overflow and underflow f32 unless scaled),
 * zeros, infinities and NaN, empty inputs, and the errors.
 *
 * Tolerance: the sums are within n u of the sum of their terms; every elementwise step (abs,
 * divide by the scale, power, root, multiply back) adds a few ulp. WGSL's pow is exp2(y
 * log2 x), whose error grows with |y log2 x| (at most about 2^7 here for p = 3 and 0.5 on
 * terms below 1), so p other than 1, 2 and the infinities get 2^-15 relative. f16 results add
 * one rounding (2^-10).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

#define U32 5.9604644775390625e-8

static wgt_tensor *values(wgt_context *ctx, wgt_dtype dt, int nd, const int64_t *shape, const float *v, int nv,
                          int transposed) {
    int64_t s[WGT_MAX_DIMS], n = 1;
    memcpy(s, shape, sizeof(int64_t) * (size_t)nd);
    if (transposed) s[nd - 1] = shape[nd - 2], s[nd - 2] = shape[nd - 1];
    for (int d = 0; d < nd; d++) n *= s[d];
    float *f = malloc(sizeof(float) * (size_t)(n + 1));
    for (int64_t i = 0; i < n; i++) f[i] = v[(i * 5 + i / 7) % nv];
    wgt_tensor *t = wgt_tensor_from_data(ctx, WGT_F32, nd, s, f, sizeof(float) * (size_t)n, WGT_USAGE_DEFAULT);
    free(f);
    if (dt != WGT_F32) {
        wgt_tensor *c = wgt_cast(t, dt);
        wgt_release(t);
        t = c;
    }
    if (transposed) {
        wgt_tensor *v2 = wgt_transpose(t, -1, -2);
        wgt_release(t);
        t = v2;
    }
    return t;
}

/* The reference over the axes flagged, row-major output of the kept axes. */
static void ref_vector(const double *x, int nd, const int64_t *shape, const int *red, double ord, double *out,
                       int64_t *nterms) {
    int64_t n = 1, on = 1, ostr[WGT_MAX_DIMS];
    for (int d = 0; d < nd; d++) n *= shape[d];
    for (int d = nd - 1; d >= 0; d--) {
        ostr[d] = red[d] ? 0 : on;
        on *= red[d] ? 1 : shape[d];
    }
    *nterms = on ? n / on : 0;
    for (int64_t o = 0; o < on; o++) out[o] = isinf(ord) ? (ord > 0 ? 0 : INFINITY) : 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t r = i, o = 0;
        for (int d = nd - 1; d >= 0; d--) o += (r % shape[d]) * ostr[d], r /= shape[d];
        double v = fabs(x[i]);
        if (ord == 0) out[o] += v != 0; /* NaN counts as nonzero, as in NumPy */
        else if (isnan(v) || isnan(out[o])) out[o] = NAN;
        else if (ord == INFINITY) out[o] = fmax(out[o], v);
        else if (ord == -INFINITY) out[o] = fmin(out[o], v);
        else out[o] += pow(v, ord);
    }
    for (int64_t o = 0; o < on && !isinf(ord) && ord != 0; o++) out[o] = pow(out[o], 1 / ord);
}

static void check(const char *what, wgt_tensor *got, wgt_dtype dt, const double *ref, int64_t count, double ord,
                  int64_t nterms) {
    CHECK(got, "%s: %s", what, wgt_last_error());
    if (!got) return;
    CHECK(wgt_tensor_dtype(got) == dt, "%s: dtype", what);
    double *g = test_read_f64(got);
    double rel = (double)(nterms + 8) * U32;
    if (!isinf(ord) && ord != 0 && ord != 1 && ord != 2) rel += 3.0517578125e-05; /* 2^-15: pow */
    if (dt == WGT_F16) rel += 9.765625e-4;
    for (int64_t i = 0, bad = 0; g && i < count && bad < 3; i++) {
        int same = isnan(ref[i]) ? isnan(g[i]) : isinf(ref[i]) ? g[i] == ref[i] : fabs(g[i] - ref[i]) <= rel * fabs(ref[i]) + 1e-45;
        if (!same) {
            bad++;
            CHECK(0, "%s (%s): element %lld is %.9g, wanted %.9g", what, wgt_dtype_name(dt), (long long)i, g[i], ref[i]);
        }
    }
    free(g);
    wgt_release(got);
}

TEST_BACKENDS(vector_norm_matches_reference) {
    static const float plain[] = {0.5f, -1.25f, 3, 0, -0.75f, 2.5f, -3.5f, 1, 0.125f};
    static const float huge[] = {1e30f, -3e30f, 2e30f, 0, 5e29f};
    static const float tiny[] = {1e-30f, -3e-30f, 2e-30f, 0, 5e-31f};
    static const float special[] = {1, INFINITY, 2, NAN, 3, 0, -4};
    static const double ords[] = {INFINITY, -INFINITY, 0, 1, 2, 3, 0.5, -1};
    static const int64_t shape[3] = {3, 4, 5};
    struct {
        const float *v;
        int nv, f16;
    } sets[] = {{plain, 9, 1}, {huge, 5, 0}, {tiny, 5, 0}, {special, 7, 0}};
    for (size_t si = 0; si < sizeof sets / sizeof sets[0]; si++)
        for (int f16 = 0; f16 <= sets[si].f16; f16++) {
            wgt_dtype dt = f16 ? WGT_F16 : WGT_F32;
            wgt_tensor *a = values(ctx, dt, 3, shape, sets[si].v, sets[si].nv, si == 0);
            double *x = test_read_f64(a);
            for (size_t oi = 0; oi < sizeof ords / sizeof ords[0]; oi++)
                for (int mask = 0; mask < 8; mask++) {
                    if ((si == 1 || si == 2) && ords[oi] != 2 && ords[oi] != INFINITY) continue; /* the scaling cases */
                    int axes[3], na = 0, red[3];
                    for (int d = 0; d < 3; d++) {
                        red[d] = mask == 0 || (mask >> d & 1);
                        if (mask >> d & 1) axes[na++] = d == 1 ? -2 : d;
                    }
                    double ref[64];
                    int64_t nterms, count = 1;
                    for (int d = 0; d < 3; d++) count *= red[d] ? 1 : shape[d];
                    ref_vector(x, 3, shape, red, ords[oi], ref, &nterms);
                    char what[96];
                    snprintf(what, sizeof what, "set %zu ord %g mask %d", si, ords[oi], mask);
                    check(what, wgt_linalg_vector_norm(a, ords[oi], na, axes, mask & 1), dt, ref, count, ords[oi], nterms);
                }
            free(x);
            wgt_release(a);
        }
    /* Empty: p-norms are 0; inf and negative orders have nothing to take and are errors. */
    int64_t s30[2] = {3, 0};
    wgt_tensor *e = wgt_zeros(ctx, WGT_F32, 2, s30);
    int ax = 1;
    double zeros[3] = {0, 0, 0};
    check("empty 2-norm", wgt_linalg_vector_norm(e, 2, 1, &ax, 0), WGT_F32, zeros, 3, 2, 0);
    CHECK_ERROR(!wgt_linalg_vector_norm(e, INFINITY, 1, &ax, 0), WGT_ERR_SHAPE, "zero elements");
    CHECK_ERROR(!wgt_linalg_vector_norm(e, NAN, 1, &ax, 0), WGT_ERR_INVALID_ARGUMENT, "NaN");
    wgt_release(e);
}

TEST_BACKENDS(matrix_norm_matches_reference) {
    static const float v[] = {0.5f, -1.25f, 3, 0, -0.75f, 2.5f, -3.5f, 1, 0.125f, 2};
    static const int64_t shape[3] = {2, 3, 5};
    static const char *const ords[] = {"fro", "1", "-1", "inf", "-inf"};
    for (int tr = 0; tr < 2; tr++) {
        wgt_tensor *a = values(ctx, WGT_F32, 3, shape, v, 10, tr);
        double *x = test_read_f64(a);
        for (size_t oi = 0; oi < 5; oi++)
            for (int keep = 0; keep < 2; keep++) {
                double ref[2];
                for (int b = 0; b < 2; b++) {
                    const double *m = x + b * 15;
                    double best = oi == 2 || oi == 4 ? INFINITY : 0, fro = 0;
                    int cols = oi == 1 || oi == 2;
                    for (int i = 0; i < 15; i++) fro += m[i] * m[i];
                    for (int k = 0; k < (cols ? 5 : 3); k++) {
                        double s = 0;
                        for (int l = 0; l < (cols ? 3 : 5); l++) s += fabs(cols ? m[l * 5 + k] : m[k * 5 + l]);
                        best = oi == 2 || oi == 4 ? fmin(best, s) : fmax(best, s);
                    }
                    ref[b] = oi == 0 ? sqrt(fro) : best;
                }
                wgt_tensor *got = wgt_linalg_matrix_norm(a, ords[oi], keep);
                CHECK(!got || wgt_tensor_ndim(got) == (keep ? 3 : 1), "%s keepdims %d: rank %d", ords[oi], keep,
                      wgt_tensor_ndim(got));
                check(ords[oi], got, WGT_F32, ref, 2, oi == 0 ? 2 : 1, 15);
            }
        free(x);
        wgt_release(a);
    }
    int64_t s4[1] = {4}, s22[2] = {2, 2}, s02[2] = {0, 2};
    wgt_tensor *vec = wgt_zeros(ctx, WGT_F32, 1, s4), *m = wgt_zeros(ctx, WGT_F32, 2, s22);
    wgt_tensor *mi = wgt_zeros(ctx, WGT_I32, 2, s22), *e = wgt_zeros(ctx, WGT_F32, 2, s02);
    CHECK_ERROR(!wgt_linalg_matrix_norm(vec, "fro", 0), WGT_ERR_SHAPE, "[4]");
    /* The spectral norms of diag(3, -4) in f16 (singular values 4 and 3): exact, f16 results. */
    float d[4] = {3, 0, 0, -4};
    wgt_tensor *df = wgt_tensor_from_data(ctx, WGT_F32, 2, s22, d, sizeof d, WGT_USAGE_DEFAULT), *dh = wgt_cast(df, WGT_F16);
    static const char *const spectral[3] = {"2", "-2", "nuc"};
    static const double want[3] = {4, 3, 7};
#ifdef __wasi__
    const int nspectral = 0; /* singular values need LAPACK, which the WebAssembly build cannot load */
#else
    const int nspectral = 3;
#endif
    for (int i = 0; i < nspectral; i++) {
        wgt_tensor *got = wgt_linalg_matrix_norm(dh, spectral[i], 0);
        CHECK(got && wgt_tensor_dtype(got) == WGT_F16 && wgt_tensor_ndim(got) == 0, "ord %s of f16: %s", spectral[i], wgt_last_error());
        double *g = got ? test_read_f64(got) : NULL;
        CHECK(g && g[0] == want[i], "ord %s of diag(3, -4): %g, wanted %g", spectral[i], g ? g[0] : NAN, want[i]);
        free(g);
        wgt_release(got);
    }
    wgt_release(df), wgt_release(dh);
    CHECK_ERROR(!wgt_linalg_matrix_norm(m, "3", 0), WGT_ERR_INVALID_ARGUMENT, "\"3\"");
    CHECK_ERROR(!wgt_linalg_matrix_norm(mi, "fro", 0), WGT_ERR_DTYPE, "i32");
    CHECK_ERROR(!wgt_linalg_matrix_norm(e, "inf", 0), WGT_ERR_SHAPE, "empty");
    wgt_release(vec);
    wgt_release(m);
    wgt_release(mi);
    wgt_release(e);
}
