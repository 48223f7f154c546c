/*
 * CPU row kernels (softmax, log_softmax, layer_norm, rms_norm), the oracle the WebGPU
 * kernels are tested against. Each row of the input view (its last dimension) is read in
 * place through its strides, reduced in double (max then sum of exponentials; mean then
 * squared deviations; mean of squares) and written to the contiguous output, rounded once
 * into the output type. The special-value rules are PyTorch's and the GPU kernel's: a row
 * whose maximum is not finite (a NaN, a +inf, or nothing but -inf) gives NaN everywhere in
 * softmax and log_softmax.
 */
#include <math.h>

#include "backend/strided_iter.h"
#include "cpu_kernels.h"

static double load(const wgt_operand *t, int64_t i) {
    if (t->dtype == WGT_F16) return wgt_f16_to_f32(((const uint16_t *)t->host)[i]);
    return ((const float *)t->host)[i];
}

static void store(const wgt_operand *out, int64_t i, double v) {
    if (out->dtype == WGT_F16) ((uint16_t *)out->host)[i] = wgt_f32_to_f16((float)v);
    else ((float *)out->host)[i] = (float)v;
}

/* The per-row values the write step needs: softmax (max, 1 / sum), log_softmax (max,
 * log sum), layer_norm (mean, 1 / std), rms_norm (0, 1 / rms). */
typedef struct {
    double a, b;
} row_stats;

static row_stats stats_of(wgt_rows_op op, const wgt_operand *in, int64_t base, int64_t len, int64_t stride,
                          double eps) {
    row_stats s = {0, 0};
    switch (op) {
    case WGT_ROWS_SOFTMAX:
    case WGT_ROWS_LOG_SOFTMAX: {
        double m = -INFINITY, sum = 0;
        for (int64_t j = 0; j < len; j++) {
            double x = load(in, base + j * stride);
            if (isnan(x) || x > m) m = x;
            if (isnan(m)) break;
        }
        /* A non-finite maximum makes the whole row NaN; the write step checks s.a. */
        if (isfinite(m))
            for (int64_t j = 0; j < len; j++) sum += exp(load(in, base + j * stride) - m);
        s.a = m;
        s.b = op == WGT_ROWS_SOFTMAX ? 1.0 / sum : log(sum);
        break;
    }
    case WGT_ROWS_LAYER_NORM: {
        double sum = 0, dev = 0, sq = 0;
        for (int64_t j = 0; j < len; j++) sum += load(in, base + j * stride);
        double mean = sum / (double)len;
        for (int64_t j = 0; j < len; j++) {
            double d = load(in, base + j * stride) - mean;
            dev += d;
            sq += d * d;
        }
        /* dev is 0 in exact arithmetic; subtracting its share removes the mean's rounding. */
        double var = (sq - dev * dev / (double)len) / (double)len;
        if (var < 0) var = 0;
        s.a = mean;
        s.b = 1.0 / sqrt(var + eps); /* infinity for a constant row with eps 0: then NaN, as in PyTorch */
        break;
    }
    default: {
        double sq = 0;
        for (int64_t j = 0; j < len; j++) {
            double x = load(in, base + j * stride);
            sq += x * x;
        }
        s.b = 1.0 / sqrt(sq / (double)len + eps);
        break;
    }
    }
    return s;
}

wgt_status wgt_cpu_rows(wgt_backend *be, wgt_rows_op op, const wgt_operand *out, const wgt_operand *in,
                        const wgt_operand *weight, const wgt_operand *bias, double eps) {
    (void)be;
    if ((unsigned)op >= WGT_ROWS_COUNT) return wgt_error(WGT_ERR_INTERNAL, "unknown rows op %d", (int)op);
    if (in->ndim < 1) return wgt_error(WGT_ERR_INTERNAL, "row op on a rank-0 operand");
    int64_t len = in->shape[in->ndim - 1], stride = in->strides[in->ndim - 1];
    if (len == 0) return WGT_OK;
    /* Walk the rows: the iterator's inner dimension is the last leading one (or a single
     * row for rank 1), each position of it is one row. */
    int lead = in->ndim - 1;
    int64_t shape[WGT_MAX_DIMS] = {1}, strides[WGT_MAX_DIMS] = {0};
    for (int d = 0; d < lead; d++) {
        shape[d] = in->shape[d];
        strides[d] = in->strides[d];
    }
    for (int d = 0; d < lead; d++)
        if (in->shape[d] == 0) return WGT_OK;
    const int64_t *sp[1] = {strides};
    int64_t offsets[1] = {in->offset}, inner, inner_stride[1];
    wgt_strided_iter it;
    wgt_strided_iter_init(&it, lead > 0 ? lead : 1, shape, 1, sp, offsets, &inner, inner_stride);
    int64_t o = out->offset;
    do {
        for (int64_t r = 0; r < inner; r++, o += len) {
            int64_t base = it.base[0] + r * inner_stride[0];
            row_stats s = stats_of(op, in, base, len, stride, eps);
            for (int64_t j = 0; j < len; j++) {
                double x = load(in, base + j * stride), y;
                switch (op) {
                case WGT_ROWS_SOFTMAX: y = isfinite(s.a) ? exp(x - s.a) * s.b : NAN; break;
                case WGT_ROWS_LOG_SOFTMAX: y = isfinite(s.a) ? x - s.a - s.b : NAN; break;
                case WGT_ROWS_LAYER_NORM: y = (x - s.a) * s.b; break;
                default: y = x * s.b; break;
                }
                if (op >= WGT_ROWS_LAYER_NORM) {
                    if (weight) y *= load(weight, weight->offset + j * weight->strides[0]);
                    if (bias) y += load(bias, bias->offset + j * bias->strides[0]);
                }
                store(out, o + j, y);
            }
        }
    } while (wgt_strided_iter_next(&it));
    return WGT_OK;
}
