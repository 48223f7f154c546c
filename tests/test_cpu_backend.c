/*
 * The CPU backend's worker pool, fast paths and fixed summation order
 * (src/backend/cpu/cpu_threads.c, cpu_walk.c, cpu_lanes.h):
 *   - every op gives the same bits with WGT_CPU_THREADS=1, 2 and 3, on sizes on both sides of
 *     the serial cutoff (cpu_walk.h), of the 8192-element reduction pieces and of the task
 *     boundaries, in
 *     dense, strided, broadcast and f16 layouts (outputs are poisoned, so an element that no
 *     task wrote shows too);
 *   - the large, split runs are also right against float64 references;
 *   - a strided or broadcast operand gives the same bits as a dense copy of it;
 *   - the pool runs every task once, in contexts used from several threads at once, and
 *     shuts down from whichever thread releases the context (`make test-tsan` runs the
 *     tests whose names contain "threads" under ThreadSanitizer);
 *   - the inline f16 conversion of the kernels equals wgt_f16_to_f32 for all 65536 values.
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/cpu_exp.h"
#include "backend/cpu/cpu_kernels.h"
#include "backend/cpu/cpu_threads.h"
#include "test.h"

/* A CPU context whose pool has `threads` threads (WGT_CPU_THREADS is read at creation). */
static wgt_context *cpu_context_with_threads(int threads) {
    char value[16];
    snprintf(value, sizeof value, "%d", threads);
    test_saved_env env = test_env_set("WGT_CPU_THREADS", value);
    wgt_context_options opt = {0};
    opt.backend = WGT_BACKEND_CPU;
    wgt_context *ctx = wgt_context_create(&opt);
    test_env_restore(&env);
    CHECK(ctx != NULL, "creating a CPU context with %d threads: %s", threads, wgt_last_error());
    return ctx;
}

/* The raw bytes of t (NULL, with a failure recorded, when t is NULL or unreadable). */
static unsigned char *bytes_of(wgt_tensor *t, size_t *n, const char *what) {
    *n = t ? wgt_tensor_nbytes(t) : 0;
    unsigned char *b = t ? malloc(*n ? *n : 1) : NULL;
    if (b && wgt_tensor_read(t, b, *n) != WGT_OK) {
        free(b);
        b = NULL;
    }
    CHECK(b != NULL, "%s: %s", what, wgt_last_error());
    return b;
}

static wgt_tensor *normal(wgt_context *ctx, wgt_dtype dt, int ndim, const int64_t *shape, uint64_t seed) {
    return wgt_rand_normal(ctx, dt, ndim, shape, 0.5, 2.0, seed);
}

/* ---- the workloads, each a function of (context, size) ------------------------------- */

typedef wgt_tensor *(*workload_fn)(wgt_context *ctx, int64_t n);

static wgt_tensor *reduce_all(wgt_context *ctx, int64_t n, int op) {
    int64_t shape[1] = {n};
    /* prod: values near 1, so 100003 of them stay finite */
    wgt_tensor *x = op == 7 ? wgt_rand_uniform(ctx, WGT_F32, 1, shape, 0.999, 1.001, 11)
                            : normal(ctx, WGT_F32, 1, shape, 11);
    wgt_tensor *r = NULL;
    switch (op) {
    case 0: r = wgt_sum(x, 0, NULL, 0); break;
    case 1: r = wgt_mean(x, 0, NULL, 0); break;
    case 2: r = wgt_var(x, 0, NULL, 0, 1); break;
    case 3: r = wgt_max(x, 0, NULL, 0); break;
    case 4: r = wgt_argmin(x, 0, 0); break;
    case 5: r = wgt_argmax(x, 0, 0); break;
    case 6: r = wgt_min(x, 0, NULL, 0); break;
    default: r = wgt_prod(x, 0, NULL, 0); break;
    }
    wgt_release(x);
    return r;
}
static wgt_tensor *w_sum(wgt_context *c, int64_t n) { return reduce_all(c, n, 0); }
static wgt_tensor *w_mean(wgt_context *c, int64_t n) { return reduce_all(c, n, 1); }
static wgt_tensor *w_var(wgt_context *c, int64_t n) { return reduce_all(c, n, 2); }
static wgt_tensor *w_max(wgt_context *c, int64_t n) { return reduce_all(c, n, 3); }
static wgt_tensor *w_argmin(wgt_context *c, int64_t n) { return reduce_all(c, n, 4); }
static wgt_tensor *w_argmax(wgt_context *c, int64_t n) { return reduce_all(c, n, 5); }
static wgt_tensor *w_min(wgt_context *c, int64_t n) { return reduce_all(c, n, 6); }
static wgt_tensor *w_prod(wgt_context *c, int64_t n) { return reduce_all(c, n, 7); }

/* Sums over rows of n elements (dense) and over columns of n elements (strided: gathered). */
static wgt_tensor *w_sum_rows(wgt_context *ctx, int64_t n) {
    int64_t shape[2] = {9, n};
    int axis = 1;
    wgt_tensor *x = normal(ctx, WGT_F32, 2, shape, 12), *r = wgt_sum(x, 1, &axis, 0);
    wgt_release(x);
    return r;
}
static wgt_tensor *w_var_columns(wgt_context *ctx, int64_t n) {
    int64_t shape[2] = {n, 9};
    int axis = 0;
    wgt_tensor *x = normal(ctx, WGT_F32, 2, shape, 13), *r = wgt_var(x, 1, &axis, 0, 0);
    wgt_release(x);
    return r;
}
static wgt_tensor *w_sum_f16(wgt_context *ctx, int64_t n) {
    int64_t shape[1] = {n};
    wgt_tensor *x = normal(ctx, WGT_F16, 1, shape, 14), *r = wgt_sum(x, 0, NULL, 0);
    wgt_release(x);
    return r;
}
static wgt_tensor *w_sum_i32(wgt_context *ctx, int64_t n) {
    int64_t shape[1] = {n};
    wgt_tensor *x = wgt_rand_uniform(ctx, WGT_I32, 1, shape, -2147483648.0, 2147483648.0, 15), *r = wgt_sum(x, 0, NULL, 0);
    wgt_release(x);
    return r;
}
static wgt_tensor *w_mean_u32(wgt_context *ctx, int64_t n) {
    int64_t shape[1] = {n};
    wgt_tensor *x = wgt_rand_uniform(ctx, WGT_U32, 1, shape, 0, 4e9, 16), *r = wgt_mean(x, 0, NULL, 0);
    wgt_release(x);
    return r;
}

/* Elementwise: dense + broadcast row, exp (a costly op: a lower cutoff), where with a scalar,
 * a cast, a copy of a transposed view, and f16 (the general loop). */
static wgt_tensor *w_add_row(wgt_context *ctx, int64_t n) {
    int64_t shape[2] = {n / 7, 7}, row[1] = {7};
    wgt_tensor *x = normal(ctx, WGT_F32, 2, shape, 20), *y = normal(ctx, WGT_F32, 1, row, 21), *r = wgt_add(x, y);
    wgt_release(x);
    wgt_release(y);
    return r;
}
static wgt_tensor *w_exp(wgt_context *ctx, int64_t n) {
    int64_t shape[1] = {n};
    wgt_tensor *x = normal(ctx, WGT_F32, 1, shape, 22), *r = wgt_exp(x);
    wgt_release(x);
    return r;
}
static wgt_tensor *w_where(wgt_context *ctx, int64_t n) {
    int64_t shape[1] = {n};
    wgt_tensor *x = normal(ctx, WGT_F32, 1, shape, 23), *zero = wgt_scalar(ctx, WGT_F32, 0.0);
    wgt_tensor *c = wgt_gt(x, zero), *r = wgt_where(c, x, zero);
    wgt_release(x);
    wgt_release(zero);
    wgt_release(c);
    return r;
}
static wgt_tensor *w_cast(wgt_context *ctx, int64_t n) {
    int64_t shape[1] = {n};
    wgt_tensor *x = wgt_rand_uniform(ctx, WGT_F32, 1, shape, -1e10, 1e10, 24), *r = wgt_cast(x, WGT_I32);
    wgt_release(x);
    return r;
}
static wgt_tensor *w_copy_transposed(wgt_context *ctx, int64_t n) {
    int64_t shape[2] = {7, n / 7};
    wgt_tensor *x = normal(ctx, WGT_F32, 2, shape, 25), *t = wgt_transpose(x, 0, 1), *r = wgt_contiguous(t);
    wgt_release(x);
    wgt_release(t);
    return r;
}
static wgt_tensor *w_mul_f16(wgt_context *ctx, int64_t n) {
    int64_t shape[1] = {n};
    wgt_tensor *x = normal(ctx, WGT_F16, 1, shape, 26), *y = normal(ctx, WGT_F16, 1, shape, 27), *r = wgt_mul(x, y);
    wgt_release(x);
    wgt_release(y);
    return r;
}

/* Row ops over rows of n elements, dense and (f16) transposed; cumsum down columns. */
static wgt_tensor *w_softmax(wgt_context *ctx, int64_t n) {
    int64_t shape[2] = {13, n};
    wgt_tensor *x = normal(ctx, WGT_F32, 2, shape, 30), *r = wgt_softmax(x, 1);
    wgt_release(x);
    return r;
}
static wgt_tensor *w_log_softmax_f16_columns(wgt_context *ctx, int64_t n) {
    int64_t shape[2] = {n, 5};
    wgt_tensor *x = normal(ctx, WGT_F16, 2, shape, 31), *r = wgt_log_softmax(x, 0), *c = wgt_contiguous(r);
    wgt_release(x);
    wgt_release(r);
    return c;
}
static wgt_tensor *w_layer_norm(wgt_context *ctx, int64_t n) {
    int64_t shape[2] = {11, n}, d[1] = {n};
    wgt_tensor *x = normal(ctx, WGT_F32, 2, shape, 32), *w = normal(ctx, WGT_F32, 1, d, 33);
    wgt_tensor *b = normal(ctx, WGT_F32, 1, d, 34);
    wgt_tensor *r = wgt_layer_norm(x, w, b, 1e-5);
    wgt_release(x);
    wgt_release(w);
    wgt_release(b);
    return r;
}
static wgt_tensor *w_rms_norm(wgt_context *ctx, int64_t n) {
    int64_t shape[2] = {11, n};
    wgt_tensor *x = normal(ctx, WGT_F32, 2, shape, 35), *r = wgt_rms_norm(x, NULL, 1e-6);
    wgt_release(x);
    return r;
}
static wgt_tensor *w_cumsum(wgt_context *ctx, int64_t n) {
    int64_t shape[2] = {n, 6};
    wgt_tensor *x = normal(ctx, WGT_F32, 2, shape, 36), *r = wgt_cumsum(x, 0);
    wgt_release(x);
    return r;
}
static wgt_tensor *w_matmul_f16(wgt_context *ctx, int64_t n) {
    int64_t sa[3] = {3, n, 90}, sb[2] = {90, 130};
    wgt_tensor *a = normal(ctx, WGT_F16, 3, sa, 37), *b = normal(ctx, WGT_F16, 2, sb, 38), *r = wgt_matmul(a, b);
    wgt_release(a);
    wgt_release(b);
    return r;
}

static const struct {
    const char *name;
    workload_fn fn;
    int64_t sizes[6]; /* 0 ends the list */
} workloads[] = {
    /* Around one reduction piece (8192), and past the serial cutoff (2^19 units; a dense
     * element of sum or add is one unit, max 1.5, a gathered one 4, exp 10, a row of softmax
     * 12 per element) in one output, over several outputs and in elementwise walks. */
    {"sum", w_sum, {8191, 8192, 8193, 3 * 8192 + 5, 540013, 0}},
    {"mean", w_mean, {8193, 540013, 0}},
    {"var", w_var, {8191, 540013, 0}},
    {"max", w_max, {8193, 360007, 0}},
    {"min", w_min, {360007, 0}},
    {"argmax", w_argmax, {16385, 360007, 0}},
    {"argmin", w_argmin, {360007, 0}},
    {"prod", w_prod, {540013, 0}},
    {"sum rows", w_sum_rows, {8191, 8193, 60013, 0}},
    {"var columns", w_var_columns, {8191, 8193, 15013, 0}},
    {"sum f16", w_sum_f16, {8193, 140009, 0}},
    {"sum i32", w_sum_i32, {540013, 0}},
    {"mean u32", w_mean_u32, {540013, 0}},
    {"add row", w_add_row, {524286, 524293, 700007, 0}},
    {"exp", w_exp, {52428, 52429, 52430, 100003, 0}},
    {"where", w_where, {524289, 600001, 0}},
    {"cast", w_cast, {600001, 0}},
    {"copy transposed", w_copy_transposed, {524293, 700007, 0}},
    {"mul f16", w_mul_f16, {104857, 104859, 200001, 0}},
    {"softmax", w_softmax, {1001, 4099, 0}},
    {"log_softmax f16 columns", w_log_softmax_f16_columns, {1001, 8009, 0}},
    {"layer_norm", w_layer_norm, {1001, 16411, 0}},
    {"rms_norm", w_rms_norm, {1001, 16411, 0}},
    {"cumsum", w_cumsum, {1001, 30011, 0}},
    {"matmul f16", w_matmul_f16, {31, 70, 0}},
};

TEST(cpu_thread_count_keeps_bits) {
    static const int counts[3] = {1, 2, 3};
    wgt_context *own[3];
    for (int c = 0; c < 3; c++) own[c] = cpu_context_with_threads(counts[c]);
    if (!own[0] || !own[1] || !own[2]) goto done;
    for (size_t w = 0; w < sizeof workloads / sizeof *workloads; w++)
        for (int s = 0; s < 6 && workloads[w].sizes[s]; s++) {
            int64_t n = workloads[w].sizes[s];
            char what[96];
            snprintf(what, sizeof what, "%s, n = %lld", workloads[w].name, (long long)n);
            size_t len[3];
            unsigned char *got[3] = {NULL, NULL, NULL};
            for (int c = 0; c < 3; c++) {
                wgt_tensor *r = workloads[w].fn(own[c], n);
                got[c] = bytes_of(r, &len[c], what);
                wgt_release(r);
            }
            for (int c = 1; c < 3; c++)
                CHECK(got[0] && got[c] && len[0] == len[c] && memcmp(got[0], got[c], len[0]) == 0,
                      "%s: %d threads give other bits than 1", what, counts[c]);
            for (int c = 0; c < 3; c++) free(got[c]);
        }
done:
    for (int c = 0; c < 3; c++) wgt_context_release(own[c]);
}

/* ---- the split runs against float64 -------------------------------------------------- */

static double *read_f64_of(wgt_tensor *t, const char *what) {
    double *v = t ? test_read_f64(t) : NULL;
    CHECK(v != NULL, "%s: %s", what, wgt_last_error());
    return v;
}

TEST(cpu_split_work_matches_float64) {
    wgt_context *own = cpu_context_with_threads(2);
    if (!own) return;
    /* One output of many pieces: the sum, mean and variance in double. */
    int64_t n = 700001, shape[1] = {n};
    wgt_tensor *x = normal(own, WGT_F32, 1, shape, 40);
    wgt_tensor *s = wgt_sum(x, 0, NULL, 0), *v = wgt_var(x, 0, NULL, 0, 0), *am = wgt_argmax(x, 0, 0);
    double *xs = read_f64_of(x, "input"), *gs = read_f64_of(s, "sum"), *gv = read_f64_of(v, "var"),
           *ga = read_f64_of(am, "argmax");
    if (xs && gs && gv && ga) {
        double sum = 0, sq = 0;
        int64_t best = 0;
        for (int64_t i = 0; i < n; i++) {
            sum += xs[i];
            if (xs[i] > xs[best]) best = i;
        }
        for (int64_t i = 0; i < n; i++) sq += (xs[i] - sum / n) * (xs[i] - sum / n);
        CHECK(fabs(gs[0] - sum) <= test_tolerance(WGT_F32, sum), "sum %.9g, want %.9g", gs[0], sum);
        CHECK(fabs(gv[0] - sq / n) <= test_tolerance(WGT_F32, sq / n), "var %.9g, want %.9g", gv[0], sq / n);
        CHECK(ga[0] == (double)best, "argmax %g, want %lld", ga[0], (long long)best);
    }
    free(xs);
    free(gs);
    free(gv);
    free(ga);
    wgt_release(s);
    wgt_release(v);
    wgt_release(am);
    wgt_release(x);

    /* Rows spread over the threads: softmax and a broadcast add, every element. */
    int64_t rs[2] = {197, 3001}, row[1] = {3001};
    wgt_tensor *m = normal(own, WGT_F32, 2, rs, 41), *b = normal(own, WGT_F32, 1, row, 42);
    wgt_tensor *sm = wgt_softmax(m, 1), *ad = wgt_add(m, b);
    double *xm = read_f64_of(m, "rows"), *xb = read_f64_of(b, "row"), *gsm = read_f64_of(sm, "softmax"),
           *gad = read_f64_of(ad, "add");
    int bad = 0;
    for (int64_t r = 0; xm && xb && gsm && gad && r < rs[0] && bad < 3; r++) {
        const double *x_r = xm + r * rs[1];
        double mx = -INFINITY, z = 0;
        for (int64_t k = 0; k < rs[1]; k++) mx = x_r[k] > mx ? x_r[k] : mx;
        for (int64_t k = 0; k < rs[1]; k++) z += exp(x_r[k] - mx);
        for (int64_t k = 0; k < rs[1] && bad < 3; k++) {
            double want = exp(x_r[k] - mx) / z, add = (double)(float)(x_r[k] + xb[k]);
            double got_sm = gsm[r * rs[1] + k], got_add = gad[r * rs[1] + k];
            if (!(fabs(got_sm - want) <= 2 * test_tolerance(WGT_F32, want)) || got_add != add) {
                bad++;
                CHECK(0, "row %lld, element %lld: softmax %.9g (want %.9g), add %.9g (want %.9g)", (long long)r,
                      (long long)k, got_sm, want, got_add, add);
            }
        }
    }
    free(xm);
    free(xb);
    free(gsm);
    free(gad);
    wgt_release(sm);
    wgt_release(ad);
    wgt_release(m);
    wgt_release(b);
    wgt_context_release(own);
}

/* ---- layouts ------------------------------------------------------------------------- */

/* op(view) and op(contiguous copy of view) give the same bytes. */
static void check_same_as_dense(wgt_context *ctx, wgt_tensor *view, wgt_tensor *(*op)(wgt_tensor *), const char *what) {
    wgt_tensor *dense = wgt_contiguous(view), *r1 = op(view), *r2 = op(dense);
    size_t n1, n2;
    unsigned char *b1 = bytes_of(r1, &n1, what), *b2 = bytes_of(r2, &n2, what);
    CHECK(b1 && b2 && n1 == n2 && memcmp(b1, b2, n1) == 0, "%s: a view and its dense copy give other bits", what);
    free(b1);
    free(b2);
    wgt_release(r1);
    wgt_release(r2);
    wgt_release(dense);
    (void)ctx;
}

static wgt_tensor *op_sum_last(wgt_tensor *t) {
    int axis = -1;
    return wgt_sum(t, 1, &axis, 0);
}
static wgt_tensor *op_var_all(wgt_tensor *t) { return wgt_var(t, 0, NULL, 0, 1); }
static wgt_tensor *op_softmax(wgt_tensor *t) { return wgt_softmax(t, -1); }
static wgt_tensor *op_layer_norm(wgt_tensor *t) { return wgt_layer_norm(t, NULL, NULL, 1e-5); }
static wgt_tensor *op_exp(wgt_tensor *t) { return wgt_exp(t); }

TEST(cpu_strided_views_same_bits_as_dense) {
    wgt_context *own = cpu_context_with_threads(2);
    if (!own) return;
    int64_t shape[2] = {64, 2 * 9001};
    wgt_tensor *x = normal(own, WGT_F32, 2, shape, 50);
    wgt_tensor *every_other = wgt_slice(x, 1, 1, shape[1], 2);  /* stride 2 along rows */
    wgt_tensor *backwards = wgt_slice(x, 1, shape[1] - 1, -shape[1] - 1, -3); /* negative stride */
    wgt_tensor *(*ops[5])(wgt_tensor *) = {op_sum_last, op_var_all, op_softmax, op_layer_norm, op_exp};
    static const char *const names[5] = {"sum over rows", "var over all", "softmax", "layer_norm", "exp"};
    for (int k = 0; k < 5; k++) {
        char what[96];
        snprintf(what, sizeof what, "%s of a stride-2 view", names[k]);
        check_same_as_dense(own, every_other, ops[k], what);
        snprintf(what, sizeof what, "%s of a stride -3 view", names[k]);
        check_same_as_dense(own, backwards, ops[k], what);
    }
    /* A broadcast row and a broadcast scalar against the same values written out. */
    int64_t row[1] = {9001}, full[2] = {64, 9001};
    wgt_tensor *r = normal(own, WGT_F32, 1, row, 51), *rb = wgt_broadcast_to(r, 2, full);
    wgt_tensor *s = wgt_scalar(own, WGT_F32, 1.25);
    wgt_tensor *sb = wgt_broadcast_to(s, 2, full), *rd = wgt_contiguous(rb), *sd = wgt_contiguous(sb);
    wgt_tensor *xs = wgt_slice(x, 1, 0, 9001, 1), *xd = wgt_contiguous(xs);
    wgt_tensor *out[4] = {wgt_sub(xd, rb), wgt_sub(xd, rd), wgt_div(sb, xd), wgt_div(sd, xd)};
    for (int k = 0; k < 4; k += 2) {
        size_t n1, n2;
        unsigned char *b1 = bytes_of(out[k], &n1, "broadcast"), *b2 = bytes_of(out[k + 1], &n2, "dense");
        CHECK(b1 && b2 && n1 == n2 && memcmp(b1, b2, n1) == 0, "%s: broadcast and dense operands give other bits",
              k ? "scalar / x" : "x - row");
        free(b1);
        free(b2);
    }
    for (int k = 0; k < 4; k++) wgt_release(out[k]);
    wgt_release(xs);
    wgt_release(xd);
    wgt_release(r);
    wgt_release(rb);
    wgt_release(rd);
    wgt_release(s);
    wgt_release(sb);
    wgt_release(sd);
    wgt_release(every_other);
    wgt_release(backwards);
    wgt_release(x);
    wgt_context_release(own);
}

/* ---- matrix-vector products and shared weights ---------------------------------------- */

/* [4, 1, K] rows of a wider tensor (a row stride past K) times a shared w^T [K, N], and a
 * [5, K] @ w^T: the batch becomes one product on the CPU backend; against float64. */
TEST(cpu_batched_rows_share_one_weight) {
    wgt_context *own = cpu_context_with_threads(2);
    if (!own) return;
    enum { B = 4, K = 300, N = 70 };
    int64_t wide[3] = {B, 1, K + 17}, ws[2] = {N, K};
    wgt_tensor *xw = normal(own, WGT_F32, 3, wide, 60), *x = wgt_slice(xw, 2, 5, 5 + K, 1);
    wgt_tensor *w = normal(own, WGT_F32, 2, ws, 61), *wt = wgt_transpose(w, 0, 1), *y = wgt_matmul(x, wt);
    double *xs = read_f64_of(x, "x"), *wv = read_f64_of(w, "w"), *got = read_f64_of(y, "x @ w^T");
    int bad = 0;
    for (int b = 0; xs && wv && got && b < B; b++)
        for (int n = 0; n < N && bad < 3; n++) {
            double want = 0, abs_sum = 0;
            for (int k = 0; k < K; k++) {
                want += xs[b * K + k] * wv[n * K + k];
                abs_sum += fabs(xs[b * K + k] * wv[n * K + k]);
            }
            double tol = (K + 2) * 5.96e-8 * abs_sum;
            if (!(fabs(got[b * N + n] - want) <= tol) && bad++ < 3)
                CHECK(0, "batch %d, output %d: %.9g, want %.9g", b, n, got[b * N + n], want);
        }
    free(xs);
    free(wv);
    free(got);
    wgt_release(y);
    wgt_release(wt);
    wgt_release(w);
    wgt_release(x);
    wgt_release(xw);
    wgt_context_release(own);
}

/* ---- the pool ------------------------------------------------------------------------ */

typedef struct {
    _Atomic int runs[300];
    _Atomic int bad_slot;
    int slots;
} pool_probe;

static void probe_task(void *arg, int64_t t, int slot) {
    pool_probe *p = arg;
    atomic_fetch_add(&p->runs[t], 1);
    if (slot < 0 || slot >= p->slots) atomic_store(&p->bad_slot, 1);
}

TEST(cpu_threads_pool_runs_every_task_once) {
    static const int sizes[3] = {1, 2, 5};
    for (int s = 0; s < 3; s++) {
        wgt_cpu_pool *pool = wgt_cpu_pool_create(sizes[s]);
        CHECK(pool != NULL, "pool of %d", sizes[s]);
        if (!pool) continue;
        CHECK(wgt_cpu_pool_slots(pool) == sizes[s], "pool of %d has %d slots", sizes[s], wgt_cpu_pool_slots(pool));
        pool_probe *p = calloc(1, sizeof *p);
        p->slots = sizes[s];
        /* Many short jobs back to back: a worker that wakes late must never run a job that is
         * over, or miss one. */
        for (int job = 0; job < 400 && p; job++) {
            int ntasks = 1 + (job * 37) % 300;
            for (int t = 0; t < ntasks; t++) atomic_store(&p->runs[t], 0);
            wgt_cpu_pool_run(pool, ntasks, probe_task, p);
            int wrong = -1;
            for (int t = 0; t < ntasks && wrong < 0; t++)
                if (atomic_load(&p->runs[t]) != 1) wrong = t;
            CHECK(wrong < 0, "pool of %d, job %d of %d tasks: task %d ran %d times", sizes[s], job, ntasks, wrong,
                  wrong >= 0 ? atomic_load(&p->runs[wrong]) : 0);
            if (wrong >= 0) break;
        }
        CHECK(p && !atomic_load(&p->bad_slot), "pool of %d: a task saw a slot outside 0..%d", sizes[s], sizes[s] - 1);
        free(p);
        wgt_cpu_pool_destroy(pool);
    }
    /* A pool that never ran a job starts no thread and shuts down at once. */
    wgt_cpu_pool_destroy(wgt_cpu_pool_create(4));
}

/* WGT_CPU_THREADS sets the pool; a value that is not a count from 1 to 256 fails context
 * creation (test_env.c checks the messages). */
TEST(cpu_thread_count_from_environment) {
    wgt_context *own = cpu_context_with_threads(3);
    char *d = own ? wgt_context_describe(own) : NULL;
    CHECK(d && strstr(d, "threads: 3"), "WGT_CPU_THREADS=3: describe says %s", d ? d : wgt_last_error());
    free(d);
    wgt_context_release(own);
}

/* Contexts on several threads at once, each with its own pool of 2 (so up to 8 threads run
 * kernels here), computing split work and checking the bits against the main thread's; one
 * context is made and used on one thread and released on another, which joins its workers. */
#define POOL_WORKERS 3

typedef struct {
    int hand_over;            /* leave the context for the main thread to release */
    wgt_context *handed_over;
    const unsigned char *want[3];
    size_t want_len[3];
    int64_t n;
    char failure[256];
} pool_worker;

static wgt_tensor *pool_work(wgt_context *ctx, int which, int64_t n) {
    switch (which) {
    case 0: return w_sum(ctx, n);
    case 1: return w_softmax(ctx, n / 13);
    default: return w_add_row(ctx, n);
    }
}

static void *pool_worker_main(void *arg) {
    pool_worker *w = arg;
    wgt_context_options opt = {0};
    opt.backend = WGT_BACKEND_CPU;
    wgt_context *ctx = wgt_context_create(&opt);
    if (!ctx) {
        snprintf(w->failure, sizeof w->failure, "context: %s", wgt_last_error());
        return NULL;
    }
    for (int it = 0; it < 4 && !w->failure[0]; it++)
        for (int k = 0; k < 3 && !w->failure[0]; k++) {
            wgt_tensor *r = pool_work(ctx, k, w->n);
            size_t len = r ? wgt_tensor_nbytes(r) : 0;
            unsigned char *b = r ? malloc(len) : NULL;
            if (!b || wgt_tensor_read(r, b, len) != WGT_OK || len != w->want_len[k] || memcmp(b, w->want[k], len))
                snprintf(w->failure, sizeof w->failure, "workload %d, iteration %d: other bits (%s)", k, it,
                         wgt_last_error());
            free(b);
            wgt_release(r);
        }
    if (w->hand_over) w->handed_over = ctx;
    else wgt_context_release(ctx);
    return NULL;
}

TEST(threads_cpu_worker_pools) {
    const int64_t n = 599998; /* past the cutoff for each workload (7 x 85714 for add row) */
    wgt_context *ref = cpu_context_with_threads(1);
    if (!ref) return;
    unsigned char *want[3] = {NULL, NULL, NULL};
    size_t len[3] = {0, 0, 0};
    for (int k = 0; k < 3; k++) {
        wgt_tensor *r = pool_work(ref, k, n);
        want[k] = bytes_of(r, &len[k], "reference");
        wgt_release(r);
    }
    wgt_context_release(ref);
    /* Set before any thread starts: the environment is read when a context is created. */
    test_saved_env env = test_env_set("WGT_CPU_THREADS", "2");
    pool_worker workers[POOL_WORKERS];
    pthread_t threads[POOL_WORKERS];
    memset(workers, 0, sizeof workers);
    for (int i = 0; i < POOL_WORKERS; i++) {
        workers[i].n = n;
        for (int k = 0; k < 3; k++) {
            workers[i].want[k] = want[k];
            workers[i].want_len[k] = len[k];
        }
        workers[i].hand_over = i == 0;
        if (pthread_create(&threads[i], NULL, pool_worker_main, &workers[i]) != 0) workers[i].n = -1;
    }
    for (int i = 0; i < POOL_WORKERS; i++)
        if (workers[i].n >= 0) pthread_join(threads[i], NULL);
    test_env_restore(&env);
    for (int i = 0; i < POOL_WORKERS; i++) {
        CHECK(workers[i].n >= 0, "thread %d did not start", i);
        CHECK(!workers[i].failure[0], "thread %d: %s", i, workers[i].failure);
    }
    /* Worker 0's context, its pool started on that thread, is released here. */
    wgt_context_release(workers[0].handed_over);
    for (int k = 0; k < 3; k++) free(want[k]);
}

/* ---- f16 conversion ------------------------------------------------------------------ */

TEST(cpu_inline_f16_conversion_is_exact) {
    int bad = 0;
    for (uint32_t h = 0; h <= 0xffffu; h++) {
        float a = wgt_cpu_f16_to_f32((uint16_t)h), b = wgt_f16_to_f32((uint16_t)h);
        if (memcmp(&a, &b, sizeof a) != 0 && bad++ < 3) CHECK(0, "f16 0x%04x: inline %a, library %a", h, a, b);
    }
}

/* ---- softmax's exp --------------------------------------------------------------------- */

/* Within 1 ulp of libm's exp over the whole range it serves (x - shift from -708 to 0, the
 * shifts as softmax makes them), exact at 0, and exp(-708) below it (-inf included). */
TEST(cpu_softmax_exp_within_one_ulp) {
    enum { N = 1 << 16 };
    float *x = malloc(N * sizeof *x);
    double *e = malloc(N * sizeof *e);
    CHECK(x && e, "out of memory");
    static const double shifts[4] = {0.0, 3.25, -17.5, 650.0};
    double worst = 0, worst_at = 0;
    uint32_t state = 12345;
    for (int s = 0; x && e && s < 4; s++) {
        for (int i = 0; i < N; i++) {
            state = state * 1664525u + 1013904223u;
            /* Arguments spread over [-708, 0]; every 64th one in [-1, 0], where k is 0 or -1. */
            double span = i % 64 ? 708.0 : 1.0;
            x[i] = (float)(shifts[s] - span * (double)(state >> 8) / 16777216.0);
            if ((double)x[i] - shifts[s] < -708.0) x[i] = (float)shifts[s];
        }
        wgt_cpu_exp_shifted(e, x, N, shifts[s]);
        for (int i = 0; i < N; i++) {
            double want = exp((double)x[i] - shifts[s]), ulp = nextafter(want, INFINITY) - want;
            double err = fabs(e[i] - want) / ulp;
            if (err > worst) {
                worst = err;
                worst_at = (double)x[i] - shifts[s];
            }
        }
    }
    CHECK(worst <= 1.0, "exp is %.3g ulp from libm's at %.17g", worst, worst_at);
    if (x && e) {
        x[0] = 0.0f;
        x[1] = -INFINITY;
        x[2] = -800.0f;
        x[3] = -708.0f;
        wgt_cpu_exp_shifted(e, x, 4, 0.0);
        CHECK(e[0] == 1.0, "exp(0) is %.17g", e[0]);
        CHECK(e[1] == e[3] && e[2] == e[3] && fabs(e[3] - exp(-708.0)) <= 1e-323,
              "below -708: %g, %g, exp(-708) %g", e[1], e[2], e[3]);
    }
    free(x);
    free(e);
}
