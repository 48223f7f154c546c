/*
 * Differential tests of the decompositions (qr, slogdet, svd, svdvals, eigh, eigvalsh, pinv,
 * matrix_rank, the spectral matrix norms) on both backends, against float64 references
 * written here from the inputs as read back: Jacobi rotations (one-sided for singular values,
 * two-sided for symmetric eigenvalues) and elimination with partial pivoting, independent of
 * LAPACK. Factors whose signs are not unique (Q, U, V, eigenvectors) are checked by what
 * defines them: they reproduce the input and are orthonormal. Cases: batches, odd and
 * non-square shapes, transposed (strided) inputs, empty batches and 0-sized matrices,
 * singular and rank-deficient matrices, non-finite values and the argument errors.
 *
 * Tolerances: the library works in double, so its factors are exact to about 1e-15 before
 * their rounding to f32 (relative 2^-24 each). A product of k rounded factors then differs
 * from the exact one by at most about k 2^-24 times the same sum over magnitudes, so each
 * reconstruction is held to 3 * 2^-24 * sum |factors| per element; values (singular values,
 * eigenvalues, log|det|) to 2^-24 of their own size plus 1e-12 of the largest.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "reference.h"

#define U32 5.9604644775390625e-8

/* [batch..., m, n] f32 values uniform in [-1, 1]; transposed: stored as [..., n, m] and seen
 * through a transpose (strided). */
static wgt_tensor *random_matrices(wgt_context *ctx, int nd, const int64_t *shape, uint64_t seed, int transposed) {
    int64_t count = numel_of(nd, shape), st[4];
    memcpy(st, shape, sizeof(int64_t) * (size_t)nd);
    if (transposed) st[nd - 1] = shape[nd - 2], st[nd - 2] = shape[nd - 1];
    float *f = calloc((size_t)(count + 1), sizeof(float));
    for (int64_t i = 0; i < count; i++) f[i] = (float)((double)(next_u64(&seed) >> 11) / 4503599627370496.0 - 1);
    wgt_tensor *t = wgt_tensor_from_data(ctx, WGT_F32, nd, st, f, sizeof(float) * (size_t)count, WGT_USAGE_DEFAULT);
    free(f);
    if (transposed && t) {
        wgt_tensor *v = wgt_transpose(t, -1, -2);
        wgt_release(t);
        t = v;
    }
    return t;
}

static wgt_tensor *from_floats(wgt_context *ctx, int nd, const int64_t *shape, const float *v) {
    return wgt_tensor_from_data(ctx, WGT_F32, nd, shape, v, sizeof(float) * (size_t)numel_of(nd, shape), WGT_USAGE_DEFAULT);
}

/* A plane rotation of columns p and q (cols 1) or rows p and q (cols 0) of a row-major
 * rows x n matrix: (x, y) to (c x - s y, s x + c y). */
static void rotate(double *m, int rows, int n, int cols, int p, int q, double c, double s) {
    for (int k = 0; k < (cols ? rows : n); k++) {
        double *x = cols ? &m[k * n + p] : &m[p * n + k], *y = cols ? &m[k * n + q] : &m[q * n + k], t = *x;
        *x = c * t - s * *y, *y = s * t + c * *y;
    }
}

/* One-sided Jacobi on a row-major m x n (m >= n) matrix w: afterwards w = U S (orthogonal
 * columns) and v (n x n) = V, so a = w v^T; s: the column norms (unsorted). */
static void ref_svd_tall(double *w, int m, int n, double *v, double *s) {
    for (int i = 0; i < n * n; i++) v[i] = i % (n + 1) == 0;
    for (int sweep = 0; sweep < 80; sweep++) {
        double off = 0;
        for (int p = 0; p < n; p++)
            for (int q = p + 1; q < n; q++) {
                double al = 0, be = 0, ga = 0;
                for (int i = 0; i < m; i++) al += w[i * n + p] * w[i * n + p], be += w[i * n + q] * w[i * n + q], ga += w[i * n + p] * w[i * n + q];
                if (ga == 0 || fabs(ga) <= 1e-17 * sqrt(al * be)) continue;
                off = fmax(off, fabs(ga) / sqrt(al * be));
                double z = (be - al) / (2 * ga), t = (z >= 0 ? 1 : -1) / (fabs(z) + sqrt(1 + z * z));
                double c = 1 / sqrt(1 + t * t), sn = c * t;
                rotate(w, m, n, 1, p, q, c, sn);
                rotate(v, n, n, 1, p, q, c, sn);
            }
        if (off < 1e-16) break;
    }
    for (int j = 0; j < n; j++) {
        s[j] = 0;
        for (int i = 0; i < m; i++) s[j] += w[i * n + j] * w[i * n + j];
        s[j] = sqrt(s[j]);
    }
}

static int descending(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? 1 : a > b ? -1 : 0;
}

/* The singular values of a (m x n row-major), descending, k = min(m, n) of them; with p
 * (n x m) also the pseudo-inverse keeping those above cut_rtol times the largest. */
static void ref_svd(const double *a, int m, int n, double *s, double *p, double cut_rtol) {
    int tall = m >= n, r = tall ? m : n, c = tall ? n : m; /* w: a or a^T, r x c with r >= c */
    double *w = malloc(sizeof(double) * (size_t)(r * c + 1)), *v = malloc(sizeof(double) * (size_t)(c * c + 1));
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) w[tall ? i * n + j : j * m + i] = a[i * n + j];
    ref_svd_tall(w, r, c, v, s);
    double big = 0;
    for (int l = 0; l < c; l++) big = fmax(big, s[l]);
    /* pinv(w) = V S^-2 (U S)^T, c x r; pinv(a) is it or its transpose. */
    for (int i = 0; p && i < c; i++)
        for (int j = 0; j < r; j++) {
            double x = 0;
            for (int l = 0; l < c; l++)
                if (s[l] > cut_rtol * big) x += v[i * c + l] * w[j * c + l] / (s[l] * s[l]);
            p[tall ? i * m + j : j * m + i] = x;
        }
    qsort(s, (size_t)c, sizeof(double), descending);
    free(w);
    free(v);
}

/* Eigenvalues (ascending) of the symmetric matrix whose lower triangle a holds, by cyclic
 * Jacobi rotations. */
static int ascending(const void *x, const void *y) { return -descending(x, y); }
static void ref_eigvalsh(const double *a, int n, double *w) {
    double *s = malloc(sizeof(double) * (size_t)(n * n + 1));
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) s[i * n + j] = i >= j ? a[i * n + j] : a[j * n + i];
    for (int sweep = 0; sweep < 100; sweep++) {
        double off = 0, all = 0;
        for (int i = 0; i < n * n; i++) all += s[i] * s[i], off += i / n != i % n ? s[i] * s[i] : 0;
        if (off <= 1e-32 * all) break;
        for (int p = 0; p < n; p++)
            for (int q = p + 1; q < n; q++) {
                if (s[p * n + q] == 0) continue;
                double th = (s[q * n + q] - s[p * n + p]) / (2 * s[p * n + q]);
                double t = (th >= 0 ? 1 : -1) / (fabs(th) + sqrt(th * th + 1)), c = 1 / sqrt(t * t + 1), sn = t * c;
                rotate(s, n, n, 1, p, q, c, sn); /* S J */
                rotate(s, n, n, 0, p, q, c, sn); /* J^T S J */
            }
    }
    for (int i = 0; i < n; i++) w[i] = s[i * n + i];
    qsort(w, (size_t)n, sizeof(double), ascending);
    free(s);
}

/* sign and log|det| by elimination with partial pivoting. */
static void ref_slogdet(const double *a, int n, double *sign, double *logabs) {
    double *w = malloc(sizeof(double) * (size_t)(n * n + 1)), sg = 1, l = 0;
    memcpy(w, a, sizeof(double) * (size_t)(n * n));
    for (int c = 0; c < n && sg != 0; c++) {
        int p = c;
        for (int r = c + 1; r < n; r++)
            if (fabs(w[r * n + c]) > fabs(w[p * n + c])) p = r;
        if (w[p * n + c] == 0) {
            sg = 0, l = -INFINITY;
            break;
        }
        if (p != c)
            for (int j = 0; j < n; j++) {
                double t = w[c * n + j];
                w[c * n + j] = w[p * n + j], w[p * n + j] = t;
            }
        sg *= (p != c ? -1 : 1) * (w[c * n + c] < 0 ? -1 : 1);
        l += log(fabs(w[c * n + c]));
        for (int r = c + 1; r < n; r++) {
            double f = w[r * n + c] / w[c * n + c];
            for (int j = c; j < n; j++) w[r * n + j] -= f * w[c * n + j];
        }
    }
    *sign = sg, *logabs = l;
    free(w);
}

static int has_shape(const char *what, wgt_tensor *t, int nd, const int64_t *shape) {
    CHECK(t, "%s: %s", what, wgt_last_error());
    if (!t) return 0;
    int ok = wgt_tensor_ndim(t) == nd;
    for (int d = 0; ok && d < nd; d++) ok = wgt_tensor_shape(t)[d] == shape[d];
    CHECK(ok, "%s: wrong shape (rank %d)", what, wgt_tensor_ndim(t));
    return ok;
}

/* |sum_l x[i][l] d[l] y[l][j] - want[i][j]| <= 3 2^-24 sum_l |x d y| over batch matrices:
 * x [rows, k], d [k] (NULL: ones), y [k, cols] (ty: y given as [cols, k], read transposed). */
static void check_product(const char *what, const double *x, const double *d, const double *y, int ty, const double *want,
                          int64_t batch, int rows, int k, int cols) {
    int bad = 0;
    for (int64_t b = 0; b < batch && bad < 3; b++)
        for (int i = 0; i < rows; i++)
            for (int j = 0; j < cols; j++) {
                double sum = 0, mag = 0;
                for (int l = 0; l < k; l++) {
                    double yl = ty ? y[b * cols * k + j * k + l] : y[b * k * cols + l * cols + j];
                    double t = x[b * rows * k + i * k + l] * (d ? d[b * k + l] : 1) * yl;
                    sum += t, mag += fabs(t);
                }
                double w = want ? want[b * rows * cols + i * cols + j] : i == j;
                if (!(fabs(sum - w) <= 3 * U32 * mag + 1e-300) && bad++ < 3)
                    CHECK(0, "%s: matrix %lld [%d][%d] is %.9g, wanted %.9g", what, (long long)b, i, j, sum, w);
            }
}

static void check_values(const char *what, const double *got, const double *want, int64_t count) {
    double big = 0;
    for (int64_t i = 0; i < count; i++) big = fmax(big, fabs(want[i]));
    for (int64_t i = 0, bad = 0; i < count && bad < 3; i++)
        if (!(fabs(got[i] - want[i]) <= U32 * fabs(want[i]) + 1e-12 * big) && bad++ < 3)
            CHECK(0, "%s: value %lld is %.9g, wanted %.9g", what, (long long)i, got[i], want[i]);
}

/* Transposes each [r, c] block of x into y ([c, r]). */
static void transpose_blocks(const double *x, double *y, int64_t batch, int r, int c) {
    for (int64_t b = 0; b < batch; b++)
        for (int i = 0; i < r; i++)
            for (int j = 0; j < c; j++) y[b * r * c + j * r + i] = x[b * r * c + i * c + j];
}

typedef struct {
    int nd;
    int64_t shape[4];
    int transposed;
} mcase;

static const mcase general[] = {{2, {5, 3}, 0}, {2, {3, 5}, 1}, {3, {2, 4, 4}, 1}, {4, {2, 1, 6, 2}, 0},
                                {2, {1, 1}, 0}, {3, {0, 3, 2}, 0}, {2, {0, 3}, 0}, {2, {3, 0}, 0}};
enum { NGENERAL = sizeof general / sizeof general[0] };

static int64_t batch_of(const mcase *c) { return numel_of(c->nd - 2, c->shape); }

TEST_BACKENDS(linalg_qr_reconstructs_and_is_orthonormal) {
    for (int c = 0; c < NGENERAL; c++)
        for (int complete = 0; complete < 2; complete++) {
            const mcase *mc = &general[c];
            int nd = mc->nd, m = (int)mc->shape[nd - 2], n = (int)mc->shape[nd - 1], k = m < n ? m : n;
            int qc = complete ? m : k;
            int64_t batch = batch_of(mc), sq[4], sr[4];
            memcpy(sq, mc->shape, sizeof sq);
            memcpy(sr, mc->shape, sizeof sr);
            sq[nd - 1] = qc, sr[nd - 2] = qc;
            wgt_tensor *a = random_matrices(ctx, nd, mc->shape, 100 + (uint64_t)c, mc->transposed), *q = NULL, *r = NULL;
            CHECK(wgt_linalg_qr(a, complete, &q, &r) == WGT_OK, "qr case %d: %s", c, wgt_last_error());
            char what[64];
            snprintf(what, sizeof what, "qr case %d complete %d", c, complete);
            if (has_shape(what, q, nd, sq) && has_shape(what, r, nd, sr)) {
                double *x = test_read_f64(a), *qv = test_read_f64(q), *rv = test_read_f64(r);
                double *qt = malloc(sizeof(double) * (size_t)(batch * m * qc + 1));
                int lower_zero = 1;
                for (int64_t b = 0; b < batch; b++)
                    for (int i = 0; i < qc; i++)
                        for (int j = 0; j < i && j < n; j++) lower_zero &= rv[b * qc * n + i * n + j] == 0;
                CHECK(lower_zero, "%s: R has values below its diagonal", what);
                check_product(what, qv, NULL, rv, 0, x, batch, m, qc, n);     /* Q R = a */
                transpose_blocks(qv, qt, batch, m, qc);
                check_product(what, qt, NULL, qv, 0, NULL, batch, qc, m, qc); /* Q^T Q = I */
                free(x), free(qv), free(rv), free(qt);
            }
            wgt_release(q), wgt_release(r), wgt_release(a);
        }
}

TEST_BACKENDS(linalg_svd_matches_jacobi_reference) {
    for (int c = 0; c < NGENERAL; c++)
        for (int full = 0; full < 2; full++) {
            const mcase *mc = &general[c];
            int nd = mc->nd, m = (int)mc->shape[nd - 2], n = (int)mc->shape[nd - 1], k = m < n ? m : n;
            int uc = full ? m : k, vr = full ? n : k;
            int64_t batch = batch_of(mc), su[4], ss[4], sv[4];
            memcpy(su, mc->shape, sizeof su), memcpy(ss, mc->shape, sizeof ss), memcpy(sv, mc->shape, sizeof sv);
            su[nd - 1] = uc, ss[nd - 2] = k, sv[nd - 2] = vr;
            wgt_tensor *a = random_matrices(ctx, nd, mc->shape, 200 + (uint64_t)c, mc->transposed), *u = NULL, *s = NULL,
                       *vh = NULL;
            CHECK(wgt_linalg_svd(a, full, &u, &s, &vh) == WGT_OK, "svd case %d: %s", c, wgt_last_error());
            char what[64];
            snprintf(what, sizeof what, "svd case %d full %d", c, full);
            if (has_shape(what, u, nd, su) && has_shape(what, s, nd - 1, ss) && has_shape(what, vh, nd, sv)) {
                double *x = test_read_f64(a), *uv = test_read_f64(u), *sv_ = test_read_f64(s), *vv = test_read_f64(vh);
                double *ref = malloc(sizeof(double) * (size_t)(batch * k + 1));
                double *uk = malloc(sizeof(double) * (size_t)(batch * m * k + 1)), *vk = malloc(sizeof(double) * (size_t)(batch * k * n + 1));
                double *t = malloc(sizeof(double) * (size_t)(batch * (m > n ? m : n) * (m > n ? m : n) + 1));
                for (int64_t b = 0; b < batch; b++) {
                    ref_svd(x + b * m * n, m, n, ref + b * k, NULL, 0);
                    for (int i = 0; i < m; i++) /* the first k columns of U, rows of Vh */
                        for (int l = 0; l < k; l++) uk[b * m * k + i * k + l] = uv[b * m * uc + i * uc + l];
                    memcpy(vk + b * k * n, vv + b * vr * n, sizeof(double) * (size_t)(k * n));
                }
                check_values(what, sv_, ref, batch * k);
                check_product(what, uk, sv_, vk, 0, x, batch, m, k, n);          /* U S Vh = a */
                transpose_blocks(uv, t, batch, m, uc);
                check_product(what, t, NULL, uv, 0, NULL, batch, uc, m, uc);     /* U^T U = I */
                check_product(what, vv, NULL, vv, 1, NULL, batch, vr, n, vr);    /* Vh Vh^T = I */
                /* svdvals is the same computation; the norms are its max, min and sum. */
                wgt_tensor *sv2 = wgt_linalg_svdvals(a);
                if (has_shape("svdvals", sv2, nd - 1, ss)) {
                    double *g = test_read_f64(sv2);
                    check_values("svdvals", g, ref, batch * k);
                    free(g);
                }
                wgt_release(sv2);
                static const char *const ords[3] = {"2", "-2", "nuc"};
                for (int o = 0; o < 3 && k > 0; o++) {
                    double *want = malloc(sizeof(double) * (size_t)(batch + 1));
                    for (int64_t b = 0; b < batch; b++) {
                        want[b] = o == 0 ? ref[b * k] : o == 1 ? ref[b * k + k - 1] : 0;
                        for (int l = 0; o == 2 && l < k; l++) want[b] += ref[b * k + l];
                    }
                    int64_t kept[4];
                    memcpy(kept, mc->shape, sizeof kept);
                    kept[nd - 2] = kept[nd - 1] = 1;
                    for (int keep = 0; keep < 2; keep++) {
                        wgt_tensor *nm = wgt_linalg_matrix_norm(a, ords[o], keep);
                        snprintf(what, sizeof what, "matrix_norm %s case %d keepdims %d", ords[o], c, keep);
                        if (has_shape(what, nm, keep ? nd : nd - 2, kept)) {
                            double *g = test_read_f64(nm);
                            for (int64_t b = 0; b < batch; b++)
                                CHECK(fabs(g[b] - want[b]) <= U32 * (1 + k) * want[b], "%s: %.9g, wanted %.9g", what, g[b], want[b]);
                            free(g);
                        }
                        wgt_release(nm);
                    }
                    free(want);
                }
                free(x), free(uv), free(sv_), free(vv), free(ref), free(uk), free(vk), free(t);
            }
            wgt_release(u), wgt_release(s), wgt_release(vh), wgt_release(a);
        }
}

TEST_BACKENDS(linalg_eigh_matches_jacobi_reference) {
    static const mcase cases[] = {{2, {5, 5}, 0}, {3, {3, 4, 4}, 1}, {2, {1, 1}, 0}, {4, {2, 1, 3, 3}, 0}, {3, {0, 2, 2}, 0}, {2, {0, 0}, 0}};
    for (int c = 0; c < (int)(sizeof cases / sizeof cases[0]); c++) {
        const mcase *mc = &cases[c];
        int nd = mc->nd, n = (int)mc->shape[nd - 1];
        int64_t batch = batch_of(mc), sw[4];
        memcpy(sw, mc->shape, sizeof sw);
        /* Not symmetric: only the lower triangle counts, as NumPy. */
        wgt_tensor *a = random_matrices(ctx, nd, mc->shape, 300 + (uint64_t)c, mc->transposed), *w = NULL, *v = NULL;
        CHECK(wgt_linalg_eigh(a, &w, &v) == WGT_OK, "eigh case %d: %s", c, wgt_last_error());
        char what[64];
        snprintf(what, sizeof what, "eigh case %d", c);
        if (has_shape(what, w, nd - 1, sw) && has_shape(what, v, nd, mc->shape)) {
            double *x = test_read_f64(a), *wv = test_read_f64(w), *vv = test_read_f64(v);
            double *ref = malloc(sizeof(double) * (size_t)(batch * n + 1)), *sym = malloc(sizeof(double) * (size_t)(batch * n * n + 1));
            double *vt = malloc(sizeof(double) * (size_t)(batch * n * n + 1));
            for (int64_t b = 0; b < batch; b++) {
                ref_eigvalsh(x + b * n * n, n, ref + b * n);
                for (int i = 0; i < n; i++)
                    for (int j = 0; j < n; j++) sym[b * n * n + i * n + j] = x[b * n * n + (i >= j ? i * n + j : j * n + i)];
            }
            check_values(what, wv, ref, batch * n);
            check_product(what, vv, wv, vv, 1, sym, batch, n, n, n); /* V diag(w) V^T = the symmetric a */
            transpose_blocks(vv, vt, batch, n, n);
            check_product(what, vt, NULL, vv, 0, NULL, batch, n, n, n); /* V^T V = I */
            wgt_tensor *w2 = wgt_linalg_eigvalsh(a);
            if (has_shape("eigvalsh", w2, nd - 1, sw)) {
                double *g = test_read_f64(w2);
                check_values("eigvalsh", g, ref, batch * n);
                free(g);
            }
            wgt_release(w2);
            free(x), free(wv), free(vv), free(ref), free(sym), free(vt);
        }
        wgt_release(w), wgt_release(v), wgt_release(a);
    }
    /* A NaN in the upper triangle is never read; in the lower triangle it is an error naming
     * the matrix (LAPACK's answer would be meaningless). */
    float vals[2][4] = {{2, NAN, 1, 3}, {1, 0, NAN, 1}};
    int64_t s22[3] = {2, 2, 2}, s2[2] = {2, 2};
    wgt_tensor *one = from_floats(ctx, 2, s2, vals[0]), *two = from_floats(ctx, 3, s22, vals[0]);
    wgt_tensor *w = wgt_linalg_eigvalsh(one);
    if (has_shape("eigvalsh NaN upper", w, 1, s2)) {
        double *g = test_read_f64(w), want[2] = {2.5 - sqrt(1.25), 2.5 + sqrt(1.25)};
        check_values("eigvalsh NaN upper", g, want, 2);
        free(g);
    }
    wgt_release(w);
    CHECK_ERROR(!wgt_linalg_eigvalsh(two), WGT_ERR_INVALID_ARGUMENT, "matrix 1 of the batch");
    wgt_release(one), wgt_release(two);
}

TEST_BACKENDS(linalg_slogdet_matches_reference) {
    static const mcase cases[] = {{3, {3, 5, 5}, 0}, {2, {7, 7}, 1}, {4, {2, 1, 3, 3}, 1}, {2, {1, 1}, 0}, {3, {0, 3, 3}, 0}, {2, {0, 0}, 0}};
    for (int c = 0; c < (int)(sizeof cases / sizeof cases[0]); c++) {
        const mcase *mc = &cases[c];
        int nd = mc->nd, n = (int)mc->shape[nd - 1];
        int64_t batch = batch_of(mc);
        wgt_tensor *a = random_matrices(ctx, nd, mc->shape, 400 + (uint64_t)c, mc->transposed), *sg = NULL, *la = NULL;
        CHECK(wgt_linalg_slogdet(a, &sg, &la) == WGT_OK, "slogdet case %d: %s", c, wgt_last_error());
        if (has_shape("slogdet sign", sg, nd - 2, mc->shape) && has_shape("slogdet log", la, nd - 2, mc->shape)) {
            double *x = test_read_f64(a), *gs = test_read_f64(sg), *gl = test_read_f64(la);
            for (int64_t b = 0; b < batch; b++) {
                double s, l;
                ref_slogdet(x + b * n * n, n, &s, &l);
                CHECK(gs[b] == s && fabs(gl[b] - l) <= U32 * fabs(l) + 1e-12, "slogdet case %d matrix %lld: (%g, %.9g), wanted (%g, %.9g)",
                      c, (long long)b, gs[b], gl[b], s, l);
            }
            free(x), free(gs), free(gl);
        }
        wgt_release(sg), wgt_release(la), wgt_release(a);
    }
    /* det would overflow f32 (1e60) and the singular matrix has no log: -inf with sign 0. */
    float big[2][9] = {{1e20f, 0, 0, 0, -1e20f, 0, 0, 0, 1e20f}, {1, 2, 3, 2, 4, 6, 0, 1, 1}};
    int64_t s233[3] = {2, 3, 3};
    wgt_tensor *b = from_floats(ctx, 3, s233, big[0]), *sg = NULL, *la = NULL;
    CHECK(wgt_linalg_slogdet(b, &sg, &la) == WGT_OK, "%s", wgt_last_error());
    if (sg && la) {
        double *gs = test_read_f64(sg), *gl = test_read_f64(la), want = 3 * log(1e20f);
        CHECK(gs[0] == -1 && fabs(gl[0] - want) <= U32 * want, "slogdet of 1e60: (%g, %.9g)", gs[0], gl[0]);
        CHECK(gs[1] == 0 && gl[1] == -INFINITY, "slogdet of a singular matrix: (%g, %g)", gs[1], gl[1]);
        free(gs), free(gl);
    }
    wgt_release(sg), wgt_release(la), wgt_release(b);
}

TEST_BACKENDS(linalg_pinv_and_matrix_rank_match_reference) {
    /* Full rank (tall, wide, strided, batched) and exact integer products of rank 2, whose
     * other singular values are 0 up to double rounding. */
    static const mcase cases[] = {{2, {6, 4}, 0}, {2, {3, 5}, 1}, {3, {2, 4, 4}, 0}, {3, {0, 3, 2}, 0}, {2, {3, 0}, 0}};
    for (int c = 0; c < 7; c++) {
        int lowrank = c >= 5;
        mcase lr = {3, {2, lowrank && c == 5 ? 5 : 4, lowrank && c == 5 ? 4 : 6}, 0};
        const mcase *mc = lowrank ? &lr : &cases[c];
        int nd = mc->nd, m = (int)mc->shape[nd - 2], n = (int)mc->shape[nd - 1], k = m < n ? m : n;
        int64_t batch = batch_of(mc), sp[4];
        wgt_tensor *a;
        if (lowrank) {
            float *f = malloc(sizeof(float) * (size_t)(batch * m * n));
            uint64_t seed = 500 + (uint64_t)c;
            for (int64_t b = 0; b < batch; b++) {
                int bm[12], cm[12];
                for (int i = 0; i < 2 * m; i++) bm[i] = (int)(next_u64(&seed) % 7) - 3;
                for (int i = 0; i < 2 * n; i++) cm[i] = (int)(next_u64(&seed) % 7) - 3;
                bm[0] = cm[0] = 3, bm[3] = cm[n + 1] = 2, bm[1] = bm[2] = cm[1] = cm[n] = 0; /* rank exactly 2 */
                for (int i = 0; i < m; i++)
                    for (int j = 0; j < n; j++) f[b * m * n + i * n + j] = (float)(bm[i * 2] * cm[j] + bm[i * 2 + 1] * cm[n + j]);
            }
            a = from_floats(ctx, nd, mc->shape, f);
            free(f);
        } else {
            a = random_matrices(ctx, nd, mc->shape, 500 + (uint64_t)c, mc->transposed);
        }
        memcpy(sp, mc->shape, sizeof sp);
        sp[nd - 2] = n, sp[nd - 1] = m;
        char what[64];
        snprintf(what, sizeof what, "pinv case %d", c);
        wgt_tensor *p = wgt_linalg_pinv(a, -1), *r = wgt_linalg_matrix_rank(a, -1);
        if (has_shape(what, p, nd, sp) && has_shape("matrix_rank", r, nd - 2, mc->shape)) {
            CHECK(wgt_tensor_dtype(r) == WGT_I32, "matrix_rank is not i32");
            double *x = test_read_f64(a), *pv = test_read_f64(p), *rv = test_read_f64(r);
            double *ref = malloc(sizeof(double) * (size_t)(batch * n * m + 1)), s[8];
            double rtol = (m > n ? m : n) * 1.1920928955078125e-7;
            for (int64_t b = 0; b < batch; b++) {
                ref_svd(x + b * m * n, m, n, s, ref + b * n * m, rtol);
                int rank = 0;
                for (int l = 0; l < k; l++) rank += s[l] > rtol * s[0];
                CHECK(rv[b] == rank && (!lowrank || rank == 2), "%s: rank %g, wanted %d", what, rv[b], rank);
            }
            double big = 0;
            for (int64_t i = 0; i < batch * n * m; i++) big = fmax(big, fabs(ref[i]));
            for (int64_t i = 0, bad = 0; i < batch * n * m && bad < 3; i++)
                if (!(fabs(pv[i] - ref[i]) <= U32 * fabs(ref[i]) + 1e-9 * big) && bad++ < 3)
                    CHECK(0, "%s: element %lld is %.9g, wanted %.9g", what, (long long)i, pv[i], ref[i]);
            free(x), free(pv), free(rv), free(ref);
        }
        wgt_release(p), wgt_release(r), wgt_release(a);
    }
    /* rtol's cut is inclusive: with singular values 4, 2, 1 and rtol 0.5 only 4 is kept. */
    float d[9] = {0, 0, 1, 0, -2, 0, 4, 0, 0};
    int64_t s33[2] = {3, 3};
    wgt_tensor *a = from_floats(ctx, 2, s33, d), *p = wgt_linalg_pinv(a, 0.5), *r = wgt_linalg_matrix_rank(a, 0.5);
    if (has_shape("pinv rtol", p, 2, s33) && r) {
        double *pv = test_read_f64(p), *rv = test_read_f64(r), want[9] = {0, 0, 0.25, 0, 0, 0, 0, 0, 0};
        for (int i = 0; i < 9; i++) CHECK(pv[i] == want[i], "pinv rtol: element %d is %g, wanted %g", i, pv[i], want[i]);
        CHECK(rv[0] == 1, "matrix_rank rtol 0.5: %g", rv[0]);
        free(pv), free(rv);
    }
    wgt_release(p), wgt_release(r);
    CHECK_ERROR(!wgt_linalg_pinv(a, NAN), WGT_ERR_INVALID_ARGUMENT, "rtol");
    wgt_release(a);
}

TEST_BACKENDS(linalg_decomp_errors) {
    int64_t s3[1] = {3}, s23[2] = {2, 3}, s22[3] = {2, 2, 2};
    wgt_tensor *v = wgt_zeros(ctx, WGT_F32, 1, s3), *h = wgt_zeros(ctx, WGT_I32, 2, s23), *r = wgt_zeros(ctx, WGT_F32, 2, s23);
    wgt_tensor *x = NULL, *y = NULL, *z = NULL;
    CHECK_ERROR(wgt_linalg_qr(v, 0, &x, &y) != WGT_OK && !x && !y, WGT_ERR_SHAPE, "[3]");
    CHECK_ERROR(wgt_linalg_qr(h, 0, &x, &y) != WGT_OK, WGT_ERR_DTYPE, "i32");
    CHECK_ERROR(wgt_linalg_qr(r, 0, NULL, &y) != WGT_OK, WGT_ERR_INVALID_ARGUMENT, "NULL");
    CHECK_ERROR(wgt_linalg_svd(v, 1, &x, &y, &z) != WGT_OK && !x && !y && !z, WGT_ERR_SHAPE, "[3]");
    CHECK_ERROR(wgt_linalg_slogdet(r, &x, &y) != WGT_OK, WGT_ERR_SHAPE, "square");
    CHECK_ERROR(wgt_linalg_eigh(r, &x, &y) != WGT_OK, WGT_ERR_SHAPE, "square");
    CHECK_ERROR(!wgt_linalg_eigvalsh(h), WGT_ERR_DTYPE, "i32");
    CHECK_ERROR(!wgt_linalg_svdvals(NULL), WGT_ERR_INVALID_ARGUMENT, "wgt_linalg_svdvals");
    CHECK_ERROR(!wgt_linalg_matrix_rank(v, -1), WGT_ERR_SHAPE, "[3]");
    /* A non-finite value: svd names the matrix rather than answer with garbage. */
    float vals[8] = {1, 2, 3, 4, 1, INFINITY, 0, 1};
    wgt_tensor *bad = from_floats(ctx, 3, s22, vals);
    CHECK_ERROR(wgt_linalg_svd(bad, 0, &x, &y, &z) != WGT_OK && !x, WGT_ERR_INVALID_ARGUMENT, "matrix 1 of the batch");
    CHECK_ERROR(!wgt_linalg_matrix_norm(bad, "2", 0), WGT_ERR_INVALID_ARGUMENT, "matrix 1 of the batch");
    CHECK_ERROR(!wgt_linalg_matrix_norm(r, "-3", 0), WGT_ERR_INVALID_ARGUMENT, "-3");
    int64_t s03[2] = {0, 3};
    wgt_tensor *e = wgt_zeros(ctx, WGT_F32, 2, s03);
    CHECK_ERROR(!wgt_linalg_matrix_norm(e, "-2", 0), WGT_ERR_SHAPE, "empty");
    wgt_tensor *nuc = wgt_linalg_matrix_norm(e, "nuc", 0);
    if (has_shape("nuc of an empty matrix", nuc, 0, NULL)) {
        double *g = test_read_f64(nuc);
        CHECK(g[0] == 0, "nuc of an empty matrix: %g", g[0]);
        free(g);
    }
    wgt_release(nuc), wgt_release(e), wgt_release(bad), wgt_release(v), wgt_release(h), wgt_release(r);
}

/* f16 operands are read exactly as f32 and computed the same way, so every result is the f32
 * op's on the same values, rounded to f16 (the comparison is exact). */
static void same_as_f32(const char *what, wgt_tensor *h, wgt_tensor *f) {
    CHECK(h && f, "%s: %s", what, wgt_last_error());
    if (!h || !f) return;
    CHECK(wgt_tensor_dtype(h) == WGT_F16, "%s: result is not f16", what);
    wgt_tensor *fh = wgt_cast(f, WGT_F16);
    double *x = test_read_f64(h), *y = test_read_f64(fh);
    int64_t count = numel_of(wgt_tensor_ndim(h), wgt_tensor_shape(h));
    for (int64_t i = 0, bad = 0; i < count && bad < 3; i++)
        if (x[i] != y[i] && bad++ < 3) CHECK(0, "%s: element %lld is %g, the f32 op's rounds to %g", what, (long long)i, x[i], y[i]);
    free(x), free(y);
    wgt_release(fh);
}

TEST_BACKENDS(linalg_f16_inputs_match_f32) {
    int64_t s3[3] = {2, 3, 3}, s32[3] = {2, 3, 2};
    wgt_tensor *f = random_matrices(ctx, 3, s3, 600, 1), *h = wgt_cast(f, WGT_F16), *f2 = wgt_cast(h, WGT_F32);
    wgt_tensor *bf = random_matrices(ctx, 3, s32, 601, 0), *bh = wgt_cast(bf, WGT_F16), *b2 = wgt_cast(bh, WGT_F32);
    /* f2, b2: the f16 values in f32, which the f16 path computes with */
    same_as_f32("inv", wgt_linalg_inv(h), wgt_linalg_inv(f2));
    same_as_f32("det", wgt_linalg_det(h), wgt_linalg_det(f2));
    same_as_f32("solve", wgt_linalg_solve(h, bh), wgt_linalg_solve(f2, b2));
    same_as_f32("svdvals", wgt_linalg_svdvals(h), wgt_linalg_svdvals(f2));
    same_as_f32("eigvalsh", wgt_linalg_eigvalsh(h), wgt_linalg_eigvalsh(f2));
    same_as_f32("pinv", wgt_linalg_pinv(h, -1), wgt_linalg_pinv(f2, -1));
    wgt_tensor *q[2] = {0}, *r[2] = {0};
    CHECK(wgt_linalg_qr(h, 0, &q[0], &r[0]) == WGT_OK && wgt_linalg_qr(f2, 0, &q[1], &r[1]) == WGT_OK, "%s", wgt_last_error());
    same_as_f32("qr Q", q[0], q[1]);
    same_as_f32("qr R", r[0], r[1]);
    wgt_tensor *rk = wgt_linalg_matrix_rank(h, -1);
    CHECK(rk && wgt_tensor_dtype(rk) == WGT_I32, "matrix_rank of f16: %s", wgt_last_error());
    CHECK_ERROR(!wgt_linalg_solve(h, bf), WGT_ERR_DTYPE, "operand types differ");
    for (int i = 0; i < 2; i++) wgt_release(q[i]), wgt_release(r[i]);
    wgt_release(rk), wgt_release(f), wgt_release(h), wgt_release(f2), wgt_release(bf), wgt_release(bh), wgt_release(b2);
}
