/*
 * Gradients of the contractions (tensordot, vecdot, outer, einsum of one or two operands).
 * Each op's plan (core/contract.h) names every dimension by a label; the gradient of one
 * operand is the contraction of the incoming gradient with the other operand, kept to the
 * first operand's labels: the same planned matmul as the forward pass. Labels the result
 * lacks (summed away in the forward pass) are broadcast back, and labels the operand had at
 * length 1 where the other's was longer (broadcasting) are summed back to length 1.
 */
#include <string.h>

#include "autograd.h"
#include "core/contract.h"

/* The node keeps the plan: the output's labels in iv[0..nout-1], nout in iv[WGT_MAX_DIMS],
 * each operand's labels in lv[i]; the operands themselves in saved[0..1]. */

/* r (labelled, consumed) brought to operand e's shape, with e's labels in order. */
static wgt_tensor *fit(wgt_labelled r, const int *labels, const wgt_ag_edge *e) {
    int sum_axes[WGT_MAX_DIMS], nsum = 0, present[WGT_MAX_DIMS], npresent = 0;
    int64_t shape[WGT_MAX_DIMS];
    int missing = 0;
    for (int d = 0; d < r.t->ndim; d++)
        for (int k = 0; k < e->ndim; k++)
            if (labels[k] == r.labels[d] && e->shape[k] == 1 && r.t->shape[d] != 1) sum_axes[nsum++] = d;
    if (nsum) {
        wgt_tensor *s = wgt_sum(r.t, nsum, sum_axes, 1);
        wgt_release(r.t);
        if (!(r.t = s)) return NULL;
    }
    for (int k = 0; k < e->ndim; k++) {
        int found = 0;
        for (int d = 0; d < r.t->ndim; d++) found |= r.labels[d] == labels[k];
        if (found) present[npresent++] = labels[k];
        missing |= !found;
        shape[k] = found ? e->shape[k] : 1;
    }
    wgt_tensor *x = wgt_contract_finish(r, npresent, present);
    if (!x) return NULL;
    wgt_tensor *v = wgt_reshape(x, e->ndim, shape);
    wgt_release(x);
    if (!v || !missing) return v;
    wgt_tensor *b = wgt_broadcast_to(v, e->ndim, e->shape);
    wgt_release(v);
    wgt_tensor *c = b ? wgt_contiguous(b) : NULL; /* a broadcast view would be a leaf's stored gradient */
    wgt_release(b);
    return c;
}

static wgt_status bw_contract(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    int nout = n->iv[WGT_MAX_DIMS];
    for (int i = 0; i < n->nin; i++) {
        if (!NEED(n, i)) continue;
        int labels[WGT_MAX_DIMS];
        for (int d = 0; d < WGT_MAX_DIMS; d++) labels[d] = (int)n->lv[i][d];
        wgt_labelled lg = {wgt_retain(g), {0}};
        memcpy(lg.labels, n->iv, sizeof(int) * (size_t)nout);
        wgt_labelled r = lg;
        if (n->nin == 2) {
            unsigned char keep[WGT_LABELS] = {0};
            for (int d = 0; d < n->in[i].ndim; d++) keep[labels[d]] = 1;
            wgt_labelled lo = {wgt_retain(n->saved[1 - i]), {0}};
            for (int d = 0; d < WGT_MAX_DIMS; d++) lo.labels[d] = (int)n->lv[1 - i][d];
            r = wgt_contract_pair(n->fn, lg, lo, keep);
        }
        gin[i] = r.t ? K(fit(r, labels, &n->in[i])) : NULL;
    }
    return wgt_ag_done(n, gin, ar);
}

/* A node for out from the plan p of ops (NULL p: no gradient, for why). */
static wgt_tensor *attach(const char *fn, wgt_tensor *out, int count, wgt_tensor *const *ops, const wgt_contract_plan *p,
                          const char *why) {
    if (!out || !wgt_ag_tracking(count, ops)) return out;
    wgt_ag_node *n = wgt_ag_node_new(fn, out, count, ops, p ? bw_contract : NULL);
    if (!n) {
        wgt_release(out);
        return NULL;
    }
    if (!p) {
        n->why = why;
        return wgt_ag_attach(out, n);
    }
    n->iv[WGT_MAX_DIMS] = p->nout;
    memcpy(n->iv, p->out, sizeof(int) * (size_t)p->nout);
    for (int i = 0; i < count; i++) {
        for (int d = 0; d < WGT_MAX_DIMS; d++) n->lv[i][d] = p->labels[i][d];
        wgt_ag_save(n, i, ops[i]);
    }
    return wgt_ag_attach(out, n);
}

wgt_tensor *wgt_ag_rule_tensordot(wgt_tensor *out, wgt_tensor *a, wgt_tensor *b, int naxes, const int *axes_a,
                                  const int *axes_b) {
    wgt_contract_plan p;
    wgt_tensor *ops[2] = {a, b};
    if (out && wgt_tensordot_plan(a, b, naxes, axes_a, axes_b, &p) != WGT_OK) return NULL; /* forward checked */
    return attach("wgt_tensordot", out, 2, ops, &p, NULL);
}

wgt_tensor *wgt_ag_rule_vecdot(wgt_tensor *out, wgt_tensor *a, wgt_tensor *b, int axis) {
    wgt_contract_plan p;
    wgt_tensor *ops[2] = {a, b};
    if (out && wgt_vecdot_plan(a, b, axis, &p) != WGT_OK) return NULL;
    return attach("wgt_vecdot", out, 2, ops, &p, NULL);
}

wgt_tensor *wgt_ag_rule_outer(wgt_tensor *out, wgt_tensor *a, wgt_tensor *b) {
    wgt_contract_plan p;
    wgt_tensor *ops[2] = {a, b};
    if (out && wgt_outer_plan(a, b, &p) != WGT_OK) return NULL;
    return attach("wgt_outer", out, 2, ops, &p, NULL);
}

wgt_tensor *wgt_ag_einsum_rule(wgt_tensor *out, const char *subscripts, int count, wgt_tensor *const *operands) {
    if (!out || !wgt_ag_tracking(count, operands)) return out;
    wgt_contract_plan p;
    const char *why = NULL;
    wgt_status st = wgt_einsum_plan(subscripts, count, operands, &p, &why);
    if (st != WGT_OK && !why) {
        wgt_release(out);
        return NULL;
    }
    return attach("wgt_einsum", out, count, operands, why ? NULL : &p, why);
}
