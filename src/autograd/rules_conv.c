/*
 * Gradient rules of the convolutions. conv2d's input gradient is the transposed convolution
 * of g with the weight, its weight gradient a convolution of x with g over the images (both
 * in src/core/conv.c, on the backend's convolution kernel), its bias gradient g summed over
 * images and pixels. A transposed convolution is conv2d's input gradient as a layer, so its
 * gradients are conv2d of g (for x) and the same weight gradient with x and g trading places.
 * conv1d runs as conv2d with a height of 1.
 */
#include "autograd.h"
#include "core/conv.h"

static const int64_t ones2[2] = {1, 1}, zeros2[2] = {0, 0};

/* The node's spec: stride, padding before, dilation in lv[0][0..5], groups in lv[0][6]. */
static wgt_conv_spec spec_of(const wgt_ag_node *n) {
    const int64_t *v = n->lv[0];
    wgt_conv_spec s = {{v[0], v[1]}, {v[2], v[3]}, {v[4], v[5]}, v[6]};
    return s;
}

static void keep_spec(wgt_ag_node *n, const int64_t *stride, const int64_t *pad, const int64_t *dilation,
                      int64_t groups) {
    for (int i = 0; i < 2; i++) {
        n->lv[0][i] = stride[i];
        n->lv[0][2 + i] = pad[i];
        n->lv[0][4 + i] = dilation[i];
    }
    n->lv[0][6] = groups;
}

/* g summed over images and pixels: the bias gradient. */
static wgt_tensor *bias_grad(wgt_ag_arena *ar, wgt_tensor *g) {
    static const int axes[3] = {0, 2, 3};
    return K(wgt_sum(g, 3, axes, 0));
}

/* x, w and g as 4-D tensors for conv1d (a height of 1). */
static wgt_tensor *as4(wgt_ag_arena *ar, wgt_tensor *t, int conv1d) { return conv1d ? K(wgt_unsqueeze(t, 2)) : t; }
static wgt_tensor *as3(wgt_ag_arena *ar, wgt_tensor *t, int conv1d) { return conv1d && t ? K(wgt_squeeze(t, 2)) : t; }

static wgt_status bw_conv(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    int conv1d = n->iv[0];
    wgt_tensor *x = as4(ar, n->saved[0], conv1d), *w = as4(ar, n->saved[1], conv1d);
    g = as4(ar, g, conv1d);
    wgt_conv_spec s = spec_of(n);
    if (NEED(n, 0)) gin[0] = as3(ar, K(wgt_conv2d_input_grad(n->fn, g, w, &s, x->shape[2], x->shape[3])), conv1d);
    if (NEED(n, 1)) gin[1] = as3(ar, K(wgt_conv2d_weight_grad(n->fn, x, g, &s, w->shape[2], w->shape[3])), conv1d);
    if (NEED(n, 2)) gin[2] = bias_grad(ar, g);
    return WGT_OK;
}

static wgt_tensor *conv_rule(const char *fn, wgt_tensor *out, wgt_tensor *x, wgt_tensor *weight, wgt_tensor *bias,
                             const int64_t *stride, const int64_t *padding, const int64_t *dilation, int64_t groups,
                             int conv1d) {
    WGT_AG_BEGIN(n, fn, out, bw_conv, x, weight, bias)
    int64_t pad[2];
    for (int i = 0; i < 2; i++) /* "same": what lies before, as the forward pads */
        pad[i] = padding[i] == WGT_PADDING_SAME ? dilation[i] * (weight->shape[weight->ndim - 2 + i] - 1) / 2
                                                : padding[i];
    if (conv1d) pad[0] = 0; /* the height of 1 has no kernel extent */
    keep_spec(n, stride, pad, dilation, groups);
    n->iv[0] = conv1d;
    wgt_ag_save(n, 0, x);
    wgt_ag_save(n, 1, weight);
    return wgt_ag_attach(out, n);
}

wgt_tensor *wgt_ag_rule_conv2d(wgt_tensor *out, wgt_tensor *x, wgt_tensor *weight, wgt_tensor *bias,
                               const int64_t *stride, const int64_t *padding, const int64_t *dilation,
                               int64_t groups) {
    return conv_rule("wgt_conv2d", out, x, weight, bias, stride ? stride : ones2, padding ? padding : zeros2,
                     dilation ? dilation : ones2, groups, 0);
}

wgt_tensor *wgt_ag_rule_conv1d(wgt_tensor *out, wgt_tensor *x, wgt_tensor *weight, wgt_tensor *bias, int64_t stride,
                               int64_t padding, int64_t dilation, int64_t groups) {
    int64_t s[2] = {1, stride}, p[2] = {0, padding}, d[2] = {1, dilation};
    return conv_rule("wgt_conv1d", out, x, weight, bias, s, p, d, groups, 1);
}

static wgt_status bw_conv_transpose(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    wgt_tensor *x = n->saved[0], *w = n->saved[1];
    wgt_conv_spec s = spec_of(n);
    if (NEED(n, 0)) gin[0] = K(wgt_conv2d_sized(n->fn, g, w, &s, x->shape[2], x->shape[3]));
    if (NEED(n, 1)) gin[1] = K(wgt_conv2d_weight_grad(n->fn, g, x, &s, w->shape[2], w->shape[3]));
    if (NEED(n, 2)) gin[2] = bias_grad(ar, g);
    return WGT_OK;
}

wgt_tensor *wgt_ag_rule_conv_transpose2d(wgt_tensor *out, wgt_tensor *x, wgt_tensor *weight, wgt_tensor *bias,
                                         const int64_t *stride, const int64_t *padding, const int64_t *output_padding,
                                         const int64_t *dilation, int64_t groups) {
    (void)output_padding; /* only the output's size, which g carries */
    WGT_AG_BEGIN(n, "wgt_conv_transpose2d", out, bw_conv_transpose, x, weight, bias)
    keep_spec(n, stride ? stride : ones2, padding ? padding : zeros2, dilation ? dilation : ones2, groups);
    wgt_ag_save(n, 0, x);
    wgt_ag_save(n, 1, weight);
    return wgt_ag_attach(out, n);
}
