/*
 * `wgtensor bench-engine`: measures the execution engine rather than the kernels.
 *
 *   overhead  a chain of N = 1, 10, 100, 1000 elementwise ops on a [256] f32 tensor (the
 *             cycle x*0.999, x+b, tanh(x), x+0.001). eager: each iteration records the chain
 *             and reads the result back; graph: the chain is built once from a graph input and
 *             each iteration is wgt_graph_dispatch plus a read of the output. Reported as
 *             microseconds per op (iteration time / N).
 *   fusion    an 8-op elementwise chain over 64M f32 elements (4M on lavapipe, the CPU backend
 *             or with --quick) against one add over the same data: wall clock around wgt_eval
 *             and wgt_context_sync; the ratio chain / add is the figure (goal: at most 1.2).
 *   memory    a 1000-op chain on [4096, 256] f32 (1M elements) whose intermediates are released
 *             as soon as the next op is recorded: device_bytes_peak after a wgt_context_trim,
 *             against the largest live set (input, output and one intermediate: 3 x 4 MB);
 *             one run, so its time is information only.
 *   scale     chains of N = 10k, 100k, 1M x+1 ops: graph build, eager flush, context release.
 *   names     a graph of N = 10k, 50k named inputs x<i> of [1] f32 and as many outputs
 *             y<i> = x<i> + x<i+1 mod N>: the wgt_graph_input calls and the recording, the build,
 *             and one dispatch binding all 2N names; one run, reported as microseconds per input
 *             (the costs that grow with the number of names must stay flat).
 *
 * Everything runs twice, in a context with fusion on (the default) and one with no_fusion=1;
 * launches and submits per iteration come from wgt_context_stats, so fusion is visible.
 * Times are the median of the iterations run within a time budget after two warm-up runs.
 * Every result is checked on a sample against float64 computed here. `--json FILE` writes
 * the rows for bench/compare_torch.py.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "wgtensor.h"

#define OVERHEAD_NUMEL 256
#define MEMORY_ROWS 4096
#define MEMORY_COLS 256
#define MEMORY_OPS 1000
#define MAX_ITERS 2000

typedef struct {
    wgt_context_options opt;
    const char *filter;
    int quick;
    int64_t fusion_numel; /* 0: chosen from the device */
    double budget_us;     /* per timed configuration */
    int min_iters;
} engine_env;

typedef struct {
    char name[48];
    const char *kind; /* "overhead", "fusion", "memory" */
    const char *mode; /* overhead: "eager" or "graph" */
    int fusion;       /* the context's setting */
    int n_ops;
    int64_t numel;
    int iters;
    double us_per_iter, launches, submits, ops_fused; /* per iteration */
    int graph_launches;                               /* graph rows: wgt_graph_launches */
    double gbyte;                                     /* fusion rows: bytes that must move */
    double ratio;           /* fusion: time / add time; memory: peak / live set */
    uint64_t peak_bytes, live_bytes, base_bytes; /* memory rows */
    double us_record, us_build;                  /* names rows: us_per_iter is the dispatch */
    double max_err;
    int ok;
    char note[200];
} engine_row;

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void note_error(engine_row *r, const char *what) {
    snprintf(r->note, sizeof r->note, "%s: %s (%s)", what, wgt_last_error(), wgt_status_name(wgt_last_status()));
    wgt_clear_error();
    r->ok = 0;
}

/* ---- the chain of the overhead and memory workloads ---- */

/* Op i of the chain: the cycle x*0.999, x+b, tanh(x), x+0.001. Scalars become f32 rank-0
 * tensors, so the float64 reference uses the same rounded constants. */
static wgt_tensor *chain_op(wgt_tensor *x, wgt_tensor *b, int i) {
    switch (i % 4) {
    case 0: return wgt_mul_scalar(x, 0.999);
    case 1: return wgt_add(x, b);
    case 2: return wgt_tanh(x);
    default: return wgt_add_scalar(x, 0.001);
    }
}

static double chain_ref(double x, double b, int n) {
    for (int i = 0; i < n; i++) switch (i % 4) {
        case 0: x *= (double)0.999f; break;
        case 1: x += b; break;
        case 2: x = tanh(x); break;
        default: x += (double)0.001f; break;
        }
    return x;
}

/* Records the n-op chain from x0, releasing each intermediate as soon as the next op holds it. */
static wgt_tensor *record_chain(wgt_tensor *x0, wgt_tensor *b, int n) {
    wgt_tensor *x = wgt_retain(x0);
    for (int i = 0; i < n && x; i++) {
        wgt_tensor *y = chain_op(x, b, i);
        wgt_release(x);
        x = y;
    }
    return x;
}

/* Largest |got - want| / max(1, |want|) over the n sampled elements (indices idx, or 0..n-1). */
static double chain_err(const float *got, const float *x0, const float *b, int64_t bcols, const int64_t *idx,
                        int64_t n, int ops) {
    double worst = 0;
    for (int64_t s = 0; s < n; s++) {
        int64_t i = idx ? idx[s] : s;
        double want = chain_ref(x0[i], b[i % bcols], ops);
        double err = fabs(got[i] - want) / (fabs(want) > 1 ? fabs(want) : 1);
        if (!(err <= worst)) worst = err; /* NaN counts as the worst */
    }
    return worst;
}

/* ---- timing ---- */

typedef double (*iter_fn)(void *arg); /* one iteration; its time in microseconds, < 0 on failure */

/* Two warm-up iterations (pipelines, pools), then iterations until the budget is spent (at
 * least min_iters, at most MAX_ITERS); the median time and the stats deltas per iteration. */
static int measure(const engine_env *env, wgt_context *ctx, iter_fn f, void *arg, engine_row *r) {
    static double t[MAX_ITERS];
    for (int w = 0; w < 2; w++)
        if (f(arg) < 0) return 0;
    wgt_stats s0, s1;
    if (wgt_context_stats(ctx, &s0) != WGT_OK) return 0;
    double start = now_us();
    int n = 0;
    while (n < MAX_ITERS && (n < env->min_iters || now_us() - start < env->budget_us)) {
        t[n] = f(arg);
        if (t[n] < 0) return 0;
        n++;
    }
    if (wgt_context_stats(ctx, &s1) != WGT_OK) return 0;
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    r->iters = n;
    r->us_per_iter = t[n / 2];
    r->launches = (double)(s1.launches - s0.launches) / n;
    r->submits = (double)(s1.submits - s0.submits) / n;
    r->ops_fused = (double)(s1.ops_fused - s0.ops_fused) / n;
    return 1;
}

/* ---- 1. overhead ---- */

typedef struct {
    wgt_tensor *x0, *b, *out;
    wgt_graph *g;
    int n;
    float *host;
    char input[32]; /* the graph input's name: unique in the context while the graph lives */
} overhead_arg;

static double eager_iter(void *p) {
    overhead_arg *a = p;
    double t0 = now_us();
    wgt_tensor *y = record_chain(a->x0, a->b, a->n);
    wgt_status st = y ? wgt_tensor_read(y, a->host, OVERHEAD_NUMEL * sizeof(float)) : wgt_last_status();
    double dt = now_us() - t0;
    wgt_release(y);
    return st == WGT_OK ? dt : -1;
}

static double graph_iter(void *p) {
    overhead_arg *a = p;
    double t0 = now_us();
    wgt_binding in = {a->input, a->x0}, out = {"y", a->out};
    wgt_status st = wgt_graph_dispatch(a->g, 1, &in, 1, &out);
    if (st == WGT_OK) st = wgt_tensor_read(a->out, a->host, OVERHEAD_NUMEL * sizeof(float));
    double dt = now_us() - t0;
    return st == WGT_OK ? dt : -1;
}

static engine_row bench_overhead(const engine_env *env, wgt_context *ctx, int fusion, int graph, int n) {
    engine_row r = {.kind = "overhead", .mode = graph ? "graph" : "eager", .fusion = fusion, .n_ops = n,
                    .numel = OVERHEAD_NUMEL, .ok = 1};
    snprintf(r.name, sizeof r.name, "overhead_%s_%s_n%d", r.mode, fusion ? "fused" : "unfused", n);
    int64_t shape[1] = {OVERHEAD_NUMEL};
    float host[OVERHEAD_NUMEL], x0h[OVERHEAD_NUMEL], bh[OVERHEAD_NUMEL];
    overhead_arg a = {wgt_rand_uniform(ctx, WGT_F32, 1, shape, -1, 1, 11), wgt_rand_uniform(ctx, WGT_F32, 1, shape, -0.5, 0.5, 12),
                      NULL, NULL, n, host, ""};
    if (!a.x0 || !a.b || wgt_tensor_read(a.x0, x0h, sizeof x0h) != WGT_OK || wgt_tensor_read(a.b, bh, sizeof bh) != WGT_OK) {
        note_error(&r, "inputs");
        goto done;
    }
    if (graph) {
        snprintf(a.input, sizeof a.input, "x_n%d", n);
        wgt_tensor *xin = wgt_graph_input(ctx, a.input, WGT_F32, 1, shape);
        wgt_tensor *y = xin ? record_chain(xin, a.b, n) : NULL;
        wgt_binding out = {"y", y};
        a.g = y ? wgt_graph_build(ctx, 1, &out) : NULL;
        wgt_release(y);
        wgt_release(xin);
        a.out = wgt_tensor_create(ctx, WGT_F32, 1, shape, WGT_USAGE_DEFAULT);
        if (!a.g || !a.out) {
            note_error(&r, "building the graph");
            goto done;
        }
        r.graph_launches = wgt_graph_launches(a.g);
    }
    if (!measure(env, ctx, graph ? graph_iter : eager_iter, &a, &r)) {
        note_error(&r, "running");
        goto done;
    }
    r.max_err = chain_err(host, x0h, bh, OVERHEAD_NUMEL, NULL, OVERHEAD_NUMEL, n);
    r.ok = r.max_err <= 1e-4;
done:
    wgt_graph_release(a.g);
    wgt_release(a.out), wgt_release(a.x0), wgt_release(a.b);
    return r;
}

/* ---- 2. fusion ---- */

typedef struct {
    wgt_context *ctx;
    wgt_tensor *x, *t;
    int single;
} fusion_arg;

/* The 8-op chain: relu((tanh((x*0.5 + t)*1.5 - 0.25))*2 + 0.125). */
static wgt_tensor *chain8(wgt_tensor *x, wgt_tensor *t) {
    wgt_tensor *y = wgt_retain(x), *next = NULL;
    for (int i = 0; i < 8 && y; i++) {
        switch (i) {
        case 0: next = wgt_mul_scalar(y, 0.5); break;
        case 1: next = wgt_add(y, t); break;
        case 2: next = wgt_mul_scalar(y, 1.5); break;
        case 3: next = wgt_sub_scalar(y, 0.25); break;
        case 4: next = wgt_tanh(y); break;
        case 5: next = wgt_mul_scalar(y, 2.0); break;
        case 6: next = wgt_add_scalar(y, 0.125); break;
        default: next = wgt_relu(y); break;
        }
        wgt_release(y);
        y = next;
    }
    return y;
}

static double chain8_ref(double x, double t) {
    double y = tanh((x * 0.5 + t) * 1.5 - 0.25) * 2 + 0.125;
    return y > 0 ? y : 0;
}

static double fusion_iter(void *p) {
    fusion_arg *a = p;
    wgt_tensor *y = a->single ? wgt_add(a->x, a->t) : chain8(a->x, a->t);
    double t0 = now_us();
    wgt_status st = y ? wgt_eval(1, &y) : wgt_last_status();
    if (st == WGT_OK) st = wgt_context_sync(a->ctx);
    double dt = now_us() - t0;
    wgt_release(y);
    return st == WGT_OK ? dt : -1;
}

static engine_row bench_fusion(const engine_env *env, wgt_context *ctx, int fusion, int single, int64_t numel) {
    engine_row r = {.kind = "fusion", .mode = "eager", .fusion = fusion, .n_ops = single ? 1 : 8, .numel = numel, .ok = 1};
    snprintf(r.name, sizeof r.name, single ? "fusion_add1_%s" : "fusion_chain8_%s", fusion ? "fused" : "unfused");
    r.gbyte = 12.0 * (double)numel * 1e-9; /* two inputs read, one output written */
    int64_t shape[1] = {numel};
    fusion_arg a = {ctx, wgt_rand_uniform(ctx, WGT_F32, 1, shape, -1, 1, 21), wgt_rand_uniform(ctx, WGT_F32, 1, shape, -1, 1, 22),
                    single};
    wgt_tensor *y = NULL;
    if (!a.x || !a.t || wgt_eval(2, (wgt_tensor *const[]){a.x, a.t}) != WGT_OK) {
        note_error(&r, "inputs");
        goto done;
    }
    if (!measure(env, ctx, fusion_iter, &a, &r)) {
        note_error(&r, "running");
        goto done;
    }
    y = single ? wgt_add(a.x, a.t) : chain8(a.x, a.t);
    const float *px = wgt_tensor_data(a.x), *pt = wgt_tensor_data(a.t), *py = y ? wgt_tensor_data(y) : NULL;
    if (!px || !pt || !py) {
        note_error(&r, "reading the result");
        goto done;
    }
    for (int s = 0; s < 4096; s++) {
        int64_t i = ((int64_t)s * 104729 + s / 7) % numel;
        double want = single ? (double)px[i] + pt[i] : chain8_ref(px[i], pt[i]);
        double err = fabs(py[i] - want) / (fabs(want) > 1 ? fabs(want) : 1);
        if (!(err <= r.max_err)) r.max_err = err;
    }
    r.ok = r.max_err <= 1e-5;
done:
    wgt_release(y), wgt_release(a.x), wgt_release(a.t);
    return r;
}

/* ---- 3. memory ---- */

static engine_row bench_memory(wgt_context *ctx, int fusion) {
    engine_row r = {.kind = "memory", .mode = "eager", .fusion = fusion, .n_ops = MEMORY_OPS,
                    .numel = (int64_t)MEMORY_ROWS * MEMORY_COLS, .ok = 1};
    snprintf(r.name, sizeof r.name, "memory_chain%d_%s", MEMORY_OPS, fusion ? "fused" : "unfused");
    r.live_bytes = 3ull * (uint64_t)r.numel * sizeof(float);
    int64_t shape[2] = {MEMORY_ROWS, MEMORY_COLS}, row[1] = {MEMORY_COLS};
    wgt_tensor *x0 = wgt_rand_uniform(ctx, WGT_F32, 2, shape, -1, 1, 31);
    wgt_tensor *b = wgt_rand_uniform(ctx, WGT_F32, 1, row, -0.5, 0.5, 32), *y = NULL;
    if (!x0 || !b || wgt_eval(2, (wgt_tensor *const[]){x0, b}) != WGT_OK) {
        note_error(&r, "inputs");
        goto done;
    }
    /* The trim empties the pool and restarts the peak at what is in use. One run, timed as
     * information only: it may include compiling kernels the overhead workload did not. */
    wgt_stats s0, s1;
    if (wgt_context_trim(ctx) != WGT_OK || wgt_context_stats(ctx, &s0) != WGT_OK) {
        note_error(&r, "trim");
        goto done;
    }
    double t0 = now_us();
    y = record_chain(x0, b, MEMORY_OPS);
    if (!y || wgt_eval(1, &y) != WGT_OK || wgt_context_sync(ctx) != WGT_OK || wgt_context_stats(ctx, &s1) != WGT_OK) {
        note_error(&r, "running");
        goto done;
    }
    r.us_per_iter = now_us() - t0;
    r.iters = 1;
    r.launches = (double)(s1.launches - s0.launches);
    r.submits = (double)(s1.submits - s0.submits);
    r.ops_fused = (double)(s1.ops_fused - s0.ops_fused);
    r.base_bytes = s0.device_bytes_in_use;
    r.peak_bytes = s1.device_bytes_peak;
    r.ratio = (double)r.peak_bytes / (double)r.live_bytes;
    if (r.peak_bytes == 0) snprintf(r.note, sizeof r.note, "no device memory figures on this backend");
    const float *px = wgt_tensor_data(x0), *pb = wgt_tensor_data(b), *py = wgt_tensor_data(y);
    if (!px || !pb || !py) {
        note_error(&r, "reading the result");
        goto done;
    }
    int64_t idx[64];
    for (int s = 0; s < 64; s++) idx[s] = ((int64_t)s * 16411 + s * s) % r.numel;
    r.max_err = chain_err(py, px, pb, MEMORY_COLS, idx, 64, MEMORY_OPS);
    r.ok = r.max_err <= 1e-4;
done:
    wgt_release(y), wgt_release(x0), wgt_release(b);
    return r;
}

/* ---- 4. scale ---- */

/* x + 1, n times, from x0 (a graph input or a [4] tensor), each intermediate released. */
static wgt_tensor *record_plus_ones(wgt_tensor *x0, int n) {
    wgt_tensor *x = wgt_retain(x0);
    for (int i = 0; i < n && x; i++) {
        wgt_tensor *y = wgt_add_scalar(x, 1.0);
        wgt_release(x);
        x = y;
    }
    return x;
}

/* Checks the [4] result of n additions of 1 to 0, 1, 2, 3 (exact in f32 below 2^24). */
static void check_plus_ones(engine_row *r, wgt_tensor *y, int n) {
    float v[4];
    if (!y || wgt_tensor_read(y, v, sizeof v) != WGT_OK) {
        note_error(r, "reading the result");
        return;
    }
    for (int i = 0; i < 4; i++) {
        double err = fabs(v[i] - ((double)i + n));
        if (!(err <= r->max_err)) r->max_err = err;
    }
    r->ok = r->max_err == 0;
}

/* mode "build": wgt_graph_build of an n-node chain on a graph input (then dispatched once and
 * checked); "flush": recording an eager n-chain and reading its end (pending work runs in
 * batches of the pending budget); "release": wgt_context_release of a context whose n-chain
 * is pending, with the end held. One run each: us_per_iter is the timed part. */
static engine_row bench_scale(const engine_env *env, const char *mode, int n) {
    engine_row r = {.kind = "scale", .mode = mode, .fusion = 1, .n_ops = n, .numel = 4, .iters = 1, .ok = 1};
    snprintf(r.name, sizeof r.name, "scale_%s_n%d", mode, n);
    static const int64_t shape[1] = {4};
    float x0[4] = {0, 1, 2, 3};
    wgt_context *ctx = wgt_context_create(&env->opt);
    if (!ctx) {
        note_error(&r, "context");
        return r;
    }
    wgt_tensor *in = NULL, *y = NULL, *out = NULL;
    wgt_graph *g = NULL;
    double t0 = now_us();
    if (!strcmp(mode, "build")) {
        in = wgt_graph_input(ctx, "x", WGT_F32, 1, shape);
        y = record_plus_ones(in, n);
        t0 = now_us();
        g = y ? wgt_graph_build(ctx, 1, &(wgt_binding){"y", y}) : NULL;
        r.us_per_iter = now_us() - t0;
        wgt_tensor *a = wgt_tensor_from_data(ctx, WGT_F32, 1, shape, x0, sizeof x0, WGT_USAGE_DEFAULT);
        out = wgt_tensor_create(ctx, WGT_F32, 1, shape, WGT_USAGE_DEFAULT);
        if (!g || wgt_graph_dispatch(g, 1, &(wgt_binding){"x", a}, 1, &(wgt_binding){"y", out}) != WGT_OK)
            note_error(&r, "building or dispatching");
        else
            check_plus_ones(&r, out, n);
        r.graph_launches = wgt_graph_launches(g);
        wgt_release(a);
    } else {
        in = wgt_tensor_from_data(ctx, WGT_F32, 1, shape, x0, sizeof x0, WGT_USAGE_DEFAULT);
        if (!in || wgt_context_sync(ctx) != WGT_OK) note_error(&r, "input");
        t0 = now_us();
        y = record_plus_ones(in, n);
        if (!strcmp(mode, "flush")) {
            check_plus_ones(&r, y, n);
            r.us_per_iter = now_us() - t0;
        } else { /* the held end's values are checked by the tests (a released context refuses reads) */
            if (!y) note_error(&r, "recording");
            t0 = now_us();
            wgt_context_release(ctx);
            r.us_per_iter = now_us() - t0;
            ctx = NULL;
        }
    }
    wgt_graph_release(g);
    wgt_release(y), wgt_release(in), wgt_release(out);
    if (ctx) wgt_context_release(ctx);
    return r;
}

/* The names workload (see the top): timings in r, results checked. */
static void run_names(engine_row *r, wgt_context *ctx, int n, wgt_tensor **t, char (*names)[16], wgt_binding *b) {
    static const int64_t shape[1] = {1};
    wgt_tensor **x = t, **y = t + n, **in = t + 2 * n, **out = t + 3 * n;
    double t0 = now_us();
    for (int i = 0; i < n; i++) {
        snprintf(names[i], sizeof names[i], "x%d", i);
        snprintf(names[n + i], sizeof names[i], "y%d", i);
        if (!(x[i] = wgt_graph_input(ctx, names[i], WGT_F32, 1, shape))) {
            note_error(r, "wgt_graph_input");
            return;
        }
    }
    for (int i = 0; i < n; i++) {
        if (!(y[i] = wgt_add(x[i], x[(i + 1) % n]))) {
            note_error(r, "recording");
            return;
        }
        b[n + i] = (wgt_binding){names[n + i], y[i]};
    }
    double t1 = now_us();
    wgt_graph *g = wgt_graph_build(ctx, n, b + n);
    r->us_record = t1 - t0;
    r->us_build = now_us() - t1;
    if (!g) {
        note_error(r, "wgt_graph_build");
        return;
    }
    r->graph_launches = wgt_graph_launches(g);
    for (int i = 0; i < n; i++) {
        float v = (float)i;
        in[i] = wgt_tensor_from_data(ctx, WGT_F32, 1, shape, &v, sizeof v, WGT_USAGE_DEFAULT);
        out[i] = wgt_tensor_create(ctx, WGT_F32, 1, shape, WGT_USAGE_DEFAULT);
        b[i] = (wgt_binding){names[i], in[i]};
        b[n + i] = (wgt_binding){names[n + i], out[i]};
    }
    if (wgt_context_sync(ctx) != WGT_OK) note_error(r, "creating the bound tensors");
    t0 = now_us();
    wgt_status st = wgt_graph_dispatch(g, n, b, n, b + n);
    if (st == WGT_OK) st = wgt_context_sync(ctx);
    r->us_per_iter = now_us() - t0;
    wgt_graph_release(g);
    if (st != WGT_OK) {
        note_error(r, "wgt_graph_dispatch");
        return;
    }
    for (int i = 0; i < n; i++) {
        float v = -1;
        double err = wgt_tensor_read(out[i], &v, sizeof v) == WGT_OK ? fabs(v - (double)(i + (i + 1) % n)) : INFINITY;
        if (!(err <= r->max_err)) r->max_err = err;
    }
    r->ok = r->max_err == 0;
}

static engine_row bench_names(const engine_env *env, int n) {
    engine_row r = {.kind = "names", .mode = "graph", .fusion = 1, .n_ops = n, .numel = 1, .iters = 1, .ok = 1};
    snprintf(r.name, sizeof r.name, "names_graph_n%d", n);
    wgt_context *ctx = wgt_context_create(&env->opt);
    wgt_tensor **t = calloc((size_t)n * 4, sizeof *t);
    char(*names)[16] = calloc((size_t)n * 2, sizeof *names);
    wgt_binding *b = calloc((size_t)n * 2, sizeof *b);
    if (!ctx || !t || !names || !b) note_error(&r, ctx ? "out of host memory" : "context");
    else run_names(&r, ctx, n, t, names, b);
    for (int i = 0; t && i < n * 4; i++) wgt_release(t[i]);
    free(t), free(names), free(b);
    wgt_context_release(ctx);
    return r;
}

/* ---- report ---- */

static void json_string(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20) fprintf(f, "\\u%04x", (unsigned char)*s);
        else fputc(*s, f);
    }
    fputc('"', f);
}

static void write_json(FILE *f, const char *device, const char *backend, int lavapipe, int quick, const engine_row *rows,
                       int n) {
    fprintf(f, "{\"program\": \"bench-engine\", \"device\": ");
    json_string(f, device);
    fprintf(f, ", \"backend\": \"%s\", \"lavapipe\": %s, \"quick\": %d, \"rows\": [\n", backend, lavapipe ? "true" : "false",
            quick);
    for (int i = 0; i < n; i++) {
        const engine_row *r = &rows[i];
        fprintf(f, "  {\"name\": \"%s\", \"kind\": \"%s\", \"mode\": \"%s\", \"fusion\": %s, \"n_ops\": %d, "
                   "\"numel\": %lld, \"size\": \"%lld\", \"iters\": %d, \"us_per_iter\": %.3f, \"us_per_op\": %.4f, "
                   "\"ms\": %.6f, \"launches_per_iter\": %.2f, \"submits_per_iter\": %.2f, \"ops_fused_per_iter\": %.2f",
                r->name, r->kind, r->mode, r->fusion ? "true" : "false", r->n_ops, (long long)r->numel,
                (long long)r->numel, r->iters, r->us_per_iter, r->n_ops ? r->us_per_iter / r->n_ops : 0,
                r->us_per_iter * 1e-3, r->launches, r->submits, r->ops_fused);
        if (!strcmp(r->mode, "graph") || !strcmp(r->mode, "build"))
            fprintf(f, ", \"graph_launches\": %d", r->graph_launches);
        if (!strcmp(r->kind, "names"))
            fprintf(f, ", \"us_record\": %.3f, \"us_build\": %.3f, \"us_per_input\": %.4f", r->us_record, r->us_build,
                    (r->us_record + r->us_build + r->us_per_iter) / r->n_ops);
        if (!strcmp(r->kind, "fusion")) fprintf(f, ", \"gbyte\": %.6f, \"ratio_vs_add\": %.4f", r->gbyte, r->ratio);
        if (!strcmp(r->kind, "memory"))
            fprintf(f, ", \"peak_bytes\": %llu, \"live_bytes\": %llu, \"base_bytes\": %llu, \"peak_over_live\": %.4f",
                    (unsigned long long)r->peak_bytes, (unsigned long long)r->live_bytes,
                    (unsigned long long)r->base_bytes, r->ratio);
        fprintf(f, ", \"max_rel_err\": %.3g, \"ok\": %s, \"note\": ", r->max_err, r->ok ? "true" : "false");
        json_string(f, r->note);
        fprintf(f, "}%s\n", i + 1 < n ? "," : "");
    }
    fprintf(f, "]}\n");
}

static void print_header(const char *kind, int64_t fusion_numel) {
    if (!strcmp(kind, "overhead"))
        printf("\n== overhead: chain of N ops on [%d] f32 (x*0.999, x+b, tanh, x+0.001), record or dispatch + read per "
               "iteration\n%-6s %-8s %5s %10s %11s %9s %8s %6s %6s",
               OVERHEAD_NUMEL, "mode", "fusion", "N", "us/op", "us/iter", "launches", "submits", "fused", "iters");
    else if (!strcmp(kind, "fusion"))
        printf("\n== fusion: 8-op chain vs one add over %lld f32, wall clock around wgt_eval + sync\n"
               "%-22s %10s %9s %9s %8s %9s",
               (long long)fusion_numel, "workload", "ms", "GB/s", "launches", "submits", "vs add");
    else if (!strcmp(kind, "names"))
        printf("\n== names: N graph inputs x<i> of [1] f32 and N outputs y<i> = x<i> + x<i+1>; record: the inputs and\n"
               "   ops, build: wgt_graph_build, dispatch: one wgt_graph_dispatch of 2N bindings + sync; one run\n"
               "%-8s %10s %10s %11s %11s %9s",
               "N", "record ms", "build ms", "dispatch ms", "us/input", "launches");
    else if (!strcmp(kind, "scale"))
        printf("\n== scale: chains of N x+1 on [4] f32; build: wgt_graph_build alone; flush: record + read the end;\n"
               "   release: wgt_context_release with the chain recorded and its end held\n%-8s %8s %11s %11s %9s",
               "mode", "N", "ms", "us/node", "launches");
    else
        printf("\n== memory: %d-op chain on [%d, %d] f32, intermediates released at once; peak after a trim\n"
               "%-24s %8s %8s %8s %9s %8s %9s",
               MEMORY_OPS, MEMORY_ROWS, MEMORY_COLS, "workload", "base MB", "peak MB", "live MB", "peak/live", "launches",
               "ms");
    printf(" %9s %s\n", "max err", "check");
}

static void print_row(const engine_row *r) {
    if (!strcmp(r->kind, "overhead"))
        printf("%-6s %-8s %5d %10.3f %11.1f %9.1f %8.1f %6.0f %6d", r->mode, r->fusion ? "on" : "off", r->n_ops,
               r->us_per_iter / r->n_ops, r->us_per_iter, r->launches, r->submits, r->ops_fused, r->iters);
    else if (!strcmp(r->kind, "fusion"))
        printf("%-22s %10.3f %9.1f %9.1f %8.1f %9.2f", r->name, r->us_per_iter * 1e-3,
               r->us_per_iter > 0 ? r->gbyte / (r->us_per_iter * 1e-6) : 0, r->launches, r->submits, r->ratio);
    else if (!strcmp(r->kind, "names"))
        printf("%-8d %10.1f %10.1f %11.1f %11.3f %9d", r->n_ops, r->us_record * 1e-3, r->us_build * 1e-3,
               r->us_per_iter * 1e-3, (r->us_record + r->us_build + r->us_per_iter) / r->n_ops, r->graph_launches);
    else if (!strcmp(r->kind, "scale"))
        printf("%-8s %8d %11.1f %11.3f %9d", r->mode, r->n_ops, r->us_per_iter * 1e-3, r->us_per_iter / r->n_ops,
               r->graph_launches);
    else
        printf("%-24s %8.2f %8.2f %8.2f %9.2f %8.0f %9.1f", r->name, r->base_bytes / 1048576.0, r->peak_bytes / 1048576.0,
               r->live_bytes / 1048576.0, r->ratio, r->launches, r->us_per_iter * 1e-3);
    printf(" %9.2g %s %s\n", r->max_err, r->ok ? "ok" : "FAIL", r->note);
}

/* One table per kind, in the order overhead, fusion, memory, scale, names. */
static void print_tables(const engine_row *rows, int n, int64_t fusion_numel) {
    static const char *const kinds[] = {"overhead", "fusion", "memory", "scale", "names"};
    for (int k = 0; k < 5; k++) {
        int header = 0;
        for (int i = 0; i < n; i++)
            if (!strcmp(rows[i].kind, kinds[k])) {
                if (!header++) print_header(kinds[k], fusion_numel);
                print_row(&rows[i]);
            }
    }
}

static int wanted(const engine_env *env, const char *name) { return !env->filter || strstr(name, env->filter); }

int wgt_bench_engine_main(int argc, char **argv) {
    const char *json = NULL;
    engine_env env = {.budget_us = 0, .min_iters = 5};
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--json") && i + 1 < argc) json = argv[++i];
        else if (!strcmp(argv[i], "--filter") && i + 1 < argc) env.filter = argv[++i];
        else if (!strcmp(argv[i], "--device") && i + 1 < argc) {
            const char *d = argv[++i];
            env.opt.backend = !strcmp(d, "cpu") ? WGT_BACKEND_CPU : !strcmp(d, "webgpu") ? WGT_BACKEND_WEBGPU : WGT_BACKEND_AUTO;
        } else if (!strcmp(argv[i], "--quick")) env.quick = 1;
        else if (!strcmp(argv[i], "--numel") && i + 1 < argc) env.fusion_numel = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--budget-ms") && i + 1 < argc) env.budget_us = atof(argv[++i]) * 1e3;
        else {
            fprintf(stderr, "usage: wgtensor bench-engine [--json FILE] [--filter overhead|fusion|memory|scale|names|NAME]\n"
                            "                             [--device auto|webgpu|cpu] [--quick] [--numel N] [--budget-ms MS]\n"
                            "  --numel: elements of the fusion workload (default 64M; 4M on lavapipe, CPU or --quick)\n"
                            "  --budget-ms: time spent per timed configuration after warm-up (default 300, --quick 100)\n");
            return 2;
        }
    }
    if (env.budget_us <= 0) env.budget_us = env.quick ? 100e3 : 300e3;
    if (env.quick) env.min_iters = 3;

    static engine_row rows[80];
    int n = 0;
    char device[256] = "";
    const char *backend = "cpu";
    int lavapipe = 0;
    static const int chain_lengths[] = {1, 10, 100, 1000};
    for (int fusion = 1; fusion >= 0; fusion--) {
        wgt_context_options opt = env.opt;
        opt.no_fusion = !fusion;
        wgt_context *ctx = wgt_context_create(&opt);
        if (!ctx) {
            fprintf(stderr, "wgtensor bench-engine: %s\n", wgt_last_error());
            return 1;
        }
        if (!device[0]) {
            snprintf(device, sizeof device, "%s", wgt_context_device_name(ctx));
            backend = wgt_context_backend(ctx) == WGT_BACKEND_WEBGPU ? "webgpu" : "cpu";
            lavapipe = strstr(device, "llvmpipe") || strstr(device, "lavapipe");
            if (!env.fusion_numel) env.fusion_numel = env.quick || lavapipe || !strcmp(backend, "cpu") ? 1 << 22 : 1 << 26;
            printf("device: %s (backend %s)%s\n", device, backend,
                   lavapipe ? "; lavapipe is Mesa's CPU Vulkan driver: these are not GPU figures" : "");
            const char *env_fusion = getenv("WGT_FUSION");
            if (env_fusion && !strcmp(env_fusion, "0")) printf("WGT_FUSION=0 is set: the fused rows run unfused too\n");
        }
        for (int graph = 0; graph <= 1; graph++)
            for (size_t k = 0; k < sizeof chain_lengths / sizeof *chain_lengths; k++) {
                char name[48];
                snprintf(name, sizeof name, "overhead_%s_%s_n%d", graph ? "graph" : "eager", fusion ? "fused" : "unfused",
                         chain_lengths[k]);
                if (!wanted(&env, name)) continue;
                rows[n++] = bench_overhead(&env, ctx, fusion, graph, chain_lengths[k]);
                fprintf(stderr, "  %s done\n", name);
            }
        for (int single = 1; single >= 0; single--) {
            if (single && !fusion) continue; /* one add has nothing to fuse */
            const char *name = single ? "fusion_add1_fused" : fusion ? "fusion_chain8_fused" : "fusion_chain8_unfused";
            if (!wanted(&env, name)) continue;
            rows[n++] = bench_fusion(&env, ctx, fusion, single, env.fusion_numel);
            fprintf(stderr, "  %s done\n", name);
        }
        if (wanted(&env, fusion ? "memory_chain1000_fused" : "memory_chain1000_unfused")) {
            rows[n++] = bench_memory(ctx, fusion);
            fprintf(stderr, "  %s done\n", rows[n - 1].name);
        }
        wgt_context_release(ctx);
    }
    /* Scale rows: each in a fresh context of its own. */
    static const int scale_sizes[] = {10000, 100000, 1000000};
    static const char *const scale_modes[] = {"build", "flush", "release"};
    for (int m = 0; m < 3; m++)
        for (size_t k = 0; k < sizeof scale_sizes / sizeof *scale_sizes; k++) {
            char name[48];
            snprintf(name, sizeof name, "scale_%s_n%d", scale_modes[m], scale_sizes[k]);
            if ((env.quick && scale_sizes[k] > 100000) || !wanted(&env, name)) continue;
            rows[n++] = bench_scale(&env, scale_modes[m], scale_sizes[k]);
            fprintf(stderr, "  %s done\n", name);
        }
    static const int name_counts[] = {10000, 50000};
    for (size_t k = 0; k < sizeof name_counts / sizeof *name_counts; k++) {
        char name[48];
        snprintf(name, sizeof name, "names_graph_n%d", name_counts[k]);
        if (!wanted(&env, name)) continue;
        rows[n++] = bench_names(&env, name_counts[k]);
        fprintf(stderr, "  %s done\n", name);
    }
    /* Each fusion row against the add of the same run. */
    double add_us = 0;
    for (int i = 0; i < n; i++)
        if (!strcmp(rows[i].name, "fusion_add1_fused") && rows[i].ok) add_us = rows[i].us_per_iter;
    for (int i = 0; i < n; i++)
        if (!strcmp(rows[i].kind, "fusion") && add_us > 0) rows[i].ratio = rows[i].us_per_iter / add_us;

    print_tables(rows, n, env.fusion_numel);
    if (json) {
        FILE *f = fopen(json, "w");
        if (!f) {
            fprintf(stderr, "wgtensor bench-engine: cannot write %s\n", json);
            return 1;
        }
        write_json(f, device, backend, lavapipe, env.quick, rows, n);
        fclose(f);
    }
    int all_ok = 1;
    for (int i = 0; i < n; i++) all_ok &= rows[i].ok;
    return all_ok ? 0 : 1;
}
