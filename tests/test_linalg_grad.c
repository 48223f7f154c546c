/*
 * Gradient checks (gradcheck.h) of the dense factorizations and cross on both backends, against
 * float64 finite differences: inv, solve (a batch, one vector against a batch, a broadcast
 * batch), det and log|det| (positive and negative determinants), cholesky (lower and upper;
 * the input is not symmetric, and only its lower triangle may receive a gradient, since only it
 * is read), qr (Q, R and both at once, m >= n), eigh (eigenvalues, and eigenvectors squared so
 * that their free signs do not matter; the lower triangle again), svd (U diag(S) Vh, U and Vh
 * squared for the same reason, S; tall, wide and square, where the terms of U or Vh not being
 * square come in) and cross with broadcasting. Matrices are shifted by a multiple of the identity so
 * that they stay well conditioned (and, for cholesky, positive definite) under the steps.
 */
#include "gradcheck.h"

#define V2(a, b) 2, {a, b}
#define V3(a, b, c) 3, {a, b, c}

/* x + s I (x [..., n, n]); the identity is a constant of x's context. */
static wgt_tensor *shifted(wgt_tensor *x, float s) {
    int nd = wgt_tensor_ndim(x);
    int64_t n = wgt_tensor_shape(x)[nd - 1], sq[2] = {n, n};
    float e[64] = {0};
    for (int64_t i = 0; i < n; i++) e[i * n + i] = s;
    wgt_tensor *eye = wgt_tensor_from_data(wgt_tensor_context(x), WGT_F32, 2, sq, e, sizeof(float) * (size_t)(n * n), WGT_USAGE_DEFAULT);
    wgt_tensor *r = wgt_add(x, eye);
    wgt_release(eye);
    return r;
}

/* fn applied to x[0] shifted by s I. */
static wgt_tensor *on_shifted(wgt_tensor *const *x, float s, wgt_tensor *(*fn)(wgt_tensor *)) {
    wgt_tensor *a = shifted(x[0], s), *r = a ? fn(a) : NULL;
    wgt_release(a);
    return r;
}

static wgt_tensor *chol_upper(wgt_tensor *a) { return wgt_linalg_cholesky(a, 1); }
static wgt_tensor *chol_lower(wgt_tensor *a) { return wgt_linalg_cholesky(a, 0); }
static wgt_tensor *logabsdet(wgt_tensor *a) {
    wgt_tensor *s = NULL, *l = NULL;
    if (wgt_linalg_slogdet(a, &s, &l) != WGT_OK) return NULL;
    wgt_release(s);
    return l;
}

static wgt_tensor *f_inv(wgt_tensor *const *x) { return on_shifted(x, 4, wgt_linalg_inv); }
static wgt_tensor *f_det(wgt_tensor *const *x) { return on_shifted(x, 4, wgt_linalg_det); }
static wgt_tensor *f_det_negative(wgt_tensor *const *x) { return on_shifted(x, -4, wgt_linalg_det); }
static wgt_tensor *f_logabsdet(wgt_tensor *const *x) { return on_shifted(x, 4, logabsdet); }
static wgt_tensor *f_logabsdet_negative(wgt_tensor *const *x) { return on_shifted(x, -4, logabsdet); }
static wgt_tensor *f_chol(wgt_tensor *const *x) { return on_shifted(x, 4, chol_lower); }
static wgt_tensor *f_chol_upper(wgt_tensor *const *x) { return on_shifted(x, 4, chol_upper); }
static wgt_tensor *f_solve(wgt_tensor *const *x) {
    wgt_tensor *a = shifted(x[0], 4), *r = a ? wgt_linalg_solve(a, x[1]) : NULL;
    wgt_release(a);
    return r;
}
/* One result of a decomposition of x[0]; eigenvectors squared, which no choice of sign changes. */
static wgt_tensor *qr_part(wgt_tensor *const *x, int which) {
    wgt_tensor *q = NULL, *r = NULL;
    if (wgt_linalg_qr(x[0], 0, &q, &r) != WGT_OK) return NULL;
    wgt_release(which ? q : r);
    return which ? r : q;
}
static wgt_tensor *f_qr_q(wgt_tensor *const *x) { return qr_part(x, 0); }
static wgt_tensor *f_qr_r(wgt_tensor *const *x) { return qr_part(x, 1); }
static wgt_tensor *f_qr_both(wgt_tensor *const *x) { /* Q^T + R: both nodes at once (square) */
    wgt_tensor *q = NULL, *r = NULL;
    if (wgt_linalg_qr(x[0], 0, &q, &r) != WGT_OK) return NULL;
    wgt_tensor *qt = wgt_transpose(q, -1, -2), *s = wgt_add(qt, r);
    wgt_release(q), wgt_release(r), wgt_release(qt);
    return s;
}
static wgt_tensor *eigh_part(wgt_tensor *const *x, int which) {
    wgt_tensor *w = NULL, *v = NULL;
    if (wgt_linalg_eigh(x[0], &w, &v) != WGT_OK) return NULL;
    wgt_release(which ? w : v);
    if (!which) return w;
    wgt_tensor *sq = wgt_square(v);
    wgt_release(v);
    return sq;
}
static wgt_tensor *f_eigh_w(wgt_tensor *const *x) { return eigh_part(x, 0); }
static wgt_tensor *f_eigh_v(wgt_tensor *const *x) { return eigh_part(x, 1); }

/* svd results: U diag(S) Vh (all three nodes, the gradient that of the identity), U or Vh
 * squared (no choice of the pairs' signs changes them), or S. */
static wgt_tensor *svd_part(wgt_tensor *const *x, int which) {
    wgt_tensor *u = NULL, *s = NULL, *vh = NULL, *r = NULL;
    if (wgt_linalg_svd(x[0], 0, &u, &s, &vh) != WGT_OK) return NULL;
    if (which == 0) {
        int nd = wgt_tensor_ndim(s);
        int64_t shape[4];
        for (int d = 0; d < nd - 1; d++) shape[d] = wgt_tensor_shape(s)[d];
        shape[nd - 1] = 1, shape[nd] = wgt_tensor_shape(s)[nd - 1];
        wgt_tensor *row = wgt_reshape(s, nd + 1, shape), *us = row ? wgt_mul(u, row) : NULL;
        r = us ? wgt_matmul(us, vh) : NULL;
        wgt_release(row), wgt_release(us);
    } else if (which == 1) {
        r = wgt_square(u);
    } else if (which == 2) {
        r = wgt_retain(s);
    } else {
        r = wgt_square(vh);
    }
    wgt_release(u), wgt_release(s), wgt_release(vh);
    return r;
}
static wgt_tensor *f_svd_usv(wgt_tensor *const *x) { return svd_part(x, 0); }
static wgt_tensor *f_svd_u(wgt_tensor *const *x) { return svd_part(x, 1); }
static wgt_tensor *f_svd_s(wgt_tensor *const *x) { return svd_part(x, 2); }
static wgt_tensor *f_svd_vh(wgt_tensor *const *x) { return svd_part(x, 3); }

static wgt_tensor *f_cross(wgt_tensor *const *x) { return wgt_linalg_cross(x[0], x[1], -1); }
static wgt_tensor *f_cross0(wgt_tensor *const *x) { return wgt_linalg_cross(x[0], x[1], 0); }

TEST_BACKENDS(autograd_grad_linalg) {
    const gc_case cases[] = {
        {"inv", f_inv, 1, {{V3(2, 3, 3), -1, 1, GC_TRANSPOSED}}},
        {"solve", f_solve, 2, {{V3(2, 3, 3), -1, 1, GC_PLAIN}, {V3(2, 3, 2), -1, 1, GC_TRANSPOSED}}},
        {"solve one vector", f_solve, 2, {{V3(2, 3, 3), -1, 1, GC_TRANSPOSED}, {1, {3}, -1, 1, GC_STEPPED}}},
        {"solve broadcast a", f_solve, 2, {{V2(3, 3), -1, 1, GC_PLAIN}, {V3(2, 3, 2), -1, 1, GC_PLAIN}}},
        {"solve a constant", f_solve, 2, {{V2(3, 3), -1, 1, GC_CONST}, {V2(3, 2), -1, 1, GC_PLAIN}}},
        {"det", f_det, 1, {{V3(2, 3, 3), -1, 1, GC_TRANSPOSED}}},
        {"det negative", f_det_negative, 1, {{V2(3, 3), -1, 1, GC_PLAIN}}},
        {"slogdet", f_logabsdet, 1, {{V3(2, 3, 3), -1, 1, GC_STEPPED}}},
        {"slogdet negative", f_logabsdet_negative, 1, {{V2(3, 3), -1, 1, GC_TRANSPOSED}}},
        {"cholesky", f_chol, 1, {{V3(2, 3, 3), -1, 1, GC_PLAIN}}},
        {"cholesky upper", f_chol_upper, 1, {{V2(4, 4), -1, 1, GC_TRANSPOSED}}},
        {"qr Q", f_qr_q, 1, {{V3(2, 4, 3), -1, 1, GC_TRANSPOSED}}},
        {"qr R", f_qr_r, 1, {{V2(5, 3), -1, 1, GC_PLAIN}}},
        {"qr square, both", f_qr_both, 1, {{V2(3, 3), -1, 1, GC_STEPPED}}},
        {"eigh eigenvalues", f_eigh_w, 1, {{V3(2, 3, 3), -1, 1, GC_PLAIN}}},
        {"eigh eigenvectors", f_eigh_v, 1, {{V2(4, 4), -1, 1, GC_TRANSPOSED}}},
        {"svd U S Vh tall", f_svd_usv, 1, {{V2(4, 3), -1, 1, GC_PLAIN}}},
        {"svd U S Vh wide, batch", f_svd_usv, 1, {{V3(2, 3, 5), -1, 1, GC_TRANSPOSED}}},
        {"svd U squared tall", f_svd_u, 1, {{V2(5, 3), -1, 1, GC_PLAIN}}},
        {"svd U squared wide", f_svd_u, 1, {{V2(3, 4), -1, 1, GC_STEPPED}}},
        {"svd S", f_svd_s, 1, {{V3(2, 4, 3), -1, 1, GC_PLAIN}}},
        {"svd Vh squared wide", f_svd_vh, 1, {{V2(3, 5), -1, 1, GC_TRANSPOSED}}},
        {"svd Vh squared square", f_svd_vh, 1, {{V3(2, 3, 3), -1, 1, GC_PLAIN}}},
        {"cross broadcast", f_cross, 2, {{V2(4, 3), -2, 2, GC_PLAIN}, {1, {3}, -2, 2, GC_PLAIN}}},
        {"cross axis 0", f_cross0, 2, {{V2(3, 4), -2, 2, GC_TRANSPOSED}, {V2(3, 4), -2, 2, GC_STEPPED}}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) gradcheck(ctx, &cases[i]);
}

/* The results without a gradient say so when a backward pass reaches them. */
TEST_BACKENDS(autograd_grad_linalg_untracked) {
    int64_t s[2] = {3, 2};
    float v[6] = {2, 1, 1, 3, 0, 1};
    wgt_tensor *a = wgt_tensor_from_data(ctx, WGT_F32, 2, s, v, sizeof v, WGT_USAGE_DEFAULT), *q = NULL, *r = NULL, *u = NULL,
               *sv = NULL, *vh = NULL;
    CHECK(wgt_requires_grad(a, 1) == WGT_OK, "%s", wgt_last_error());
    CHECK(wgt_linalg_qr(a, 1, &q, &r) == WGT_OK, "%s", wgt_last_error());
    wgt_tensor *sum = r ? wgt_sum(r, 0, NULL, 0) : NULL;
    CHECK_ERROR(sum && wgt_backward(sum, NULL) != WGT_OK, WGT_ERR_USAGE, "m >= n in reduced mode");
    wgt_release(sum);
    CHECK(wgt_linalg_svd(a, 1, &u, &sv, &vh) == WGT_OK, "%s", wgt_last_error());
    sum = u ? wgt_sum(u, 0, NULL, 0) : NULL;
    CHECK_ERROR(sum && wgt_backward(sum, NULL) != WGT_OK, WGT_ERR_USAGE, "full_matrices = 0 only");
    wgt_release(sum), wgt_release(q), wgt_release(r), wgt_release(u), wgt_release(sv), wgt_release(vh), wgt_release(a);
}
