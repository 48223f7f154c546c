/*
 * Pooling over the last two dimensions of x [N, C, H, W], with PyTorch's sizes and rules
 * (torch.nn.functional's max_pool2d, avg_pool2d, adaptive_avg_pool2d), composed from other
 * ops so both backends run it:
 * - max_pool2d pads with -inf and takes the maximum of one strided view per kernel tap, an
 *   elementwise chain the engine fuses;
 * - avg_pool2d is a depthwise convolution with a kernel of ones (the general convolution of
 *   conv.c, which reads zeros for padding and for ceil_mode's windows past the end), divided
 *   by each window's count: the padded window clipped to the padded input
 *   (count_include_pad), or the input elements it covers;
 * - adaptive_avg_pool2d is A x B^T with averaging matrices A [OH, H] and B [OW, W] (window i
 *   spans floor(i H / OH) to ceil((i + 1) H / OH)), two matrix products.
 * Their gradients (pool_grad functions below, for src/autograd/rules_pool.c) scatter through
 * the same convolution with the input dilated by the stride: averages spread g over each
 * window, a maximum sends it to the first element of its window holding the maximum.
 * Sums run in f32 and an f16 result is rounded once.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "conv.h"
#include "pool.h"

static wgt_tensor *cast_to(wgt_tensor *t, wgt_dtype dtype) {
    if (!t || t->dtype == dtype) return t;
    wgt_tensor *c = wgt_cast(t, dtype);
    wgt_release(t);
    return c;
}

/* PyTorch's pooling_output_shape: the last window must start inside the input or its
 * padding before. -1 when no window fits. */
static int64_t pool_out_len(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, int ceil_mode) {
    int64_t span = d * (k - 1) + 1, room = in + 2 * p - span;
    if (room < 0) return -1;
    int64_t out = (room + (ceil_mode ? s - 1 : 0)) / s + 1;
    if (ceil_mode && (out - 1) * s >= in + p) out--;
    return out;
}

wgt_status wgt_pool_check(const char *fn, wgt_tensor *x, const wgt_pool_spec *p, int64_t *out_size) {
    if (wgt_check_tensor(fn, "x", x) != WGT_OK) return wgt_last_status();
    if (x->ndim != 4) {
        char sx[256];
        wgt_format_shape(sx, sizeof sx, x->ndim, x->shape);
        return wgt_error(WGT_ERR_SHAPE, "%s: x must be [N, C, H, W], not %s", fn, sx);
    }
    if (x->dtype != WGT_F32 && x->dtype != WGT_F16)
        return wgt_error(WGT_ERR_DTYPE, "%s: takes floating types (f32, f16), not %s", fn, wgt_dtype_name(x->dtype));
    for (int i = 0; i < 2; i++) {
        const char *dim = i ? "width" : "height";
        if (p->kernel[i] < 1 || p->stride[i] < 1 || p->dilation[i] < 1)
            return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: kernel_size (%lld), stride (%lld) and dilation (%lld) must be 1 or more (%s)",
                             fn, (long long)p->kernel[i], (long long)p->stride[i], (long long)p->dilation[i], dim);
        int64_t span = p->dilation[i] * (p->kernel[i] - 1) + 1;
        if (p->pad[i] < 0 || 2 * p->pad[i] > span)
            return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: padding %lld must lie in [0, %lld], half the kernel's span of %lld (%s)",
                             fn, (long long)p->pad[i], (long long)(span / 2), (long long)span, dim);
        out_size[i] = pool_out_len(x->shape[2 + i], p->kernel[i], p->stride[i], p->pad[i], p->dilation[i], p->ceil_mode);
        if (out_size[i] < 1)
            return wgt_error(WGT_ERR_SHAPE, "%s: the kernel (%lld, spanning %lld) is larger than the padded input (%lld + 2 x %lld) along the %s",
                             fn, (long long)p->kernel[i], (long long)span, (long long)x->shape[2 + i], (long long)p->pad[i], dim);
    }
    return WGT_OK;
}

/* ---- max ---- */

/* x padded with -inf on every side the windows reach. */
static wgt_tensor *pad_for_max(wgt_tensor *x, const wgt_pool_spec *p, const int64_t *out) {
    int64_t before[4] = {0, 0, p->pad[0], p->pad[1]}, after[4] = {0, 0, p->pad[0], p->pad[1]};
    for (int i = 0; i < 2; i++) {
        int64_t reach = (out[i] - 1) * p->stride[i] + p->dilation[i] * (p->kernel[i] - 1) + 1;
        int64_t extra = reach - (x->shape[2 + i] + 2 * p->pad[i]);
        if (extra > 0) after[2 + i] += extra; /* ceil_mode's last windows */
    }
    return wgt_pad(x, before, after, -INFINITY);
}

/* Tap (i, j) of every window: a strided view of the padded input. */
static wgt_tensor *tap(wgt_tensor *padded, const wgt_pool_spec *p, const int64_t *shape, int64_t i, int64_t j) {
    const int64_t *ps = padded->strides;
    int64_t strides[4] = {ps[0], ps[1], ps[2] * p->stride[0], ps[3] * p->stride[1]};
    int64_t offset = padded->offset + i * p->dilation[0] * ps[2] + j * p->dilation[1] * ps[3];
    return wgt_as_strided(padded, 4, shape, strides, offset);
}

wgt_tensor *wgt_max_pool2d(wgt_tensor *x, const int64_t *kernel_size, const int64_t *stride, const int64_t *padding,
                           const int64_t *dilation, int ceil_mode) {
    static const char fn[] = "wgt_max_pool2d";
    wgt_pool_spec p;
    int64_t out[2];
    if (wgt_pool_spec_make(fn, kernel_size, stride, padding, dilation, ceil_mode, 1, &p) != WGT_OK ||
        wgt_pool_check(fn, x, &p, out) != WGT_OK)
        return NULL;
    int64_t shape[4] = {x->shape[0], x->shape[1], out[0], out[1]};
    if (wgt_numel(4, shape) == 0) return wgt_zeros(x->storage->ctx, x->dtype, 4, shape);
    wgt_tensor *padded = pad_for_max(x, &p, out), *acc = NULL;
    for (int64_t i = 0; padded && i < p.kernel[0]; i++)
        for (int64_t j = 0; j < p.kernel[1]; j++) {
            wgt_tensor *v = tap(padded, &p, shape, i, j), *m = acc && v ? wgt_maximum(acc, v) : v;
            if (acc && v) wgt_release(v);
            wgt_release(acc);
            if (!(acc = m)) goto done;
        }
done:
    wgt_release(padded);
    return acc;
}

/* The one-hot kernel that sends input channel t of a window (tap t, row-major) to its tap, as
 * the flipped kernel of a convolution over the stride-dilated input: [kk, kH, kW] of dtype. */
static wgt_tensor *one_hot_taps(wgt_context *ctx, const wgt_pool_spec *p, wgt_dtype dtype) {
    int64_t kk = p->kernel[0] * p->kernel[1], shape[3] = {kk, p->kernel[0], p->kernel[1]};
    float *v = calloc((size_t)(kk * kk), sizeof *v);
    if (!v) {
        wgt_error(WGT_ERR_OUT_OF_MEMORY, "wgt_max_pool2d: out of host memory for the gradient's kernel");
        return NULL;
    }
    for (int64_t t = 0; t < kk; t++) v[t * kk + (kk - 1 - t)] = 1.0f; /* flipped: tap t sits at kk - 1 - t */
    wgt_tensor *w = wgt_tensor_from_data(ctx, WGT_F32, 3, shape, v, sizeof *v * (size_t)(kk * kk), WGT_USAGE_DEFAULT);
    free(v);
    return cast_to(w, dtype);
}

/* gx from gs [N, C, kk, OH, OW] (the gradient each tap receives): every window's taps scattered
 * back to the input positions they read, summed. w5 is the kernel as [G or 1 (stride 0), 1,
 * kk, kH, kW] with flipped taps. */
static wgt_tensor *scatter_taps(const char *fn, wgt_tensor *gs, wgt_tensor *w, const int64_t *w_strides,
                                const wgt_pool_spec *p, const int64_t *in_shape) {
    const int64_t *s = gs->strides;
    int64_t kk = gs->shape[2];
    wgt_conv_view gv = {gs, {gs->shape[0], gs->shape[1], kk, gs->shape[3], gs->shape[4]}, {s[0], s[1], s[2], s[3], s[4]}, 0};
    wgt_conv_view wv = {w, {gs->shape[1], 1, kk, p->kernel[0], p->kernel[1]},
                        {0, 0, w_strides[0], w_strides[1], w_strides[2]}, 0};
    wgt_conv_geometry g = {{1, 1},
                           {p->dilation[0] * (p->kernel[0] - 1) - p->pad[0], p->dilation[1] * (p->kernel[1] - 1) - p->pad[1]},
                           {p->dilation[0], p->dilation[1]},
                           {p->stride[0], p->stride[1]},
                           {in_shape[2], in_shape[3]}};
    return wgt_conv_general(fn, &gv, &wv, &g);
}

wgt_tensor *wgt_max_pool2d_grad(const char *fn, wgt_tensor *x, wgt_tensor *out, wgt_tensor *g, const wgt_pool_spec *p) {
    int64_t osz[2] = {out->shape[2], out->shape[3]}, kk = p->kernel[0] * p->kernel[1];
    if (wgt_tensor_numel(out) == 0 || wgt_tensor_numel(x) == 0) return wgt_zeros(x->storage->ctx, x->dtype, 4, x->shape);
    wgt_tensor **parts = calloc((size_t)kk, sizeof *parts);
    wgt_tensor *padded = pad_for_max(x, p, osz), *taken = NULL, *zero = wgt_full(x->storage->ctx, g->dtype, 0, NULL, 0.0);
    wgt_tensor *result = NULL;
    if (!parts || !padded || !zero) goto done;
    /* Each window's gradient goes to the first tap holding its maximum (row-major), as
     * PyTorch's argmax picks it. */
    for (int64_t t = 0; t < kk; t++) {
        wgt_tensor *v = tap(padded, p, out->shape, t / p->kernel[1], t % p->kernel[1]);
        wgt_tensor *hit = v ? wgt_eq(v, out) : NULL, *fresh = NULL;
        wgt_release(v);
        if (hit && taken) {
            wgt_tensor *not_taken = wgt_logical_not(taken);
            fresh = not_taken ? wgt_logical_and(hit, not_taken) : NULL;
            wgt_release(not_taken);
        } else if (hit) {
            fresh = wgt_retain(hit);
        }
        wgt_release(hit);
        if (!fresh) goto done;
        wgt_tensor *now = taken ? wgt_logical_or(taken, fresh) : wgt_retain(fresh);
        wgt_release(taken);
        taken = now;
        parts[t] = wgt_where(fresh, g, zero);
        wgt_release(fresh);
        if (!taken || !parts[t]) goto done;
    }
    wgt_tensor *stacked = wgt_stack(parts, (int)kk, 2), *w = stacked ? one_hot_taps(x->storage->ctx, p, g->dtype) : NULL;
    if (w) result = cast_to(scatter_taps(fn, stacked, w, w->strides, p, x->shape), x->dtype);
    wgt_release(stacked);
    wgt_release(w);
done:
    for (int64_t t = 0; parts && t < kk; t++) wgt_release(parts[t]);
    free(parts);
    wgt_release(padded);
    wgt_release(taken);
    wgt_release(zero);
    return result;
}

/* ---- average ---- */

/* Each output's divisor [OH, OW] (f32): its window clipped to the padded input, or to the
 * input alone without count_include_pad. */
static wgt_tensor *divisors(wgt_context *ctx, const wgt_pool_spec *p, const int64_t *in, const int64_t *out) {
    float *v = malloc(sizeof *v * (size_t)(out[0] * out[1]));
    if (!v) {
        wgt_error(WGT_ERR_OUT_OF_MEMORY, "wgt_avg_pool2d: out of host memory for the divisors");
        return NULL;
    }
    for (int64_t i = 0; i < out[0]; i++)
        for (int64_t j = 0; j < out[1]; j++) {
            int64_t n[2], ij[2] = {i, j};
            for (int d = 0; d < 2; d++) {
                int64_t start = ij[d] * p->stride[d] - p->pad[d], end = start + p->kernel[d];
                if (end > in[d] + p->pad[d]) end = in[d] + p->pad[d];
                n[d] = end - start;
                if (!p->count_include_pad) n[d] = (end < in[d] ? end : in[d]) - (start > 0 ? start : 0);
            }
            v[i * out[1] + j] = (float)(n[0] * n[1]);
        }
    wgt_tensor *t = wgt_tensor_from_data(ctx, WGT_F32, 2, out, v, sizeof *v * (size_t)(out[0] * out[1]), WGT_USAGE_DEFAULT);
    free(v);
    return t;
}

wgt_tensor *wgt_avg_pool2d(wgt_tensor *x, const int64_t *kernel_size, const int64_t *stride, const int64_t *padding,
                           int ceil_mode, int count_include_pad) {
    static const char fn[] = "wgt_avg_pool2d";
    wgt_pool_spec p;
    int64_t out[2];
    if (wgt_pool_spec_make(fn, kernel_size, stride, padding, NULL, ceil_mode, count_include_pad, &p) != WGT_OK ||
        wgt_pool_check(fn, x, &p, out) != WGT_OK)
        return NULL;
    wgt_context *ctx = x->storage->ctx;
    int64_t shape[4] = {x->shape[0], x->shape[1], out[0], out[1]};
    if (wgt_numel(4, shape) == 0) return wgt_zeros(ctx, x->dtype, 4, shape);
    /* A depthwise convolution with a kernel of ones: one 1-element tensor seen with strides 0. */
    wgt_tensor *one = wgt_full(ctx, x->dtype, 0, NULL, 1.0), *div = divisors(ctx, &p, x->shape + 2, out), *sum = NULL;
    if (one && div) {
        const int64_t *s = x->strides;
        wgt_conv_view xv = {x, {x->shape[0], x->shape[1], 1, x->shape[2], x->shape[3]}, {s[0], s[1], 0, s[2], s[3]}, 0};
        wgt_conv_view wv = {one, {x->shape[1], 1, 1, p.kernel[0], p.kernel[1]}, {0, 0, 0, 0, 0}, 0};
        wgt_conv_geometry g = {{p.stride[0], p.stride[1]}, {p.pad[0], p.pad[1]}, {1, 1}, {1, 1}, {out[0], out[1]}};
        sum = wgt_conv_general(fn, &xv, &wv, &g);
    }
    wgt_tensor *avg = sum ? wgt_div(sum, div) : NULL;
    wgt_release(one);
    wgt_release(div);
    wgt_release(sum);
    return cast_to(avg, x->dtype);
}

wgt_tensor *wgt_avg_pool2d_grad(const char *fn, wgt_tensor *g, const int64_t *in_shape, const wgt_pool_spec *p) {
    wgt_context *ctx = g->storage->ctx;
    int64_t out[2] = {g->shape[2], g->shape[3]};
    if (wgt_tensor_numel(g) == 0) return wgt_zeros(ctx, g->dtype, 4, in_shape);
    wgt_tensor *div = divisors(ctx, p, in_shape + 2, out), *g32 = wgt_cast(g, WGT_F32);
    wgt_tensor *share = div && g32 ? wgt_div(g32, div) : NULL, *one = wgt_full(ctx, WGT_F32, 0, NULL, 1.0);
    wgt_tensor *shares = share ? wgt_unsqueeze(share, 2) : NULL, *r = NULL; /* [N, C, 1, OH, OW] */
    if (shares && one) {
        static const int64_t zero3[3] = {0, 0, 0};
        r = scatter_taps(fn, shares, one, zero3, p, in_shape);
    }
    wgt_release(div);
    wgt_release(g32);
    wgt_release(share);
    wgt_release(shares);
    wgt_release(one);
    return cast_to(r, g->dtype);
}

/* ---- adaptive average ---- */

/* The averaging matrix [out, in] (transposed: [in, out]) in f32. */
static wgt_tensor *adaptive_matrix(wgt_context *ctx, int64_t out, int64_t in, int transposed) {
    float *v = calloc((size_t)(out * in > 0 ? out * in : 1), sizeof *v);
    if (!v) {
        wgt_error(WGT_ERR_OUT_OF_MEMORY, "wgt_adaptive_avg_pool2d: out of host memory for the averaging matrix");
        return NULL;
    }
    for (int64_t i = 0; i < out; i++) {
        int64_t start = i * in / out, end = ((i + 1) * in + out - 1) / out;
        for (int64_t h = start; h < end; h++) v[transposed ? h * out + i : i * in + h] = 1.0f / (float)(end - start);
    }
    int64_t shape[2] = {transposed ? in : out, transposed ? out : in};
    wgt_tensor *t = wgt_tensor_from_data(ctx, WGT_F32, 2, shape, v, sizeof *v * (size_t)(out * in), WGT_USAGE_DEFAULT);
    free(v);
    return t;
}

/* left [a, b] @ t [N, C, b, c] @ right [c, d] in f32, as t's type. */
static wgt_tensor *sandwich(wgt_tensor *left, wgt_tensor *t, wgt_tensor *right) {
    wgt_tensor *t32 = t->dtype == WGT_F32 ? wgt_retain(t) : wgt_cast(t, WGT_F32);
    wgt_tensor *lt = left && t32 ? wgt_matmul(left, t32) : NULL, *r = lt && right ? wgt_matmul(lt, right) : NULL;
    wgt_release(t32);
    wgt_release(lt);
    return cast_to(r, t->dtype);
}

wgt_tensor *wgt_adaptive_avg_pool2d(wgt_tensor *x, int64_t out_h, int64_t out_w) {
    static const char fn[] = "wgt_adaptive_avg_pool2d";
    if (wgt_check_tensor(fn, "x", x) != WGT_OK) return NULL;
    wgt_pool_spec unit = {{1, 1}, {1, 1}, {0, 0}, {1, 1}, 0, 1};
    int64_t ignored[2];
    if (wgt_pool_check(fn, x, &unit, ignored) != WGT_OK) return NULL;
    if (out_h < 1 || out_w < 1) {
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: output size (%lld, %lld) must be 1 or more, over an input of %lld x %lld", fn,
                  (long long)out_h, (long long)out_w, (long long)x->shape[2], (long long)x->shape[3]);
        return NULL;
    }
    wgt_context *ctx = x->storage->ctx;
    wgt_tensor *a = adaptive_matrix(ctx, out_h, x->shape[2], 0), *bt = adaptive_matrix(ctx, out_w, x->shape[3], 1);
    wgt_tensor *r = a && bt ? sandwich(a, x, bt) : NULL;
    wgt_release(a);
    wgt_release(bt);
    return r;
}

wgt_tensor *wgt_adaptive_avg_pool2d_grad(wgt_tensor *g, const int64_t *in_shape) {
    wgt_context *ctx = g->storage->ctx;
    wgt_tensor *at = adaptive_matrix(ctx, g->shape[2], in_shape[2], 1), *b = adaptive_matrix(ctx, g->shape[3], in_shape[3], 0);
    wgt_tensor *r = at && b ? sandwich(at, g, b) : NULL;
    wgt_release(at);
    wgt_release(b);
    return r;
}

/* ---- parameters ---- */

wgt_status wgt_pool_spec_make(const char *fn, const int64_t *kernel_size, const int64_t *stride, const int64_t *padding,
                              const int64_t *dilation, int ceil_mode, int count_include_pad, wgt_pool_spec *p) {
    if (!kernel_size) return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: kernel_size is NULL", fn);
    for (int i = 0; i < 2; i++) {
        p->kernel[i] = kernel_size[i];
        p->stride[i] = stride ? stride[i] : kernel_size[i]; /* PyTorch's default: the kernel */
        p->pad[i] = padding ? padding[i] : 0;
        p->dilation[i] = dilation ? dilation[i] : 1;
    }
    p->ceil_mode = ceil_mode != 0;
    p->count_include_pad = count_include_pad != 0;
    return WGT_OK;
}
