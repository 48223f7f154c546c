/*
 * Timeouts. A wait the device cannot finish within the context's wait_timeout_ms gives
 * WGT_ERR_TIMEOUT within that time (a 1 ms timeout against large matmuls on lavapipe). The
 * work goes on: while it runs, calls that need the device wait up to the timeout for it and
 * fail with WGT_ERR_TIMEOUT; once it has finished the same context works again, and the
 * results the late work computed are right. Host copies already read stay readable
 * throughout. Releasing a context whose late work is still running returns at once (the
 * device goes back on a thread of its own, which ends when the work does), and is safe even
 * when a read timed out with its buffer mapping still pending (that once left Dawn a pointer
 * into a dead stack frame, written when the instance was released).
 */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/webgpu/webgpu_internal.h"
#include "core/handles.h"
#include "core/tensor.h"
#include "test.h"

static double seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int webgpu_present(void) {
    wgt_context *probe = test_webgpu_context();
    int present = probe != NULL;
    wgt_context_release(probe);
    wgt_clear_error();
    return present;
}

static wgt_context *webgpu_with_timeout(uint32_t ms) {
    wgt_context_options opt = {0};
    opt.backend = WGT_BACKEND_WEBGPU;
    opt.quiet = 1;
    opt.wait_timeout_ms = ms;
    return wgt_context_create(&opt);
}

/* A WebGPU context whose waits are bounded at 1 ms. Creating the device may itself pass 1 ms
 * somewhere: then that is the timeout, and the test is skipped (NULL). */
static wgt_context *one_ms_context(void) {
    wgt_context *tc = webgpu_with_timeout(1);
    if (!tc) {
        CHECK(wgt_last_status() == WGT_ERR_TIMEOUT, "a 1 ms context: %s", wgt_last_error());
        test_skip("creating a device passed the 1 ms bound: %s", wgt_last_error());
        wgt_clear_error();
    }
    return tc;
}

/* Calls wgt_context_status until the late work is over (each call waits up to the context's
 * timeout for it); 0 when it is not over within limit_s. */
static int recovers(wgt_context *ctx, double limit_s) {
    for (double t0 = seconds(); seconds() - t0 < limit_s;) {
        wgt_status st = wgt_context_status(ctx);
        if (st == WGT_OK) return 1;
        if (st != WGT_ERR_TIMEOUT || !test_contains(wgt_last_error(), "still running work")) return 0;
        nanosleep(&(struct timespec){0, 5000000}, NULL);
    }
    return 0;
}

/* Records k products [1024, 1024] @ [1024, 1024] (2 GFLOP each: ~0.4 s on lavapipe here),
 * held: work whose results nobody holds is never run. */
static void record_matmuls(wgt_tensor *a, int k, wgt_tensor **held) {
    for (int i = 0; i < k; i++) held[i] = wgt_matmul(a, a);
}

/* A wait that passes a 1 ms bound returns within a few ms of it, whether it is a sync or a
 * read of recorded work whose kernels are compiled (compiling a kernel the context has not
 * used before happens before any wait and is not bounded: docs/errors.md). */
TEST(timeout_is_reported_within_the_deadline) {
    if (!webgpu_present()) return; /* skipped by test_webgpu_context */
    wgt_context *tc = one_ms_context();
    if (!tc) return;
    static const int64_t s[2] = {1024, 1024};
    wgt_tensor *a = wgt_rand_uniform(tc, WGT_F32, 2, s, -1, 1, 7);
    /* More work each time until the device cannot finish it in 1 ms: one matmul is plenty on
     * lavapipe; a fast GPU gets up to 256. */
    wgt_status st = WGT_OK;
    double took = 0;
    wgt_tensor *held[256] = {0};
    int k = 1;
    for (; k <= 256; k *= 4) {
        record_matmuls(a, k, held);
        wgt_eval(k, held); /* encoding and submitting are not part of the wait being timed */
        double t0 = seconds();
        st = wgt_context_sync(tc);
        took = seconds() - t0;
        for (int i = 0; i < k; i++) wgt_release(held[i]), held[i] = NULL;
        if (st != WGT_OK) break;
    }
    CHECK(st == WGT_ERR_TIMEOUT, "no wait passed 1 ms: %s: %s", wgt_status_name(st), wgt_last_error());
    CHECK(test_contains(wgt_last_error(), "took longer than 1 ms") && test_contains(wgt_last_error(), "works again"),
          "%s", wgt_last_error());
    /* Within the deadline: 1 ms of waiting, plus the submit and scheduling noise. */
    CHECK(took < 0.1, "the 1 ms sync returned after %.1f ms", took * 1e3);
    /* A read of a row of submitted products, their kernel compiled by now: the wait is all it
     * adds (a read of work still recorded first runs it: encoding, new buffers, compiles). */
    CHECK(recovers(tc, 300), "the context did not recover: %s", wgt_last_error());
    if (k > 256) k = 256;
    record_matmuls(a, k, held);
    wgt_eval(k, held);
    wgt_tensor *row = wgt_slice(held[k - 1], 0, 0, 1, 1);
    float out[1024];
    double t0 = seconds();
    st = wgt_tensor_read(row, out, sizeof out);
    double read_took = seconds() - t0;
    fprintf(stderr, "  1 ms bound: the sync returned after %.1f ms, the read of a row of %d products after %.1f ms\n",
            took * 1e3, k, read_took * 1e3);
    /* The read's own wait, or the wait for room among the batches in flight that its copy's
     * batch may need first (seen on an H200): either is the 1 ms bound at work. */
    CHECK(st == WGT_ERR_TIMEOUT && (test_contains(wgt_last_error(), "a read from the device") ||
                                    test_contains(wgt_last_error(), "submitted work")),
          "%s: %s", wgt_status_name(st), wgt_last_error());
    CHECK(read_took < 0.1, "the 1 ms read returned after %.1f ms", read_took * 1e3);
    wgt_release(row);
    for (int i = 0; i < k; i++) wgt_release(held[i]);
    wgt_release(a);
    wgt_clear_error();
    wgt_context_release(tc);
    CHECK(wgt_last_status() == WGT_OK, "the release recorded an error: %s", wgt_last_error());
}

/* After a timeout the same context works again once the late work is over, and what the late
 * work computed is right. The bound (200 ms) is long enough for small work on lavapipe and far
 * too short for 8 products. The reference product runs a kernel new to the context, which
 * lavapipe compiles when it first runs (seconds): that first run is not held to the bound. */
TEST(timed_out_context_recovers_once_the_late_work_is_done) {
    if (!webgpu_present()) return; /* skipped by test_webgpu_context */
    wgt_context *tc = webgpu_with_timeout(200);
    CHECK(tc, "%s", wgt_last_error());
    if (!tc) return;
    static const int64_t s[2] = {1024, 1024};
    float host[4] = {1, 2, 3, 4}, back[4] = {0};
    wgt_tensor *a = wgt_rand_uniform(tc, WGT_F32, 2, s, -1, 1, 7);
    wgt_tensor *small = wgt_tensor_from_data(tc, WGT_F32, 1, (const int64_t[]){4}, host, sizeof host, WGT_USAGE_DEFAULT);
    /* The reference comes from a context with the default bound: on a slow host (a sanitizer's)
     * the product itself may take longer than 200 ms, and its timeout is not what is tested. The
     * same seed gives the same operand, and the same kernel the same bits. */
    wgt_context *rc = webgpu_with_timeout(0);
    wgt_tensor *ra = rc ? wgt_rand_uniform(rc, WGT_F32, 2, s, -1, 1, 7) : NULL;
    wgt_tensor *reference = wgt_matmul(ra, ra);
    float *want = malloc(sizeof(float) * 1024 * 1024), *got = malloc(sizeof(float) * 1024 * 1024);
    CHECK(want && got && reference && wgt_tensor_read(reference, want, sizeof(float) * 1024 * 1024) == WGT_OK, "%s",
          wgt_last_error());
    wgt_release(ra), wgt_release(reference);
    wgt_context_release(rc);
    /* This context's own first product, so the late ones run a kernel it has compiled; on a
     * slow host it may itself pass the bound, so it is waited out like the late work. */
    wgt_tensor *first = wgt_matmul(a, a);
    wgt_eval(1, &first);
    CHECK(recovers(tc, 300), "the first product did not finish: %s", wgt_last_error());
    wgt_release(first);
    wgt_clear_error();
    wgt_tensor *held[8];
    record_matmuls(a, 8, held);
    wgt_eval(8, held);
    wgt_status st = wgt_context_sync(tc);
    if (st == WGT_OK) {
        test_skip("the device ran 8 products of 1024^3 within 200 ms: no timeout to recover from");
    } else {
        CHECK(st == WGT_ERR_TIMEOUT && test_contains(wgt_last_error(), "took longer than 200 ms"), "%s: %s",
              wgt_status_name(st), wgt_last_error());
        /* While the late work runs, calls that need the device wait up to 200 ms for it and say
         * why they fail; the host copy stays readable throughout. */
        st = wgt_context_status(tc);
        CHECK(st == WGT_OK || (st == WGT_ERR_TIMEOUT && test_contains(wgt_last_error(), "still running work")),
              "%s: %s", wgt_status_name(st), wgt_last_error());
        wgt_clear_error();
        CHECK(wgt_tensor_read(small, back, sizeof back) == WGT_OK && back[3] == 4, "host copy: %s", wgt_last_error());
        double t0 = seconds();
        CHECK(recovers(tc, 300), "the context did not recover: %s", wgt_last_error());
        fprintf(stderr, "  recovered %.1f s after the timeout\n", seconds() - t0);
        /* The same context computes again ... */
        wgt_tensor *doubled = wgt_add(small, small);
        CHECK(doubled && wgt_tensor_read(doubled, back, sizeof back) == WGT_OK && back[0] == 2 && back[3] == 8,
              "after recovering: %s", wgt_last_error());
        wgt_release(doubled);
        /* ... and each product the late work computed is the one computed before (the same
         * kernel on the same operands: bit for bit). */
        for (int i = 0; i < 8 && want && got; i += 7)
            CHECK(wgt_tensor_read(held[i], got, sizeof(float) * 1024 * 1024) == WGT_OK &&
                      !memcmp(got, want, sizeof(float) * 1024 * 1024),
                  "late product %d: %s", i, wgt_last_error());
    }
    for (int i = 0; i < 8; i++) wgt_release(held[i]);
    free(want), free(got);
    wgt_release(a), wgt_release(small);
    wgt_clear_error();
    wgt_context_release(tc);
    CHECK(wgt_last_status() == WGT_OK, "the release recorded an error: %s", wgt_last_error());
}

/* A kernel whose every run takes a while (n steps of a generator, which no compiler folds). */
static const char busy_wgsl[] =
    "struct Params { n: u32, pad0: u32, pad1: u32, pad2: u32 };\n"
    "@group(0) @binding(0) var<storage, read_write> out: array<u32>;\n"
    "@group(0) @binding(1) var<uniform> params: Params;\n"
    "@compute @workgroup_size(64) fn main(@builtin(local_invocation_index) i: u32) {\n"
    "  var x = i;\n"
    "  for (var k = 0u; k < params.n; k++) { x = x * 1664525u + 1013904223u; }\n"
    "  out[i] = x;\n"
    "}\n";

static char *busy_text(wgt_webgpu *w, const void *arg) {
    (void)w;
    (void)arg;
    return strdup(busy_wgsl);
}

/* Runs the busy kernel once over n steps and waits; the time the sync took in *took. */
static wgt_status run_busy(wgt_context *ctx, wgt_pipeline *pl, wgt_buffer *buf, uint32_t n, double *took) {
    wgt_webgpu *w = (wgt_webgpu *)wgt_context_record(ctx)->backend;
    uint32_t params[4] = {n, 0, 0, 0};
    wgt_status st = wgt_wgpu_dispatch(w, pl, &buf, params, sizeof params, 1);
    double t0 = seconds();
    if (st == WGT_OK) st = wgt_context_sync(ctx);
    *took = seconds() - t0;
    return st;
}

/* Drivers may compile a kernel when it first runs (lavapipe does, for seconds): a kernel's
 * first run is not held to the deadline, its later runs are. The kernel here takes longer
 * than the bound on every run, so the first sync succeeds only because it is a first run. */
TEST(first_run_of_a_kernel_is_not_held_to_the_deadline) {
    if (!webgpu_present()) return; /* skipped by test_webgpu_context */
    wgt_context *tc = webgpu_with_timeout(20);
    CHECK(tc, "%s", wgt_last_error());
    if (!tc) return;
    wgt_webgpu *w = (wgt_webgpu *)wgt_context_record(tc)->backend;
    wgt_pipeline *pl = NULL;
    wgt_buffer *buf = NULL;
    CHECK(wgt_wgpu_pipeline(w, "test:busy", 1, busy_text, NULL, &pl) == WGT_OK, "%s", wgt_last_error());
    CHECK(wgt_wgpu_buffer_create(wgt_context_record(tc)->backend, 256, 1, &buf) == WGT_OK, "%s", wgt_last_error());
    if (!pl || !buf) {
        wgt_context_release(tc);
        return;
    }
    /* Steps enough for 20 ms many times over: measured on the first run, grown if needed. */
    uint32_t n = 1u << 22;
    double first = 0, second = 0;
    wgt_status st = run_busy(tc, pl, buf, n, &first);
    CHECK(st == WGT_OK, "the first run was held to the 20 ms bound (%.1f ms): %s", first * 1e3, wgt_last_error());
    CHECK(first > 0.04, "the first run took only %.1f ms: too quick to tell", first * 1e3);
    wgt_clear_error();
    CHECK(recovers(tc, 300), "%s", wgt_last_error());
    /* Later runs are timed: make sure this one takes well over 20 ms of GPU work. */
    double one = 0;
    while (st == WGT_OK && n < (1u << 30)) {
        n *= 4;
        st = run_busy(tc, pl, buf, n, &one);
    }
    second = one;
    fprintf(stderr, "  20 ms bound: the first run's sync took %.1f ms (allowed), a later run's %.1f ms (timed out)\n",
            first * 1e3, second * 1e3);
    CHECK(st == WGT_ERR_TIMEOUT && test_contains(wgt_last_error(), "took longer than 20 ms"), "%s: %s",
          wgt_status_name(st), wgt_last_error());
    CHECK(second < 0.2, "the timed run returned after %.1f ms", second * 1e3);
    wgt_clear_error();
    CHECK(recovers(tc, 300), "%s", wgt_last_error());
    wgt_wgpu_buffer_destroy(wgt_context_record(tc)->backend, buf);
    wgt_context_release(tc);
}

/* Threads of the process, from /proc. */
static int thread_count(void) {
    DIR *d = opendir("/proc/self/task");
    if (!d) return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

TEST(release_after_a_timeout_is_quick) {
    if (!webgpu_present()) return; /* skipped by test_webgpu_context */
    int threads0 = thread_count();
    long long bufs = wgt_wgpu_live_buffers();
    wgt_context *tc = one_ms_context();
    if (!tc) return;
    static const int64_t s[2] = {1024, 1024};
    wgt_tensor *a = wgt_rand_uniform(tc, WGT_F32, 2, s, -1, 1, 7), *held[8];
    /* Seconds of work on lavapipe (~0.4 s a product), far past the 1 ms the sync may wait. */
    record_matmuls(a, 8, held);
    wgt_eval(8, held);
    double t0 = seconds();
    wgt_status st = wgt_context_sync(tc);
    double waited = seconds() - t0;
    if (st == WGT_OK) {
        test_skip("the device ran 8 products of 1024^3 within 1 ms: no late work to release");
    } else {
        CHECK(st == WGT_ERR_TIMEOUT, "%s: %s", wgt_status_name(st), wgt_last_error());
        wgt_clear_error();
        /* The tensors keep the context: the device goes back now all the same. */
        t0 = seconds();
        wgt_context_release(tc);
        double released = seconds() - t0;
        fprintf(stderr, "  sync timed out after %.1f ms; release with the late work running took %.1f ms\n",
                waited * 1e3, released * 1e3);
        CHECK(released < 0.5, "releasing a late context took %.1f ms", released * 1e3);
        CHECK(wgt_last_status() == WGT_OK, "the release recorded an error: %s", wgt_last_error());
        CHECK(wgt_wgpu_live_buffers() == bufs, "%lld live buffers after the release, %lld before",
              wgt_wgpu_live_buffers(), bufs);
        CHECK_ERROR(wgt_add(held[0], held[1]) == NULL, WGT_ERR_INVALID_ARGUMENT, "released");
        tc = NULL;
    }
    for (int i = 0; i < 8; i++) wgt_release(held[i]);
    wgt_release(a);
    wgt_context_release(tc);
    /* The device's threads end once the late work has: nothing stays behind. */
    double t1 = seconds();
    while (thread_count() > threads0 && seconds() - t1 < 300) nanosleep(&(struct timespec){0, 20000000}, NULL);
    fprintf(stderr, "  the device's threads were gone %.1f s after the release\n", seconds() - t1);
    CHECK(thread_count() <= threads0, "%d threads, %d before the context", thread_count(), threads0);
}

/* A read whose map wait times out leaves the map pending; its callback runs when the instance
 * is released, and must find live memory (run under ASan with
 * ASAN_OPTIONS=detect_stack_use_after_return=1 to see the difference). */
TEST(timeout_in_a_read_then_release_is_safe) {
    if (!webgpu_present()) return; /* skipped by test_webgpu_context */
    wgt_context *tc = one_ms_context();
    if (!tc) return;
    static const int64_t s[2] = {1024, 1024};
    wgt_tensor *a = wgt_rand_uniform(tc, WGT_F32, 2, s, -1, 1, 7), *c = NULL;
    float *out = malloc(sizeof(float) * 1024 * 1024);
    wgt_status st = WGT_OK;
    wgt_tensor *held[256];
    for (int k = 1; k <= 256 && st == WGT_OK && out; k *= 4) {
        record_matmuls(a, k - 1, held);
        wgt_release(c);
        c = wgt_matmul(a, a);
        st = wgt_tensor_read(c, out, sizeof(float) * 1024 * 1024);
        for (int i = 0; i < k - 1; i++) wgt_release(held[i]);
    }
    CHECK(st == WGT_ERR_TIMEOUT && test_contains(wgt_last_error(), "a read from the device"), "%s: %s",
          wgt_status_name(st), wgt_last_error());
    free(out);
    wgt_release(a), wgt_release(c);
    wgt_clear_error();
    wgt_context_release(tc);
    CHECK(wgt_last_status() == WGT_OK, "the release recorded an error: %s", wgt_last_error());
}
