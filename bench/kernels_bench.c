/*
 * The same GPU workloads through the native build and through the WebAssembly build in Node
 * (docs/web.md, "Benchmarks"): one C program, compiled both ways (web/wasm.mk builds both,
 * web/bench/run_bench.mjs runs the wasm one), so the two sides record the same ops and the
 * library picks the same kernels. GPU time comes from the library's per-dispatch timestamp
 * queries (src/core/gpu_timing.h), measured the same way on both sides; wall time per
 * repetition (record, evaluate, wait) and the host's cost per op show what the JavaScript
 * path adds on top.
 *
 *   kernels_bench [--quick] [--only NAME] [--reps N]
 *
 * Prints a table, then one line of JSON (`json: {...}`) for scripts to compare.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/gpu_timing.h"
#include "wgtensor.h"

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

typedef struct {
    const char *name;
    double work;      /* FLOPs or bytes moved per repetition */
    const char *unit; /* "TFLOP/s" or "GB/s" */
    wgt_tensor *in[3];
    wgt_tensor *(*run)(wgt_tensor *const *in);
} workload;

static wgt_tensor *run_matmul(wgt_tensor *const *in) { return wgt_matmul(in[0], in[1]); }
/* An elementwise chain the library fuses into one kernel: tanh(x * y + z) * x. */
static wgt_tensor *run_chain(wgt_tensor *const *in) {
    wgt_tensor *a = wgt_mul(in[0], in[1]), *b = wgt_add(a, in[2]), *c = wgt_tanh(b), *d = wgt_mul(c, in[0]);
    wgt_release(a), wgt_release(b), wgt_release(c);
    return d;
}
static wgt_tensor *run_sum_rows(wgt_tensor *const *in) {
    int axis = 1;
    return wgt_sum(in[0], 1, &axis, 0);
}
static wgt_tensor *run_softmax(wgt_tensor *const *in) { return wgt_softmax(in[0], -1); }
static wgt_tensor *run_attention(wgt_tensor *const *in) { return wgt_attention(in[0], in[1], in[2], 1, 0.125); }
/* f16 attention at the default scale, 1 / sqrt(d): on subgroup matrices where the device has
 * them (src/backend/webgpu/attention_sgmatrix.c), else the plain kernel. */
static wgt_tensor *run_attention_full(wgt_tensor *const *in) { return wgt_attention(in[0], in[1], in[2], 0, 0); }
static wgt_tensor *run_attention_causal(wgt_tensor *const *in) { return wgt_attention(in[0], in[1], in[2], 1, 0); }

typedef struct {
    double wall_ms, gpu_ms;
    char kernel[96];
    int ok;
} result;

/* reps repetitions, each evaluated and released; the wall time of all of them to the last
 * one's completion, per repetition. */
static int repeat(workload *w, int reps) {
    for (int r = 0; r < reps; r++) {
        wgt_tensor *o = w->run(w->in);
        if (!o || wgt_eval(1, &o) != WGT_OK) {
            wgt_release(o);
            return 0;
        }
        wgt_release(o);
    }
    return 1;
}

static result measure(wgt_context *ctx, workload *w, int reps) {
    result res = {0};
    if (!repeat(w, 2) || wgt_context_sync(ctx) != WGT_OK) return res; /* compiles, first runs */
    double t0 = now_ms();
    if (!repeat(w, reps) || wgt_context_sync(ctx) != WGT_OK) return res;
    res.wall_ms = (now_ms() - t0) / reps;
    if (wgt_context_gpu_timing(ctx, 2) == WGT_OK) {
        enum { KEPT = 64 };
        wgt_gpu_kernel_time k[KEPT];
        int n = repeat(w, reps) ? wgt_context_gpu_kernel_times(ctx, k, KEPT) : -1;
        wgt_context_gpu_timing(ctx, 0);
        if (n < 0) return res;
        for (int i = 0; i < n; i++) res.gpu_ms += k[i].ms;
        res.gpu_ms /= reps;
        if (n > 0) snprintf(res.kernel, sizeof res.kernel, "%s", k[0].label);
    }
    res.ok = 1;
    return res;
}

/* Host cost per op: many ops on tiny tensors, recorded then evaluated as one graph, and the
 * same ops each evaluated as it comes. */
static void host_overhead(wgt_context *ctx, int ops, double *record_us, double *eval_each_us) {
    int64_t shape[1] = {16};
    wgt_tensor *x = wgt_full(ctx, WGT_F32, 1, shape, 1.0), *one = wgt_full(ctx, WGT_F32, 1, shape, 0.5);
    *record_us = *eval_each_us = -1;
    if (!x || !one || wgt_eval(1, &x) != WGT_OK || wgt_eval(1, &one) != WGT_OK) goto done;
    for (int pass = 0; pass < 2; pass++) { /* the first pass compiles */
        double t0 = now_ms();
        wgt_tensor *acc = wgt_add(x, one);
        for (int i = 1; i < ops && acc; i++) {
            wgt_tensor *next = wgt_add(acc, one);
            wgt_release(acc);
            acc = next;
        }
        if (!acc || wgt_eval(1, &acc) != WGT_OK || wgt_context_sync(ctx) != WGT_OK) {
            wgt_release(acc);
            goto done;
        }
        wgt_release(acc);
        *record_us = (now_ms() - t0) * 1e3 / ops;
        t0 = now_ms();
        for (int i = 0; i < ops; i++) {
            wgt_tensor *o = wgt_add(x, one);
            if (!o || wgt_eval(1, &o) != WGT_OK) {
                wgt_release(o);
                goto done;
            }
            wgt_release(o);
        }
        if (wgt_context_sync(ctx) != WGT_OK) goto done;
        *eval_each_us = (now_ms() - t0) * 1e3 / ops;
    }
done:
    wgt_release(x);
    wgt_release(one);
}

static wgt_tensor *randn(wgt_context *ctx, wgt_dtype dt, int nd, const int64_t *shape, uint64_t seed) {
    wgt_tensor *t = wgt_rand_normal(ctx, dt, nd, shape, 0.0, 1.0, seed);
    if (t && wgt_eval(1, &t) != WGT_OK) {
        wgt_release(t);
        return NULL;
    }
    return t;
}

int main(int argc, char **argv) {
    int quick = 0, reps = 5;
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) quick = 1;
        else if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: kernels_bench [--quick] [--only NAME] [--reps N]\n");
            return 2;
        }
    }
    if (reps < 1) reps = 1;
    wgt_context_options o = {0};
    o.backend = WGT_BACKEND_WEBGPU;
    wgt_context *ctx = wgt_context_create(&o);
    if (!ctx) {
        fprintf(stderr, "kernels_bench: %s\n", wgt_last_error());
        return 1;
    }
    char *desc = wgt_context_describe(ctx);
    if (desc) {
        /* The lines that say what ran: library, adapter, features, subgroup matrices. */
        for (char *line = strtok(desc, "\n"); line; line = strtok(NULL, "\n"))
            if (!strncmp(line, "library", 7) || !strncmp(line, "adapter:", 8) || !strncmp(line, "features used", 13) ||
                !strncmp(line, "subgroup matrices", 17) || !strncmp(line, "subgroup-matrix attention", 25) ||
                !strncmp(line, "  16x", 5))
                printf("# %s\n", line);
        free(desc);
    }
    int64_t g = quick ? 1024 : 4096, big = quick ? 2048 : 8192, n16m = quick ? (1 << 20) : (1 << 24), rows = quick ? 1024 : 4096;
    int64_t sq[2] = {g, g}, sq_big[2] = {big, big}, flat[1] = {n16m}, rc[2] = {rows, rows};
    /* An f16 product whose M and N are not multiples of 128 (K is of 64): 4000 x 4032 x 4000. */
    int64_t odd_a[2] = {g - 96, g - 64}, odd_b[2] = {g - 64, g - 96};
    int64_t qs[4] = {1, 32, quick ? 512 : 2048, 128};
    double heads_work = 4.0 * qs[1] * qs[2] * qs[2] * qs[3] / 2; /* causal: half the products */
    /* f16 attention rows: batch 8, 12 heads, sequence 1024 and 4096 (256 and 512 quick), head
     * dimension 64 and 128, causal and not; named attn16_s<L>_d<D>[_causal]. */
    enum { ATTN_ROWS = 8 };
    workload attn[ATTN_ROWS];
    static char attn_names[ATTN_ROWS][32];
    for (int i = 0; i < ATTN_ROWS; i++) {
        int64_t len = i / 4 ? (quick ? 512 : 4096) : (quick ? 256 : 1024);
        int64_t shape[4] = {8, 12, len, i / 2 % 2 ? 128 : 64};
        int causal = i % 2;
        snprintf(attn_names[i], sizeof attn_names[i], "attn16_s%lld_d%lld%s", (long long)len, (long long)shape[3],
                 causal ? "_causal" : "");
        workload a = {attn_names[i], 4.0 * shape[0] * shape[1] * len * len * shape[3] / (causal ? 2 : 1), "TFLOP/s",
                      {randn(ctx, WGT_F16, 4, shape, 20 + 3 * (uint64_t)i), randn(ctx, WGT_F16, 4, shape, 21 + 3 * (uint64_t)i),
                       randn(ctx, WGT_F16, 4, shape, 22 + 3 * (uint64_t)i)},
                      causal ? run_attention_causal : run_attention_full};
        attn[i] = a;
    }
    workload ws[] = {
        {"gemm_f32", 2.0 * g * g * g, "TFLOP/s", {randn(ctx, WGT_F32, 2, sq, 1), randn(ctx, WGT_F32, 2, sq, 2)}, run_matmul},
        {"gemm_f16", 2.0 * g * g * g, "TFLOP/s", {randn(ctx, WGT_F16, 2, sq, 3), randn(ctx, WGT_F16, 2, sq, 4)}, run_matmul},
        {"gemm_f16_big", 2.0 * big * big * big, "TFLOP/s", {randn(ctx, WGT_F16, 2, sq_big, 5), randn(ctx, WGT_F16, 2, sq_big, 6)},
         run_matmul},
        {"gemm_f16_odd", 2.0 * (g - 96) * (g - 64) * (g - 96), "TFLOP/s",
         {randn(ctx, WGT_F16, 2, odd_a, 30), randn(ctx, WGT_F16, 2, odd_b, 31)}, run_matmul},
        {"chain_f32", 4.0 * 4 * n16m, "GB/s", {randn(ctx, WGT_F32, 1, flat, 7), randn(ctx, WGT_F32, 1, flat, 8),
                                             randn(ctx, WGT_F32, 1, flat, 9)}, run_chain},
        {"sum_rows_f32", 4.0 * rows * rows, "GB/s", {randn(ctx, WGT_F32, 2, rc, 10)}, run_sum_rows},
        {"softmax_f32", 8.0 * rows * rows, "GB/s", {randn(ctx, WGT_F32, 2, rc, 11)}, run_softmax},
        {"attention_f32", heads_work, "TFLOP/s", {randn(ctx, WGT_F32, 4, qs, 12), randn(ctx, WGT_F32, 4, qs, 13),
                                                 randn(ctx, WGT_F32, 4, qs, 14)}, run_attention},
        attn[0], attn[1], attn[2], attn[3], attn[4], attn[5], attn[6], attn[7],
    };
    int n = (int)(sizeof ws / sizeof *ws), failed = 0;
    printf("# device: %s; %d repetitions each; GPU time by per-dispatch timestamps\n", wgt_context_device_name(ctx), reps);
    printf("%-24s %10s %10s %10s  %s\n", "workload", "wall ms", "GPU ms", "rate", "top kernel");
    char json[8192];
    size_t used = (size_t)snprintf(json, sizeof json, "{\"device\": \"%s\", \"reps\": %d, \"workloads\": {",
                                   wgt_context_device_name(ctx), reps);
    int first = 1;
    for (int i = 0; i < n; i++) {
        workload *w = &ws[i];
        if (only && !strstr(w->name, only)) continue;
        if (!w->in[0]) {
            printf("%-24s failed to make inputs: %s\n", w->name, wgt_last_error());
            failed = 1;
            continue;
        }
        result r = measure(ctx, w, reps);
        if (!r.ok) {
            printf("%-24s failed: %s\n", w->name, wgt_last_error());
            failed = 1;
            continue;
        }
        double scale = !strcmp(w->unit, "TFLOP/s") ? 1e9 : 1e6;
        double rate = r.gpu_ms > 0 ? w->work / (r.gpu_ms * scale) : 0;
        printf("%-24s %10.3f %10.3f %7.1f %s  %s\n", w->name, r.wall_ms, r.gpu_ms, rate, w->unit, r.kernel);
        if (used < sizeof json)
            used += (size_t)snprintf(json + used, sizeof json - used,
                                     "%s\"%s\": {\"wall_ms\": %.4f, \"gpu_ms\": %.4f, \"rate\": %.2f, \"unit\": \"%s\"}",
                                     first ? "" : ", ", w->name, r.wall_ms, r.gpu_ms, rate, w->unit);
        first = 0;
    }
    double record_us = -1, each_us = -1;
    if (!only || strstr("host_overhead", only)) {
        host_overhead(ctx, quick ? 500 : 5000, &record_us, &each_us);
        printf("host overhead per tiny op: %.2f us recorded then evaluated together, %.2f us evaluated one by one\n",
               record_us, each_us);
        if (record_us < 0) failed = 1;
    }
    if (used < sizeof json)
        snprintf(json + used, sizeof json - used, "}, \"host_us_per_op\": %.3f, \"host_us_per_op_eval_each\": %.3f}",
                 record_us, each_us);
    printf("json: %s\n", json);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < 3; j++) wgt_release(ws[i].in[j]);
    wgt_context_release(ctx);
    return failed;
}
