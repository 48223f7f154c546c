/*
 * Rotary position embedding and scaled dot-product attention against float64 references
 * computed here from the inputs, on both backends, with and without the causal mask, for
 * f32 and f16, odd sequence lengths, batch dimensions and explicit positions.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

static double tol_for(wgt_dtype dt) { return dt == WGT_F16 ? 1e-2 : 2e-5; }

static void check_rope(wgt_context *ctx, wgt_dtype dt, int64_t batch, int64_t seq, int64_t d, int explicit_pos) {
    int64_t shape[3] = {batch, seq, d}, pshape[1] = {seq};
    wgt_tensor *x = wgt_rand_normal(ctx, dt, 3, shape, 0, 1, (uint64_t)(seq * 31 + d));
    int32_t *pos = malloc((size_t)seq * sizeof *pos);
    for (int64_t i = 0; i < seq; i++) pos[i] = (int32_t)(3 * i + 7);
    wgt_tensor *p = explicit_pos ? wgt_tensor_from_data(ctx, WGT_I32, 1, pshape, pos, (size_t)seq * 4, WGT_USAGE_DEFAULT)
                                 : NULL;
    wgt_tensor *y = wgt_rope(x, p, 10000.0);
    CHECK(y != NULL, "rope %s [%lld, %lld, %lld]: %s", wgt_dtype_name(dt), (long long)batch, (long long)seq,
          (long long)d, wgt_last_error());
    double *vx = test_read_f64(x), *vy = y ? test_read_f64(y) : NULL;
    int64_t half = d / 2;
    for (int64_t b = 0; vx && vy && b < batch; b++)
        for (int64_t s = 0; s < seq; s++)
            for (int64_t i = 0; i < d; i++) {
                int64_t base = (b * seq + s) * d, j = i % half;
                double angle = (explicit_pos ? pos[s] : (double)s) * pow(10000.0, -(double)j / (double)half);
                double rot = i < half ? -vx[base + i + half] : vx[base + i - half];
                double want = vx[base + i] * cos(angle) + rot * sin(angle);
                CHECK(fabs(vy[base + i] - want) <= tol_for(dt) * (1 + fabs(want)), "rope %s element (%lld, %lld, %lld): %g, want %g",
                      wgt_dtype_name(dt), (long long)b, (long long)s, (long long)i, vy[base + i], want);
            }
    free(vx), free(vy), free(pos);
    wgt_release(x), wgt_release(p), wgt_release(y);
}

TEST_BACKENDS(rope_matches_reference) {
    check_rope(ctx, WGT_F32, 2, 7, 8, 0);
    check_rope(ctx, WGT_F32, 1, 13, 6, 1);
    check_rope(ctx, WGT_F16, 3, 5, 4, 1);
    check_rope(ctx, WGT_F32, 1, 1, 2, 0);
}

static void check_attention(wgt_context *ctx, wgt_dtype dt, int64_t heads, int64_t lq, int64_t lk, int64_t d,
                            int64_t dv, int causal) {
    int64_t sq[3] = {heads, lq, d}, sk[3] = {heads, lk, d}, sv[3] = {heads, lk, dv};
    uint64_t seed = (uint64_t)(lq * 1000 + lk * 10 + causal);
    wgt_tensor *q = wgt_rand_normal(ctx, dt, 3, sq, 0, 1, seed), *k = wgt_rand_normal(ctx, dt, 3, sk, 0, 1, seed + 1);
    wgt_tensor *v = wgt_rand_normal(ctx, dt, 3, sv, 0, 1, seed + 2);
    wgt_tensor *o = wgt_attention(q, k, v, causal, 0);
    CHECK(o != NULL, "attention: %s", wgt_last_error());
    double *vq = test_read_f64(q), *vk = test_read_f64(k), *vv = test_read_f64(v), *vo = o ? test_read_f64(o) : NULL;
    double *w = malloc((size_t)(lk > 0 ? lk : 1) * sizeof *w), scale = 1 / sqrt((double)d);
    for (int64_t h = 0; vq && vk && vv && vo && h < heads; h++)
        for (int64_t i = 0; i < lq; i++) {
            double mx = -INFINITY, sum = 0;
            for (int64_t j = 0; j < lk; j++) {
                double s = 0;
                for (int64_t c = 0; c < d; c++) s += vq[(h * lq + i) * d + c] * vk[(h * lk + j) * d + c];
                w[j] = causal && j > i + (lk - lq) ? -INFINITY : s * scale;
                if (w[j] > mx) mx = w[j];
            }
            for (int64_t j = 0; j < lk; j++) sum += w[j] = exp(w[j] - mx);
            for (int64_t c = 0; c < dv; c++) {
                double want = 0;
                for (int64_t j = 0; j < lk; j++) want += w[j] / sum * vv[(h * lk + j) * dv + c];
                double got = vo[(h * lq + i) * dv + c];
                CHECK(fabs(got - want) <= tol_for(dt) * (1 + fabs(want)) * 2, "attention %s causal %d (%lld, %lld, %lld): %g, want %g",
                      wgt_dtype_name(dt), causal, (long long)h, (long long)i, (long long)c, got, want);
            }
        }
    free(vq), free(vk), free(vv), free(vo), free(w);
    wgt_release(q), wgt_release(k), wgt_release(v), wgt_release(o);
}

TEST_BACKENDS(attention_matches_reference) {
    check_attention(ctx, WGT_F32, 2, 7, 7, 8, 5, 0);
    check_attention(ctx, WGT_F32, 3, 9, 9, 16, 16, 1);
    check_attention(ctx, WGT_F32, 1, 3, 11, 4, 6, 1); /* fewer queries than keys: the last 3 positions */
    check_attention(ctx, WGT_F16, 2, 5, 5, 8, 8, 1);
}

TEST_BACKENDS(rope_and_attention_errors) {
    int64_t s3[3] = {1, 4, 5}, s2[2] = {4, 6}, p3[1] = {3};
    wgt_tensor *odd = wgt_zeros(ctx, WGT_F32, 3, s3), *x = wgt_zeros(ctx, WGT_F32, 2, s2);
    wgt_tensor *xi = wgt_zeros(ctx, WGT_I32, 2, s2), *pos = wgt_zeros(ctx, WGT_I32, 1, p3);
    CHECK_ERROR(wgt_rope(odd, NULL, 10000) == NULL, WGT_ERR_SHAPE, "even");
    CHECK_ERROR(wgt_rope(xi, NULL, 10000) == NULL, WGT_ERR_DTYPE, "i32");
    CHECK_ERROR(wgt_rope(x, pos, 10000) == NULL, WGT_ERR_SHAPE, "[3]");
    CHECK_ERROR(wgt_rope(x, NULL, -1) == NULL, WGT_ERR_INVALID_ARGUMENT, "base");
    CHECK_ERROR(wgt_attention(x, odd, x, 0, 0) == NULL, WGT_ERR_SHAPE, "[1, 4, 5]");
    CHECK_ERROR(wgt_attention(x, x, xi, 0, 0) == NULL, WGT_ERR_DTYPE, "i32");
    CHECK_ERROR(wgt_attention(x, x, x, 0, NAN) == NULL, WGT_ERR_INVALID_ARGUMENT, "scale");
    wgt_release(odd), wgt_release(x), wgt_release(xi), wgt_release(pos);
}
