/*
 * The engine at scale: long chains of recorded ops are built, run and released without
 * recursion (on a thread with a 256 KiB stack), a graph of a million nodes builds, dispatches
 * and gives exact values, and eager work nobody reads stays within the pending budget.
 *
 * The chain length is WGT_TEST_CHAIN_OPS (default 1,000,000 on the CPU backend, 250,000 on
 * WebGPU, where dispatching runs the fused kernels on lavapipe). A chain of ten million runs
 * once, on the CPU backend, in the unpoisoned pass of an unsanitized build where the machine
 * has the memory (about 12 GB: a recorded op takes ~1.1 KiB; about 45 s). A recursive release
 * needs ~100 bytes of stack per op, so even the default overflows the small stack a thousand
 * times over.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/handles.h"
#include "core/tensor.h"
#include "test.h"

#define SMALL_STACK (256 * 1024)

/* Runs fn(arg) on a new thread with a 256 KiB stack; 0 when the thread could not start. */
static int on_small_stack(void *(*fn)(void *), void *arg) {
    pthread_attr_t attr;
    pthread_t th;
    if (pthread_attr_init(&attr) != 0) return 0;
    int ok = pthread_attr_setstacksize(&attr, SMALL_STACK) == 0 && pthread_create(&th, &attr, fn, arg) == 0;
    pthread_attr_destroy(&attr);
    if (ok) pthread_join(th, NULL);
    return ok;
}

static long chain_ops(wgt_context *ctx) {
    const char *v = getenv("WGT_TEST_CHAIN_OPS");
    if (v && *v) {
        char *end;
        long n = strtol(v, &end, 10);
        if (!*end && n > 0 && n <= 100000000) return n;
        fprintf(stderr, "WGT_TEST_CHAIN_OPS=%s is not a count from 1 to 100000000; using the default\n", v);
    }
    return wgt_context_backend(ctx) == WGT_BACKEND_CPU ? 1000000 : 250000;
}

typedef struct chain_job {
    wgt_context *ctx;
    long n;
    const char *failed; /* what went wrong, or NULL */
    char message[512];
    float got[4];
    wgt_tensor *in, *x; /* the graph input and the chain's end */
    wgt_graph *graph;
} chain_job;

static void *fail_job(chain_job *j, const char *what) {
    j->failed = what;
    snprintf(j->message, sizeof j->message, "%s", wgt_last_error());
    return NULL;
}

/* On the small stack: x + 1, n times, on a graph input of [4] f32, and the graph built. The
 * one is one tensor for every op, so a recorded op holds its node and its output alone. */
static void *record_and_build_chain(void *arg) {
    chain_job *j = arg;
    static const int64_t shape[1] = {4};
    j->in = wgt_graph_input(j->ctx, "x", WGT_F32, 1, shape);
    wgt_tensor *x = wgt_retain(j->in), *one = wgt_scalar(j->ctx, WGT_F32, 1.0);
    for (long i = 0; i < j->n && x; i++) {
        wgt_tensor *y = wgt_add(x, one);
        wgt_release(x);
        x = y;
    }
    wgt_release(one);
    j->x = x;
    if (!x) return fail_job(j, "recording the chain");
    j->graph = wgt_graph_build(j->ctx, 1, &(wgt_binding){"y", x});
    return j->graph ? NULL : fail_job(j, "wgt_graph_build");
}

/* On the caller's stack: one dispatch. The driver compiles the graph's kernels on the calling
 * thread, and its shader compiler needs more than 256 KiB of stack under ThreadSanitizer: the
 * small stack is for the library's own walks, not the driver's. */
static void dispatch_chain(chain_job *j) {
    static const int64_t shape[1] = {4};
    float v[4] = {0, 1, 2, 3};
    wgt_tensor *a = wgt_tensor_from_data(j->ctx, WGT_F32, 1, shape, v, sizeof v, WGT_USAGE_DEFAULT);
    wgt_tensor *out = wgt_tensor_create(j->ctx, WGT_F32, 1, shape, WGT_USAGE_DEFAULT);
    wgt_status st = wgt_graph_dispatch(j->graph, 1, &(wgt_binding){"x", a}, 1, &(wgt_binding){"y", out});
    if (st == WGT_OK) st = wgt_tensor_read(out, j->got, sizeof j->got);
    if (st != WGT_OK) fail_job(j, "dispatching the graph");
    wgt_release(a), wgt_release(out);
}

/* On the small stack: the graph goes first, so the last tensor's release frees the whole
 * chain in one go. */
static void *release_chain(void *arg) {
    chain_job *j = arg;
    wgt_graph_release(j->graph);
    wgt_release(j->in), wgt_release(j->x);
    return NULL;
}

/* Records, builds, dispatches and releases a chain of j->n ops; the failure is in j. */
static void run_chain(chain_job *j) {
    CHECK(on_small_stack(record_and_build_chain, j), "no thread with a %d KiB stack", SMALL_STACK / 1024);
    if (!j->failed) dispatch_chain(j);
    CHECK(on_small_stack(release_chain, j), "no thread with a %d KiB stack", SMALL_STACK / 1024);
    CHECK(!j->failed, "%ld ops: %s: %s", j->n, j->failed, j->message);
    for (int i = 0; i < 4 && !j->failed; i++) /* i + n is exact in f32 up to 2^24 */
        CHECK(j->got[i] == (float)((double)i + (double)j->n), "element %d: %g, wanted %ld", i, j->got[i], i + j->n);
}

/* n eager x + 1 on [16], each result released; the end is released without being read. */
static void *eager_chain(void *arg) {
    chain_job *j = arg;
    wgt_tensor *x = wgt_arange(j->ctx, WGT_F32, 0, 16, 1);
    for (long i = 0; i < j->n && x; i++) {
        wgt_tensor *y = wgt_add_scalar(x, 1.0);
        wgt_release(x);
        x = y;
    }
    if (!x) return fail_job(j, "recording the eager chain");
    wgt_release(x);
    return wgt_context_sync(j->ctx) == WGT_OK ? NULL : fail_job(j, "wgt_context_sync");
}

TEST_BACKENDS(scale_a_graph_chain_of_a_million_ops_runs_and_releases_on_a_small_stack) {
    chain_job j = {.ctx = ctx, .n = chain_ops(ctx)};
    run_chain(&j);
}

/* Bytes of memory the kernel says are available (MemAvailable), or 0. */
static long long memory_available(void) {
    FILE *f = fopen("/proc/meminfo", "r");
    long long kib = 0;
    char line[256];
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %lld kB", &kib) == 1) break;
    if (f) fclose(f);
    return kib * 1024;
}

TEST(scale_a_graph_chain_of_ten_million_ops_on_the_cpu) {
    const char *poison = getenv("WGT_POISON");
    long long avail = memory_available();
    if (SANITIZED) {
        test_skip("a sanitizer's heap would need several times the 12 GB this chain takes");
        return;
    }
    if (poison && !strcmp(poison, "1")) {
        test_skip("runs once, in the unpoisoned pass (its kernels are a million-op test's)");
        return;
    }
    if (avail < (14ll << 30)) {
        test_skip("%.1f GiB of memory available; ten million recorded ops need about 12", avail / 1073741824.0);
        return;
    }
    wgt_context *cpu = test_new_context(WGT_BACKEND_CPU);
    if (!cpu) return;
    chain_job j = {.ctx = cpu, .n = 10000000};
    run_chain(&j);
    wgt_context_release(cpu);
}

TEST_BACKENDS(scale_an_eager_chain_released_unread_on_a_small_stack) {
    chain_job j = {.ctx = ctx, .n = 100000};
    /* The same chain once on the caller's stack first: the driver compiles its kernels on the
     * thread that first runs them, with more stack than 256 KiB under ThreadSanitizer. The
     * small stack is for the library's own walks. */
    if (wgt_context_backend(ctx) == WGT_BACKEND_WEBGPU) eager_chain(&j);
    CHECK(!j.failed, "%s: %s", j.failed, j.message);
    CHECK(on_small_stack(eager_chain, &j), "no thread with a %d KiB stack", SMALL_STACK / 1024);
    CHECK(!j.failed, "%s: %s", j.failed, j.message);
}

/* 100,000 ops recorded and never read: without a bound on pending work each holds its node
 * and storage (~1.4 KiB, 140 MB in all); the budget runs them in batches of at most a few
 * thousand, so the heap grows by a few MB at most. */
TEST_BACKENDS(scale_pending_eager_work_is_bounded) {
    if (SANITIZED) {
        test_skip("the sanitizer's allocator makes heap figures mean something else");
        return;
    }
    wgt_tensor *x = wgt_arange(ctx, WGT_F32, 0, 16, 1), *keep[8] = {0};
    CHECK(wgt_context_sync(ctx) == WGT_OK, "%s", wgt_last_error());
    long long before = test_heap_in_use(), most = 0;
    const int n = 100000;
    for (int i = 0; i < n && x; i++) {
        wgt_tensor *y = i % 2 ? wgt_mul_scalar(x, 1.0) : wgt_add_scalar(x, 1.0);
        if (i % (n / 8) == 0) keep[i / (n / 8)] = wgt_retain(x); /* some are held, as a caller's would be */
        wgt_release(x);
        x = y;
        long long grown = i % 256 ? 0 : test_heap_in_use() - before; /* mallinfo2 walks the heap: not every op */
        if (grown > most) most = grown;
    }
    CHECK(x != NULL, "%s", wgt_last_error());
    CHECK(most < (32ll << 20), "pending work grew the heap by %.1f MiB over %d unread ops", most / 1048576.0, n);
    float v[16];
    CHECK(x && wgt_tensor_read(x, v, sizeof v) == WGT_OK && v[15] == 15.0f + n / 2, "%s: %g", wgt_last_error(), v[15]);
    for (int k = 0; k < 8; k++) {
        CHECK(keep[k] && wgt_tensor_read(keep[k], v, sizeof v) == WGT_OK && v[3] == 3.0f + (float)((k * (n / 8) + 1) / 2),
              "held tensor %d: %s: %g", k, wgt_last_error(), v[3]);
        wgt_release(keep[k]);
    }
    wgt_release(x);
}

/* Recorded outputs past the byte budget (256 MiB) run without a read: 80 ops of 4 MiB each,
 * none read, must have run by the last one. */
TEST_BACKENDS(scale_pending_outputs_past_the_byte_budget_run) {
    static const int64_t n[1] = {1 << 20};
    wgt_tensor *x = wgt_full(ctx, WGT_F32, 1, n, 1.0);
    CHECK(wgt_context_sync(ctx) == WGT_OK, "%s", wgt_last_error());
    wgt_stats before, after;
    wgt_context_stats(ctx, &before);
    for (int i = 0; i < 80 && x; i++) {
        wgt_tensor *y = wgt_add_scalar(x, 1.0);
        wgt_release(x);
        x = y;
    }
    wgt_context_stats(ctx, &after);
    CHECK(after.ops_run > before.ops_run, "320 MiB of pending outputs and nothing ran");
    float v[1];
    wgt_tensor *head = wgt_slice(x, 0, 0, 1, 1);
    CHECK(head && wgt_tensor_read(head, v, sizeof v) == WGT_OK && v[0] == 81.0f, "%s: %g", wgt_last_error(), v[0]);
    wgt_release(head), wgt_release(x);
}

/* The value a storage holds, read below the public API: a released context's tensors refuse
 * every call, and what is checked is what they hold. */
/* A context released with a long chain pending: the release drops the work (no tensor of a
 * released context can be read, so nothing is run for them), the tensors held fail clearly,
 * and nothing is left pending. bench-engine's scale rows time it. */
TEST_BACKENDS(scale_a_released_context_drops_what_is_pending) {
    wgt_context *own = test_new_context(wgt_context_backend(ctx));
    if (!own) return;
    wgt_tensor *x = wgt_arange(own, WGT_F32, 0, 4, 1), *mid = NULL;
    const int n = 100000;
    for (int i = 0; i < n && x; i++) {
        wgt_tensor *y = wgt_add_scalar(x, 1.0);
        if (i == n - 1000) mid = wgt_retain(x);
        wgt_release(x);
        x = y;
    }
    wgt_context *held = x ? wgt_handle_record(x)->storage->ctx : NULL;
    CHECK(held && held->pending_head, "the end of the chain should still be pending");
    wgt_stats before = {0};
    CHECK(wgt_context_stats(own, &before) == WGT_OK, "%s", wgt_last_error());
    wgt_context_release(own);
    CHECK(held && !held->pending_head, "work is still pending after the release");
    CHECK(held && held->counters.ops_run == before.ops_run, "the release ran %llu ops nobody could read",
          (unsigned long long)(held->counters.ops_run - before.ops_run));
    float v[4];
    CHECK_ERROR(wgt_tensor_read(x, v, sizeof v) != WGT_OK, WGT_ERR_INVALID_ARGUMENT, "released");
    CHECK_ERROR(wgt_tensor_read(mid, v, sizeof v) != WGT_OK, WGT_ERR_INVALID_ARGUMENT, "released");
    wgt_release(mid), wgt_release(x);
}

/* Memory mappings of this process, or -1 where /proc cannot say. */
static long mappings(void) {
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f) return -1;
    long lines = 0;
    for (int c; (c = fgetc(f)) != EOF;) lines += c == '\n';
    fclose(f);
    return lines;
}

/* A graph of 400,000 unfused steps, each its own dispatch binding a constant of its own (so
 * each needs a bind group of its own), run in one wgt_graph_dispatch. Recording never waits,
 * and the driver keeps each batch's descriptor sets until it has seen the batch finish:
 * unbounded, lavapipe took one memory mapping per set and crashed past the process's mapping
 * limit (65530) at 200,000 steps. The work in flight is bounded now, so the run gives exact
 * values and the mappings it leaves (lavapipe keeps its descriptor pools at their high-water
 * mark) stay a small fraction of the limit. */
TEST_BACKENDS(scale_an_unfused_graph_of_400k_dispatches_runs_with_bounded_driver_state) {
    wgt_context_options o = {0};
    o.backend = wgt_context_backend(ctx);
    o.no_fusion = 1;
    o.quiet = 1;
    wgt_context *own = wgt_context_create(&o);
    if (!own) {
        CHECK(o.backend == WGT_BACKEND_WEBGPU, "%s", wgt_last_error());
        test_skip_no_webgpu();
        wgt_clear_error();
        return;
    }
    long before = mappings();
    static const int64_t shape[1] = {4};
    chain_job j = {.ctx = own, .n = 400000};
    j.in = wgt_graph_input(own, "x", WGT_F32, 1, shape);
    j.x = wgt_retain(j.in);
    for (long i = 0; i < j.n && j.x; i++) { /* wgt_add_scalar: a constant of its own per step */
        wgt_tensor *y = wgt_add_scalar(j.x, 1.0);
        wgt_release(j.x);
        j.x = y;
    }
    if (!j.x) fail_job(&j, "recording the chain");
    else if (!(j.graph = wgt_graph_build(own, 1, &(wgt_binding){"y", j.x}))) fail_job(&j, "wgt_graph_build");
    if (!j.failed) dispatch_chain(&j);
    long grown = mappings() - before;
    release_chain(&j);
    CHECK(!j.failed, "%ld ops: %s: %s", j.n, j.failed, j.message);
    for (int i = 0; i < 4 && !j.failed; i++)
        CHECK(j.got[i] == (float)((double)i + (double)j.n), "element %d: %g, wanted %ld", i, j.got[i], i + j.n);
    wgt_stats s;
    CHECK(wgt_context_stats(own, &s) == WGT_OK && s.launches >= (uint64_t)j.n, "%llu launches for %ld unfused steps",
          (unsigned long long)s.launches, j.n);
    CHECK(before < 0 || grown < 20000, "the run left %ld more memory mappings", grown);
    wgt_context_release(own);
}
