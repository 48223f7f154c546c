/*
 * Convolutions: conv1d, conv2d and conv_transpose2d (PyTorch's layouts: NC(H)W inputs,
 * weights [Cout, Cin/groups, kH, kW], transposed weights [Cin, Cout/groups, kH, kW]). All
 * three reach the backend as one general convolution (backend.h, `conv`): the input and
 * weight seen as 5-D views that split the channels into groups, a stride, a padding before
 * (negative: cropping), a dilation of the kernel and a dilation of the input. conv1d is
 * conv2d with a height of 1. conv_transpose2d is the convolution of the input dilated by
 * the stride (zeros between its elements, which the kernel skips without reading) with the
 * flipped kernel, its input and output channels swapped: the weight view does both with
 * strides (negative along the kernel's axes), so nothing is copied here.
 *
 * The backend accumulates in f32 and writes f32; the bias (f32) is added to that and an f16
 * result is rounded once at the end, so f16 convolutions lose nothing to intermediate
 * rounding. These adds and casts are elementwise nodes, which the engine fuses.
 */
#include <stdio.h>
#include <string.h>

#include "conv.h"

static int is_float(wgt_dtype d) { return d == WGT_F32 || d == WGT_F16; }

/* Checks what every convolution shares: ranks, types, contexts and the bias length. */
static wgt_status check_operands(const char *fn, wgt_tensor *x, wgt_tensor *w, wgt_tensor *bias, int ndim) {
    if (wgt_check_tensor(fn, "x", x) != WGT_OK || wgt_check_tensor(fn, "weight", w) != WGT_OK ||
        wgt_check_same_context(fn, x, w) != WGT_OK)
        return wgt_last_status();
    if (bias && (wgt_check_tensor(fn, "bias", bias) != WGT_OK || wgt_check_same_context(fn, x, bias) != WGT_OK))
        return wgt_last_status();
    char sx[256], sw[256];
    wgt_format_shape(sx, sizeof sx, x->ndim, x->shape);
    wgt_format_shape(sw, sizeof sw, w->ndim, w->shape);
    if (x->ndim != ndim || w->ndim != ndim)
        return wgt_error(WGT_ERR_SHAPE, "%s: x and weight need rank %d, but x is %s and weight is %s", fn, ndim, sx, sw);
    if (!is_float(x->dtype))
        return wgt_error(WGT_ERR_DTYPE, "%s: takes floating types (f32, f16), not %s", fn, wgt_dtype_name(x->dtype));
    if (w->dtype != x->dtype || (bias && bias->dtype != x->dtype))
        return wgt_error(WGT_ERR_DTYPE, "%s: operand types differ (x is %s, weight is %s%s%s); cast first", fn,
                         wgt_dtype_name(x->dtype), wgt_dtype_name(w->dtype), bias ? ", bias is " : "",
                         bias ? wgt_dtype_name(bias->dtype) : "");
    return WGT_OK;
}

static wgt_status check_bias(const char *fn, wgt_tensor *bias, int64_t cout) {
    if (!bias || (bias->ndim == 1 && bias->shape[0] == cout)) return WGT_OK;
    char sb[256];
    wgt_format_shape(sb, sizeof sb, bias->ndim, bias->shape);
    return wgt_error(WGT_ERR_SHAPE, "%s: bias must be [%lld] (one per output channel), not %s", fn, (long long)cout, sb);
}

static wgt_status check_hyper(const char *fn, const char *name, const int64_t *v, int n, int64_t min) {
    for (int i = 0; i < n; i++)
        if (v[i] < min)
            return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: %s must be %lld or more, not %lld (dimension %d)", fn, name,
                             (long long)min, (long long)v[i], i);
    return WGT_OK;
}

wgt_tensor *wgt_conv_general(const char *fn, const wgt_conv_view *xv, const wgt_conv_view *wv,
                             const wgt_conv_geometry *g) {
    wgt_tensor *x = xv->t, *w = wv->t;
    wgt_context *ctx = x->storage->ctx;
    int64_t n = xv->shape[0], groups = xv->shape[1], cout_g = wv->shape[1];
    int64_t shape[4] = {n, groups * cout_g, g->out_size[0], g->out_size[1]};
    /* Nothing to read (no input channels, no taps or an empty image): zeros, and no operand
     * without memory reaches the backend. */
    int64_t reads = xv->shape[2] * wv->shape[3] * wv->shape[4] * xv->shape[3] * xv->shape[4];
    if (reads == 0) return wgt_zeros(ctx, WGT_F32, 4, shape);
    wgt_tensor *out = wgt_tensor_new(ctx, fn, WGT_F32, 4, shape, WGT_USAGE_DEFAULT);
    if (!out || wgt_tensor_numel(out) == 0) return out;
    if (wgt_check_kernel_size(fn, x) != WGT_OK || wgt_check_kernel_size(fn, w) != WGT_OK ||
        wgt_check_kernel_size(fn, out) != WGT_OK)
        goto fail;
    if (!ctx->backend->conv) {
        wgt_error(WGT_ERR_INTERNAL, "%s: the %s backend has no convolution kernel", fn, ctx->backend->name);
        goto fail;
    }
    wgt_operand ox, ow, oo;
    if (wgt_view_operand(x, 5, xv->shape, xv->strides, &ox) != WGT_OK ||
        wgt_view_operand(w, 5, wv->shape, wv->strides, &ow) != WGT_OK || wgt_output_operand(out, &oo) != WGT_OK)
        goto fail;
    ox.offset += xv->offset;
    ow.offset += wv->offset;
    int64_t oshape[5] = {n, groups, cout_g, g->out_size[0], g->out_size[1]};
    oo.ndim = 5;
    memcpy(oo.shape, oshape, sizeof oshape);
    wgt_contiguous_strides(5, oo.shape, oo.strides);
    int64_t params[8] = {g->stride[0],   g->stride[1],   g->pad[0],         g->pad[1],
                         g->dilation[0], g->dilation[1], g->in_dilation[0], g->in_dilation[1]};
    if (wgt_record_conv(ctx, fn, &oo, &ox, &ow, params) != WGT_OK) goto fail;
    return out;
fail:
    wgt_release(out);
    return NULL;
}

/* out as t's type (out released). */
static wgt_tensor *cast_to(wgt_tensor *out, wgt_dtype dtype) {
    if (!out || out->dtype == dtype) return out;
    wgt_tensor *c = wgt_cast(out, dtype);
    wgt_release(out);
    return c;
}

/* The public ops' result: conv(x5, w5) as f32, plus the bias, in x's type. */
static wgt_tensor *record_conv(const char *fn, wgt_tensor *bias, const wgt_conv_view *xv, const wgt_conv_view *wv,
                               const wgt_conv_geometry *g, int spatial) {
    wgt_tensor *out = wgt_conv_general(fn, xv, wv, g);
    if (!out) return NULL;
    int64_t cout = out->shape[1];
    if (bias) {
        wgt_tensor *b32 = bias->dtype == WGT_F32 ? bias : wgt_cast(bias, WGT_F32);
        int64_t bshape[4] = {1, cout, 1, 1};
        wgt_tensor *b4 = b32 ? wgt_reshape(b32, 4, bshape) : NULL;
        wgt_tensor *sum = b4 ? wgt_add(out, b4) : NULL;
        if (b32 != bias) wgt_release(b32);
        wgt_release(b4);
        wgt_release(out);
        out = sum;
        if (!out) return NULL;
    }
    out = cast_to(out, xv->t->dtype);
    if (out && spatial == 1) { /* conv1d: drop the height of 1 */
        int64_t s3[3] = {out->shape[0], out->shape[1], out->shape[3]};
        wgt_tensor *r = wgt_reshape(out, 3, s3);
        wgt_release(out);
        out = r;
    }
    return out;
}

/* Output length of a convolution along one dimension, or -1 when the dilated kernel does not
 * fit the padded input. */
static int64_t conv_out_len(int64_t in, int64_t pad_total, int64_t k, int64_t stride, int64_t dilation) {
    int64_t span = dilation * (k - 1) + 1, padded = in + pad_total;
    if (span > padded) return -1;
    return (padded - span) / stride + 1;
}

/* conv1d and conv2d: x [N, Cin, H, W], w [Cout, Cin/groups, kH, kW] (x and w seen as 4-D). */
static wgt_tensor *conv_forward(const char *fn, wgt_tensor *x, wgt_tensor *w, wgt_tensor *bias, const int64_t *x_shape,
                                const int64_t *x_strides, const int64_t *w_shape, const int64_t *w_strides,
                                const int64_t *stride, const int64_t *padding, const int64_t *dilation,
                                int64_t groups, int spatial) {
    int first = 2 - spatial; /* conv1d checks only the width */
    if (check_hyper(fn, "stride", stride + first, spatial, 1) != WGT_OK ||
        check_hyper(fn, "dilation", dilation + first, spatial, 1) != WGT_OK)
        return NULL;
    int same = 0;
    for (int i = first; i < 2; i++) {
        if (padding[i] == WGT_PADDING_SAME) same = 1;
        else if (padding[i] < 0) {
            wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: padding must be 0 or more (or WGT_PADDING_SAME), not %lld (dimension %d)",
                      fn, (long long)padding[i], i - first);
            return NULL;
        }
    }
    if (same && ((padding[first] != WGT_PADDING_SAME) || padding[1] != WGT_PADDING_SAME)) {
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: padding WGT_PADDING_SAME applies to every dimension or none", fn);
        return NULL;
    }
    if (same && (stride[0] != 1 || stride[1] != 1)) {
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: padding WGT_PADDING_SAME needs stride 1, not %lld", fn,
                  (long long)(stride[0] != 1 ? stride[0] : stride[1]));
        return NULL;
    }
    int64_t n = x_shape[0], cin = x_shape[1], cout = w_shape[0];
    if (groups < 1) {
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: groups must be 1 or more, not %lld", fn, (long long)groups);
        return NULL;
    }
    if (cin % groups != 0 || cout % groups != 0) {
        wgt_error(WGT_ERR_SHAPE, "%s: groups = %lld must divide the input channels (%lld) and the output channels (%lld)",
                  fn, (long long)groups, (long long)cin, (long long)cout);
        return NULL;
    }
    if (w_shape[1] != cin / groups) {
        wgt_error(WGT_ERR_SHAPE, "%s: weight has %lld input channels per group, but x has %lld channels in %lld group%s (%lld each)",
                  fn, (long long)w_shape[1], (long long)cin, (long long)groups, groups == 1 ? "" : "s",
                  (long long)(cin / groups));
        return NULL;
    }
    if (check_bias(fn, bias, cout) != WGT_OK) return NULL;
    wgt_conv_geometry g;
    for (int i = 0; i < 2; i++) {
        int64_t k = w_shape[2 + i], total = same ? dilation[i] * (k - 1) : 2 * padding[i];
        g.stride[i] = stride[i];
        g.dilation[i] = dilation[i];
        g.in_dilation[i] = 1;
        g.pad[i] = total / 2; /* "same" pads the odd one at the end, as PyTorch does */
        g.out_size[i] = conv_out_len(x_shape[2 + i], total, k, stride[i], dilation[i]);
        if (g.out_size[i] < 0) {
            wgt_error(WGT_ERR_SHAPE, "%s: the kernel (%lld, dilation %lld: spans %lld) is larger than the padded input (%lld + %lld padding) along %s",
                      fn, (long long)k, (long long)dilation[i], (long long)(dilation[i] * (k - 1) + 1),
                      (long long)x_shape[2 + i], (long long)total, spatial == 1 ? "the length" : i ? "the width" : "the height");
            return NULL;
        }
    }
    wgt_conv_view xv = {x, {n, groups, cin / groups, x_shape[2], x_shape[3]},
                        {x_strides[0], x_strides[1] * (cin / groups), x_strides[1], x_strides[2], x_strides[3]}, 0};
    wgt_conv_view wv = {w, {groups, cout / groups, w_shape[1], w_shape[2], w_shape[3]},
                        {w_strides[0] * (cout / groups), w_strides[0], w_strides[1], w_strides[2], w_strides[3]}, 0};
    return record_conv(fn, bias, &xv, &wv, &g, spatial);
}

/* w [Cin, Cout_g, kH, kW] (a transposed convolution's, or conv2d's seen from its output) as
 * the weight of the convolution that runs it: [G, Cout_g, Cin_g, kH, kW], channels swapped
 * and the kernel flipped, by strides alone. */
static wgt_conv_view transposed_weight(wgt_tensor *w, int64_t groups) {
    const int64_t *st = w->strides;
    int64_t cin_g = w->shape[0] / groups;
    wgt_conv_view v = {w, {groups, w->shape[1], cin_g, w->shape[2], w->shape[3]},
                       {st[0] * cin_g, st[1], st[0], -st[2], -st[3]},
                       (w->shape[2] > 0 ? w->shape[2] - 1 : 0) * st[2] + (w->shape[3] > 0 ? w->shape[3] - 1 : 0) * st[3]};
    return v;
}

static const int64_t ones2[2] = {1, 1}, zeros2[2] = {0, 0};

wgt_tensor *wgt_conv2d(wgt_tensor *x, wgt_tensor *weight, wgt_tensor *bias, const int64_t *stride,
                       const int64_t *padding, const int64_t *dilation, int64_t groups) {
    static const char fn[] = "wgt_conv2d";
    if (check_operands(fn, x, weight, bias, 4) != WGT_OK) return NULL;
    return conv_forward(fn, x, weight, bias, x->shape, x->strides, weight->shape, weight->strides,
                        stride ? stride : ones2, padding ? padding : zeros2, dilation ? dilation : ones2, groups, 2);
}

wgt_tensor *wgt_conv1d(wgt_tensor *x, wgt_tensor *weight, wgt_tensor *bias, int64_t stride, int64_t padding,
                       int64_t dilation, int64_t groups) {
    static const char fn[] = "wgt_conv1d";
    if (check_operands(fn, x, weight, bias, 3) != WGT_OK) return NULL;
    /* A height of 1: the 2-D kernel with a 1-row input and a 1-row kernel. */
    int64_t xs[4] = {x->shape[0], x->shape[1], 1, x->shape[2]}, xst[4] = {x->strides[0], x->strides[1], 0, x->strides[2]};
    int64_t ws[4] = {weight->shape[0], weight->shape[1], 1, weight->shape[2]};
    int64_t wst[4] = {weight->strides[0], weight->strides[1], 0, weight->strides[2]};
    int64_t s[2] = {1, stride}, p[2] = {padding == WGT_PADDING_SAME ? WGT_PADDING_SAME : 0, padding}, d[2] = {1, dilation};
    return conv_forward(fn, x, weight, bias, xs, xst, ws, wst, s, p, d, groups, 1);
}

wgt_tensor *wgt_conv_transpose2d(wgt_tensor *x, wgt_tensor *weight, wgt_tensor *bias, const int64_t *stride,
                                 const int64_t *padding, const int64_t *output_padding, const int64_t *dilation,
                                 int64_t groups) {
    static const char fn[] = "wgt_conv_transpose2d";
    if (check_operands(fn, x, weight, bias, 4) != WGT_OK) return NULL;
    if (!stride) stride = ones2;
    if (!padding) padding = zeros2;
    if (!output_padding) output_padding = zeros2;
    if (!dilation) dilation = ones2;
    if (check_hyper(fn, "stride", stride, 2, 1) != WGT_OK || check_hyper(fn, "dilation", dilation, 2, 1) != WGT_OK ||
        check_hyper(fn, "padding", padding, 2, 0) != WGT_OK ||
        check_hyper(fn, "output_padding", output_padding, 2, 0) != WGT_OK)
        return NULL;
    for (int i = 0; i < 2; i++)
        if (output_padding[i] >= stride[i] && output_padding[i] >= dilation[i]) {
            wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: output_padding (%lld) must be smaller than the stride (%lld) or the dilation (%lld) (dimension %d)",
                      fn, (long long)output_padding[i], (long long)stride[i], (long long)dilation[i], i);
            return NULL;
        }
    int64_t n = x->shape[0], cin = x->shape[1], cout_g = weight->shape[1];
    if (groups < 1) {
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: groups must be 1 or more, not %lld", fn, (long long)groups);
        return NULL;
    }
    if (cin % groups != 0) {
        wgt_error(WGT_ERR_SHAPE, "%s: groups = %lld must divide the input channels (%lld)", fn, (long long)groups,
                  (long long)cin);
        return NULL;
    }
    if (weight->shape[0] != cin) {
        char sw[256];
        wgt_format_shape(sw, sizeof sw, weight->ndim, weight->shape);
        wgt_error(WGT_ERR_SHAPE, "%s: weight %s must have %lld input channels (dimension 0), as x has", fn, sw,
                  (long long)cin);
        return NULL;
    }
    if (check_bias(fn, bias, cout_g * groups) != WGT_OK) return NULL;
    int64_t cin_g = cin / groups;
    wgt_conv_geometry g;
    for (int i = 0; i < 2; i++) {
        int64_t k = weight->shape[2 + i], reach = dilation[i] * (k - 1);
        g.stride[i] = 1;
        g.dilation[i] = dilation[i];
        g.in_dilation[i] = stride[i];
        g.pad[i] = reach - padding[i];
        g.out_size[i] = (x->shape[2 + i] - 1) * stride[i] - 2 * padding[i] + reach + output_padding[i] + 1;
        if (g.out_size[i] < 1) {
            wgt_error(WGT_ERR_SHAPE, "%s: the output would have %s %lld (input %lld, stride %lld, padding %lld, kernel %lld, dilation %lld); reduce the padding",
                      fn, i ? "width" : "height", (long long)g.out_size[i], (long long)x->shape[2 + i],
                      (long long)stride[i], (long long)padding[i], (long long)k, (long long)dilation[i]);
            return NULL;
        }
    }
    const int64_t *xs = x->strides;
    wgt_conv_view xv = {x, {n, groups, cin_g, x->shape[2], x->shape[3]}, {xs[0], xs[1] * cin_g, xs[1], xs[2], xs[3]}, 0};
    wgt_conv_view wv = transposed_weight(weight, groups);
    return record_conv(fn, bias, &xv, &wv, &g, 2);
}

/* ---- for gradients (src/autograd/rules_conv.c) ---- */

wgt_tensor *wgt_conv2d_sized(const char *fn, wgt_tensor *x, wgt_tensor *w, const wgt_conv_spec *s, int64_t oh,
                             int64_t ow) {
    int64_t G = s->groups, cin_g = x->shape[1] / G, cout_g = w->shape[0] / G;
    const int64_t *xs = x->strides, *ws = w->strides;
    wgt_conv_view xv = {x, {x->shape[0], G, cin_g, x->shape[2], x->shape[3]}, {xs[0], xs[1] * cin_g, xs[1], xs[2], xs[3]}, 0};
    wgt_conv_view wv = {w, {G, cout_g, w->shape[1], w->shape[2], w->shape[3]}, {ws[0] * cout_g, ws[0], ws[1], ws[2], ws[3]}, 0};
    wgt_conv_geometry g = {{s->stride[0], s->stride[1]}, {s->pad[0], s->pad[1]}, {s->dilation[0], s->dilation[1]},
                           {1, 1}, {oh, ow}};
    return cast_to(wgt_conv_general(fn, &xv, &wv, &g), x->dtype);
}

/* gx [n, ci, ih, iw] = sum of g [n, co, oh, ow] w [co, ci, kh, kw] over oh s - p + kh d = ih:
 * the convolution of g, dilated by the stride, with the flipped kernel, channels swapped. */
wgt_tensor *wgt_conv2d_input_grad(const char *fn, wgt_tensor *g, wgt_tensor *w, const wgt_conv_spec *s, int64_t h,
                                  int64_t w_size) {
    int64_t G = s->groups, cout_g = g->shape[1] / G;
    const int64_t *gs = g->strides;
    wgt_conv_view gv = {g, {g->shape[0], G, cout_g, g->shape[2], g->shape[3]}, {gs[0], gs[1] * cout_g, gs[1], gs[2], gs[3]}, 0};
    wgt_conv_view wv = transposed_weight(w, G); /* [Cout, Cin_g, ...] read as [G, Cin_g, Cout_g, ...] */
    wgt_conv_geometry geo = {{1, 1},
                             {s->dilation[0] * (w->shape[2] - 1) - s->pad[0], s->dilation[1] * (w->shape[3] - 1) - s->pad[1]},
                             {s->dilation[0], s->dilation[1]},
                             {s->stride[0], s->stride[1]},
                             {h, w_size}};
    return cast_to(wgt_conv_general(fn, &gv, &wv, &geo), g->dtype);
}

/* gw [co, ci, kh, kw] = sum over n, oh, ow of g [n, co, oh, ow] x [n, ci, oh s - p + kh d, ...]:
 * a convolution whose images are x's channels, whose channels are the images, and whose
 * kernel is g (stride and dilation trade places); its result [Cin_g, Cout, kh, kw] is
 * transposed back. */
wgt_tensor *wgt_conv2d_weight_grad(const char *fn, wgt_tensor *x, wgt_tensor *g, const wgt_conv_spec *s, int64_t kh,
                                   int64_t kw) {
    int64_t G = s->groups, cin_g = x->shape[1] / G, cout_g = g->shape[1] / G, N = x->shape[0];
    const int64_t *xs = x->strides, *gs = g->strides;
    wgt_conv_view xv = {x, {cin_g, G, N, x->shape[2], x->shape[3]}, {xs[1], xs[1] * cin_g, xs[0], xs[2], xs[3]}, 0};
    wgt_conv_view gv = {g, {G, cout_g, N, g->shape[2], g->shape[3]}, {gs[1] * cout_g, gs[1], gs[0], gs[2], gs[3]}, 0};
    wgt_conv_geometry geo = {{s->dilation[0], s->dilation[1]}, {s->pad[0], s->pad[1]}, {s->stride[0], s->stride[1]},
                             {1, 1}, {kh, kw}};
    wgt_tensor *r = wgt_conv_general(fn, &xv, &gv, &geo);
    static const int swap[4] = {1, 0, 2, 3};
    wgt_tensor *t = r ? wgt_permute(r, swap) : NULL;
    wgt_release(r);
    wgt_tensor *c = t ? wgt_contiguous(t) : NULL;
    wgt_release(t);
    return cast_to(c, g->dtype);
}
