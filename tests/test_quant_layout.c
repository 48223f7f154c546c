/*
 * The device layout of block types (core/block_layout.c): a buffer holds every block's values,
 * then every block's scale, while the caller, the host copy and files see ggml's blocks. These
 * tests move tensors with an odd number of blocks (the last scale alone in its word) and more
 * blocks than one chunk of a GGUF load (4 MiB) through every path between the layouts, and
 * check that the kernels read each block's scale from its place.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"

#define QK 32

/* ggml blocks with varied finite scales and values. */
static unsigned char *random_blocks(wgt_dtype t, size_t blocks, uint32_t seed) {
    size_t bb = wgt_dtype_block_bytes(t);
    unsigned char *b = malloc(blocks * bb);
    uint32_t s = seed * 2654435761u + 1;
    for (size_t i = 0; i < blocks; i++) {
        unsigned char *p = b + i * bb;
        uint16_t scale = (uint16_t)(0x2c00 + (i * 37 + seed) % 0x0c00); /* 2^-4 .. 2^-1, never inf or nan */
        p[0] = (unsigned char)(scale & 0xff), p[1] = (unsigned char)(scale >> 8);
        for (size_t j = 2; j < bb; j++) {
            s = s * 1664525u + 1013904223u;
            p[j] = (unsigned char)(s >> 24);
        }
    }
    return b;
}

static float half_value(const unsigned char *p) {
    unsigned h = (unsigned)p[0] | (unsigned)p[1] << 8, e = (h >> 10) & 31, m = h & 1023;
    float v = e ? ldexpf((float)(m | 1024), (int)e - 25) : ldexpf((float)m, -24);
    return h & 0x8000 ? -v : v;
}

/* Element j of a ggml block. */
static float block_value(wgt_dtype t, const unsigned char *block, int j) {
    int q = t == WGT_Q8_0 ? (int8_t)block[2 + j] : (j < 16 ? (block[2 + j] & 15) : (block[2 + j - 16] >> 4)) - 8;
    return (float)q * half_value(block);
}

TEST_BACKENDS(quant_device_layout_large_odd) {
    /* q8_0: 3 x 41121 blocks (123363: a load's chunk holds 123360); q4_0: 1 x 233017 (233016). */
    const int64_t rows[2] = {3, 1}, row_blocks[2] = {41121, 233017};
    const wgt_dtype types[2] = {WGT_Q8_0, WGT_Q4_0};
    for (int ti = 0; ti < 2; ti++) {
        wgt_dtype t = types[ti];
        int64_t R = rows[ti], K = row_blocks[ti] * QK, shape[2] = {R, K};
        size_t blocks = (size_t)(R * row_blocks[ti]), n = blocks * wgt_dtype_block_bytes(t);
        unsigned char *want = random_blocks(t, blocks, (uint32_t)ti + 1), *got = malloc(n);
        char path[128];
        snprintf(path, sizeof path, "/tmp/wgt_test_layout_%d_%d.gguf", (int)getpid(), ti);
        wgt_tensor *a = wgt_tensor_from_data(ctx, t, 2, shape, want, n, WGT_USAGE_DEFAULT);
        CHECK(a && wgt_tensor_read(a, got, n) == WGT_OK && !memcmp(got, want, n), "%s written and read: %s",
              wgt_dtype_name(t), wgt_last_error());
        /* Through a file: written from the tensor, loaded chunk by chunk. */
        wgt_gguf_writer *w = wgt_gguf_writer_create();
        CHECK(wgt_gguf_writer_add_tensor(w, "q", a) == WGT_OK && wgt_gguf_writer_save(w, path, 32) == WGT_OK, "%s",
              wgt_last_error());
        wgt_gguf_writer_release(w);
        wgt_gguf *g = wgt_gguf_open(path);
        wgt_tensor *b = g ? wgt_gguf_load(g, ctx, "q", WGT_USAGE_DEFAULT) : NULL;
        memset(got, 0, n);
        CHECK(b && wgt_tensor_read(b, got, n) == WGT_OK && !memcmp(got, want, n), "%s through GGUF: %s",
              wgt_dtype_name(t), wgt_last_error());
        /* The last row, by the kernels, from the loaded tensor (every scale read from its place,
         * the odd last one too) and from a row view of the written one. */
        wgt_tensor *row_b = b ? wgt_slice(b, 0, R - 1, R, 1) : NULL, *row_a = wgt_slice(a, 0, R - 1, R, 1);
        wgt_tensor *d[2] = {row_b ? wgt_dequantize(row_b, WGT_F32) : NULL, wgt_dequantize(row_a, WGT_F32)};
        float *vals = malloc(sizeof(float) * (size_t)K);
        const unsigned char *last = want + (size_t)((R - 1) * row_blocks[ti]) * wgt_dtype_block_bytes(t);
        for (int k = 0; k < 2; k++) {
            CHECK(d[k] && wgt_tensor_read(d[k], vals, sizeof(float) * (size_t)K) == WGT_OK, "%s", wgt_last_error());
            int bad = 0;
            for (int64_t i = 0; i < K && !bad; i++) {
                float v = block_value(t, last + (size_t)(i / QK) * wgt_dtype_block_bytes(t), (int)(i % QK));
                if (vals[i] != v) {
                    bad = 1;
                    CHECK(0, "%s %s: element %lld is %g, not %g", wgt_dtype_name(t), k ? "written" : "loaded",
                          (long long)i, vals[i], v);
                }
            }
        }
        /* The matrix-vector product of the last row with x = 1: the row's sum. */
        int64_t xs[2] = {1, K};
        wgt_tensor *ones = wgt_full(ctx, WGT_F32, 2, xs, 1.0), *y = row_b ? wgt_matmul_quantized(ones, row_b) : NULL;
        float sum = 0;
        double ref = 0, mag = 0;
        for (int64_t i = 0; i < K; i++) {
            float v = block_value(t, last + (size_t)(i / QK) * wgt_dtype_block_bytes(t), (int)(i % QK));
            ref += v, mag += fabs(v);
        }
        CHECK(y && wgt_tensor_read(y, &sum, sizeof sum) == WGT_OK, "%s", wgt_last_error());
        CHECK(fabs(sum - ref) <= ldexp(1, -23) * (double)(QK + K / QK) * mag, "%s row sum %.9g, float64 %.9g",
              wgt_dtype_name(t), sum, ref);
        wgt_release(ones), wgt_release(y), wgt_release(d[0]), wgt_release(d[1]), wgt_release(row_a), wgt_release(row_b);
        wgt_release(a), wgt_release(b);
        if (g) wgt_gguf_close(g);
        remove(path);
        free(want), free(got), free(vals);
    }
}
