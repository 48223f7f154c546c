/*
 * Soak: 100,000 small ops (tensor uploads and elementwise ops on [4, 4] tensors, each result
 * released, results checked every 1,000 ops) on each backend, the WebGPU one included (about
 * 4 s on lavapipe). The number of live device buffers at the end must equal the count after
 * the first 1,000 ops. Host memory in use (malloc's count and the resident set) must match
 * the 1,000-op figures within a small constant that allows for the pools Dawn and lavapipe
 * fill while warming up, and must stay flat from 10,000 ops to the end: a leak of one tensor
 * handle per op would show as megabytes, a leaked buffer at once. WGT_TEST_VERBOSE=1 prints
 * the figures.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/webgpu/webgpu_internal.h"
#include "test.h"

/* Under a sanitizer, malloc is the sanitizer's and the resident set holds its shadow memory:
 * the memory figures mean nothing there, so only the buffer count and the results are checked. */
/* Valgrind holds freed blocks back (its free list), so heap figures grow under it too. */
#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif
#endif
#ifndef RUNNING_ON_VALGRIND
#define RUNNING_ON_VALGRIND 0
#endif

#define SOAK_OPS 100000
#define BASELINE_OPS 1000
#define WARM_OPS 10000
#define OPS_PER_ROUND 5
#define CHECK_EVERY 200 /* rounds between reads */

typedef struct usage {
    long long heap;  /* bytes malloc has handed out and not had back */
    long long rss;   /* resident set, bytes */
    long long bufs;  /* live WebGPU storage buffers */
} usage;

/* Taken with the pool trimmed: the buffer count is then what tensors hold, and a leaked
 * buffer cannot hide among idle ones. */
static usage measure(wgt_context *ctx) {
    wgt_context_trim(ctx);
    usage u = {0, 0, wgt_wgpu_live_buffers()};
    u.heap = test_heap_in_use();
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, resident = 0;
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
        fclose(f);
    }
    u.rss = (long long)resident * 4096;
    return u;
}

static int verbose(void) {
    const char *v = getenv("WGT_TEST_VERBOSE");
    return v && !strcmp(v, "1");
}

TEST_BACKENDS(soak_100k_small_ops_leak_nothing) {
    int webgpu = wgt_context_backend(ctx) == WGT_BACKEND_WEBGPU;
    /* Allowed growth. From the 1,000-op mark to the end, Dawn and lavapipe fill pools that
     * settle by ~10,000 ops (2-4 MiB of heap on lavapipe); from 10,000 ops to the end the
     * figures are flat within ~1 MiB on a quiet machine and ~2 MiB under load, so 4 MiB there
     * catches any leak of 48 bytes or more per op (the live-buffer count catches any leaked
     * buffer). The CPU backend's figures do not move at all. */
    const long long heap_warm = webgpu ? 8ll << 20 : 64ll << 10, rss_warm = webgpu ? 12ll << 20 : 256ll << 10;
    const long long heap_flat = webgpu ? 4ll << 20 : 64ll << 10, rss_flat = webgpu ? 6ll << 20 : 256ll << 10;
    static const int64_t s44[2] = {4, 4};
    float xs[16], want[16], got[16];
    for (int j = 0; j < 16; j++) xs[j] = (float)j;
    wgt_tensor *row = wgt_arange(ctx, WGT_F32, 0, 4, 1);
    CHECK(row != NULL, "%s", wgt_last_error());
    usage base = {0}, warm = {0}, end = {0};
    int ops = 0, bad = 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int round = 0; ops < SOAK_OPS && row && !bad; round++) {
        float k = (float)(round % 7);
        xs[0] = (float)(round % 1000); /* a different upload each round */
        wgt_tensor *x = wgt_tensor_from_data(ctx, WGT_F32, 2, s44, xs, sizeof xs, WGT_USAGE_DEFAULT);
        wgt_tensor *a = wgt_add(x, row);            /* x + row, broadcast */
        wgt_tensor *b = wgt_mul_scalar(a, k);       /* k (x + row) */
        wgt_tensor *c = wgt_maximum(b, x);          /* max(k (x + row), x) */
        wgt_tensor *d = wgt_sub(c, a);
        ops += OPS_PER_ROUND;
        if (!d) {
            CHECK(d != NULL, "round %d: %s", round, wgt_last_error());
            bad = 1;
        } else if (round % CHECK_EVERY == CHECK_EVERY - 1) {
            for (int j = 0; j < 16; j++) {
                float av = xs[j] + (float)(j % 4), bv = k * av;
                want[j] = (bv > xs[j] ? bv : xs[j]) - av;
            }
            if (wgt_tensor_read(d, got, sizeof got) != WGT_OK || memcmp(got, want, sizeof got)) {
                CHECK(0, "round %d: d[0] = %g, wanted %g: %s", round, got[0], want[0], wgt_last_error());
                bad = 1;
            }
        }
        wgt_release(x), wgt_release(a), wgt_release(b), wgt_release(c), wgt_release(d);
        if (ops == BASELINE_OPS) {
            CHECK(wgt_context_sync(ctx) == WGT_OK, "%s", wgt_last_error());
            base = measure(ctx);
        }
        if (ops % 10000 == 0) { /* bounds the work in flight, so what Dawn holds for it stays bounded */
            CHECK(wgt_context_sync(ctx) == WGT_OK, "%s", wgt_last_error());
            usage u = measure(ctx);
            if (ops == WARM_OPS) warm = u;
            if (verbose())
                printf("    %6d ops: heap %+lld KiB, rss %+lld KiB, buffers %lld\n", ops, (u.heap - base.heap) / 1024,
                       (u.rss - base.rss) / 1024, u.bufs);
        }
    }
    CHECK(wgt_context_sync(ctx) == WGT_OK, "%s", wgt_last_error());
    end = measure(ctx);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    CHECK(ops >= SOAK_OPS, "stopped after %d ops", ops);
    CHECK(end.bufs == base.bufs, "live device buffers: %lld after %d ops, %lld after %d", base.bufs, BASELINE_OPS,
          end.bufs, ops);
    if (!SANITIZED && !RUNNING_ON_VALGRIND) {
        CHECK(end.heap - base.heap <= heap_warm, "heap in use grew by %lld bytes from op %d to op %d",
              end.heap - base.heap, BASELINE_OPS, ops);
        CHECK(end.rss - base.rss <= rss_warm, "resident set grew by %lld bytes from op %d to op %d", end.rss - base.rss,
              BASELINE_OPS, ops);
        CHECK(end.heap - warm.heap <= heap_flat, "heap in use grew by %lld bytes from op %d to op %d: a leak",
              end.heap - warm.heap, WARM_OPS, ops);
        CHECK(end.rss - warm.rss <= rss_flat, "resident set grew by %lld bytes from op %d to op %d: a leak",
              end.rss - warm.rss, WARM_OPS, ops);
    }
    CHECK(wgt_last_status() == WGT_OK, "%s", wgt_last_error());
    if (verbose())
        printf("  soak %s: %d ops in %.2f s; from op %d: heap %+lld KiB, rss %+lld KiB; from op %d: heap %+lld KiB, "
               "rss %+lld KiB; live buffers %lld -> %lld\n",
               test_backend_name(), ops, (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9,
               BASELINE_OPS, (end.heap - base.heap) / 1024, (end.rss - base.rss) / 1024, WARM_OPS,
               (end.heap - warm.heap) / 1024, (end.rss - warm.rss) / 1024, base.bufs, end.bufs);
    wgt_release(row);
}
