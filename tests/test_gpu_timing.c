/*
 * Opt-in GPU timing (src/core/gpu_timing.h), against the real library: where the device
 * offers timestamp-query, passes run with timing on are counted and take time, reading starts
 * the count again, results are unchanged, and turning it off stops it; where it is not
 * offered (the CPU backend, devices without the feature) the switch says so with a status.
 */
#include "backend/webgpu/webgpu_internal.h"
#include "core/gpu_timing.h"
#include "core/handles.h"
#include "core/tensor.h"
#include "test.h"

/* n adds of [256, 1024] f32, each run and submitted on its own; 1 if all came out right. */
static int run_adds(wgt_context *ctx, int n) {
    int64_t shape[2] = {256, 1024};
    wgt_tensor *a = wgt_rand_uniform(ctx, WGT_F32, 2, shape, -1, 1, 1), *b = wgt_full(ctx, WGT_F32, 2, shape, 0.5);
    int ok = a && b;
    for (int i = 0; i < n && ok; i++) {
        wgt_tensor *c = wgt_add(a, b);
        ok = c && wgt_eval(1, &c) == WGT_OK;
        if (ok && i == n - 1) {
            const float *pa = wgt_tensor_data(a), *pc = wgt_tensor_data(c);
            ok = pa && pc && pc[777] == pa[777] + 0.5f;
        }
        wgt_release(c);
    }
    wgt_release(a), wgt_release(b);
    return ok;
}

TEST(gpu_timing_is_unavailable_on_the_cpu_backend) {
    wgt_context *cpu = test_new_context(WGT_BACKEND_CPU);
    if (!cpu) return;
    wgt_gpu_time t;
    CHECK_ERROR(wgt_context_gpu_timing(cpu, 1) != WGT_OK, WGT_ERR_UNAVAILABLE, "no GPU timestamps");
    CHECK_ERROR(wgt_context_gpu_time(cpu, &t) != WGT_OK, WGT_ERR_UNAVAILABLE, "no GPU timestamps");
    CHECK_ERROR(wgt_context_gpu_time(cpu, NULL) != WGT_OK, WGT_ERR_INVALID_ARGUMENT, "out is NULL");
    wgt_context_release(cpu);
}

TEST(gpu_timing_counts_the_passes_run_while_on) {
    wgt_context *gpu = test_webgpu_context();
    if (!gpu) return;
    wgt_webgpu *w = (wgt_webgpu *)wgt_context_record(gpu)->backend;
    wgt_gpu_time t;
    if (!w->has_timestamp) { /* then the switch says so, and nothing else changes */
        CHECK_ERROR(wgt_context_gpu_timing(gpu, 1) != WGT_OK, WGT_ERR_UNAVAILABLE, "timestamp-query");
        CHECK(run_adds(gpu, 2), "adds after the refused switch");
        wgt_context_release(gpu);
        return;
    }
    CHECK_ERROR(wgt_context_gpu_time(gpu, &t) != WGT_OK, WGT_ERR_USAGE, "off");
    CHECK(wgt_context_gpu_timing(gpu, 1) == WGT_OK, "%s", wgt_last_error());
    CHECK(run_adds(gpu, 5), "adds with timing on give wrong values: %s", wgt_last_error());
    CHECK(wgt_context_gpu_time(gpu, &t) == WGT_OK, "%s", wgt_last_error());
    /* Each eval submits its own batch, so each add is a pass of its own (the data reads
     * between them may add passes of their own). */
    CHECK(t.passes >= 5 && t.untimed_passes == 0, "passes %llu, untimed %llu", (unsigned long long)t.passes,
          (unsigned long long)t.untimed_passes);
    CHECK(t.ms > 0 && t.ms < 10000, "GPU time %g ms for 5 adds", t.ms);
    CHECK(wgt_context_gpu_time(gpu, &t) == WGT_OK && t.passes == 0 && t.ms == 0,
          "a second read finds %llu passes, %g ms", (unsigned long long)t.passes, t.ms);
    /* More passes than the query set holds between reads: counted as untimed, not an error. */
    CHECK(run_adds(gpu, 2100), "many adds with timing on: %s", wgt_last_error());
    CHECK(wgt_context_gpu_time(gpu, &t) == WGT_OK, "%s", wgt_last_error());
    CHECK(t.passes == 2048 && t.untimed_passes >= 52, "passes %llu, untimed %llu", (unsigned long long)t.passes,
          (unsigned long long)t.untimed_passes);
    CHECK(wgt_context_gpu_timing(gpu, 0) == WGT_OK, "%s", wgt_last_error());
    CHECK(run_adds(gpu, 2), "adds after timing was turned off");
    CHECK_ERROR(wgt_context_gpu_time(gpu, &t) != WGT_OK, WGT_ERR_USAGE, "off");
    wgt_context_release(gpu);
}

/* Per-dispatch timing: every kernel run is timed in a pass of its own and summed by kernel,
 * past the query set's 2048 passes (the set is read early and starts over). */
TEST(gpu_timing_per_dispatch_sums_time_by_kernel) {
    wgt_context *gpu = test_webgpu_context();
    if (!gpu) return;
    wgt_webgpu *w = (wgt_webgpu *)wgt_context_record(gpu)->backend;
    wgt_gpu_kernel_time k[16];
    if (!w->has_timestamp) {
        test_skip("adapter %s has no timestamp-query feature", w->adapter.name);
        wgt_context_release(gpu);
        return;
    }
    CHECK(wgt_context_gpu_timing(gpu, 1) == WGT_OK, "%s", wgt_last_error());
    CHECK_ERROR(wgt_context_gpu_kernel_times(gpu, k, 16) < 0, WGT_ERR_USAGE, "not per dispatch");
    int64_t n = 37;
    wgt_tensor *a = wgt_full(gpu, WGT_F32, 1, &n, 1.5), *x = wgt_full(gpu, WGT_F32, 1, &n, 0);
    CHECK(a && x && wgt_eval(1, &x) == WGT_OK, "%s", wgt_last_error());
    CHECK(wgt_context_gpu_timing(gpu, 2) == WGT_OK, "%s", wgt_last_error());
    const int runs = 2100; /* more than the set's 2048 passes */
    for (int i = 0; i < runs && x; i++) {
        wgt_tensor *y = wgt_add(x, a);
        wgt_release(x);
        x = y;
        if (!x || wgt_eval(1, &x) != WGT_OK) break;
    }
    wgt_gpu_time t;
    int count = wgt_context_gpu_kernel_times(gpu, k, 16);
    CHECK(count >= 1, "%s", wgt_last_error());
    uint64_t most = 0;
    for (int i = 0; i < count; i++) {
        CHECK(k[i].label[0] && k[i].ms >= 0 && (i == 0 || k[i].ms <= k[i - 1].ms), "entry %d: '%s' %g ms", i, k[i].label,
              k[i].ms);
        if (k[i].dispatches > most) most = k[i].dispatches;
    }
    CHECK(most == (uint64_t)runs, "the add kernel ran %d times; the most-run kernel counted %llu", runs,
          (unsigned long long)most);
    /* The read started the count again. */
    CHECK(wgt_context_gpu_time(gpu, &t) == WGT_OK && t.passes == 0, "passes after the read: %llu",
          (unsigned long long)t.passes);
    float got[37];
    CHECK(x && wgt_tensor_read(x, got, sizeof got) == WGT_OK && got[36] == 1.5f * runs, "value %g, wanted %g", got[36],
          1.5 * runs);
    CHECK(wgt_context_gpu_timing(gpu, 0) == WGT_OK, "%s", wgt_last_error());
    wgt_release(a), wgt_release(x);
    wgt_context_release(gpu);
}
