/*
 * f16 attention with both products on subgroup matrices (src/backend/webgpu/
 * attention_sgmatrix.c) against a float64 reference. The emulated test runs the kernel with
 * its subgroup-matrix operations in plain WGSL (WGT_SGMATRIX_EMULATE=1), so lavapipe checks
 * everything but the builtins; the hardware test runs where the device uses subgroup
 * matrices (NVIDIA through the wasm build with unsafeNvidiaF16) and is skipped elsewhere,
 * unless WGT_TEST_REQUIRE_SGMATRIX=1 says the device must have them.
 *
 * The tolerance is what f16 inputs with f32 accumulation allow: the scores and sums in f32
 * (about 2^-24 relative), each probability rounded to f16 for the P v product (2^-11
 * relative, so the output moves by at most 2^-11 sum_j p_j |v_j|), and the output rounded to
 * f16 (2^-11 |out|). v has a positive mean, so the unnormalised output grows with the keys:
 * accumulating it in f16 over a few hundred keys misses by several times that, and so does a
 * dropped rescale of the online softmax (the running maximum grows across tiles).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

typedef struct {
    const char *what;
    int nb;              /* batch dimensions of q (k and v broadcast the first one: size 1) */
    int64_t batch[2];
    int64_t lq, lk, d, dv;
    int causal;
    double scale;        /* 0: 1 / sqrt(d) */
    int q_strided;       /* q a view: the head dimension strided, every other row */
} sga_case;

static const sga_case cases[] = {
    {"2 x 3 heads, odd lengths, 1000 keys", 2, {2, 3}, 77, 1000, 64, 64, 0, 0, 0},
    {"causal, Lq < Lk, D and DV not multiples of a chunk", 1, {3, 1}, 50, 200, 40, 40, 1, 0.3, 0},
    {"causal, Lq > Lk: the first 60 rows see no key", 1, {2, 1}, 130, 70, 64, 64, 1, 0, 0},
    {"strided q, 2 x 2 heads, scores of several units", 2, {2, 2}, 33, 200, 64, 64, 1, 0.5, 1},
    {"D = 128, DV = 96: the output in two passes of 64 columns, the second partial", 1, {2, 1}, 65, 130, 128, 96, 0, 0.1, 0},
    /* Staging v takes more workgroup memory than 32 KiB leave: the plain kernel, if the
     * device has no more. */
    {"DV = 192", 1, {1, 1}, 40, 70, 32, 192, 1, 0, 0},
};

static uint32_t next(uint32_t *s) { return *s = *s * 1664525u + 1013904223u; }
static double uniform(uint32_t *s) { return ((next(s) >> 8) + 0.5) / 16777216.0; }

/* f16 host values: q and k near N(0, 1) (scale 1.5 on q: scores of a few units), v in
 * [0.25, 1.75). */
static void fill(uint16_t *x, size_t n, int which, uint32_t *s) {
    for (size_t i = 0; i < n; i++) {
        double v = which == 2 ? 0.25 + 1.5 * uniform(s) : (uniform(s) + uniform(s) + uniform(s) - 1.5) * 2.0 * (which ? 1 : 1.5);
        x[i] = wgt_f32_to_f16((float)v);
    }
}

static void check_case(wgt_context *ctx, const sga_case *c) {
    int64_t heads = c->nb == 2 ? c->batch[1] : 1, nbatch = c->batch[0] * heads;
    int64_t lq = c->lq, lk = c->lk, d = c->d, dv = c->dv;
    /* q stored [batch..., d, 2 lq] when strided: viewed transposed, every other row. */
    size_t nq = (size_t)(nbatch * lq * d * (c->q_strided ? 2 : 1)), nk = (size_t)(heads * lk * d),
           nv = (size_t)(heads * lk * dv), no = (size_t)(nbatch * lq * dv);
    uint16_t *hq = malloc(nq * 2), *hk = malloc(nk * 2), *hv = malloc(nv * 2), *got = malloc(no * 2);
    CHECK(hq && hk && hv && got);
    if (!hq || !hk || !hv || !got) goto done;
    uint32_t seed = 777u + (uint32_t)lq;
    fill(hq, nq, 0, &seed), fill(hk, nk, 1, &seed), fill(hv, nv, 2, &seed);
    int64_t qs[4], ks[4], vs[4];
    int nd = c->nb + 2;
    for (int i = 0; i < c->nb; i++) qs[i] = c->batch[i], ks[i] = vs[i] = i == 0 ? 1 : c->batch[i];
    qs[c->nb] = c->q_strided ? d : lq, qs[c->nb + 1] = c->q_strided ? 2 * lq : d;
    ks[c->nb] = lk, ks[c->nb + 1] = d;
    vs[c->nb] = lk, vs[c->nb + 1] = dv;
    wgt_tensor *tq = wgt_tensor_from_data(ctx, WGT_F16, nd, qs, hq, nq * 2, WGT_USAGE_DEFAULT);
    wgt_tensor *tk = wgt_tensor_from_data(ctx, WGT_F16, nd, ks, hk, nk * 2, WGT_USAGE_DEFAULT);
    wgt_tensor *tv = wgt_tensor_from_data(ctx, WGT_F16, nd, vs, hv, nv * 2, WGT_USAGE_DEFAULT);
    wgt_tensor *tt = c->q_strided ? wgt_transpose(tq, -1, -2) : NULL;
    wgt_tensor *q = c->q_strided ? wgt_slice(tt, -2, 1, 2 * lq, 2) : tq;
    wgt_tensor *o = wgt_attention(q, tk, tv, c->causal, c->scale);
    CHECK(o && wgt_tensor_read(o, got, no * 2) == WGT_OK, "%s: %s", c->what, wgt_last_error());
    double scale = c->scale ? c->scale : 1.0 / sqrt((double)d);
    double *p = malloc(sizeof *p * (size_t)lk);
    int bad = 0;
    for (int64_t b = 0; o && p && b < nbatch && bad < 5; b++)
        for (int64_t i = 0; i < lq && bad < 5; i++) {
            const uint16_t *kb = hk + (b % heads) * lk * d, *vb = hv + (b % heads) * lk * dv;
            int64_t visible = c->causal ? i + lk - lq + 1 : lk;
            if (visible > lk) visible = lk;
            double mx = -INFINITY, sum = 0;
            for (int64_t j = 0; j < visible; j++) {
                double s = 0;
                for (int64_t e = 0; e < d; e++) {
                    /* q[b, i, e]: stored [b][e][2 lq] at row 2 i + 1 when strided */
                    size_t iq = c->q_strided ? (size_t)((b * d + e) * 2 * lq + 2 * i + 1) : (size_t)((b * lq + i) * d + e);
                    s += (double)wgt_f16_to_f32(hq[iq]) * wgt_f16_to_f32(kb[j * d + e]);
                }
                p[j] = s * scale;
                if (p[j] > mx) mx = p[j];
            }
            for (int64_t j = 0; j < visible; j++) sum += p[j] = exp(p[j] - mx);
            for (int64_t e = 0; e < dv && bad < 5; e++) {
                double want = 0, mag = 0;
                for (int64_t j = 0; j < visible; j++) {
                    double x = wgt_f16_to_f32(vb[j * dv + e]);
                    want += p[j] / sum * x, mag += p[j] / sum * fabs(x);
                }
                double v = wgt_f16_to_f32(got[(b * lq + i) * dv + e]);
                if (visible <= 0) {
                    if (!isnan(v)) {
                        CHECK(0, "%s: out[%lld, %lld, %lld] = %g where no key is visible (NaN)", c->what, (long long)b,
                              (long long)i, (long long)e, v);
                        bad++;
                    }
                    continue;
                }
                double tol = ldexp(fabs(want) + mag, -11) * 1.05 + ldexp(1.0, -20);
                if (!(fabs(v - want) <= tol)) {
                    CHECK(0, "%s: out[%lld, %lld, %lld] = %.7g, float64 %.7g (tolerance %.3g)", c->what, (long long)b,
                          (long long)i, (long long)e, v, want, tol);
                    bad++;
                }
            }
        }
    free(p);
    wgt_release(o);
    if (c->q_strided) wgt_release(q), wgt_release(tt);
    wgt_release(tq), wgt_release(tk), wgt_release(tv);
done:
    free(hq), free(hk), free(hv), free(got);
}

/* No keys: an empty sum, zeros (the composition's answer; the kernels need keys). */
static void check_no_keys(wgt_context *ctx) {
    int64_t qs[3] = {2, 5, 64}, ks[3] = {2, 0, 64}, vs[3] = {2, 0, 32};
    wgt_tensor *q = wgt_ones(ctx, WGT_F16, 3, qs), *k = wgt_ones(ctx, WGT_F16, 3, ks), *v = wgt_ones(ctx, WGT_F16, 3, vs);
    wgt_tensor *o = wgt_attention(q, k, v, 0, 0);
    uint16_t got[2 * 5 * 32];
    CHECK(o && wgt_tensor_read(o, got, sizeof got) == WGT_OK, "Lk = 0: %s", wgt_last_error());
    for (size_t i = 0; o && i < sizeof got / sizeof *got; i++) CHECK(got[i] == 0, "Lk = 0: out[%zu] = %g", i, wgt_f16_to_f32(got[i]));
    wgt_release(o), wgt_release(q), wgt_release(k), wgt_release(v);
}

/* A WebGPU context that runs the attention kernel wherever it takes the problem (the test's
 * sizes would compose by default), and whether it uses the subgroup-matrix attention. */
static wgt_context *sga_context(int emulated, int *used) {
    wgt_context_options opt = {0};
    opt.backend = WGT_BACKEND_WEBGPU;
    opt.quiet = 1;
    opt.attention = WGT_ATTENTION_KERNEL;
    wgt_context *g = wgt_context_create(&opt);
    *used = 0;
    if (!g) {
        test_skip_no_webgpu();
        return NULL;
    }
    char *d = wgt_context_describe(g);
    *used = d && strstr(d, emulated ? "subgroup-matrix attention: used for f16 (emulated)" : "subgroup-matrix attention: used") != NULL;
    const char *req = getenv("WGT_TEST_REQUIRE_SGMATRIX");
    if (emulated && d && strstr(d, "subgroup matrices: emulated, but the device has no shader-f16"))
        test_skip("no shader-f16 on this device");
    else if (emulated || (req && !strcmp(req, "1")))
        CHECK(*used, "the subgroup-matrix attention is not in use:\n%s", d ? d : wgt_last_error());
    else if (!*used)
        test_skip("the WebGPU device does not use subgroup matrices (needs the adapter's feature and shader-f16: "
                  "NVIDIA through the wasm build with unsafeNvidiaF16)");
    free(d);
    return g;
}

static void run_all(int emulated) {
    int used = 0;
    test_saved_env on = test_env_set("WGT_SGMATRIX_ATTENTION", "1"); /* opt-in */
    wgt_context *g = sga_context(emulated, &used);
    test_env_restore(&on);
    for (size_t i = 0; used && i < sizeof cases / sizeof *cases; i++) check_case(g, &cases[i]);
    if (used) check_no_keys(g);
    if (g) wgt_context_release(g);
}

TEST(attention_sgmatrix_emulated) {
    test_saved_env saved = test_env_set("WGT_SGMATRIX_EMULATE", "1");
    /* The matrix product's self-test with a small tile: lavapipe compiles the default one for minutes. */
    test_saved_env tile = test_env_set("WGT_SGMATRIX_TILE", "32,32,16,1,2");
    run_all(1);
    test_env_restore(&tile);
    test_env_restore(&saved);
}

TEST(attention_sgmatrix_hardware) {
    test_saved_env saved = test_env_set("WGT_SGMATRIX_EMULATE", NULL);
    run_all(0);
    test_env_restore(&saved);
}

/* A context running the attention kernel where it takes the problem: its description must
 * hold both `want` strings (where the kernels stand), and f16 attention runs within the
 * tolerance on whichever kernel it picked. */
static void check_kernel_choice(const char *want, const char *want2, const char *what) {
    wgt_context_options opt = {0};
    opt.backend = WGT_BACKEND_WEBGPU;
    opt.quiet = 1;
    opt.attention = WGT_ATTENTION_KERNEL;
    wgt_context *g = wgt_context_create(&opt);
    if (!g) test_skip_no_webgpu();
    char *d = g ? wgt_context_describe(g) : NULL;
    if (g) {
        CHECK(d && strstr(d, want) && strstr(d, want2), "%s:\n%s", what, d ? d : wgt_last_error());
        check_case(g, &cases[1]);
        wgt_context_release(g);
    }
    free(d);
}

/* With the subgroup-matrix product off (WGT_SGMATRIX=0; a failed or stalled self-test takes
 * the same path), the attention kernel is unused, the description says why, and f16
 * attention runs on the plain kernel, within the same tolerance. */
TEST(attention_sgmatrix_off_keeps_plain_kernel) {
    test_saved_env saved = test_env_set("WGT_SGMATRIX_EMULATE", "1");
    test_saved_env off = test_env_set("WGT_SGMATRIX", "0");
    test_saved_env on = test_env_set("WGT_SGMATRIX_ATTENTION", "1");
    check_kernel_choice("subgroup-matrix attention: unused: the matrix product does not use subgroup matrices", "",
                        "the description does not say why the attention kernel is unused");
    test_env_restore(&on);
    test_env_restore(&off);
    test_env_restore(&saved);
}

/* Unasked (WGT_SGMATRIX_ATTENTION unset), the attention kernel stays off while the matrix
 * product uses subgroup matrices, the description says so, and f16 attention runs on the
 * plain kernel (the probe's compile is skipped too). */
TEST(attention_sgmatrix_is_opt_in) {
    test_saved_env saved = test_env_set("WGT_SGMATRIX_EMULATE", "1");
    test_saved_env tile = test_env_set("WGT_SGMATRIX_TILE", "32,32,16,1,2");
    test_saved_env unset = test_env_set("WGT_SGMATRIX_ATTENTION", NULL);
    check_kernel_choice("subgroup matrices: used", "subgroup-matrix attention: off (WGT_SGMATRIX_ATTENTION=1",
                        "the product should use subgroup matrices and the attention kernel be off");
    test_env_restore(&unset);
    test_env_restore(&tile);
    test_env_restore(&saved);
}
