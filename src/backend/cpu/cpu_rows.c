/*
 * CPU row kernels (softmax, log_softmax, layer_norm, rms_norm, logsumexp), the oracle the WebGPU
 * kernels are tested against. Each row of the input view (its last dimension) is reduced in
 * double (max then sum of exponentials; mean then squared deviations; mean of squares) and
 * written to the contiguous output, rounded once into the output type. The special-value
 * rules are PyTorch's and the GPU kernel's: a row whose maximum is not finite (a NaN, a +inf,
 * or nothing but -inf) gives NaN everywhere in softmax and log_softmax; logsumexp writes
 * one f32 per row (NaN, +inf or -inf for such rows).
 *
 * A dense f32 row is read in place; any other row (strided, f16) is first copied into the
 * thread's scratch as f32, which is exact, so every layout runs the same code and gives the
 * same bits. Sums use the fixed lane order of cpu_lanes.h, and softmax keeps each row's
 * exponentials (cpu_exp.c, vectorised) in a double scratch row. Rows are independent,
 * so they are shared among the context's threads with no effect on the result.
 */
#include <math.h>
#include <stdlib.h>

#include "cpu_exp.h"
#include "cpu_kernels.h"
#include "cpu_lanes.h"
#include "cpu_loops.h"
#include "cpu_walk.h"

static float load(const wgt_operand *t, int64_t i) {
    if (t->dtype == WGT_F16) return wgt_cpu_f16_to_f32(((const uint16_t *)t->host)[i]);
    return ((const float *)t->host)[i];
}

/* n elements from storage index at with stride step, as f32: in place when they are
 * already, else copied into buf. */
static const float *dense_f32(const wgt_operand *t, int64_t at, int64_t step, int64_t n, float *buf) {
    if (t->dtype == WGT_F32 && (step == 1 || n == 1)) return (const float *)t->host + at;
    for (int64_t j = 0; j < n; j++) buf[j] = load(t, at + j * step);
    return buf;
}

typedef struct {
    wgt_rows_op op;
    const wgt_operand *out, *in;
    const float *weight, *bias; /* dense f32, or NULL */
    double eps;
    int64_t len, rows, ntasks;
    float *rows_scratch;  /* len per thread, for rows not read in place */
    double *exp_scratch;  /* len per thread, softmax's exponentials */
} rows_job;

/* Writes row y (computed in double by EXPR over x[j]) to the output at o. */
#define WRITE_ROW(EXPR)                                                               \
    do {                                                                              \
        if (j->out->dtype == WGT_F32) {                                               \
            float *dst = (float *)j->out->host + o;                                   \
            for (int64_t k = 0; k < len; k++) dst[k] = (float)(EXPR);                 \
        } else {                                                                      \
            uint16_t *dst = (uint16_t *)j->out->host + o;                             \
            for (int64_t k = 0; k < len; k++) dst[k] = wgt_f32_to_f16((float)(EXPR)); \
        }                                                                             \
    } while (0)

/* A norm's dense f32 output row: ((x - shift) * scale) * w + b in double, rounded once (w and
 * b when given), one loop per case so each vectorises. */
static void write_norm_f32(float *restrict dst, const float *restrict x, int64_t n, double shift, double scale,
                           const float *restrict w, const float *restrict b) {
    if (w && b) WGT_CPU_BLOCKED(n, dst[i_] = (float)(((double)x[i_] - shift) * scale * w[i_] + b[i_]));
    else if (w) WGT_CPU_BLOCKED(n, dst[i_] = (float)(((double)x[i_] - shift) * scale * w[i_]));
    else if (b) WGT_CPU_BLOCKED(n, dst[i_] = (float)(((double)x[i_] - shift) * scale + b[i_]));
    else WGT_CPU_BLOCKED(n, dst[i_] = (float)(((double)x[i_] - shift) * scale));
}

/* softmax's dense f32 output row: e * inv, rounded once. */
static void write_scaled_f32(float *restrict dst, const double *restrict e, int64_t n, double inv) {
    WGT_CPU_BLOCKED(n, dst[i_] = (float)(e[i_] * inv));
}

/* The norms' affine step in the general writer: y * weight + bias, each when given. */
static inline double affine(double y, const float *w, const float *b, int64_t k) {
    if (w) y *= w[k];
    if (b) y += b[k];
    return y;
}

static void one_row(const rows_job *j, const float *x, int64_t o, int slot) {
    int64_t len = j->len;
    const float *w = j->weight, *b = j->bias;
    switch (j->op) {
    case WGT_ROWS_LOGSUMEXP: {
        /* One f32 at o. A NaN gives NaN; an infinite maximum is the result (+inf, or -inf for
         * a row of nothing but -inf), as log(sum(exp(x))) gives without a shift. */
        double m = x[first_max_f32(x, len)], r = m;
        if (isfinite(m)) {
            double *e = j->exp_scratch + (size_t)slot * (size_t)len;
            wgt_cpu_exp_shifted(e, x, len, m);
            r = m + log(lane_sum_f64(e, len));
        }
        ((float *)j->out->host)[o] = (float)r;
        break;
    }
    case WGT_ROWS_SOFTMAX:
    case WGT_ROWS_LOG_SOFTMAX: {
        double m = x[first_max_f32(x, len)]; /* the first NaN if any, else the maximum */
        if (!isfinite(m)) {
            WRITE_ROW(NAN);
            break;
        }
        double *e = j->exp_scratch + (size_t)slot * (size_t)len;
        wgt_cpu_exp_shifted(e, x, len, m);
        double sum = lane_sum_f64(e, len);
        if (j->op == WGT_ROWS_SOFTMAX) {
            double inv = 1.0 / sum;
            if (j->out->dtype == WGT_F32) write_scaled_f32((float *)j->out->host + o, e, len, inv);
            else WRITE_ROW(e[k] * inv);
        } else {
            double log_sum = log(sum);
            WRITE_ROW((double)x[k] - m - log_sum);
        }
        break;
    }
    case WGT_ROWS_LAYER_NORM: {
        double mean = lane_sum_f32(x, len) / (double)len, dev, sq;
        lane_dev_sq_f32(x, len, mean, &dev, &sq);
        /* dev is 0 in exact arithmetic; subtracting its share removes the mean's rounding. */
        double var = (sq - dev * dev / (double)len) / (double)len;
        if (var < 0) var = 0;
        double rstd = 1.0 / sqrt(var + j->eps); /* infinity for a constant row with eps 0: then NaN, as in PyTorch */
        if (j->out->dtype == WGT_F32) write_norm_f32((float *)j->out->host + o, x, len, mean, rstd, w, b);
        else WRITE_ROW(affine(((double)x[k] - mean) * rstd, w, b, k));
        break;
    }
    default: {
        double rstd = 1.0 / sqrt(lane_squares_f32(x, len) / (double)len + j->eps);
        /* x - 0 is x, -0 included, so the shared writer gives x * rstd exactly. */
        if (j->out->dtype == WGT_F32) write_norm_f32((float *)j->out->host + o, x, len, 0.0, rstd, w, b);
        else WRITE_ROW(affine((double)x[k] * rstd, w, b, k));
        break;
    }
    }
}

static void rows_task(void *arg, int64_t t, int slot) {
    const rows_job *j = arg;
    const wgt_operand *in = j->in;
    int lead = in->ndim - 1;
    int64_t first, end, step = in->strides[lead];
    wgt_cpu_task_range(j->rows, j->ntasks, t, &first, &end);
    float *buf = j->rows_scratch + (size_t)slot * (size_t)j->len;
    for (int64_t r = first; r < end; r++) {
        int64_t at = in->offset, rest = r;
        for (int d = lead - 1; d >= 0; d--) {
            at += (rest % in->shape[d]) * in->strides[d];
            rest /= in->shape[d];
        }
        int64_t o = j->out->offset + (j->op == WGT_ROWS_LOGSUMEXP ? r : r * j->len);
        one_row(j, dense_f32(in, at, step, j->len, buf), o, slot);
    }
}

wgt_status wgt_cpu_rows(wgt_backend *be, wgt_rows_op op, const wgt_operand *out, const wgt_operand *in,
                        const wgt_operand *weight, const wgt_operand *bias, double eps) {
    if ((unsigned)op >= WGT_ROWS_COUNT) return wgt_error(WGT_ERR_INTERNAL, "unknown rows op %d", (int)op);
    if (in->ndim < 1) return wgt_error(WGT_ERR_INTERNAL, "row op on a rank-0 operand");
    wgt_cpu_advise_output(out);
    int64_t len = in->shape[in->ndim - 1], rows = 1;
    for (int d = 0; d < in->ndim - 1; d++) rows *= in->shape[d];
    if (len == 0 || rows == 0) return WGT_OK;
    int slots = wgt_cpu_pool_slots(wgt_cpu_pool_of(be));
    int norm = op == WGT_ROWS_LAYER_NORM || op == WGT_ROWS_RMS_NORM;
    /* One buffer: the threads' row scratch, softmax's exponentials, then weight and bias as
     * dense f32 where they are not already. */
    size_t n = (size_t)len, floats = (size_t)slots * n + (norm ? 2 * n : 0), doubles = norm ? 0 : (size_t)slots * n;
    double *mem = malloc(doubles * sizeof(double) + floats * sizeof(float));
    if (!mem)
        return wgt_error(WGT_ERR_OUT_OF_MEMORY,
                         "row op over rows of %lld elements: out of host memory for scratch rows", (long long)len);
    rows_job j = {op, out, in, NULL, NULL, eps, len, rows, 1, (float *)(mem + doubles), mem};
    float *affine_buf = j.rows_scratch + (size_t)slots * n;
    if (norm && weight) j.weight = dense_f32(weight, weight->offset, weight->strides[0], len, affine_buf);
    if (norm && bias) j.bias = dense_f32(bias, bias->offset, bias->strides[0], len, affine_buf + n);
    /* Work per row in walk units: exp is about ten; a copy into scratch adds a few. */
    double per_element = (norm ? 3.0 : 12.0) + (in->dtype == WGT_F32 && in->strides[in->ndim - 1] == 1 ? 0.0 : 3.0);
    j.ntasks = wgt_cpu_task_count(be, rows, per_element * (double)len);
    wgt_cpu_pool_run(wgt_cpu_pool_of(be), j.ntasks, rows_task, &j);
    free(mem);
    return WGT_OK;
}
