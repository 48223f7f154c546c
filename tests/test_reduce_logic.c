/*
 * Differential tests of any, all, count_nonzero and logsumexp on both backends, against
 * references computed in float64 (exact for the logic ones) from the inputs as read back:
 * every axis subset of rank-1 to rank-3 tensors with odd lengths, negative axes, keepdims,
 * transposed inputs, zeros and NaN among the values, empty reductions (their identities:
 * false, true, 0, -inf), rows of -inf, +inf and NaN, values whose exp overflows f32 (the
 * max shift), f16, the errors, and logsumexp's gradient against finite differences.
 *
 * logsumexp tolerance: each exp within 3 ulp of its value at x - m <= 0 (WGSL allows
 * 3 + 2|x| ulp, which times exp(x) stays under 3 ulp of 1), the sum of n terms in f32 within
 * n u of the sum, which is at least 1; so log's argument is within (4n + 2) u relative and
 * the result within that absolutely, plus log's and the final add's own rounding (4 u |r|).
 * f16 rounds the result once more (2^-10 relative covers any rounding mode).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gradcheck.h"
#include "test.h"

#define U32 5.9604644775390625e-8
#define U16 9.765625e-4

/* A tensor of type dt with values from vals (cycled), optionally seen transposed. */
static wgt_tensor *from_values(wgt_context *ctx, wgt_dtype dt, int nd, const int64_t *shape, const double *vals,
                               int nvals, int transposed) {
    int64_t s[WGT_MAX_DIMS], n = 1;
    memcpy(s, shape, sizeof(int64_t) * (size_t)nd);
    if (transposed && nd >= 2) s[nd - 1] = shape[nd - 2], s[nd - 2] = shape[nd - 1];
    for (int d = 0; d < nd; d++) n *= s[d];
    float *f = malloc(sizeof(float) * (size_t)(n + 1));
    for (int64_t i = 0; i < n; i++) f[i] = (float)vals[(i * 7 + i / 3) % nvals];
    wgt_tensor *t32 = wgt_tensor_from_data(ctx, WGT_F32, nd, s, f, sizeof(float) * (size_t)n, WGT_USAGE_DEFAULT);
    free(f);
    wgt_tensor *t = dt == WGT_F32 ? t32 : wgt_cast(t32, dt);
    if (t != t32) wgt_release(t32);
    if (transposed && nd >= 2) {
        wgt_tensor *v = wgt_transpose(t, -1, -2);
        wgt_release(t);
        t = v;
    }
    return t;
}

/* The reference of one reduction over the axes flagged: op 0 any, 1 all, 2 count, 3 lse. */
static void reference(int op, const double *x, int nd, const int64_t *shape, const int *red, double *out) {
    int64_t n = 1, on = 1, ostr[WGT_MAX_DIMS];
    for (int d = 0; d < nd; d++) n *= shape[d];
    for (int d = nd - 1; d >= 0; d--) {
        ostr[d] = red[d] ? 0 : on;
        on *= red[d] ? 1 : shape[d];
    }
    double *mx = malloc(sizeof(double) * (size_t)(on + 1));
    for (int64_t o = 0; o < on; o++) out[o] = op == 1 ? 1 : 0, mx[o] = -INFINITY;
    for (int pass = 0; pass < (op == 3 ? 2 : 1); pass++)
        for (int64_t i = 0; i < n; i++) {
            int64_t r = i, o = 0;
            for (int d = nd - 1; d >= 0; d--) {
                o += (r % shape[d]) * ostr[d];
                r /= shape[d];
            }
            double v = x[i];
            if (op == 0) out[o] = out[o] || v != 0;
            if (op == 1) out[o] = out[o] && v != 0;
            if (op == 2) out[o] += v != 0;
            if (op == 3 && pass == 0) mx[o] = isnan(v) || isnan(mx[o]) ? NAN : fmax(mx[o], v);
            if (op == 3 && pass == 1) out[o] += isinf(mx[o]) ? exp(v) : exp(v - mx[o]);
        }
    for (int64_t o = 0; op == 3 && o < on; o++) out[o] = isinf(mx[o]) ? log(out[o]) : log(out[o]) + mx[o];
    free(mx);
}

static const char *const names[4] = {"any", "all", "count_nonzero", "logsumexp"};

static wgt_tensor *run(int op, wgt_tensor *a, int naxes, const int *axes, int keepdims) {
    switch (op) {
    case 0: return wgt_any(a, naxes, axes, keepdims);
    case 1: return wgt_all(a, naxes, axes, keepdims);
    case 2: return wgt_count_nonzero(a, naxes, axes, keepdims);
    default: return wgt_logsumexp(a, naxes, axes, keepdims);
    }
}

/* Every axis subset (the mask bits; 0 is "naxes 0": all) of a, each with and without keepdims. */
static void check_all_subsets(int op, wgt_tensor *a, const char *what) {
    int nd = wgt_tensor_ndim(a);
    const int64_t *shape = wgt_tensor_shape(a);
    double *x = test_read_f64(a);
    wgt_dtype dt = wgt_tensor_dtype(a);
    for (int mask = 0; mask < (1 << nd); mask++)
        for (int keep = 0; keep < 2; keep++) {
            int axes[WGT_MAX_DIMS], na = 0, red[WGT_MAX_DIMS];
            for (int d = 0; d < nd; d++) {
                red[d] = mask == 0 || (mask >> d & 1);
                if (mask >> d & 1) axes[na++] = d - (d % 2 ? nd : 0); /* odd axes given negative */
            }
            int64_t n_red = 1, on = 1;
            for (int d = 0; d < nd; d++) *(red[d] ? &n_red : &on) *= shape[d];
            double *ref = malloc(sizeof(double) * (size_t)(on + 1));
            reference(op, x, nd, shape, red, ref);
            wgt_tensor *got = run(op, a, na, axes, keep);
            CHECK(got, "%s %s mask %d: %s", names[op], what, mask, wgt_last_error());
            if (!got) {
                free(ref);
                continue;
            }
            wgt_dtype want_dt = op == 3 ? dt : op == 2 ? WGT_I32 : WGT_BOOL;
            CHECK(wgt_tensor_dtype(got) == want_dt, "%s: dtype %s", names[op], wgt_dtype_name(wgt_tensor_dtype(got)));
            int want_nd = 0;
            for (int d = 0; d < nd; d++) want_nd += keep || !red[d];
            CHECK(wgt_tensor_ndim(got) == want_nd, "%s %s mask %d keep %d: rank %d, wanted %d", names[op], what, mask,
                  keep, wgt_tensor_ndim(got), want_nd);
            double *g = test_read_f64(got);
            for (int64_t o = 0, bad = 0; g && o < on && bad < 3; o++) {
                double tol = 0;
                if (op == 3) {
                    tol = (4.0 * (double)n_red + 2) * U32 + 4 * U32 * fabs(ref[o]);
                    if (dt == WGT_F16) tol += U16 * fabs(ref[o]) + 6e-8;
                }
                int same = isnan(ref[o]) ? isnan(g[o]) : isinf(ref[o]) ? g[o] == ref[o] : fabs(g[o] - ref[o]) <= tol;
                if (!same) {
                    bad++;
                    CHECK(0, "%s %s (%s) mask %d keep %d: element %lld is %.9g, wanted %.9g", names[op], what,
                          wgt_dtype_name(dt), mask, keep, (long long)o, g[o], ref[o]);
                }
            }
            free(g);
            free(ref);
            wgt_release(got);
        }
    free(x);
}

TEST_BACKENDS(any_all_count_nonzero_match_reference) {
    static const double vals[] = {0, 1.5, 0, 0, -2, 0, 0, 3, 0, 0, 0};
    static const double with_nan[] = {0, 0, NAN, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0};
    static const double ones[] = {1, 2, 3, -1, 5, 7, 1};
    static const int64_t shapes[3][3] = {{13}, {5, 7}, {3, 4, 5}};
    static const wgt_dtype dts[4] = {WGT_F32, WGT_F16, WGT_I32, WGT_U32};
    for (int op = 0; op < 3; op++)
        for (int di = 0; di < 4; di++)
            for (int s = 0; s < 3; s++) {
                int is_float = dts[di] == WGT_F32 || dts[di] == WGT_F16;
                /* Integers are cast from f32 (-2 saturates to 0 for u32): the reference reads them back. */
                wgt_tensor *a = from_values(ctx, dts[di], s + 1, shapes[s], vals, 11, s == 1);
                wgt_tensor *b = from_values(ctx, dts[di], s + 1, shapes[s], is_float ? with_nan : ones,
                                            is_float ? 13 : 7, 0);
                check_all_subsets(op, a, "zeros");
                check_all_subsets(op, b, is_float ? "nan" : "nonzero");
                wgt_release(a);
                wgt_release(b);
            }
}

TEST_BACKENDS(logsumexp_matches_reference) {
    static const double vals[] = {0.5, -1.25, 3, 2.5, -0.75, 0.125, 1, -3.5, 2};
    /* exp(100) overflows f32: only a shifted sum gets these right. */
    static const double big[] = {100, 99.5, -100, 101, 98, 100.25, -50};
    static const int64_t shapes[3][3] = {{11}, {5, 7}, {3, 4, 5}};
    for (int di = 0; di < 2; di++)
        for (int s = 0; s < 3; s++) {
            wgt_dtype dt = di ? WGT_F16 : WGT_F32;
            wgt_tensor *a = from_values(ctx, dt, s + 1, shapes[s], vals, 9, s == 1);
            check_all_subsets(3, a, "plain");
            wgt_release(a);
            if (dt == WGT_F32) {
                wgt_tensor *b = from_values(ctx, dt, s + 1, shapes[s], big, 7, s == 2);
                check_all_subsets(3, b, "large");
                wgt_release(b);
            }
        }
    /* Rows of -inf give -inf (not NaN), a +inf gives +inf, a NaN gives NaN. */
    float rows[4][3] = {{-INFINITY, -INFINITY, -INFINITY}, {1, INFINITY, 2}, {1, NAN, 2}, {-INFINITY, 0, -INFINITY}};
    int64_t s43[2] = {4, 3};
    wgt_tensor *r = wgt_tensor_from_data(ctx, WGT_F32, 2, s43, rows, sizeof rows, WGT_USAGE_DEFAULT);
    int last = -1;
    wgt_tensor *l = wgt_logsumexp(r, 1, &last, 0);
    float got[4] = {0};
    CHECK(l && wgt_tensor_read(l, got, sizeof got) == WGT_OK, "%s", wgt_last_error());
    CHECK(got[0] == -INFINITY && got[1] == INFINITY && isnan(got[2]) && got[3] == 0, "got %g %g %g %g", got[0], got[1],
          got[2], got[3]);
    wgt_release(l);
    wgt_release(r);
}

TEST_BACKENDS(logic_reductions_empty_and_errors) {
    int64_t s30[2] = {3, 0};
    wgt_tensor *e = wgt_zeros(ctx, WGT_F32, 2, s30);
    int ax1 = 1, ax0 = 0;
    struct {
        int op;
        int axis;
        double want;
        int64_t n;
    } cases[] = {{0, 1, 0, 3}, {1, 1, 1, 3}, {2, 1, 0, 3}, {3, 1, -INFINITY, 3}, {0, 0, 0, 0}, {3, 0, 0, 0}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        wgt_tensor *g = run(cases[c].op, e, 1, cases[c].axis ? &ax1 : &ax0, 0);
        CHECK(g && wgt_tensor_numel(g) == cases[c].n, "%s over axis %d: %s", names[cases[c].op], cases[c].axis,
              wgt_last_error());
        double *v = g ? test_read_f64(g) : NULL;
        for (int64_t i = 0; v && i < cases[c].n; i++)
            CHECK(v[i] == cases[c].want, "%s empty: element %lld is %g, wanted %g", names[cases[c].op], (long long)i,
                  v[i], cases[c].want);
        free(v);
        wgt_release(g);
    }
    int64_t s23[2] = {2, 3};
    wgt_tensor *a = wgt_ones(ctx, WGT_F32, 2, s23), *i = wgt_ones(ctx, WGT_I32, 2, s23);
    int twice[2] = {1, -1}, far[1] = {2};
    CHECK_ERROR(!wgt_any(a, 2, twice, 0), WGT_ERR_SHAPE, "more than once");
    CHECK_ERROR(!wgt_all(a, 1, far, 0), WGT_ERR_SHAPE, "wgt_all");
    CHECK_ERROR(!wgt_count_nonzero(a, -1, far, 0), WGT_ERR_INVALID_ARGUMENT, "naxes is -1");
    CHECK_ERROR(!wgt_logsumexp(i, 0, NULL, 0), WGT_ERR_DTYPE, "i32");
    CHECK_ERROR(!wgt_logsumexp(NULL, 0, NULL, 0), WGT_ERR_INVALID_ARGUMENT, "wgt_logsumexp");
    wgt_release(a);
    wgt_release(i);
    wgt_release(e);
}

static wgt_tensor *lse_rows(wgt_tensor *const *x) {
    int ax = -1;
    return wgt_logsumexp(x[0], 1, &ax, 0);
}
static wgt_tensor *lse_keep(wgt_tensor *const *x) {
    int ax[2] = {0, 2};
    return wgt_logsumexp(x[0], 2, ax, 1);
}

TEST_BACKENDS(logsumexp_gradient) {
    const gc_case cases[] = {
        {"logsumexp rows", lse_rows, 1, {{2, {4, 5}, -2, 2, GC_TRANSPOSED}}},
        {"logsumexp axes 0,2 keepdims", lse_keep, 1, {{3, {3, 2, 4}, -3, 3, GC_STEPPED}}},
        {"logsumexp f16", lse_rows, 1, {{2, {3, 6}, -2, 2, GC_PLAIN, WGT_F16}}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) gradcheck(ctx, &cases[c]);
}
