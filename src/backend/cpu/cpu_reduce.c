/*
 * CPU reductions, the oracle the WebGPU kernels are tested against (cumsum is cpu_scan.c's
 * running sum). The core hands over an input view whose leading dimensions are the
 * (contiguous) output's and whose trailing reduce_ndim dimensions are reduced. Floating
 * values accumulate in double and are rounded once into the output type; integer sums and
 * products use uint32_t so they wrap as on the GPU instead of being undefined. var is two-pass (mean, then squared
 * deviations with the rounding-error correction term), so it stays accurate when the mean
 * is large compared with the spread.
 *
 * The order of the float sums is fixed by the data alone, never by the thread count or the
 * layout: each output's elements (in row-major order) are cut into pieces of PIECE elements;
 * within a piece, element k goes to summation lane k % 8 and the lanes combine as
 * ((0 + 1) + (2 + 3)) + ((4 + 5) + (6 + 7)); the pieces' results combine in piece order.
 * So a piece can run on any thread, and the same values give the same bits in one thread or
 * many, dense or strided. Eight lanes also let the compiler keep four two-wide SIMD sums.
 * max, min and their arg forms take the first of the best elements (a NaN before all), which
 * no order changes. A piece reads its elements in place when they are dense 4-byte values;
 * otherwise (strided, or f16) they are first gathered into the thread's scratch as f32 (f16
 * converts exactly) or 32-bit integers.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_kernels.h"
#include "cpu_lanes.h"
#include "cpu_walk.h"

#define PIECE 8192 /* a multiple of the 8 lanes */

static double load_f64(const wgt_operand *in, int64_t i) {
    switch (in->dtype) {
    case WGT_F32: return ((const float *)in->host)[i];
    case WGT_F16: return wgt_cpu_f16_to_f32(((const uint16_t *)in->host)[i]);
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

static int is_integer(wgt_dtype d) { return d == WGT_I32 || d == WGT_U32; }

/* Integer sums and products wrap, so their order never shows: plain loops. */
static uint32_t int_sum(const uint32_t *restrict x, int64_t n) {
    uint32_t s[16] = {0};
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        for (int j = 0; j < 16; j++) s[j] += x[i + j];
    uint32_t r = 0;
    for (int j = 0; j < 16; j++) r += s[j];
    for (; i < n; i++) r += x[i];
    return r;
}

static uint32_t int_prod(const uint32_t *x, int64_t n) {
    uint32_t r = 1;
    for (int64_t i = 0; i < n; i++) r *= x[i];
    return r;
}

/* ---- pieces, outputs and the split ---- */

/* What one piece contributes to its output. */
typedef struct {
    double value;   /* float sum, product, deviation sum, or the best value (integers exactly) */
    double sq;      /* var: the squared deviations */
    int64_t index;  /* max, min, arg: the best element's position in the output's row */
    uint32_t bits;  /* integer sum, product, or best */
} piece;

typedef struct {
    wgt_reduce_op op;
    const wgt_operand *out, *in;
    int keep;                /* leading (output) dimensions of in */
    int64_t count;           /* elements per output */
    int64_t pieces;          /* per output */
    int64_t total;           /* pieces of all outputs */
    int dense;               /* an output's elements are dense 4-byte values */
    int integer;
    int phase;               /* var: 0 sums for the mean, 1 deviations */
    double correction;
    double *means;           /* var: one per output */
    piece *partials;         /* outputs * pieces, when pieces > 1 */
    uint32_t *scratch;       /* PIECE words per thread, when not dense */
    int64_t ntasks;
} reduce_job;

/* Storage index of output o's first element in the input. */
static int64_t output_base(const reduce_job *j, int64_t o) {
    int64_t base = j->in->offset;
    for (int d = j->keep - 1; d >= 0; d--) {
        base += (o % j->in->shape[d]) * j->in->strides[d];
        o /= j->in->shape[d];
    }
    return base;
}

/* Elements [start, start + len) of the output at base, in row-major order over the reduced
 * dimensions, into dst as f32 (float types) or 32-bit words (integers). */
static void gather(const reduce_job *j, int64_t base, int64_t start, int64_t len, uint32_t *dst) {
    const wgt_operand *in = j->in;
    int first = j->keep, last = in->ndim - 1;
    int64_t index[WGT_MAX_DIMS], at = base, rest = start;
    for (int d = last; d >= first; d--) {
        index[d] = rest % in->shape[d];
        rest /= in->shape[d];
        at += index[d] * in->strides[d];
    }
    float *f = (float *)dst;
    for (int64_t k = 0; k < len; k++) {
        if (j->integer) dst[k] = load_bits(in, at);
        else f[k] = (float)load_f64(in, at); /* exact: f32 as is, f16 widened */
        for (int d = last; d >= first; d--) {
            at += in->strides[d];
            if (++index[d] < in->shape[d]) break;
            at -= in->strides[d] * in->shape[d];
            index[d] = 0;
        }
    }
}

static piece compute_piece(const reduce_job *j, int64_t o, int64_t c, int slot) {
    int64_t start = c * PIECE, len = j->count - start < PIECE ? j->count - start : PIECE;
    int64_t base = output_base(j, o);
    const uint32_t *words;
    if (j->dense) {
        words = (const uint32_t *)j->in->host + base + start;
    } else {
        uint32_t *s = j->scratch + (size_t)slot * PIECE;
        gather(j, base, start, len, s);
        words = s;
    }
    const float *x = (const float *)words;
    int signed_int = j->in->dtype == WGT_I32;
    piece p = {0, 0, 0, 0};
    switch (j->op) {
    case WGT_REDUCE_SUM:
        if (j->integer) p.bits = int_sum(words, len);
        else p.value = lane_sum_f32(x, len);
        break;
    case WGT_REDUCE_PROD:
        if (j->integer) p.bits = int_prod(words, len);
        else p.value = lane_prod_f32(x, len);
        break;
    case WGT_REDUCE_MEAN:
    case WGT_REDUCE_VAR:
        if (j->op == WGT_REDUCE_MEAN || j->phase == 0)
            p.value = !j->integer ? lane_sum_f32(x, len)
                      : signed_int ? lane_sum_i32((const int32_t *)words, len) : lane_sum_u32(words, len);
        else if (!j->integer) lane_dev_sq_f32(x, len, j->means[o], &p.value, &p.sq);
        else if (signed_int) lane_dev_sq_i32((const int32_t *)words, len, j->means[o], &p.value, &p.sq);
        else lane_dev_sq_u32(words, len, j->means[o], &p.value, &p.sq);
        break;
    default: { /* max, min, argmax, argmin */
        int greater = j->op == WGT_REDUCE_MAX || j->op == WGT_REDUCE_ARGMAX;
        int64_t i;
        if (!j->integer) {
            i = greater ? first_max_f32(x, len) : first_min_f32(x, len);
            p.value = x[i];
        } else if (signed_int) {
            const int32_t *v = (const int32_t *)words;
            i = greater ? first_max_i32(v, len) : first_min_i32(v, len);
            p.value = v[i];
        } else {
            i = greater ? first_max_u32(words, len) : first_min_u32(words, len);
            p.value = words[i];
        }
        p.bits = words[i];
        p.index = start + i;
        break;
    }
    }
    return p;
}

/* x is preferred over the best so far: NaN beats everything and the first NaN stays;
 * otherwise strictly greater (or less), so the earlier of equal values stays. */
static int prefer(double x, double best, int greater) {
    if (isnan(best)) return 0;
    if (isnan(x)) return 1;
    return greater ? x > best : x < best;
}

/* Combines output o's pieces in order and stores the result (var's first phase: the mean). */
static void finish_output(const reduce_job *j, int64_t o, const piece *p, int64_t n) {
    int64_t at = j->out->offset + o;
    double count = (double)j->count;
    switch (j->op) {
    case WGT_REDUCE_SUM:
    case WGT_REDUCE_MEAN: {
        if (j->integer && j->op == WGT_REDUCE_SUM) {
            uint32_t s = 0;
            for (int64_t c = 0; c < n; c++) s += p[c].bits;
            store(j->out, at, 0, s);
            break;
        }
        double s = 0;
        for (int64_t c = 0; c < n; c++) s += p[c].value;
        store(j->out, at, j->op == WGT_REDUCE_MEAN ? s / count : s, 0);
        break;
    }
    case WGT_REDUCE_PROD: {
        uint32_t b = 1;
        double v = 1;
        for (int64_t c = 0; c < n; c++) {
            b *= p[c].bits;
            v *= p[c].value;
        }
        store(j->out, at, v, b);
        break;
    }
    case WGT_REDUCE_VAR: {
        double dev = 0, sq = 0;
        for (int64_t c = 0; c < n; c++) {
            dev += p[c].value;
            sq += p[c].sq;
        }
        if (j->phase == 0) {
            j->means[o] = dev / count;
            break;
        }
        /* dev is 0 in exact arithmetic; subtracting its share removes the mean's rounding. */
        double ssq = sq - dev * dev / count;
        if (ssq < 0) ssq = 0;
        double divisor = count - j->correction;
        /* NumPy's rule: a divisor below 1 is clamped to 0, giving inf or NaN. */
        store(j->out, at, ssq / (divisor > 0 ? divisor : 0.0), 0);
        break;
    }
    default: {
        int greater = j->op == WGT_REDUCE_MAX || j->op == WGT_REDUCE_ARGMAX;
        const piece *best = &p[0];
        for (int64_t c = 1; c < n; c++)
            if (prefer(p[c].value, best->value, greater)) best = &p[c];
        if (j->op == WGT_REDUCE_ARGMAX || j->op == WGT_REDUCE_ARGMIN) store(j->out, at, 0, (uint32_t)best->index);
        else store(j->out, at, best->value, best->bits);
        break;
    }
    }
}

static void reduce_task(void *arg, int64_t t, int slot) {
    const reduce_job *j = arg;
    int64_t first, end;
    wgt_cpu_task_range(j->total, j->ntasks, t, &first, &end);
    for (int64_t k = first; k < end; k++) {
        int64_t o = k / j->pieces, c = k % j->pieces;
        piece p = compute_piece(j, o, c, slot);
        if (j->pieces == 1) finish_output(j, o, &p, 1);
        else j->partials[k] = p;
    }
}

/* Runs one phase: every piece, then (when outputs have several) each output's combination. */
static void run_phase(wgt_backend *be, reduce_job *j, double work_per_piece) {
    j->ntasks = wgt_cpu_task_count(be, j->total, work_per_piece);
    wgt_cpu_pool_run(wgt_cpu_pool_of(be), j->ntasks, reduce_task, j);
    if (j->pieces > 1)
        for (int64_t o = 0; o < j->total / j->pieces; o++) finish_output(j, o, j->partials + o * j->pieces, j->pieces);
}

/* Whether the reduced dimensions (from keep on) walk the storage densely. */
static int reduced_dense(const wgt_operand *in, int keep) {
    int64_t expect = 1;
    for (int d = in->ndim - 1; d >= keep; d--) {
        if (in->shape[d] != 1 && in->strides[d] != expect) return 0;
        expect *= in->shape[d];
    }
    return 1;
}

wgt_status wgt_cpu_reduce(wgt_backend *be, wgt_reduce_op op, const wgt_operand *out, const wgt_operand *in,
                          int reduce_ndim, double param) {
    if ((unsigned)op >= WGT_REDUCE_COUNT) return wgt_error(WGT_ERR_INTERNAL, "unknown reduce op %d", (int)op);
    wgt_cpu_advise_output(out);
    int keep = in->ndim - reduce_ndim;
    int64_t count = 1, outputs = 1;
    for (int d = keep; d < in->ndim; d++) count *= in->shape[d];
    for (int d = 0; d < keep; d++) outputs *= in->shape[d];
    if (outputs == 0) return WGT_OK;
    if (count == 0) { /* sum 0, prod 1: the core rejects the others */
        for (int64_t o = 0; o < outputs; o++)
            store(out, out->offset + o, op == WGT_REDUCE_PROD ? 1.0 : 0.0, op == WGT_REDUCE_PROD ? 1u : 0u);
        return WGT_OK;
    }
    reduce_job j = {0};
    j.op = op;
    j.out = out;
    j.in = in;
    j.keep = keep;
    j.count = count;
    j.pieces = (count + PIECE - 1) / PIECE;
    j.total = outputs * j.pieces;
    j.integer = is_integer(in->dtype);
    j.dense = in->dtype != WGT_F16 && reduced_dense(in, keep);
    j.correction = param;
    int slots = wgt_cpu_pool_slots(wgt_cpu_pool_of(be));
    size_t scratch_words = j.dense ? 0 : (size_t)slots * PIECE;
    if (scratch_words) j.scratch = malloc(scratch_words * sizeof *j.scratch);
    if (j.pieces > 1) j.partials = malloc((size_t)j.total * sizeof *j.partials);
    if (op == WGT_REDUCE_VAR) j.means = malloc((size_t)outputs * sizeof *j.means);
    wgt_status st = WGT_OK;
    if ((scratch_words && !j.scratch) || (j.pieces > 1 && !j.partials) || (op == WGT_REDUCE_VAR && !j.means)) {
        st = wgt_error(WGT_ERR_OUT_OF_MEMORY, "reduction over %lld outputs of %lld elements: out of host memory",
                       (long long)outputs, (long long)count);
    } else {
        /* Work per piece in walk units: a gather costs a few, max and min read twice. */
        double per = (double)(count < PIECE ? count : PIECE) * (j.dense ? 1.0 : 4.0) *
                     (op >= WGT_REDUCE_MAX ? 1.5 : 1.0);
        run_phase(be, &j, per);
        if (op == WGT_REDUCE_VAR) {
            j.phase = 1;
            run_phase(be, &j, per);
        }
    }
    free(j.scratch);
    free(j.partials);
    free(j.means);
    return st;
}

wgt_status wgt_cpu_cumsum(wgt_backend *be, const wgt_operand *out, const wgt_operand *in, int axis) {
    return wgt_cpu_scan(be, WGT_SCAN_SUM, out, in, axis);
}
