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
 */
#include <stdlib.h>

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
};

static void release(wgt_webgpu *w) {
    struct wgt_wgpu_timestamps *t = w->timestamps;
    if (!t) return;
    /* Released, not destroyed: submitted passes may still write into the set. */
    if (t->set) w->p->wgpuQuerySetRelease(t->set);
    if (t->resolved.handle) w->p->wgpuBufferRelease(t->resolved.handle);
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
    if (w->timestamps) {
        w->timestamps->used = 0;
        w->timestamps->untimed = 0;
        return WGT_OK;
    }
    return create(w);
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
    if ((st = wgt_wgpu_submit(w)) != WGT_OK) return st; /* passes still being recorded end now */
    uint32_t n = t->used;
    out->untimed_passes = t->untimed;
    t->used = 0;
    t->untimed = 0;
    if (n == 0) return WGT_OK;
    if ((st = wgt_wgpu_resolve_queries(w, t->set, 0, n, t->resolved.handle, 0)) != WGT_OK ||
        (st = wgt_wgpu_buffer_read(be, &t->resolved, 0, t->stamps, n * sizeof *t->stamps)) != WGT_OK)
        return st;
    for (uint32_t i = 0; i + 1 < n; i += 2) {
        /* A driver whose clock stepped back would give end < beginning: counted as zero. */
        if (t->stamps[i + 1] > t->stamps[i]) out->ms += (double)(t->stamps[i + 1] - t->stamps[i]) * 1e-6;
        out->passes++;
    }
    return WGT_OK;
}

void wgt_wgpu_timestamps_shutdown(wgt_webgpu *w) { release(w); }
