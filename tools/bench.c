/*
 * `wgtensor bench`: the workloads the project measures itself by, run on one device (the
 * timing, the GEMM and bandwidth rows and the table here; the sorting, cross-entropy,
 * attention and convolution rows in bench_rows.c; what both share in bench.h).
 * Each workload is checked on a sample of outputs against float64 sums computed here from
 * the inputs, and reported with its achieved rate and the fraction of the hardware floor:
 * the larger of flops over peak rate and bytes over bandwidth. `--json FILE` writes the rows
 * for bench/compare_torch.py ("ms" is the figure it compares, timed as the row's "timing" says).
 * Rows whose floor is reading their operands once (the few-row GEMM sweep gemm_skinny_m1..m16,
 * matvec_f32, matvec_f16 with packed f16 weights) also report bytes read per second as a
 * fraction of copy_f32 (y = -x, bytes read + written) measured in the same run, which they
 * bring along when a filter selects them.
 *
 * Timing (bench_time_op). Every run records the op outside the clock; the clock runs around
 * wgt_eval (planning, one submit) and, where the run waits, wgt_context_sync. Each result is
 * released once submitted, so the next run's output reuses its buffer from the pool.
 *   1. Three runs, each waited for: they compile the pipelines, upload the inputs (made on
 *      the host) and fill the pool.
 *   2. Warm-up: WARMUP_MS of back-to-back runs.
 *   3. "ms", the figure: batches of runs back to back (about BATCH_MS each, at most 200
 *      runs), one sync per batch; time per run, the median over at least 5 batches and
 *      PHASE_MS. This is the kernel work plus the gaps between submits: throughput.
 *   4. "ms synced": runs each waited for (at least --repeat of them and PHASE_MS); the median.
 *      This adds one submit-to-wake-up latency per run, as PyTorch's synced figure in
 *      compare_torch.py (one launch, then torch.cuda.synchronize) adds its own; on the H200 a
 *      small op's eval + sync takes about 0.023 ms.
 *   5. "ms gpu", where the device offers timestamp queries (src/core/gpu_timing.h): batches as
 *      in 3 with GPU timing on; the compute passes' summed time per run, median over batches.
 *      It leaves out the gaps between submits, so it is the kernels' own time. It becomes the
 *      row's "ms" (the "timing" column says gpu); otherwise, or with --wall-clock, "ms" is the
 *      wall-clock figure of 3. Timing is on only in this phase, so 3 and 4 never pay for it.
 *   6. "ms chained", for the read-bound rows and their copy reference only: chains of runs
 *      where each run takes the previous run's result (x <- W x, x <- x W, x <- -x), recorded
 *      and submitted as one batch, so run i + 1 waits for run i as back-to-back launches on a
 *      CUDA stream do, but no run starts a submit of its own. GPU time of the chain's one
 *      compute pass (wall clock of eval and sync where the device has no timestamps or the
 *      chain needed more than one pass) over its length, median over batches as in 3.
 *      Why: in 5, each run is a submit of its own and its pass's first timestamp is taken
 *      before the submit's barriers and the dispatch's start; on the H200 a pass that negates
 *      32 KB measures 6.8 us alone and 2.3 us per run chained. A product that reads 134 MB in
 *      34 us loses a fifth of its bandwidth to that; the chained figure is the rate such a
 *      product sustains inside a model's step, where a submit holds many dispatches.
 * Why: the earlier method (one warm-up, ten runs with a sync each, median) reported add 64M
 * f32 at 1.14 ms where the engine benchmark (wgt_eval + sync over 300 ms of runs) had
 * 0.38 ms. Recording and the sync inside the clock were not the cause (microseconds). Its
 * warm-up released its result unevaluated, so the engine dropped the op and nothing ran, and
 * its ten runs (about 10 ms of work) came right after seconds of host-side input generation.
 * On the H200, the same kernel on the same buffers took 0.47 ms per add back to back in the
 * first few hundred milliseconds after such a pause and 0.20 ms right after (synced: 0.53
 * and 0.21), and other GPU-idle pauses gave the same slow phases, which is why the
 * warm-up keeps the GPU busy before anything is timed.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "core/gpu_timing.h"

typedef struct {
    const char *name, *device;
    double peak_gflops, peak_gbps; /* 0: unknown */
} device_peak;

/* Peak rates for the fraction-of-floor column (f32 non-tensor-core FLOP/s, memory GB/s). */
static const device_peak known_peaks[] = {
    {"H200", "NVIDIA H200", 66900, 4800},
    {"H100", "NVIDIA H100", 66900, 3350},
};





static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#define WARMUP_MS 500.0
#define PHASE_MS 200.0
#define MAX_RUNS 1000
#define BATCH_MS 20.0

/* One run of op: recorded, then timed through wgt_eval and the sync; -1 on failure. */
static double synced_run(bench_env *env, wgt_tensor *(*op)(void *), void *arg) {
    wgt_tensor *r = op(arg);
    double t0 = now_ms();
    wgt_status st = r ? wgt_eval(1, &r) : wgt_last_status();
    if (st == WGT_OK) st = wgt_context_sync(env->ctx);
    double dt = now_ms() - t0;
    wgt_release(r);
    return st == WGT_OK ? dt : -1;
}

/* n runs of op back to back, one sync at the end: milliseconds per run, -1 on failure. Each
 * result is released once submitted, so the next run's output reuses its buffer. */
static double batch_run(bench_env *env, wgt_tensor *(*op)(void *), void *arg, int n) {
    double t0 = now_ms();
    wgt_status st = WGT_OK;
    for (int i = 0; i < n && st == WGT_OK; i++) {
        wgt_tensor *r = op(arg);
        st = r ? wgt_eval(1, &r) : wgt_last_status();
        wgt_release(r);
    }
    if (st == WGT_OK) st = wgt_context_sync(env->ctx);
    return st == WGT_OK ? (now_ms() - t0) / n : -1;
}

/* Step 5 of the header: batches as in step 3 with GPU timing on; the median batch's
 * compute-pass time per run, or -1 (timing failed, or some pass went untimed). */
static double gpu_time_op(bench_env *env, wgt_tensor *(*op)(void *), void *arg, int per_batch, double *passes) {
    static double t[MAX_RUNS];
    if (wgt_context_gpu_timing(env->ctx, 1) != WGT_OK) return -1;
    int n = 0;
    wgt_gpu_time g = {0};
    for (double start = now_ms(); n < MAX_RUNS && (n < 5 || now_ms() - start < PHASE_MS); n++) {
        if (batch_run(env, op, arg, per_batch) < 0 || wgt_context_gpu_time(env->ctx, &g) != WGT_OK ||
            g.untimed_passes > 0 || g.passes == 0)
            break;
        t[n] = g.ms / per_batch;
    }
    int complete = n >= 5 && g.untimed_passes == 0 && g.passes > 0;
    wgt_context_gpu_timing(env->ctx, 0);
    if (!complete) return -1;
    *passes = (double)g.passes / per_batch;
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    return t[n / 2];
}

int bench_time_op(bench_env *env, wgt_tensor *(*op)(void *), void *arg, bench_row *r) {
    static double t[MAX_RUNS];
    r->ms = r->ms_wall = r->ms_sync = r->ms_gpu = -1;
    double first = 0;
    for (int i = 0; i < 3; i++) /* compiles, uploads the inputs, fills the pool */
        if ((first = synced_run(env, op, arg)) < 0) return 0;
    int per_batch = (int)(BATCH_MS / (first > 0.001 ? first : 0.001));
    per_batch = per_batch < 1 ? 1 : per_batch > 200 ? 200 : per_batch;
    for (double start = now_ms(); now_ms() - start < WARMUP_MS;)
        if (batch_run(env, op, arg, per_batch) < 0) return 0;
    int n = 0;
    for (double start = now_ms(); n < MAX_RUNS && (n < 5 || now_ms() - start < PHASE_MS); n++)
        if ((t[n] = batch_run(env, op, arg, per_batch)) < 0) return 0;
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    r->ms = r->ms_wall = t[n / 2];
    n = 0;
    for (double start = now_ms(); n < MAX_RUNS && (n < env->repeats || now_ms() - start < PHASE_MS); n++)
        if ((t[n] = synced_run(env, op, arg)) < 0) return 0;
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    r->ms_sync = t[n / 2];
    if (env->gpu_timing && (r->ms_gpu = gpu_time_op(env, op, arg, per_batch, &r->passes_per_run)) > 0) r->ms = r->ms_gpu;
    return 1;
}

/* One run of a chain: the result of taking x one step further (a new reference). */
typedef wgt_tensor *(*chain_step)(void *arg, wgt_tensor *x);

/* One chain of n runs from first, recorded, then evaluated in one submit and waited for (step 6
 * of the header): ms per run, GPU time where timed says so and the chain ran as one timed pass
 * (*gpu set), else the wall clock of eval and sync; -1 on failure. */
static double chain_batch(wgt_context *ctx, chain_step step, void *arg, wgt_tensor *first, int n, int timed, int *gpu) {
    wgt_tensor *x = wgt_retain(first);
    for (int i = 0; i < n && x; i++) {
        wgt_tensor *y = step(arg, x);
        wgt_release(x);
        x = y;
    }
    if (!x) return -1;
    double t0 = now_ms();
    wgt_status st = wgt_eval(1, &x);
    if (st == WGT_OK) st = wgt_context_sync(ctx);
    double wall = (now_ms() - t0) / n;
    wgt_release(x);
    if (st != WGT_OK) return -1;
    wgt_gpu_time g = {0};
    *gpu = timed && wgt_context_gpu_time(ctx, &g) == WGT_OK && g.passes == 1 && g.untimed_passes == 0;
    return *gpu ? g.ms / n : wall;
}

/* Step 6 of the header into r: chains about BATCH_MS long (from r->ms), three to warm up, then
 * the median over at least 5 chains and PHASE_MS. GPU time only if every timed chain ran as
 * one pass; else the whole measurement is the wall clock's. */
static void time_chained(bench_env *env, wgt_context *ctx, chain_step step, void *arg, wgt_tensor *first, bench_row *r) {
    static double t[MAX_RUNS];
    r->ms_chained = -1;
    if (!(r->ms > 0)) return;
    int n = (int)(BATCH_MS / r->ms), gpu = 0;
    n = n < 2 ? 2 : n > 200 ? 200 : n;
    for (int i = 0; i < 3; i++)
        if (chain_batch(ctx, step, arg, first, n, 0, &gpu) < 0) return;
    int timed = env->gpu_timing && wgt_context_gpu_timing(ctx, 1) == WGT_OK, all_gpu = timed, k = 0;
    for (double start = now_ms(); k < MAX_RUNS && (k < 5 || now_ms() - start < PHASE_MS); k++) {
        if ((t[k] = chain_batch(ctx, step, arg, first, n, all_gpu, &gpu)) < 0) break;
        if (!gpu && all_gpu) { /* a chain needed more than one pass: time them all by the wall clock */
            all_gpu = 0;
            wgt_context_gpu_timing(ctx, 0);
            k = -1;
        }
    }
    if (timed) wgt_context_gpu_timing(ctx, 0);
    if (k < 5) return;
    qsort(t, (size_t)k, sizeof *t, cmp_double);
    r->ms_chained = t[k / 2];
    r->chained_timing = all_gpu ? "gpu" : "wall";
    r->chain_runs = n;
}

/* ---- GEMM-like workloads ---- */

typedef struct {
    wgt_tensor *a, *b;
} pair;

static wgt_tensor *run_matmul(void *arg) {
    pair *p = arg;
    return wgt_matmul(p->a, p->b);
}

/* Checks `samples` entries of c = a @ b (shapes [batch, m, k] @ [batch, k, n]) in float64; a and
 * b are given by their storages: [batch, m, k], or [batch, k, m] where a_t (a a transposed view),
 * and [batch, k, n], or [batch, n, k] where b_t. */
static double check_matmul(wgt_tensor *a, wgt_tensor *b, wgt_tensor *c, int64_t batch, int64_t m, int64_t k,
                           int64_t n, int a_t, int b_t) {
    const float *pa = wgt_tensor_data(a), *pb = wgt_tensor_data(b), *pc = wgt_tensor_data(c);
    if (!pa || !pb || !pc) return INFINITY;
    double worst = 0;
    for (int s = 0; s < 64; s++) {
        int64_t bi = (s * 7) % batch, i = (s * 7919) % m, j = (s * 104729) % n;
        double want = 0, mag = 0;
        for (int64_t q = 0; q < k; q++) {
            double x = a_t ? pa[(bi * k + q) * m + i] : pa[(bi * m + i) * k + q], y = b_t ? pb[(bi * n + j) * k + q] : pb[(bi * k + q) * n + j];
            want += x * y;
            mag += fabs(x * y);
        }
        double err = fabs(pc[(bi * m + i) * n + j] - want) / (mag > 0 ? mag : 1);
        if (err > worst) worst = err;
    }
    return worst;
}

/* Chain steps (step 6 of the header). Values grow at each step and may overflow to infinity,
 * which changes no kernel's work. */
static wgt_tensor *chain_times_b(void *arg, wgt_tensor *x) { /* x <- x @ b */
    return wgt_matmul(x, ((pair *)arg)->b);
}
static wgt_tensor *chain_a_times(void *arg, wgt_tensor *x) { /* x <- a @ x */
    return wgt_matmul(((pair *)arg)->a, x);
}

/* a [batch, m, k] @ b [batch, k, n] in f32; with a_t, a is the transposed view of a [batch, k, m]
 * tensor, with b_t, b of a [batch, n, k] one (x @ w^T, as a linear layer stores its weights).
 * read_bound: a row limited by reading b once (m at most 16; k = n, batch 1), which reports
 * its bytes read and is also timed chained, x <- x @ b. */
static bench_row bench_gemm_layout(bench_env *env, const char *name, int64_t batch, int64_t m, int64_t k, int64_t n,
                                   int a_t, int b_t, int read_bound) {
    bench_row r = {.name = name};
    snprintf(r.size, sizeof r.size, batch > 1 ? "%lldx%lldx%lldx%lld" : "%lldx%lldx%lld",
             batch > 1 ? (long long)batch : (long long)m, batch > 1 ? (long long)m : (long long)k,
             batch > 1 ? (long long)k : (long long)n, (long long)n);
    int64_t sa[3] = {batch, a_t ? k : m, a_t ? m : k}, sb[3] = {batch, b_t ? n : k, b_t ? k : n};
    wgt_tensor *a = wgt_rand_uniform(env->ctx, WGT_F32, 3, sa, -1, 1, 1), *b = wgt_rand_uniform(env->ctx, WGT_F32, 3, sb, -1, 1, 2);
    pair p = {a && a_t ? wgt_transpose(a, 1, 2) : a, b && b_t ? wgt_transpose(b, 1, 2) : b};
    if (p.a && p.b) {
        bench_time_op(env, run_matmul, &p, &r);
        if (read_bound) time_chained(env, env->ctx, chain_times_b, &p, p.a, &r);
        wgt_tensor *c = run_matmul(&p);
        r.max_rel_err = c ? check_matmul(a, b, c, batch, m, k, n, a_t, b_t) : INFINITY;
        r.ok = r.max_rel_err <= 1e-5 * sqrt((double)k) + 1e-6;
        wgt_release(c);
    }
    r.gflop = 2.0 * batch * m * n * k * 1e-9;
    r.gbyte = 4.0 * batch * (m * k + k * n + m * n) * 1e-9;
    if (read_bound) r.gbyte_read = 4.0 * (m * k + k * n) * 1e-9;
    if (p.a != a) wgt_release(p.a);
    if (p.b != b) wgt_release(p.b);
    wgt_release(a), wgt_release(b);
    return r;
}

static bench_row bench_gemm(bench_env *env, const char *name, int64_t batch, int64_t m, int64_t k, int64_t n) {
    return bench_gemm_layout(env, name, batch, m, k, n, 0, 0, 0);
}

/* Matrix-vector product with f16 weights stored packed, two to a 32-bit word: w [n, k] @ v [k],
 * f16 result (f32 accumulation). As in inference with f16 weights, the weights are read once
 * and nothing else is large, so the figure that matters is bytes read per second. */
static bench_row bench_matvec_f16(bench_env *env, int64_t n, int64_t k) {
    bench_row r = {.name = "matvec_f16"};
    snprintf(r.size, sizeof r.size, "%lldx%lld", (long long)n, (long long)k);
    int64_t sw[2] = {n, k}, sv[1] = {k};
    pair p = {wgt_rand_uniform(env->ctx, WGT_F16, 2, sw, -1, 1, 8), wgt_rand_uniform(env->ctx, WGT_F16, 1, sv, -1, 1, 9)};
    if (p.a && p.b) {
        bench_time_op(env, run_matmul, &p, &r);
        time_chained(env, env->ctx, chain_a_times, &p, p.b, &r);
        wgt_tensor *c = run_matmul(&p);
        const uint16_t *pw = wgt_tensor_data(p.a), *pv = wgt_tensor_data(p.b), *pc = c ? wgt_tensor_data(c) : NULL;
        double worst = pw && pv && pc ? 0 : INFINITY;
        for (int s = 0; pc && pw && pv && s < 64; s++) { /* f16 inputs are exact in float64 */
            int64_t i = (s * 7919) % n;
            double want = 0, mag = 0;
            for (int64_t q = 0; q < k; q++) {
                double x = wgt_f16_to_f32(pw[i * k + q]) * (double)wgt_f16_to_f32(pv[q]);
                want += x, mag += fabs(x);
            }
            double err = fabs(wgt_f16_to_f32(pc[i]) - want) / (mag > 0 ? mag : 1);
            if (err > worst) worst = err;
        }
        r.max_rel_err = worst;
        r.ok = worst <= 1e-3; /* the f16 rounding of the result, against the sum of magnitudes */
        wgt_release(c);
    }
    r.gflop = 2.0 * n * k * 1e-9;
    r.gbyte_read = 2.0 * (n * k + k) * 1e-9;
    r.gbyte = r.gbyte_read + 2.0 * n * 1e-9;
    wgt_release(p.a), wgt_release(p.b);
    return r;
}

/* ---- bandwidth workloads ---- */

typedef struct {
    wgt_tensor *a, *b;
    int axis;
    int kind; /* 0 add, 1 sum all, 2 sum rows, 3 softmax, 4 layer_norm, 5 rms_norm, 6 copy (y = -x) */
} unary_arg;

static wgt_tensor *run_bw(void *arg) {
    unary_arg *u = arg;
    switch (u->kind) {
    case 0: return wgt_add(u->a, u->b);
    case 1: return wgt_sum(u->a, 0, NULL, 0);
    case 2: return wgt_sum(u->a, 1, &u->axis, 0);
    case 3: return wgt_softmax(u->a, -1);
    case 4: return wgt_layer_norm(u->a, NULL, NULL, 1e-5);
    case 5: return wgt_rms_norm(u->a, NULL, 1e-5);
    /* The copy reference: one read and one write per element through the vectorised
     * elementwise kernel. (wgt_contiguous copies through the general strided box kernel, one
     * element per invocation with index arithmetic, which is not the device's copy speed.) */
    default: return wgt_neg(u->a);
    }
}

/* Float64 check of a sample: elementwise entries, or whole rows for reductions and norms. */
static double check_bw(unary_arg *u, wgt_tensor *out, int64_t rows, int64_t cols) {
    const float *a = wgt_tensor_data(u->a), *o = wgt_tensor_data(out);
    const float *b = u->b ? wgt_tensor_data(u->b) : NULL;
    if (!a || !o || (u->b && !b)) return INFINITY;
    double worst = 0;
    int64_t bcols = u->b ? wgt_tensor_numel(u->b) : 0;
    for (int s = 0; s < 8; s++) {
        int64_t row = (s * 7919) % rows;
        const float *x = a + row * cols;
        double sum = 0, sq = 0, mx = -INFINITY, abs_sum = 0;
        for (int64_t j = 0; j < cols; j++) {
            sum += x[j];
            sq += (double)x[j] * x[j];
            abs_sum += fabs(x[j]);
            if (x[j] > mx) mx = x[j];
        }
        double mean = sum / cols, var = sq / cols - mean * mean, e = 0;
        for (int64_t j = 0; j < cols && u->kind >= 3 && u->kind <= 5; j += cols / 16 + 1) {
            double want = u->kind == 3 ? 0 : u->kind == 4 ? (x[j] - mean) / sqrt(var + 1e-5) : x[j] / sqrt(sq / cols + 1e-5);
            if (u->kind == 3) {
                double z = 0;
                for (int64_t q = 0; q < cols; q++) z += exp(x[q] - mx);
                want = exp(x[j] - mx) / z;
            }
            double err = fabs(o[row * cols + j] - want) / (fabs(want) + 1e-6);
            if (err > e) e = err;
        }
        if (u->kind == 0)
            for (int64_t j = 0; j < cols; j += cols / 16 + 1) {
                double want = (double)x[j] + b[bcols == cols ? j : row * cols + j];
                double err = fabs(o[row * cols + j] - want) / (fabs(want) + 1e-30);
                if (err > e) e = err;
            }
        if (u->kind == 2) e = fabs(o[row] - sum) / (abs_sum + 1e-30);
        for (int64_t j = 0; j < cols && u->kind == 6; j++)
            if (o[row * cols + j] != -x[j]) e = INFINITY;
        if (e > worst) worst = e;
    }
    if (u->kind == 1) {
        double sum = 0, abs_sum = 0;
        for (int64_t i = 0; i < rows * cols; i++) sum += a[i], abs_sum += fabs(a[i]);
        worst = fabs(o[0] - sum) / (abs_sum + 1e-30);
    }
    return worst;
}

static wgt_tensor *chain_negate(void *arg, wgt_tensor *x) { /* x <- -x */
    (void)arg;
    return wgt_neg(x);
}

/* The copy chained (step 6 of the header), in a context of its own with fusion off: fused, the
 * chain of negations would run as one kernel that reads and writes once. */
static void time_copy_chained(bench_env *env, int64_t rows, int64_t cols, bench_row *r) {
    wgt_context_options o = env->options;
    o.no_fusion = 1;
    o.quiet = 1;
    wgt_context *ctx = wgt_context_create(&o);
    int64_t shape[2] = {rows, cols};
    wgt_tensor *x = ctx ? wgt_rand_normal(ctx, WGT_F32, 2, shape, 0, 1, 3) : NULL;
    if (x && wgt_context_backend(ctx) == wgt_context_backend(env->ctx)) time_chained(env, ctx, chain_negate, NULL, x, r);
    wgt_release(x);
    if (ctx) wgt_context_release(ctx);
}

static bench_row bench_bw(bench_env *env, const char *name, int kind, int64_t rows, int64_t cols, int broadcast) {
    bench_row r = {.name = name};
    snprintf(r.size, sizeof r.size, "%lldx%lld", (long long)rows, (long long)cols);
    int64_t shape[2] = {rows, cols}, row[1] = {cols};
    unary_arg u = {wgt_rand_normal(env->ctx, WGT_F32, 2, shape, 0, 1, 3), NULL, 1, kind};
    if (kind == 0) u.b = broadcast ? wgt_rand_normal(env->ctx, WGT_F32, 1, row, 0, 1, 4)
                                   : wgt_rand_normal(env->ctx, WGT_F32, 2, shape, 0, 1, 4);
    if (u.a && (kind != 0 || u.b)) {
        bench_time_op(env, run_bw, &u, &r);
        if (kind == 6) time_copy_chained(env, rows, cols, &r);
        wgt_tensor *o = run_bw(&u);
        r.max_rel_err = o ? check_bw(&u, o, rows, cols) : INFINITY;
        r.ok = r.max_rel_err <= (kind == 1 ? 1e-4 : 1e-4);
        wgt_release(o);
    }
    double elems = (double)rows * (double)cols;
    /* Bytes that must move: inputs read once, outputs written once. */
    double out_elems = kind == 1 ? 1 : kind == 2 ? (double)rows : elems;
    double in_elems = elems + (kind == 0 ? (broadcast ? (double)cols : elems) : 0);
    r.gbyte = 4.0 * (in_elems + out_elems) * 1e-9;
    r.gflop = kind == 6 ? 0 : elems * (kind <= 2 ? 1 : 5) * 1e-9;
    wgt_release(u.a), wgt_release(u.b);
    return r;
}

static double floor_fraction(const bench_env *env, const bench_row *r) {
    double t_flop = env->peak_gflops > 0 ? r->gflop / env->peak_gflops : 0;
    double t_byte = env->peak_gbps > 0 ? r->gbyte / env->peak_gbps : 0;
    double floor_s = t_flop > t_byte ? t_flop : t_byte;
    return floor_s > 0 && r->ms > 0 ? floor_s / (r->ms * 1e-3) : 0;
}

int wgt_bench_main(int argc, char **argv) {
    const char *json = NULL, *filter = NULL;
    wgt_context_options opt = {0};
    bench_env env = {.repeats = 10};
    int wall_clock = 0;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--json") && i + 1 < argc) json = argv[++i];
        else if (!strcmp(argv[i], "--filter") && i + 1 < argc) filter = argv[++i];
        else if (!strcmp(argv[i], "--device") && i + 1 < argc) {
            const char *d = argv[++i];
            opt.backend = !strcmp(d, "cpu") ? WGT_BACKEND_CPU : !strcmp(d, "webgpu") ? WGT_BACKEND_WEBGPU : WGT_BACKEND_AUTO;
        } else if (!strcmp(argv[i], "--repeat") && i + 1 < argc) env.repeats = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--quick")) env.quick = 1;
        else if (!strcmp(argv[i], "--wall-clock")) wall_clock = 1;
        else if (!strcmp(argv[i], "--peak-gflops") && i + 1 < argc) env.peak_gflops = atof(argv[++i]);
        else if (!strcmp(argv[i], "--peak-gbps") && i + 1 < argc) env.peak_gbps = atof(argv[++i]);
        else {
            fprintf(stderr, "usage: wgtensor bench [--json FILE] [--filter NAME] [--device auto|webgpu|cpu] [--repeat N]\n"
                            "                      [--quick] [--wall-clock] [--peak-gflops X] [--peak-gbps Y]\n");
            return 2;
        }
    }
    if (env.repeats < 1) env.repeats = 1;
    env.options = opt;
    env.ctx = wgt_context_create(&opt);
    if (!env.ctx) {
        fprintf(stderr, "wgtensor bench: %s\n", wgt_last_error());
        return 1;
    }
    const char *device = wgt_context_device_name(env.ctx);
    /* GPU timestamps where the device offers them; the reason goes in the output otherwise. */
    char timing_note[256] = "--wall-clock given";
    if (!wall_clock) {
        env.gpu_timing = wgt_context_gpu_timing(env.ctx, 1) == WGT_OK;
        snprintf(timing_note, sizeof timing_note, "%s", env.gpu_timing ? "" : wgt_last_error());
        wgt_clear_error();
        wgt_context_gpu_timing(env.ctx, 0);
        wgt_clear_error();
    }
    for (size_t i = 0; i < sizeof known_peaks / sizeof *known_peaks; i++)
        if (strstr(device, known_peaks[i].name)) {
            if (env.peak_gflops == 0) env.peak_gflops = known_peaks[i].peak_gflops;
            if (env.peak_gbps == 0) env.peak_gbps = known_peaks[i].peak_gbps;
        }
    /* --quick shrinks every workload (for slow devices such as lavapipe, and for smoke runs). */
    int q = env.quick ? 8 : 1;
    bench_row rows[64];
    int n = 0;
#define SELECTED(name_) (!filter || strstr(name_, filter))
#define ADD(expr)                                                 \
    do {                                                          \
        rows[n++] = expr;                                         \
        if (!(rows[n - 1].ms > 0)) {                              \
            rows[n - 1].ok = 0;                                   \
            snprintf(rows[n - 1].error, sizeof rows[n - 1].error, \
                     "%s", wgt_last_error());                     \
        }                                                         \
        fprintf(stderr, "  %s done\n", rows[n - 1].name);         \
    } while (0)
#define RUN(name_, expr) \
    if (SELECTED(name_)) ADD(expr)
    /* The skinny sweep, the matrix-vector rows and the copy: 256 MB of f32 weights, 64 MB with
     * --quick, still larger than a CPU's last-level cache, so they stay memory-bound there. */
    int64_t big = q > 1 ? 4096 : 8192;
    /* The copy comes first and also runs for the read-bound rows, which report their
     * fraction of it. */
    if (SELECTED("copy_f32") || SELECTED("gemm_skinny") || SELECTED("matvec"))
        ADD(bench_bw(&env, "copy_f32", 6, big, 8192, 0));
    RUN("gemm_f32", bench_gemm(&env, "gemm_f32", 1, 4096 / q, 4096 / q, 4096 / q));
    RUN("gemm_f32_4097", bench_gemm(&env, "gemm_f32_4097", 1, (4097 / q) | 1, (4097 / q) | 1, (4097 / q) | 1));
    /* 34 x 32 tiles of 128 x 128: a few past a whole number of waves on a large GPU (4.12 on
     * an H200's 264 slots), which the last wave's streaming spreads over every slot. */
    RUN("gemm_f32_4352", bench_gemm(&env, "gemm_f32_4352", 1, 4352 / q, 4096 / q, 4096 / q));
    RUN("gemm_f32_nt", bench_gemm_layout(&env, "gemm_f32_nt", 1, 4096 / q, 4096 / q, 4096 / q, 0, 1, 0));
    RUN("gemm_f32_tn", bench_gemm_layout(&env, "gemm_f32_tn", 1, 4096 / q, 4096 / q, 4096 / q, 1, 0, 0));
    /* Square sizes around 4096, each a power of two (the 4097 row is the one past a tile). */
    static const char *const square[] = {"gemm_square_1024", "gemm_square_2048", "gemm_square_8192"};
    static const int64_t square_n[] = {1024, 2048, 8192};
    for (int i = 0; i < 3; i++) RUN(square[i], bench_gemm(&env, square[i], 1, square_n[i] / q, square_n[i] / q, square_n[i] / q));
    RUN("gemm_f32_skinny", bench_gemm(&env, "gemm_f32_skinny_m16", 1, 16, 4096 / q, 4096 / q));
    static const char *const skinny[] = {"gemm_skinny_m1", "gemm_skinny_m2", "gemm_skinny_m4", "gemm_skinny_m8",
                                         "gemm_skinny_m16"};
    for (int i = 0; i < 5; i++) {
        int64_t m = (int64_t)1 << i;
        RUN(skinny[i], bench_gemm_layout(&env, skinny[i], 1, m, big, big, 0, 0, 1));
    }
    RUN("gemm_batched", bench_gemm(&env, "gemm_batched_attn", 32, 128, 128, 1024 / q));
    /* Square sizes from 1000 to 8191 on both sides of each size where the kernel's choices
     * change (tile multiples, the packing thresholds of matmul.c), for cliffs between the
     * rows above. They take a while, so they run only when the filter names them. */
    static const int64_t sweep[] = {1000, 1152, 1280, 1536, 1792, 2047, 2049, 2560, 3000, 3071, 4095, 5000, 6144, 7000, 8191};
    static char sweep_names[sizeof sweep / sizeof *sweep][24]; /* rows keep their names */
    for (size_t i = 0; filter && strstr(filter, "sweep") && i < sizeof sweep / sizeof *sweep; i++) {
        snprintf(sweep_names[i], sizeof sweep_names[i], "gemm_sweep_%lld", (long long)sweep[i]);
        int64_t s = sweep[i] / q;
        RUN(sweep_names[i], bench_gemm(&env, sweep_names[i], 1, s, s, s));
    }
    /* The products of a GPT-2-small training step (bench-train's shape: 8192 tokens, width 768,
     * a 50257-word tied output layer, a 3072-wide MLP), each layout as the step runs it: the
     * logits x W^T, their gradients into x (dL W) and into W (dL^T x). Run when the filter
     * names "gemm_train". */
    static const struct { const char *name; int64_t m, k, n; int a_t, b_t; } train[] = {
        {"gemm_train_logits_nt", 8192, 768, 50257, 0, 1}, {"gemm_train_dx_logits", 8192, 50257, 768, 0, 0},
        {"gemm_train_dw_logits_tn", 50257, 8192, 768, 1, 0}, {"gemm_train_mlp_up", 8192, 768, 3072, 0, 0},
        {"gemm_train_mlp_down", 8192, 3072, 768, 0, 0}, {"gemm_train_qkv", 8192, 768, 2304, 0, 0}};
    for (size_t i = 0; filter && strstr(filter, "gemm_train") && i < sizeof train / sizeof *train; i++)
        RUN(train[i].name, bench_gemm_layout(&env, train[i].name, 1, train[i].m / q, train[i].k / q, train[i].n / q,
                                             train[i].a_t, train[i].b_t, 0));
    RUN("matvec_f32", bench_gemm_layout(&env, "matvec_f32", 1, 1, big, big, 0, 0, 1));
    RUN("matvec_f16", bench_matvec_f16(&env, big, big));
    RUN("add_f32", bench_bw(&env, "add_f32", 0, 8192 / q, 8192, 0));
    RUN("add_broadcast", bench_bw(&env, "add_broadcast_f32", 0, 8192 / q, 8192, 1));
    RUN("sum_all", bench_bw(&env, "sum_all_f32", 1, 8192 / q, 8192, 0));
    RUN("sum_rows", bench_bw(&env, "sum_rows_f32", 2, 8192 / q, 8192, 0));
    RUN("softmax", bench_bw(&env, "softmax_rows", 3, 8192 / q, 4096, 0));
    /* A GPT-2 vocabulary: rows of 50257, odd, so not aligned to 4 elements. */
    RUN("softmax_vocab", bench_bw(&env, "softmax_vocab", 3, 8192 / q, 50257, 0));
    RUN("cross_entropy_fwd_bwd", bench_xent(&env, "cross_entropy_fwd_bwd", 8192 / q, 50257));
    RUN("layer_norm", bench_bw(&env, "layer_norm_rows", 4, 8192 / q, 4096, 0));
    RUN("rms_norm", bench_bw(&env, "rms_norm_rows", 5, 8192 / q, 4096, 0));
    RUN("sort_f32", bench_sort(&env, "sort_f32", 1, (16 << 20) / q, 0));
    RUN("topk_f32", bench_sort(&env, "topk_f32", 64 / q, 32000, 50));
    RUN("attention_causal", bench_attention(&env, "attention_causal", 32 / (q > 1 ? 4 : 1), 2048 / q, 2048 / q, 128, 1));
    /* One new query against a long cache of keys and values, as in decoding. */
    RUN("attention_decode", bench_attention(&env, "attention_decode", 32 / (q > 1 ? 4 : 1), 1, 8192 / q, 128, 0));
    /* ResNet-50's 3 x 3 layer of its first stage, against cuDNN in compare_torch.py. */
    RUN("conv2d_resnet", bench_conv(&env, "conv2d_resnet", 32 / q, 64, 56, 56, 64, 3));
#undef RUN
#undef ADD
#undef SELECTED
    /* Read-bound rows against the copy: bytes read per second over the copy's bytes moved
     * (read + written) per second, both on this device in this run. */
    double copy_gbps = 0, chained_copy_gbps = 0;
    for (int i = 0; i < n; i++)
        if (!strcmp(rows[i].name, "copy_f32") && rows[i].ok) {
            copy_gbps = rows[i].gbyte / (rows[i].ms * 1e-3);
            if (rows[i].ms_chained > 0) chained_copy_gbps = rows[i].gbyte / (rows[i].ms_chained * 1e-3);
        }
    for (int i = 0; i < n; i++) {
        if (rows[i].gbyte_read > 0 && copy_gbps > 0 && rows[i].ms > 0)
            rows[i].copy_fraction = rows[i].gbyte_read / (rows[i].ms * 1e-3) / copy_gbps;
        if (rows[i].gbyte_read > 0 && chained_copy_gbps > 0 && rows[i].ms_chained > 0)
            rows[i].chained_copy_fraction = rows[i].gbyte_read / (rows[i].ms_chained * 1e-3) / chained_copy_gbps;
    }
    printf("device: %s; peaks used for the floor: %.0f GFLOP/s, %.0f GB/s%s\n", device, env.peak_gflops,
           env.peak_gbps, env.peak_gflops == 0 ? " (unknown: pass --peak-gflops/--peak-gbps)" : "");
    if (env.gpu_timing)
        printf("timing: ms is GPU time (timestamps at the beginning and end of each compute pass, summed per run, "
               "over back-to-back batches); rows marked wall fell back to the wall clock\n");
    else
        printf("timing: ms is wall clock per run over back-to-back batches with one wait each "
               "(no GPU timestamps: %s)\n", timing_note);
    printf("%-22s %-18s %10s %6s %10s %10s %10s %9s %8s %9s %s\n", "workload", "size", "ms", "timing", "wall ms",
           "synced ms", "GFLOP/s", "GB/s", "floor", "max err", "check");
    for (int i = 0; i < n; i++)
        printf("%-22s %-18s %10.3f %6s %10.3f %10.3f %10.1f %9.1f %7.1f%% %9.2g %s\n", rows[i].name, rows[i].size,
               rows[i].ms, rows[i].ms_gpu > 0 ? "gpu" : "wall", rows[i].ms_wall, rows[i].ms_sync,
               rows[i].gflop / (rows[i].ms * 1e-3), rows[i].gbyte / (rows[i].ms * 1e-3),
               100 * floor_fraction(&env, &rows[i]), rows[i].max_rel_err, rows[i].ok ? "ok" : "FAIL");
    for (int i = 0; i < n; i++)
        if (rows[i].error[0]) printf("%s %s: not timed: %s\n", rows[i].name, rows[i].size, rows[i].error);
    if (copy_gbps > 0) {
        printf("\nread-bound rows: bytes read per second against copy_f32 (%.1f GB/s read + written; chained %.1f)\n",
               copy_gbps, chained_copy_gbps);
        printf("%-22s %-18s %10s %10s %9s | %10s %6s %5s %10s %9s\n", "workload", "size", "MB read", "GB/s read",
               "of copy", "chained ms", "timing", "runs", "GB/s read", "of copy");
        for (int i = 0; i < n; i++) {
            const bench_row *b = &rows[i];
            if (!(b->copy_fraction > 0)) continue;
            printf("%-22s %-18s %10.1f %10.1f %8.1f%% |", b->name, b->size, b->gbyte_read * 1e3,
                   b->gbyte_read / (b->ms * 1e-3), 100 * b->copy_fraction);
            if (b->ms_chained > 0)
                printf(" %10.4f %6s %5d %10.1f %8.1f%%\n", b->ms_chained, b->chained_timing, b->chain_runs,
                       b->gbyte_read / (b->ms_chained * 1e-3), 100 * b->chained_copy_fraction);
            else
                printf(" %10s\n", "-");
        }
    }
    if (json) {
        FILE *f = fopen(json, "w");
        if (!f) {
            fprintf(stderr, "wgtensor bench: cannot write %s\n", json);
        } else {
            fprintf(f, "{\"device\": \"%s\", \"backend\": \"%s\", \"quick\": %d, \"timing\": \"%s\", "
                       "\"timing_note\": \"", device, wgt_context_backend(env.ctx) == WGT_BACKEND_CPU ? "cpu" : "webgpu",
                    env.quick, env.gpu_timing ? "gpu-timestamps" : "wall-clock");
            for (const char *c = timing_note; *c; c++) /* a driver's message: JSON-escaped */
                fprintf(f, *c == '"' || *c == '\\' ? "\\%c" : (unsigned char)*c < 0x20 ? " " : "%c", *c);
            fprintf(f, "\", \"rows\": [\n");
            for (int i = 0; i < n; i++)
                fprintf(f, "  {\"name\": \"%s\", \"size\": \"%s\", \"ms\": %.6f, \"timing\": \"%s\", \"ms_wall\": %.6f, "
                           "\"ms_synced\": %.6f, \"ms_gpu\": %.6f, \"passes_per_run\": %.2f, \"gflop\": %.6f, \"gbyte\": %.6f, "
                           "\"gbyte_read\": %.6f, \"copy_fraction\": %.4f, \"ms_chained\": %.6f, "
                           "\"chained_timing\": \"%s\", \"chain_runs\": %d, \"chained_copy_fraction\": %.4f, "
                           "\"floor_fraction\": %.4f, \"max_rel_err\": %.3g, \"ok\": %s}%s\n",
                        rows[i].name, rows[i].size, rows[i].ms, rows[i].ms_gpu > 0 ? "gpu" : "wall", rows[i].ms_wall,
                        rows[i].ms_sync, rows[i].ms_gpu, rows[i].passes_per_run, rows[i].gflop, rows[i].gbyte,
                        rows[i].gbyte_read, rows[i].copy_fraction, rows[i].ms_chained > 0 ? rows[i].ms_chained : -1,
                        rows[i].ms_chained > 0 ? rows[i].chained_timing : "", rows[i].chain_runs,
                        rows[i].chained_copy_fraction, floor_fraction(&env, &rows[i]),
                        rows[i].max_rel_err, rows[i].ok ? "true" : "false", i + 1 < n ? "," : "");
            fprintf(f, "]}\n");
            fclose(f);
        }
    }
    int all_ok = 1;
    for (int i = 0; i < n; i++) all_ok &= rows[i].ok;
    wgt_context_release(env.ctx);
    return all_ok ? 0 : 1;
}
