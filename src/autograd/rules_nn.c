/*
 * Gradient rules of matmul and linear, the row ops (softmax, log_softmax, layer_norm,
 * rms_norm), rope and attention. Norms recompute their row statistics from the saved input
 * rather than keeping them; attention's backward is composed from matmul and softmax (it
 * recomputes the probabilities, as a fused backward kernel would).
 */
#include <math.h>
#include <stdlib.h>

#include "autograd.h"
#include "core/transformer.h"

#define A(n) ((n)->saved[0])
#define B(n) ((n)->saved[1])

/* ---- matmul: 1-D operands promoted as numpy.matmul does, batch dims summed back ---- */

static wgt_status bw_matmul(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    wgt_tensor *a = A(n), *b = B(n);
    int a1 = a->ndim == 1, b1 = b->ndim == 1;
    if (a1) a = K(wgt_unsqueeze(a, 0));  /* [1, K] */
    if (b1) b = K(wgt_unsqueeze(b, -1)); /* [K, 1] */
    if (a1) g = K(wgt_unsqueeze(g, g->ndim - (b1 ? 0 : 1)));
    if (b1) g = K(wgt_unsqueeze(g, -1));
    if (NEED(n, 0)) {
        wgt_ag_edge e = n->in[0];
        if (a1) e.ndim = 2, e.shape[1] = e.shape[0], e.shape[0] = 1;
        wgt_tensor *ga = wgt_ag_sum_to(ar, K(wgt_matmul(g, K(wgt_transpose(b, -1, -2)))), &e);
        gin[0] = a1 ? K(wgt_reshape(ga, 1, n->in[0].shape)) : ga;
    }
    if (NEED(n, 1)) {
        wgt_ag_edge e = n->in[1];
        if (b1) e.ndim = 2, e.shape[1] = 1;
        wgt_tensor *gb = wgt_ag_sum_to(ar, K(wgt_matmul(K(wgt_transpose(a, -1, -2)), g)), &e);
        gin[1] = b1 ? K(wgt_reshape(gb, 1, n->in[1].shape)) : gb;
    }
    return WGT_OK;
}

wgt_tensor *wgt_ag_rule_matmul(wgt_tensor *out, wgt_tensor *a, wgt_tensor *b) {
    WGT_AG_BEGIN(n, "wgt_matmul", out, bw_matmul, a, b)
    wgt_ag_save(n, 0, a);
    wgt_ag_save(n, 1, b);
    return wgt_ag_attach(out, n);
}

/* y = x w^T + bias: gx = g w, gw = sum over rows of g^T x, gbias = sum over rows of g. */
static wgt_status bw_linear(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    wgt_tensor *x = A(n), *w = B(n);
    int64_t rows = wgt_tensor_numel(g) / (g->ndim ? g->shape[g->ndim - 1] : 1);
    int64_t g2[2] = {rows, w->shape[0]}, x2[2] = {rows, w->shape[1]};
    if (NEED(n, 0)) gin[0] = K(wgt_matmul(g, w));
    if (NEED(n, 0) && x->ndim == 1) gin[0] = K(wgt_reshape(gin[0], 1, n->in[0].shape));
    if (NEED(n, 1)) {
        wgt_tensor *gm = K(wgt_reshape(g, 2, g2)), *xm = K(wgt_reshape(x, 2, x2));
        gin[1] = K(wgt_matmul(K(wgt_transpose(gm, 0, 1)), xm));
    }
    if (NEED(n, 2)) gin[2] = wgt_ag_sum_to(ar, g, &n->in[2]);
    return WGT_OK;
}

wgt_tensor *wgt_ag_rule_linear(wgt_tensor *out, wgt_tensor *x, wgt_tensor *w, wgt_tensor *bias) {
    WGT_AG_BEGIN(n, "wgt_linear", out, bw_linear, x, w, bias)
    wgt_ag_save(n, 0, x);
    wgt_ag_save(n, 1, w);
    return wgt_ag_attach(out, n);
}

/* ---- softmax and log_softmax along an axis ---- */

static wgt_status bw_softmax(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    int ax = n->iv[0];
    wgt_tensor *y = A(n);
    if (n->iv[1]) /* log_softmax: g - softmax * sum(g) */
        gin[0] = K(wgt_sub(g, K(wgt_mul(K(wgt_exp(y)), K(wgt_sum(g, 1, &ax, 1))))));
    else /* softmax: y (g - sum(g y)) */
        gin[0] = K(wgt_mul(y, K(wgt_sub(g, K(wgt_sum(K(wgt_mul(g, y)), 1, &ax, 1))))));
    return WGT_OK;
}

static wgt_tensor *softmax_rule(const char *fn, wgt_tensor *out, wgt_tensor *a, int axis, int log) {
    WGT_AG_BEGIN(n, fn, out, bw_softmax, a)
    n->iv[0] = axis < 0 ? axis + a->ndim : axis;
    n->iv[1] = log;
    wgt_ag_save(n, 0, out);
    return wgt_ag_attach(out, n);
}
wgt_tensor *wgt_ag_rule_softmax(wgt_tensor *out, wgt_tensor *a, int axis) { return softmax_rule("wgt_softmax", out, a, axis, 0); }
wgt_tensor *wgt_ag_rule_log_softmax(wgt_tensor *out, wgt_tensor *a, int axis) {
    return softmax_rule("wgt_log_softmax", out, a, axis, 1);
}

/* ---- layer_norm and rms_norm over the last axis ---- */

/* With xhat the normalised rows, r = 1 / sqrt(var + eps) and gh = g * weight:
 * layer_norm: dx = r (gh - mean(gh) - xhat mean(gh xhat)); rms_norm: dx = r (gh - xhat mean(gh xhat)).
 * dweight = sum over rows of g xhat, dbias = sum over rows of g. Computed in f32. */
static wgt_status bw_norm(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    int last = -1, rms = n->iv[0];
    double eps = n->p[0];
    wgt_dtype dt = n->in[0].dtype;
    wgt_tensor *x = dt == WGT_F32 ? A(n) : K(wgt_cast(A(n), WGT_F32));
    wgt_tensor *gf = g->dtype == WGT_F32 ? g : K(wgt_cast(g, WGT_F32));
    wgt_tensor *c = rms ? x : K(wgt_sub(x, K(wgt_mean(x, 1, &last, 1))));
    wgt_tensor *ms = K(wgt_mean(K(wgt_square(c)), 1, &last, 1));
    wgt_tensor *r = K(wgt_rsqrt(K(wgt_add_scalar(ms, eps))));
    wgt_tensor *xhat = K(wgt_mul(c, r));
    wgt_tensor *w = B(n) ? (B(n)->dtype == WGT_F32 ? B(n) : K(wgt_cast(B(n), WGT_F32))) : NULL;
    wgt_tensor *gh = w ? K(wgt_mul(gf, w)) : gf;
    if (NEED(n, 0)) {
        wgt_tensor *t = K(wgt_mul(xhat, K(wgt_mean(K(wgt_mul(gh, xhat)), 1, &last, 1))));
        wgt_tensor *inner = K(wgt_sub(gh, t));
        if (!rms) inner = K(wgt_sub(inner, K(wgt_mean(gh, 1, &last, 1))));
        gin[0] = K(wgt_mul(inner, r));
        if (gin[0] && dt != WGT_F32) gin[0] = K(wgt_cast(gin[0], dt));
    }
    if (n->nin > 1 && NEED(n, 1)) gin[1] = wgt_ag_sum_to(ar, K(wgt_mul(gf, xhat)), &n->in[1]);
    if (n->nin > 2 && NEED(n, 2)) gin[2] = wgt_ag_sum_to(ar, gf, &n->in[2]);
    return WGT_OK;
}

wgt_tensor *wgt_ag_rule_layer_norm(wgt_tensor *out, wgt_tensor *a, wgt_tensor *weight, wgt_tensor *bias, double eps) {
    WGT_AG_BEGIN(n, "wgt_layer_norm", out, bw_norm, a, weight, bias)
    n->p[0] = eps;
    wgt_ag_save(n, 0, a);
    if (weight) wgt_ag_save(n, 1, weight);
    return wgt_ag_attach(out, n);
}

wgt_tensor *wgt_ag_rule_rms_norm(wgt_tensor *out, wgt_tensor *a, wgt_tensor *weight, double eps) {
    WGT_AG_BEGIN(n, "wgt_rms_norm", out, bw_norm, a, weight)
    n->p[0] = eps;
    n->iv[0] = 1;
    wgt_ag_save(n, 0, a);
    if (weight) wgt_ag_save(n, 1, weight);
    return wgt_ag_attach(out, n);
}

/* ---- rope: a rotation by position-dependent angles; its gradient rotates back ---- */

static wgt_status bw_rope(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    int64_t seq = n->in[0].shape[n->in[0].ndim - 2];
    wgt_tensor *pos = A(n) ? (A(n)->dtype == WGT_I32 ? A(n) : K(wgt_cast(A(n), WGT_I32)))
                           : K(wgt_arange(n->ctx, WGT_I32, 0, (double)seq, 1));
    gin[0] = K(wgt_rope(g, K(wgt_neg(pos)), n->p[0]));
    return WGT_OK;
}

wgt_tensor *wgt_ag_rule_rope(wgt_tensor *out, wgt_tensor *x, wgt_tensor *positions, double base) {
    WGT_AG_BEGIN(n, "wgt_rope", out, bw_rope, x, NULL)
    n->p[0] = base;
    if (positions) wgt_ag_save(n, 0, positions);
    return wgt_ag_attach(out, n);
}

/* ---- attention, composed: P = softmax(q k^T s + mask); out = P v ----
 * dv = P^T g; dP = g v^T; dS = P (dP - sum(dP P)); dq = dS k s; dk = dS^T q s. */
static wgt_status bw_attention(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    wgt_tensor *q = n->saved[0], *k = n->saved[1], *v = n->saved[2];
    int causal = n->iv[0];
    double scale = n->p[0];
    int64_t lq = q->shape[q->ndim - 2], lk = k->shape[k->ndim - 2];
    wgt_tensor *s = K(wgt_attention_scores(q, k, scale)); /* as the forward composition takes them */
    if (causal) { /* key j is masked for query i when j > i + (lk - lq) */
        int64_t shape[2] = {lq, lk};
        wgt_tensor *masked = K(wgt_triu(K(wgt_ones(n->ctx, WGT_U32, 2, shape)), lk - lq + 1));
        s = K(wgt_where(masked, wgt_ag_scalar_like(ar, s, -INFINITY), s));
    }
    wgt_tensor *p = K(wgt_softmax(s, -1));
    if (NEED(n, 2)) gin[2] = wgt_ag_sum_to(ar, K(wgt_matmul(K(wgt_transpose(p, -1, -2)), g)), &n->in[2]);
    if (NEED(n, 0) || NEED(n, 1)) {
        int last = -1;
        wgt_tensor *dp = K(wgt_matmul(g, K(wgt_transpose(v, -1, -2))));
        wgt_tensor *ds = K(wgt_mul(p, K(wgt_sub(dp, K(wgt_sum(K(wgt_mul(dp, p)), 1, &last, 1))))));
        /* A query the mask leaves no key has NaN probabilities: its rows get no gradient. */
        if (causal && lq > lk) ds = K(wgt_where(K(wgt_isnan(ds)), wgt_ag_scalar_like(ar, ds, 0.0), ds));
        ds = K(wgt_mul_scalar(ds, scale));
        if (NEED(n, 0)) gin[0] = wgt_ag_sum_to(ar, K(wgt_matmul(ds, k)), &n->in[0]);
        if (NEED(n, 1)) gin[1] = wgt_ag_sum_to(ar, K(wgt_matmul(K(wgt_transpose(ds, -1, -2)), q)), &n->in[1]);
    }
    return WGT_OK;
}

wgt_tensor *wgt_ag_rule_attention(wgt_tensor *out, wgt_tensor *q, wgt_tensor *k, wgt_tensor *v, int causal, double scale) {
    WGT_AG_BEGIN(n, "wgt_attention", out, bw_attention, q, k, v)
    n->iv[0] = causal;
    n->p[0] = scale != 0 ? scale : 1.0 / sqrt((double)q->shape[q->ndim - 1]);
    wgt_ag_save(n, 0, q);
    wgt_ag_save(n, 1, k);
    wgt_ag_save(n, 2, v);
    return wgt_ag_attach(out, n);
}
