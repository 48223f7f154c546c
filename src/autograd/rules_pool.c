/*
 * Gradient rules of pooling: each keeps the op's parameters and hands the gradient to the
 * scatter of src/core/pool.c (max: to the first maximum of each window; averages: spread
 * over each window as the forward divided).
 */
#include "autograd.h"
#include "core/pool.h"

/* The spec in lv[0] (kernel, stride, padding, dilation) and iv[0..1] (ceil_mode,
 * count_include_pad). */
static void keep_spec(wgt_ag_node *n, const wgt_pool_spec *p) {
    for (int i = 0; i < 2; i++) {
        n->lv[0][i] = p->kernel[i];
        n->lv[0][2 + i] = p->stride[i];
        n->lv[0][4 + i] = p->pad[i];
        n->lv[0][6 + i] = p->dilation[i];
    }
    n->iv[0] = p->ceil_mode;
    n->iv[1] = p->count_include_pad;
}

static wgt_pool_spec spec_of(const wgt_ag_node *n) {
    const int64_t *v = n->lv[0];
    wgt_pool_spec p = {{v[0], v[1]}, {v[2], v[3]}, {v[4], v[5]}, {v[6], v[7]}, n->iv[0], n->iv[1]};
    return p;
}

static wgt_status bw_max_pool(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    wgt_pool_spec p = spec_of(n);
    gin[0] = K(wgt_max_pool2d_grad(n->fn, n->saved[0], n->saved[1], g, &p));
    return WGT_OK;
}

wgt_tensor *wgt_ag_rule_max_pool2d(wgt_tensor *out, wgt_tensor *x, const int64_t *kernel_size, const int64_t *stride,
                                   const int64_t *padding, const int64_t *dilation, int ceil_mode) {
    WGT_AG_BEGIN(n, "wgt_max_pool2d", out, bw_max_pool, x)
    wgt_pool_spec p;
    wgt_pool_spec_make(n->fn, kernel_size, stride, padding, dilation, ceil_mode, 1, &p);
    keep_spec(n, &p);
    wgt_ag_save(n, 0, x);
    wgt_ag_save(n, 1, out);
    return wgt_ag_attach(out, n);
}

static wgt_status bw_avg_pool(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    wgt_pool_spec p = spec_of(n);
    gin[0] = K(wgt_avg_pool2d_grad(n->fn, g, n->in[0].shape, &p));
    return WGT_OK;
}

wgt_tensor *wgt_ag_rule_avg_pool2d(wgt_tensor *out, wgt_tensor *x, const int64_t *kernel_size, const int64_t *stride,
                                   const int64_t *padding, int ceil_mode, int count_include_pad) {
    WGT_AG_BEGIN(n, "wgt_avg_pool2d", out, bw_avg_pool, x)
    wgt_pool_spec p;
    wgt_pool_spec_make(n->fn, kernel_size, stride, padding, NULL, ceil_mode, count_include_pad, &p);
    keep_spec(n, &p);
    return wgt_ag_attach(out, n);
}

static wgt_status bw_adaptive(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    gin[0] = K(wgt_adaptive_avg_pool2d_grad(g, n->in[0].shape));
    return WGT_OK;
}

wgt_tensor *wgt_ag_rule_adaptive_avg_pool2d(wgt_tensor *out, wgt_tensor *x, int64_t out_h, int64_t out_w) {
    (void)out_h, (void)out_w; /* g carries the output's size */
    WGT_AG_BEGIN(n, "wgt_adaptive_avg_pool2d", out, bw_adaptive, x)
    return wgt_ag_attach(out, n);
}
