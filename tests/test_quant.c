/*
 * Quantized block types q8_0 and q4_0: quantization bit for bit against ggml's reference
 * rounding (written out here), dequantization, the quantized matrix product against a
 * float64 product of the dequantized weights, embedding lookups, views and byte I/O.
 * The errors (block-cutting views, other ops given block types) are in test_quant_errors.c.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

#define QK 32

static size_t block_bytes(wgt_dtype t) { return t == WGT_Q8_0 ? 34 : 18; }

/* ggml's quantize_row_q8_0_ref / quantize_row_q4_0_ref for one block, with docs/quant.md's
 * rules where ggml's C is undefined: 1 / d only for a normal d (else 0), and a NaN product
 * converts to 0. */
static void ref_quantize_block(wgt_dtype t, const float *x, unsigned char *out) {
    float amax = 0.0f, max = 0.0f;
    for (int i = 0; i < QK; i++)
        if (amax < fabsf(x[i])) {
            amax = fabsf(x[i]);
            max = x[i];
        }
    float d = t == WGT_Q8_0 ? amax / 127.0f : max / -8.0f;
    float id = d != 0.0f && isfinite(d) && fabsf(d) >= FLT_MIN ? 1.0f / d : 0.0f;
    uint16_t h = wgt_f32_to_f16(d);
    out[0] = (unsigned char)(h & 0xff);
    out[1] = (unsigned char)(h >> 8);
    if (t == WGT_Q8_0) {
        for (int i = 0; i < QK; i++) {
            float q = roundf(x[i] * id);
            out[2 + i] = q != q ? 0 : (unsigned char)(int8_t)q;
        }
        return;
    }
    for (int i = 0; i < QK / 2; i++) {
        float va = x[i] * id + 8.5f, vb = x[i + QK / 2] * id + 8.5f;
        int8_t a = va != va ? 0 : (int8_t)va, b = vb != vb ? 0 : (int8_t)vb;
        out[2 + i] = (unsigned char)((a < 15 ? a : 15) | (b < 15 ? b : 15) << 4);
    }
}

static float ref_value(wgt_dtype t, const unsigned char *block, int i) {
    float d = wgt_f16_to_f32((uint16_t)(block[0] | block[1] << 8));
    int q = t == WGT_Q8_0 ? (int8_t)block[2 + i]
                          : (i < QK / 2 ? block[2 + i] & 0xf : block[2 + i - QK / 2] >> 4) - 8;
    return (float)q * d;
}

/* Deterministic values with blocks of every kind that matters to the rounding: random
 * magnitudes, all zeros, a lone negative extreme, exact ties, tiny values; and, where
 * odd is set, a NaN, an infinity of each sign, subnormals only, and magnitudes so small that
 * the scale d is subnormal (1 / d overflows). */
static void fill_values_of(float *x, int64_t n, uint32_t seed, int odd) {
    uint32_t s = seed * 2654435761u + 1;
    for (int64_t i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        float u = (float)(s >> 8) / 16777216.0f - 0.5f;
        int64_t block = i / QK, j = i % QK;
        if (odd && block % 12 >= 7) {
            switch (block % 12) {
            case 7: x[i] = j == 9 ? NAN : u * 4.0f; break;
            case 8: x[i] = j == 3 ? INFINITY : u; break;
            case 9: x[i] = j == 30 ? -INFINITY : u * 10.0f; break;
            case 10: x[i] = u * 2e-38f; break;       /* subnormal and tiny normal values */
            default: x[i] = u * 1e-36f; break;       /* d = amax / 127 (q8_0) subnormal */
            }
            continue;
        }
        switch (block % 7) {
        case 0: x[i] = u * 8.0f; break;
        case 1: x[i] = 0.0f; break;
        case 2: x[i] = j == 5 ? -3.0f : u; break;
        case 3: x[i] = j == 0 ? 127.0f : (float)(j - 16) + 0.5f; break; /* q8_0: d = 1, every value a tie */
        case 4: x[i] = u * 1e-3f; break;
        case 5: x[i] = j == 0 ? -8.0f : (float)(j % 16 - 8) + 0.5f; break; /* q4_0: d = 1, x / d + 8.5 whole */
        default: x[i] = u * 300.0f; break;
        }
    }
}

static void fill_values(float *x, int64_t n, uint32_t seed) { fill_values_of(x, n, seed, 0); }

static void ref_quantize(wgt_dtype t, const float *x, int64_t n, unsigned char *out) {
    for (int64_t b = 0; b < n / QK; b++) ref_quantize_block(t, x + b * QK, out + b * block_bytes(t));
}

static const wgt_dtype block_types[2] = {WGT_Q8_0, WGT_Q4_0};

TEST_BACKENDS(quant_quantize_matches_ggml_bit_for_bit) {
    const int64_t shapes[][2] = {{1, 32}, {3, 64}, {33, 96}, {7, 4096}};
    for (int ti = 0; ti < 2; ti++)
        for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
            wgt_dtype t = block_types[ti];
            int64_t R = shapes[si][0], K = shapes[si][1], n = R * K;
            float *x = malloc(sizeof(float) * (size_t)n);
            size_t nb = (size_t)(n / QK) * block_bytes(t);
            unsigned char *want = malloc(nb), *got = malloc(nb);
            fill_values(x, n, (uint32_t)(si * 7 + ti));
            ref_quantize(t, x, n, want);
            wgt_tensor *a = wgt_tensor_from_data(ctx, WGT_F32, 2, shapes[si], x, sizeof(float) * (size_t)n,
                                                 WGT_USAGE_DEFAULT);
            wgt_tensor *q = wgt_quantize(a, t);
            CHECK(q && wgt_tensor_dtype(q) == t && wgt_tensor_nbytes(q) == nb, "%s", wgt_last_error());
            CHECK(wgt_tensor_read(q, got, nb) == WGT_OK, "%s", wgt_last_error());
            size_t bad = 0;
            while (bad < nb && got[bad] == want[bad]) bad++;
            CHECK(bad == nb, "%s [%lld, %lld]: byte %zu (block %zu) is %u, ggml gives %u", wgt_dtype_name(t),
                  (long long)R, (long long)K, bad, bad / block_bytes(t), bad < nb ? got[bad] : 0,
                  bad < nb ? want[bad] : 0);
            /* Dequantization is one multiply: bit for bit too. */
            wgt_tensor *d = wgt_dequantize(q, WGT_F32);
            float *back = malloc(sizeof(float) * (size_t)n);
            CHECK(wgt_tensor_read(d, back, sizeof(float) * (size_t)n) == WGT_OK, "%s", wgt_last_error());
            int64_t wrong = -1;
            for (int64_t i = 0; i < n && wrong < 0; i++) {
                float r = ref_value(t, want + (size_t)(i / QK) * block_bytes(t), (int)(i % QK));
                if (memcmp(&r, &back[i], 4) != 0) wrong = i;
            }
            CHECK(wrong < 0, "%s dequantized element %lld differs", wgt_dtype_name(t), (long long)wrong);
            free(x), free(want), free(got), free(back);
            wgt_release(a), wgt_release(q), wgt_release(d);
        }
}

/* Blocks with a NaN, infinities, subnormals and a subnormal scale: every byte as the reference
 * with docs/quant.md's rules gives (so the backends agree, whatever a device does with
 * subnormals or converting NaN), and dequantized values as the bytes say (NaN as NaN). */
TEST_BACKENDS(quant_quantize_non_finite_and_subnormal_blocks) {
    const int64_t shape[2] = {3, 12 * QK};
    int64_t n = shape[0] * shape[1];
    float *x = malloc(sizeof(float) * (size_t)n), *back = malloc(sizeof(float) * (size_t)n);
    fill_values_of(x, n, 5, 1);
    wgt_tensor *a = wgt_tensor_from_data(ctx, WGT_F32, 2, shape, x, sizeof(float) * (size_t)n, WGT_USAGE_DEFAULT);
    for (int ti = 0; ti < 2; ti++) {
        wgt_dtype t = block_types[ti];
        size_t nb = (size_t)(n / QK) * block_bytes(t);
        unsigned char *want = malloc(nb), *got = malloc(nb);
        ref_quantize(t, x, n, want);
        wgt_tensor *q = wgt_quantize(a, t), *d = q ? wgt_dequantize(q, WGT_F32) : NULL;
        CHECK(q && wgt_tensor_read(q, got, nb) == WGT_OK, "%s", wgt_last_error());
        for (size_t b = 0, shown = 0; q && b < nb; b++)
            if (got[b] != want[b] && shown++ < 4)
                CHECK(0, "%s: byte %zu (block %zu, kind %zu) is %02x, want %02x", wgt_dtype_name(t), b,
                      b / block_bytes(t), b / block_bytes(t) % 12, got[b], want[b]);
        CHECK(d && wgt_tensor_read(d, back, sizeof(float) * (size_t)n) == WGT_OK, "%s", wgt_last_error());
        for (int64_t i = 0, shown = 0; d && i < n; i++) {
            float r = ref_value(t, want + (size_t)(i / QK) * block_bytes(t), (int)(i % QK));
            int same = (isnan(r) && isnan(back[i])) || !memcmp(&r, &back[i], 4);
            if (!same && shown++ < 4)
                CHECK(0, "%s: dequantized element %lld is %g, want %g", wgt_dtype_name(t), (long long)i, back[i], r);
        }
        free(want), free(got);
        wgt_release(q), wgt_release(d);
    }
    free(x), free(back);
    wgt_release(a);
}

/* f16 input, a transposed (strided) input and wgt_cast both ways. */
TEST_BACKENDS(quant_quantize_f16_strided_and_cast) {
    int64_t K = 64, R = 5, n = K * R;
    float x[320], xt[320];
    fill_values(x, n, 11);
    for (int ti = 0; ti < 2; ti++) {
        wgt_dtype t = block_types[ti];
        size_t nb = (size_t)(n / QK) * block_bytes(t);
        unsigned char want[340], got[340];
        /* f16: ggml quantizes the f32 value of each f16. */
        uint16_t h[320];
        float hf[320];
        for (int i = 0; i < n; i++) h[i] = wgt_f32_to_f16(x[i]), hf[i] = wgt_f16_to_f32(h[i]);
        ref_quantize(t, hf, n, want);
        int64_t shape[2] = {R, K};
        wgt_tensor *a16 = wgt_tensor_from_data(ctx, WGT_F16, 2, shape, h, sizeof h, WGT_USAGE_DEFAULT);
        wgt_tensor *q16 = wgt_cast(a16, t);
        CHECK(q16 && wgt_tensor_read(q16, got, nb) == WGT_OK && memcmp(got, want, nb) == 0, "%s from f16: %s",
              wgt_dtype_name(t), wgt_last_error());
        /* A [K, R] tensor transposed: rows with stride 1 and elements R apart. */
        for (int r = 0; r < R; r++)
            for (int k = 0; k < K; k++) xt[k * R + r] = x[r * K + k];
        ref_quantize(t, x, n, want);
        int64_t tshape[2] = {K, R};
        wgt_tensor *b = wgt_tensor_from_data(ctx, WGT_F32, 2, tshape, xt, sizeof xt, WGT_USAGE_DEFAULT);
        wgt_tensor *bt = wgt_transpose(b, 0, 1);
        wgt_tensor *qt = wgt_quantize(bt, t);
        CHECK(qt && wgt_tensor_read(qt, got, nb) == WGT_OK && memcmp(got, want, nb) == 0, "%s of a transposed view: %s",
              wgt_dtype_name(t), wgt_last_error());
        /* Back to f16 through wgt_cast: the f32 value rounded once. */
        wgt_tensor *d16 = wgt_cast(qt, WGT_F16);
        uint16_t back[320];
        CHECK(d16 && wgt_tensor_dtype(d16) == WGT_F16 && wgt_tensor_read(d16, back, sizeof back) == WGT_OK, "%s",
              wgt_last_error());
        int wrong = -1;
        for (int i = 0; i < n && wrong < 0; i++)
            if (back[i] != wgt_f32_to_f16(ref_value(t, want + (size_t)(i / QK) * block_bytes(t), i % QK))) wrong = i;
        CHECK(wrong < 0, "%s to f16: element %d", wgt_dtype_name(t), wrong);
        wgt_release(a16), wgt_release(q16), wgt_release(b), wgt_release(bt), wgt_release(qt), wgt_release(d16);
    }
}

/* x @ w^T against a float64 product with the dequantized weights. The kernels add in f32:
 * within a block 32 products, then the block sums, so the error is bounded by
 * (32 + K / 32) f32 roundings of the sum of magnitudes. views: bit 0, x is every other row of
 * a [2M, K] tensor; bit 1, w is a window of a larger quantized matrix (from its second row
 * and second block: its blocks start at odd block indices and its rows are 2 blocks longer
 * apart than they are long); bit 2, the same window 8 blocks in (rows 16 blocks longer
 * apart: groups of 8 blocks stay whole); bit 3, x is the transpose of a [K, M] tensor (its
 * values 1 apart along M, M apart along K). */
static void check_matmul(wgt_context *ctx, wgt_dtype t, int64_t M, int64_t N, int64_t K, int views, uint32_t seed) {
    int strided = views & 1, window = (views & 6) != 0, transposed = (views & 8) != 0;
    int64_t wb = views & 4 ? 8 : window; /* blocks the window starts in */
    int64_t WN = N + window, WK = K + 2 * QK * wb; /* the whole quantized matrix */
    float *w = malloc(sizeof(float) * (size_t)(WN * WK)), *x = malloc(sizeof(float) * (size_t)(M * K * 2));
    fill_values(w, WN * WK, seed);
    for (int64_t i = 0; i < M * K * 2; i++) x[i] = sinf((float)i * 0.7f + (float)seed) * 2.0f;
    size_t nb = (size_t)(WN * WK / QK) * block_bytes(t);
    unsigned char *qb = malloc(nb);
    ref_quantize(t, w, WN * WK, qb);
    int64_t wshape[2] = {WN, WK};
    wgt_tensor *wall = wgt_tensor_from_data(ctx, t, 2, wshape, qb, nb, WGT_USAGE_DEFAULT);
    wgt_tensor *wrows = window ? wgt_slice(wall, 0, 1, WN, 1) : wgt_retain(wall);
    wgt_tensor *wq = window ? wgt_slice(wrows, 1, QK * wb, QK * wb + K, 1) : wgt_retain(wrows);
    wgt_tensor *xt, *xbase;
    if (transposed) {
        int64_t xshape[2] = {K, M};
        float *xk = malloc(sizeof(float) * (size_t)(M * K));
        for (int64_t m = 0; m < M; m++)
            for (int64_t k = 0; k < K; k++) xk[k * M + m] = x[m * K + k];
        xbase = wgt_tensor_from_data(ctx, WGT_F32, 2, xshape, xk, sizeof(float) * (size_t)(M * K), WGT_USAGE_DEFAULT);
        xt = wgt_transpose(xbase, 0, 1);
        free(xk);
    } else if (strided) {
        int64_t xshape[2] = {2 * M, K};
        xbase = wgt_tensor_from_data(ctx, WGT_F32, 2, xshape, x, sizeof(float) * (size_t)(2 * M * K), WGT_USAGE_DEFAULT);
        xt = wgt_slice(xbase, 0, 1, 2 * M, 2);
    } else {
        int64_t xshape[2] = {M, K};
        xbase = wgt_tensor_from_data(ctx, WGT_F32, 2, xshape, x, sizeof(float) * (size_t)(M * K), WGT_USAGE_DEFAULT);
        xt = wgt_retain(xbase);
    }
    wgt_tensor *y = wgt_matmul_quantized(xt, wq);
    float *got = malloc(sizeof(float) * (size_t)(M * N));
    CHECK(y && wgt_tensor_read(y, got, sizeof(float) * (size_t)(M * N)) == WGT_OK, "%s: %s", wgt_dtype_name(t),
          wgt_last_error());
    int bad = 0;
    for (int64_t m = 0; m < M && !bad; m++)
        for (int64_t n = 0; n < N && !bad; n++) {
            double sum = 0, mag = 0;
            const float *xr = x + (strided ? (2 * m + 1) : m) * K;
            for (int64_t k = 0; k < K; k++) {
                int64_t at = (n + window) * WK + QK * wb + k; /* the element in the whole matrix */
                double p = (double)xr[k] * ref_value(t, qb + (size_t)(at / QK) * block_bytes(t), (int)(at % QK));
                sum += p;
                mag += fabs(p);
            }
            double tol = ldexp(1, -23) * (double)(QK + K / QK) * mag + 1e-30;
            if (fabs(got[m * N + n] - sum) > tol) {
                bad = 1;
                CHECK(0, "%s M=%lld N=%lld K=%lld views=%d: out[%lld, %lld] = %.9g, float64 %.9g (tolerance %.3g)",
                      wgt_dtype_name(t), (long long)M, (long long)N, (long long)K, views, (long long)m, (long long)n,
                      got[m * N + n], sum, tol);
            }
        }
    free(w), free(x), free(qb), free(got);
    wgt_release(wall), wgt_release(wrows), wgt_release(wq), wgt_release(xbase), wgt_release(xt), wgt_release(y);
}

TEST_BACKENDS(quant_matmul_against_float64) {
    const int64_t cases[][3] = {{1, 1, 32}, {1, 67, 4096}, {3, 5, 96}, {33, 17, 64}, {8, 9, 128}, {5, 130, 256}};
    for (int ti = 0; ti < 2; ti++)
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
            for (int strided = 0; strided < 2; strided++)
                check_matmul(ctx, block_types[ti], cases[c][0], cases[c][1], cases[c][2], strided, (uint32_t)(c + 3 * ti));
}

/* Decoding's shapes (1 to 3 rows of x) across the matrix-vector kernel's layout of work
 * (quant_matvec_lanes.wgsl: 32 invocations along a row, 4 rows to a group of them, 32 rows to
 * a workgroup): rows of w not a multiple of the rows a workgroup takes, K of one block, odd
 * block counts, rows shorter and longer than one block per invocation and ending inside a
 * round, windows of w whose blocks start at odd indices. */
TEST_BACKENDS(quant_matvec_tiling) {
    const int64_t cases[][3] = {{1, 9, 32}, {1, 13, 7 * 32}, {2, 7, 65 * 32}, {3, 17, 129 * 32}, {1, 8, 64 * 32}};
    for (int ti = 0; ti < 2; ti++)
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
            for (int views = 0; views < 4; views++)
                check_matmul(ctx, block_types[ti], cases[c][0], cases[c][1], cases[c][2], views,
                             (uint32_t)(7 * c + 3 * ti + (uint32_t)views));
}

/* Decoding's shapes with long rows (K a multiple of 256, as the models' weights): rows of w
 * not a multiple of the 32 a workgroup takes, several rounds of the invocations along a row,
 * 1 to 3 rows of x (contiguous, every other row, transposed), and windows of w 8 blocks in. */
TEST_BACKENDS(quant_matvec_long_rows) {
    const int64_t cases[][3] = {{1, 67, 256},      {2, 33, 512}, {3, 100, 768}, {1, 1, 2048},
                                {2, 64, 9 * 256}, {3, 31, 256}, {1, 20, 17 * 256}};
    const int views[] = {0, 1, 4, 5, 8, 12};
    for (int ti = 0; ti < 2; ti++)
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
            for (size_t v = 0; v < sizeof views / sizeof views[0]; v++)
                check_matmul(ctx, block_types[ti], cases[c][0], cases[c][1], cases[c][2], views[v],
                             (uint32_t)(5 * c + 3 * ti + (uint32_t)v));
}

/* wgt_linear with a quantized weight and a bias, batched x and f16 x. */
TEST_BACKENDS(quant_linear_bias_and_f16) {
    int64_t N = 6, K = 64;
    int64_t wshape[2] = {N, K}, xshape[3] = {2, 3, K}, bshape[1] = {N};
    wgt_tensor *w = wgt_rand_normal(ctx, WGT_F32, 2, wshape, 0, 1, 5);
    wgt_tensor *x = wgt_rand_normal(ctx, WGT_F32, 3, xshape, 0, 1, 6);
    wgt_tensor *bias = wgt_rand_normal(ctx, WGT_F32, 1, bshape, 0, 1, 7);
    wgt_tensor *wq = wgt_quantize(w, WGT_Q4_0);
    wgt_tensor *wd = wgt_dequantize(wq, WGT_F32);
    wgt_tensor *y = wgt_linear(x, wq, bias), *ref = wgt_linear(x, wd, bias);
    CHECK(y && wgt_tensor_ndim(y) == 3 && wgt_tensor_shape(y)[2] == N, "%s", wgt_last_error());
    float a[36], b[36];
    CHECK(wgt_tensor_read(y, a, sizeof a) == WGT_OK && wgt_tensor_read(ref, b, sizeof b) == WGT_OK, "%s",
          wgt_last_error());
    for (int i = 0; i < 36; i++) CHECK(fabsf(a[i] - b[i]) <= 1e-5f * (1 + fabsf(b[i])), "[%d] %g vs %g", i, a[i], b[i]);
    wgt_tensor *x16 = wgt_cast(x, WGT_F16), *b16 = wgt_cast(bias, WGT_F16);
    wgt_tensor *y16 = wgt_linear(x16, wq, b16);
    uint16_t h[36];
    CHECK(y16 && wgt_tensor_dtype(y16) == WGT_F16 && wgt_tensor_read(y16, h, sizeof h) == WGT_OK, "%s",
          wgt_last_error());
    for (int i = 0; i < 36; i++)
        CHECK(fabsf(wgt_f16_to_f32(h[i]) - b[i]) <= 4e-3f * (1 + fabsf(b[i])), "f16 [%d] %g vs %g", i,
              wgt_f16_to_f32(h[i]), b[i]);
    wgt_release(w), wgt_release(x), wgt_release(bias), wgt_release(wq), wgt_release(wd), wgt_release(y);
    wgt_release(ref), wgt_release(x16), wgt_release(b16), wgt_release(y16);
}

/* Embedding lookup in a quantized table gives f32 rows, the dequantized rows exactly. */
TEST_BACKENDS(quant_gather_rows) {
    int64_t V = 9, K = 96;
    int64_t shape[2] = {V, K};
    wgt_tensor *table = wgt_rand_normal(ctx, WGT_F32, 2, shape, 0, 1, 9);
    int32_t idx[4] = {8, 0, 3, 3};
    int64_t ishape[2] = {2, 2};
    wgt_tensor *ids = wgt_tensor_from_data(ctx, WGT_I32, 2, ishape, idx, sizeof idx, WGT_USAGE_DEFAULT);
    for (int ti = 0; ti < 2; ti++) {
        wgt_tensor *q = wgt_quantize(table, block_types[ti]);
        wgt_tensor *d = wgt_dequantize(q, WGT_F32);
        wgt_tensor *g = wgt_gather_rows(q, ids);
        CHECK(g && wgt_tensor_dtype(g) == WGT_F32 && wgt_tensor_ndim(g) == 3, "%s", wgt_last_error());
        float all[9 * 96], rows[4 * 96];
        CHECK(wgt_tensor_read(d, all, sizeof all) == WGT_OK && wgt_tensor_read(g, rows, sizeof rows) == WGT_OK, "%s",
              wgt_last_error());
        for (int i = 0; i < 4; i++)
            CHECK(memcmp(rows + i * K, all + idx[i] * K, sizeof(float) * (size_t)K) == 0, "%s row %d",
                  wgt_dtype_name(block_types[ti]), i);
        /* Out of range: an error naming the index, as for other tables. */
        int32_t badv[1] = {9};
        int64_t one = 1;
        wgt_tensor *bad = wgt_tensor_from_data(ctx, WGT_I32, 1, &one, badv, sizeof badv, WGT_USAGE_DEFAULT);
        CHECK_ERROR(!wgt_gather_rows(q, bad), WGT_ERR_INVALID_ARGUMENT, "9");
        /* Indices computed on the device are checked there: the read reports them. */
        wgt_tensor *dev = wgt_add_scalar(bad, 0);
        wgt_tensor *gd = wgt_gather_rows(q, dev);
        float tmp[96];
        CHECK_ERROR(wgt_tensor_read(gd, tmp, sizeof tmp) != WGT_OK, WGT_ERR_INVALID_ARGUMENT, "9");
        wgt_release(q), wgt_release(d), wgt_release(g), wgt_release(bad), wgt_release(dev), wgt_release(gd);
    }
    wgt_release(table), wgt_release(ids);
}

/* Bytes in and out unchanged; a row slice is a view whose bytes are its rows' blocks, and a
 * product through it reads those rows. */
TEST_BACKENDS(quant_bytes_and_row_views) {
    int64_t shape[2] = {4, 64};
    unsigned char bytes[4 * 2 * 34];
    for (size_t i = 0; i < sizeof bytes; i++) bytes[i] = (unsigned char)(i * 37 + 11);
    for (int b = 0; b < 8; b++) bytes[b * 34 + 1] = 0x3c; /* scales near 1, finite */
    wgt_tensor *q = wgt_tensor_from_data(ctx, WGT_Q8_0, 2, shape, bytes, sizeof bytes, WGT_USAGE_DEFAULT);
    unsigned char back[sizeof bytes];
    CHECK(q && wgt_tensor_read(q, back, sizeof back) == WGT_OK && memcmp(back, bytes, sizeof back) == 0, "%s",
          wgt_last_error());
    wgt_tensor *rows = wgt_slice(q, 0, 1, 3, 1);
    unsigned char part[2 * 2 * 34];
    CHECK(rows && wgt_tensor_nbytes(rows) == sizeof part && wgt_tensor_read(rows, part, sizeof part) == WGT_OK &&
              memcmp(part, bytes + 68, sizeof part) == 0,
          "%s", wgt_last_error());
    /* The view's dequantized values are those of rows 1 and 2 of the whole. */
    wgt_tensor *dall = wgt_dequantize(q, WGT_F32), *dpart = wgt_dequantize(rows, WGT_F32);
    float fa[256], fp[128];
    CHECK(wgt_tensor_read(dall, fa, sizeof fa) == WGT_OK && wgt_tensor_read(dpart, fp, sizeof fp) == WGT_OK &&
              memcmp(fp, fa + 64, sizeof fp) == 0,
          "%s", wgt_last_error());
    /* Writing the view changes only its blocks. */
    unsigned char zero[2 * 2 * 34] = {0};
    CHECK(wgt_tensor_write(rows, zero, sizeof zero) == WGT_OK, "%s", wgt_last_error());
    CHECK(wgt_tensor_read(q, back, sizeof back) == WGT_OK && memcmp(back, bytes, 68) == 0 &&
              memcmp(back + 68, zero, sizeof zero) == 0 && memcmp(back + 204, bytes + 204, 68) == 0,
          "view write");
    /* Reshape of whole rows and a block-aligned column slice are views too. */
    int64_t flat[1] = {256};
    wgt_tensor *r1 = wgt_reshape(q, 1, flat);
    wgt_tensor *cols = wgt_slice(q, 1, 32, 64, 1);
    CHECK(r1 && cols && wgt_tensor_nbytes(cols) == 4 * 34, "%s", wgt_last_error());
    wgt_release(q), wgt_release(rows), wgt_release(dall), wgt_release(dpart), wgt_release(r1), wgt_release(cols);
}

/* Both backends give the same bytes, values and products for the same input: the GPU's
 * quantizer rounds exactly as the CPU's. */
TEST(quant_backends_agree) {
    wgt_context *cpu, *gpu;
    if (!test_backend_pair(&cpu, &gpu)) return;
    int64_t shape[2] = {19, 160}, xshape[2] = {4, 160};
    for (int ti = 0; ti < 2; ti++) {
        wgt_dtype t = block_types[ti];
        unsigned char b[2][19 * 5 * 34];
        float y[2][4 * 19];
        wgt_context *cs[2] = {cpu, gpu};
        for (int k = 0; k < 2; k++) {
            wgt_tensor *a = wgt_rand_normal(cs[k], WGT_F32, 2, shape, 0, 3, 21);
            wgt_tensor *x = wgt_rand_normal(cs[k], WGT_F32, 2, xshape, 0, 1, 22);
            wgt_tensor *q = wgt_quantize(a, t);
            wgt_tensor *m = wgt_matmul_quantized(x, q);
            CHECK(wgt_tensor_read(q, b[k], wgt_tensor_nbytes(q)) == WGT_OK && wgt_tensor_read(m, y[k], sizeof y[k]) == WGT_OK,
                  "%s", wgt_last_error());
            wgt_release(a), wgt_release(x), wgt_release(q), wgt_release(m);
        }
        CHECK(memcmp(b[0], b[1], (size_t)(19 * 5) * block_bytes(t)) == 0, "%s bytes differ", wgt_dtype_name(t));
        for (int i = 0; i < 4 * 19; i++)
            CHECK(fabsf(y[0][i] - y[1][i]) <= 1e-5f * (1 + fabsf(y[0][i])), "%s product %d: %g vs %g", wgt_dtype_name(t),
                  i, y[0][i], y[1][i]);
    }
    wgt_context_release(cpu);
    wgt_context_release(gpu);
}

/* WGT_QUANT_INT8=1: x is quantized to q8 per block and the integer dot products scaled. The
 * result differs from the float64 product of the dequantized weights by at most what
 * rounding x costs: half a step d_x of each block times the block's weight magnitudes, plus
 * f32 roundings. The same input on the f32 path is checked above. w is a window of a larger
 * matrix (its rows from the second on, its columns from block wb on) where wb > 0, which the
 * matrix-vector kernel reads through its first block and row stride (w_first, w_stride). */
static void check_int8(wgt_context *c, wgt_dtype t, int64_t M, int64_t N, int64_t K, int64_t wb, uint32_t seed) {
    int64_t WN = N + (wb > 0), WK = K + 2 * QK * wb; /* the whole quantized matrix */
    float *w = malloc(sizeof(float) * (size_t)(WN * WK)), *x = malloc(sizeof(float) * (size_t)(M * K));
    fill_values(w, WN * WK, seed);
    for (int64_t i = 0; i < M * K; i++) x[i] = sinf((float)i * 0.37f) * (float)(1 + i % 5);
    size_t nb = (size_t)(WN * WK / QK) * block_bytes(t);
    unsigned char *qb = malloc(nb);
    ref_quantize(t, w, WN * WK, qb);
    int64_t ws[2] = {WN, WK}, xs[2] = {M, K};
    wgt_tensor *wall = wgt_tensor_from_data(c, t, 2, ws, qb, nb, WGT_USAGE_DEFAULT);
    wgt_tensor *wrows = wb ? wgt_slice(wall, 0, 1, WN, 1) : wgt_retain(wall);
    wgt_tensor *wq = wb ? wgt_slice(wrows, 1, QK * wb, QK * wb + K, 1) : wgt_retain(wrows);
    wgt_tensor *xt = wgt_tensor_from_data(c, WGT_F32, 2, xs, x, sizeof(float) * (size_t)(M * K), WGT_USAGE_DEFAULT);
    wgt_tensor *y = wgt_matmul_quantized(xt, wq);
    float *got = malloc(sizeof(float) * (size_t)(M * N));
    CHECK(y && wgt_tensor_read(y, got, sizeof(float) * (size_t)(M * N)) == WGT_OK, "%s", wgt_last_error());
    int bad = 0, exact_everywhere = 1;
    for (int64_t m = 0; m < M && !bad; m++)
        for (int64_t n = 0; n < N && !bad; n++) {
            double sum = 0, mag = 0, bound = 0;
            for (int64_t b = 0; b < K / QK; b++) {
                double amax = 0, wmag = 0;
                for (int i = 0; i < QK; i++) amax = fmax(amax, fabs(x[m * K + b * QK + i]));
                for (int i = 0; i < QK; i++) {
                    int64_t at = (n + (wb > 0)) * WK + QK * (wb + b) + i; /* the element in the whole matrix */
                    double wv = ref_value(t, qb + (size_t)(at / QK) * block_bytes(t), i);
                    double p = wv * x[m * K + b * QK + i];
                    sum += p, mag += fabs(p), wmag += fabs(wv);
                }
                bound += (amax / 127.0) * 0.5 * wmag * (1 + 1e-6);
            }
            double err = fabs(got[m * N + n] - sum), tol = bound + ldexp(1, -22) * (double)(QK + K / QK) * mag;
            if (err > ldexp(1, -20) * mag) exact_everywhere = 0;
            if (err > tol) {
                bad = 1;
                CHECK(0, "%s M=%lld N=%lld K=%lld window at block %lld: out[%lld, %lld] = %.9g, float64 %.9g (bound %.3g)",
                      wgt_dtype_name(t), (long long)M, (long long)N, (long long)K, (long long)wb, (long long)m,
                      (long long)n, got[m * N + n], sum, tol);
            }
        }
    /* The path ran: rounding x shows somewhere. */
    CHECK(!exact_everywhere, "%s: the int8 path gave f32 results", wgt_dtype_name(t));
    free(w), free(x), free(qb), free(got);
    wgt_release(wall), wgt_release(wrows), wgt_release(wq), wgt_release(xt), wgt_release(y);
}

/* A context of ctx's backend whose quantized products take the integer path
 * (WGT_QUANT_INT8=1 when it is created); NULL after a failed CHECK. */
static wgt_context *int8_context(wgt_context *ctx) {
    test_saved_env saved = test_env_set("WGT_QUANT_INT8", "1");
    wgt_context_options o = {0};
    o.backend = wgt_context_backend(ctx);
    o.quiet = 1;
    wgt_context *c = wgt_context_create(&o);
    test_env_restore(&saved);
    CHECK(c != NULL, "%s", wgt_last_error());
    return c;
}

TEST_BACKENDS(quant_matmul_int8_activations) {
    wgt_context *c = int8_context(ctx);
    if (!c) return;
    /* 1 to 3 rows of x take the matrix-vector kernel with x quantized by a pass of its own
     * first (long rows of x too, 1600 and 1800 blocks); more rows the tiled kernels. Windows
     * of w: from an odd block, from an even block, with an odd count of blocks a row. */
    const int64_t cases[][4] = {{1, 67, 4096, 0}, {3, 5, 96, 0},      {9, 17, 64, 0},  {1, 13, 129 * 32, 0},
                                {2, 9, 7 * 32, 0}, {2, 37, 768, 0},     {3, 5, 256, 0},  {1, 3, 1600 * 32, 0},
                                {3, 4, 600 * 32, 0}, {1, 41, 64 * 32, 1}, {2, 9, 66 * 32, 2}, {3, 7, 9 * 32, 2},
                                {1, 33, 130 * 32, 4}};
    for (int ti = 0; ti < 2; ti++)
        for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++)
            check_int8(c, block_types[ti], cases[ci][0], cases[ci][1], cases[ci][2], cases[ci][3], (uint32_t)ci);
    wgt_context_release(c);
}

/* The int8 path given rows of x that hold a NaN, an infinity, or a block of subnormal and tiny
 * values (whose scale d_x is subnormal, so 1 / d_x would overflow): a NaN row gives NaN
 * products, an infinite one products that are not finite, and the tiny block adds nothing
 * (the same bits as the row with that block zero), on the matrix-vector (1 to 3 rows) and the
 * tiled kernels alike. */
TEST_BACKENDS(quant_matmul_int8_non_finite_activations) {
    wgt_context *c = int8_context(ctx);
    if (!c) return;
    enum { N = 5, K = 96 };
    wgt_tensor *w = wgt_rand_normal(c, WGT_F32, 2, (int64_t[]){N, K}, 0, 1, 31);
    for (int ti = 0; ti < 2; ti++) {
        wgt_tensor *wq = wgt_quantize(w, block_types[ti]);
        for (int M = 3; M <= 9; M += 6) {
            float x[2][9 * K];
            for (int v = 0; v < 2; v++)
                for (int i = 0; i < M * K; i++) {
                    int r = i / K % 4, k = i % K;
                    float u = sinf((float)i * 0.37f) * 2.0f;
                    x[v][i] = r == 1 && k == 40 ? NAN : r == 3 && k == 70 ? INFINITY : u;
                    if (r == 2 && k < 32) x[v][i] = v ? 0.0f : (k % 2 ? 1e-40f : -3e-37f) * (float)(k % 5);
                }
            float y[2][9 * N];
            for (int v = 0; v < 2; v++) {
                wgt_tensor *xt = wgt_tensor_from_data(c, WGT_F32, 2, (int64_t[]){M, K}, x[v], sizeof(float) * (size_t)(M * K),
                                                      WGT_USAGE_DEFAULT);
                wgt_tensor *yt = wq && xt ? wgt_matmul_quantized(xt, wq) : NULL;
                CHECK(yt && wgt_tensor_read(yt, y[v], sizeof(float) * (size_t)(M * N)) == WGT_OK, "%s", wgt_last_error());
                wgt_release(xt), wgt_release(yt);
            }
            for (int m = 0; m < M; m++)
                for (int n = 0; n < N; n++) {
                    float got = y[0][m * N + n];
                    const char *what = wgt_dtype_name(block_types[ti]);
                    if (m % 4 == 1) CHECK(isnan(got), "%s M %d: NaN row %d gave %g", what, M, m, got);
                    else if (m % 4 == 3) CHECK(!isfinite(got), "%s M %d: infinite row %d gave %g", what, M, m, got);
                    else CHECK(!memcmp(&got, &y[1][m * N + n], 4), "%s M %d: row %d gave %g, with the block zero %g",
                               what, M, m, got, y[1][m * N + n]);
                }
        }
        wgt_release(wq);
    }
    wgt_release(w);
    wgt_context_release(c);
}
