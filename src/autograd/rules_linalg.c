/*
 * Gradient rules of the dense factorizations (inv, solve, det, slogdet, cholesky) and of cross.
 * The factorizations run eagerly on the host, but their gradients are ordinary expressions of
 * matmul, transpose and the same host inverse or solve, so they run wherever the forward did.
 * With Y = inv(A): dA = -Y^T g Y^T. With X = solve(A, B): dB = solve(A^T, g), dA = -dB X^T,
 * summed back over broadcast batches. det: dA = g det(A) inv(A)^T; log|det|: dA = g inv(A)^T
 * (both need A invertible: a singular A fails the backward pass naming inv). cholesky reads
 * A's lower triangle only, so its gradient is that of the lower triangle: with L L^T = A and
 * Phi(X) = the lower triangle of X with its diagonal halved, S = L^-T Phi(L^T dL) L^-1 is the
 * symmetric gradient, and the strictly lower elements take S + S^T, the diagonal S, the upper
 * triangle nothing: Phi(S + S^T).
 */
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
    gin[0] = times_inv_t(ar, A(n), g, NULL);
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

wgt_tensor *wgt_ag_slogdet_rule(wgt_tensor *logabsdet, wgt_tensor *a) {
    WGT_AG_BEGIN(n, "wgt_linalg_slogdet", logabsdet, bw_logabsdet, a)
    wgt_ag_save(n, 0, a);
    return wgt_ag_attach(logabsdet, n);
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
