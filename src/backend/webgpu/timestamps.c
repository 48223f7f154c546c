/*
 * GPU timestamps of compute passes, opt in (src/core/gpu_timing.h). While timing is on, the
 * encoder takes two queries from the set as it begins each compute pass, and Dawn writes the
 * pass's beginning and end into them. Nothing else happens until the time is read: a query
 * keeps its value across submits, so the back-to-back batches a benchmark times are not held
 * up. Reading resolves the queries written since the last read (in nanoseconds) into a
 * buffer, reads it and sums end minus beginning per pass.
 *
 * Dawn rounds timestamps to a coarse quantum unless the device turns the
 * timestamp_quantization toggle off, which device.c does: rounded, a short pass reads as zero.
 *
 * Per-dispatch timing (on = 2) is a profile: the encoder ends the pass after every dispatch,
 * so each kernel's run has its own two stamps, and the pass remembers the kernel's label.
 * When the set fills up, the stamps taken so far are read at once (a sync, acceptable in a
 * profile) and summed by label, and the set starts over.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "webgpu_internal.h"

/* WebGPU's most queries per set: 2048 passes between reads. A pass begun after that is
 * counted as untimed rather than holding up the work for a read. */
#define TIMESTAMP_QUERIES 4096u

struct wgt_wgpu_timestamps {
    WGPUQuerySet set;
    wgt_buffer resolved; /* one u64 per query; QUERY_RESOLVE | COPY_SRC */
    uint32_t used;       /* queries handed to passes since the last read */
    uint64_t untimed;    /* passes begun while the set was full */
    uint64_t stamps[TIMESTAMP_QUERIES];
    /* Per-dispatch timing: each pass's kernel, and the time by kernel read so far. */
    int per_dispatch;
    char labels[TIMESTAMP_QUERIES / 2][sizeof(((wgt_gpu_kernel_time *)0)->label)];
    wgt_gpu_kernel_time *kernels;
    int kernel_count, kernel_capacity;
    wgt_gpu_time folded; /* passes read early because the set was full */
};

static void release(wgt_webgpu *w) {
    struct wgt_wgpu_timestamps *t = w->timestamps;
    if (!t) return;
    /* Released, not destroyed: submitted passes may still write into the set. */
    if (t->set) w->p->wgpuQuerySetRelease(t->set);
    if (t->resolved.handle) w->p->wgpuBufferRelease(t->resolved.handle);
    free(t->kernels);
    free(t);
    w->timestamps = NULL;
}

static wgt_status create(wgt_webgpu *w) {
    struct wgt_wgpu_timestamps *t = calloc(1, sizeof *t);
    if (!t) return wgt_error(WGT_ERR_OUT_OF_MEMORY, "out of host memory for GPU timestamps");
    w->timestamps = t;
    WGPUQuerySetDescriptor qd = {0};
    qd.label = wgpu_str("wgtensor pass timestamps");
    qd.type = WGPU_QUERY_TYPE_TIMESTAMP;
    qd.count = TIMESTAMP_QUERIES;
    WGPUBufferDescriptor bd = {0};
    bd.label = wgpu_str("wgtensor resolved timestamps");
    bd.usage = WGPU_BUFFER_USAGE_QUERY_RESOLVE | WGPU_BUFFER_USAGE_COPY_SRC;
    bd.size = TIMESTAMP_QUERIES * sizeof(uint64_t);
    wgt_wgpu_push_scope(w);
    t->set = w->p->wgpuDeviceCreateQuerySet(w->device, &qd);
    t->resolved.handle = w->p->wgpuDeviceCreateBuffer(w->device, &bd);
    wgt_status st = wgt_wgpu_pop_scope(w, "creating the timestamp query set");
    if (st == WGT_OK && (!t->set || !t->resolved.handle))
        st = wgt_error(WGT_ERR_BACKEND, "creating the timestamp query set or its buffer failed");
    if (st != WGT_OK) {
        release(w);
        return st;
    }
    t->resolved.size = t->resolved.alloc = bd.size;
    t->resolved.size_class = -1;
    return WGT_OK;
}

wgt_status wgt_wgpu_gpu_timing(wgt_backend *be, int on) {
    wgt_webgpu *w = (wgt_webgpu *)be;
    wgt_status st = wgt_wgpu_status(w);
    if (st != WGT_OK) return st;
    if (on && !w->has_timestamp)
        return wgt_error(WGT_ERR_UNAVAILABLE, "GPU timing: adapter %s does not offer the timestamp-query feature",
                         w->adapter.name);
    /* The batch being recorded goes first, so its open pass (timed or not) ends with it and
     * the next dispatch begins a pass of the new setting. */
    if ((st = wgt_wgpu_submit(w)) != WGT_OK) return st;
    if (!on) {
        release(w);
        return WGT_OK;
    }
    if (!w->timestamps && (st = create(w)) != WGT_OK) return st;
    struct wgt_wgpu_timestamps *t = w->timestamps;
    t->used = 0;
    t->untimed = 0;
    t->per_dispatch = on == 2;
    t->kernel_count = 0;
    memset(&t->folded, 0, sizeof t->folded);
    return WGT_OK;
}

int wgt_wgpu_timing_per_dispatch(const wgt_webgpu *w) { return w->timestamps && w->timestamps->per_dispatch; }

void wgt_wgpu_timestamps_label(wgt_webgpu *w, const char *label) {
    struct wgt_wgpu_timestamps *t = w->timestamps;
    if (t->used >= 2) snprintf(t->labels[t->used / 2 - 1], sizeof t->labels[0], "%s", label);
}

static void add_kernel_time(struct wgt_wgpu_timestamps *t, const char *label, double ms) {
    for (int i = 0; i < t->kernel_count; i++)
        if (!strcmp(t->kernels[i].label, label)) {
            t->kernels[i].ms += ms;
            t->kernels[i].dispatches++;
            return;
        }
    if (t->kernel_count == t->kernel_capacity) {
        int cap = t->kernel_capacity ? 2 * t->kernel_capacity : 64;
        wgt_gpu_kernel_time *k = realloc(t->kernels, sizeof *k * (size_t)cap);
        if (!k) return; /* a profile short of one kernel's line rather than a failure */
        t->kernels = k;
        t->kernel_capacity = cap;
    }
    wgt_gpu_kernel_time *k = &t->kernels[t->kernel_count++];
    snprintf(k->label, sizeof k->label, "%s", label);
    k->ms = ms;
    k->dispatches = 1;
}

/* Reads the stamps of the passes submitted since the last read into *out (adding to it) and
 * the kernel table, and starts the set over. */
static wgt_status collect(wgt_webgpu *w, wgt_gpu_time *out) {
    struct wgt_wgpu_timestamps *t = w->timestamps;
    wgt_status st = wgt_wgpu_submit(w); /* passes still being recorded end now */
    if (st != WGT_OK) return st;
    uint32_t n = t->used;
    out->untimed_passes += t->untimed;
    t->used = 0;
    t->untimed = 0;
    if (n == 0) return WGT_OK;
    if ((st = wgt_wgpu_resolve_queries(w, t->set, 0, n, t->resolved.handle, 0)) != WGT_OK ||
        (st = wgt_wgpu_buffer_read(&w->base, &t->resolved, 0, t->stamps, n * sizeof *t->stamps)) != WGT_OK)
        return st;
    for (uint32_t i = 0; i + 1 < n; i += 2) {
        /* A driver whose clock stepped back would give end < beginning: counted as zero. */
        double ms = t->stamps[i + 1] > t->stamps[i] ? (double)(t->stamps[i + 1] - t->stamps[i]) * 1e-6 : 0;
        out->ms += ms;
        out->passes++;
        if (t->per_dispatch) add_kernel_time(t, t->labels[i / 2], ms);
    }
    return WGT_OK;
}

wgt_status wgt_wgpu_timestamps_make_room(wgt_webgpu *w) {
    struct wgt_wgpu_timestamps *t = w->timestamps;
    return t->used + 2 > TIMESTAMP_QUERIES ? collect(w, &t->folded) : WGT_OK;
}

const WGPUPassTimestampWrites *wgt_wgpu_timestamps_for_pass(wgt_webgpu *w, WGPUPassTimestampWrites *writes) {
    struct wgt_wgpu_timestamps *t = w->timestamps;
    if (t->used + 2 > TIMESTAMP_QUERIES) {
        t->untimed++;
        return NULL;
    }
    memset(writes, 0, sizeof *writes);
    writes->querySet = t->set;
    writes->beginningOfPassWriteIndex = t->used;
    writes->endOfPassWriteIndex = t->used + 1;
    t->used += 2;
    return writes;
}

wgt_status wgt_wgpu_gpu_time(wgt_backend *be, wgt_gpu_time *out) {
    wgt_webgpu *w = (wgt_webgpu *)be;
    memset(out, 0, sizeof *out);
    wgt_status st = wgt_wgpu_status(w);
    if (st != WGT_OK) return st;
    struct wgt_wgpu_timestamps *t = w->timestamps;
    if (!t) return wgt_error(WGT_ERR_USAGE, "GPU timing is off: nothing was timed");
    *out = t->folded;
    memset(&t->folded, 0, sizeof t->folded);
    return collect(w, out);
}

static int by_time(const void *a, const void *b) {
    double x = ((const wgt_gpu_kernel_time *)a)->ms, y = ((const wgt_gpu_kernel_time *)b)->ms;
    return (x < y) - (x > y);
}

int wgt_wgpu_gpu_kernel_times(wgt_backend *be, wgt_gpu_kernel_time *out, int max) {
    wgt_webgpu *w = (wgt_webgpu *)be;
    struct wgt_wgpu_timestamps *t = w->timestamps;
    if (!t || !t->per_dispatch) {
        wgt_error(WGT_ERR_USAGE, "GPU timing is not per dispatch: no time by kernel");
        return -1;
    }
    wgt_gpu_time sum;
    if (wgt_wgpu_gpu_time(be, &sum) != WGT_OK) return -1;
    qsort(t->kernels, (size_t)t->kernel_count, sizeof *t->kernels, by_time);
    int n = t->kernel_count < max ? t->kernel_count : max;
    if (n > 0) memcpy(out, t->kernels, sizeof *out * (size_t)n);
    t->kernel_count = 0;
    return n;
}

void wgt_wgpu_timestamps_shutdown(wgt_webgpu *w) { release(w); }
