/*
 * Epilogues (src/core/epilogue.c): an add of a quantized product's result that nothing else
 * reads runs inside the product, one launch for the pair. The results are the same bits as
 * with the add run apart (a context without fusion runs it so) and within f32 rounding of a
 * float64 reference, for every kernel the product may take (the wide matrix-vector kernel,
 * the tiled one, the batched one, x quantized to q8 first), the addend either operand of the
 * add and a view at an offset; an add that cannot fold (its product's result read elsewhere,
 * a broadcast addend, a batch large enough to go through a dequantized weight) runs apart. A
 * row broadcast to one row is no broadcast: it folds.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

enum { PLAIN, SWAPPED, WINDOW, KEEP_PRODUCT, BROADCAST, LAYOUTS };

/* r + x @ w^T (layout: how the add is written) in ctx, read into out [M, N]; ref [2 M N]: the
 * float64 sums from the dequantized weight, then the magnitudes of their terms; *ran: the
 * launches it took. The weight is quantized from the same values in every context. */
static int run_case(wgt_context *ctx, wgt_dtype t, int64_t M, int64_t N, int64_t K, int layout, float *out,
                    double *ref, uint64_t *ran) {
    float *wv = malloc(sizeof(float) * (size_t)(N * K)), *xv = malloc(sizeof(float) * (size_t)(M * K));
    float *rv = malloc(sizeof(float) * (size_t)((M + 2) * N)), *wd = malloc(sizeof(float) * (size_t)(N * K));
    for (int64_t i = 0; i < N * K; i++) wv[i] = sinf((float)i * 0.31f) * (float)(1 + i % 7);
    for (int64_t i = 0; i < M * K; i++) xv[i] = cosf((float)i * 0.57f) * 1.5f;
    for (int64_t i = 0; i < (M + 2) * N; i++) rv[i] = (float)((i * 37) % 101) * 0.25f - 12.0f;
    int64_t ws[2] = {N, K}, xs[2] = {M, K}, rs[2] = {M + 2, N}, rn[1] = {N};
    wgt_tensor *wf = wgt_tensor_from_data(ctx, WGT_F32, 2, ws, wv, sizeof(float) * (size_t)(N * K), WGT_USAGE_DEFAULT);
    wgt_tensor *wq = wf ? wgt_cast(wf, t) : NULL, *wback = wq ? wgt_cast(wq, WGT_F32) : NULL;
    wgt_tensor *x = wgt_tensor_from_data(ctx, WGT_F32, 2, xs, xv, sizeof(float) * (size_t)(M * K), WGT_USAGE_DEFAULT);
    wgt_tensor *rall = wgt_tensor_from_data(ctx, WGT_F32, 2, rs, rv, sizeof(float) * (size_t)((M + 2) * N),
                                            WGT_USAGE_DEFAULT);
    /* The addend: rows 0..M-1 of rall, rows 1..M (a view at an offset), or row 0 broadcast. */
    wgt_tensor *row0 = wgt_slice(rall, 0, 0, 1, 1);
    wgt_tensor *r = layout == WINDOW ? wgt_slice(rall, 0, 1, M + 1, 1)
                  : layout == BROADCAST ? wgt_reshape(row0, 1, rn)
                                        : wgt_slice(rall, 0, 0, M, 1);
    int ok = wback && x && r && wgt_tensor_read(wback, wd, sizeof(float) * (size_t)(N * K)) == WGT_OK &&
             wgt_context_sync(ctx) == WGT_OK;
    uint64_t before = test_launches(ctx);
    wgt_tensor *d = ok ? wgt_matmul_quantized(x, wq) : NULL;
    wgt_tensor *y = d ? (layout == SWAPPED ? wgt_add(d, r) : wgt_add(r, d)) : NULL;
    if (layout != KEEP_PRODUCT) wgt_release(d), d = NULL;
    ok = y && wgt_tensor_read(y, out, sizeof(float) * (size_t)(M * N)) == WGT_OK;
    *ran = test_launches(ctx) - before;
    if (ok && d) { /* the product's result, read after the add, is whole */
        float *dv = malloc(sizeof(float) * (size_t)(M * N));
        ok = wgt_tensor_read(d, dv, sizeof(float) * (size_t)(M * N)) == WGT_OK;
        for (int64_t i = 0; ok && i < M * N; i++)
            CHECK(dv[i] + rv[i] == out[i], "the kept product [%lld] %g + %g, the sum %g", (long long)i, dv[i], rv[i],
                  out[i]);
        free(dv);
    }
    CHECK(ok, "%s M=%lld: %s", wgt_dtype_name(t), (long long)M, wgt_last_error());
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++) {
            double s = 0, mag = 0;
            for (int64_t k = 0; k < K; k++) {
                double p = (double)xv[m * K + k] * wd[n * K + k];
                s += p, mag += fabs(p);
            }
            int64_t rrow = layout == WINDOW ? m + 1 : layout == BROADCAST ? 0 : m;
            ref[m * N + n] = s + rv[rrow * N + n];
            ref[M * N + m * N + n] = mag;
        }
    wgt_tensor *all[] = {wf, wq, wback, x, rall, row0, r, d, y};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) wgt_release(all[i]);
    free(wv), free(xv), free(rv), free(wd);
    return ok;
}

static void check_epilogues(wgt_context *fused, wgt_context *plain, int int8) {
    /* {M, N, K}: the wide matrix-vector kernel (K a multiple of 256), the tiled one, the
     * batched one, and a batch that goes through a dequantized weight (no product node).
     * Every layout of the add on the first two (the kernels a decoding step takes), the plain
     * one elsewhere and with x quantized: each kernel variant compiles slowly on lavapipe. */
    const int64_t cases[][3] = {{1, 67, 256}, {2, 9, 7 * 32}, {5, 9, 64}, {40, 7, 64}};
    const wgt_dtype types[2] = {WGT_Q8_0, WGT_Q4_0};
    for (int ti = 0; ti < 2; ti++)
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
            for (int layout = 0; layout < (c < 2 && !int8 ? LAYOUTS : 1); layout++) {
                int64_t M = cases[c][0], N = cases[c][1], K = cases[c][2];
                float *a = malloc(sizeof(float) * (size_t)(M * N)), *b = malloc(sizeof(float) * (size_t)(M * N));
                double *ref = malloc(sizeof(double) * (size_t)(2 * M * N));
                uint64_t la = 0, lb = 0;
                int ok = run_case(fused, types[ti], M, N, K, layout, a, ref, &la) &&
                         run_case(plain, types[ti], M, N, K, layout, b, ref, &lb);
                const char *tn = wgt_dtype_name(types[ti]);
                /* Folded where a product node meets an add it may take: one launch for both. */
                uint64_t want = M < 32 && (layout <= WINDOW || (layout == BROADCAST && M == 1)) ? 1 : 2;
                if (M >= 32) want = la; /* the dequantized path's own launches */
                CHECK(!ok || la == want, "%s M=%lld N=%lld K=%lld layout %d int8 %d: %llu launches, want %llu", tn,
                      (long long)M, (long long)N, (long long)K, layout, int8, (unsigned long long)la,
                      (unsigned long long)want);
                CHECK(!ok || M >= 32 || lb == 2, "%s M=%lld layout %d: %llu launches without fusion", tn, (long long)M,
                      layout, (unsigned long long)lb);
                CHECK(!ok || !memcmp(a, b, sizeof(float) * (size_t)(M * N)),
                      "%s M=%lld N=%lld K=%lld layout %d int8 %d: folded and separate adds differ (%g, %g)", tn,
                      (long long)M, (long long)N, (long long)K, layout, int8, a[0], b[0]);
                for (int64_t i = 0; ok && !int8 && i < M * N; i++) {
                    /* The product's f32 rounding (as quant_matmul_against_float64 bounds it)
                     * and the add's. */
                    double tol = ldexp(1, -23) * ((double)(32 + K / 32) * ref[M * N + i] + fabs(ref[i]));
                    if (fabs(a[i] - ref[i]) > tol) {
                        CHECK(0, "%s M=%lld N=%lld K=%lld layout %d: [%lld] %.9g, float64 %.9g", tn, (long long)M,
                              (long long)N, (long long)K, layout, (long long)i, a[i], ref[i]);
                        break;
                    }
                }
                free(a), free(b), free(ref);
            }
}

TEST_BACKENDS(epilogue_add_folds_into_quantized_product) {
    for (int int8 = 0; int8 < 2; int8++) {
        test_saved_env env = test_env_set("WGT_QUANT_INT8", int8 ? "1" : NULL);
        wgt_backend_kind kind = wgt_context_backend(ctx);
        wgt_context *fused = test_fusion_context(kind, 0), *plain = test_fusion_context(kind, 1);
        test_env_restore(&env);
        if (fused && plain) check_epilogues(fused, plain, int8);
        if (fused) wgt_context_release(fused);
        if (plain) wgt_context_release(plain);
    }
}
