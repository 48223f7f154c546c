/*
 * Convolution on WebGPU (backend.h's general `conv`): one implicit-GEMM kernel
 * (wgsl/conv.wgsl) that gathers the im2col columns into workgroup memory as it goes, so no
 * column matrix is ever stored. Pipelines are cached by input type, kernel size (up to 8 a
 * constant of the shader, so the split of k into channel and taps divides by constants; larger
 * kernels, such as a weight gradient's, read it from the params and share a pipeline) and whether
 * the input is dilated (transposed convolutions). Every tile is one workgroup; the grid goes
 * 2-D past 65535 workgroups through the encoder.
 */
#include <stdio.h>
#include <string.h>

#include "webgpu_internal.h"

typedef struct {
    uint32_t cout_g, K, cols, P, OW, groups, tiles_m, tiles_n;
    int32_t stride_h, stride_w, pad_h, pad_w, dil_h, dil_w, in_dil_h, in_dil_w;
    int32_t vmax_h, vmax_w, x_offset, xs_n, xs_g, xs_c, xs_h, xs_w;
    int32_t w_offset, ws_g, ws_o, ws_c, ws_h, ws_w;
    uint32_t kh, kw;
} conv_params;

#define TILE_M 64u  /* BM of conv.wgsl: output channels per tile */
#define TILE_N 128u /* BN: output pixels per tile */
#define CONST_KERNEL 8 /* kernel sizes up to this are constants of their pipeline */

typedef struct {
    wgt_dtype dtype;
    int64_t kh, kw;
    int dilated;
} conv_kernel;

static char *build_conv(wgt_webgpu *w, const void *arg) {
    (void)w;
    const conv_kernel *k = arg;
    const char *text = wgt_wgsl_source("conv");
    if (!text) return NULL;
    char kh[24] = "params.kh", kw[24] = "params.kw";
    if (k->kh) snprintf(kh, sizeof kh, "%lldu", (long long)k->kh);
    if (k->kw) snprintf(kw, sizeof kw, "%lldu", (long long)k->kw);
    int f16 = k->dtype == WGT_F16;
    const char *pairs[] = {"STORAGE", f16 ? "u32" : "f32",
                           "KH", kh,
                           "KW", kw,
                           "LOAD_X", f16 ? "return unpack2x16float(x[u32(i) >> 1u])[u32(i) & 1u];" : "return x[i];",
                           "LOAD_W", f16 ? "return unpack2x16float(w[u32(i) >> 1u])[u32(i) & 1u];" : "return w[i];",
                           "SOURCE", k->dilated ? "if (v % in_dil != 0) { return -1; }\n    return v / in_dil;" : "return v;",
                           NULL};
    return wgt_wgsl_expand(text, pairs);
}

/* Whether v fits the kernel's 32-bit signed index arithmetic. */
static int fits_i32(int64_t v) { return v >= -(int64_t)0x7fffffff && v <= 0x7fffffff; }

wgt_status wgt_wgpu_conv(wgt_backend *be, const wgt_operand *out, const wgt_operand *x, const wgt_operand *wt,
                         const int64_t *params) {
    wgt_webgpu *w = (wgt_webgpu *)be;
    if (out->dtype != WGT_F32 || out->offset != 0)
        return wgt_error(WGT_ERR_INTERNAL, "conv: output of %s at offset %lld", wgt_dtype_name(out->dtype),
                         (long long)out->offset);
    int64_t N = x->shape[0], G = x->shape[1], cout_g = wt->shape[1], P = out->shape[3] * out->shape[4];
    int64_t K = wt->shape[2] * wt->shape[3] * wt->shape[4], cols = N * P;
    int64_t tiles_m = (cout_g + TILE_M - 1) / TILE_M, tiles_n = (cols + TILE_N - 1) / TILE_N;
    conv_params p;
    memset(&p, 0, sizeof p);
    int64_t values[] = {cout_g, K, cols, P, out->shape[4], G, tiles_m, tiles_n,
                        params[0], params[1], params[2], params[3], params[4], params[5], params[6], params[7],
                        (x->shape[3] - 1) * params[6], (x->shape[4] - 1) * params[7],
                        x->offset, x->strides[0], x->strides[1], x->strides[2], x->strides[3], x->strides[4],
                        wt->offset, wt->strides[0], wt->strides[1], wt->strides[2], wt->strides[3], wt->strides[4]};
    /* Every index the kernel forms is a sum of these times in-range positions; the core keeps
     * each tensor within max_kernel_elements, so only extreme geometry can overflow here. */
    int32_t *fields = (int32_t *)&p;
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        if (!fits_i32(values[i]) || (i < 8 && values[i] < 0))
            return wgt_error(WGT_ERR_LIMIT, "conv: a size or stride (%lld) beyond the kernel's 32-bit indices",
                             (long long)values[i]);
        fields[i] = (int32_t)values[i];
    }
    if (cols == 0 || cout_g == 0 || G == 0) return WGT_OK;
    if (K == 0) return wgt_error(WGT_ERR_INTERNAL, "conv: no values per output reached the kernel");
    p.kh = (uint32_t)wt->shape[3];
    p.kw = (uint32_t)wt->shape[4];
    /* 0: read from the params (kernels past CONST_KERNEL share one pipeline). */
    conv_kernel k = {x->dtype, p.kh <= CONST_KERNEL ? p.kh : 0, p.kw <= CONST_KERNEL ? p.kw : 0,
                     params[6] != 1 || params[7] != 1};
    char key[96];
    snprintf(key, sizeof key, "conv:%s:%lldx%lld:%d", wgt_dtype_name(x->dtype), (long long)k.kh, (long long)k.kw,
             k.dilated);
    wgt_pipeline *pl;
    wgt_status st = wgt_wgpu_pipeline(w, key, 3, build_conv, &k, &pl);
    if (st != WGT_OK) return st;
    wgt_buffer *buffers[3] = {x->buffer, wt->buffer, out->buffer};
    return wgt_wgpu_dispatch(w, pl, buffers, &p, sizeof p, (uint64_t)(tiles_m * tiles_n * G));
}
