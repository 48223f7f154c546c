/*
 * Gradient rules of the dense factorizations (inv, solve, det, slogdet, cholesky, qr, eigh,
 * eigvalsh, svd, svdvals, pinv), of matrix_power and of cross.
 * The factorizations run eagerly on the host, but their gradients are ordinary expressions of
 * matmul, transpose and the same host inverse or solve, so they run wherever the forward did.
 * With Y = inv(A): dA = -Y^T g Y^T. With X = solve(A, B): dB = solve(A^T, g), dA = -dB X^T,
 * summed back over broadcast batches. det: dA = g det(A) inv(A)^T; log|det|: dA = g inv(A)^T
 * (both need A invertible: a singular A fails the backward pass naming inv). cholesky reads
 * A's lower triangle only, so its gradient is that of the lower triangle: with L L^T = A and
 * Phi(X) = the lower triangle of X with its diagonal halved, S = L^-T Phi(L^T dL) L^-1 is the
 * symmetric gradient, and the strictly lower elements take S + S^T, the diagonal S, the upper
 * triangle nothing: Phi(S + S^T). The decompositions with several results (qr, slogdet, eigh,
 * svd) come through wgt_ag_decomp_rule, one node per result: their gradients are linear in the
 * results' gradients, so each node adds its own share.
 */
#include <stdlib.h>
#include <string.h>

#include "autograd.h"

#define A(n) ((n)->saved[0])
#define B(n) ((n)->saved[1])
#define Y(n) ((n)->saved[2])

static wgt_tensor *mt(wgt_ag_arena *ar, wgt_tensor *t) { return K(t ? wgt_transpose(t, -1, -2) : NULL); }
static wgt_tensor *mm(wgt_ag_arena *ar, wgt_tensor *x, wgt_tensor *y) { return K(x && y ? wgt_matmul(x, y) : NULL); }

/* t [...] as [..., 1, 1] (extra 2) or t [..., n] as [..., n, 1] (extra 1). */
static wgt_tensor *unsqueeze(wgt_ag_arena *ar, wgt_tensor *t, int extra) {
    if (!t) return NULL;
    int64_t shape[WGT_MAX_DIMS + 2];
    for (int d = 0; d < t->ndim; d++) shape[d] = t->shape[d];
    for (int d = 0; d < extra; d++) shape[t->ndim + d] = 1;
    return K(wgt_reshape(t, t->ndim + extra, shape));
}

/* The lower triangle of x with its diagonal halved. */
static wgt_tensor *phi(wgt_ag_arena *ar, wgt_tensor *x) {
    return K(wgt_mul_scalar(K(wgt_add(K(wgt_tril(x, 0)), K(wgt_tril(x, -1)))), 0.5));
}

/* t [..., n] as the row [..., 1, n]. */
static wgt_tensor *as_row(wgt_ag_arena *ar, wgt_tensor *t) {
    if (!t) return NULL;
    int64_t shape[WGT_MAX_DIMS + 1];
    for (int d = 0; d < t->ndim - 1; d++) shape[d] = t->shape[d];
    shape[t->ndim - 1] = 1, shape[t->ndim] = t->shape[t->ndim - 1];
    return K(wgt_reshape(t, t->ndim + 1, shape));
}

/* The n x n identity (off 0) or its complement (off 1), f32, on t's context. */
static wgt_tensor *eye(wgt_ag_arena *ar, wgt_tensor *t, int64_t n, int off) {
    float *f = calloc((size_t)(n > 0 ? n * n : 1), sizeof(float));
    if (!f) return wgt_error(WGT_ERR_OUT_OF_MEMORY, "wgt_backward: out of host memory for a %lld x %lld identity", (long long)n, (long long)n), NULL;
    for (int64_t i = 0; i < n * n; i++) f[i] = (i / n == i % n) != off;
    int64_t sq[2] = {n, n};
    wgt_tensor *e = K(wgt_tensor_from_data(t->storage->ctx, WGT_F32, 2, sq, f, sizeof(float) * (size_t)(n * n), WGT_USAGE_DEFAULT));
    free(f);
    return e;
}

static wgt_status bw_inv(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    wgt_tensor *yt = mt(ar, Y(n));
    gin[0] = K(wgt_neg(mm(ar, yt, mm(ar, g, yt))));
    return wgt_ag_done(n, gin, ar);
}

/* iv[0]: b was one vector [n] (seen as the column [n, 1] here). */
static wgt_status bw_solve(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    int vec = n->iv[0];
    wgt_tensor *gm = vec ? unsqueeze(ar, g, 1) : g, *x = vec ? unsqueeze(ar, Y(n), 1) : Y(n);
    wgt_tensor *gb = K(gm ? wgt_linalg_solve(mt(ar, A(n)), gm) : NULL);
    if (NEED(n, 0)) gin[0] = wgt_ag_sum_to(ar, K(gb ? wgt_neg(mm(ar, gb, mt(ar, x))) : NULL), &n->in[0]);
    if (NEED(n, 1) && gb) {
        int64_t shape[WGT_MAX_DIMS];
        for (int d = 0; d < g->ndim; d++) shape[d] = g->shape[d];
        gin[1] = wgt_ag_sum_to(ar, vec ? K(wgt_reshape(gb, g->ndim, shape)) : gb, &n->in[1]);
    }
    return wgt_ag_done(n, gin, ar);
}

/* g scaled per matrix (scale [...], or none) times inv(A)^T: the gradients of det and log|det|. */
static wgt_tensor *times_inv_t(wgt_ag_arena *ar, wgt_tensor *a, wgt_tensor *g, wgt_tensor *scale) {
    wgt_tensor *w = scale ? K(wgt_mul(g, scale)) : g;
    return K(wgt_mul(unsqueeze(ar, w, 2), mt(ar, K(wgt_linalg_inv(a)))));
}

static wgt_status bw_det(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    gin[0] = times_inv_t(ar, A(n), g, Y(n));
    return wgt_ag_done(n, gin, ar);
}

static wgt_status bw_logabsdet(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    gin[0] = times_inv_t(ar, n->saved[0], g, NULL);
    return wgt_ag_done(n, gin, ar);
}

/* iv[0]: upper (the result was U = L^T). */
static wgt_status bw_cholesky(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    int upper = n->iv[0];
    wgt_tensor *l = upper ? mt(ar, Y(n)) : Y(n), *gl = upper ? mt(ar, g) : g;
    wgt_tensor *li = K(wgt_linalg_inv(l));
    wgt_tensor *s = mm(ar, mt(ar, li), mm(ar, phi(ar, mm(ar, mt(ar, l), gl)), li));
    gin[0] = s ? phi(ar, K(wgt_add(s, mt(ar, s)))) : NULL;
    return wgt_ag_done(n, gin, ar);
}

/* iv[0]: the axis counted from the end (negative), which both operands and g have. */
static wgt_status bw_cross(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    int axis = n->iv[0];
    if (NEED(n, 0)) gin[0] = wgt_ag_sum_to(ar, K(wgt_linalg_cross(B(n), g, axis)), &n->in[0]);
    if (NEED(n, 1)) gin[1] = wgt_ag_sum_to(ar, K(wgt_linalg_cross(g, A(n), axis)), &n->in[1]);
    return wgt_ag_done(n, gin, ar);
}

wgt_tensor *wgt_ag_rule_linalg_inv(wgt_tensor *out, wgt_tensor *a) {
    WGT_AG_BEGIN(n, "wgt_linalg_inv", out, bw_inv, a)
    wgt_ag_save(n, 2, out);
    return wgt_ag_attach(out, n);
}

wgt_tensor *wgt_ag_rule_linalg_solve(wgt_tensor *out, wgt_tensor *a, wgt_tensor *b) {
    WGT_AG_BEGIN(n, "wgt_linalg_solve", out, bw_solve, a, b)
    n->iv[0] = b->ndim == 1;
    wgt_ag_save(n, 0, a);
    wgt_ag_save(n, 2, out);
    return wgt_ag_attach(out, n);
}

wgt_tensor *wgt_ag_rule_linalg_det(wgt_tensor *out, wgt_tensor *a) {
    WGT_AG_BEGIN(n, "wgt_linalg_det", out, bw_det, a)
    wgt_ag_save(n, 0, a);
    wgt_ag_save(n, 2, out);
    return wgt_ag_attach(out, n);
}

wgt_tensor *wgt_ag_rule_linalg_cholesky(wgt_tensor *out, wgt_tensor *a, int upper) {
    WGT_AG_BEGIN(n, "wgt_linalg_cholesky", out, bw_cholesky, a)
    n->iv[0] = upper != 0;
    wgt_ag_save(n, 2, out);
    return wgt_ag_attach(out, n);
}

wgt_tensor *wgt_ag_rule_linalg_cross(wgt_tensor *out, wgt_tensor *a, wgt_tensor *b, int axis) {
    WGT_AG_BEGIN(n, "wgt_linalg_cross", out, bw_cross, a, b)
    n->iv[0] = axis < 0 ? axis : axis - a->ndim;
    wgt_ag_save(n, 0, a);
    wgt_ag_save(n, 1, b);
    return wgt_ag_attach(out, n);
}

/* ---- the decompositions with several results (src/core/api_linalg.c) ---- */

/* qr, m >= n, reduced (Q [m, n], R [n, n] invertible): with M = R gR^T - gQ^T Q and C its
 * lower triangle mirrored (the symmetric matrix it determines), dA = (gQ + Q C) R^-T. Each of
 * Q and R has its own node, with the terms of its own gradient: the sum is the whole. */
static wgt_tensor *qr_grad(wgt_ag_node *n, wgt_ag_arena *ar, wgt_tensor *gq, wgt_tensor *m) {
    wgt_tensor *q = n->saved[0], *r = n->saved[1];
    wgt_tensor *c = K(wgt_add(K(wgt_tril(m, 0)), mt(ar, K(wgt_tril(m, -1)))));
    wgt_tensor *lhs = gq ? K(wgt_add(gq, mm(ar, q, c))) : mm(ar, q, c);
    return mm(ar, lhs, mt(ar, K(wgt_linalg_inv(r))));
}
static wgt_status bw_qr_q(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    gin[0] = qr_grad(n, ar, g, K(wgt_neg(mm(ar, mt(ar, g), n->saved[0]))));
    return wgt_ag_done(n, gin, ar);
}
static wgt_status bw_qr_r(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    gin[0] = qr_grad(n, ar, NULL, mm(ar, n->saved[1], mt(ar, g)));
    return wgt_ag_done(n, gin, ar);
}

/* eigh of the symmetric matrix from a's lower triangle, A = V diag(w) V^T: the symmetric
 * gradient is G = V (diag(gw) + F o (V^T gV)) V^T with F[i][j] = 1 / (w[j] - w[i]) off the
 * diagonal (infinite where eigenvalues repeat, as any eigenvector gradient is), and a's lower
 * triangle receives Phi(G + G^T), as cholesky's. */
static wgt_status eigh_finish(wgt_ag_node *n, wgt_ag_arena *ar, wgt_tensor *v, wgt_tensor *inner, wgt_tensor **gin) {
    wgt_tensor *gs = mm(ar, v, mm(ar, inner, mt(ar, v)));
    gin[0] = gs ? phi(ar, K(wgt_add(gs, mt(ar, gs)))) : NULL;
    return wgt_ag_done(n, gin, ar);
}
static wgt_status bw_eigh_w(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    int64_t k = g->shape[g->ndim - 1];
    return eigh_finish(n, ar, n->saved[1], K(wgt_mul(as_row(ar, g), eye(ar, g, k, 0))), gin); /* diag(gw) */
}
static wgt_status bw_eigh_v(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    wgt_tensor *w = n->saved[0], *v = n->saved[1];
    int64_t k = w->shape[w->ndim - 1];
    wgt_tensor *e = K(wgt_sub(as_row(ar, w), unsqueeze(ar, w, 1))); /* w[j] - w[i] */
    /* The diagonal of e is 0: made 1 before the reciprocal, then masked out. */
    wgt_tensor *f = K(wgt_mul(K(wgt_reciprocal(K(wgt_add(e, eye(ar, g, k, 0))))), eye(ar, g, k, 1)));
    return eigh_finish(n, ar, v, K(wgt_mul(f, mm(ar, mt(ar, v), g))), gin);
}

/* svd, reduced: A = U diag(S) Vh, U [m, k], Vh [k, n], k = min(m, n). With F[i][j] =
 * 1 / (s_j^2 - s_i^2) off the diagonal (0 on it),
 *   dA = U [diag(gS) + (F o (U^T gU - gU^T U)) S + S (F o (Vh gVh^T - gVh Vh^T))] Vh
 *        + (I - U U^T) gU S^-1 Vh + U S^-1 gVh (I - Vh^T Vh),
 * the last two terms only where U or Vh is not square. Each result's node adds its own terms.
 * F is infinite where singular values repeat (and S^-1 where one is 0 and U or Vh is not
 * square): the singular vectors are not unique there, and the gradient is inf or NaN, as
 * in PyTorch; the loss must not depend on the choice of signs (u_i, v_i) -> (-u_i, -v_i)
 * either, which no gradient can see. */
static wgt_tensor *svd_f(wgt_ag_arena *ar, wgt_tensor *s) {
    int64_t k = s->shape[s->ndim - 1];
    wgt_tensor *s2 = K(wgt_square(s));
    wgt_tensor *e = K(wgt_sub(as_row(ar, s2), unsqueeze(ar, s2, 1))); /* s_j^2 - s_i^2 */
    /* The diagonal of e is 0: made 1 before the reciprocal, then masked out. */
    return K(wgt_mul(K(wgt_reciprocal(K(wgt_add(e, eye(ar, s, k, 0))))), eye(ar, s, k, 1)));
}
static wgt_status bw_svd_u(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    wgt_tensor *u = n->saved[0], *s = n->saved[1], *vh = n->saved[2];
    wgt_tensor *utg = mm(ar, mt(ar, u), g);
    wgt_tensor *j = K(wgt_mul(svd_f(ar, s), K(wgt_sub(utg, mt(ar, utg))))); /* U^T gU - gU^T U */
    wgt_tensor *inner = K(wgt_mul(j, as_row(ar, s)));                          /* J S */
    if (u->shape[u->ndim - 2] > u->shape[u->ndim - 1]) {                     /* (I - U U^T) gU S^-1 */
        wgt_tensor *rest = K(wgt_div(K(wgt_sub(g, mm(ar, u, utg))), as_row(ar, s)));
        gin[0] = mm(ar, K(wgt_add(mm(ar, u, inner), rest)), vh);
    } else {
        gin[0] = mm(ar, mm(ar, u, inner), vh);
    }
    return wgt_ag_done(n, gin, ar);
}
static wgt_status bw_svd_s(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    gin[0] = mm(ar, K(wgt_mul(n->saved[0], as_row(ar, g))), n->saved[2]);
    return wgt_ag_done(n, gin, ar);
}
static wgt_status bw_svd_vh(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    wgt_tensor *u = n->saved[0], *s = n->saved[1], *vh = n->saved[2];
    wgt_tensor *gvt = mm(ar, g, mt(ar, vh));                                   /* gVh Vh^T */
    wgt_tensor *kf = K(wgt_mul(svd_f(ar, s), K(wgt_sub(mt(ar, gvt), gvt))));  /* Vh gVh^T - gVh Vh^T */
    wgt_tensor *inner = mm(ar, K(wgt_mul(unsqueeze(ar, s, 1), kf)), vh);      /* S K Vh */
    if (vh->shape[vh->ndim - 1] > vh->shape[vh->ndim - 2])                   /* S^-1 gVh (I - Vh^T Vh) */
        inner = K(wgt_add(inner, K(wgt_div(K(wgt_sub(g, mm(ar, gvt, vh))), unsqueeze(ar, s, 1)))));
    gin[0] = mm(ar, u, inner);
    return wgt_ag_done(n, gin, ar);
}

/* A node for out with backward bw saving the first `saved` results, or (bw NULL) one saying
 * why not. */
static wgt_tensor *decomp_node(const char *fn, wgt_tensor *out, wgt_tensor *a, wgt_ag_backward_fn bw, wgt_tensor *const *results,
                               int saved, const char *why) {
    WGT_AG_BEGIN(n, fn, out, bw, a)
    n->why = why;
    for (int i = 0; bw && i < saved; i++)
        if (results[i]) wgt_ag_save(n, i, results[i]);
    return wgt_ag_attach(out, n);
}

wgt_tensor *wgt_ag_decomp_rule(const char *fn, int which, wgt_tensor *a, wgt_tensor *const *results) {
    wgt_tensor *out = results[which];
    if (!strcmp(fn, "wgt_linalg_slogdet")) { /* the sign is piecewise constant: a plain result */
        wgt_tensor *slot[2] = {a, NULL};
        return which == 0 ? out : decomp_node(fn, out, a, bw_logabsdet, slot, 2, NULL);
    }
    if (!strcmp(fn, "wgt_linalg_eigh")) return decomp_node(fn, out, a, which ? bw_eigh_v : bw_eigh_w, results, 2, NULL);
    if (!strcmp(fn, "wgt_linalg_svd")) {
        static const wgt_ag_backward_fn bw[3] = {bw_svd_u, bw_svd_s, bw_svd_vh};
        const wgt_tensor *u = results[0], *vh = results[2];
        int reduced = u->shape[u->ndim - 1] == vh->shape[vh->ndim - 2];
        if (reduced) return decomp_node(fn, out, a, bw[which], results, 3, NULL);
        return decomp_node(fn, out, a, NULL, results, 0, "its gradient is implemented for full_matrices = 0 only");
    }
    if (!strcmp(fn, "wgt_linalg_qr")) {
        const wgt_tensor *q = results[0];
        int64_t m = q->shape[q->ndim - 2], k = q->shape[q->ndim - 1], cols = results[1]->shape[q->ndim - 1];
        if (m >= cols && k == cols) return decomp_node(fn, out, a, which ? bw_qr_r : bw_qr_q, results, 2, NULL);
        return decomp_node(fn, out, a, NULL, results, 0, "its gradient is implemented for m >= n in reduced mode only");
    }
    return decomp_node(fn, out, a, NULL, results, 0, NULL);
}

/* eigvalsh: the eigenvalue part of eigh's rule, with the eigenvectors found again in the
 * backward pass (the forward keeps none). */
static wgt_status bw_eigvalsh(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    wgt_tensor *w = NULL, *v = NULL;
    wgt_status st = wgt_linalg_eigh(A(n), &w, &v);
    K(w), K(v);
    if (st != WGT_OK) return st;
    int64_t k = g->shape[g->ndim - 1];
    return eigh_finish(n, ar, v, K(wgt_mul(as_row(ar, g), eye(ar, g, k, 0))), gin);
}

wgt_tensor *wgt_ag_rule_linalg_eigvalsh(wgt_tensor *out, wgt_tensor *a) {
    WGT_AG_BEGIN(n, "wgt_linalg_eigvalsh", out, bw_eigvalsh, a)
    wgt_ag_save(n, 0, a);
    return wgt_ag_attach(out, n);
}

/* svdvals, A = U diag(S) Vh (reduced): dA = U diag(gS) Vh, which no choice of the singular
 * vectors' signs changes (distinct singular values assumed, as any such gradient does). */
static wgt_status bw_svdvals(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    wgt_tensor *u = NULL, *s = NULL, *vh = NULL;
    wgt_status st = wgt_linalg_svd(A(n), 0, &u, &s, &vh);
    K(u), K(s), K(vh);
    if (st != WGT_OK) return st;
    gin[0] = mm(ar, K(wgt_mul(u, as_row(ar, g))), vh);
    return wgt_ag_done(n, gin, ar);
}

wgt_tensor *wgt_ag_rule_linalg_svdvals(wgt_tensor *out, wgt_tensor *a) {
    WGT_AG_BEGIN(n, "wgt_linalg_svdvals", out, bw_svdvals, a)
    wgt_ag_save(n, 0, a);
    return wgt_ag_attach(out, n);
}

/* matrix_power: the forward's repeated squaring (src/core/linalg_compose.c) replayed, then
 * differentiated product by product (for C = X Y: dX = dC Y^T, dY = X^T dC), so a power n
 * costs O(log |n|) products both ways. A negative power is a power of B = inv(A), and
 * dA = -B^T dB B^T; the power 0 (the identity) has a zero gradient. */
static wgt_status bw_matrix_power(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    int64_t p = n->lv[0][0];
    wgt_tensor *a = A(n);
    if (p == 0) {
        gin[0] = K(wgt_zeros(a->storage->ctx, a->dtype, a->ndim, a->shape));
        return wgt_ag_done(n, gin, ar);
    }
    uint64_t k = p < 0 ? (uint64_t)0 - (uint64_t)p : (uint64_t)p;
    wgt_tensor *base[65] = {0}, *acc[65] = {0}, *gbase[65] = {0};
    int top = 0; /* base[i] = B^(2^i); acc[i]: the product before bit i's factor joined (NULL: none yet) */
    base[0] = p < 0 ? K(wgt_linalg_inv(a)) : a;
    wgt_tensor *cur = NULL;
    for (uint64_t r = k; base[top]; top++) {
        acc[top] = cur;
        if (r & 1) cur = cur ? mm(ar, cur, base[top]) : base[top];
        if (!(r >>= 1)) break;
        base[top + 1] = mm(ar, base[top], base[top]);
    }
    gin[0] = NULL;
    if (!base[top]) return wgt_ag_done(n, gin, ar);
    wgt_tensor *gcur = g; /* d loss / d the product so far; NULL below the lowest bit set */
    for (int i = top; i >= 0; i--) {
        if (i < top && gbase[i + 1]) { /* base[i + 1] = base[i] base[i] */
            wgt_tensor *t = K(wgt_add(mm(ar, gbase[i + 1], mt(ar, base[i])), mm(ar, mt(ar, base[i]), gbase[i + 1])));
            if (!(gbase[i] = gbase[i] ? K(wgt_add(gbase[i], t)) : t)) return wgt_ag_done(n, gin, ar);
        }
        if (!((k >> i) & 1) || !gcur) continue;
        wgt_tensor *gb = acc[i] ? mm(ar, mt(ar, acc[i]), gcur) : gcur; /* the product after bit i: acc[i] base[i] */
        if (!(gbase[i] = gbase[i] && gb ? K(wgt_add(gbase[i], gb)) : gb)) return wgt_ag_done(n, gin, ar);
        if (acc[i] && !(gcur = mm(ar, gcur, mt(ar, base[i])))) return wgt_ag_done(n, gin, ar);
        if (!acc[i]) gcur = NULL;
    }
    wgt_tensor *gb0 = gbase[0];
    gin[0] = p > 0 || !gb0 ? gb0 : K(wgt_neg(mm(ar, mt(ar, base[0]), mm(ar, gb0, mt(ar, base[0])))));
    return wgt_ag_done(n, gin, ar);
}

wgt_tensor *wgt_ag_rule_linalg_matrix_power(wgt_tensor *out, wgt_tensor *a, int64_t p) {
    WGT_AG_BEGIN(n, "wgt_linalg_matrix_power", out, bw_matrix_power, a)
    n->lv[0][0] = p;
    wgt_ag_save(n, 0, a);
    return wgt_ag_attach(out, n);
}

/* pinv, P = A+ (A [..., m, n]), where the rank is constant near A (no singular value at the
 * cut-off): dP = -P dA P + P P^T dA^T (I - A P) + (I - P A) dA^T P^T P (Golub and Pereyra),
 * so dA = -P^T G P^T + (I - A P) G^T P P^T + P^T P G^T (I - P A). */
static wgt_status bw_pinv(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    wgt_tensor *a = A(n), *p = Y(n), *pt = mt(ar, p), *gt = mt(ar, g);
    int64_t m = a->shape[a->ndim - 2], k = a->shape[a->ndim - 1];
    wgt_tensor *left = K(wgt_sub(eye(ar, a, m, 0), mm(ar, a, p)));  /* I - A P, m x m */
    wgt_tensor *right = K(wgt_sub(eye(ar, a, k, 0), mm(ar, p, a))); /* I - P A, n x n */
    wgt_tensor *t1 = mm(ar, mm(ar, pt, g), pt);
    wgt_tensor *t2 = mm(ar, mm(ar, left, gt), mm(ar, p, pt));
    wgt_tensor *t3 = mm(ar, mm(ar, mm(ar, pt, p), gt), right);
    gin[0] = t1 && t2 && t3 ? K(wgt_add(K(wgt_sub(t2, t1)), t3)) : NULL;
    return wgt_ag_done(n, gin, ar);
}

wgt_tensor *wgt_ag_rule_linalg_pinv(wgt_tensor *out, wgt_tensor *a, double rtol) {
    WGT_AG_BEGIN(n, "wgt_linalg_pinv", out, bw_pinv, a)
    wgt_ag_save(n, 0, a);
    wgt_ag_save(n, 2, out);
    return wgt_ag_attach(out, n);
}
