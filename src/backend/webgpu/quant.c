/*
 * Quantized block types on WebGPU (wgsl/quant_*.wgsl): quantize, dequantize (of picked rows
 * for embedding lookups) and x @ w^T with w in q8_0 / q4_0 blocks. A buffer holds the blocks
 * in the device layout (core/block_layout.c: every block's values, then every scale), which
 * the core converts from and to ggml's when data moves; the kernels read a block's values as
 * aligned words (quant_blocks.wgsl). x @ w^T has two shapes: quant_matvec_lanes (quant_lanes.c)
 * for decoding's few rows of x, quant_matmul (weight blocks shared by tiles of rows) for more.
 * Pipelines are keyed by block type and the variant's constants.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "webgpu_internal.h"

#define QK 32

typedef struct {
    const char *name; /* quant_quantize, quant_dequantize, quant_matmul or quant_matvec */
    int q8, half, pick, tm, int8;
    int addend; /* products: an addend binding (finished() in quant_product.wgsl) */
} quant_kernel;

static char *build_quant(wgt_webgpu *w, const void *arg) {
    (void)w;
    const quant_kernel *k = arg;
    const char *text = wgt_wgsl_source(k->name), *blocks_text = wgt_wgsl_source("quant_blocks");
    if (!text || !blocks_text) return NULL;
    const char *q8 = k->q8 ? "true" : "false";
    const char *block_pairs[] = {"Q8", q8, NULL};
    char *blocks = wgt_wgsl_expand(blocks_text, block_pairs), *product = wgt_wgpu_quant_product("f32", "u32", k->addend);
    if (!blocks || !product) {
        free(blocks), free(product);
        return NULL;
    }
    char tm[16];
    snprintf(tm, sizeof tm, "%d", k->tm);
    const char *pairs[] = {"Q8", q8, "HALF", k->half ? "true" : "false", "PICK", k->pick ? "true" : "false",
                           "TM", tm, "INT8", k->int8 ? "true" : "false", "BLOCKS", blocks, "PRODUCT", product, NULL};
    char *out = wgt_wgsl_expand(text, pairs);
    free(blocks), free(product);
    return out;
}

char *wgt_wgpu_quant_product(const char *x_type, const char *w_type, int addend) {
    const char *text = wgt_wgsl_source("quant_product"), *x8 = wgt_wgsl_source("quant_x8");
    const char *with =
        "@group(0) @binding(2) var<storage, read> addend: array<f32>;\n"
        "@group(0) @binding(3) var<storage, read_write> out: array<f32>;\n"
        "@group(0) @binding(4) var<uniform> params: Params;\n"
        "fn finished(i: u32, v: f32) -> f32 { return addend[params.a_offset + i] + v; }";
    const char *without = "@group(0) @binding(2) var<storage, read_write> out: array<f32>;\n"
                          "@group(0) @binding(3) var<uniform> params: Params;\n"
                          "fn finished(i: u32, v: f32) -> f32 { return v; }";
    const char *pairs[] = {"X_TYPE", x_type, "W_TYPE", w_type, "ADDEND", addend ? with : without, NULL};
    char *bindings = text && x8 ? wgt_wgsl_expand(text, pairs) : NULL;
    if (!bindings) return NULL;
    wgt_wgsl_text t = {0};
    wgt_wgsl_add(&t, "%s\n%s", bindings, x8);
    free(bindings);
    if (t.failed) free(t.s);
    return t.failed ? NULL : t.s;
}

static wgt_status quant_pipeline(wgt_webgpu *w, const quant_kernel *k, int storage, wgt_pipeline **out) {
    char key[96];
    snprintf(key, sizeof key, "%s:%s:h%d:p%d:t%d:i%d:a%d", k->name, k->q8 ? "q8_0" : "q4_0", k->half, k->pick, k->tm,
             k->int8, k->addend);
    return wgt_wgpu_pipeline(w, key, storage, build_quant, k, out);
}

static wgt_status check_u32(const char *what, uint64_t v) {
    if (v > 0x7fffffffu)
        return wgt_error(WGT_ERR_LIMIT, "%s of %llu is beyond 32-bit indexing", what, (unsigned long long)v);
    return WGT_OK;
}

typedef struct {
    uint32_t blocks, row_blocks, in_offset;
    int32_t in_stride0, in_stride1;
    uint32_t zero, scales, pad;
} quantize_params;

wgt_status wgt_wgpu_quantize(wgt_backend *be, const wgt_operand *out, const wgt_operand *in) {
    wgt_webgpu *w = (wgt_webgpu *)be;
    if (out->offset != 0) return wgt_error(WGT_ERR_INTERNAL, "quantize output at offset %lld", (long long)out->offset);
    uint64_t blocks = (uint64_t)out->shape[0] * (uint64_t)(out->shape[1] / QK);
    if (blocks == 0) return WGT_OK;
    wgt_status st = check_u32("quantize", (uint64_t)out->shape[0] * (uint64_t)out->shape[1]);
    if (st != WGT_OK) return st;
    quantize_params p = {(uint32_t)blocks, (uint32_t)(out->shape[1] / QK), (uint32_t)in->offset,
                         (int32_t)in->strides[0], (int32_t)in->strides[1], 0, wgt_wgpu_quant_scales(out), 0};
    quant_kernel k = {"quant_quantize", out->dtype == WGT_Q8_0, in->dtype == WGT_F16, 0, 1, 0, 0};
    wgt_pipeline *pl;
    if ((st = quant_pipeline(w, &k, 2, &pl)) != WGT_OK) return st;
    wgt_buffer *buffers[2] = {in->buffer, out->buffer};
    uint64_t pairs = (blocks + 1) / 2;
    return wgt_wgpu_dispatch(w, pl, buffers, &p, sizeof p, (pairs + 63) / 64);
}

typedef struct {
    uint32_t blocks, row_blocks, first_block, stride_blocks, rows, index_offset;
    int32_t index_stride;
    uint32_t scales;
} dequantize_params;

wgt_status wgt_wgpu_dequantize(wgt_backend *be, const wgt_operand *out, const wgt_operand *table,
                               const wgt_operand *indices) {
    wgt_webgpu *w = (wgt_webgpu *)be;
    if (out->offset != 0 || out->dtype != WGT_F32)
        return wgt_error(WGT_ERR_INTERNAL, "dequantize output of %s at offset %lld", wgt_dtype_name(out->dtype),
                         (long long)out->offset);
    uint64_t blocks = (uint64_t)out->shape[0] * (uint64_t)(out->shape[1] / QK);
    if (blocks == 0) return WGT_OK;
    wgt_status st = check_u32("dequantize", (uint64_t)out->shape[0] * (uint64_t)out->shape[1]);
    if (st != WGT_OK) return st;
    dequantize_params p = {(uint32_t)blocks, (uint32_t)(out->shape[1] / QK), (uint32_t)(table->offset / QK),
                           (uint32_t)(table->strides[0] / QK), (uint32_t)table->shape[0],
                           indices ? (uint32_t)indices->offset : 0, indices ? (int32_t)indices->strides[0] : 0,
                           wgt_wgpu_quant_scales(table)};
    quant_kernel k = {"quant_dequantize", table->dtype == WGT_Q8_0, 0, indices != NULL, 1, 0, 0};
    wgt_pipeline *pl;
    if ((st = quant_pipeline(w, &k, 3, &pl)) != WGT_OK) return st;
    /* Without indices the table stands in for the unused index binding. */
    wgt_buffer *buffers[3] = {table->buffer, indices ? indices->buffer : table->buffer, out->buffer};
    return wgt_wgpu_dispatch(w, pl, buffers, &p, sizeof p, (blocks + 63) / 64);
}

typedef struct {
    uint32_t M, N, row_blocks, w_first, w_stride, x_offset;
    int32_t x_stride0, x_stride1;
    uint32_t a_offset, scales;
} matmul_params;

/* Rows of x per workgroup of quant_matmul where several rows share each weight block; fewer
 * rows than that (decoding) go to quant_matvec_lanes, which reads each row of w at full width. */
#define MATVEC_MAX_ROWS 3
static int rows_per_group(int64_t M) { return M >= 8 ? 8 : 4; }

/* A norm before the product runs into a buffer of its own first, inside the product's step:
 * for decoding's rows (pass) through quant_x8_pass's f32 form, which takes the rows'
 * statistics in each workgroup (quant_norm.wgsl), else as the rows entry (the same values as
 * the two ops apart). */
static wgt_status matmul_normed(wgt_webgpu *w, const wgt_operand *out, const wgt_operand *x, const wgt_operand *wt,
                                const wgt_operand *addend, const wgt_quant_norm *norm, int int8, int pass) {
    int64_t M = x->shape[0], K = x->shape[1];
    wgt_operand t = {.dtype = WGT_F32, .ndim = 2, .shape = {M, K}, .strides = {K, 1}};
    wgt_status st = pass ? wgt_wgpu_quant_x8(w, x, (uint32_t)(K / QK), norm, 1, &t.buffer)
                         : wgt_wgpu_buffer_create(&w->base, (size_t)(M * K) * sizeof(float) + 16, 0, &t.buffer);
    if (st != WGT_OK) return st;
    if (!pass) st = wgt_wgpu_rows(&w->base, WGT_ROWS_RMS_NORM, &t, x, norm->weight, NULL, norm->eps);
    if (st == WGT_OK) st = wgt_wgpu_matmul_quantized(&w->base, out, &t, wt, addend, NULL, int8);
    wgt_wgpu_buffer_destroy(&w->base, t.buffer); /* the recorded commands keep it */
    return st;
}

wgt_status wgt_wgpu_matmul_quantized(wgt_backend *be, const wgt_operand *out, const wgt_operand *x,
                                     const wgt_operand *wt, const wgt_operand *addend, const wgt_quant_norm *norm,
                                     int int8) {
    wgt_webgpu *w = (wgt_webgpu *)be;
    if (out->offset != 0 || out->dtype != WGT_F32 || x->dtype != WGT_F32)
        return wgt_error(WGT_ERR_INTERNAL, "matmul_quantized of %s into %s at offset %lld", wgt_dtype_name(x->dtype),
                         wgt_dtype_name(out->dtype), (long long)out->offset);
    if (addend && (addend->dtype != WGT_F32 || addend->strides[1] != 1 || addend->strides[0] != out->shape[1] ||
                   addend->buffer == out->buffer))
        return wgt_error(WGT_ERR_INTERNAL, "matmul_quantized: an addend of %s, strides [%lld, %lld], %s out's buffer",
                         wgt_dtype_name(addend->dtype), (long long)addend->strides[0], (long long)addend->strides[1],
                         addend->buffer == out->buffer ? "in" : "beside");
    int64_t M = out->shape[0], N = out->shape[1];
    if (M == 0 || N == 0) return WGT_OK;
    wgt_status st;
    if ((st = check_u32("matmul_quantized output", (uint64_t)M * (uint64_t)N)) != WGT_OK ||
        (st = check_u32("matmul_quantized x", (uint64_t)x->shape[0] * (uint64_t)x->shape[1])) != WGT_OK)
        return st;
    int matvec = M <= MATVEC_MAX_ROWS, tm = matvec ? 1 : rows_per_group(M);
    matmul_params p = {(uint32_t)M, (uint32_t)N, (uint32_t)(wt->shape[1] / QK), (uint32_t)(wt->offset / QK),
                       (uint32_t)(wt->strides[0] / QK), (uint32_t)x->offset, (int32_t)x->strides[0],
                       (int32_t)x->strides[1], addend ? (uint32_t)addend->offset : 0, wgt_wgpu_quant_scales(wt)};
    if ((st = check_u32("matmul_quantized addend", addend ? (uint64_t)addend->offset + (uint64_t)M * (uint64_t)N : 0)) != WGT_OK)
        return st;
    /* A norm: decoding's rows (matvec) are normalized by quant_x8_pass, which the integer path
     * runs anyway and whose f32 form costs the float path less than the rows op (H200,
     * BENCHMARKS.md); more rows go through the rows op. */
    if (norm && !(matvec && int8)) return matmul_normed(w, out, x, wt, addend, norm, int8, matvec);
    if (matvec) return wgt_wgpu_quant_matvec_lanes(w, out, x, wt, addend, norm, int8, &p, sizeof p);
    quant_kernel k = {"quant_matmul", wt->dtype == WGT_Q8_0, 0, 0, tm, int8, addend != NULL};
    wgt_pipeline *pl;
    if ((st = quant_pipeline(w, &k, addend ? 4 : 3, &pl)) != WGT_OK) return st;
    wgt_buffer *buffers[4] = {x->buffer, wt->buffer, addend ? addend->buffer : out->buffer, out->buffer};
    uint64_t groups = (uint64_t)N * (uint64_t)((M + tm - 1) / tm);
    return wgt_wgpu_dispatch(w, pl, buffers, &p, sizeof p, groups);
}
