/*
 * Gradient rules of the norms (src/core/linalg_norm.c), computed in f32 as the norms are.
 * vector_norm, p finite and not 0: d|x|_p / dx = sign(x) |x|^(p-1) / |x|_p^(p-1) (x / |x| for
 * p = 2, sign(x) for p = 1), and 0 where the norm is 0 (as PyTorch); inf and -inf: the largest
 * (smallest) |x| takes the gradient with x's sign, shared among ties as max and min share it;
 * 0 counts nonzeros, a step function: zero. matrix_norm: "fro" is the vector 2-norm of the
 * matrix; "1", "-1", "inf", "-inf" are the largest or smallest sum of |a| over a column (row):
 * the elements of that column get sign(a), ties shared; "2", "-2" and "nuc" come from the
 * singular values (A = U diag(S) Vh): u1 v1^T for the largest, uk vk^T for the smallest, U Vh
 * for their sum, found again by wgt_linalg_svd in the backward pass.
 */
#include <math.h>
#include <string.h>

#include "autograd.h"

enum { N_VECTOR, N_COLS, N_SVD };

static wgt_tensor *f32(wgt_ag_arena *ar, wgt_tensor *t) { return t && t->dtype != WGT_F32 ? K(wgt_cast(t, WGT_F32)) : t; }

/* g and the norm y seen at x's shape. */
static wgt_tensor *up(wgt_ag_node *n, wgt_ag_arena *ar, wgt_tensor *t) {
    return t ? wgt_ag_unreduce(ar, t, n->in[0].ndim, n->in[0].shape, n->iv, n->iv[WGT_MAX_DIMS]) : NULL;
}

/* mask / (the number of ones in its group), over the axes flagged: ties share. */
static wgt_tensor *shared(wgt_ag_arena *ar, wgt_tensor *mask, const int *reduced, int ndim) {
    int axes[WGT_MAX_DIMS], k = 0;
    for (int d = 0; d < ndim; d++)
        if (reduced[d]) axes[k++] = d;
    wgt_tensor *m = K(wgt_cast(mask, WGT_F32));
    return K(wgt_div(m, K(wgt_sum(m, k, axes, 1))));
}

static wgt_tensor *vector_grad(wgt_ag_node *n, wgt_ag_arena *ar, wgt_tensor *x, wgt_tensor *g) {
    double p = n->p[0];
    if (p == 0) return K(wgt_zeros(x->storage->ctx, WGT_F32, x->ndim, x->shape));
    wgt_tensor *y = up(n, ar, f32(ar, n->saved[1])), *gy = up(n, ar, g), *sx = K(wgt_sign(x)), *ax = K(wgt_abs(x));
    if (isinf(p)) return K(wgt_mul(K(wgt_mul(gy, sx)), shared(ar, K(wgt_eq(ax, y)), n->iv, x->ndim)));
    wgt_tensor *zero = wgt_ag_scalar_like(ar, x, 0.0), *one = wgt_ag_scalar_like(ar, x, 1.0);
    wgt_tensor *nz = K(wgt_ne(y, zero)), *ysafe = K(wgt_where(nz, y, one));
    wgt_tensor *ratio = p == 1 ? sx : K(wgt_mul(sx, K(wgt_pow_scalar(K(wgt_div(ax, ysafe)), p - 1))));
    return K(wgt_where(nz, K(wgt_mul(gy, ratio)), zero));
}

static wgt_tensor *svd_grad(wgt_ag_node *n, wgt_ag_arena *ar, wgt_tensor *x, wgt_tensor *g) {
    wgt_tensor *u = NULL, *s = NULL, *vh = NULL;
    if (wgt_linalg_svd(x, 0, &u, &s, &vh) != WGT_OK) return NULL;
    K(u), K(s), K(vh);
    int64_t k = s->shape[s->ndim - 1], at = n->iv[WGT_MAX_DIMS + 1] == 2 ? 0 : k - 1;
    if (n->iv[WGT_MAX_DIMS + 1] != 0) { /* one singular pair */
        u = K(wgt_slice(u, -1, at, at + 1, 1));
        vh = K(wgt_slice(vh, -2, at, at + 1, 1));
    }
    return K(wgt_mul(K(wgt_matmul(u, vh)), up(n, ar, g)));
}

static wgt_status bw_norm(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    wgt_tensor *x = f32(ar, n->saved[0]), *r = NULL;
    g = f32(ar, g);
    if (n->p[1] == N_VECTOR) r = vector_grad(n, ar, x, g);
    else if (n->p[1] == N_SVD) r = svd_grad(n, ar, x, g);
    else { /* sums of |a| over columns (axis -2) or rows (axis -1); the largest or smallest of them */
        int along = n->iv[WGT_MAX_DIMS + 1] == 1 ? x->ndim - 2 : x->ndim - 1, other[WGT_MAX_DIMS] = {0};
        wgt_tensor *sums = K(wgt_sum(K(wgt_abs(x)), 1, &along, 1)), *y = f32(ar, n->saved[1]);
        other[along == x->ndim - 1 ? x->ndim - 2 : x->ndim - 1] = 1;
        wgt_tensor *yk = up(n, ar, y); /* y at x's shape */
        /* the chosen columns (ties share); along a column every element takes its own sign */
        wgt_tensor *tie = sums && yk ? shared(ar, K(wgt_eq(sums, K(wgt_slice(yk, along, 0, 1, 1)))), other, x->ndim) : NULL;
        r = tie ? K(wgt_mul(K(wgt_mul(up(n, ar, g), K(wgt_sign(x)))), tie)) : NULL;
    }
    gin[0] = r && r->dtype != n->in[0].dtype ? K(wgt_cast(r, n->in[0].dtype)) : r;
    return wgt_ag_done(n, gin, ar);
}

static wgt_tensor *norm_rule(const char *fn, wgt_tensor *out, wgt_tensor *a, int kind, double p, int naxes,
                             const int *axes, int keepdims, int which) {
    WGT_AG_BEGIN(n, fn, out, bw_norm, a)
    wgt_ag_reduced_axes(a->ndim, naxes, axes, n->iv);
    n->iv[WGT_MAX_DIMS] = keepdims;
    n->iv[WGT_MAX_DIMS + 1] = which;
    n->p[0] = p;
    n->p[1] = kind;
    wgt_ag_save(n, 0, a);
    wgt_ag_save(n, 1, out);
    return wgt_ag_attach(out, n);
}

wgt_tensor *wgt_ag_rule_linalg_vector_norm(wgt_tensor *out, wgt_tensor *a, double ord, int naxes, const int *axes,
                                           int keepdims) {
    return norm_rule("wgt_linalg_vector_norm", out, a, N_VECTOR, ord, naxes, axes, keepdims, 0);
}

wgt_tensor *wgt_ag_rule_linalg_matrix_norm(wgt_tensor *out, wgt_tensor *a, const char *ord, int keepdims) {
    static const int last2[2] = {-2, -1};
    /* which: 1 columns, 2 rows (sign of ord: largest or smallest, read back from the saved norm);
     * for the singular values 2 the largest, -2 the smallest, 0 all */
    int kind = N_SVD, which = 0;
    if (!ord || !strcmp(ord, "fro")) kind = N_VECTOR;
    else if (!strcmp(ord, "1") || !strcmp(ord, "-1")) kind = N_COLS, which = 1;
    else if (!strcmp(ord, "inf") || !strcmp(ord, "-inf")) kind = N_COLS, which = 2;
    else which = !strcmp(ord, "2") ? 2 : !strcmp(ord, "-2") ? -2 : 0;
    return norm_rule("wgt_linalg_matrix_norm", out, a, kind, kind == N_VECTOR ? 2.0 : 0, 2, last2, keepdims, which);
}
