/*
 * CPU scans (running sum, product, maximum, minimum and the positions of the last two), the
 * oracle of the WebGPU scan kernel. Each row along the axis is scanned in order by one thread; rows are
 * spread over the pool by the walk, which sees the axis with length 1. Float sums accumulate
 * in double and are rounded into each output; float products accumulate in f32 as the WebGPU
 * kernel's do (the same roundings, overflow and underflow); integer sums and products wrap in
 * uint32_t as on the GPU. max and min compare values as double
 * (exact for every input type).
 */
#include <math.h>

#include "cpu_kernels.h"
#include "cpu_walk.h"

typedef struct {
    wgt_scan_op op;
    const wgt_operand *out, *in;
    int64_t len, out_step, in_step; /* along the axis */
} scan_job;

static double load(const wgt_operand *in, int64_t i) {
    switch (in->dtype) {
    case WGT_F32: return ((const float *)in->host)[i];
    case WGT_F16: return wgt_cpu_f16_to_f32(((const uint16_t *)in->host)[i]);
    case WGT_I32: return ((const int32_t *)in->host)[i];
    default: return ((const uint32_t *)in->host)[i];
    }
}

static void store(const wgt_operand *out, int64_t i, double v) {
    switch (out->dtype) {
    case WGT_F32: ((float *)out->host)[i] = (float)v; break;
    case WGT_F16: ((uint16_t *)out->host)[i] = wgt_f32_to_f16((float)v); break;
    case WGT_I32: ((int32_t *)out->host)[i] = (int32_t)v; break;
    default: ((uint32_t *)out->host)[i] = (uint32_t)v; break;
    }
}

static void scan_row(const scan_job *j, int64_t po, int64_t pi) {
    const wgt_operand *in = j->in, *out = j->out;
    int sum = j->op == WGT_SCAN_SUM;
    if ((sum || j->op == WGT_SCAN_PROD) && (in->dtype == WGT_I32 || in->dtype == WGT_U32)) {
        uint32_t acc = sum ? 0 : 1;
        for (int64_t k = 0; k < j->len; k++) {
            uint32_t x = ((const uint32_t *)in->host)[pi + k * j->in_step];
            acc = sum ? acc + x : acc * x;
            ((uint32_t *)out->host)[po + k * j->out_step] = acc;
        }
        return;
    }
    if (sum) {
        double acc = 0;
        for (int64_t k = 0; k < j->len; k++) {
            acc += load(in, pi + k * j->in_step);
            store(out, po + k * j->out_step, acc);
        }
        return;
    }
    if (j->op == WGT_SCAN_PROD) {
        float acc = 1; /* as on the GPU, so a product overflows or underflows at the same place */
        for (int64_t k = 0; k < j->len; k++) {
            acc *= (float)load(in, pi + k * j->in_step);
            store(out, po + k * j->out_step, acc);
        }
        return;
    }
    /* max and min: a NaN sticks; an equal value moves the position on (torch's order). */
    int larger = j->op == WGT_SCAN_MAX || j->op == WGT_SCAN_ARGMAX;
    int position = j->op == WGT_SCAN_ARGMAX || j->op == WGT_SCAN_ARGMIN;
    double best = 0;
    int64_t at = 0;
    for (int64_t k = 0; k < j->len; k++) {
        double x = load(in, pi + k * j->in_step);
        if (k == 0 || (!isnan(best) && (isnan(x) || (larger ? x >= best : x <= best)))) best = x, at = k;
        if (position) ((int32_t *)out->host)[po + k * j->out_step] = (int32_t)at;
        else store(out, po + k * j->out_step, best);
    }
}

/* rows rows: row r starts at base[k] + r * step[k] and runs along the axis. */
static void scan_run(void *arg, const int64_t *base, const int64_t *step, int64_t rows, int slot) {
    (void)slot;
    const scan_job *j = arg;
    for (int64_t r = 0; r < rows; r++) scan_row(j, base[0] + r * step[0], base[1] + r * step[1]);
}

wgt_status wgt_cpu_scan(wgt_backend *be, wgt_scan_op op, const wgt_operand *out, const wgt_operand *in, int axis) {
    wgt_cpu_advise_output(out);
    int64_t shape[WGT_MAX_DIMS];
    for (int d = 0; d < in->ndim; d++) shape[d] = in->shape[d];
    scan_job j = {op, out, in, shape[axis], out->strides[axis], in->strides[axis]};
    if (j.len == 0) return WGT_OK;
    shape[axis] = 1;
    const wgt_operand *ops[2] = {out, in};
    wgt_cpu_walk w;
    wgt_cpu_walk_init(&w, in->ndim, shape, 2, ops);
    wgt_cpu_walk_run(be, &w, 3.0 * (double)j.len, scan_run, &j);
    return WGT_OK;
}
