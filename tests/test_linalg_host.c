/*
 * Differential tests of the host factorizations (inv, solve, det, cholesky) on both backends,
 * against float64 references written here (Gauss-Jordan with partial pivoting, elimination,
 * the Cholesky recurrence) from the inputs as read back: batches, odd sizes, transposed
 * inputs, broadcast batches and a single right-hand side vector, empty batches and 0 x 0
 * matrices, an exactly singular matrix (error; det 0), a matrix that is not positive definite,
 * and the argument errors.
 *
 * Tolerance: the inputs are diagonally dominant (condition numbers near 1), the library
 * works in double from the exact f32 inputs, so its result is the exact one to about 1e-15
 * relative before the final rounding to f32: |got - ref| <= 2^-24 |ref| + 1e-10 max|ref|.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

#define U32 5.9604644775390625e-8

static uint32_t rng(uint64_t *s) {
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(*s >> 32);
}

/* [batch..., n, n] diagonally dominant f32 matrices; spd: symmetric positive definite
 * (M M^T / n + I, rounded once, so still symmetric). transposed: seen through a transpose. */
static wgt_tensor *matrices(wgt_context *ctx, int nd, const int64_t *shape, uint64_t seed, int spd, int transposed) {
    int64_t n = shape[nd - 1], batch = 1;
    for (int d = 0; d < nd - 2; d++) batch *= shape[d];
    float *f = malloc(sizeof(float) * (size_t)(batch * n * n + 1));
    double *m = malloc(sizeof(double) * (size_t)(n * n + 1));
    uint64_t s = seed * 977 + 3;
    for (int64_t b = 0; b < batch; b++) {
        for (int64_t i = 0; i < n * n; i++) m[i] = rng(&s) / 2147483648.0 - 1;
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < n; j++) {
                double v = m[i * n + j] + (i == j ? (double)n : 0);
                if (spd) {
                    v = i == j ? 1 : 0;
                    for (int64_t k = 0; k < n; k++) v += m[i * n + k] * m[j * n + k] / (double)n;
                }
                f[b * n * n + (transposed ? j * n + i : i * n + j)] = (float)v;
            }
    }
    wgt_tensor *t = wgt_tensor_from_data(ctx, WGT_F32, nd, shape, f, sizeof(float) * (size_t)(batch * n * n), WGT_USAGE_DEFAULT);
    free(f);
    free(m);
    if (transposed && t) {
        wgt_tensor *v = wgt_transpose(t, -1, -2);
        wgt_release(t);
        t = v;
    }
    return t;
}

/* Inverse by Gauss-Jordan with partial pivoting, in double; 0 if singular. */
static int ref_inv(const double *a, int n, double *inv) {
    double *w = malloc(sizeof(double) * (size_t)(n * n + 1));
    memcpy(w, a, sizeof(double) * (size_t)(n * n));
    for (int i = 0; i < n * n; i++) inv[i] = i % (n + 1) == 0;
    for (int c = 0; c < n; c++) {
        int p = c;
        for (int r = c + 1; r < n; r++)
            if (fabs(w[r * n + c]) > fabs(w[p * n + c])) p = r;
        if (w[p * n + c] == 0) {
            free(w);
            return 0;
        }
        for (int j = 0; j < n; j++) {
            double t = w[c * n + j];
            w[c * n + j] = w[p * n + j], w[p * n + j] = t;
            t = inv[c * n + j];
            inv[c * n + j] = inv[p * n + j], inv[p * n + j] = t;
        }
        double d = w[c * n + c];
        for (int j = 0; j < n; j++) w[c * n + j] /= d, inv[c * n + j] /= d;
        for (int r = 0; r < n; r++) {
            if (r == c) continue;
            double f = w[r * n + c];
            for (int j = 0; j < n; j++) w[r * n + j] -= f * w[c * n + j], inv[r * n + j] -= f * inv[c * n + j];
        }
    }
    free(w);
    return 1;
}

static double ref_det(const double *a, int n) {
    double *w = malloc(sizeof(double) * (size_t)(n * n + 1)), d = 1;
    memcpy(w, a, sizeof(double) * (size_t)(n * n));
    for (int c = 0; c < n && d != 0; c++) {
        int p = c;
        for (int r = c + 1; r < n; r++)
            if (fabs(w[r * n + c]) > fabs(w[p * n + c])) p = r;
        if (p != c) {
            d = -d;
            for (int j = 0; j < n; j++) {
                double t = w[c * n + j];
                w[c * n + j] = w[p * n + j], w[p * n + j] = t;
            }
        }
        d *= w[c * n + c];
        for (int r = c + 1; r < n && w[c * n + c] != 0; r++) {
            double f = w[r * n + c] / w[c * n + c];
            for (int j = c; j < n; j++) w[r * n + j] -= f * w[c * n + j];
        }
    }
    free(w);
    return d;
}

static void compare(const char *what, wgt_tensor *got, int nd, const int64_t *shape, const double *ref) {
    CHECK(got, "%s: %s", what, wgt_last_error());
    if (!got) return;
    CHECK(wgt_tensor_ndim(got) == nd, "%s: rank %d, wanted %d", what, wgt_tensor_ndim(got), nd);
    int64_t count = 1;
    for (int d = 0; d < nd; d++) {
        count *= shape[d];
        CHECK(d >= wgt_tensor_ndim(got) || wgt_tensor_shape(got)[d] == shape[d], "%s: dim %d", what, d);
    }
    double *g = test_read_f64(got), big = 0;
    for (int64_t i = 0; i < count; i++) big = fmax(big, fabs(ref[i]));
    for (int64_t i = 0, bad = 0; g && i < count && bad < 3; i++)
        if (!(fabs(g[i] - ref[i]) <= U32 * fabs(ref[i]) + 1e-10 * big)) {
            bad++;
            CHECK(0, "%s: element %lld is %.9g, wanted %.9g", what, (long long)i, g[i], ref[i]);
        }
    free(g);
    wgt_release(got);
}

TEST_BACKENDS(linalg_inv_and_det_match_reference) {
    static const struct {
        int nd;
        int64_t shape[4];
        int transposed;
    } cases[] = {{3, {3, 5, 5}, 0}, {2, {1, 1}, 0}, {2, {7, 7}, 1}, {4, {2, 1, 3, 3}, 1}, {3, {0, 3, 3}, 0}, {3, {2, 0, 0}, 0}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int nd = cases[c].nd, n = (int)cases[c].shape[nd - 1];
        wgt_tensor *a = matrices(ctx, nd, cases[c].shape, c, 0, cases[c].transposed);
        double *x = test_read_f64(a);
        int64_t batch = 1;
        for (int d = 0; d < nd - 2; d++) batch *= cases[c].shape[d];
        double *inv = malloc(sizeof(double) * (size_t)(batch * n * n + 1)), *det = malloc(sizeof(double) * (size_t)(batch + 1));
        for (int64_t b = 0; b < batch; b++) {
            CHECK(ref_inv(x + b * n * n, n, inv + b * n * n));
            det[b] = ref_det(x + b * n * n, n);
        }
        char what[64];
        snprintf(what, sizeof what, "inv case %zu", c);
        compare(what, wgt_linalg_inv(a), nd, cases[c].shape, inv);
        snprintf(what, sizeof what, "det case %zu", c);
        compare(what, wgt_linalg_det(a), nd - 2, cases[c].shape, det);
        free(x);
        free(inv);
        free(det);
        wgt_release(a);
    }
    /* Rows out of order: LU must pivot, and each row swap flips det's sign. */
    float perm[2][9] = {{0, 2, 1, 3, 1, 0, 1, 0, 4}, {0, 0, 5, 0, 3, 1, 2, 1, 0}};
    int64_t s233[3] = {2, 3, 3};
    wgt_tensor *pm = wgt_tensor_from_data(ctx, WGT_F32, 3, s233, perm, sizeof perm, WGT_USAGE_DEFAULT);
    double px[18], pinv[18], pdet[2];
    for (int k = 0; k < 18; k++) px[k] = perm[k / 9][k % 9];
    for (int b = 0; b < 2; b++) {
        CHECK(ref_inv(px + 9 * b, 3, pinv + 9 * b));
        pdet[b] = ref_det(px + 9 * b, 3);
    }
    CHECK(fabs(pdet[0] + 25) < 1e-12 && fabs(pdet[1] + 30) < 1e-12, "reference det %g %g", pdet[0], pdet[1]);
    compare("inv pivoting", wgt_linalg_inv(pm), 3, s233, pinv);
    compare("det pivoting", wgt_linalg_det(pm), 1, s233, pdet);
    wgt_release(pm);
    /* An exactly singular matrix: det is 0, inv an error naming it. */
    float sing[2][4] = {{2, 1, 1, 3}, {1, 2, 2, 4}};
    int64_t s22[3] = {2, 2, 2};
    wgt_tensor *s = wgt_tensor_from_data(ctx, WGT_F32, 3, s22, sing, sizeof sing, WGT_USAGE_DEFAULT);
    double want[2] = {5, 0};
    compare("det singular", wgt_linalg_det(s), 1, s22, want);
    CHECK_ERROR(!wgt_linalg_inv(s), WGT_ERR_INVALID_ARGUMENT, "matrix 1 of the batch");
    wgt_release(s);
}

TEST_BACKENDS(linalg_solve_matches_reference) {
    static const struct {
        int na, nb;
        int64_t sa[3], sb[3], sx[3];
        int nx, transposed;
    } cases[] = {
        {3, 3, {2, 4, 4}, {2, 4, 3}, {2, 4, 3}, 3, 0},
        {3, 1, {3, 5, 5}, {5}, {3, 5}, 2, 1},     /* one vector against a batch */
        {2, 3, {4, 4}, {2, 4, 2}, {2, 4, 2}, 3, 1}, /* a broadcast over b's batch */
        {2, 1, {6, 6}, {6}, {6}, 1, 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int n = (int)cases[c].sa[cases[c].na - 1];
        wgt_tensor *a = matrices(ctx, cases[c].na, cases[c].sa, 10 + c, 0, cases[c].transposed);
        wgt_tensor *b = wgt_rand_uniform(ctx, WGT_F32, cases[c].nb, cases[c].sb, -1, 1, 20 + c);
        double *x = test_read_f64(a), *y = test_read_f64(b);
        int64_t abatch = cases[c].na == 3 ? cases[c].sa[0] : 1, batch = cases[c].nx == 3 ? cases[c].sx[0] : abatch;
        int64_t k = cases[c].nb == 1 ? 1 : cases[c].sb[cases[c].nb - 1];
        double *inv = malloc(sizeof(double) * (size_t)(n * n)), *ref = calloc((size_t)(batch * n * k), sizeof(double));
        for (int64_t bi = 0; bi < batch; bi++) {
            CHECK(ref_inv(x + (abatch == 1 ? 0 : bi) * n * n, n, inv));
            const double *rhs = y + (cases[c].nb == 3 ? bi * n * k : 0);
            for (int i = 0; i < n; i++)
                for (int64_t j = 0; j < k; j++)
                    for (int l = 0; l < n; l++) ref[bi * n * k + i * k + j] += inv[i * n + l] * rhs[l * k + j];
        }
        char what[64];
        snprintf(what, sizeof what, "solve case %zu", c);
        compare(what, wgt_linalg_solve(a, b), cases[c].nx, cases[c].sx, ref);
        free(x);
        free(y);
        free(inv);
        free(ref);
        wgt_release(a);
        wgt_release(b);
    }
}

TEST_BACKENDS(linalg_cholesky_matches_reference) {
    int64_t shape[3] = {2, 5, 5};
    for (int upper = 0; upper < 2; upper++)
        for (int tr = 0; tr < 2; tr++) {
            wgt_tensor *a = matrices(ctx, 3, shape, 30 + tr, 1, tr);
            double *x = test_read_f64(a), ref[50] = {0};
            for (int b = 0; b < 2; b++) {
                const double *m = x + b * 25;
                double l[25] = {0};
                for (int j = 0; j < 5; j++) {
                    double d = m[j * 5 + j];
                    for (int k = 0; k < j; k++) d -= l[j * 5 + k] * l[j * 5 + k];
                    l[j * 5 + j] = sqrt(d);
                    for (int i = j + 1; i < 5; i++) {
                        double v = m[i * 5 + j];
                        for (int k = 0; k < j; k++) v -= l[i * 5 + k] * l[j * 5 + k];
                        l[i * 5 + j] = v / l[j * 5 + j];
                    }
                }
                for (int i = 0; i < 5; i++)
                    for (int j = 0; j < 5; j++) ref[b * 25 + i * 5 + j] = upper ? l[j * 5 + i] : l[i * 5 + j];
            }
            compare(upper ? "cholesky upper" : "cholesky lower", wgt_linalg_cholesky(a, upper), 3, shape, ref);
            free(x);
            wgt_release(a);
        }
}

TEST_BACKENDS(linalg_host_errors) {
    int64_t s23[2] = {2, 3}, s33[2] = {3, 3}, s4[1] = {4};
    wgt_tensor *r = wgt_zeros(ctx, WGT_F32, 2, s23), *i = wgt_zeros(ctx, WGT_I32, 2, s33);
    wgt_tensor *z = wgt_zeros(ctx, WGT_F32, 2, s33), *v = wgt_zeros(ctx, WGT_F32, 1, s4);
    float neg[4] = {1, 2, 2, 1}; /* symmetric, eigenvalues 3 and -1 */
    int64_t s22[2] = {2, 2};
    wgt_tensor *np = wgt_tensor_from_data(ctx, WGT_F32, 2, s22, neg, sizeof neg, WGT_USAGE_DEFAULT);
    CHECK_ERROR(!wgt_linalg_inv(r), WGT_ERR_SHAPE, "square");
    CHECK_ERROR(!wgt_linalg_det(i), WGT_ERR_DTYPE, "i32");
    CHECK_ERROR(!wgt_linalg_inv(z), WGT_ERR_INVALID_ARGUMENT, "singular");
    CHECK_ERROR(!wgt_linalg_solve(z, v), WGT_ERR_SHAPE, "b [4] must be [3]");
    CHECK_ERROR(!wgt_linalg_cholesky(np, 0), WGT_ERR_INVALID_ARGUMENT, "not positive definite");
    CHECK_ERROR(!wgt_linalg_cholesky(NULL, 0), WGT_ERR_INVALID_ARGUMENT, "wgt_linalg_cholesky");
    wgt_release(r);
    wgt_release(i);
    wgt_release(z);
    wgt_release(v);
    wgt_release(np);
}
