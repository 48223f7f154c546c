/*
 * KV-cache decoding: appending one token's keys and values at a time to a preallocated cache
 * and attending over the filled prefix gives, row by row, what causal attention over the whole
 * sequence gives; on both attention paths (the fused kernel and the composition), with grouped
 * heads through a broadcast view of the cache.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

static wgt_tensor *token(wgt_tensor *all, int64_t t) { return wgt_slice(all, 2, t, t + 1, 1); }

static void decode_matches_full(wgt_context *ctx, int grouped) {
    const int64_t B = 2, H = 4, HKV = grouped ? 2 : 4, T = 9, L = 12, D = 16;
    int64_t qs[4] = {B, H, T, D}, ks[4] = {B, HKV, T, D}, cs[4] = {B, HKV, L, D};
    wgt_tensor *q = wgt_rand_normal(ctx, WGT_F32, 4, qs, 0, 1, 1);
    wgt_tensor *k = wgt_rand_normal(ctx, WGT_F32, 4, ks, 0, 1, 2);
    wgt_tensor *v = wgt_rand_normal(ctx, WGT_F32, 4, ks, 0, 1, 3);
    /* Grouped heads: query head h reads key head h / (H / HKV), through a broadcast view. */
    int64_t g5[5] = {B, HKV, H / HKV, -1, D}, q5[5] = {B, HKV, H / HKV, T, D};
    wgt_tensor *k1 = wgt_unsqueeze(k, 2), *v1 = wgt_unsqueeze(v, 2);
    wgt_tensor *kx = wgt_expand(k1, 5, g5), *vx = wgt_expand(v1, 5, g5), *q5v = wgt_reshape(q, 5, q5);
    wgt_tensor *full = wgt_attention(q5v, kx, vx, 1, 0);
    size_t n = (size_t)(B * H * T * D);
    float *want = malloc(sizeof(float) * n), *got = malloc(sizeof(float) * n);
    CHECK(full && wgt_tensor_read(full, want, sizeof(float) * n) == WGT_OK, "%s", wgt_last_error());
    wgt_tensor *kc = wgt_zeros(ctx, WGT_F32, 4, cs), *vc = wgt_zeros(ctx, WGT_F32, 4, cs);
    for (int64_t t = 0; t < T; t++) {
        wgt_tensor *kt = token(k, t), *vt = token(v, t), *qt = wgt_slice(q5v, 3, t, t + 1, 1);
        CHECK(wgt_kv_cache_append(kc, kt, t) == WGT_OK && wgt_kv_cache_append(vc, vt, t) == WGT_OK, "%s",
              wgt_last_error());
        wgt_tensor *kp = wgt_slice(kc, 2, 0, t + 1, 1), *vp = wgt_slice(vc, 2, 0, t + 1, 1);
        wgt_tensor *kp1 = wgt_unsqueeze(kp, 2), *vp1 = wgt_unsqueeze(vp, 2);
        int64_t e5[5] = {B, HKV, H / HKV, t + 1, D};
        wgt_tensor *kpx = wgt_expand(kp1, 5, e5), *vpx = wgt_expand(vp1, 5, e5);
        wgt_tensor *o = wgt_attention(qt, kpx, vpx, (int)(t % 2), 0); /* causal or not: one query sees all */
        float row[2 * 4 * 16];
        CHECK(o && wgt_tensor_read(o, row, sizeof row) == WGT_OK, "step %lld: %s", (long long)t, wgt_last_error());
        for (int64_t b = 0; b < B; b++)
            for (int64_t h = 0; h < H; h++)
                memcpy(got + ((b * H + h) * T + t) * D, row + (b * H + h) * D, sizeof(float) * (size_t)D);
        wgt_release(kt), wgt_release(vt), wgt_release(qt), wgt_release(kp), wgt_release(vp), wgt_release(kp1);
        wgt_release(vp1), wgt_release(kpx), wgt_release(vpx), wgt_release(o);
    }
    for (size_t i = 0; i < n; i++)
        if (fabsf(got[i] - want[i]) > 2e-6f * (1 + fabsf(want[i]))) {
            CHECK(0, "grouped=%d element %zu: decoded %.9g, full attention %.9g", grouped, i, got[i], want[i]);
            break;
        }
    free(want), free(got);
    wgt_release(q), wgt_release(k), wgt_release(v), wgt_release(k1), wgt_release(v1), wgt_release(kx);
    wgt_release(vx), wgt_release(q5v), wgt_release(full), wgt_release(kc), wgt_release(vc);
}

TEST_BACKENDS(kv_cache_decode_matches_full_attention) {
    const wgt_attention_path paths[2] = {WGT_ATTENTION_KERNEL, WGT_ATTENTION_COMPOSE};
    for (int p = 0; p < 2; p++) {
        wgt_context_options o = {0};
        o.backend = wgt_context_backend(ctx);
        o.attention = paths[p];
        o.quiet = 1;
        wgt_context *c = wgt_context_create(&o);
        CHECK(c != NULL, "%s", wgt_last_error());
        if (!c) return;
        decode_matches_full(c, 0);
        decode_matches_full(c, 1);
        wgt_context_release(c);
    }
}

TEST_BACKENDS(kv_cache_append_errors) {
    int64_t cs[3] = {2, 4, 8}, xs[3] = {2, 1, 8}, bad[3] = {2, 1, 4}, two[3] = {2, 2, 8};
    wgt_tensor *c = wgt_zeros(ctx, WGT_F32, 3, cs), *x = wgt_ones(ctx, WGT_F32, 3, xs);
    wgt_tensor *xb = wgt_ones(ctx, WGT_F32, 3, bad), *x16 = wgt_ones(ctx, WGT_F16, 3, xs);
    wgt_tensor *x2 = wgt_ones(ctx, WGT_F32, 3, two);
    CHECK_ERROR(wgt_kv_cache_append(c, x, 4) != WGT_OK, WGT_ERR_SHAPE, "1 positions at 4 do not fit the cache's 4");
    CHECK_ERROR(wgt_kv_cache_append(c, x2, 3) != WGT_OK, WGT_ERR_SHAPE, "2 positions at 3");
    CHECK_ERROR(wgt_kv_cache_append(c, x, -1) != WGT_OK, WGT_ERR_SHAPE, "at -1");
    CHECK_ERROR(wgt_kv_cache_append(c, xb, 0) != WGT_OK, WGT_ERR_SHAPE, "must match the cache");
    CHECK_ERROR(wgt_kv_cache_append(c, x16, 0) != WGT_OK, WGT_ERR_DTYPE, "x is f16 but the cache is f32");
    /* Two positions at once (prefill) land where they should and leave the rest. */
    CHECK(wgt_kv_cache_append(c, x2, 1) == WGT_OK, "%s", wgt_last_error());
    float v[64];
    CHECK(wgt_tensor_read(c, v, sizeof v) == WGT_OK, "%s", wgt_last_error());
    for (int b = 0; b < 2; b++)
        for (int l = 0; l < 4; l++)
            for (int d = 0; d < 8; d++)
                CHECK(v[(b * 4 + l) * 8 + d] == (l == 1 || l == 2 ? 1.0f : 0.0f), "cache[%d, %d, %d]", b, l, d);
    wgt_release(c), wgt_release(x), wgt_release(xb), wgt_release(x16), wgt_release(x2);
}
