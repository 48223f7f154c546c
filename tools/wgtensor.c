/*
 * The `wgtensor` command: `info` describes every adapter and the device a context gets;
 * `demo` runs the library's main job (tools/mlp_demo.c) on the best device and beside it on the CPU;
 * `poly` is a quick end-to-end check of the elementwise path; `bench` (tools/bench.c) measures
 * the workloads and `bench-engine` (tools/bench_engine.c) the execution engine; `generate`
 * (tools/generate.c) runs a Llama-shaped model and `bench-quant` (tools/bench_quant.c) measures
 * the quantized paths; `bench-train` (tools/bench_train.c) times GPT-2-small training steps.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "wgtensor.h"

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int fail(const char *what) {
    fprintf(stderr, "wgtensor: %s: %s (%s)\n", what, wgt_last_error(), wgt_status_name(wgt_last_status()));
    return 1;
}

static int cmd_info(void) {
    char *list = wgt_list_adapters(NULL);
    printf("== adapters\n");
    if (list) {
        fputs(list, stdout);
        free(list);
    } else {
        printf("none: %s\n", wgt_last_error());
        wgt_clear_error();
    }
    wgt_context *ctx = wgt_context_create(NULL);
    if (!ctx) return fail("creating a context");
    char *d = wgt_context_describe(ctx);
    printf("== context (chosen device)\n%s", d ? d : "");
    free(d);
    wgt_context_release(ctx);
    return 0;
}

/* Taylor coefficients of exp, highest degree first, for Horner's scheme. */
#define DEGREE 10
static void exp_coefficients(double *c) {
    double f = 1;
    for (int k = 0; k <= DEGREE; k++) {
        if (k) f *= k;
        c[DEGREE - k] = 1.0 / f;
    }
}

/* exp(x) on [-1, 1] by Horner's scheme, written with the library's broadcasting ops:
 * each step is y = y * x + c_k with c_k a one-element tensor broadcast over the batch.
 * x arrives as a transposed view, so the kernels read strided input. */
static wgt_tensor *horner_exp(wgt_context *ctx, int64_t rows, int64_t cols, uint64_t seed) {
    int64_t shape[2] = {cols, rows}, one[1] = {1};
    wgt_tensor *base = wgt_rand_uniform(ctx, WGT_F32, 2, shape, -1.0, 1.0, seed);
    wgt_tensor *x = wgt_transpose(base, 0, 1); /* [rows, cols], strided */
    double c[DEGREE + 1];
    exp_coefficients(c);
    wgt_tensor *y = wgt_full(ctx, WGT_F32, 1, one, c[0]);
    for (int k = 1; k <= DEGREE; k++) {
        wgt_tensor *ck = wgt_full(ctx, WGT_F32, 1, one, c[k]);
        wgt_tensor *yx = wgt_mul(y, x);
        wgt_tensor *next = wgt_add(yx, ck);
        wgt_release(ck);
        wgt_release(yx);
        wgt_release(y);
        y = next;
    }
    wgt_release(x);
    wgt_release(base);
    return y;
}

int wgt_demo_mlp(void);                     /* mlp_demo.c */
int wgt_bench_main(int argc, char **argv); /* bench.c */
int wgt_generate_main(int argc, char **argv);   /* generate.c */
int wgt_bench_quant_main(int argc, char **argv); /* bench_quant.c */
int wgt_bench_engine_main(int argc, char **argv); /* bench_engine.c */
int wgt_bench_train_main(int argc, char **argv); /* bench_train.c */
int wgt_train_lm_main(int argc, char **argv);   /* train_lm.c */

/* A smaller check that needs only elementwise ops: `wgtensor poly`. */
static int cmd_poly(void) {
    const int64_t rows = 1024, cols = 1536, n = rows * cols;
    const uint64_t seed = 2026;
    wgt_context *gpu = wgt_context_create(NULL);
    if (!gpu) return fail("creating a context");
    wgt_context_options cpu_opt = {.backend = WGT_BACKEND_CPU};
    wgt_context *cpu = wgt_context_create(&cpu_opt);
    if (!cpu) return fail("creating the CPU context");
    printf("wgtensor demo: exp(x) by a degree-%d polynomial over %lld values (%d broadcast ops on a strided view)\n",
           DEGREE, (long long)n, 2 * DEGREE);
    printf("device: %s (backend %s)\n", wgt_context_device_name(gpu),
           wgt_context_backend(gpu) == WGT_BACKEND_WEBGPU ? "webgpu" : "cpu");

    float *got = malloc((size_t)n * sizeof *got), *want = malloc((size_t)n * sizeof *want);
    float *xs = malloc((size_t)n * sizeof *xs);
    if (!got || !want || !xs) return fail("allocating host memory");

    wgt_tensor *warm = horner_exp(gpu, 8, 8, seed); /* compiles the kernels outside the timing */
    if (!warm) return fail("warm-up");
    wgt_release(warm);
    double t0 = now_seconds();
    wgt_tensor *y = horner_exp(gpu, rows, cols, seed);
    if (!y || wgt_tensor_read(y, got, (size_t)n * sizeof *got) != WGT_OK) return fail("computing on the device");
    double t_dev = now_seconds() - t0;
    t0 = now_seconds();
    wgt_tensor *y_cpu = horner_exp(cpu, rows, cols, seed);
    if (!y_cpu || wgt_tensor_read(y_cpu, want, (size_t)n * sizeof *want) != WGT_OK) return fail("computing on the CPU");
    double t_cpu = now_seconds() - t0;

    /* The inputs, to compare with libm's exp in double precision. */
    int64_t shape[2] = {cols, rows};
    wgt_tensor *base = wgt_rand_uniform(cpu, WGT_F32, 2, shape, -1.0, 1.0, seed);
    wgt_tensor *x = wgt_transpose(base, 0, 1);
    if (!x || wgt_tensor_read(x, xs, (size_t)n * sizeof *xs) != WGT_OK) return fail("reading the inputs");
    double max_vs_cpu = 0, max_vs_exp = 0;
    for (int64_t i = 0; i < n; i++) {
        double d1 = fabs((double)got[i] - (double)want[i]) / fabs((double)want[i]);
        double d2 = fabs((double)got[i] - exp((double)xs[i])) / exp((double)xs[i]);
        if (!(d1 <= max_vs_cpu)) max_vs_cpu = d1;
        if (!(d2 <= max_vs_exp)) max_vs_exp = d2;
    }
    int ok = max_vs_cpu <= 1e-6 && max_vs_exp <= 1e-6;
    printf("max relative difference vs CPU backend: %.3g\n", max_vs_cpu);
    printf("max relative error vs exp() in float64:  %.3g\n", max_vs_exp);
    printf("time: device %.1f ms (upload, %d kernels, read back), CPU backend %.1f ms\n", t_dev * 1e3, 2 * DEGREE,
           t_cpu * 1e3);
    printf("result: %s\n", ok ? "PASS" : "FAIL");
    wgt_release(x);
    wgt_release(base);
    wgt_release(y);
    wgt_release(y_cpu);
    free(got);
    free(want);
    free(xs);
    wgt_context_release(cpu);
    wgt_context_release(gpu);
    return ok ? 0 : 1;
}

int main(int argc, char **argv) {
    const char *cmd = argc > 1 ? argv[1] : "";
    if (!strcmp(cmd, "info")) return cmd_info();
    if (!strcmp(cmd, "demo")) return wgt_demo_mlp();
    if (!strcmp(cmd, "poly")) return cmd_poly();
    if (!strcmp(cmd, "bench")) return wgt_bench_main(argc - 2, argv + 2);
    if (!strcmp(cmd, "bench-engine")) return wgt_bench_engine_main(argc - 2, argv + 2);
    if (!strcmp(cmd, "generate")) return wgt_generate_main(argc - 2, argv + 2);
    if (!strcmp(cmd, "bench-quant")) return wgt_bench_quant_main(argc - 2, argv + 2);
    if (!strcmp(cmd, "train-lm")) return wgt_train_lm_main(argc - 2, argv + 2);
    if (!strcmp(cmd, "bench-train")) return wgt_bench_train_main(argc - 2, argv + 2);
    fprintf(stderr,
            "usage: wgtensor info | demo | poly | bench [options] | bench-engine [options] | generate [options] |\n"
            "       bench-quant [options] | train-lm [options] | bench-train [options]\n"
            "  info  list every adapter and describe the device a context gets\n"
            "  demo  the main job: train a perceptron on the digits data on the best device and on the CPU\n"
            "  poly  exp(x) by a polynomial in broadcast elementwise ops, checked against the CPU\n"
            "  bench the benchmark workloads with times, rates and fraction of the floor (--help)\n"
            "  bench-engine  the execution engine: per-op overhead eager and as a graph, fusion, peak memory (--help)\n"
            "  generate  text from a Llama-shaped model (GGUF or random weights, optionally q8_0/q4_0) (--help)\n"
            "  bench-quant  quantized matrix-vector GB/s and decode tokens/s against the floor (--help)\n"
            "  train-lm  train a character-level transformer on English text, plot, save and sample it (--help)\n"
            "  bench-train  time forward + backward + AdamW steps of a GPT-2-small-shaped model (--help)\n"
            "environment: WGT_BACKEND=auto|webgpu|cpu, WGT_ADAPTER=<index or name>, WGT_WEBGPU_LIBRARY=<path>,\n"
            "             WGT_TIMEOUT_MS=<ms>\n");
    return 2;
}

