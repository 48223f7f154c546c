/*
 * What the CPU backend promises of f32 matrix products, which go through the BLAS: the bits
 * may change with the BLAS's own threads (OpenBLAS sums differently with one thread than
 * with several) and between a row computed alone (sgemv) and the same row inside a larger
 * product (sgemm); the error bound against float64 holds in every case; and with the same
 * BLAS threads and shapes a product gives the same bits every time. docs/architecture.md
 * states this beside the rule that every other CPU result is independent of the thread count.
 */
#include <dlfcn.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

typedef void (*set_threads_fn)(int);

/* OpenBLAS's control of its threads, where the BLAS linked in is OpenBLAS. */
static set_threads_fn blas_set_threads(void) {
    set_threads_fn fn;
    *(void **)&fn = dlsym(RTLD_DEFAULT, "openblas_set_num_threads");
    return fn;
}

static int blas_get_threads(void) {
    int (*fn)(void);
    *(void **)&fn = dlsym(RTLD_DEFAULT, "openblas_get_num_threads");
    return fn ? fn() : 0;
}

/* out = a @ b on ctx, read back; checks each element against the float64 product within
 * (K + 2) * 2^-24 * sum |a_k b_k|, the bound of any summation order in f32. */
static float *product_within_bound(wgt_context *ctx, const float *a, const float *b, int64_t M, int64_t K, int64_t N,
                                   const char *what) {
    int64_t sa[2] = {M, K}, sb[2] = {K, N};
    wgt_tensor *ta = wgt_tensor_from_data(ctx, WGT_F32, 2, sa, a, sizeof(float) * (size_t)(M * K), WGT_USAGE_DEFAULT);
    wgt_tensor *tb = wgt_tensor_from_data(ctx, WGT_F32, 2, sb, b, sizeof(float) * (size_t)(K * N), WGT_USAGE_DEFAULT);
    wgt_tensor *c = wgt_matmul(ta, tb);
    float *out = malloc(sizeof(float) * (size_t)(M * N));
    CHECK(c && out && wgt_tensor_read(c, out, sizeof(float) * (size_t)(M * N)) == WGT_OK, "%s: %s", what,
          wgt_last_error());
    int bad = 0;
    for (int64_t i = 0; out && i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            double ref = 0, mag = 0;
            for (int64_t k = 0; k < K; k++) {
                double p = (double)a[i * K + k] * b[k * N + j];
                ref += p;
                mag += fabs(p);
            }
            double err = fabs(out[i * N + j] - ref), bound = (double)(K + 2) * ldexp(1.0, -24) * mag;
            if (err > bound && bad++ < 3)
                CHECK(0, "%s: [%lld, %lld] is %.9g, float64 %.17g, error %.3g > bound %.3g", what, (long long)i,
                      (long long)j, out[i * N + j], ref, err, bound);
        }
    wgt_release(ta), wgt_release(tb), wgt_release(c);
    return out;
}

TEST(cpu_f32_matmul_with_any_blas_threads) {
    set_threads_fn set_threads = blas_set_threads();
    if (!set_threads) {
        test_skip("the BLAS linked in is not OpenBLAS: its threads cannot be set from here");
        return;
    }
    wgt_context *cpu = test_new_context(WGT_BACKEND_CPU);
    if (!cpu) return;
    int before = blas_get_threads();
    static const int64_t shapes[][3] = {{1, 3000, 1000}, {3, 3000, 1000}, {200, 5000, 300}, {1000, 1, 700}};
    static const int threads[] = {1, 2, 4};
    for (int s = 0; s < 4; s++) {
        int64_t M = shapes[s][0], K = shapes[s][1], N = shapes[s][2];
        float *a = malloc(sizeof(float) * (size_t)(M * K)), *b = malloc(sizeof(float) * (size_t)(K * N));
        uint64_t state = 0x9e3779b97f4a7c15ull * (uint64_t)(s + 1);
        for (int64_t i = 0; i < M * K + K * N; i++) {
            state = state * 6364136223846793005ull + 1442695040888963407ull;
            float v = (float)((double)(state >> 40) / 16777216.0 - 0.5);
            if (i < M * K) a[i] = v;
            else b[i - M * K] = v;
        }
        for (int t = 0; t < 3; t++) {
            set_threads(threads[t]);
            char what[96];
            snprintf(what, sizeof what, "%lldx%lldx%lld with %d BLAS threads", (long long)M, (long long)K,
                     (long long)N, threads[t]);
            float *first = product_within_bound(cpu, a, b, M, K, N, what);
            float *again = product_within_bound(cpu, a, b, M, K, N, what);
            CHECK(first && again && !memcmp(first, again, sizeof(float) * (size_t)(M * N)),
                  "%s: the same product twice gave different bits", what);
            free(first), free(again);
        }
        free(a), free(b);
    }
    set_threads(before > 0 ? before : 1);
    wgt_context_release(cpu);
}
