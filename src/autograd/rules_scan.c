/*
 * Gradient rules of the scans (src/core/scan.c). A running maximum or minimum passes each
 * output's gradient to the element it came from: a scatter-add along the axis at the
 * positions cumargmax or cumargmin gives. A running product y_i = x_0 ... x_i has
 * dy_i/dx_j = y_i / x_j for j <= i, which divides by zero once a row holds one. So the rule
 * splits each row at its first zero z: before z, the reversed running sum of g * y divided
 * by x (every y_i from z on is 0, so only the nonzero part counts); at z, the reversed
 * running sum of g * y' where y' is the running product with that zero taken as 1 (the
 * product of every other factor); after z, 0, since each such y_i keeps the zero at z.
 */
#include "autograd.h"

enum { S_PROD, S_MAX, S_MIN };

/* Sum over i >= j along axis of t_i, for each j. */
static wgt_tensor *reverse_cumsum(wgt_ag_arena *ar, wgt_tensor *t, int axis) {
    return K(wgt_flip(K(wgt_cumsum(K(wgt_flip(t, 1, &axis)), axis)), 1, &axis));
}

static wgt_tensor *cumprod_grad(wgt_ag_arena *ar, wgt_tensor *x, wgt_tensor *y, wgt_tensor *g, int axis) {
    wgt_tensor *zero = wgt_ag_scalar_like(ar, x, 0.0), *one = wgt_ag_scalar_like(ar, x, 1.0);
    wgt_tensor *isz = K(wgt_eq(x, zero));
    wgt_tensor *zeros_so_far = K(wgt_cumsum(wgt_ag_mask(ar, isz, WGT_I32), axis));
    wgt_tensor *izero = wgt_ag_scalar_like(ar, zeros_so_far, 0.0), *ione = wgt_ag_scalar_like(ar, zeros_so_far, 1.0);
    wgt_tensor *before = K(wgt_eq(zeros_so_far, izero));                     /* j < z */
    wgt_tensor *first = K(wgt_logical_and(isz, K(wgt_eq(zeros_so_far, ione)))); /* j == z */
    wgt_tensor *left = K(wgt_div(reverse_cumsum(ar, K(wgt_mul(g, y)), axis), K(wgt_where(before, x, one))));
    wgt_tensor *y_skip = K(wgt_cumprod(K(wgt_where(first, one, x)), axis));
    wgt_tensor *at_zero = reverse_cumsum(ar, K(wgt_mul(g, y_skip)), axis);
    return K(wgt_where(before, left, K(wgt_where(first, at_zero, zero))));
}

static wgt_status bw_scan(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    int axis = n->iv[0];
    wgt_tensor *x = n->saved[0];
    if (n->iv[1] == S_PROD) {
        gin[0] = cumprod_grad(ar, x, n->saved[1], g, axis);
        return WGT_OK;
    }
    /* The scatter-add sums f32. */
    wgt_tensor *at = K(n->iv[1] == S_MAX ? wgt_cumargmax(x, axis) : wgt_cumargmin(x, axis));
    wgt_tensor *gf = g->dtype == WGT_F32 ? g : K(wgt_cast(g, WGT_F32));
    wgt_tensor *z = K(wgt_zeros(x->storage->ctx, WGT_F32, x->ndim, x->shape));
    wgt_tensor *r = K(wgt_scatter(z, axis, at, gf, WGT_SCATTER_ADD));
    gin[0] = r && r->dtype != g->dtype ? K(wgt_cast(r, g->dtype)) : r;
    return WGT_OK;
}

static wgt_tensor *rule(const char *fn, int op, wgt_tensor *out, wgt_tensor *a, int axis) {
    WGT_AG_BEGIN(n, fn, out, bw_scan, a)
    n->iv[0] = axis < 0 ? axis + a->ndim : axis;
    n->iv[1] = op;
    wgt_ag_save(n, 0, a);
    if (op == S_PROD) wgt_ag_save(n, 1, out);
    return wgt_ag_attach(out, n);
}

wgt_tensor *wgt_ag_rule_cumprod(wgt_tensor *out, wgt_tensor *a, int axis) { return rule("wgt_cumprod", S_PROD, out, a, axis); }
wgt_tensor *wgt_ag_rule_cummax(wgt_tensor *out, wgt_tensor *a, int axis) { return rule("wgt_cummax", S_MAX, out, a, axis); }
wgt_tensor *wgt_ag_rule_cummin(wgt_tensor *out, wgt_tensor *a, int axis) { return rule("wgt_cummin", S_MIN, out, a, axis); }
