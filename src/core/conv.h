/*
 * The general convolution (backend.h's `conv`) for the library's own callers: the public
 * convolutions (conv.c), their gradients (src/autograd/rules_conv.c) and pooling (pool.c).
 */
#ifndef WGT_CORE_CONV_H
#define WGT_CORE_CONV_H

#include "node.h"

/* Along each spatial dimension: output o and tap k read input position
 * o stride - pad + k dilation, which holds x[v / in_dilation] where it is a multiple of
 * in_dilation inside the (dilated) input, zero elsewhere. */
typedef struct wgt_conv_geometry {
    int64_t stride[2], pad[2], dilation[2], in_dilation[2];
    int64_t out_size[2];
} wgt_conv_geometry;

/* t seen as a 5-D view: x [N, G, Cin_g, H, W] or w [G, Cout_g, Cin_g, kH, kW]; offset is
 * added to t's own. */
typedef struct wgt_conv_view {
    wgt_tensor *t;
    int64_t shape[5], strides[5], offset;
} wgt_conv_view;

/* The f32 result [N, G Cout_g, OH, OW] of the general convolution of x with w; NULL with the
 * error set. */
wgt_tensor *wgt_conv_general(const char *fn, const wgt_conv_view *x, const wgt_conv_view *w,
                             const wgt_conv_geometry *g);

/* conv2d's parameters with the padding resolved to what lies before each dimension. */
typedef struct wgt_conv_spec {
    int64_t stride[2], pad[2], dilation[2], groups;
} wgt_conv_spec;

/* conv2d of x [N, Cin, H, W] and w [Cout, Cin/groups, kH, kW] with an output of oh x ow
 * (positions past the padded input read zeros), in x's type. */
wgt_tensor *wgt_conv2d_sized(const char *fn, wgt_tensor *x, wgt_tensor *w, const wgt_conv_spec *s, int64_t oh,
                             int64_t ow);
/* The gradients of conv2d: with respect to its input [N, Cin, h, w] from g [N, Cout, OH, OW]
 * (the transposed convolution), and with respect to its weight [Cout, Cin/groups, kh, kw]
 * (a convolution of x with g over the images), each in g's type. */
wgt_tensor *wgt_conv2d_input_grad(const char *fn, wgt_tensor *g, wgt_tensor *w, const wgt_conv_spec *s, int64_t h,
                                  int64_t w_size);
wgt_tensor *wgt_conv2d_weight_grad(const char *fn, wgt_tensor *x, wgt_tensor *g, const wgt_conv_spec *s, int64_t kh,
                                   int64_t kw);

#endif
