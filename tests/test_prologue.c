/*
 * Prologues (src/core/prologue.c): an rms_norm whose result only quantized products read runs
 * inside them, one launch a product. The results are within f32 rounding of a float64
 * reference (with x quantized to q8, within its rounding too), for x and the norm's weight
 * contiguous or strided, no weight, rows of x of very large and very small magnitude, one or
 * two products of one norm, and every kernel the product may take (on WebGPU decoding's rows
 * normalized by the q8 pass, quantized or in its f32 form; more rows by the rows op inside
 * the step). A norm whose result is also read elsewhere, or with other work between it and
 * its product, runs apart.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

#define QK 32

enum { PLAIN, NO_WEIGHT, X_VIEW, G_VIEW, TWO_PRODUCTS, HUGE_ROWS, TINY_ROWS, KEEP_NORM, BETWEEN, LAYOUTS };
static const char *const layout_names[LAYOUTS] = {"plain", "no weight", "x strided", "weight strided",
                                                  "two products", "huge rows", "tiny rows", "norm kept",
                                                  "work between"};

typedef struct {
    int64_t M, N, K;
    int layout;
} norm_case;

/* Products the case records, and the launches they take when the norm folds. */
static int products(const norm_case *c) { return c->layout == TWO_PRODUCTS ? 2 : 1; }
static int folds(const norm_case *c) { return c->layout != KEEP_NORM && c->layout != BETWEEN; }

/* Weight p of wq [P, N, K]: a view. */
static wgt_tensor *weight_view(wgt_tensor *wq, int64_t p) {
    wgt_tensor *s = wgt_slice(wq, 0, p, p + 1, 1), *v = s ? wgt_squeeze(s, 0) : NULL;
    wgt_release(s);
    return v;
}

/* rms_norm(x, g) @ w^T (and again @ w2^T for TWO_PRODUCTS: out holds both, [P, M, N]) in ctx;
 * xn [M K]: the float64 normalized rows (times g); wd [P N K]: the dequantized weights; *ran:
 * the launches it took. */
static int run_case(wgt_context *ctx, wgt_dtype t, const norm_case *c, float *out, double *xn, float *wd,
                    uint64_t *ran) {
    int64_t M = c->M, N = c->N, K = c->K, P = products(c);
    int layout = c->layout;
    /* eps large enough beside rows of magnitude 1 that leaving it out shows. */
    double scale = layout == HUGE_ROWS ? 1e30 : layout == TINY_ROWS ? 1e-30 : 1.0;
    double eps = layout == TINY_ROWS ? 1e-6 : layout == HUGE_ROWS ? 1e-5 : 0.01;
    float *wv = malloc(sizeof(float) * (size_t)(P * N * K)), *xv = malloc(sizeof(float) * (size_t)(M * 2 * K));
    float *gv = malloc(sizeof(float) * (size_t)(2 * K));
    for (int64_t i = 0; i < P * N * K; i++) wv[i] = sinf((float)i * 0.31f) * (float)(1 + i % 7);
    for (int64_t i = 0; i < M * 2 * K; i++) xv[i] = (float)(cos((double)i * 0.57) * (1 + i % 3) * scale);
    for (int64_t i = 0; i < 2 * K; i++) gv[i] = 0.5f + (float)((i * 13) % 17) / 16.0f;
    int64_t ws[3] = {P, N, K}, xs[2] = {M, 2 * K}, gs[1] = {2 * K};
    wgt_tensor *wf = wgt_tensor_from_data(ctx, WGT_F32, 3, ws, wv, sizeof(float) * (size_t)(P * N * K), WGT_USAGE_DEFAULT);
    wgt_tensor *wq = wf ? wgt_cast(wf, t) : NULL, *wback = wq ? wgt_cast(wq, WGT_F32) : NULL;
    wgt_tensor *w0 = wq ? weight_view(wq, 0) : NULL, *w1 = wq && P > 1 ? weight_view(wq, 1) : NULL;
    wgt_tensor *xall = wgt_tensor_from_data(ctx, WGT_F32, 2, xs, xv, sizeof(float) * (size_t)(M * 2 * K), WGT_USAGE_DEFAULT);
    wgt_tensor *gall = wgt_tensor_from_data(ctx, WGT_F32, 1, gs, gv, sizeof(float) * (size_t)(2 * K), WGT_USAGE_DEFAULT);
    /* x: the first K columns of each row (rows 2K apart), or every other column; g likewise. */
    wgt_tensor *x = xall ? wgt_slice(xall, 1, 0, layout == X_VIEW ? 2 * K : K, layout == X_VIEW ? 2 : 1) : NULL;
    wgt_tensor *g = layout == NO_WEIGHT || !gall ? NULL
                    : wgt_slice(gall, 0, 0, layout == G_VIEW ? 2 * K : K, layout == G_VIEW ? 2 : 1);
    int ok = wback && w0 && x && (g || layout == NO_WEIGHT) &&
             wgt_tensor_read(wback, wd, sizeof(float) * (size_t)(P * N * K)) == WGT_OK && wgt_context_sync(ctx) == WGT_OK;
    uint64_t before = test_launches(ctx);
    wgt_tensor *h = ok ? wgt_rms_norm(x, g, eps) : NULL, *other = NULL;
    if (layout == BETWEEN) other = wgt_neg(xall);
    wgt_tensor *y0 = h ? wgt_matmul_quantized(h, w0) : NULL, *y1 = h && w1 ? wgt_matmul_quantized(h, w1) : NULL;
    if (layout != KEEP_NORM) wgt_release(h), h = NULL;
    ok = y0 && (P == 1 || y1) && wgt_tensor_read(y0, out, sizeof(float) * (size_t)(M * N)) == WGT_OK &&
         (P == 1 || wgt_tensor_read(y1, out + M * N, sizeof(float) * (size_t)(M * N)) == WGT_OK);
    *ran = test_launches(ctx) - before;
    if (ok && h) { /* the kept norm's result is whole */
        float *hv = malloc(sizeof(float) * (size_t)(M * K));
        ok = wgt_tensor_read(h, hv, sizeof(float) * (size_t)(M * K)) == WGT_OK;
        for (int64_t m = 0; ok && m < M; m++) {
            double ss = 0;
            for (int64_t k = 0; k < K; k++) ss += (double)xv[m * 2 * K + k] * xv[m * 2 * K + k];
            double want = xv[m * 2 * K] / sqrt(ss / (double)K + eps) * gv[0];
            CHECK(fabs(hv[m * K] - want) <= 1e-5 * fabs(want), "the kept norm [%lld, 0] %g, float64 %g", (long long)m,
                  hv[m * K], want);
        }
        free(hv);
    }
    if (ok && other) {
        float *ov = malloc(sizeof(float) * (size_t)(M * 2 * K));
        ok = wgt_tensor_read(other, ov, sizeof(float) * (size_t)(M * 2 * K)) == WGT_OK;
        CHECK(!ok || ov[M * 2 * K - 1] == -xv[M * 2 * K - 1], "the work between: %g", ov[M * 2 * K - 1]);
        free(ov);
    }
    CHECK(ok, "%s %s M=%lld: %s", wgt_dtype_name(t), layout_names[layout], (long long)M, wgt_last_error());
    for (int64_t m = 0; m < M; m++) {
        int64_t xstep = layout == X_VIEW ? 2 : 1, gstep = layout == G_VIEW ? 2 : 1;
        double ss = 0;
        for (int64_t k = 0; k < K; k++) {
            double v = xv[m * 2 * K + k * xstep];
            ss += v * v;
        }
        double r = 1 / sqrt(ss / (double)K + eps);
        for (int64_t k = 0; k < K; k++)
            xn[m * K + k] = xv[m * 2 * K + k * xstep] * r * (layout == NO_WEIGHT ? 1.0 : (double)gv[k * gstep]);
    }
    wgt_tensor *all[] = {wf, wq, wback, w0, w1, xall, gall, x, g, h, other, y0, y1};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) wgt_release(all[i]);
    free(wv), free(xv), free(gv);
    return ok;
}

/* Checks out [P M N] against the float64 products of xn with wd: within f32 rounding, and
 * with x quantized (int8) within the quantization's bound as well. */
static void check_values(const norm_case *c, wgt_dtype t, int int8, const float *out, const double *xn, const float *wd,
                         const char *who) {
    int64_t M = c->M, N = c->N, K = c->K;
    for (int64_t p = 0; p < products(c); p++)
        for (int64_t m = 0; m < M; m++)
            for (int64_t n = 0; n < N; n++) {
                double sum = 0, mag = 0, bound = 0;
                for (int64_t b = 0; b < K / QK; b++) {
                    double amax = 0, wmag = 0;
                    for (int i = 0; i < QK; i++) {
                        double xv = xn[m * K + b * QK + i], wv = wd[(p * N + n) * K + b * QK + i];
                        amax = fmax(amax, fabs(xv));
                        sum += wv * xv, mag += fabs(wv * xv), wmag += fabs(wv);
                    }
                    bound += (amax / 127.0) * 0.5 * wmag * (1 + 1e-5);
                }
                /* The product's rounding (quant_matmul_against_float64's bound) and the norm's:
                 * its sum of squares over K and the scale's few roundings. */
                double tol = ldexp(1, -23) * (double)(32 + K / QK + K / 256 + 16) * mag + (int8 ? bound : 0);
                double got = out[(p * M + m) * N + n];
                if (!(fabs(got - sum) <= tol)) {
                    CHECK(0, "%s %s %s int8 %d M=%lld N=%lld K=%lld: product %lld [%lld, %lld] = %.9g, float64 %.9g",
                          who, wgt_dtype_name(t), layout_names[c->layout], int8, (long long)M, (long long)N,
                          (long long)K, (long long)p, (long long)m, (long long)n, got, sum);
                    return;
                }
            }
}

static void check_prologues(wgt_context *fused, wgt_context *plain, int int8, int cpu) {
    /* {M, N, K}: the matrix-vector kernel (one row; three rows over 7 blocks; a row longer
     * than the 2048 values the norm's statistics hold at once) and the tiled one (5 rows).
     * Every layout on the first; the plain one and a strided x on the others: each kernel
     * variant compiles slowly on lavapipe. */
    const int64_t shapes[][3] = {{1, 67, 256}, {3, 9, 7 * 32}, {1, 5, 71 * 32}, {5, 9, 64}};
    const wgt_dtype types[2] = {WGT_Q8_0, WGT_Q4_0};
    for (int ti = 0; ti < 2; ti++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (int layout = 0; layout < LAYOUTS; layout++) {
                if (s > 0 && layout != PLAIN && layout != X_VIEW) continue;
                if (int8 && layout != PLAIN && layout != G_VIEW && layout != HUGE_ROWS) continue;
                norm_case c = {shapes[s][0], shapes[s][1], shapes[s][2], layout};
                int64_t M = c.M, N = c.N, K = c.K, P = products(&c);
                float *a = malloc(sizeof(float) * (size_t)(P * M * N)), *b = malloc(sizeof(float) * (size_t)(P * M * N));
                float *wd = malloc(sizeof(float) * (size_t)(P * N * K));
                double *xn = malloc(sizeof(double) * (size_t)(M * K));
                uint64_t la = 0, lb = 0;
                int ok = run_case(fused, types[ti], &c, a, xn, wd, &la) && run_case(plain, types[ti], &c, b, xn, wd, &lb);
                const char *tn = wgt_dtype_name(types[ti]);
                uint64_t want = (uint64_t)P + (folds(&c) ? 0 : 1) + (layout == BETWEEN);
                CHECK(!ok || la == want, "%s %s M=%lld int8 %d: %llu launches, want %llu", tn, layout_names[layout],
                      (long long)M, int8, (unsigned long long)la, (unsigned long long)want);
                CHECK(!ok || lb == (uint64_t)P + 1 + (layout == BETWEEN), "%s %s: %llu launches without fusion", tn,
                      layout_names[layout], (unsigned long long)lb);
                if (ok) check_values(&c, types[ti], int8, a, xn, wd, "folded");
                if (ok) check_values(&c, types[ti], int8, b, xn, wd, "apart");
                /* The CPU backend runs a folded norm as the rows op: the same bits. */
                CHECK(!ok || !cpu || !memcmp(a, b, sizeof(float) * (size_t)(P * M * N)),
                      "%s %s: the CPU's folded norm differs from the norm apart (%g, %g)", tn, layout_names[layout],
                      a[0], b[0]);
                free(a), free(b), free(wd), free(xn);
            }
}

TEST_BACKENDS(prologue_norm_folds_into_quantized_products) {
    int cpu = wgt_context_backend(ctx) == WGT_BACKEND_CPU;
    for (int int8 = 0; int8 < 2; int8++) {
        test_saved_env env = test_env_set("WGT_QUANT_INT8", int8 ? "1" : NULL);
        wgt_backend_kind kind = wgt_context_backend(ctx);
        wgt_context *fused = test_fusion_context(kind, 0), *plain = test_fusion_context(kind, 1);
        test_env_restore(&env);
        if (fused && plain) check_prologues(fused, plain, int8, cpu);
        if (fused) wgt_context_release(fused);
        if (plain) wgt_context_release(plain);
    }
}
