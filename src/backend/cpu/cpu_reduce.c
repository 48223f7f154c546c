/*
 * CPU reductions and cumsum, the oracle the WebGPU kernels are tested against. The core
 * hands over an input view whose leading dimensions are the (contiguous) output's and
 * whose trailing reduce_ndim dimensions are reduced. Floating values accumulate in double
 * and are rounded once into the output type; integer sums and products use uint32_t so
 * they wrap as on the GPU instead of being undefined. var is two-pass (mean, then squared
 * deviations with the rounding-error correction term), so it stays accurate when the mean
 * is large compared with the spread.
 */
#include <math.h>
#include <string.h>

#include "backend/strided_iter.h"
#include "cpu_kernels.h"

static double load_f64(const wgt_operand *in, int64_t i) {
    switch (in->dtype) {
    case WGT_F32: return ((const float *)in->host)[i];
    case WGT_F16: return wgt_f16_to_f32(((const uint16_t *)in->host)[i]);
    case WGT_I32: return ((const int32_t *)in->host)[i];
    default: return ((const uint32_t *)in->host)[i];
    }
}

static uint32_t load_bits(const wgt_operand *in, int64_t i) { return ((const uint32_t *)in->host)[i]; }

static void store(const wgt_operand *out, int64_t i, double v, uint32_t bits) {
    switch (out->dtype) {
    case WGT_F32: ((float *)out->host)[i] = (float)v; break;
    case WGT_F16: ((uint16_t *)out->host)[i] = wgt_f32_to_f16((float)v); break;
    default: ((uint32_t *)out->host)[i] = bits; break;
    }
}

/* The storage indices of one output's reduced elements, visited in row-major order. */
typedef struct {
    int ndim;
    const int64_t *shape, *strides;
} reduced_dims;

/* A macro rather than a callback so the op's per-element work stays inline in the loop. */
#define FOR_EACH_REDUCED(rd, base, idx, ...)                                                           \
    do {                                                                                               \
        const int64_t *strides_[1] = {(rd)->strides};                                                  \
        int64_t offsets_[1] = {(base)}, inner_, istride_[1];                                           \
        wgt_strided_iter it_;                                                                          \
        wgt_strided_iter_init(&it_, (rd)->ndim, (rd)->shape, 1, strides_, offsets_, &inner_, istride_); \
        do {                                                                                           \
            for (int64_t i_ = 0; i_ < inner_; i_++) {                                                  \
                int64_t idx = it_.base[0] + i_ * istride_[0];                                          \
                __VA_ARGS__;                                                                           \
            }                                                                                          \
        } while (wgt_strided_iter_next(&it_));                                                         \
    } while (0)

static int is_integer(wgt_dtype d) { return d == WGT_I32 || d == WGT_U32; }

/* x is preferred over the best so far (value best at position best_i, none when best_i < 0):
 * NaN beats everything and the first NaN stays; otherwise strictly greater (or less). */
static int prefer(double x, double best, int64_t best_i, int greater) {
    if (best_i < 0) return 1;
    if (isnan(best)) return 0;
    if (isnan(x)) return 1;
    return greater ? x > best : x < best;
}

static int signed_less(wgt_dtype d, uint32_t x, uint32_t y) {
    if (d == WGT_I32) return (int32_t)x < (int32_t)y;
    return x < y;
}

/* Reduces the elements of one output; count > 0 except for sum and prod. */
static void reduce_one(wgt_reduce_op op, const wgt_operand *out, int64_t o, const wgt_operand *in,
                       const reduced_dims *rd, int64_t base, int64_t count, double correction) {
    wgt_dtype dt = in->dtype;
    if (count == 0) { /* sum 0, prod 1: the core rejects the others */
        store(out, o, op == WGT_REDUCE_PROD ? 1.0 : 0.0, op == WGT_REDUCE_PROD ? 1u : 0u);
        return;
    }
    switch (op) {
    case WGT_REDUCE_SUM:
    case WGT_REDUCE_PROD: {
        int prod = op == WGT_REDUCE_PROD;
        if (is_integer(dt)) {
            uint32_t acc = prod ? 1u : 0u;
            FOR_EACH_REDUCED(rd, base, i, acc = prod ? acc * load_bits(in, i) : acc + load_bits(in, i));
            store(out, o, 0, acc);
        } else {
            double acc = prod ? 1.0 : 0.0;
            FOR_EACH_REDUCED(rd, base, i, acc = prod ? acc * load_f64(in, i) : acc + load_f64(in, i));
            store(out, o, acc, 0);
        }
        break;
    }
    case WGT_REDUCE_MEAN: {
        double acc = 0;
        FOR_EACH_REDUCED(rd, base, i, acc += load_f64(in, i));
        store(out, o, acc / (double)count, 0);
        break;
    }
    case WGT_REDUCE_VAR: {
        double sum = 0, dev = 0, sq = 0;
        FOR_EACH_REDUCED(rd, base, i, sum += load_f64(in, i));
        double mean = sum / (double)count;
        FOR_EACH_REDUCED(rd, base, i, {
            double d = load_f64(in, i) - mean;
            dev += d;
            sq += d * d;
        });
        /* dev is 0 in exact arithmetic; subtracting its share removes the mean's rounding. */
        double ssq = sq - dev * dev / (double)count;
        if (ssq < 0) ssq = 0;
        double divisor = (double)count - correction;
        /* NumPy's rule: a divisor below 1 is clamped to 0, giving inf or NaN. */
        store(out, o, ssq / (divisor > 0 ? divisor : 0.0), 0);
        break;
    }
    case WGT_REDUCE_MAX:
    case WGT_REDUCE_MIN: {
        int greater = op == WGT_REDUCE_MAX;
        if (is_integer(dt)) {
            uint32_t best = 0;
            int first = 1;
            FOR_EACH_REDUCED(rd, base, i, {
                uint32_t x = load_bits(in, i);
                if (first || (greater ? signed_less(dt, best, x) : signed_less(dt, x, best))) best = x;
                first = 0;
            });
            store(out, o, 0, best);
        } else {
            double best = 0;
            int64_t best_i = -1, k = 0;
            FOR_EACH_REDUCED(rd, base, i, {
                double x = load_f64(in, i);
                if (prefer(x, best, best_i, greater)) { best = x; best_i = k; }
                k++;
            });
            store(out, o, best, 0);
        }
        break;
    }
    case WGT_REDUCE_ARGMAX:
    case WGT_REDUCE_ARGMIN: {
        int greater = op == WGT_REDUCE_ARGMAX;
        double best = 0;
        int64_t best_i = -1, k = 0;
        /* Every i32 and u32 value is exact in double, so one comparison serves all types. */
        FOR_EACH_REDUCED(rd, base, i, {
            double x = load_f64(in, i);
            if (prefer(x, best, best_i, greater)) { best = x; best_i = k; }
            k++;
        });
        store(out, o, 0, (uint32_t)best_i);
        break;
    }
    default: break;
    }
}

wgt_status wgt_cpu_reduce(wgt_backend *be, wgt_reduce_op op, const wgt_operand *out, const wgt_operand *in,
                          int reduce_ndim, double param) {
    (void)be;
    if ((unsigned)op >= WGT_REDUCE_COUNT) return wgt_error(WGT_ERR_INTERNAL, "unknown reduce op %d", (int)op);
    int keep = in->ndim - reduce_ndim;
    reduced_dims rd = {reduce_ndim, in->shape + keep, in->strides + keep};
    int64_t count = 1, outputs = 1;
    for (int d = keep; d < in->ndim; d++) count *= in->shape[d];
    for (int d = 0; d < keep; d++) outputs *= in->shape[d];
    /* Walk the outputs in row-major order, keeping the input position of each. */
    int64_t index[WGT_MAX_DIMS] = {0}, base = in->offset;
    for (int64_t o = 0; o < outputs; o++) {
        reduce_one(op, out, out->offset + o, in, &rd, base, count, param);
        for (int d = keep - 1; d >= 0; d--) {
            base += in->strides[d];
            if (++index[d] < in->shape[d]) break;
            base -= in->strides[d] * in->shape[d];
            index[d] = 0;
        }
    }
    return WGT_OK;
}

wgt_status wgt_cpu_cumsum(wgt_backend *be, const wgt_operand *out, const wgt_operand *in, int axis) {
    (void)be;
    /* Iterate every row along axis: the axis gets length 1 in the walk, the rest as is. */
    int64_t shape[WGT_MAX_DIMS];
    memcpy(shape, in->shape, sizeof shape);
    int64_t len = shape[axis];
    shape[axis] = 1;
    const int64_t *strides[2] = {out->strides, in->strides};
    int64_t offsets[2] = {out->offset, in->offset}, inner, is[2];
    int64_t so = out->strides[axis], si = in->strides[axis];
    wgt_strided_iter it;
    wgt_strided_iter_init(&it, in->ndim, shape, 2, strides, offsets, &inner, is);
    do {
        for (int64_t r = 0; r < inner; r++) {
            int64_t po = it.base[0] + r * is[0], pi = it.base[1] + r * is[1];
            if (is_integer(in->dtype)) {
                uint32_t acc = 0;
                for (int64_t j = 0; j < len; j++) {
                    acc += load_bits(in, pi + j * si);
                    store(out, po + j * so, 0, acc);
                }
            } else {
                double acc = 0;
                for (int64_t j = 0; j < len; j++) {
                    acc += load_f64(in, pi + j * si);
                    store(out, po + j * so, acc, 0);
                }
            }
        }
    } while (wgt_strided_iter_next(&it));
    return WGT_OK;
}
