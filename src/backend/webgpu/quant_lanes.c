/*
 * The quantized matrix-vector kernel (wgsl/quant_matvec_lanes.wgsl): x @ w^T for decoding's
 * 1 to 3 rows of x, over the device layout of blocks, neighbouring invocations on neighbouring
 * blocks of a row of w. This file fills in the kernel's reads of x and its per-block
 * arithmetic for the variant and picks how many invocations share a row and how many rows a
 * group of them takes. With WGT_QUANT_INT8=1, x is first quantized to q8 blocks
 * (quant_x8_pass.wgsl) and each block is integer dot products. The same pass normalizes x for
 * a norm folded into the product (src/core/prologue.c; quant_norm.wgsl: each workgroup
 * computes the rows' statistics), quantizing it for the integer path or, in its f32 form,
 * writing it for the float path (quant.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "webgpu_internal.h"

/* What the pass without a norm takes for quant_norm.wgsl (its norm code is dead). */
#define NO_NORM_ROWS                                                                                               \
    "var<private> norm_inv: array<f32, 3>;\nvar<private> norm_rs: array<f32, 3>;\n"                               \
    "fn norm_rows(li: u32, rows: u32) {}\n"

typedef struct {
    int q8, mx, x_vec; /* block type, rows of x (1..3), x read as vec4 (contiguous, aligned) */
    int int8;          /* x quantized to q8 first (quant_x8_pass), integer dot products */
    int addend;        /* an addend binding (finished() in quant_product.wgsl) */
    int lanes, rows;   /* invocations along a row of w, rows of w per group of them */
} lanes_kernel;

static const char *x_read(const lanes_kernel *k) {
    if (k->int8)
        return "struct XB { lo: vec4<u32>, hi: vec4<u32>, ds: vec2<u32> }\n"
               "fn x_block(m: u32, kb: u32) -> XB {\n"
               "    let at = 3u * (m * params.row_blocks + kb);\n"
               "    return XB(x[at], x[at + 1u], x[at + 2u].xy);\n}";
    if (k->x_vec)
        return "struct XB { v: array<vec4<f32>, 8> }\n"
               "fn x_block(m: u32, kb: u32) -> XB {\n"
               "    let at = (params.x_offset + m * u32(params.x_stride0) + kb * 32u) / 4u;\n"
               "    var b: XB;\n"
               "    for (var i = 0u; i < 8u; i = i + 1u) { b.v[i] = x[at + i]; }\n"
               "    return b;\n}";
    return "struct XB { v: array<vec4<f32>, 8> }\n"
           "fn x_block(m: u32, kb: u32) -> XB {\n"
           "    let s = params.x_stride1;\n"
           "    let at = i32(params.x_offset) + i32(m) * params.x_stride0 + i32(kb * 32u) * s;\n"
           "    var b: XB;\n"
           "    for (var i = 0; i < 8; i = i + 1) {\n"
           "        let e = at + 4 * i * s;\n"
           "        b.v[i] = vec4<f32>(x[u32(e)], x[u32(e + s)], x[u32(e + 2 * s)], x[u32(e + 3 * s)]);\n"
           "    }\n"
           "    return b;\n}";
}

/* A block's products with x, scaled: w0 (and w1 for q8_0) are its values' words, d its scale. */
static const char *block_dot(const lanes_kernel *k) {
    if (k->int8 && k->q8)
        return "fn block_dot(w0: vec4<u32>, w1: vec4<u32>, d: f32, xb: XB) -> f32 {\n"
               "    return f32(dot_words(w0, xb.lo) + dot_words(w1, xb.hi)) * (d * bitcast<f32>(xb.ds.x));\n}";
    if (k->int8)
        return "fn block_dot(w0: vec4<u32>, w1: vec4<u32>, d: f32, xb: XB) -> f32 {\n"
               "    let lo = w0 & vec4<u32>(0x0f0f0f0fu);\n"
               "    let hi = (w0 >> vec4<u32>(4u)) & vec4<u32>(0x0f0f0f0fu);\n"
               "    let s = dot_words(lo, xb.lo) + dot_words(hi, xb.hi) - 8 * bitcast<i32>(xb.ds.y);\n"
               "    return f32(s) * (d * bitcast<f32>(xb.ds.x));\n}";
    if (k->q8)
        return "fn block_dot(w0: vec4<u32>, w1: vec4<u32>, d: f32, xb: XB) -> f32 {\n"
               "    let o = vec4<f32>(8388736.0);\n"
               "    let a = w0 ^ vec4<u32>(0x80808080u);\n"
               "    let b = w1 ^ vec4<u32>(0x80808080u);\n"
               "    return d * (dot(byte_values(a.x) - o, xb.v[0]) + dot(byte_values(a.y) - o, xb.v[1])\n"
               "              + dot(byte_values(a.z) - o, xb.v[2]) + dot(byte_values(a.w) - o, xb.v[3])\n"
               "              + dot(byte_values(b.x) - o, xb.v[4]) + dot(byte_values(b.y) - o, xb.v[5])\n"
               "              + dot(byte_values(b.z) - o, xb.v[6]) + dot(byte_values(b.w) - o, xb.v[7]));\n}";
    return "fn block_dot(w0: vec4<u32>, w1: vec4<u32>, d: f32, xb: XB) -> f32 {\n"
           "    let o = vec4<f32>(8388616.0);\n"
           "    let lo = w0 & vec4<u32>(0x0f0f0f0fu);\n"
           "    let hi = (w0 >> vec4<u32>(4u)) & vec4<u32>(0x0f0f0f0fu);\n"
           "    return d * (dot(byte_values(lo.x) - o, xb.v[0]) + dot(byte_values(lo.y) - o, xb.v[1])\n"
           "              + dot(byte_values(lo.z) - o, xb.v[2]) + dot(byte_values(lo.w) - o, xb.v[3])\n"
           "              + dot(byte_values(hi.x) - o, xb.v[4]) + dot(byte_values(hi.y) - o, xb.v[5])\n"
           "              + dot(byte_values(hi.z) - o, xb.v[6]) + dot(byte_values(hi.w) - o, xb.v[7]));\n}";
}

static char *build_lanes(wgt_webgpu *w, const void *arg) {
    (void)w;
    const lanes_kernel *k = arg;
    const char *source = wgt_wgsl_source("quant_matvec_lanes");
    const char *x_type = k->int8 ? "vec4<u32>" : k->x_vec ? "vec4<f32>" : "f32";
    char *product = wgt_wgpu_quant_product(x_type, "vec4<u32>", k->addend);
    if (!source || !product) {
        free(product);
        return NULL;
    }
    char mx[16], lanes[16], rows[16];
    snprintf(mx, sizeof mx, "%d", k->mx);
    snprintf(lanes, sizeof lanes, "%d", k->lanes);
    snprintf(rows, sizeof rows, "%d", k->rows);
    const char *pairs[] = {"PRODUCT", product, "LANES", lanes, "ROWS", rows, "MX", mx, "Q8", k->q8 ? "true" : "false",
                           "X_READ", x_read(k), "BLOCK_DOT", block_dot(k), NULL};
    char *out = wgt_wgsl_expand(source, pairs);
    free(product);
    return out;
}

typedef struct {
    int norm, has_g; /* x normalized first (quant_norm.wgsl), times a weight */
    int f32_out;     /* with norm: the normed x as f32, not quantized */
} x8_kernel;

static char *build_x8_pass(wgt_webgpu *w, const void *arg) {
    (void)w;
    const x8_kernel *k = arg;
    const char *source = wgt_wgsl_source("quant_x8_pass"), *x8 = wgt_wgsl_source("quant_x8");
    const char *stats = k->norm ? wgt_wgsl_source("quant_norm") : "";
    const char *bindings = k->norm ? "@group(0) @binding(0) var<storage, read> x: array<f32>;\n"
                                     "@group(0) @binding(1) var<storage, read> g: array<f32>;\n"
                                     "@group(0) @binding(2) var<storage, read_write> xq: array<u32>;\n"
                                     "@group(0) @binding(3) var<uniform> params: Params;"
                                   : "@group(0) @binding(0) var<storage, read> x: array<f32>;\n"
                                     "@group(0) @binding(1) var<storage, read_write> xq: array<u32>;\n"
                                     "@group(0) @binding(2) var<uniform> params: Params;\n"
                                     "var<private> g: array<f32, 1>;\n" NO_NORM_ROWS;
    const char *pairs[] = {"X8",         x8,    "NORM",     k->norm ? "true" : "false", "HAS_G", k->has_g ? "true" : "false",
                           "NORM_STATS", stats, "BINDINGS", bindings, "F32_OUT", k->f32_out ? "true" : "false", NULL};
    return source && x8 && stats ? wgt_wgsl_expand(source, pairs) : NULL;
}

wgt_status wgt_wgpu_quant_x8(wgt_webgpu *w, const wgt_operand *x, uint32_t row_blocks, const wgt_quant_norm *norm,
                             int f32_out, wgt_buffer **xq) {
    const wgt_operand *g = norm ? norm->weight : NULL;
    struct {
        uint32_t M, row_blocks, x_offset;
        int32_t x_stride0, x_stride1;
        uint32_t g_offset;
        int32_t g_stride;
        float eps;
    } p = {(uint32_t)x->shape[0], row_blocks, (uint32_t)x->offset, (int32_t)x->strides[0], (int32_t)x->strides[1],
           g ? (uint32_t)g->offset : 0, g ? (int32_t)g->strides[0] : 0, norm ? (float)norm->eps : 0.0f};
    uint64_t blocks = (uint64_t)p.M * row_blocks;
    x8_kernel k = {norm != NULL, g != NULL, norm && f32_out};
    char key[48];
    snprintf(key, sizeof key, "quant_x8_pass:n%d:g%d:f%d", k.norm, k.has_g, k.f32_out);
    wgt_pipeline *pl;
    wgt_status st = wgt_wgpu_pipeline(w, key, norm ? 3 : 2, build_x8_pass, &k, &pl);
    /* A block is 48 bytes quantized (three 16-byte words), 128 as f32. */
    if (st == WGT_OK) st = wgt_wgpu_buffer_create(&w->base, (size_t)(blocks * (k.f32_out ? 128 : 48)), 0, xq);
    if (st != WGT_OK) return st;
    /* Without a weight x stands in for the unused binding. */
    wgt_buffer *buffers[3] = {x->buffer, norm ? (g ? g->buffer : x->buffer) : *xq, *xq};
    return wgt_wgpu_dispatch(w, pl, buffers, &p, sizeof p, (blocks + 31) / 32); /* 8 invocations a block */
}

uint32_t wgt_wgpu_quant_scales(const wgt_operand *q) {
    size_t blocks = (size_t)(q->buffer->size / wgt_dtype_block_bytes(q->dtype));
    return (uint32_t)(blocks * (wgt_dtype_block_bytes(q->dtype) - 2) / 4);
}

wgt_status wgt_wgpu_quant_matvec_lanes(wgt_webgpu *w, const wgt_operand *out, const wgt_operand *x,
                                       const wgt_operand *wt, const wgt_operand *addend, const wgt_quant_norm *norm,
                                       int int8, const void *params, uint32_t params_size) {
    int64_t M = out->shape[0], N = out->shape[1], row_blocks = wt->shape[1] / 32;
    int x_vec = !int8 && x->strides[1] == 1 && x->offset % 4 == 0 &&
                (M == 1 || (x->strides[0] >= 0 && x->strides[0] % 4 == 0));
    /* Invocations along a row and rows a group of them takes (H200, 8192 x 8192, GPU time,
     * BENCHMARKS.md): the float path gains most from several rows sharing each block of x it
     * reads (64, 4); the integer path, whose x is a quarter the bytes, from more workgroups
     * (32, 1). WGT_QUANT_LANES=lanes,rows overrides, for measuring. */
    lanes_kernel k = {wt->dtype == WGT_Q8_0, (int)M, x_vec, int8, addend != NULL, int8 ? 32 : 64, int8 ? 1 : 4};
    const char *shape = getenv("WGT_QUANT_LANES");
    if (shape && *shape) { /* empty: unset, as for every WGT_ variable */
        int lanes = 0, rows = 0;
        if (sscanf(shape, "%d,%d", &lanes, &rows) != 2 || (lanes != 32 && lanes != 64 && lanes != 128 && lanes != 256) ||
            rows < 1 || rows > 4)
            return wgt_error(WGT_ERR_INVALID_ARGUMENT,
                             "WGT_QUANT_LANES is '%s'; it takes lanes,rows: lanes 32, 64, 128 or 256, rows 1 to 4", shape);
        k.lanes = lanes, k.rows = rows;
    }
    char key[96];
    snprintf(key, sizeof key, "quant_matvec_lanes:%s:m%d:v%d:i%d:a%d:l%d:r%d", k.q8 ? "q8_0" : "q4_0", k.mx, k.x_vec,
             k.int8, k.addend, k.lanes, k.rows);
    wgt_pipeline *pl;
    wgt_status st = wgt_wgpu_pipeline(w, key, addend ? 4 : 3, build_lanes, &k, &pl);
    wgt_buffer *xq = NULL;
    if (st == WGT_OK && int8) st = wgt_wgpu_quant_x8(w, x, (uint32_t)row_blocks, norm, 0, &xq);
    wgt_buffer *buffers[4] = {xq ? xq : x->buffer, wt->buffer, addend ? addend->buffer : out->buffer, out->buffer};
    int64_t per_group = (int64_t)(256 / k.lanes) * k.rows;
    if (st == WGT_OK)
        st = wgt_wgpu_dispatch(w, pl, buffers, params, params_size, (uint64_t)((N + per_group - 1) / per_group));
    if (xq) wgt_wgpu_buffer_destroy(&w->base, xq); /* the recorded commands keep it */
    return st;
}
