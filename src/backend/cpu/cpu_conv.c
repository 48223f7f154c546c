/*
 * Convolution on the CPU backend (the general entry of backend.h): im2col and a BLAS product.
 * For each image and group, the output [Cout_g, OH * OW] is the group's weight
 * [Cout_g, Cin_g kH kW] times the columns [Cin_g kH kW, OH * OW] of input values each output
 * pixel reads (zeros for padding and for the gaps of a dilated input). The columns are built
 * a chunk of pixels at a time, at most COL_VALUES values, so memory stays bounded whatever
 * the image size; the product of a chunk writes straight into the output's rows (ldc = OH * OW).
 * f32 goes through sgemm (the same BLAS as matmul, and the same rule for its bits:
 * docs/architecture.md). f16 converts to double and goes through dgemm: every product of two
 * f16 values is exact in double, so the result is the float64 convolution rounded once to f32.
 */
#include <cblas.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_kernels.h"

#define COL_VALUES ((int64_t)1 << 20) /* 4 MiB of f32 columns, 8 MiB of double */

typedef struct {
    const wgt_operand *x;
    int64_t H, W, OW, KH, KW, K;
    int64_t stride[2], pad[2], dil[2], in_dil[2];
} conv_shape;

static double load_x(const wgt_operand *x, int64_t i) {
    if (x->dtype == WGT_F16) return wgt_cpu_f16_to_f32(((const uint16_t *)x->host)[i]);
    return ((const float *)x->host)[i];
}

/* The input index along one dimension that output o and tap k read, or -1 for a zero. */
static int64_t source(const conv_shape *c, int d, int64_t o, int64_t k, int64_t len) {
    int64_t v = o * c->stride[d] - c->pad[d] + k * c->dil[d];
    if (v < 0 || v % c->in_dil[d] != 0) return -1;
    v /= c->in_dil[d];
    return v < len ? v : -1;
}

/* Columns for pixels [p0, p0 + np) of image n, group g, row-major [K, np]; one of colf or
 * cold is set. */
static void im2col(const conv_shape *c, int64_t n, int64_t g, int64_t p0, int64_t np, float *colf, double *cold) {
    const wgt_operand *x = c->x;
    int64_t base = x->offset + n * x->strides[0] + g * x->strides[1];
    for (int64_t k = 0; k < c->K; k++) {
        int64_t ci = k / (c->KH * c->KW), kh = k / c->KW % c->KH, kw = k % c->KW;
        int64_t cbase = base + ci * x->strides[2];
        for (int64_t j = 0; j < np; j++) {
            int64_t p = p0 + j, ih = source(c, 0, p / c->OW, kh, c->H), iw = source(c, 1, p % c->OW, kw, c->W);
            double v = ih < 0 || iw < 0 ? 0.0 : load_x(x, cbase + ih * x->strides[3] + iw * x->strides[4]);
            if (colf) colf[k * np + j] = (float)v;
            else cold[k * np + j] = v;
        }
    }
}

/* Group g's weight as a row-major [Cout_g, K] matrix (float or double). */
static void gather_weight(const wgt_operand *w, int64_t g, float *wf, double *wd) {
    int64_t cout_g = w->shape[1], cin_g = w->shape[2], KH = w->shape[3], KW = w->shape[4], i = 0;
    for (int64_t o = 0; o < cout_g; o++)
        for (int64_t ci = 0; ci < cin_g; ci++)
            for (int64_t kh = 0; kh < KH; kh++)
                for (int64_t kw = 0; kw < KW; kw++, i++) {
                    int64_t at = w->offset + g * w->strides[0] + o * w->strides[1] + ci * w->strides[2] +
                                 kh * w->strides[3] + kw * w->strides[4];
                    double v = w->dtype == WGT_F16 ? wgt_cpu_f16_to_f32(((const uint16_t *)w->host)[at])
                                                   : ((const float *)w->host)[at];
                    if (wf) wf[i] = (float)v;
                    else wd[i] = v;
                }
}

wgt_status wgt_cpu_conv(wgt_backend *be, const wgt_operand *out, const wgt_operand *x, const wgt_operand *w,
                        const int64_t *params) {
    (void)be;
    static const char fn[] = "wgt_conv2d";
    if (out->dtype != WGT_F32 || out->offset != 0)
        return wgt_error(WGT_ERR_INTERNAL, "%s: output of %s at offset %lld reached the CPU kernel", fn,
                         wgt_dtype_name(out->dtype), (long long)out->offset);
    conv_shape c = {x, x->shape[3], x->shape[4], out->shape[4], w->shape[3], w->shape[4], 0, {0}, {0}, {0}, {0}};
    for (int d = 0; d < 2; d++) {
        c.stride[d] = params[d];
        c.pad[d] = params[2 + d];
        c.dil[d] = params[4 + d];
        c.in_dil[d] = params[6 + d];
    }
    int64_t N = x->shape[0], G = x->shape[1], cout_g = w->shape[1], P = out->shape[3] * out->shape[4];
    c.K = w->shape[2] * c.KH * c.KW;
    float *po = out->host;
    if (c.K == 0) {
        memset(po, 0, sizeof(float) * (size_t)(N * G * cout_g * P));
        return WGT_OK;
    }
    if (c.K > INT_MAX || P > INT_MAX || cout_g > INT_MAX)
        return wgt_error(WGT_ERR_LIMIT, "%s: %lld output channels x %lld values per output x %lld pixels is beyond BLAS's 32-bit sizes",
                         fn, (long long)cout_g, (long long)c.K, (long long)P);
    int f16 = x->dtype == WGT_F16;
    int64_t chunk = COL_VALUES / c.K;
    if (chunk < 1) chunk = 1;
    if (chunk > P) chunk = P;
    size_t elem = f16 ? sizeof(double) : sizeof(float);
    void *col = malloc(elem * (size_t)(c.K * chunk)), *wm = malloc(elem * (size_t)(cout_g * c.K));
    double *acc = f16 ? malloc(sizeof(double) * (size_t)(cout_g * chunk)) : NULL;
    if (!col || !wm || (f16 && !acc)) {
        free(col);
        free(wm);
        free(acc);
        return wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory for the im2col columns", fn);
    }
    for (int64_t g = 0; g < G; g++) {
        gather_weight(w, g, f16 ? NULL : wm, f16 ? wm : NULL);
        for (int64_t n = 0; n < N; n++) {
            float *dst = po + (n * G + g) * cout_g * P;
            for (int64_t p0 = 0; p0 < P; p0 += chunk) {
                int64_t np = P - p0 < chunk ? P - p0 : chunk;
                im2col(&c, n, g, p0, np, f16 ? NULL : col, f16 ? col : NULL);
                if (!f16) {
                    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)cout_g, (int)np, (int)c.K, 1.0f, wm,
                                (int)c.K, col, (int)np, 0.0f, dst + p0, (int)P);
                    continue;
                }
                cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)cout_g, (int)np, (int)c.K, 1.0, wm,
                            (int)c.K, col, (int)np, 0.0, acc, (int)np);
                for (int64_t o = 0; o < cout_g; o++)
                    for (int64_t j = 0; j < np; j++) dst[o * P + p0 + j] = (float)acc[o * np + j];
            }
        }
    }
    free(col);
    free(wm);
    free(acc);
    return WGT_OK;
}
