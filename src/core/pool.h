/*
 * Pooling's parameters and gradients (pool.c), for the public ops and
 * src/autograd/rules_pool.c.
 */
#ifndef WGT_CORE_POOL_H
#define WGT_CORE_POOL_H

#include "node.h"

typedef struct wgt_pool_spec {
    int64_t kernel[2], stride[2], pad[2], dilation[2];
    int ceil_mode, count_include_pad;
} wgt_pool_spec;

/* The public arguments with their defaults (stride: the kernel; padding 0; dilation 1). */
wgt_status wgt_pool_spec_make(const char *fn, const int64_t *kernel_size, const int64_t *stride, const int64_t *padding,
                              const int64_t *dilation, int ceil_mode, int count_include_pad, wgt_pool_spec *p);
/* Checks x [N, C, H, W] (f32, f16) and p; out_size receives the output's height and width. */
wgt_status wgt_pool_check(const char *fn, wgt_tensor *x, const wgt_pool_spec *p, int64_t *out_size);
/* Gradients with respect to the input, in g's type: max_pool2d's (x and its output out, each
 * window's g to the first of its elements equal to the maximum), avg_pool2d's (g over each
 * window, divided as the forward divided), adaptive_avg_pool2d's (A^T g B). */
wgt_tensor *wgt_max_pool2d_grad(const char *fn, wgt_tensor *x, wgt_tensor *out, wgt_tensor *g, const wgt_pool_spec *p);
wgt_tensor *wgt_avg_pool2d_grad(const char *fn, wgt_tensor *g, const int64_t *in_shape, const wgt_pool_spec *p);
wgt_tensor *wgt_adaptive_avg_pool2d_grad(wgt_tensor *g, const int64_t *in_shape);

#endif
