/*
 * Running out: memory.
 *
 * Memory. Every way an op can ask for more than the device allows (a tensor, a result of
 * broadcasting, a matmul, a concat, a copy, each one element past the per-tensor limit) and,
 * on the CPU backend, more host memory than the machine has, fails with a status; after each
 * failure the context still computes correctly, the live device buffers are back where they
 * were and, after many rounds, host memory has not grown. Many allocations that each fit but
 * together exceed the device's memory are tested only when WGT_TEST_DEVICE_MEMORY=1 asks for
 * it, on a real GPU: on lavapipe "device" memory is host memory, so that test would drive the
 * machine into swap or the OOM killer rather than into an out-of-memory status.
 *
 * Time: see test_timeouts.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>

#include "backend/webgpu/webgpu_internal.h"
#include "core/handles.h"
#include "core/tensor.h"
#include "test.h"

/* A scalar of value v broadcast to [n] or [n, m]: no storage of its own, any size. */
static wgt_tensor *broadcast_scalar(wgt_context *ctx, double v, int ndim, const int64_t *shape) {
    wgt_tensor *s = wgt_scalar(ctx, WGT_F32, v), *b = wgt_broadcast_to(s, ndim, shape);
    wgt_release(s);
    return b;
}

/* Bytes of host memory no single allocation can get: twice RAM plus swap. 0 when the kernel
 * would grant it anyway (vm.overcommit_memory=1: the first write would call the OOM killer),
 * or under a sanitizer, whose allocator aborts on such requests unless told otherwise. */
static uint64_t impossible_host_bytes(void) {
#if SANITIZED
    return 0;
#else
    FILE *f = fopen("/proc/sys/vm/overcommit_memory", "r");
    int mode = 1;
    if (f) {
        if (fscanf(f, "%d", &mode) != 1) mode = 1;
        fclose(f);
    }
    struct sysinfo si;
    if (mode == 1 || sysinfo(&si) != 0) return 0;
    return 2 * ((uint64_t)si.totalram + (uint64_t)si.totalswap) * si.mem_unit;
#endif
}

typedef struct failing {
    const char *what;
    wgt_tensor *(*call)(wgt_context *ctx, int64_t n);
    int cpu; /* 1: CPU backend (n is past host memory); 0: WebGPU (n is past the tensor limit) */
} failing;

static wgt_tensor *f_create(wgt_context *ctx, int64_t n) { return wgt_tensor_create(ctx, WGT_F32, 1, &n, WGT_USAGE_DEFAULT); }
static wgt_tensor *f_full(wgt_context *ctx, int64_t n) { return wgt_full(ctx, WGT_F32, 1, &n, 1.0); }
static wgt_tensor *f_add(wgt_context *ctx, int64_t n) {
    wgt_tensor *a = broadcast_scalar(ctx, 1, 1, &n), *b = broadcast_scalar(ctx, 2, 1, &n), *r = wgt_add(a, b);
    wgt_release(a), wgt_release(b);
    return r;
}
static wgt_tensor *f_contiguous_of(wgt_context *ctx, double v, int64_t n) {
    wgt_tensor *a = broadcast_scalar(ctx, v, 1, &n), *r = wgt_contiguous(a);
    wgt_release(a);
    return r;
}
static wgt_tensor *f_contiguous(wgt_context *ctx, int64_t n) { return f_contiguous_of(ctx, 1, n); }
static wgt_tensor *f_matmul(wgt_context *ctx, int64_t n) { /* [k, 1] @ [1, k] with k * k >= n */
    int64_t k = 1;
    while (k * k < n) k *= 2;
    int64_t s1[2] = {k, 1}, s2[2] = {1, k};
    wgt_tensor *a = broadcast_scalar(ctx, 1, 2, s1), *b = broadcast_scalar(ctx, 2, 2, s2), *r = wgt_matmul(a, b);
    wgt_release(a), wgt_release(b);
    return r;
}
static wgt_tensor *f_concat(wgt_context *ctx, int64_t n) { /* two halves, each under the limit */
    int64_t half = n / 2 + 1;
    wgt_tensor *parts[2] = {broadcast_scalar(ctx, 1, 1, &half), broadcast_scalar(ctx, 2, 1, &half)};
    wgt_tensor *r = wgt_concat(parts, 2, 0);
    wgt_release(parts[0]), wgt_release(parts[1]);
    return r;
}

static const failing failings[] = {
    {"wgt_tensor_create", f_create, 0}, {"wgt_full", f_full, 0},     {"wgt_add of broadcasts", f_add, 0},
    {"wgt_contiguous", f_contiguous, 0}, {"wgt_matmul", f_matmul, 0}, {"wgt_concat", f_concat, 0},
    {"wgt_full", f_full, 1},             {"wgt_add of broadcasts", f_add, 1},
};

/* The context computes [0..5] * 2 + 1 correctly. */
static int still_computes(wgt_context *ctx) {
    wgt_tensor *a = wgt_arange(ctx, WGT_F32, 0, 6, 1), *b = wgt_mul_scalar(a, 2), *c = wgt_add_scalar(b, 1);
    float v[6] = {0};
    int ok = c && wgt_tensor_read(c, v, sizeof v) == WGT_OK && v[0] == 1 && v[5] == 11;
    wgt_release(a), wgt_release(b), wgt_release(c);
    return ok;
}

/* Device buffers held by tensors: the pool's idle buffers are given back first, or a leaked
 * buffer could hide among them. */
static long long live_buffers(wgt_context *ctx) {
    wgt_context_trim(ctx);
    return wgt_wgpu_live_buffers();
}

TEST_BACKENDS(limits_failures_leave_the_context_working_and_leak_nothing) {
    int cpu = wgt_context_backend(ctx) == WGT_BACKEND_CPU;
    int64_t n;
    if (cpu) {
        uint64_t bytes = impossible_host_bytes();
        if (!bytes) { /* nothing can be refused safely here */
            test_skip("%s", SANITIZED ? "a sanitizer's allocator aborts on impossible requests"
                                      : "vm.overcommit_memory=1 grants any request");
            return;
        }
        n = (int64_t)(bytes / 4);
    } else {
        n = (int64_t)(wgt_context_record(ctx)->backend->max_buffer_bytes / 4) + 1; /* one f32 past the limit */
    }
    CHECK(still_computes(ctx), "before: %s", wgt_last_error());
    wgt_clear_error();
    long long bufs = live_buffers(ctx), heap = 0;
    const int rounds = 20;
    for (int round = 0; round < rounds; round++) {
        if (round == 1) heap = test_heap_in_use(); /* after the first round has warmed what it uses */
        for (size_t i = 0; i < sizeof failings / sizeof failings[0]; i++) {
            const failing *f = &failings[i];
            if (f->cpu != cpu) continue;
            wgt_clear_error();
            wgt_tensor *r = f->call(ctx, n);
            wgt_status st = wgt_last_status();
            CHECK(!r, "%s of %lld elements succeeded", f->what, (long long)n);
            CHECK(st == (cpu ? WGT_ERR_OUT_OF_MEMORY : WGT_ERR_LIMIT) || st == WGT_ERR_OUT_OF_MEMORY,
                  "%s of %lld elements: %s: %s", f->what, (long long)n, wgt_status_name(st), wgt_last_error());
            wgt_release(r);
            wgt_clear_error();
            CHECK(wgt_context_status(ctx) == WGT_OK, "after %s: %s", f->what, wgt_last_error());
            CHECK(still_computes(ctx), "after %s: %s", f->what, wgt_last_error());
            CHECK(live_buffers(ctx) == bufs, "after %s: %lld live device buffers, %lld before", f->what,
                  live_buffers(ctx), bufs);
            if (test_current_failed()) return;
        }
    }
    long long grown = test_heap_in_use() - heap;
    CHECK(grown < (cpu ? 64ll << 10 : 1ll << 20), "host memory in use grew by %lld bytes over %d rounds of failures",
          grown, rounds - 1);
    CHECK(wgt_last_status() == WGT_OK, "%s", wgt_last_error());
}

/* Fills the device with 1 GiB tensors, each holding its index, until one fails; returns how
 * many were made (held in kept[]) or -1 after a failed check. */
static int fill_device(wgt_context *ctx, wgt_tensor **kept, int cap) {
    int64_t n = (int64_t)(1ll << 28);
    if ((uint64_t)n * 4 > wgt_context_record(ctx)->backend->max_buffer_bytes) n = (int64_t)(wgt_context_record(ctx)->backend->max_buffer_bytes / 4);
    for (int i = 0; i < cap; i++) {
        wgt_clear_error();
        /* Computed on the device from a broadcast scalar: wgt_full would make the values on
         * the host and keep that copy too, filling host memory as fast as the device's. */
        wgt_tensor *t = f_contiguous_of(ctx, (double)i, n);
        wgt_status st = t ? wgt_eval(1, &t) : wgt_last_status();
        if (st == WGT_OK) {
            kept[i] = t;
            if (i % 16 == 15) fprintf(stderr, "device memory: %d GiB held\n", i + 1);
            continue;
        }
        CHECK(st == WGT_ERR_OUT_OF_MEMORY, "tensor %d of %lld MiB: %s: %s", i, (long long)(n >> 18),
              wgt_status_name(st), wgt_last_error());
        float v;
        if (t) CHECK(wgt_tensor_read(t, &v, 0) != WGT_OK, "the tensor that did not fit reads");
        wgt_release(t);
        wgt_clear_error();
        CHECK(wgt_context_status(ctx) == WGT_OK, "after running out: %s", wgt_last_error());
        return test_current_failed() ? -1 : i;
    }
    CHECK(0, "%d tensors of %lld MiB fit; the device did not run out", cap, (long long)(n >> 18));
    return -1;
}

/* A context's memory budget (max_device_bytes) turns the allocation past it into
 * WGT_ERR_OUT_OF_MEMORY with the figures in the message; the tensors made before keep their
 * values, idle pooled buffers are given back before refusing, and after the release as much
 * fits again. This is what keeps a real GPU from being driven into the driver's own failure. */
TEST(limits_memory_budget_refuses_with_a_status_and_recovers) {
    wgt_context_options o = {0};
    o.backend = WGT_BACKEND_WEBGPU;
    o.quiet = 1;
    o.max_device_bytes = 40ull << 20;
    wgt_context *small = wgt_context_create(&o);
    if (!small) return; /* no WebGPU adapter: the runner reports that elsewhere */
    long long bufs = live_buffers(small);
    int64_t n = 2ll << 20; /* 8 MiB of f32 */
    wgt_tensor *kept[8] = {0};
    int fitted[2] = {0, 0};
    for (int round = 0; round < 2; round++) {
        int k = 0;
        for (; k < 8; k++) {
            wgt_clear_error();
            wgt_tensor *t = f_contiguous_of(small, (double)k, n);
            wgt_status st = t ? wgt_eval(1, &t) : wgt_last_status();
            if (st == WGT_OK) {
                kept[k] = t;
                continue;
            }
            CHECK(st == WGT_ERR_OUT_OF_MEMORY, "tensor %d: %s: %s", k, wgt_status_name(st), wgt_last_error());
            CHECK(strstr(wgt_last_error(), "max_device_bytes") && strstr(wgt_last_error(), "40 MiB"), "message: %s",
                  wgt_last_error());
            wgt_release(t);
            break;
        }
        fitted[round] = k;
        CHECK(k >= 3 && k < 8, "round %d: %d tensors of 8 MiB within 40 MiB", round, k);
        wgt_clear_error();
        CHECK(wgt_context_status(small) == WGT_OK, "%s", wgt_last_error());
        for (int i = 0; i < k; i++) {
            wgt_tensor *one = wgt_slice(kept[i], 0, n - 1, n, 1);
            float v = -1;
            CHECK(one && wgt_tensor_read(one, &v, sizeof v) == WGT_OK && v == (float)i, "tensor %d reads %g: %s", i,
                  v, wgt_last_error());
            wgt_release(one);
        }
        if (k > 0) wgt_release(kept[k - 1]), kept[k - 1] = NULL; /* pooled, then given back for the next op */
        CHECK(still_computes(small), "round %d: %s", round, wgt_last_error());
        for (int i = 0; i < 8; i++) wgt_release(kept[i]), kept[i] = NULL;
        if (test_current_failed()) break;
    }
    CHECK(fitted[1] == fitted[0], "the second round fitted %d tensors, the first %d", fitted[1], fitted[0]);
    CHECK(live_buffers(small) == bufs, "%lld live device buffers after the release, %lld before", live_buffers(small),
          bufs);
    wgt_context_release(small);
}

/* Allocations that each fit but together pass the device's memory: the one that does not fit
 * fails with WGT_ERR_OUT_OF_MEMORY, the tensors made before keep their values, the context
 * computes again once some memory is free, and after the release no device buffer is left;
 * a second round fits as many as the first. */
TEST(limits_device_memory_runs_out_with_a_status) {
    const char *opt_in = getenv("WGT_TEST_DEVICE_MEMORY"); /* rounds: opt-in, for real GPUs (see the top) */
    int rounds = opt_in ? atoi(opt_in) : 0;
    if (rounds < 1) {
        test_skip("opt-in: set WGT_TEST_DEVICE_MEMORY=1..3 (rounds) on a real GPU");
        return;
    }
    if (rounds > 3) rounds = 3;
    wgt_context *gpu = test_webgpu_context();
    if (!gpu) return;
    long long bufs = live_buffers(gpu);
    enum { CAP = 1024 };
    static wgt_tensor *kept[CAP];
    int made[3] = {0, 0, 0};
    for (int round = 0; round < rounds; round++) {
        memset(kept, 0, sizeof kept);
        int k = made[round] = fill_device(gpu, kept, CAP);
        /* Reading needs memory too (a staging buffer; the storage's host copy): free one. */
        if (k > 0) wgt_release(kept[k - 1]), kept[k - 1] = NULL;
        for (int i = 0; i < k - 1; i += k / 7 + 1) { /* a sample of them still holds its value */
            wgt_tensor *one = wgt_slice(kept[i], 0, 12345, 12346, 1);
            float v = -1;
            CHECK(one && wgt_tensor_read(one, &v, sizeof v) == WGT_OK && v == (float)i, "tensor %d reads %g: %s", i, v,
                  wgt_last_error());
            wgt_release(one);
        }
        CHECK(still_computes(gpu), "round %d, with the device nearly full: %s", round, wgt_last_error());
        for (int i = 0; i < CAP; i++) wgt_release(kept[i]);
        CHECK(live_buffers(gpu) == bufs, "round %d: %lld live device buffers after the release, %lld before", round,
              live_buffers(gpu), bufs);
        if (test_current_failed()) break;
    }
    fprintf(stderr, "device memory: %d tensors of 1 GiB fitted in the first round, %d in the last\n", made[0],
            made[rounds - 1]);
    CHECK(made[rounds - 1] >= made[0] - 1, "the last round fitted %d tensors, the first %d", made[rounds - 1], made[0]);
    wgt_context_release(gpu);
}
