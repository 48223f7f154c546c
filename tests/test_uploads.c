/*
 * Large writes from host memory (wgt_tensor_write, uploads of host copies): on WebGPU they go
 * in pieces through a few staging buffers that are reused (src/backend/webgpu/uploads.c).
 * Each element holds a value unique to its position and to the write, so a piece copied to
 * the wrong place, left out, or taken from a stale slot shows up; writes are long enough to
 * take every slot more than once.
 */
#include <stdlib.h>
#include <string.h>

#include "reference.h"
#include "test.h"

/* 5 pieces of 8 MiB and a 12-byte tail: more pieces than the 4 slots. */
#define UPLOAD_ELEMS ((int64_t)((5ull << 23) + 12) / 4)

static void fill(uint32_t *v, int64_t n, uint64_t seed) {
    for (int64_t i = 0; i < n; i++) v[i] = (uint32_t)next_u64(&seed);
}

/* Two host arrays of n elements and a u32 tensor of n elements (NULL after a failed check). */
static wgt_tensor *patterns_and_tensor(wgt_context *ctx, int64_t n, uint32_t **a, uint32_t **b) {
    *a = malloc((size_t)n * 4), *b = malloc((size_t)n * 4);
    CHECK(*a && *b);
    wgt_tensor *t = *a && *b ? wgt_tensor_create(ctx, WGT_U32, 1, &n, WGT_USAGE_DEFAULT) : NULL;
    CHECK(t, "%s", wgt_last_error());
    return t;
}

/* The first position where t differs from want, or -1. */
static int64_t first_difference(wgt_tensor *t, const uint32_t *want, int64_t n, uint32_t add) {
    uint32_t *got = malloc((size_t)n * 4);
    if (!got) return 0;
    int64_t at = -1;
    if (wgt_tensor_read(t, got, (size_t)n * 4) != WGT_OK) at = 0;
    for (int64_t i = 0; at < 0 && i < n; i++)
        if (got[i] != want[i] + add) at = i;
    free(got);
    return at;
}

TEST_BACKENDS(uploads_large_writes_arrive_whole_and_in_place) {
    int64_t n = UPLOAD_ELEMS;
    uint32_t *a, *b;
    wgt_tensor *t = patterns_and_tensor(ctx, n, &a, &b);
    for (int round = 0; t && round < 3; round++) {
        uint32_t *v = round % 2 ? b : a;
        fill(v, n, 100 + round);
        if (round == 2) CHECK(wgt_context_trim(ctx) == WGT_OK, "%s", wgt_last_error()); /* slots made again */
        CHECK(wgt_tensor_write(t, v, (size_t)n * 4) == WGT_OK, "round %d: %s", round, wgt_last_error());
        int64_t at = first_difference(t, v, n, 0);
        CHECK(at < 0, "round %d: element %lld of %lld differs", round, (long long)at, (long long)n);
    }
    wgt_release(t);
    free(a);
    free(b);
}

/* Work recorded before a write reads the old contents; work recorded after it, the new. */
TEST_BACKENDS(uploads_large_writes_keep_their_place_among_recorded_work) {
    int64_t n = UPLOAD_ELEMS;
    uint32_t *a, *b;
    wgt_tensor *t = patterns_and_tensor(ctx, n, &a, &b);
    if (t) {
        fill(a, n, 7);
        fill(b, n, 8);
        CHECK(wgt_tensor_write(t, a, (size_t)n * 4) == WGT_OK, "%s", wgt_last_error());
        wgt_tensor *before = wgt_add_scalar(t, 1); /* recorded, not yet run */
        CHECK(wgt_tensor_write(t, b, (size_t)n * 4) == WGT_OK, "%s", wgt_last_error());
        wgt_tensor *after = wgt_add_scalar(t, 3);
        int64_t at = first_difference(before, a, n, 1);
        CHECK(at < 0, "work recorded before the write: element %lld differs", (long long)at);
        at = first_difference(after, b, n, 3);
        CHECK(at < 0, "work recorded after the write: element %lld differs", (long long)at);
        at = first_difference(t, b, n, 0);
        CHECK(at < 0, "the written tensor: element %lld differs", (long long)at);
        wgt_release(before);
        wgt_release(after);
    }
    wgt_release(t);
    free(a);
    free(b);
}
