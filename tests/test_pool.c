/*
 * What keeps the WebGPU backend cheap per op, tested through the backend table (so the tests
 * hold whatever the core does above it): the buffer pool (reuse, zeros on request even when
 * the old owner's kernel is still queued, the byte limit, trim, the counters), the bind-group
 * cache (repeated and evicted groups give right results, and a buffer given back to the
 * driver never meets a group made for the one before it) and asynchronous reads (requests
 * share a submit and are not submitted when begun, polls finish them, unfinished ones can be
 * released, device loss is a status).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/webgpu/webgpu_internal.h"
#include "core/handles.h"
#include "core/tensor.h"
#include "test.h"

static wgt_stats stats_of(wgt_backend *be) {
    wgt_stats s;
    memset(&s, 0, sizeof s);
    be->stats(be, &s);
    return s;
}

/* An f32 vector operand over a whole buffer. */
static wgt_operand vec(wgt_buffer *b, int64_t n) {
    wgt_operand o;
    memset(&o, 0, sizeof o);
    o.dtype = WGT_F32;
    o.ndim = 1;
    o.shape[0] = n;
    o.strides[0] = 1;
    o.buffer = b;
    return o;
}

/* A device buffer holding v[i] = base + i, for i < n. */
static wgt_buffer *filled(wgt_backend *be, int n, float base) {
    wgt_buffer *b = NULL;
    float *v = malloc((size_t)n * sizeof *v);
    if (!v) return NULL;
    for (int i = 0; i < n; i++) v[i] = base + (float)i;
    if (be->buffer_create(be, (size_t)n * 4, 0, &b) != WGT_OK) b = NULL;
    else if (be->buffer_write(be, b, 0, v, (size_t)n * 4) != WGT_OK) {
        be->buffer_destroy(be, b);
        b = NULL;
    }
    free(v);
    return b;
}

/* out = a + b over n floats, recorded (not submitted). */
static wgt_status add(wgt_backend *be, wgt_buffer *out, wgt_buffer *a, wgt_buffer *b, int n) {
    wgt_operand o = vec(out, n), x = vec(a, n), y = vec(b, n);
    return be->binary(be, WGT_BINARY_ADD, &o, &x, &y);
}

/* 1 when the n floats of b are want(i) = base + step * i. */
static int holds(wgt_backend *be, wgt_buffer *b, int n, float base, float step) {
    float *v = malloc((size_t)n * sizeof *v);
    int ok = v && be->buffer_read(be, b, 0, v, (size_t)n * 4) == WGT_OK;
    for (int i = 0; ok && i < n; i++) ok = v[i] == base + step * (float)i;
    free(v);
    return ok;
}

static void sleep_us(long us) { nanosleep(&(struct timespec){0, us * 1000}, NULL); }

/* Polls r until done (1), an error (0, status in *st) or 10 s (0). */
static int poll_until_done(wgt_backend *be, wgt_pending_read *r, wgt_status *st) {
    for (int i = 0; i < 100000; i++) {
        int done = 0;
        *st = be->read_poll(be, r, &done);
        if (*st != WGT_OK) return 0;
        if (done) return 1;
        sleep_us(100);
    }
    return 0;
}

/* ---- the pool ---- */

TEST(pool_serves_released_buffers_again) {
    wgt_context *gpu = test_webgpu_context();
    if (!gpu) return;
    wgt_backend *be = wgt_context_record(gpu)->backend;
    const int n = 1000;
    wgt_stats warm = {0};
    for (int round = 0; round < 50 && !test_current_failed(); round++) {
        wgt_buffer *a = filled(be, n, (float)round), *b = filled(be, n, 1), *c = NULL;
        CHECK(a && b && be->buffer_create(be, n * 4, 0, &c) == WGT_OK, "round %d: %s", round, wgt_last_error());
        if (!a || !b || !c) break;
        CHECK(add(be, c, a, b, n) == WGT_OK && holds(be, c, n, (float)round + 1, 2), "round %d: %s", round,
              wgt_last_error());
        be->buffer_destroy(be, a), be->buffer_destroy(be, b), be->buffer_destroy(be, c);
        if (round == 0) warm = stats_of(be);
    }
    wgt_stats end = stats_of(be);
    CHECK(warm.buffers_created == 3 && end.buffers_created == 3, "created %llu after one round, %llu after 50",
          (unsigned long long)warm.buffers_created, (unsigned long long)end.buffers_created);
    CHECK(end.buffers_reused == 49 * 3, "reused %llu", (unsigned long long)end.buffers_reused);
    /* Three 4000-byte requests: three 4096-byte buffers at most, ever. */
    CHECK(end.device_bytes_peak == 3 * 4096 && end.device_bytes_pooled == 3 * 4096 && end.device_bytes_in_use == 0,
          "peak %llu, pooled %llu, in use %llu", (unsigned long long)end.device_bytes_peak,
          (unsigned long long)end.device_bytes_pooled, (unsigned long long)end.device_bytes_in_use);
    CHECK(end.submits > warm.submits, "submits %llu, then %llu", (unsigned long long)warm.submits,
          (unsigned long long)end.submits);
    wgt_context_release(gpu);
}

TEST(pool_size_classes_bound_the_waste) {
    wgt_context *gpu = test_webgpu_context();
    if (!gpu) return;
    wgt_backend *be = wgt_context_record(gpu)->backend;
    static const size_t sizes[] = {1, 4, 255, 256, 257, 320, 321, 1000, 4096, 4097, 100000, 1 << 20, (1 << 20) + 4};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        wgt_buffer *b = NULL;
        CHECK(be->buffer_create(be, sizes[i], 0, &b) == WGT_OK, "%zu bytes: %s", sizes[i], wgt_last_error());
        if (!b) continue;
        size_t want = (sizes[i] + 3) & ~(size_t)3;
        CHECK(b->size == want, "%zu bytes: binding size %llu", sizes[i], (unsigned long long)b->size);
        CHECK(b->alloc >= b->size && (b->alloc <= 256 || b->alloc * 4 <= b->size * 5),
              "%zu bytes: a %llu-byte buffer", sizes[i], (unsigned long long)b->alloc);
        be->buffer_destroy(be, b);
    }
    wgt_context_release(gpu);
}

/* A reused buffer asked for as zeros reads as zeros, also when the kernel of its last owner is
 * still recorded and not submitted: the clear must land after that kernel. */
TEST(pool_zero_request_clears_a_reused_buffer_after_its_last_use) {
    wgt_context *gpu = test_webgpu_context();
    if (!gpu) return;
    wgt_backend *be = wgt_context_record(gpu)->backend;
    const int n = 4096;
    wgt_buffer *a = filled(be, n, 1), *old = NULL, *z = NULL, *sum = NULL;
    CHECK(a && be->buffer_create(be, n * 4, 0, &old) == WGT_OK, "%s", wgt_last_error());
    if (!a || !old) return;
    CHECK(add(be, old, a, a, n) == WGT_OK, "%s", wgt_last_error()); /* old = 2a + ..., queued */
    be->buffer_destroy(be, old);
    wgt_stats before = stats_of(be);
    /* A little less than before: the same size class, so the pool hands the same buffer out. */
    CHECK(be->buffer_create(be, n * 4 - 64, 1, &z) == WGT_OK, "%s", wgt_last_error());
    wgt_stats after = stats_of(be);
    CHECK(after.buffers_reused == before.buffers_reused + 1, "the zero request did not reuse a buffer");
    CHECK(z == old, "a different buffer came back");
    CHECK(z && holds(be, z, n - 16, 0, 0), "the reused buffer does not read as zeros");
    /* Used as a kernel input right away, it is zeros too. */
    be->buffer_destroy(be, z);
    CHECK(be->buffer_create(be, n * 4, 0, &old) == WGT_OK && add(be, old, a, a, n) == WGT_OK, "%s",
          wgt_last_error());
    be->buffer_destroy(be, old);
    CHECK(be->buffer_create(be, n * 4, 1, &z) == WGT_OK && be->buffer_create(be, n * 4, 0, &sum) == WGT_OK, "%s",
          wgt_last_error());
    CHECK(z && sum && add(be, sum, z, a, n) == WGT_OK && holds(be, sum, n, 1, 1), "zeros + a is not a: %s",
          wgt_last_error());
    be->buffer_destroy(be, z), be->buffer_destroy(be, sum), be->buffer_destroy(be, a);
    wgt_context_release(gpu);
}

/* Same through the public API: zeros made after a released tensor of the same size held data. */
TEST(pool_zeros_after_a_released_tensor_are_zeros) {
    wgt_context *gpu = test_webgpu_context();
    if (!gpu) return;
    int64_t shape[1] = {1000};
    float got[1000];
    for (int round = 0; round < 3; round++) {
        wgt_tensor *full = wgt_full(gpu, WGT_F32, 1, shape, 7.0);
        wgt_tensor *sum = wgt_add(full, full);
        CHECK(sum && wgt_tensor_read(sum, got, sizeof got) == WGT_OK && got[999] == 14.0f, "%s", wgt_last_error());
        wgt_release(full), wgt_release(sum);
        wgt_tensor *z = wgt_zeros(gpu, WGT_F32, 1, shape), *one = wgt_ones(gpu, WGT_F32, 1, shape);
        wgt_tensor *z1 = wgt_add(z, one); /* z goes to the device as zeros */
        CHECK(z1 && wgt_tensor_read(z1, got, sizeof got) == WGT_OK, "%s", wgt_last_error());
        int ok = 1;
        for (int i = 0; i < 1000; i++) ok &= got[i] == 1.0f;
        CHECK(ok, "round %d: zeros + 1 is not 1 everywhere", round);
        wgt_release(z), wgt_release(one), wgt_release(z1);
    }
    wgt_stats s = stats_of(wgt_context_record(gpu)->backend);
    CHECK(s.buffers_reused > 0, "nothing was reused");
    wgt_context_release(gpu);
}

TEST(pool_trim_gives_pooled_buffers_back) {
    wgt_context *gpu = test_webgpu_context();
    if (!gpu) return;
    wgt_backend *be = wgt_context_record(gpu)->backend;
    long long live0 = wgt_wgpu_live_buffers();
    wgt_buffer *b[6] = {0};
    for (int i = 0; i < 6; i++)
        CHECK(be->buffer_create(be, (size_t)(i + 1) * 10000, 0, &b[i]) == WGT_OK, "%s", wgt_last_error());
    CHECK(wgt_wgpu_live_buffers() == live0 + 6, "%lld live", wgt_wgpu_live_buffers() - live0);
    for (int i = 1; i < 6; i++) be->buffer_destroy(be, b[i]);
    wgt_stats s = stats_of(be);
    CHECK(s.device_bytes_pooled > 0 && s.device_bytes_in_use == b[0]->alloc, "pooled %llu, in use %llu",
          (unsigned long long)s.device_bytes_pooled, (unsigned long long)s.device_bytes_in_use);
    CHECK(wgt_wgpu_live_buffers() == live0 + 6, "pooled buffers still exist");
    be->trim(be);
    s = stats_of(be);
    CHECK(s.device_bytes_pooled == 0 && s.device_bytes_peak == s.device_bytes_in_use, "after trim: pooled %llu, peak %llu",
          (unsigned long long)s.device_bytes_pooled, (unsigned long long)s.device_bytes_peak);
    CHECK(wgt_wgpu_live_buffers() == live0 + 1, "%lld live after trim", wgt_wgpu_live_buffers() - live0);
    /* The context works on after a trim, and creates what it needs again. */
    wgt_buffer *x = filled(be, 100, 3), *y = NULL;
    CHECK(x && be->buffer_create(be, 400, 0, &y) == WGT_OK && add(be, y, x, x, 100) == WGT_OK &&
              holds(be, y, 100, 6, 2),
          "%s", wgt_last_error());
    CHECK(stats_of(be).buffers_created == 8, "created %llu", (unsigned long long)stats_of(be).buffers_created);
    be->buffer_destroy(be, x), be->buffer_destroy(be, y), be->buffer_destroy(be, b[0]);
    wgt_context_release(gpu);
    CHECK(wgt_wgpu_live_buffers() == live0, "%lld live after the release", wgt_wgpu_live_buffers() - live0);
}

TEST(pool_keeps_at_most_its_limit) {
    wgt_context *gpu = test_webgpu_context();
    if (!gpu) return;
    wgt_backend *be = wgt_context_record(gpu)->backend;
    /* The limit is 256 MiB where tensors are at most 128 MiB (lavapipe); elsewhere up to 4 GiB,
     * too much to fill in a test. Buffers are only touched by the driver when used, so
     * creating them costs address space, not memory. */
    const size_t each = 40u << 20;
    const int count = 8;
    if (be->max_buffer_bytes > (128u << 20) || be->max_buffer_bytes < each) {
        wgt_context_release(gpu);
        return;
    }
    long long live0 = wgt_wgpu_live_buffers();
    wgt_buffer *b[8] = {0};
    for (int i = 0; i < count; i++)
        CHECK(be->buffer_create(be, each, 0, &b[i]) == WGT_OK, "%s", wgt_last_error());
    for (int i = 0; i < count; i++)
        if (b[i]) be->buffer_destroy(be, b[i]);
    wgt_stats s = stats_of(be);
    CHECK(s.device_bytes_pooled <= 256u << 20 && s.device_bytes_pooled > (256u << 20) - each,
          "%llu bytes pooled", (unsigned long long)s.device_bytes_pooled);
    CHECK(wgt_wgpu_live_buffers() - live0 == (long long)(s.device_bytes_pooled / each), "%lld buffers live for %llu bytes",
          wgt_wgpu_live_buffers() - live0, (unsigned long long)s.device_bytes_pooled);
    CHECK(s.device_bytes_peak == count * each, "peak %llu", (unsigned long long)s.device_bytes_peak);
    wgt_context_release(gpu);
    CHECK(wgt_wgpu_live_buffers() == live0, "%lld live after the release", wgt_wgpu_live_buffers() - live0);
}

TEST_BACKENDS(stats_count_buffers_only_on_devices) {
    wgt_stats s;
    memset(&s, 0xff, sizeof s);
    CHECK(wgt_context_stats(ctx, &s) == WGT_OK, "%s", wgt_last_error());
    if (wgt_context_record(ctx)->backend->host_resident)
        CHECK(s.device_bytes_in_use == 0 && s.device_bytes_pooled == 0 && s.buffers_created == 0 && s.submits == 0,
              "the CPU backend reports device memory");
    else CHECK(s.device_bytes_peak >= s.device_bytes_in_use + s.device_bytes_pooled, "peak below what is held");
}

/* ---- the bind-group cache ---- */

TEST(bind_groups_repeated_and_evicted_give_right_results) {
    wgt_context *gpu = test_webgpu_context();
    if (!gpu) return;
    wgt_backend *be = wgt_context_record(gpu)->backend;
    enum { T = 40, N = 64 };
    wgt_buffer *t[T] = {0}, *out[T][T];
    memset(out, 0, sizeof out);
    for (int i = 0; i < T; i++) t[i] = filled(be, N, (float)(100 * i));
    /* 1600 pairs, more groups than the cache holds: the second pass repeats the first (its
     * groups found or made again after eviction), the third swaps the inputs (new groups, the
     * same sums); all recorded before one read. */
    for (int rep = 0; rep < 3 && !test_current_failed(); rep++)
        for (int i = 0; i < T; i++)
            for (int j = 0; j < T; j++) {
                if (!out[i][j]) CHECK(be->buffer_create(be, N * 4, 0, &out[i][j]) == WGT_OK, "%s", wgt_last_error());
                int x = rep == 2 ? j : i, y = rep == 2 ? i : j;
                CHECK(add(be, out[i][j], t[x], t[y], N) == WGT_OK, "%s", wgt_last_error());
            }
    int bad = 0;
    for (int i = 0; i < T; i++)
        for (int j = 0; j < T; j++)
            if (!holds(be, out[i][j], N, (float)(100 * (i + j)), 2) && bad++ < 3)
                CHECK(0, "out[%d][%d] wrong", i, j);
    for (int i = 0; i < T; i++) {
        be->buffer_destroy(be, t[i]);
        for (int j = 0; j < T; j++) be->buffer_destroy(be, out[i][j]);
    }
    wgt_context_release(gpu);
}

/* Buffers given back to the driver and made again (trim between rounds) often get the same
 * handle struct address and sizes; a group cached for the old buffer would write into it. */
TEST(bind_groups_never_outlive_their_buffers) {
    wgt_context *gpu = test_webgpu_context();
    if (!gpu) return;
    wgt_backend *be = wgt_context_record(gpu)->backend;
    const int n = 256;
    for (int round = 0; round < 30 && !test_current_failed(); round++) {
        wgt_buffer *a = filled(be, n, (float)round), *b = filled(be, n, 0), *c = NULL;
        CHECK(a && b && be->buffer_create(be, n * 4, 0, &c) == WGT_OK, "%s", wgt_last_error());
        if (!a || !b || !c) break;
        CHECK(add(be, c, a, b, n) == WGT_OK && holds(be, c, n, (float)round, 2), "round %d: %s", round,
              wgt_last_error());
        be->buffer_destroy(be, a), be->buffer_destroy(be, b), be->buffer_destroy(be, c);
        if (round % 2) be->trim(be);
    }
    /* Reused buffers with another binding size in the same class get their own groups. */
    for (int round = 0; round < 10 && !test_current_failed(); round++) {
        int m = round % 2 ? n : n - 8;
        wgt_buffer *a = filled(be, m, 1), *c = NULL;
        CHECK(a && be->buffer_create(be, (size_t)m * 4, 0, &c) == WGT_OK, "%s", wgt_last_error());
        if (!a || !c) break;
        CHECK(c->size == (uint64_t)m * 4, "binding size %llu for %d floats", (unsigned long long)c->size, m);
        CHECK(add(be, c, a, a, m) == WGT_OK && holds(be, c, m, 2, 2), "round %d: %s", round, wgt_last_error());
        be->buffer_destroy(be, a), be->buffer_destroy(be, c);
    }
    wgt_context_release(gpu);
}

/* ---- asynchronous reads ---- */

TEST(read_requests_share_one_submit_and_finish_by_polling) {
    wgt_context *gpu = test_webgpu_context();
    if (!gpu) return;
    wgt_backend *be = wgt_context_record(gpu)->backend;
    const int n = 1000;
    wgt_buffer *a = filled(be, n, 1), *c = NULL, *d = NULL;
    CHECK(a && be->buffer_create(be, n * 4, 0, &c) == WGT_OK && be->buffer_create(be, n * 4, 0, &d) == WGT_OK, "%s",
          wgt_last_error());
    if (!a || !c || !d) return;
    CHECK(add(be, c, a, a, n) == WGT_OK, "%s", wgt_last_error());
    wgt_stats s0 = stats_of(be);
    wgt_pending_read *r1 = NULL, *r2 = NULL, *r3 = NULL;
    CHECK(be->read_begin(be, c, 0, n * 4, &r1) == WGT_OK && be->read_begin(be, a, 40, 400, &r2) == WGT_OK, "%s",
          wgt_last_error());
    CHECK(stats_of(be).submits == s0.submits, "beginning a read submitted");
    CHECK(add(be, d, c, a, n) == WGT_OK, "%s", wgt_last_error()); /* recorded after the requests */
    wgt_status st = WGT_OK;
    CHECK(r1 && poll_until_done(be, r1, &st), "%s", wgt_last_error());
    CHECK(r2 && poll_until_done(be, r2, &st), "%s", wgt_last_error());
    CHECK(stats_of(be).submits == s0.submits + 1, "%llu submits for two requests",
          (unsigned long long)(stats_of(be).submits - s0.submits));
    const float *v1 = r1 ? be->read_data(be, r1) : NULL, *v2 = r2 ? be->read_data(be, r2) : NULL;
    int ok = v1 && v2;
    for (int i = 0; ok && i < n; i++) ok = v1[i] == 2.0f * (float)(1 + i);
    for (int i = 0; ok && i < 100; i++) ok = v2[i] == (float)(11 + i);
    CHECK(ok, "wrong data");
    /* The work recorded after the requests went with them, and a waited read sees it. */
    CHECK(be->read_begin(be, d, 0, n * 4, &r3) == WGT_OK && be->read_wait(be, r3) == WGT_OK, "%s", wgt_last_error());
    const float *v3 = r3 ? be->read_data(be, r3) : NULL;
    CHECK(v3 && v3[0] == 3.0f && v3[n - 1] == 3.0f * (float)n, "d wrong");
    be->read_release(be, r1), be->read_release(be, r2), be->read_release(be, r3);
    /* Odd sizes and empty reads. */
    wgt_pending_read *odd = NULL, *none = NULL;
    CHECK(be->read_begin(be, a, 4, 6, &odd) == WGT_OK && be->read_wait(be, odd) == WGT_OK, "%s", wgt_last_error());
    const float *vo = odd ? be->read_data(be, odd) : NULL;
    CHECK(vo && vo[0] == 2.0f, "odd-sized read");
    int done = 0;
    CHECK(be->read_begin(be, a, 0, 0, &none) == WGT_OK && be->read_poll(be, none, &done) == WGT_OK && done &&
              be->read_data(be, none),
          "empty read: %s", wgt_last_error());
    be->read_release(be, odd), be->read_release(be, none);
    CHECK_ERROR(be->read_begin(be, a, 2, 4, &odd) != WGT_OK, WGT_ERR_INTERNAL, "aligned");
    CHECK_ERROR(be->read_begin(be, a, 0, n * 4 + 4, &odd) != WGT_OK, WGT_ERR_INTERNAL, "too long");
    be->buffer_destroy(be, a), be->buffer_destroy(be, c), be->buffer_destroy(be, d);
    CHECK(wgt_last_status() == WGT_OK, "%s", wgt_last_error());
    wgt_context_release(gpu);
}

TEST(read_requests_released_unfinished_are_safe) {
    wgt_context *gpu = test_webgpu_context();
    if (!gpu) return;
    wgt_backend *be = wgt_context_record(gpu)->backend;
    const int n = 1 << 16;
    wgt_buffer *a = filled(be, n, 1), *c = NULL;
    CHECK(a && be->buffer_create(be, n * 4, 0, &c) == WGT_OK, "%s", wgt_last_error());
    if (!a || !c) return;
    for (int round = 0; round < 20 && !test_current_failed(); round++) {
        CHECK(add(be, c, a, a, n) == WGT_OK, "%s", wgt_last_error());
        wgt_pending_read *never = NULL, *mapping = NULL, *done = NULL;
        CHECK(be->read_begin(be, c, 0, n * 4, &never) == WGT_OK && be->read_begin(be, c, 0, n * 4, &mapping) == WGT_OK &&
                  be->read_begin(be, a, 0, 64, &done) == WGT_OK,
              "%s", wgt_last_error());
        int flag = 0;
        CHECK(mapping && be->read_poll(be, mapping, &flag) == WGT_OK, "%s", wgt_last_error()); /* now mapping */
        be->read_release(be, never);   /* never submitted by a poll of its own */
        be->read_release(be, mapping); /* its mapping may still be pending */
        wgt_status st;
        CHECK(done && poll_until_done(be, done, &st), "%s", wgt_last_error());
        const float *v = done ? be->read_data(be, done) : NULL;
        CHECK(v && v[15] == 16.0f, "a read beside released ones");
        be->read_release(be, done);
    }
    /* Released requests leave nothing behind: the staging buffers of finished ones are pooled,
     * the rest are freed once Dawn has called back (the sanitizer run checks the memory). */
    CHECK(be->sync(be) == WGT_OK, "%s", wgt_last_error());
    CHECK(holds(be, c, 16, 2, 2), "%s", wgt_last_error());
    be->buffer_destroy(be, a), be->buffer_destroy(be, c);
    /* A request released mid-mapping with the context released right after. */
    wgt_buffer *x = filled(be, n, 1);
    wgt_pending_read *r = NULL;
    int flag = 0;
    CHECK(x && be->read_begin(be, x, 0, n * 4, &r) == WGT_OK && be->read_poll(be, r, &flag) == WGT_OK, "%s",
          wgt_last_error());
    be->read_release(be, r);
    be->buffer_destroy(be, x);
    wgt_context_release(gpu);
}

TEST(read_requests_report_device_loss) {
    wgt_context *gpu = test_webgpu_context();
    if (!gpu) return;
    wgt_backend *be = wgt_context_record(gpu)->backend;
    const int n = 1000;
    wgt_buffer *a = filled(be, n, 1), *c = NULL;
    CHECK(a && be->buffer_create(be, n * 4, 0, &c) == WGT_OK && add(be, c, a, a, n) == WGT_OK, "%s", wgt_last_error());
    if (!a || !c) return;
    wgt_pending_read *recorded = NULL, *mapping = NULL, *finished = NULL, *after = NULL;
    CHECK(be->read_begin(be, a, 0, 64, &finished) == WGT_OK && be->read_wait(be, finished) == WGT_OK, "%s",
          wgt_last_error());
    CHECK(be->read_begin(be, c, 0, n * 4, &mapping) == WGT_OK && be->read_begin(be, c, 0, n * 4, &recorded) == WGT_OK,
          "%s", wgt_last_error());
    int done = 0;
    CHECK(mapping && be->read_poll(be, mapping, &done) == WGT_OK, "%s", wgt_last_error());
    CHECK(be->simulate_loss(be) == WGT_OK, "%s", wgt_last_error());
    CHECK_ERROR(be->read_poll(be, recorded, &done) != WGT_OK && !done, WGT_ERR_DEVICE_LOST, "lost");
    CHECK_ERROR(be->read_wait(be, recorded) != WGT_OK, WGT_ERR_DEVICE_LOST, "lost");
    CHECK_ERROR(be->read_begin(be, a, 0, 64, &after) != WGT_OK, WGT_ERR_DEVICE_LOST, "lost");
    wgt_status st = be->read_wait(be, mapping); /* finished before the loss, or lost */
    CHECK(st == WGT_OK || st == WGT_ERR_DEVICE_LOST, "%s", wgt_last_error());
    wgt_clear_error();
    /* What finished before the loss stays readable. */
    const float *v = be->read_data(be, finished);
    CHECK(v && v[15] == 16.0f, "a finished read lost its data");
    CHECK(be->read_data(be, recorded) == NULL, "data for a read that never ran");
    be->read_release(be, recorded), be->read_release(be, mapping), be->read_release(be, finished);
    be->buffer_destroy(be, a), be->buffer_destroy(be, c);
    wgt_context_release(gpu);
}
