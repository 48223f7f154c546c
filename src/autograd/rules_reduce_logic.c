/*
 * The gradient of logsumexp: softmax over the reduced axes, exp(x - y), times the incoming
 * gradient put back at the input's shape. any, all and count_nonzero give integers: no rule.
 */
#include "autograd.h"

static wgt_status bw_logsumexp(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    const wgt_ag_edge *in = &n->in[0];
    int keepdims = n->iv[WGT_MAX_DIMS];
    wgt_tensor *x = n->saved[0], *y = n->saved[1];
    if (x->dtype != WGT_F32) x = K(wgt_cast(x, WGT_F32)), y = K(wgt_cast(y, WGT_F32));
    wgt_tensor *gf = g->dtype == WGT_F32 ? g : K(wgt_cast(g, WGT_F32));
    wgt_tensor *yb = wgt_ag_unreduce(ar, y, in->ndim, in->shape, n->iv, keepdims);
    wgt_tensor *gb = wgt_ag_unreduce(ar, gf, in->ndim, in->shape, n->iv, keepdims);
    wgt_tensor *r = K(wgt_mul(gb, K(wgt_exp(K(wgt_sub(x, yb))))));
    gin[0] = r && r->dtype != in->dtype ? K(wgt_cast(r, in->dtype)) : r;
    return WGT_OK;
}

wgt_tensor *wgt_ag_rule_logsumexp(wgt_tensor *out, wgt_tensor *a, int naxes, const int *axes, int keepdims) {
    WGT_AG_BEGIN(n, "wgt_logsumexp", out, bw_logsumexp, a)
    wgt_ag_reduced_axes(a->ndim, naxes, axes, n->iv);
    n->iv[WGT_MAX_DIMS] = keepdims;
    wgt_ag_save(n, 0, a);
    wgt_ag_save(n, 1, out);
    return wgt_ag_attach(out, n);
}
