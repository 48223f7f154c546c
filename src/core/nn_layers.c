/*
 * Neural-network layers composed from the library's ops, so both backends run them with the
 * kernels they already have and the scheduler fuses their elementwise parts: dropout (a mask
 * from the device generator, random.c), batch normalisation in inference form (per-channel
 * scale and shift), group normalisation (the rows kernel of layer_norm over each sample's
 * group, then the channels' weight and bias) and interpolation (gathers along each spatial
 * axis, weighted for linear modes). Gradients: src/autograd/rules_nn_layers.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn_layers.h"
#include "node.h"

static wgt_status check_float(const char *fn, const char *name, const wgt_tensor *t) {
    if (t->dtype == WGT_F32 || t->dtype == WGT_F16) return WGT_OK;
    return wgt_error(WGT_ERR_DTYPE, "%s: takes floating types (f32, f16), not %s (%s)", fn, wgt_dtype_name(t->dtype),
                     name);
}

/* ---- dropout ---- */

static wgt_status check_dropout(const char *fn, wgt_tensor *x, double p) {
    if (wgt_check_tensor(fn, "x", x) != WGT_OK || check_float(fn, "x", x) != WGT_OK) return wgt_last_status();
    if (!(p >= 0 && p <= 1)) return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: p = %g is not a probability in [0, 1]", fn, p);
    return WGT_OK;
}

/* x where the draw u (24 bits, [0, 1)) is at least p as an f32, scaled; 0 elsewhere (p = 1
 * keeps nothing). Releases u. */
static wgt_tensor *apply_mask(wgt_tensor *x, double p, wgt_tensor *u) {
    wgt_context *ctx = x->storage->ctx;
    wgt_tensor *thr = u ? wgt_scalar(ctx, WGT_F32, p) : NULL;
    wgt_tensor *keep = u && thr ? wgt_ge(u, thr) : NULL;
    wgt_tensor *scaled = keep ? wgt_mul_scalar(x, p < 1 ? 1 / (1 - p) : 0) : NULL;
    wgt_tensor *zero = scaled ? wgt_scalar(ctx, x->dtype, 0) : NULL;
    wgt_tensor *out = zero ? wgt_where(keep, scaled, zero) : NULL;
    wgt_release(u);
    wgt_release(thr);
    wgt_release(keep);
    wgt_release(scaled);
    wgt_release(zero);
    return out;
}

wgt_tensor *wgt_dropout(wgt_tensor *x, double p, uint64_t seed) {
    if (check_dropout("wgt_dropout", x, p) != WGT_OK) return NULL;
    return apply_mask(x, p, wgt_rand_uniform(x->storage->ctx, WGT_F32, x->ndim, x->shape, 0, 1, seed));
}

wgt_tensor *wgt_dropout_seeded(wgt_tensor *x, double p, wgt_tensor *seed) {
    static const char fn[] = "wgt_dropout_seeded";
    if (check_dropout(fn, x, p) != WGT_OK || wgt_check_tensor(fn, "seed", seed) != WGT_OK ||
        wgt_check_same_context(fn, x, seed) != WGT_OK)
        return NULL;
    return apply_mask(x, p, wgt_rand_unit_keyed(fn, seed, x->ndim, x->shape));
}

/* ---- batch and group normalisation ---- */

/* A per-channel vector [C] (or NULL) checked against x [N, C, ...]. */
static wgt_status check_channels(const char *fn, const char *name, wgt_tensor *x, wgt_tensor *v) {
    if (!v) return WGT_OK;
    wgt_status st = wgt_check_tensor(fn, name, v);
    if (st != WGT_OK) return st;
    if ((st = wgt_check_same_context(fn, x, v)) != WGT_OK) return st;
    if (v->dtype != x->dtype)
        return wgt_error(WGT_ERR_DTYPE, "%s: %s is %s but x is %s; cast first", fn, name, wgt_dtype_name(v->dtype),
                         wgt_dtype_name(x->dtype));
    if (v->ndim != 1 || v->shape[0] != x->shape[1]) {
        char s[128];
        wgt_format_shape(s, sizeof s, v->ndim, v->shape);
        return wgt_error(WGT_ERR_SHAPE, "%s: %s has shape %s, wanted [%lld] (x's channels)", fn, name, s,
                         (long long)x->shape[1]);
    }
    return WGT_OK;
}

static wgt_status check_nc(const char *fn, wgt_tensor *x, double eps) {
    if (wgt_check_tensor(fn, "x", x) != WGT_OK || check_float(fn, "x", x) != WGT_OK) return wgt_last_status();
    if (x->ndim < 2) return wgt_error(WGT_ERR_SHAPE, "%s: x has rank %d, wanted [N, C, ...] (rank 2 or more)", fn, x->ndim);
    if (!(eps >= 0) || isinf(eps)) return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: eps = %g must be finite and >= 0", fn, eps);
    return WGT_OK;
}

/* v [C] seen as [C, 1, ...] so that it broadcasts along dimension 1 of a rank-ndim tensor. */
wgt_tensor *wgt_channels_view(wgt_tensor *v, int ndim) {
    int64_t shape[WGT_MAX_DIMS];
    shape[0] = v->shape[0];
    for (int d = 1; d < ndim - 1; d++) shape[d] = 1;
    return wgt_reshape(v, ndim - 1, shape);
}

/* a op (v seen per channel), releasing a. */
static wgt_tensor *per_channel(wgt_tensor *a, wgt_tensor *v, wgt_tensor *(*op)(wgt_tensor *, wgt_tensor *), int ndim) {
    if (!a || !v) return a;
    wgt_tensor *vc = wgt_channels_view(v, ndim);
    wgt_tensor *r = vc ? op(a, vc) : NULL;
    wgt_release(vc);
    wgt_release(a);
    return r;
}

wgt_tensor *wgt_batch_norm(wgt_tensor *x, wgt_tensor *running_mean, wgt_tensor *running_var, wgt_tensor *weight,
                           wgt_tensor *bias, double eps) {
    static const char fn[] = "wgt_batch_norm";
    if (check_nc(fn, x, eps) != WGT_OK) return NULL;
    if (!running_mean || !running_var) {
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: running_%s is NULL (the inference form needs both statistics)", fn,
                  running_mean ? "var" : "mean");
        return NULL;
    }
    if (check_channels(fn, "running_mean", x, running_mean) != WGT_OK ||
        check_channels(fn, "running_var", x, running_var) != WGT_OK || check_channels(fn, "weight", x, weight) != WGT_OK ||
        check_channels(fn, "bias", x, bias) != WGT_OK)
        return NULL;
    /* (x - mean) * (weight / sqrt(var + eps)) + bias: subtracting first keeps the digits of x
     * near the mean. */
    wgt_tensor *ve = wgt_add_scalar(running_var, eps);
    wgt_tensor *scale = ve ? wgt_rsqrt(ve) : NULL;
    wgt_release(ve);
    if (scale && weight) {
        wgt_tensor *ws = wgt_mul(scale, weight);
        wgt_release(scale);
        scale = ws;
    }
    wgt_tensor *y = scale ? per_channel(wgt_retain(x), running_mean, wgt_sub, x->ndim) : NULL;
    y = per_channel(y, scale, wgt_mul, x->ndim);
    y = per_channel(y, bias, wgt_add, x->ndim);
    wgt_release(scale);
    return y;
}

wgt_tensor *wgt_group_norm(wgt_tensor *x, int64_t groups, wgt_tensor *weight, wgt_tensor *bias, double eps) {
    static const char fn[] = "wgt_group_norm";
    if (check_nc(fn, x, eps) != WGT_OK || check_channels(fn, "weight", x, weight) != WGT_OK ||
        check_channels(fn, "bias", x, bias) != WGT_OK)
        return NULL;
    int64_t c = x->shape[1];
    if (groups < 1 || c % groups != 0) {
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: %lld groups do not divide %lld channels", fn, (long long)groups,
                  (long long)c);
        return NULL;
    }
    int64_t numel = wgt_tensor_numel(x);
    if (numel == 0) return wgt_zeros(x->storage->ctx, x->dtype, x->ndim, x->shape);
    /* Each sample's group is one row of the layer_norm kernel: [N, groups, the rest]. */
    int64_t rows[3] = {x->shape[0], groups, numel / x->shape[0] / groups};
    wgt_tensor *xr = wgt_reshape(x, 3, rows);
    wgt_tensor *h = xr ? wgt_layer_norm(xr, NULL, NULL, eps) : NULL;
    wgt_tensor *y = h ? wgt_reshape(h, x->ndim, x->shape) : NULL;
    wgt_release(xr);
    wgt_release(h);
    y = per_channel(y, weight, wgt_mul, x->ndim);
    return per_channel(y, bias, wgt_add, x->ndim);
}

/* ---- interpolation ---- */

static const char *const mode_names[] = {"nearest", "nearest-exact", "linear"};

/* The source position of output index o along an axis, as PyTorch computes it in f32
 * (upsampling's nearest_idx and area_pixel_compute_source_index). */
static float source_of(int64_t o, int64_t in, int64_t out, float ratio, wgt_interp_mode mode, int align_corners) {
    if (mode == WGT_INTERP_NEAREST) return in == out ? (float)o : floorf((float)o * ratio);
    if (mode == WGT_INTERP_NEAREST_EXACT) return in == out ? (float)o : floorf(((float)o + 0.5f) * ratio);
    if (align_corners) return out > 1 ? (float)o * ((float)(in - 1) / (float)(out - 1)) : 0.0f;
    float s = ((float)o + 0.5f) * ratio - 0.5f;
    return s < 0 ? 0 : s;
}

/* The gather positions (two for linear modes) and the weights of each output position. */
typedef struct {
    wgt_tensor *idx[2], *w[2];
    int n;
} axis_map;

static void map_release(axis_map *m) {
    for (int k = 0; k < 2; k++) wgt_release(m->idx[k]), wgt_release(m->w[k]);
}

static wgt_status map_build(wgt_context *ctx, wgt_dtype dtype, int ndim, int axis, int64_t in, int64_t out,
                            double ratio, wgt_interp_mode mode, int align_corners, axis_map *m) {
    memset(m, 0, sizeof *m);
    m->n = mode == WGT_INTERP_LINEAR ? 2 : 1;
    int32_t *idx = malloc(sizeof *idx * 2 * (size_t)(out ? out : 1));
    float *w = malloc(sizeof *w * 2 * (size_t)(out ? out : 1));
    if (!idx || !w) {
        free(idx);
        free(w);
        return wgt_error(WGT_ERR_OUT_OF_MEMORY, "wgt_interpolate: out of host memory for %lld positions", (long long)out);
    }
    for (int64_t o = 0; o < out; o++) {
        float s = source_of(o, in, out, (float)ratio, mode, align_corners);
        int64_t i0 = (int64_t)s;
        if (i0 > in - 1) i0 = in - 1;
        idx[o] = (int32_t)i0;
        idx[out + o] = (int32_t)(i0 + (i0 < in - 1));
        w[out + o] = s - (float)i0; /* PyTorch's lambdas: l1 = s - i0, l0 = 1 - l1 */
        w[o] = 1.0f - w[out + o];
    }
    /* The weights broadcast along axis: [out, 1, ...] up to the last dimension. */
    int64_t wshape[WGT_MAX_DIMS];
    wshape[0] = out;
    for (int d = 1; d < ndim - axis; d++) wshape[d] = 1;
    wgt_status st = WGT_OK;
    for (int k = 0; k < m->n && st == WGT_OK; k++) {
        m->idx[k] = wgt_tensor_from_data(ctx, WGT_I32, 1, &out, idx + k * out, sizeof *idx * (size_t)out,
                                         WGT_USAGE_DEFAULT);
        if (!m->idx[k]) st = wgt_last_status();
        if (st == WGT_OK && m->n == 2) {
            wgt_tensor *w32 = wgt_tensor_from_data(ctx, WGT_F32, ndim - axis, wshape, w + k * out,
                                                   sizeof *w * (size_t)out, WGT_USAGE_DEFAULT);
            m->w[k] = w32 && dtype != WGT_F32 ? wgt_cast(w32, dtype) : wgt_retain(w32);
            wgt_release(w32);
            if (!m->w[k]) st = wgt_last_status();
        }
    }
    free(idx);
    free(w);
    if (st != WGT_OK) map_release(m);
    return st;
}

/* r + term, or term when r is NULL; releases both inputs. */
static wgt_tensor *accumulate(wgt_tensor *r, wgt_tensor *term) {
    if (!r || !term) {
        wgt_release(r);
        return term;
    }
    wgt_tensor *s = wgt_add(r, term);
    wgt_release(r);
    wgt_release(term);
    return s;
}

/* Position k's contribution: forwards x gathered at idx[k] (times w[k]); transposed x (times
 * w[k]) scattered to idx[k] into zeros of length in. */
static wgt_tensor *contribution(wgt_tensor *x, int axis, int64_t in, const axis_map *m, int k, int transpose) {
    if (!transpose) {
        wgt_tensor *gathered = wgt_index_select(x, axis, m->idx[k]);
        if (!gathered || !m->w[k]) return gathered;
        wgt_tensor *r = wgt_mul(gathered, m->w[k]);
        wgt_release(gathered);
        return r;
    }
    wgt_tensor *weighted = m->w[k] ? wgt_mul(x, m->w[k]) : wgt_retain(x);
    wgt_tensor *w32 = weighted && weighted->dtype != WGT_F32 ? wgt_cast(weighted, WGT_F32) : wgt_retain(weighted);
    wgt_release(weighted);
    int64_t shape[WGT_MAX_DIMS];
    memcpy(shape, x->shape, sizeof(int64_t) * (size_t)x->ndim);
    shape[axis] = in;
    wgt_tensor *z = w32 ? wgt_zeros(x->storage->ctx, WGT_F32, x->ndim, shape) : NULL;
    wgt_tensor *r = z ? wgt_index_add(z, axis, m->idx[k], w32) : NULL;
    wgt_release(z);
    wgt_release(w32);
    return r;
}

wgt_tensor *wgt_interp_axis(wgt_tensor *x, int axis, int64_t in, int64_t out, double ratio, wgt_interp_mode mode,
                            int align_corners, int transpose) {
    axis_map m;
    if (map_build(x->storage->ctx, x->dtype, x->ndim, axis, in, out, ratio, mode, align_corners, &m) != WGT_OK)
        return NULL;
    wgt_tensor *r = NULL;
    int failed = 0;
    for (int k = 0; k < m.n && !failed; k++) {
        wgt_tensor *c = contribution(x, axis, in, &m, k, transpose);
        failed = !c;
        r = accumulate(r, c);
    }
    map_release(&m);
    if (failed) {
        wgt_release(r);
        return NULL;
    }
    if (r && transpose && x->dtype != WGT_F32) {
        wgt_tensor *c = wgt_cast(r, x->dtype);
        wgt_release(r);
        r = c;
    }
    return r;
}

/* The output lengths and ratios of interpolate's arguments (checked), or an error. */
wgt_status wgt_interp_plan(const char *fn, const wgt_tensor *x, const int64_t *size, const double *scale,
                           wgt_interp_mode mode, int align_corners, int64_t *out, double *ratio) {
    if (x->ndim < 3 || x->ndim > 5)
        return wgt_error(WGT_ERR_SHAPE, "%s: x has rank %d, wanted [N, C, spatial...] with 1 to 3 spatial dimensions",
                         fn, x->ndim);
    if ((int)mode < 0 || mode > WGT_INTERP_LINEAR)
        return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: unknown mode %d", fn, (int)mode);
    if (align_corners && mode != WGT_INTERP_LINEAR)
        return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: align_corners applies to linear modes only, not %s", fn,
                         mode_names[mode]);
    if (!size == !scale)
        return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: give exactly one of size and scale (%s)", fn,
                         size ? "both given" : "neither given");
    for (int d = 2; d < x->ndim; d++) {
        int64_t in = x->shape[d];
        if (in < 1) return wgt_error(WGT_ERR_SHAPE, "%s: spatial dimension %d of x has length %lld", fn, d, (long long)in);
        if (size) {
            if (size[d - 2] < 1)
                return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: size[%d] = %lld must be positive", fn, d - 2,
                                 (long long)size[d - 2]);
            out[d] = size[d - 2];
            ratio[d] = (double)in / (double)out[d];
        } else {
            double f = scale[d - 2];
            if (!(f > 0) || isinf(f) || floor((double)in * f) < 1 || floor((double)in * f) > 1e12)
                return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: scale[%d] = %g gives no valid length from %lld", fn,
                                 d - 2, f, (long long)in);
            out[d] = (int64_t)floor((double)in * f);
            ratio[d] = 1.0 / f;
        }
    }
    return WGT_OK;
}

wgt_tensor *wgt_interpolate(wgt_tensor *x, const int64_t *size, const double *scale, wgt_interp_mode mode,
                            int align_corners) {
    static const char fn[] = "wgt_interpolate";
    int64_t out[WGT_MAX_DIMS];
    double ratio[WGT_MAX_DIMS];
    if (wgt_check_tensor(fn, "x", x) != WGT_OK || check_float(fn, "x", x) != WGT_OK ||
        wgt_interp_plan(fn, x, size, scale, mode, align_corners, out, ratio) != WGT_OK)
        return NULL;
    /* The last axis first: linear modes then weigh as PyTorch's h0 (w0 x00 + w1 x01) + ... */
    wgt_tensor *y = wgt_retain(x);
    for (int d = x->ndim - 1; d >= 2 && y; d--) {
        wgt_tensor *next = wgt_interp_axis(y, d, x->shape[d], out[d], ratio[d], mode, align_corners, 0);
        wgt_release(y);
        y = next;
    }
    return y;
}
