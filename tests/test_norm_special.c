/*
 * The row ops on special values: softmax and log_softmax of rows holding +inf, -inf, NaN,
 * huge logits and constant values, layer_norm and rms_norm of rows whose squares overflow or
 * underflow f32, in f32 and f16 and on rows long enough to take the kernels' long-row paths.
 * Each has an exact expected outcome (PyTorch's), checked element by element.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "norm_util.h"
#include "test.h"

/* ---- special values ------------------------------------------------------------------- */

/* r checked elementwise against want: NaN matches NaN, infinities and zeros exactly, the
 * rest within rel relatively (0: exactly). */
static void check_exact(wgt_tensor *r, const double *want, int64_t n, double rel, const char *what) {
    double *got = r ? test_read_f64(r) : NULL;
    CHECK(got && wgt_tensor_numel(r) == n, "%s: %s", what, wgt_last_error());
    int bad = 0;
    for (int64_t i = 0; got && i < n; i++) {
        int ok = isnan(want[i]) ? isnan(got[i]) : isinf(want[i]) ? got[i] == want[i] : fabs(got[i] - want[i]) <= rel * fabs(want[i]);
        if (!ok && bad++ < 3) CHECK(0, "%s: element %lld is %.9g, want %.9g", what, (long long)i, got[i], want[i]);
    }
    free(got);
}

TEST_BACKENDS(softmax_special_values) {
    const double inf = INFINITY, nan = NAN;
    for (int t = 0; t < 2; t++) {
        wgt_dtype dt = float_types[t];
        const char *tn = wgt_dtype_name(dt);
        /* Rows of 4 side by side, so a NaN row cannot leak into its neighbours: -inf entries
         * (exact 0 and -inf), all -inf, a +inf, a NaN, huge logits, one finite value. */
        double big = dt == WGT_F32 ? 1e30 : 60000;
        double x[7][4] = {{0, -inf, 0, -inf}, {-inf, -inf, -inf, -inf}, {1, inf, 2, 3},      {1, 2, nan, 3},
                          {big, 0, -big, 0},  {-inf, 5, -inf, -inf},    {-big, -big, -big, -big}};
        double sm[7][4] = {{0.5, 0, 0.5, 0}, {nan, nan, nan, nan}, {nan, nan, nan, nan}, {nan, nan, nan, nan},
                           {1, 0, 0, 0},     {0, 1, 0, 0},         {0.25, 0.25, 0.25, 0.25}};
        /* log_softmax: big - big = 0 and 0 - big exact; -2 big overflows f16 to -inf. */
        double l2 = -log(2.0), l4 = -log(4.0), m2b = dt == WGT_F32 ? -2 * big : -inf;
        double ls[7][4] = {{l2, -inf, l2, -inf}, {nan, nan, nan, nan}, {nan, nan, nan, nan}, {nan, nan, nan, nan},
                           {0, -big, m2b, -big}, {-inf, 0, -inf, -inf}, {l4, l4, l4, l4}};
        for (int k = 0; k < 7 * 4; k++) ls[k / 4][k % 4] = test_round_to(dt, ls[k / 4][k % 4]);
        /* log(2) and log(4) are not exact in f32 (WGSL allows log 2^-21 absolutely near 1). */
        double log_rel = dt == WGT_F32 ? 1e-6 : out_rel(dt);
        int64_t shape[2] = {7, 4};
        wgt_tensor *a = from_doubles(ctx, dt, 2, shape, &x[0][0]);
        wgt_tensor *s = wgt_softmax(a, 1), *l = wgt_log_softmax(a, -1);
        char what[64];
        snprintf(what, sizeof what, "softmax %s special rows", tn);
        check_exact(s, &sm[0][0], 28, 0, what);
        snprintf(what, sizeof what, "log_softmax %s special rows", tn);
        check_exact(l, &ls[0][0], 28, log_rel, what);
        wgt_release(s);
        wgt_release(l);
        /* The same rows along axis 0 (a transposed view): the kernel reads them strided. */
        wgt_tensor *at = wgt_transpose(a, 0, 1), *st = wgt_softmax(at, 0), *stt = wgt_transpose(st, 0, 1);
        snprintf(what, sizeof what, "softmax %s special columns", tn);
        check_exact(stt, &sm[0][0], 28, 0, what);
        wgt_release(at);
        wgt_release(st);
        wgt_release(stt);
        wgt_release(a);

        /* Long rows (a whole workgroup per row): one NaN at n - 223, all -inf, -inf but for
         * two entries, a +inf at the end. Rows of 10000 hold more than the dense kernel keeps
         * in registers (8192), so the NaN, an entry and the +inf are in the part read again. */
        for (int64_t n = 1000; n <= 10000; n += 9000) {
            int64_t lshape[2] = {4, n};
            double *v = malloc((size_t)(4 * n) * sizeof *v), *want = malloc((size_t)(4 * n) * sizeof *want);
            for (int64_t j = 0; v && want && j < n; j++) {
                v[j] = j % 7 - 3.0;
                v[n + j] = -inf;
                v[2 * n + j] = j == 10 || j == n - 100 ? 1.5 : -inf;
                v[3 * n + j] = j == n - 1 ? inf : 0;
                want[j] = want[n + j] = want[3 * n + j] = nan;
                want[2 * n + j] = j == 10 || j == n - 100 ? 0.5 : 0;
            }
            if (v && want) v[n - 223] = nan;
            wgt_tensor *la = v ? from_doubles(ctx, dt, 2, lshape, v) : NULL, *lr = wgt_softmax(la, -1);
            snprintf(what, sizeof what, "softmax %s special rows of %lld", tn, (long long)n);
            if (want) check_exact(lr, want, 4 * n, 0, what);
            free(v);
            free(want);
            wgt_release(la);
            wgt_release(lr);
        }

        /* Rows of length 1: 1 and 0, or NaN for a non-finite value. */
        double one_x[4] = {-7, 1e4, -inf, nan}, one_s[4] = {1, 1, nan, nan}, one_l[4] = {0, 0, nan, nan};
        int64_t oshape[2] = {4, 1};
        wgt_tensor *o = from_doubles(ctx, dt, 2, oshape, one_x), *os = wgt_softmax(o, 1), *ol = wgt_log_softmax(o, 1);
        snprintf(what, sizeof what, "softmax %s rows of one", tn);
        check_exact(os, one_s, 4, 0, what);
        check_exact(ol, one_l, 4, 0, what);
        wgt_release(o);
        wgt_release(os);
        wgt_release(ol);
    }
}

TEST_BACKENDS(norm_special_values) {
    const double inf = INFINITY, nan = NAN;
    for (int t = 0; t < 2; t++) {
        wgt_dtype dt = float_types[t];
        const char *tn = wgt_dtype_name(dt);
        /* Rows of 5: zeros, a constant 1 (exact sums), an inf, a NaN. */
        double x[4][5] = {{0, 0, 0, 0, 0}, {1, 1, 1, 1, 1}, {1, 2, inf, 3, 4}, {1, nan, 2, 3, 4}};
        double wv[5] = {2, -1, 0.5, 3, 1}, bv[5] = {0.25, -0.5, 1, 0, 2};
        int64_t shape[2] = {4, 5}, d = 5;
        wgt_tensor *a = from_doubles(ctx, dt, 2, shape, &x[0][0]), *w = from_doubles(ctx, dt, 1, &d, wv);
        wgt_tensor *b = from_doubles(ctx, dt, 1, &d, bv);
        double want[4][5];
        char what[64];
        /* layer_norm, eps > 0: zero and constant rows normalise to 0, leaving the bias; a
         * non-finite value makes the row NaN. */
        for (int j = 0; j < 5; j++) {
            want[0][j] = want[1][j] = test_round_to(dt, bv[j]);
            want[2][j] = want[3][j] = nan;
        }
        wgt_tensor *r = wgt_layer_norm(a, w, b, 1e-5);
        snprintf(what, sizeof what, "layer_norm %s eps 1e-5", tn);
        check_exact(r, &want[0][0], 20, 0, what);
        wgt_release(r);
        /* eps 0: a constant row has no spread, 0 / 0 gives NaN as in PyTorch. */
        for (int j = 0; j < 5; j++) want[0][j] = want[1][j] = nan;
        r = wgt_layer_norm(a, NULL, b, 0);
        snprintf(what, sizeof what, "layer_norm %s eps 0", tn);
        check_exact(r, &want[0][0], 20, 0, what);
        wgt_release(r);
        /* rms_norm: zeros stay 0 with eps > 0 and become NaN with eps 0; x * rsqrt(inf) is 0
         * beside NaN at the infinity; NaN spreads over its row. */
        for (int j = 0; j < 5; j++) {
            want[0][j] = 0;
            want[1][j] = test_round_to(dt, wv[j] / sqrt(1 + 0.5));
            want[2][j] = j == 2 ? nan : 0;
            want[3][j] = nan;
        }
        r = wgt_rms_norm(a, w, 0.5);
        snprintf(what, sizeof what, "rms_norm %s eps 0.5", tn);
        double *got = test_read_f64(r);
        /* Row 1 is not exact (1 / sqrt(1.5) rounds), so compare it within a few roundings. */
        for (int j = 0; got && j < 5; j++) {
            CHECK(fabs(got[5 + j] - want[1][j]) <= 2 * out_rel(dt) * fabs(want[1][j]), "%s: row 1 element %d is %g, want %g",
                  what, j, got[5 + j], want[1][j]);
            got[5 + j] = want[1][j];
        }
        for (int i = 0; got && i < 20; i++)
            CHECK(isnan(want[i / 5][i % 5]) ? isnan(got[i]) : got[i] == want[i / 5][i % 5],
                  "%s: element %d is %g, want %g", what, i, got[i], want[i / 5][i % 5]);
        CHECK(got != NULL, "%s: %s", what, wgt_last_error());
        free(got);
        wgt_release(r);
        r = wgt_rms_norm(a, NULL, 0);
        got = test_read_f64(r);
        CHECK(got && isnan(got[0]) && isnan(got[4]) && fabs(got[5] - 1) <= out_rel(dt), "rms_norm %s eps 0: %g %g %g", tn,
              got ? got[0] : 0, got ? got[4] : 0, got ? got[5] : 0);
        free(got);
        wgt_release(r);
        wgt_release(a);
        wgt_release(w);
        wgt_release(b);
    }
}

/* layer_norm and rms_norm of long rows (10000: more than the dense kernel keeps in
 * registers) with a NaN or an infinity in the part read again, and a constant row. */
TEST_BACKENDS(norm_special_values_long_rows) {
    const double inf = INFINITY, nan = NAN;
    const int64_t n = 10000;
    for (int t = 0; t < 2; t++) {
        wgt_dtype dt = float_types[t];
        int64_t shape[2] = {3, n};
        double *v = malloc((size_t)(3 * n) * sizeof *v), *ln = malloc((size_t)(3 * n) * sizeof *ln);
        double *rms = malloc((size_t)(3 * n) * sizeof *rms);
        for (int64_t j = 0; v && ln && rms && j < n; j++) {
            v[j] = j == n - 10 ? nan : j % 5;
            v[n + j] = j == n - 5 ? inf : j % 5;
            v[2 * n + j] = 2;
            ln[j] = ln[n + j] = rms[j] = nan;
            ln[2 * n + j] = 0;
            rms[n + j] = j == n - 5 ? nan : 0;
            rms[2 * n + j] = test_round_to(dt, 2 / sqrt(4 + 1e-5));
        }
        wgt_tensor *a = v ? from_doubles(ctx, dt, 2, shape, v) : NULL;
        wgt_tensor *l = wgt_layer_norm(a, NULL, NULL, 1e-5), *r = wgt_rms_norm(a, NULL, 1e-5);
        char what[64];
        snprintf(what, sizeof what, "layer_norm %s special rows of %lld", wgt_dtype_name(dt), (long long)n);
        if (ln) check_exact(l, ln, 3 * n, 0, what);
        snprintf(what, sizeof what, "rms_norm %s special rows of %lld", wgt_dtype_name(dt), (long long)n);
        if (rms) check_exact(r, rms, 3 * n, dt == WGT_F16 ? out_rel(dt) : 8 * U, what);
        free(v);
        free(ln);
        free(rms);
        wgt_release(a);
        wgt_release(l);
        wgt_release(r);
    }
}
