/*
 * f16 matrix products through subgroup matrices (src/backend/webgpu/matmul_sgmatrix.c): exact
 * results on values k/8 (every product and partial sum exact in f32) and results within the
 * f32 accumulation's bound of a float64 reference on random values, over odd shapes, views
 * (a transposed operand, a broadcast batch) and both fetch paths (16 bytes at a time, one
 * value at a time). They run where the device uses subgroup matrices (the wasm build in
 * Node with unsafeNvidiaF16 on an NVIDIA GPU: web/tests/run_c_suite.mjs --webgpu
 * --unsafe-nvidia-f16 matmul_sgmatrix); elsewhere they are skipped, unless
 * WGT_TEST_REQUIRE_SGMATRIX=1 says the device must have them.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "wgtensor.h"

/* The context's WebGPU device multiplies f16 through subgroup matrices (wgt_context_describe). */
static int sgmatrix_used(wgt_context *ctx) {
    char *d = wgt_context_describe(ctx);
    int used = d && strstr(d, "subgroup matrices: used") != NULL;
    if (!used && getenv("WGT_TEST_REQUIRE_SGMATRIX") && !strcmp(getenv("WGT_TEST_REQUIRE_SGMATRIX"), "1"))
        CHECK(0, "WGT_TEST_REQUIRE_SGMATRIX=1 but the device does not use subgroup matrices:\n%s", d ? d : "(no description)");
    else if (!used)
        test_skip("the WebGPU device does not use subgroup matrices (needs the adapter's feature and shader-f16: "
                  "NVIDIA through the wasm build with unsafeNvidiaF16)");
    free(d);
    return used;
}

typedef struct {
    int M, N, K, batch;
    int a_transposed, b_transposed; /* stored [K, M] ([N, K]) and multiplied through a transposed view */
    int b_shared;                   /* b has no batch dimension: broadcast over a's */
} shape_case;

static const shape_case cases[] = {
    {256, 264, 136, 1, 0, 0, 0}, /* 16-byte fetches along K (a) and N (b), edge tiles in N */
    {193, 77, 61, 1, 0, 0, 0},   /* K odd: one value at a time */
    {130, 96, 72, 1, 0, 1, 0},   /* x @ w^T: b fetched along K */
    {136, 64, 48, 1, 1, 0, 0},   /* a^T @ b: a fetched along M */
    {70, 50, 40, 3, 0, 0, 1},    /* a batch of 3 against one b */
    {256, 128, 96, 2, 0, 0, 0},  /* whole tiles of the emulated tile, a batch of 2 */
    {256, 256, 128, 2, 0, 0, 0}, /* whole tiles of every tile tried (no fetch bounds-checked), a batch of 2 */
    {128, 256, 192, 1, 0, 1, 0}, /* whole tiles, b fetched along K */
    {256, 128, 128, 2, 1, 0, 1}, /* whole tiles, a fetched along M, a broadcast b */
    {200, 136, 128, 1, 0, 0, 0}, /* K whole, edges in M and N: only edge workgroups check */
    {130, 256, 64, 2, 0, 1, 0},  /* the same with b fetched along K, a batch of 2 */
    {48, 40, 8, 1, 0, 0, 0},     /* one step along K: no fetch ahead */
    {33, 40, 24, 1, 0, 0, 0},    /* two steps */
};

/* Host values: k/8 for small integers k (exact), or pseudo-random normals. */
static float value(int exact, int which, int i, uint32_t *seed) {
    if (exact) return which ? (float)((i * 5) % 13 - 6) / 8.0f : (float)((i * 7) % 17 - 8) / 8.0f;
    *seed = *seed * 1664525u + 1013904223u;
    double u1 = ((*seed >> 8) + 0.5) / 16777216.0;
    *seed = *seed * 1664525u + 1013904223u;
    double u2 = ((*seed >> 8) + 0.5) / 16777216.0;
    return (float)(sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2));
}

static void check_case(wgt_context *ctx, const shape_case *c, int exact) {
    int M = c->M, N = c->N, K = c->K, B = c->batch;
    size_t na = (size_t)B * M * K, nb = (size_t)(c->b_shared ? 1 : B) * K * N, no = (size_t)B * M * N;
    uint16_t *ha = malloc(na * 2), *hb = malloc(nb * 2), *got = malloc(no * 2);
    double *ref = calloc(no, sizeof *ref), *mag = calloc(no, sizeof *mag);
    CHECK(ha && hb && got && ref && mag);
    if (!ha || !hb || !got || !ref || !mag) goto done;
    uint32_t seed = 12345u;
    /* Stored as the case says; a(b, m, k) and b(b, k, n) index the logical operands. */
    for (size_t i = 0; i < na; i++) ha[i] = wgt_f32_to_f16(value(exact, 0, (int)i, &seed));
    for (size_t i = 0; i < nb; i++) hb[i] = wgt_f32_to_f16(value(exact, 1, (int)i, &seed));
    for (int bt = 0; bt < B; bt++)
        for (int m = 0; m < M; m++)
            for (int n = 0; n < N; n++) {
                double s = 0, sa = 0;
                for (int k = 0; k < K; k++) {
                    size_t ia = (size_t)bt * M * K + (c->a_transposed ? (size_t)k * M + m : (size_t)m * K + k);
                    size_t ib = (size_t)(c->b_shared ? 0 : bt) * K * N + (c->b_transposed ? (size_t)n * K + k : (size_t)k * N + n);
                    double p = (double)wgt_f16_to_f32(ha[ia]) * wgt_f16_to_f32(hb[ib]);
                    s += p, sa += fabs(p);
                }
                ref[((size_t)bt * M + m) * N + n] = s;
                mag[((size_t)bt * M + m) * N + n] = sa;
            }
    int64_t sa_shape[3] = {B, c->a_transposed ? K : M, c->a_transposed ? M : K};
    int64_t sb_shape[3] = {B, c->b_transposed ? N : K, c->b_transposed ? K : N};
    int a_nd = B > 1 ? 3 : 2, b_nd = B > 1 && !c->b_shared ? 3 : 2;
    wgt_tensor *ta = wgt_tensor_from_data(ctx, WGT_F16, a_nd, sa_shape + 3 - a_nd, ha, na * 2, WGT_USAGE_DEFAULT);
    wgt_tensor *tb = wgt_tensor_from_data(ctx, WGT_F16, b_nd, sb_shape + 3 - b_nd, hb, nb * 2, WGT_USAGE_DEFAULT);
    wgt_tensor *va = c->a_transposed ? wgt_transpose(ta, -2, -1) : ta, *vb = c->b_transposed ? wgt_transpose(tb, -2, -1) : tb;
    wgt_tensor *out = wgt_matmul(va, vb);
    CHECK(out && wgt_tensor_read(out, got, no * 2) == WGT_OK, "%dx%dx%d batch %d: %s", M, N, K, B, wgt_last_error());
    int bad = 0;
    for (size_t i = 0; out && i < no && bad < 5; i++) {
        double v = wgt_f16_to_f32(got[i]);
        /* Exact: the f32 sum is exact, so the one rounding is to f16. Random: that rounding
         * plus the f32 accumulation's bound (K steps of at most one f32 ulp each of the sum of
         * magnitudes). */
        double want = exact ? wgt_f16_to_f32(wgt_f32_to_f16((float)ref[i])) : ref[i];
        double tol = exact ? 0 : fabs(ref[i]) / 2048.0 + mag[i] * K * ldexp(1.0, -24) + ldexp(1.0, -24);
        if (!(fabs(v - want) <= tol)) {
            CHECK(0, "%s %dx%dx%d batch %d (a%s, b%s): out[%zu] = %.9g, wanted %.9g (tolerance %.3g)", exact ? "exact" : "random",
                  M, N, K, B, c->a_transposed ? "^T" : "", c->b_transposed ? "^T" : "", i, v, want, tol);
            bad++;
        }
    }
    wgt_release(out);
    if (va != ta) wgt_release(va);
    if (vb != tb) wgt_release(vb);
    wgt_release(ta);
    wgt_release(tb);
done:
    free(ha), free(hb), free(got), free(ref), free(mag);
}

TEST(matmul_sgmatrix_exact_values) {
    wgt_context *g = test_webgpu_context();
    if (!g) return;
    if (sgmatrix_used(g))
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) check_case(g, &cases[i], 1);
    wgt_context_release(g);
}

TEST(matmul_sgmatrix_random_against_f64) {
    wgt_context *g = test_webgpu_context();
    if (!g) return;
    if (sgmatrix_used(g))
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) check_case(g, &cases[i], 0);
    wgt_context_release(g);
}

/* The kernel with its subgroup-matrix operations emulated in plain WGSL
 * (WGT_SGMATRIX_EMULATE=1): its tiling, fetch paths, bounds, batches and epilogue on any
 * device, including those without the feature (lavapipe, SwiftShader). */
TEST(matmul_sgmatrix_tiling_emulated) {
    test_saved_env saved = test_env_set("WGT_SGMATRIX_EMULATE", "1");
    /* A small tile (2 x 1 result matrices per subgroup, 2 subgroups) unless the run names one:
     * lavapipe's compiler takes minutes over the 128 x 128 tile's unrolled kernel. */
    test_saved_env tile = test_env_set("WGT_SGMATRIX_TILE", getenv("WGT_SGMATRIX_TILE") ? getenv("WGT_SGMATRIX_TILE")
                                                                                         : "32,32,16,1,2");
    wgt_context *g = test_webgpu_context();
    if (g) {
        char *d = wgt_context_describe(g);
        int used = d && strstr(d, "subgroup matrices: used for f16 products (emulated") != NULL;
        if (d && strstr(d, "subgroup matrices: emulated, but the device has no shader-f16")) test_skip("no shader-f16 on this device");
        else CHECK(used, "the emulated kernel is not in use:\n%s", d ? d : wgt_last_error());
        free(d);
        for (size_t i = 0; used && i < sizeof cases / sizeof *cases; i++) {
            check_case(g, &cases[i], 1);
            check_case(g, &cases[i], 0);
        }
        wgt_context_release(g);
    }
    test_env_restore(&tile);
    test_env_restore(&saved);
}
