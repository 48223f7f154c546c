/*
 * The wide quantized matrix-vector kernel (wgsl/quant_matvec_wide.wgsl): x @ w^T for decoding's
 * few rows of x where every row of w starts on a group of 8 blocks. This file writes the
 * kernel's per-group arithmetic as straight-line WGSL: which 16-byte word and which shift
 * hold each block's scale and values is known when the kernel is generated (a group of 8
 * blocks starts on a 16-byte boundary in both layouts), so the kernel indexes its registers
 * with constants only. quant.c decides when this kernel applies (wgt_wgpu_quant_wide_fits).
 * With WGT_QUANT_INT8=1, x is first quantized to q8 blocks (quant_x8_pass.wgsl) and each block
 * is integer dot products.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "webgpu_internal.h"

#define GROUP_BLOCKS 8

typedef struct {
    int q8, mx, x_vec; /* block type, rows of x (1..3), x read as vec4 (contiguous, aligned) */
    int int8;          /* x quantized to q8 first (quant_x8_pass), integer dot products */
    int addend;        /* an addend binding (finished() in quant_product.wgsl) */
} wide_kernel;

/* The storage word i (0-based, u32) of the group as a WGSL expression over v0..v16. */
static void word(char *buf, size_t size, int i) { snprintf(buf, size, "v%d.%c", i / 4, "xyzw"[i % 4]); }

/* The 4 bytes at byte offset off of the group (even) as a u32 expression. */
static void bytes_at(char *buf, size_t size, int off) {
    char a[16], b[16];
    word(a, sizeof a, off / 4);
    if (off % 4 == 0) {
        snprintf(buf, size, "%s", a);
        return;
    }
    word(b, sizeof b, off / 4 + 1);
    snprintf(buf, size, "((%s >> 16u) | (%s << 16u))", a, b);
}

/* Block j's scale into d, its value dot products into each row's accumulator: as floats made
 * from the weights' bits (byte_values), or with int8 as integer dot products with x's q8
 * block (words 0..7, then d_x's bits and the sum of its values). */
static void block_body(wgt_wgsl_text *t, const wide_kernel *k, int j) {
    int block_bytes = (int)wgt_dtype_block_bytes(k->q8 ? WGT_Q8_0 : WGT_Q4_0), at = j * block_bytes;
    int words = k->q8 ? 8 : 4;
    char w[64], scale[16];
    word(scale, sizeof scale, at / 4);
    wgt_wgsl_add(t, "            {\n                let d = unpack2x16float((%s >> %du) & 0xffffu).x;\n", scale, (at % 4) * 8);
    for (int i = 0; i < words; i++) {
        bytes_at(w, sizeof w, at + 2 + 4 * i);
        if (k->int8) {
            if (k->q8) {
                wgt_wgsl_add(t, "                let q%d = %s;\n", i, w);
            } else {
                wgt_wgsl_add(t, "                let b%d = %s;\n", i, w);
                wgt_wgsl_add(t, "                let q%d = b%d & 0x0f0f0f0fu;\n", i, i);
                wgt_wgsl_add(t, "                let h%d = (b%d >> 4u) & 0x0f0f0f0fu;\n", i, i);
            }
        } else if (k->q8) {
            wgt_wgsl_add(t, "                let q%d = byte_values(%s ^ 0x80808080u) - vec4<f32>(8388736.0);\n", i, w);
        } else {
            wgt_wgsl_add(t, "                let b%d = %s;\n", i, w);
            wgt_wgsl_add(t, "                let q%d = byte_values(b%d & 0x0f0f0f0fu) - vec4<f32>(8388616.0);\n", i, i);
            wgt_wgsl_add(t, "                let h%d = byte_values((b%d >> 4u) & 0x0f0f0f0fu) - vec4<f32>(8388616.0);\n", i, i);
        }
    }
    for (int m = 0; m < k->mx; m++) {
        if (k->int8) {
            static const char lanes[] = "xyzw";
            for (int v = 0; v < 3; v++)
                wgt_wgsl_add(t, "                let x%d_%d = xq(%du, q * 8u + %du, %du);\n", m, v, m, j, v);
            wgt_wgsl_add(t, "                acc[%d] = acc[%d] + f32(", m, m);
            for (int i = 0; i < words; i++) { /* q8_0: x's words i; q4_0: words i (low nibbles), 4 + i (high) */
                wgt_wgsl_add(t, "%sdot4I8Packed(q%d, x%d_%d.%c)", i ? " + " : "", i, m, i / 4, lanes[i % 4]);
                if (!k->q8) wgt_wgsl_add(t, " + dot4I8Packed(h%d, x%d_1.%c)", i, m, lanes[i]);
            }
            if (!k->q8) wgt_wgsl_add(t, " - 8 * bitcast<i32>(x%d_2.y)", m);
            wgt_wgsl_add(t, ") * (d * bitcast<f32>(x%d_2.x));\n", m);
            continue;
        }
        wgt_wgsl_add(t, "                acc[%d] = acc[%d] + d * (", m, m);
        for (int i = 0; i < words; i++) {
            wgt_wgsl_add(t, "%sdot(q%d, xv(%du, e0 + %du))", i ? " + " : "", i, m, 32 * j + 4 * i);
            if (!k->q8) wgt_wgsl_add(t, " + dot(h%d, xv(%du, e0 + %du))", i, m, 32 * j + 16 + 4 * i);
        }
        wgt_wgsl_add(t, ");\n");
    }
    wgt_wgsl_add(t, "            }\n");
}

static char *build_wide(wgt_webgpu *w, const void *arg) {
    (void)w;
    const wide_kernel *k = arg;
    const char *source = wgt_wgsl_source("quant_matvec_wide");
    char *product = wgt_wgpu_quant_product(k->int8 ? "vec4<u32>" : k->x_vec ? "vec4<f32>" : "f32", "vec4<u32>",
                                           k->addend);
    if (!source || !product) {
        free(product);
        return NULL;
    }
    int vecs = (int)wgt_dtype_block_bytes(k->q8 ? WGT_Q8_0 : WGT_Q4_0) * GROUP_BLOCKS / 16;
    wgt_wgsl_text body = {0};
    for (int i = 0; i < vecs; i++) wgt_wgsl_add(&body, "            let v%d = wq[at + %du];\n", i, i);
    for (int j = 0; j < GROUP_BLOCKS; j++) block_body(&body, k, j);
    const char *x_read =
        k->int8  ? "fn xq(m: u32, b: u32, i: u32) -> vec4<u32> { return x[3u * (m * params.row_blocks + b) + i]; }"
        : k->x_vec ? "fn xv(m: u32, e: u32) -> vec4<f32> {\n"
                     "    return x[(params.x_offset + m * u32(params.x_stride0) + e) / 4u];\n}"
                   : "fn xv(m: u32, e: u32) -> vec4<f32> {\n"
                     "    let s = params.x_stride1;\n"
                     "    let b = i32(params.x_offset) + i32(m) * params.x_stride0 + i32(e) * s;\n"
                     "    return vec4<f32>(x[u32(b)], x[u32(b + s)], x[u32(b + 2 * s)], x[u32(b + 3 * s)]);\n}";
    char mx[16], gv[16];
    snprintf(mx, sizeof mx, "%d", k->mx);
    snprintf(gv, sizeof gv, "%d", vecs);
    char *out = NULL;
    if (!body.failed) {
        const char *pairs[] = {"PRODUCT", product, "MX", mx, "GROUP_VECS", gv, "X_READ", x_read, "GROUP_BODY", body.s,
                               NULL};
        out = wgt_wgsl_expand(source, pairs);
    }
    free(body.s), free(product);
    return out;
}

static char *build_x8_pass(wgt_webgpu *w, const void *arg) {
    (void)w, (void)arg;
    const char *source = wgt_wgsl_source("quant_x8_pass"), *x8 = wgt_wgsl_source("quant_x8");
    const char *pairs[] = {"X8", x8, NULL};
    return source && x8 ? wgt_wgsl_expand(source, pairs) : NULL;
}

/* x [M, K] quantized to q8 blocks into a new buffer *xq, for the int8 kernel. */
static wgt_status quantize_x(wgt_webgpu *w, const wgt_operand *x, uint32_t row_blocks, wgt_buffer **xq) {
    struct {
        uint32_t M, row_blocks, x_offset;
        int32_t x_stride0, x_stride1;
    } p = {(uint32_t)x->shape[0], row_blocks, (uint32_t)x->offset, (int32_t)x->strides[0], (int32_t)x->strides[1]};
    uint64_t blocks = (uint64_t)p.M * row_blocks;
    wgt_pipeline *pl;
    wgt_status st = wgt_wgpu_pipeline(w, "quant_x8_pass", 2, build_x8_pass, NULL, &pl);
    if (st == WGT_OK) st = wgt_wgpu_buffer_create(&w->base, (size_t)(blocks * 48), 0, xq);
    if (st != WGT_OK) return st;
    wgt_buffer *buffers[2] = {x->buffer, *xq};
    return wgt_wgpu_dispatch(w, pl, buffers, &p, sizeof p, (blocks + 63) / 64);
}

int wgt_wgpu_quant_wide_fits(const wgt_operand *wt) {
    int64_t row_blocks = wt->shape[1] / 32, first = wt->offset / 32, stride = wt->strides[0] / 32;
    return row_blocks % GROUP_BLOCKS == 0 && first % GROUP_BLOCKS == 0 && stride % GROUP_BLOCKS == 0;
}

wgt_status wgt_wgpu_quant_matvec_wide(wgt_webgpu *w, const wgt_operand *out, const wgt_operand *x,
                                      const wgt_operand *wt, const wgt_operand *addend, int int8, const void *params,
                                      uint32_t params_size) {
    int64_t M = out->shape[0], N = out->shape[1];
    /* x as vec4s: contiguous rows starting on 16-byte boundaries (K is a multiple of 256). */
    int x_vec = !int8 && x->strides[1] == 1 && x->offset % 4 == 0 &&
                (M == 1 || (x->strides[0] >= 0 && x->strides[0] % 4 == 0));
    wide_kernel k = {wt->dtype == WGT_Q8_0, (int)M, x_vec, int8, addend != NULL};
    char key[64];
    snprintf(key, sizeof key, "quant_matvec_wide:%s:m%d:v%d:i%d:a%d", k.q8 ? "q8_0" : "q4_0", k.mx, k.x_vec, k.int8,
             k.addend);
    wgt_pipeline *pl;
    wgt_status st = wgt_wgpu_pipeline(w, key, addend ? 4 : 3, build_wide, &k, &pl);
    wgt_buffer *xq = NULL;
    if (st == WGT_OK && int8) st = quantize_x(w, x, (uint32_t)(wt->shape[1] / 32), &xq);
    wgt_buffer *buffers[4] = {int8 ? xq : x->buffer, wt->buffer, addend ? addend->buffer : out->buffer, out->buffer};
    if (st == WGT_OK) st = wgt_wgpu_dispatch(w, pl, buffers, params, params_size, (uint64_t)((N + 31) / 32));
    if (xq) wgt_wgpu_buffer_destroy(&w->base, xq); /* the recorded commands keep it */
    return st;
}
