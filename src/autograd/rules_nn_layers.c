/*
 * Gradient rules of the layers of src/core/nn_layers.c. dropout is linear in x with a mask
 * fixed by the seed, so its gradient is dropout of g with the same seed. The normalisations
 * differentiate their closed forms (the statistics recomputed from the saved input, as
 * rules_nn.c's norms do). interpolate is linear too: its gradient runs each axis's map
 * transposed (weighted scatter-adds) in the reverse order.
 */
#include <math.h>
#include <string.h>

#include "autograd.h"
#include "core/nn_layers.h"

/* ---- dropout ---- */

static wgt_status bw_dropout(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    gin[0] = K(wgt_dropout(g, n->p[0], (uint64_t)n->lv[0][0]));
    return WGT_OK;
}

wgt_tensor *wgt_ag_rule_dropout(wgt_tensor *out, wgt_tensor *x, double p, uint64_t seed) {
    WGT_AG_BEGIN(n, "wgt_dropout", out, bw_dropout, x)
    n->p[0] = p;
    n->lv[0][0] = (int64_t)seed;
    return wgt_ag_attach(out, n);
}

static wgt_status bw_dropout_seeded(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    gin[0] = K(wgt_dropout_seeded(g, n->p[0], n->saved[0]));
    return WGT_OK;
}

wgt_tensor *wgt_ag_rule_dropout_seeded(wgt_tensor *out, wgt_tensor *x, double p, wgt_tensor *seed) {
    WGT_AG_BEGIN(n, "wgt_dropout_seeded", out, bw_dropout_seeded, x)
    n->p[0] = p;
    wgt_ag_save(n, 0, seed);
    return wgt_ag_attach(out, n);
}

/* g summed over every dimension but the channels' (1): [C]. */
static wgt_tensor *per_channel_sum(wgt_ag_arena *ar, wgt_tensor *g) {
    int axes[WGT_MAX_DIMS], k = 0;
    for (int d = 0; d < g->ndim; d++)
        if (d != 1) axes[k++] = d;
    return K(wgt_sum(g, k, axes, 0));
}

static wgt_tensor *channels(wgt_ag_arena *ar, wgt_tensor *v, int ndim) { return v ? K(wgt_channels_view(v, ndim)) : NULL; }

/* ---- batch_norm: y = (x - m) s + b with s = w r, r = 1 / sqrt(v + eps) ----
 * dx = g s; dm = -sum(g) s; dv = -0.5 w r^3 sum(g (x - m)); dw = r sum(g (x - m)); db = sum(g). */
static wgt_status bw_batch_norm(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    wgt_tensor *x = n->saved[0], *m = n->saved[1], *v = n->saved[2], *w = n->saved[3];
    int nd = x->ndim;
    wgt_tensor *r = K(wgt_rsqrt(K(wgt_add_scalar(v, n->p[0]))));
    wgt_tensor *s = w ? K(wgt_mul(w, r)) : r;
    if (NEED(n, 0)) gin[0] = K(wgt_mul(g, channels(ar, s, nd)));
    if (NEED(n, 1)) gin[1] = K(wgt_neg(K(wgt_mul(per_channel_sum(ar, g), s))));
    wgt_tensor *gc = NEED(n, 2) || NEED(n, 3) ? per_channel_sum(ar, K(wgt_mul(g, K(wgt_sub(x, channels(ar, m, nd))))))
                                                : NULL;
    if (NEED(n, 2)) gin[2] = K(wgt_mul_scalar(K(wgt_mul(K(wgt_mul(gc, s)), K(wgt_square(r)))), -0.5));
    if (NEED(n, 3)) gin[3] = K(wgt_mul(gc, r));
    if (NEED(n, 4)) gin[4] = per_channel_sum(ar, g);
    return WGT_OK;
}

wgt_tensor *wgt_ag_rule_batch_norm(wgt_tensor *out, wgt_tensor *x, wgt_tensor *running_mean, wgt_tensor *running_var,
                                   wgt_tensor *weight, wgt_tensor *bias, double eps) {
    WGT_AG_BEGIN(n, "wgt_batch_norm", out, bw_batch_norm, x, running_mean, running_var, weight, bias)
    n->p[0] = eps;
    wgt_ag_save(n, 0, x);
    wgt_ag_save(n, 1, running_mean);
    wgt_ag_save(n, 2, running_var);
    if (weight) wgt_ag_save(n, 3, weight);
    return wgt_ag_attach(out, n);
}

/* ---- group_norm: layer_norm's rows are [N, groups, rest]; with xhat the normalised rows,
 * r = 1 / sqrt(var + eps) and gh = g w (per channel): dx = r (gh - mean(gh) - xhat mean(gh xhat)),
 * dw = sum(g xhat), db = sum(g) per channel. Computed in f32. */
static wgt_status bw_group_norm(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    wgt_tensor *x = n->saved[0], *w = n->saved[1];
    int nd = x->ndim, last = -1;
    int64_t numel = wgt_tensor_numel(x);
    if (numel == 0) {
        for (int i = 0; i < n->nin; i++)
            if (NEED(n, i)) gin[i] = K(wgt_zeros(n->ctx, n->in[i].dtype, n->in[i].ndim, n->in[i].shape));
        return WGT_OK;
    }
    int64_t rows[3] = {x->shape[0], n->lv[0][0], numel / x->shape[0] / n->lv[0][0]};
    wgt_tensor *x32 = x->dtype == WGT_F32 ? x : K(wgt_cast(x, WGT_F32));
    wgt_tensor *g32 = g->dtype == WGT_F32 ? g : K(wgt_cast(g, WGT_F32));
    wgt_tensor *xr = K(wgt_reshape(x32, 3, rows));
    wgt_tensor *c = K(wgt_sub(xr, K(wgt_mean(xr, 1, &last, 1))));
    wgt_tensor *r = K(wgt_rsqrt(K(wgt_add_scalar(K(wgt_mean(K(wgt_square(c)), 1, &last, 1)), n->p[0]))));
    wgt_tensor *xhat = K(wgt_mul(c, r));
    if (NEED(n, 0)) {
        wgt_tensor *w32 = w ? (w->dtype == WGT_F32 ? w : K(wgt_cast(w, WGT_F32))) : NULL;
        wgt_tensor *gh = K(wgt_reshape(w32 ? K(wgt_mul(g32, channels(ar, w32, nd))) : g32, 3, rows));
        wgt_tensor *t = K(wgt_mul(xhat, K(wgt_mean(K(wgt_mul(gh, xhat)), 1, &last, 1))));
        wgt_tensor *inner = K(wgt_sub(K(wgt_sub(gh, t)), K(wgt_mean(gh, 1, &last, 1))));
        gin[0] = K(wgt_reshape(K(wgt_mul(inner, r)), nd, x->shape));
        if (gin[0] && x->dtype != WGT_F32) gin[0] = K(wgt_cast(gin[0], x->dtype));
    }
    if (n->nin > 1 && NEED(n, 1)) {
        gin[1] = per_channel_sum(ar, K(wgt_mul(g32, K(wgt_reshape(xhat, nd, x->shape)))));
        if (gin[1] && x->dtype != WGT_F32) gin[1] = K(wgt_cast(gin[1], x->dtype));
    }
    if (n->nin > 2 && NEED(n, 2)) gin[2] = per_channel_sum(ar, g);
    return WGT_OK;
}

wgt_tensor *wgt_ag_rule_group_norm(wgt_tensor *out, wgt_tensor *x, int64_t groups, wgt_tensor *weight,
                                   wgt_tensor *bias, double eps) {
    WGT_AG_BEGIN(n, "wgt_group_norm", out, bw_group_norm, x, weight, bias)
    n->p[0] = eps;
    n->lv[0][0] = groups;
    wgt_ag_save(n, 0, x);
    if (weight) wgt_ag_save(n, 1, weight);
    return wgt_ag_attach(out, n);
}

/* ---- interpolate: each axis's map transposed, the first axis first (the forward ran the
 * last first) ---- */
static wgt_status bw_interpolate(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    const wgt_ag_edge *e = &n->in[0];
    for (int d = 2; d < e->ndim && g; d++)
        g = K(wgt_interp_axis(g, d, e->shape[d], n->lv[0][d], n->p[d - 2], (wgt_interp_mode)n->iv[0], n->iv[1], 1));
    gin[0] = g;
    return WGT_OK;
}

wgt_tensor *wgt_ag_rule_interpolate(wgt_tensor *out, wgt_tensor *x, const int64_t *size, const double *scale,
                                    wgt_interp_mode mode, int align_corners) {
    WGT_AG_BEGIN(n, "wgt_interpolate", out, bw_interpolate, x)
    double ratio[WGT_MAX_DIMS];
    if (wgt_interp_plan("wgt_interpolate", x, size, scale, mode, align_corners, n->lv[0], ratio) != WGT_OK) {
        wgt_ag_node_free(n);
        wgt_release(out);
        return NULL;
    }
    for (int d = 2; d < x->ndim; d++) n->p[d - 2] = ratio[d];
    n->iv[0] = (int)mode;
    n->iv[1] = align_corners;
    return wgt_ag_attach(out, n);
}
