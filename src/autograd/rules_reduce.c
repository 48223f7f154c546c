/*
 * Gradient rules of the reductions and cumsum (and of their 64-bit forms, whose floating cases
 * are the plain ops). The incoming gradient has the reduced shape; wgt_ag_unreduce puts the
 * reduced axes back and broadcasts it over the input (a view, no copy) before the elementwise
 * factor of each reduction is applied.
 */
#include <string.h>

#include "autograd.h"

enum { R_SUM, R_MEAN, R_MAX, R_MIN, R_PROD, R_VAR, R_STD };

#define X(n) ((n)->saved[0])
#define Y(n) ((n)->saved[1])

/* The node keeps the reduced-axes flags in iv[0..ndim-1], keepdims in iv[WGT_MAX_DIMS], the
 * correction in iv[WGT_MAX_DIMS + 1] and the op in p[0]. */
static wgt_tensor *up(wgt_ag_node *n, wgt_ag_arena *ar, wgt_tensor *t) {
    return wgt_ag_unreduce(ar, t, n->in[0].ndim, n->in[0].shape, n->iv, n->iv[WGT_MAX_DIMS]);
}

static double count(const wgt_ag_node *n) {
    double c = 1;
    for (int d = 0; d < n->in[0].ndim; d++)
        if (n->iv[d]) c *= (double)n->in[0].shape[d];
    return c;
}

static wgt_status bw_reduce(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    wgt_tensor *gb = up(n, ar, g), *x = X(n);
    wgt_dtype dt = n->in[0].dtype;
    wgt_tensor *r = NULL;
    switch ((int)n->p[0]) {
    case R_SUM: r = K(wgt_contiguous(gb)); break; /* a broadcast view would be a leaf's stored gradient */
    case R_MEAN: r = K(wgt_mul_scalar(gb, 1.0 / count(n))); break;
    case R_MAX:
    case R_MIN: { /* shared equally among the elements that equal the extreme, as PyTorch's amax does */
        wgt_tensor *hit = wgt_ag_mask(ar, K(wgt_eq(x, up(n, ar, Y(n)))), dt);
        int axes[WGT_MAX_DIMS], k = 0;
        for (int d = 0; d < n->in[0].ndim; d++)
            if (n->iv[d]) axes[k++] = d;
        wgt_tensor *ties = K(wgt_sum(hit, k, axes, 1));
        r = K(wgt_mul(hit, K(wgt_div(gb, K(wgt_broadcast_to(ties, n->in[0].ndim, n->in[0].shape))))));
        break;
    }
    case R_PROD: { /* prod of the others: y / x without zeros; with exactly one zero in a group, the
                      zero gets the product of the rest; with more, every element gets 0 */
        int axes[WGT_MAX_DIMS], k = 0;
        for (int d = 0; d < n->in[0].ndim; d++)
            if (n->iv[d]) axes[k++] = d;
        wgt_tensor *zero = wgt_ag_scalar_like(ar, x, 0.0), *one = wgt_ag_scalar_like(ar, x, 1.0);
        wgt_tensor *isz = K(wgt_eq(x, zero));
        wgt_tensor *nz = K(wgt_sum(wgt_ag_mask(ar, isz, dt), k, axes, 1));
        wgt_tensor *rest = K(wgt_prod(K(wgt_where(isz, one, x)), k, axes, 1)); /* product of the nonzeros */
        wgt_tensor *nzb = K(wgt_broadcast_to(nz, n->in[0].ndim, n->in[0].shape));
        wgt_tensor *restb = K(wgt_broadcast_to(rest, n->in[0].ndim, n->in[0].shape));
        wgt_tensor *no_zero = K(wgt_div(K(wgt_mul(restb, one)), K(wgt_where(isz, one, x))));
        wgt_tensor *one_zero = K(wgt_where(isz, restb, zero));
        wgt_tensor *f = K(wgt_where(K(wgt_eq(nzb, zero)), no_zero,
                                    K(wgt_where(K(wgt_eq(nzb, one)), one_zero, zero))));
        r = K(wgt_mul(gb, f));
        break;
    }
    case R_VAR:
    case R_STD: { /* dvar/dx = 2 (x - mean) / (N - correction); dstd = dvar / (2 std) */
        int axes[WGT_MAX_DIMS], k = 0;
        for (int d = 0; d < n->in[0].ndim; d++)
            if (n->iv[d]) axes[k++] = d;
        wgt_tensor *xf = dt == WGT_F16 ? K(wgt_cast(x, WGT_F32)) : x;
        wgt_tensor *mu = K(wgt_mean(xf, k, axes, 1));
        wgt_tensor *dev = K(wgt_sub(xf, mu));
        double denom = count(n) - n->iv[WGT_MAX_DIMS + 1];
        wgt_tensor *gf = gb->dtype == WGT_F32 ? gb : K(wgt_cast(gb, WGT_F32));
        if ((int)n->p[0] == R_VAR) r = K(wgt_mul(dev, K(wgt_mul_scalar(gf, 2.0 / denom))));
        else {
            wgt_tensor *yf = Y(n)->dtype == WGT_F32 ? Y(n) : K(wgt_cast(Y(n), WGT_F32));
            r = K(wgt_mul(dev, K(wgt_div(K(wgt_mul_scalar(gf, 1.0 / denom)), up(n, ar, yf)))));
        }
        if (r && r->dtype != dt) r = K(wgt_cast(r, dt));
        break;
    }
    }
    gin[0] = r;
    return WGT_OK;
}

static wgt_tensor *reduce(const char *fn, int op, wgt_tensor *out, wgt_tensor *a, int naxes, const int *axes,
                          int keepdims, int correction) {
    WGT_AG_BEGIN(n, fn, out, bw_reduce, a)
    wgt_ag_reduced_axes(a->ndim, naxes, axes, n->iv);
    n->iv[WGT_MAX_DIMS] = keepdims;
    n->iv[WGT_MAX_DIMS + 1] = correction;
    n->p[0] = op;
    if (op != R_SUM && op != R_MEAN) {
        wgt_ag_save(n, 0, a);
        wgt_ag_save(n, 1, out);
    }
    return wgt_ag_attach(out, n);
}

wgt_tensor *wgt_ag_rule_sum(wgt_tensor *out, wgt_tensor *a, int naxes, const int *axes, int keepdims) {
    return reduce("wgt_sum", R_SUM, out, a, naxes, axes, keepdims, 0);
}
wgt_tensor *wgt_ag_rule_mean(wgt_tensor *out, wgt_tensor *a, int naxes, const int *axes, int keepdims) {
    return reduce("wgt_mean", R_MEAN, out, a, naxes, axes, keepdims, 0);
}
wgt_tensor *wgt_ag_rule_max(wgt_tensor *out, wgt_tensor *a, int naxes, const int *axes, int keepdims) {
    return reduce("wgt_max", R_MAX, out, a, naxes, axes, keepdims, 0);
}
wgt_tensor *wgt_ag_rule_min(wgt_tensor *out, wgt_tensor *a, int naxes, const int *axes, int keepdims) {
    return reduce("wgt_min", R_MIN, out, a, naxes, axes, keepdims, 0);
}
wgt_tensor *wgt_ag_rule_prod(wgt_tensor *out, wgt_tensor *a, int naxes, const int *axes, int keepdims) {
    return reduce("wgt_prod", R_PROD, out, a, naxes, axes, keepdims, 0);
}
wgt_tensor *wgt_ag_rule_var(wgt_tensor *out, wgt_tensor *a, int naxes, const int *axes, int keepdims, int correction) {
    return reduce("wgt_var", R_VAR, out, a, naxes, axes, keepdims, correction);
}
wgt_tensor *wgt_ag_rule_std(wgt_tensor *out, wgt_tensor *a, int naxes, const int *axes, int keepdims, int correction) {
    return reduce("wgt_std", R_STD, out, a, naxes, axes, keepdims, correction);
}

/* The 64-bit forms give a floating a the plain op's result in its own type (an integer a has
 * no gradient): the plain rules. */
wgt_tensor *wgt_ag_rule_sum_dtype(wgt_tensor *out, wgt_tensor *a, int naxes, const int *axes, int keepdims, wgt_dtype dtype) {
    return reduce("wgt_sum_dtype", R_SUM, out, a, naxes, axes, keepdims, 0);
}
wgt_tensor *wgt_ag_rule_prod_dtype(wgt_tensor *out, wgt_tensor *a, int naxes, const int *axes, int keepdims, wgt_dtype dtype) {
    return reduce("wgt_prod_dtype", R_PROD, out, a, naxes, axes, keepdims, 0);
}

/* The running sum's gradient is the running sum of the gradient from the other end. */
static wgt_status bw_cumsum(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    int axis = n->iv[0];
    gin[0] = K(wgt_flip(K(wgt_cumsum(K(wgt_flip(g, 1, &axis)), axis)), 1, &axis));
    return WGT_OK;
}

static wgt_tensor *cumsum_rule(const char *fn, wgt_tensor *out, wgt_tensor *a, int axis) {
    WGT_AG_BEGIN(n, fn, out, bw_cumsum, a)
    n->iv[0] = axis < 0 ? axis + a->ndim : axis;
    return wgt_ag_attach(out, n);
}
wgt_tensor *wgt_ag_rule_cumsum(wgt_tensor *out, wgt_tensor *a, int axis) { return cumsum_rule("wgt_cumsum", out, a, axis); }
wgt_tensor *wgt_ag_rule_cumsum_dtype(wgt_tensor *out, wgt_tensor *a, int axis, wgt_dtype dtype) {
    return cumsum_rule("wgt_cumsum_dtype", out, a, axis);
}
