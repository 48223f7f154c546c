/*
 * Quantized block types on the CPU: quantize with ggml's reference rounding, dequantize
 * (optionally of picked rows, for embedding lookups), and x @ w^T with w in blocks. Rows
 * are independent, so each kernel splits its rows over the pool and every result is the
 * same whatever the thread count.
 *
 * The quantized product takes each block's integer-weighted sum of x in f32 and scales it
 * by the block's d, as the GPU kernel does: the two backends add in the same order within
 * a block, so they differ only by the order of the block sums.
 */
#include <math.h>
#include <stdlib.h>

#include "cpu_kernels.h"
#include "cpu_walk.h"

#define QK 32 /* elements per block of both types */

static size_t block_bytes(wgt_dtype t) { return t == WGT_Q8_0 ? 34 : 18; }

/* The first byte of block j of row r of a block operand. */
static unsigned char *block_at(const wgt_operand *q, int64_t r, int64_t j) {
    int64_t block = (q->offset + r * q->strides[0]) / QK + j;
    return (unsigned char *)q->host + (size_t)block * block_bytes(q->dtype);
}

static float load_float(const wgt_operand *t, int64_t at) {
    if (t->dtype == WGT_F16) return wgt_cpu_f16_to_f32(((const uint16_t *)t->host)[at]);
    return ((const float *)t->host)[at];
}

static uint16_t load_u16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }

static void store_u16(unsigned char *p, uint16_t v) {
    p[0] = (unsigned char)(v & 0xff);
    p[1] = (unsigned char)(v >> 8);
}

/* 1 / d where d is a normal float, else 0 (docs/quant.md): ggml takes 1 / d for any nonzero
 * d, whose subnormal d gives infinite products, which C cannot convert and devices that flush
 * subnormals never see; the f16 scale of such a d is 0 either way. */
static float inverse_scale(float d) { return isnormal(d) ? 1.0f / d : 0.0f; }

/* One block of 32 values, as ggml's quantize_row_q8_0_ref and quantize_row_q4_0_ref round. A
 * NaN element's product converts to 0 (q8_0) or nibble 0 (q4_0), as ggml's does on x86. */
static void quantize_block(wgt_dtype type, const float *x, unsigned char *dst) {
    if (type == WGT_Q8_0) {
        float amax = 0.0f;
        for (int i = 0; i < QK; i++) amax = fmaxf(amax, fabsf(x[i]));
        const float d = amax / 127.0f;
        const float id = inverse_scale(d);
        store_u16(dst, wgt_f32_to_f16(d));
        for (int i = 0; i < QK; i++) {
            float q = roundf(x[i] * id);
            dst[2 + i] = isnan(q) ? 0 : (unsigned char)(int8_t)q;
        }
        return;
    }
    float amax = 0.0f, max = 0.0f; /* the value of largest magnitude, the first if tied */
    for (int i = 0; i < QK; i++)
        if (amax < fabsf(x[i])) {
            amax = fabsf(x[i]);
            max = x[i];
        }
    const float d = max / -8.0f;
    const float id = inverse_scale(d);
    store_u16(dst, wgt_f32_to_f16(d));
    for (int i = 0; i < QK / 2; i++) {
        float v0 = x[i] * id + 8.5f, v1 = x[i + QK / 2] * id + 8.5f;
        /* ggml converts to int8_t, truncating; the values are at least 0.5 here, so floor. */
        int q0 = isnan(v0) ? 0 : (int)v0, q1 = isnan(v1) ? 0 : (int)v1;
        dst[2 + i] = (unsigned char)((q0 < 15 ? q0 : 15) | (q1 < 15 ? q1 : 15) << 4);
    }
}

/* The 32 integer values of a block (q4_0 already less 8) and its scale. */
static float block_values(wgt_dtype type, const unsigned char *b, int *q) {
    if (type == WGT_Q8_0) {
        for (int i = 0; i < QK; i++) q[i] = (int8_t)b[2 + i];
    } else {
        for (int i = 0; i < QK / 2; i++) {
            q[i] = (b[2 + i] & 0xf) - 8;
            q[i + QK / 2] = (b[2 + i] >> 4) - 8;
        }
    }
    return wgt_cpu_f16_to_f32(load_u16(b));
}

typedef struct {
    const wgt_operand *out, *in, *indices;
    int64_t rows, blocks, ntasks;
} rows_job;

static void quantize_task(void *arg, int64_t task, int slot) {
    (void)slot;
    const rows_job *j = arg;
    int64_t r0, r1;
    wgt_cpu_task_range(j->rows, j->ntasks, task, &r0, &r1);
    float x[QK];
    for (int64_t r = r0; r < r1; r++)
        for (int64_t b = 0; b < j->blocks; b++) {
            for (int i = 0; i < QK; i++)
                x[i] = load_float(j->in, j->in->offset + r * j->in->strides[0] + (b * QK + i) * j->in->strides[1]);
            quantize_block(j->out->dtype, x, block_at(j->out, r, b));
        }
}

static wgt_status run_rows(wgt_backend *be, rows_job *j, wgt_cpu_task_fn fn) {
    if (j->rows == 0 || j->blocks == 0) return WGT_OK;
    j->ntasks = wgt_cpu_task_count(be, j->rows, (double)j->blocks * QK * 4);
    wgt_cpu_pool_run(wgt_cpu_pool_of(be), j->ntasks, fn, j);
    return WGT_OK;
}

wgt_status wgt_cpu_quantize(wgt_backend *be, const wgt_operand *out, const wgt_operand *in) {
    rows_job j = {out, in, NULL, out->shape[0], out->shape[1] / QK, 0};
    return run_rows(be, &j, quantize_task);
}

static void dequantize_task(void *arg, int64_t task, int slot) {
    (void)slot;
    const rows_job *j = arg;
    int64_t r0, r1, rows = j->in->shape[0], K = j->blocks * QK;
    wgt_cpu_task_range(j->rows, j->ntasks, task, &r0, &r1);
    int q[QK];
    for (int64_t r = r0; r < r1; r++) {
        int64_t src = r;
        if (j->indices) {
            int64_t at = j->indices->offset + r * j->indices->strides[0];
            src = j->indices->dtype == WGT_I32 ? (int64_t)((const int32_t *)j->indices->host)[at]
                                               : (int64_t)((const uint32_t *)j->indices->host)[at];
        }
        for (int64_t b = 0; b < j->blocks; b++) {
            float d = 0.0f;
            if (src >= 0 && src < rows) d = block_values(j->in->dtype, block_at(j->in, src, b), q);
            else for (int i = 0; i < QK; i++) q[i] = 0; /* an index out of range: a row of zeros */
            float *o = (float *)j->out->host + j->out->offset + r * K + b * QK;
            for (int i = 0; i < QK; i++) o[i] = (float)q[i] * d;
        }
    }
}

wgt_status wgt_cpu_dequantize(wgt_backend *be, const wgt_operand *out, const wgt_operand *table,
                              const wgt_operand *indices) {
    wgt_cpu_advise_output(out);
    rows_job j = {out, table, indices, out->shape[0], out->shape[1] / QK, 0};
    return run_rows(be, &j, dequantize_task);
}

/* Outputs of one task of the product: enough weight rows to pay for converting x's row. */
#define MATMUL_CHUNK 64

typedef struct {
    const wgt_operand *out, *x, *w, *addend; /* addend: NULL or [M, N] added to each sum */
    int64_t M, N, K, chunks, ntasks;
    int int8;       /* x quantized per block to q8 (backend.h) */
    float *scratch; /* K + K / 32 floats per thread: x's row in f32, its blocks' scales */
    int8_t *qx;     /* K per thread: x's row quantized (int8) */
} matmul_job;

/* x's row as q8 blocks, rounded as ggml's q8_0 quantizer rounds: values into q, scales into d
 * (quantize_block's rules where ggml's C is undefined). A block holding a NaN gets d = NaN, so
 * its products are NaN, as the float path's would be. */
static void quantize_row_q8(const float *x, int64_t blocks, int8_t *q, float *d) {
    for (int64_t b = 0; b < blocks; b++) {
        float amax = 0.0f;
        int nan = 0;
        for (int i = 0; i < QK; i++) {
            amax = fmaxf(amax, fabsf(x[b * QK + i])); /* fmaxf passes a NaN over */
            nan |= isnan(x[b * QK + i]);
        }
        d[b] = amax / 127.0f;
        float id = inverse_scale(d[b]);
        if (nan) d[b] = NAN;
        for (int i = 0; i < QK; i++) {
            float r = roundf(x[b * QK + i] * id);
            q[b * QK + i] = isnan(r) ? 0 : (int8_t)r;
        }
    }
}

static void matmul_task(void *arg, int64_t task, int slot) {
    const matmul_job *j = arg;
    int64_t c0, c1, blocks = j->K / QK, per_row = (j->N + MATMUL_CHUNK - 1) / MATMUL_CHUNK, have = -1;
    wgt_cpu_task_range(j->M * per_row, j->ntasks, task, &c0, &c1);
    float *x = j->scratch + (size_t)slot * (size_t)(j->K + blocks), *dx = x + j->K;
    int8_t *qx = j->qx ? j->qx + (size_t)slot * (size_t)j->K : NULL;
    int q[QK];
    for (int64_t c = c0; c < c1; c++) {
        int64_t m = c / per_row, n0 = c % per_row * MATMUL_CHUNK, n1 = n0 + MATMUL_CHUNK;
        if (n1 > j->N) n1 = j->N;
        if (m != have) {
            for (int64_t k = 0; k < j->K; k++)
                x[k] = ((const float *)j->x->host)[j->x->offset + m * j->x->strides[0] + k * j->x->strides[1]];
            if (j->int8) quantize_row_q8(x, blocks, qx, dx);
            have = m;
        }
        for (int64_t n = n0; n < n1; n++) {
            float acc = 0.0f;
            for (int64_t b = 0; b < blocks; b++) {
                float d = block_values(j->w->dtype, block_at(j->w, n, b), q), s = 0.0f;
                if (j->int8) { /* an exact integer sum, scaled once */
                    int32_t isum = 0;
                    for (int i = 0; i < QK; i++) isum += q[i] * qx[b * QK + i];
                    acc += (float)isum * (d * dx[b]);
                    continue;
                }
                const float *xb = x + b * QK;
                for (int i = 0; i < QK; i++) s += (float)q[i] * xb[i];
                acc += s * d;
            }
            if (j->addend) /* the order of the add the product stands in for: addend first */
                acc = ((const float *)j->addend->host)[j->addend->offset + m * j->addend->strides[0] +
                                                        n * j->addend->strides[1]] + acc;
            ((float *)j->out->host)[j->out->offset + m * j->N + n] = acc;
        }
    }
}

/* A norm before the product runs as the rows entry into rows of its own first: the same
 * values as the two ops apart. */
static wgt_status matmul_normed(wgt_backend *be, const wgt_operand *out, const wgt_operand *x, const wgt_operand *w,
                                const wgt_operand *addend, const wgt_quant_norm *norm, int int8) {
    int64_t M = x->shape[0], K = x->shape[1];
    wgt_operand t = {.dtype = WGT_F32, .ndim = 2, .shape = {M, K}, .strides = {K, 1}};
    t.host = malloc(sizeof(float) * (size_t)(M * K) + 1);
    if (!t.host) return wgt_error(WGT_ERR_OUT_OF_MEMORY, "wgt_matmul_quantized: out of host memory for x's normed rows");
    wgt_status st = wgt_cpu_rows(be, WGT_ROWS_RMS_NORM, &t, x, norm->weight, NULL, norm->eps);
    if (st == WGT_OK) st = wgt_cpu_matmul_quantized(be, out, &t, w, addend, NULL, int8);
    free(t.host);
    return st;
}

wgt_status wgt_cpu_matmul_quantized(wgt_backend *be, const wgt_operand *out, const wgt_operand *x,
                                    const wgt_operand *w, const wgt_operand *addend, const wgt_quant_norm *norm,
                                    int int8) {
    matmul_job j = {out, x, w, addend, out->shape[0], out->shape[1], x->shape[1], 0, 0, int8, NULL, NULL};
    if (j.M == 0 || j.N == 0) return WGT_OK;
    if (norm) return matmul_normed(be, out, x, w, addend, norm, int8);
    wgt_cpu_advise_output(out);
    int64_t chunks = j.M * ((j.N + MATMUL_CHUNK - 1) / MATMUL_CHUNK);
    size_t slots = (size_t)wgt_cpu_pool_slots(wgt_cpu_pool_of(be)), K = (size_t)j.K;
    j.scratch = malloc(sizeof(float) * (K + K / QK + 1) * slots);
    j.qx = int8 ? malloc(K * slots + 1) : NULL;
    if (!j.scratch || (int8 && !j.qx)) {
        free(j.scratch), free(j.qx);
        return wgt_error(WGT_ERR_OUT_OF_MEMORY, "wgt_matmul_quantized: out of host memory for x's rows");
    }
    j.ntasks = wgt_cpu_task_count(be, chunks, (double)MATMUL_CHUNK * (double)j.K);
    wgt_cpu_pool_run(wgt_cpu_pool_of(be), j.ntasks, matmul_task, &j);
    free(j.scratch), free(j.qx);
    return WGT_OK;
}
