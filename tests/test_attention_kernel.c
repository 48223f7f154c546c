/*
 * wgt_attention against a float64 reference on both backends: on WebGPU through the fused
 * kernel (src/backend/webgpu/attention.c) wherever it takes the dtype and head dimensions,
 * on the CPU and elsewhere through the composition of matmul, where and softmax. Shapes are
 * chosen against the kernel's blocks of 64 queries and 64 keys and its 16-value chunks of D:
 * one query and one key, lengths just past a block, more keys than queries and fewer (the
 * first queries then see no key under the causal mask and must give NaN), head dimensions
 * that are not multiples of 4, DV above 128 (the kernel's other thread layout) and odd DV
 * (f16 falls back to the composition there). Operands come as contiguous tensors, as
 * transposed views (the head dimension strided), as sliced views (odd offset, every other
 * row, the head dimension backwards), at an offset of 4 elements (16-byte reads still apply)
 * and with batch dimensions broadcast between q, k and v. Outputs are poisoned (WGT_POISON=1,
 * in the runner's poisoned pass), so an element no kernel wrote shows as NaN where a number is due.
 *
 * Tolerances are worst-case bounds computed per element from the inputs: a score is a dot
 * product of D terms, off by at most gamma_D * scale * sum|q k| (gamma_n = (n + 2) 2^-24,
 * Higham 3.1) plus its own rounding; errors of E in the scores change each probability by a
 * factor within exp(+-2E), so the output moves by at most (2E + terms for the exponentials,
 * the sums and the products) * sum_j p_j |v_j|. f16 adds a rounding of the result, and where
 * the composition runs in f16 the roundings of the scores and probabilities as well. The
 * bounds are far below what a dropped, doubled or misplaced key changes (about p_j |v_j|).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

#define U32 5.9604644775390625e-8 /* 2^-24 */
#define U16 9.765625e-4           /* 2^-10 */

typedef enum { CONTIGUOUS, TRANSPOSED, SLICED, OFFSET4 } layout;
static const char *const layout_names[] = {"contiguous", "transposed", "sliced", "offset 4"};

/* A [batch..., rows, cols] operand laid out as asked, with random normal values. */
static wgt_tensor *make_operand(wgt_context *ctx, wgt_dtype dt, layout l, int ndim, const int64_t *shape,
                                uint64_t seed) {
    int64_t s[WGT_MAX_DIMS], strides[WGT_MAX_DIMS], offset = 0, n = 1;
    memcpy(s, shape, sizeof(int64_t) * (size_t)ndim);
    int64_t rows = s[ndim - 2], cols = s[ndim - 1];
    if (l == CONTIGUOUS) return wgt_rand_normal(ctx, dt, ndim, s, 0, 1, seed);
    if (l == TRANSPOSED) { /* stored [.., cols, rows]: the head dimension has stride rows */
        s[ndim - 2] = cols, s[ndim - 1] = rows;
        wgt_tensor *base = wgt_rand_normal(ctx, dt, ndim, s, 0, 1, seed), *view = wgt_transpose(base, -1, -2);
        wgt_release(base);
        return view;
    }
    /* SLICED: rows 1, 3, 5, ... of [.., 2 rows + 1, cols + 1], each read from column cols - 1
     * down to 0. OFFSET4: contiguous from element 4 of a larger buffer. */
    int64_t brows = l == SLICED ? 2 * rows + 1 : rows, bcols = l == SLICED ? cols + 1 : cols;
    for (int i = 0; i < ndim - 2; i++) n *= s[i];
    int64_t batch_stride = brows * bcols;
    for (int i = ndim - 3; i >= 0; i--) strides[i] = batch_stride, batch_stride *= s[i];
    if (l == SLICED) {
        strides[ndim - 2] = 2 * bcols, strides[ndim - 1] = -1, offset = bcols + cols - 1;
    } else {
        strides[ndim - 2] = cols, strides[ndim - 1] = 1, offset = 4;
    }
    int64_t flat = n * brows * bcols + 4;
    wgt_tensor *base = wgt_rand_normal(ctx, dt, 1, &flat, 0, 1, seed);
    wgt_tensor *view = wgt_as_strided(base, ndim, s, strides, offset);
    wgt_release(base);
    return view;
}

typedef struct {
    wgt_dtype dt;
    int nq, nk, nv;                /* ranks */
    int64_t q[6], k[6], v[6];      /* shapes */
    layout lq, lk, lv;
    int causal;
    double scale;                  /* 0: 1/sqrt(d) */
} attn_case;

/* Index into an operand of rank n (row-major values) for broadcast batch index b of the
 * batch shape bs (nb dimensions), row r. */
static int64_t row_index(const int64_t *shape, int n, const int64_t *bs, int nb, int64_t b, int64_t r) {
    int64_t idx = 0, mul = shape[n - 2] * shape[n - 1];
    for (int i = nb - 1; i >= 0; i--) {
        int64_t c = b % bs[i];
        b /= bs[i];
        int oi = i - (nb - (n - 2));
        if (oi >= 0) {
            idx += (shape[oi] == 1 ? 0 : c) * mul;
            mul *= shape[oi];
        }
    }
    return idx + r * shape[n - 1];
}

/* Runs one case on ctx and checks every element against float64 with the bound above;
 * *launches gets the kernel launches wgt_attention's own work made. */
static void check_case(wgt_context *ctx, const attn_case *c, uint64_t seed, uint64_t *launches) {
    wgt_tensor *q = make_operand(ctx, c->dt, c->lq, c->nq, c->q, seed);
    wgt_tensor *k = make_operand(ctx, c->dt, c->lk, c->nk, c->k, seed + 1);
    wgt_tensor *v = make_operand(ctx, c->dt, c->lv, c->nv, c->v, seed + 2);
    wgt_tensor *in[3] = {q, k, v};
    CHECK(q && k && v && wgt_eval(3, in) == WGT_OK && wgt_context_sync(ctx) == WGT_OK, "inputs: %s", wgt_last_error());
    wgt_stats s0 = {0}, s1 = {0};
    wgt_context_stats(ctx, &s0);
    wgt_tensor *o = wgt_attention(q, k, v, c->causal, c->scale);
    CHECK(o != NULL, "attention: %s", wgt_last_error());
    double *vq = test_read_f64(q), *vk = test_read_f64(k), *vv = test_read_f64(v), *vo = o ? test_read_f64(o) : NULL;
    wgt_context_stats(ctx, &s1);
    *launches = s1.launches - s0.launches;
    int64_t lq = c->q[c->nq - 2], d = c->q[c->nq - 1], lk = c->k[c->nk - 2], dv = c->v[c->nv - 1];
    /* The broadcast batch shape, as the op computes it. */
    int nb = c->nq - 2;
    if (c->nk - 2 > nb) nb = c->nk - 2;
    if (c->nv - 2 > nb) nb = c->nv - 2;
    int64_t bs[6], batch = 1;
    for (int i = 0; i < nb; i++) {
        bs[i] = 1;
        const int64_t *shapes[3] = {c->q, c->k, c->v};
        int ranks[3] = {c->nq, c->nk, c->nv};
        for (int t = 0; t < 3; t++) {
            int oi = i - (nb - (ranks[t] - 2));
            if (oi >= 0 && shapes[t][oi] != 1) bs[i] = shapes[t][oi];
        }
        batch *= bs[i];
    }
    double scale = c->scale > 0 ? c->scale : 1 / sqrt((double)d);
    int f16 = c->dt == WGT_F16, composed = *launches != 1;
    double *sc = malloc(sizeof(double) * (size_t)lk), *mag = malloc(sizeof(double) * (size_t)lk);
    int bad = 0;
    for (int64_t b = 0; vq && vk && vv && vo && sc && mag && b < batch && !bad; b++)
        for (int64_t i = 0; i < lq && !bad; i++) {
            const double *qi = vq + row_index(c->q, c->nq, bs, nb, b, i);
            double mx = -INFINITY, e = 0, smax = 0, sum = 0;
            for (int64_t j = 0; j < lk; j++) {
                const double *kj = vk + row_index(c->k, c->nk, bs, nb, b, j);
                double dot = 0, m = 0;
                for (int64_t x = 0; x < d; x++) dot += qi[x] * kj[x], m += fabs(qi[x] * kj[x]);
                sc[j] = dot * scale;
                mag[j] = m * scale;
                if (c->causal && j > i + (lk - lq)) sc[j] = -INFINITY;
                if (sc[j] > mx) mx = sc[j];
            }
            for (int64_t j = 0; j < lk; j++) {
                if (sc[j] == -INFINITY) continue;
                /* The score's error: the dot product, the scaling (and in the f16 composition
                 * the roundings of the scores to f16 before and after scaling). */
                double err = (double)(d + 4) * U32 * mag[j] + 2 * U32 * fabs(sc[j]);
                if (f16 && composed) err += 2 * U16 * (fabs(sc[j]) + mag[j]);
                if (err > e) e = err;
                if (fabs(sc[j]) > smax) smax = fabs(sc[j]);
            }
            for (int64_t j = 0; j < lk; j++) sum += sc[j] = sc[j] == -INFINITY ? 0 : exp(sc[j] - mx);
            for (int64_t x = 0; x < dv && !bad; x++) {
                double want = 0, abs_pv = 0;
                for (int64_t j = 0; j < lk; j++) {
                    double vj = vv[row_index(c->v, c->nv, bs, nb, b, j) + x];
                    want += sc[j] / sum * vj;
                    abs_pv += sc[j] / sum * fabs(vj);
                }
                double got = vo[(b * lq + i) * dv + x];
                if (sum == 0) { /* no key visible: NaN */
                    if (!isnan(got)) {
                        CHECK(0, "%s %s row %lld of batch %lld sees no key: got %g, want NaN", test_backend_name(),
                              wgt_dtype_name(c->dt), (long long)i, (long long)b, got);
                        bad = 1;
                    }
                    continue;
                }
                /* exp2 and the division: a few ulps each; sums of Lk terms twice. */
                double per_p = 2 * e + (2.0 * (double)lk + 16) * U32 + (f16 && composed ? 8 * U16 : 0);
                double tol = per_p * abs_pv + (f16 ? 2 * U16 : 4 * U32) * fabs(want) + 1e-30;
                if (!(fabs(got - want) <= tol)) {
                    CHECK(0, "%s %s causal %d q %s k %s v %s: out[%lld][%lld][%lld] = %.9g, want %.9g (bound %.3g)",
                          test_backend_name(), wgt_dtype_name(c->dt), c->causal, layout_names[c->lq],
                          layout_names[c->lk], layout_names[c->lv], (long long)b, (long long)i, (long long)x, got,
                          want, tol);
                    bad = 1;
                }
            }
        }
    free(sc), free(mag), free(vq), free(vk), free(vv), free(vo);
    wgt_release(q), wgt_release(k), wgt_release(v), wgt_release(o);
}

/* Whether the WebGPU kernel takes the case (else the composition runs there too). */
static int kernel_takes(const attn_case *c) {
    int64_t dv = c->v[c->nv - 1], lk = c->k[c->nk - 2];
    return lk > 0 && dv <= 256 && (c->dt == WGT_F32 || dv % 2 == 0);
}

/* On WebGPU, a context that runs the kernel wherever it takes the problem: at the test's
 * sizes the default would compose (too few workgroups to fill a GPU). NULL elsewhere, and
 * when WebGPU is unavailable (the runner reports that). */
static wgt_context *kernel_context(void) {
    if (strcmp(test_backend_name(), "webgpu")) return NULL;
    wgt_context_options opt = {0};
    opt.backend = WGT_BACKEND_WEBGPU;
    opt.quiet = 1;
    opt.attention = WGT_ATTENTION_KERNEL;
    wgt_context *c = wgt_context_create(&opt);
    CHECK(c != NULL, "a WebGPU context running the attention kernel: %s", wgt_last_error());
    return c;
}

static void run_case(wgt_context *ctx, const attn_case *c, uint64_t seed) {
    uint64_t launches = 0;
    check_case(ctx, c, seed, &launches);
    if (!strcmp(test_backend_name(), "webgpu") && kernel_takes(c))
        CHECK(launches == 1, "%s q [.., %lld, %lld]: %llu launches, want the one kernel", wgt_dtype_name(c->dt),
              (long long)c->q[c->nq - 2], (long long)c->q[c->nq - 1], (unsigned long long)launches);
}

TEST_BACKENDS(attention_kernel_matches_float64) {
    static const attn_case cases[] = {
        /* one query, one key, D = DV = 1 */
        {WGT_F32, 3, 3, 3, {2, 1, 1}, {2, 1, 1}, {2, 1, 1}, CONTIGUOUS, CONTIGUOUS, CONTIGUOUS, 1, 0},
        /* just past a block; D = 13 and DV = 7 (element by element); q sliced */
        {WGT_F32, 3, 3, 3, {2, 67, 13}, {2, 67, 13}, {2, 67, 7}, SLICED, CONTIGUOUS, CONTIGUOUS, 1, 0},
        {WGT_F32, 3, 3, 3, {2, 67, 13}, {2, 67, 13}, {2, 67, 7}, CONTIGUOUS, SLICED, SLICED, 0, 0},
        /* few queries, many keys (the last positions); D not a multiple of 16, DV below 64 */
        {WGT_F32, 3, 3, 3, {1, 5, 20}, {1, 130, 20}, {1, 130, 36}, CONTIGUOUS, TRANSPOSED, CONTIGUOUS, 1, 0},
        /* many queries, few keys: the first 125 see none under the mask */
        {WGT_F32, 3, 3, 3, {2, 130, 8}, {2, 5, 8}, {2, 5, 8}, OFFSET4, CONTIGUOUS, TRANSPOSED, 1, 0},
        {WGT_F32, 3, 3, 3, {2, 130, 8}, {2, 5, 8}, {2, 5, 8}, CONTIGUOUS, OFFSET4, OFFSET4, 0, 0},
        /* broadcast batch dimensions: q [2, 3], k [3], v [1, 3]; an explicit scale */
        {WGT_F32, 4, 3, 4, {2, 3, 70, 64}, {3, 70, 64}, {1, 3, 70, 64}, CONTIGUOUS, TRANSPOSED, OFFSET4, 0, 0.05},
        /* the benchmark's head dimension, two blocks of queries */
        {WGT_F32, 3, 3, 3, {2, 128, 128}, {2, 128, 128}, {2, 128, 128}, CONTIGUOUS, CONTIGUOUS, CONTIGUOUS, 1, 0},
        /* DV above 128: the 256-invocation layout, DV not a multiple of 64 */
        {WGT_F32, 3, 3, 3, {1, 40, 32}, {1, 90, 32}, {1, 90, 200}, CONTIGUOUS, CONTIGUOUS, SLICED, 1, 0},
        /* f16: packed loads in units and element by element, even DV (the kernel) and odd (composed) */
        {WGT_F16, 3, 3, 3, {2, 67, 16}, {2, 67, 16}, {2, 67, 16}, CONTIGUOUS, CONTIGUOUS, CONTIGUOUS, 1, 0},
        {WGT_F16, 4, 3, 3, {2, 1, 9, 13}, {1, 70, 13}, {1, 70, 6}, SLICED, TRANSPOSED, OFFSET4, 1, 0},
        {WGT_F16, 3, 3, 3, {1, 33, 8}, {1, 33, 8}, {1, 33, 5}, CONTIGUOUS, CONTIGUOUS, CONTIGUOUS, 1, 0},
    };
    wgt_context *own = kernel_context(), *use = own ? own : ctx;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(use, &cases[i], 7000 + 10 * i);
    if (own) wgt_context_release(own);
}

/* The two backends on the same inputs (the seeded generators agree), each within its bound
 * of float64 above; here against each other: q = k = v one tensor (bound three times). */
TEST(attention_kernel_agrees_with_cpu) {
    wgt_context *cpu, *gpu;
    if (!test_backend_pair(&cpu, &gpu)) return;
    int64_t s[3] = {3, 150, 48};
    wgt_tensor *xc = wgt_rand_normal(cpu, WGT_F32, 3, s, 0, 1, 91), *xg = wgt_rand_normal(gpu, WGT_F32, 3, s, 0, 1, 91);
    wgt_tensor *oc = wgt_attention(xc, xc, xc, 1, 0), *og = wgt_attention(xg, xg, xg, 1, 0);
    double *a = oc ? test_read_f64(oc) : NULL, *b = og ? test_read_f64(og) : NULL;
    CHECK(a && b, "%s", wgt_last_error());
    double worst = 0;
    for (int64_t i = 0; a && b && i < 3 * 150 * 48; i++)
        if (!(fabs(a[i] - b[i]) <= worst)) worst = fabs(a[i] - b[i]);
    /* Rows are weighted means of values of size about 1; both are within about 1e-5 of float64. */
    CHECK(worst <= 1e-5, "cpu and webgpu differ by %g", worst);
    free(a), free(b);
    wgt_release(xc), wgt_release(xg), wgt_release(oc), wgt_release(og);
    wgt_context_release(cpu), wgt_context_release(gpu);
}

/* In a compiled graph the kernel reads the caller's tensors where they are (a view at an
 * offset included) and gives what the eager op gives, bit for bit, on every dispatch. */
TEST_BACKENDS(attention_kernel_in_compiled_graph) {
    wgt_context *own = kernel_context();
    if (own) ctx = own;
    int64_t sq[3] = {2, 70, 24}, sv[3] = {2, 70, 12}, so[3] = {2, 70, 12}, big[1] = {2 * 70 * 24 + 8};
    wgt_tensor *gq = wgt_graph_input(ctx, "attn_q", WGT_F32, 3, sq), *gk = wgt_graph_input(ctx, "attn_k", WGT_F32, 3, sq);
    wgt_tensor *gv = wgt_graph_input(ctx, "attn_v", WGT_F32, 3, sv);
    wgt_tensor *go = wgt_attention(gq, gk, gv, 1, 0);
    wgt_graph *g = go ? wgt_graph_build(ctx, 1, &(wgt_binding){"attn_o", go}) : NULL;
    CHECK(g != NULL, "build: %s", wgt_last_error());
    int64_t st[3] = {70 * 24, 24, 1};
    for (int rep = 0; g && rep < 2; rep++) {
        wgt_tensor *flat = wgt_rand_normal(ctx, WGT_F32, 1, big, 0, 1, 500 + (uint64_t)rep);
        wgt_tensor *q = wgt_as_strided(flat, 3, sq, st, 3 + rep); /* odd, then even offsets */
        wgt_tensor *k = wgt_rand_normal(ctx, WGT_F32, 3, sq, 0, 1, 600 + (uint64_t)rep);
        wgt_tensor *v = wgt_rand_normal(ctx, WGT_F32, 3, sv, 0, 1, 700 + (uint64_t)rep);
        wgt_tensor *out = wgt_tensor_create(ctx, WGT_F32, 3, so, WGT_USAGE_DEFAULT), *eager = wgt_attention(q, k, v, 1, 0);
        wgt_binding in[3] = {{"attn_q", q}, {"attn_k", k}, {"attn_v", v}};
        CHECK(wgt_graph_dispatch(g, 3, in, 1, &(wgt_binding){"attn_o", out}) == WGT_OK, "dispatch %d: %s", rep,
              wgt_last_error());
        float a[2 * 70 * 12], b[2 * 70 * 12];
        CHECK(wgt_tensor_read(out, a, sizeof a) == WGT_OK && wgt_tensor_read(eager, b, sizeof b) == WGT_OK, "%s",
              wgt_last_error());
        CHECK(!memcmp(a, b, sizeof a), "dispatch %d differs from the eager op", rep);
        wgt_tensor *all[] = {flat, q, k, v, out, eager};
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) wgt_release(all[i]);
    }
    wgt_graph_release(g);
    wgt_release(gq), wgt_release(gk), wgt_release(gv), wgt_release(go);
    if (own) wgt_context_release(own);
}

/* More workgroups than one dispatch dimension holds (65535): 70000 batch elements of one
 * query each, the keys of each a copy of its query (so the result is v's row, exactly). */
/* More than 65535 workgroups, so the launch is split over two grid dimensions. This is the
 * WebGPU kernel's concern alone, and on lavapipe it takes 15 s or more (a minute on a loaded
 * machine under the sanitizers): it gets a context of its own with a long wait bound, so a
 * slow machine cannot leave the shared test context timed out for the tests after it. */
TEST(attention_kernel_many_workgroups) {
    wgt_context_options opt = {0};
    opt.backend = WGT_BACKEND_WEBGPU;
    opt.quiet = 1;
    opt.wait_timeout_ms = 600000;
    opt.attention = WGT_ATTENTION_KERNEL; /* the default would take it too: 70000 workgroups */
    wgt_context *gpu = wgt_context_create(&opt);
    if (!gpu) return; /* no WebGPU adapter: the runner reports that elsewhere */
    int64_t s[3] = {70000, 1, 4};
    wgt_tensor *q = wgt_rand_normal(gpu, WGT_F32, 3, s, 0, 1, 77), *v = wgt_rand_normal(gpu, WGT_F32, 3, s, 0, 1, 78);
    wgt_tensor *o = wgt_attention(q, q, v, 0, 0);
    double *vo = o ? test_read_f64(o) : NULL, *vv = test_read_f64(v);
    CHECK(vo && vv, "%s", wgt_last_error());
    int64_t bad = -1;
    for (int64_t i = 0; vo && vv && i < 70000 * 4 && bad < 0; i++)
        if (vo[i] != vv[i]) bad = i;
    CHECK(bad < 0, "element %lld: %g, want %g", (long long)bad, bad >= 0 ? vo[bad] : 0, bad >= 0 ? vv[bad] : 0);
    free(vo), free(vv);
    wgt_release(q), wgt_release(v), wgt_release(o);
    wgt_context_release(gpu);
}

/* Attention on q [batch, lq, 8] and k, v [batch, lk, 8] in ctx: the result (float64, to be
 * freed) and the kernel launches it took. */
static double *attention_on(wgt_context *ctx, int64_t batch, int64_t lq, int64_t lk, int causal, uint64_t *launches) {
    int64_t sq[3] = {batch, lq, 8}, sk[3] = {batch, lk, 8};
    wgt_tensor *q = wgt_rand_normal(ctx, WGT_F32, 3, sq, 0, 1, 31), *k = wgt_rand_normal(ctx, WGT_F32, 3, sk, 0, 1, 32);
    wgt_tensor *v = wgt_rand_normal(ctx, WGT_F32, 3, sk, 0, 1, 33);
    wgt_tensor *in[3] = {q, k, v};
    CHECK(q && k && v && wgt_eval(3, in) == WGT_OK, "inputs: %s", wgt_last_error());
    wgt_stats s0 = {0}, s1 = {0};
    wgt_context_stats(ctx, &s0);
    wgt_tensor *o = wgt_attention(q, k, v, causal, 0);
    double *r = o ? test_read_f64(o) : NULL;
    CHECK(r != NULL, "attention [%lld, %lld] over %lld keys: %s", (long long)batch, (long long)lq, (long long)lk,
          wgt_last_error());
    wgt_context_stats(ctx, &s1);
    *launches = s1.launches - s0.launches;
    wgt_release(q), wgt_release(k), wgt_release(v), wgt_release(o);
    return r;
}

/* By default WebGPU runs the kernel where its workgroups (batch x blocks of 64 queries) can
 * fill a GPU or a causal mask covers 64 queries or more, and composes the rest (one query
 * over many keys, as in decoding, is the common case); the context option forces either
 * path, and all three agree. */
TEST(attention_path_by_shape) {
    static const struct {
        int64_t batch, lq, lk;
        int causal, kernel_by_default;
    } shapes[] = {{4, 1, 300, 0, 0}, {4, 1, 300, 1, 0}, {3, 70, 90, 0, 0}, {3, 70, 90, 1, 1}, {256, 64, 64, 0, 1}};
    static const wgt_attention_path paths[3] = {WGT_ATTENTION_AUTO, WGT_ATTENTION_KERNEL, WGT_ATTENTION_COMPOSE};
    wgt_context *c[3] = {0};
    for (int p = 0; p < 3; p++) {
        wgt_context_options opt = {0};
        opt.backend = WGT_BACKEND_WEBGPU;
        opt.quiet = 1;
        opt.attention = paths[p];
        c[p] = wgt_context_create(&opt);
    }
    for (size_t i = 0; c[0] && c[1] && c[2] && i < sizeof shapes / sizeof shapes[0]; i++) {
        double *r[3];
        uint64_t launches[3];
        for (int p = 0; p < 3; p++)
            r[p] = attention_on(c[p], shapes[i].batch, shapes[i].lq, shapes[i].lk, shapes[i].causal, &launches[p]);
        CHECK((launches[0] == 1) == shapes[i].kernel_by_default, "[%lld, %lld] over %lld keys: %llu launches by default",
              (long long)shapes[i].batch, (long long)shapes[i].lq, (long long)shapes[i].lk,
              (unsigned long long)launches[0]);
        CHECK(launches[1] == 1 && launches[2] > 1, "kernel path %llu launches, composition %llu",
              (unsigned long long)launches[1], (unsigned long long)launches[2]);
        /* Rows are weighted means of values of size about 1: each path within about 1e-6 of
         * float64 at these sizes. */
        double worst = 0;
        for (int64_t j = 0; r[0] && r[1] && r[2] && j < shapes[i].batch * shapes[i].lq * 8; j++)
            for (int p = 1; p < 3; p++)
                if (!(fabs(r[p][j] - r[0][j]) <= worst)) worst = fabs(r[p][j] - r[0][j]);
        CHECK(worst <= 1e-5, "[%lld, %lld] over %lld keys: the paths differ by %g", (long long)shapes[i].batch,
              (long long)shapes[i].lq, (long long)shapes[i].lk, worst);
        for (int p = 0; p < 3; p++) free(r[p]);
    }
    for (int p = 0; p < 3; p++)
        if (c[p]) wgt_context_release(c[p]);
}

/* f16 q and k whose dot products (102400) pass f16's range while the scaled scores (12800)
 * do not: every score equal, so each query's output is the mean of the values it sees. On
 * both backends, through whichever path each takes at this size (the CPU backend and small
 * WebGPU problems compose), causal and not, with a key count (wgt_attention_prefix), and the
 * gradient of q (composed) finite. */
TEST_BACKENDS(attention_f16_scores_past_the_f16_range_stay_finite) {
    enum { B = 2, L = 8, D = 64, DV = 16 };
    int64_t qs[3] = {B, L, D}, vs[3] = {B, L, DV}, one = 1;
    uint16_t qk[B * L * D], hv[B * L * DV];
    float v[B * L * DV];
    for (int i = 0; i < B * L * D; i++) qk[i] = wgt_f32_to_f16(40.0f);
    for (int i = 0; i < B * L * DV; i++) hv[i] = wgt_f32_to_f16(v[i] = (float)((i * 5) % 11) / 4.0f);
    wgt_tensor *q = wgt_tensor_from_data(ctx, WGT_F16, 3, qs, qk, sizeof qk, WGT_USAGE_DEFAULT);
    wgt_tensor *k = wgt_tensor_from_data(ctx, WGT_F16, 3, qs, qk, sizeof qk, WGT_USAGE_DEFAULT);
    wgt_tensor *vt = wgt_tensor_from_data(ctx, WGT_F16, 3, vs, hv, sizeof hv, WGT_USAGE_DEFAULT);
    const int32_t five = 5;
    wgt_tensor *count = wgt_tensor_from_data(ctx, WGT_I32, 1, &one, &five, sizeof five, WGT_USAGE_DEFAULT);
    CHECK(q && k && vt && count && wgt_requires_grad(q, 1) == WGT_OK, "%s", wgt_last_error());
    for (int kind = 0; kind < 3 && q && k && vt && count; kind++) { /* full, causal, the first 5 keys */
        wgt_tensor *o = kind < 2 ? wgt_attention(q, k, vt, kind, 0) : wgt_attention_prefix(q, k, vt, count, 0);
        double *got = o ? test_read_f64(o) : NULL;
        CHECK(got != NULL, "kind %d: %s", kind, wgt_last_error());
        for (int b = 0; got && b < B; b++)
            for (int i = 0; i < L; i++)
                for (int c = 0; c < DV; c++) {
                    int seen = kind == 0 ? L : kind == 1 ? i + 1 : 5;
                    double want = 0;
                    for (int j = 0; j < seen; j++) want += v[(b * L + j) * DV + c] / seen;
                    double err = fabs(got[(b * L + i) * DV + c] - want);
                    if (!(err <= 4e-3)) {
                        CHECK(0, "%s kind %d: out[%d][%d][%d] = %g, want %g", test_backend_name(), kind, b, i, c,
                              got[(b * L + i) * DV + c], want);
                        b = B, i = L, c = DV;
                    }
                }
        free(got);
        if (kind == 0 && o) {
            wgt_tensor *loss = wgt_sum(o, 0, NULL, 0);
            wgt_tensor *gq = loss && wgt_backward(loss, NULL) == WGT_OK ? wgt_grad(q) : NULL;
            double *g = gq ? test_read_f64(gq) : NULL;
            CHECK(g != NULL, "the gradient of q: %s", wgt_last_error());
            for (int e = 0; g && e < B * L * D; e++)
                if (!isfinite(g[e]) || fabs(g[e]) > 1e-2) {
                    CHECK(0, "%s: d loss / d q[%d] = %g, want about 0 (every key the same)", test_backend_name(), e, g[e]);
                    break;
                }
            free(g);
            wgt_release(gq), wgt_release(loss);
        }
        wgt_release(o);
    }
    wgt_release(q), wgt_release(k), wgt_release(vt), wgt_release(count);
}

/* f16 without a mask, from 128 queries and keys, composes where f16 products run on subgroup
 * matrices (the wasm build in Node on NVIDIA with unsafeNvidiaF16: wgt_wgpu_attention_pays)
 * and takes the kernel elsewhere at this shape (128 workgroups); causal keeps the kernel
 * everywhere. Each path within its bound of float64 (check_case tells them apart by
 * launches). */
TEST(attention_f16_unmasked_path_by_device) {
    wgt_context *g = test_webgpu_context();
    if (!g) return;
    char *d = wgt_context_describe(g);
    int sgmatrix = d && strstr(d, "subgroup matrices: used for f16 products:") != NULL;
    free(d);
    for (int causal = 0; causal < 2; causal++) {
        const attn_case c = {WGT_F16, 3, 3, 3, {64, 128, 32}, {64, 128, 32}, {64, 128, 32},
                             CONTIGUOUS, CONTIGUOUS, CONTIGUOUS, causal, 0};
        uint64_t launches = 0;
        check_case(g, &c, 9100 + (uint64_t)causal, &launches);
        int composed = sgmatrix && !causal;
        CHECK((launches > 1) == composed, "f16 [64, 128, 32], causal %d, subgroup matrices %s: %llu launches, want %s",
              causal, sgmatrix ? "used" : "unused", (unsigned long long)launches,
              composed ? "the composition" : "the one kernel");
    }
    wgt_context_release(g);
}

/* The path is checked when the context is made: an unknown option value or WGT_ATTENTION
 * setting fails with the value named, before any device is opened. */
TEST(attention_path_option_checked) {
    wgt_context_options opt = {0};
    opt.backend = WGT_BACKEND_CPU;
    opt.attention = (wgt_attention_path)7;
    CHECK_ERROR(wgt_context_create(&opt) == NULL, WGT_ERR_INVALID_ARGUMENT, "attention path 7");
    opt.attention = WGT_ATTENTION_AUTO;
    test_saved_env env = test_env_set("WGT_ATTENTION", "sometimes");
    CHECK_ERROR(wgt_context_create(&opt) == NULL, WGT_ERR_INVALID_ARGUMENT, "WGT_ATTENTION=sometimes");
    setenv("WGT_ATTENTION", "Compose", 1);
    wgt_context *c = wgt_context_create(&opt);
    CHECK(c != NULL, "WGT_ATTENTION=Compose: %s", wgt_last_error());
    test_env_restore(&env);
    if (c) wgt_context_release(c);
}
