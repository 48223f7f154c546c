/*
 * Buffer pools. Creating a driver buffer costs an allocation and an error-scope round trip
 * (two waits on the instance), far more than recording a small kernel, and tensors come and
 * go at the rate of ops. So a buffer its owner let go is kept, bucketed by size class, and
 * the next request of that class takes the one pooled last. Classes are powers of two in four
 * steps (256 bytes, then 320, 384, 448, 512, 640, ...), so a buffer is at most 25% larger
 * than the request it serves.
 *
 * Reuse needs no fence: a queue runs its work in order, so whatever earlier work still reads
 * or writes the old contents finishes before the new owner's work runs (queue writes submit
 * the recorded batch first, see buffers.c). A pool keeps at most its limit in bytes; past it
 * the buffers pooled longest ago go back to the driver, as do all of them on trim. Before a
 * buffer goes back, the cached bind groups that name it are dropped: they would keep its
 * memory, and a new buffer at the same address must never meet them.
 */
#include <stdio.h>
#include <stdlib.h>

#include "webgpu_internal.h"

#define MIN_CLASS_LOG2 8 /* 256 bytes: smaller requests share the smallest class */
#define MAX_CLASS_LOG2 62
#define CLASS_COUNT ((MAX_CLASS_LOG2 + 1 - MIN_CLASS_LOG2) * 4 + 1)

struct wgt_wgpu_pool {
    WGPUFlags usage;
    const char *label;
    uint64_t limit;
    int counts_live;
    wgt_buffer *classes[CLASS_COUNT]; /* each a list, the buffer pooled last first */
    wgt_buffer *oldest, *newest;      /* every pooled buffer, by when it was pooled */
    wgt_buffer *used;                 /* every buffer handed out and not yet put back */
    int detached;                     /* the device is gone: put back only frees the record */
    uint64_t in_use, pooled, peak, created, reused; /* bytes of driver buffers; counts */
};

static atomic_llong live_buffers; /* storage buffers created minus released, for leak tests */

long long wgt_wgpu_live_buffers(void) { return atomic_load(&live_buffers); }

/* The class that serves n bytes (n > 0) and its size in *bytes, or -1 past the largest. */
static int size_class(uint64_t n, uint64_t *bytes) {
    if (n <= 1ull << MIN_CLASS_LOG2) {
        *bytes = 1ull << MIN_CLASS_LOG2;
        return 0;
    }
    int k = 63 - __builtin_clzll(n - 1); /* 2^k < n <= 2^(k+1) */
    if (k > MAX_CLASS_LOG2) return -1;
    uint64_t step = 1ull << (k - 2);
    uint64_t j = (n - (1ull << k) + step - 1) / step; /* 1..4 */
    *bytes = (1ull << k) + j * step;
    return (k - MIN_CLASS_LOG2) * 4 + (int)j;
}

wgt_wgpu_pool *wgt_wgpu_pool_create(WGPUFlags usage, const char *label, uint64_t limit_bytes, int counts_live) {
    wgt_wgpu_pool *pool = calloc(1, sizeof *pool);
    if (!pool) {
        wgt_error(WGT_ERR_OUT_OF_MEMORY, "out of host memory for a buffer pool");
        return NULL;
    }
    pool->usage = usage;
    pool->label = label;
    pool->limit = limit_bytes;
    pool->counts_live = counts_live;
    return pool;
}

static void unlink_pooled(wgt_wgpu_pool *pool, wgt_buffer *b) {
    if (b->class_prev) b->class_prev->class_next = b->class_next;
    else pool->classes[b->size_class] = b->class_next;
    if (b->class_next) b->class_next->class_prev = b->class_prev;
    if (b->age_prev) b->age_prev->age_next = b->age_next;
    else pool->oldest = b->age_next;
    if (b->age_next) b->age_next->age_prev = b->age_prev;
    else pool->newest = b->age_prev;
    b->class_prev = b->class_next = b->age_prev = b->age_next = NULL;
    pool->pooled -= b->alloc;
}

static void link_used(wgt_wgpu_pool *pool, wgt_buffer *b) {
    b->used_prev = NULL;
    b->used_next = pool->used;
    if (pool->used) pool->used->used_prev = b;
    pool->used = b;
}

static void unlink_used(wgt_wgpu_pool *pool, wgt_buffer *b) {
    if (b->used_prev) b->used_prev->used_next = b->used_next;
    else pool->used = b->used_next;
    if (b->used_next) b->used_next->used_prev = b->used_prev;
    b->used_prev = b->used_next = NULL;
}

static void release_to_driver(wgt_webgpu *w, wgt_wgpu_pool *pool, wgt_buffer *b) {
    if (b->bind_refs) wgt_wgpu_bind_cache_forget(w, b);
    /* Release, not destroy: commands already recorded may still use it, and WebGPU keeps the
     * memory alive until they finish. */
    w->p->wgpuBufferRelease(b->handle);
    if (pool->counts_live) atomic_fetch_sub(&live_buffers, 1);
    free(b);
}

static wgt_status create_handle(wgt_webgpu *w, wgt_wgpu_pool *pool, uint64_t bytes, WGPUBuffer *out) {
    WGPUBufferDescriptor desc = {0};
    desc.label = wgpu_str(pool->label);
    desc.usage = pool->usage;
    desc.size = bytes;
    wgt_wgpu_push_scope(w);
    WGPUBuffer h = w->p->wgpuDeviceCreateBuffer(w->device, &desc);
    char what[96];
    snprintf(what, sizeof what, "creating a %llu-byte buffer", (unsigned long long)bytes);
    wgt_status st = wgt_wgpu_pop_scope(w, what);
    if (st != WGT_OK || !h) {
        if (h) w->p->wgpuBufferRelease(h);
        return st != WGT_OK ? st : wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s failed", what);
    }
    *out = h;
    return WGT_OK;
}

static void drain(wgt_webgpu *w, wgt_wgpu_pool *pool) {
    while (pool->oldest) {
        wgt_buffer *b = pool->oldest;
        unlink_pooled(pool, b);
        release_to_driver(w, pool, b);
    }
}

/* Gives every buffer both pools hold back to the driver; 0 when there was none. */
static int release_idle(wgt_webgpu *w) {
    int any = 0;
    wgt_wgpu_pool *pools[2] = {w->storage_pool, w->read_pool};
    for (int i = 0; i < 2; i++)
        if (pools[i]) {
            any |= pools[i]->oldest != NULL;
            drain(w, pools[i]);
        }
    return any;
}

static uint64_t held_bytes(const wgt_webgpu *w) {
    uint64_t held = 0;
    const wgt_wgpu_pool *pools[2] = {w->storage_pool, w->read_pool};
    for (int i = 0; i < 2; i++)
        if (pools[i]) held += pools[i]->in_use + pools[i]->pooled;
    return held;
}

/* Keeps what the pools hold within the context's memory budget, giving idle buffers back
 * first; the request that still does not fit is WGT_ERR_OUT_OF_MEMORY, before the driver is
 * asked. */
static wgt_status within_budget(wgt_webgpu *w, uint64_t bytes) {
    if (!w->memory_budget || held_bytes(w) + bytes <= w->memory_budget) return WGT_OK;
    release_idle(w);
    uint64_t held = held_bytes(w);
    if (held + bytes <= w->memory_budget) return WGT_OK;
    return wgt_error(WGT_ERR_OUT_OF_MEMORY,
                     "out of device memory: %llu MiB asked for with %llu MiB held by tensors and pending work; "
                     "the context may hold %llu MiB (wgt_context_options.max_device_bytes)",
                     (unsigned long long)((bytes + (1u << 20) - 1) >> 20), (unsigned long long)(held >> 20),
                     (unsigned long long)(w->memory_budget >> 20));
}

wgt_status wgt_wgpu_pool_get(wgt_webgpu *w, wgt_wgpu_pool *pool, uint64_t nbytes, int *reused, wgt_buffer **out) {
    uint64_t size = (nbytes + 3) & ~(uint64_t)3;
    if (size == 0) size = 4;
    uint64_t bytes;
    int c = size_class(size, &bytes);
    uint64_t max = w->limits.limits.maxBufferSize;
    if (c < 0 || (max && bytes > max)) { /* no room to round up: an exact buffer, never pooled */
        c = -1;
        bytes = size;
    }
    wgt_buffer *b = c >= 0 ? pool->classes[c] : NULL;
    if (b) {
        unlink_pooled(pool, b);
        pool->in_use += b->alloc;
        pool->reused++;
        b->size = size;
        link_used(pool, b);
        *reused = 1;
        *out = b;
        return WGT_OK;
    }
    wgt_status st = within_budget(w, bytes);
    if (st != WGT_OK) return st;
    b = calloc(1, sizeof *b);
    if (!b) return wgt_error(WGT_ERR_OUT_OF_MEMORY, "out of host memory for a buffer handle");
    wgt_status before = wgt_last_status();
    st = create_handle(w, pool, bytes, &b->handle);
    if (st == WGT_ERR_OUT_OF_MEMORY && release_idle(w)) {
        /* The device was full, partly of our idle buffers, now given back: try once more. A
         * success leaves the thread's error state as it found it. */
        st = create_handle(w, pool, bytes, &b->handle);
        if (st == WGT_OK && before == WGT_OK) wgt_clear_error();
    }
    if (st != WGT_OK) {
        free(b);
        return st;
    }
    if (pool->counts_live) atomic_fetch_add(&live_buffers, 1);
    b->size = size;
    b->alloc = bytes;
    b->size_class = c;
    pool->in_use += bytes;
    pool->created++;
    if (pool->in_use + pool->pooled > pool->peak) pool->peak = pool->in_use + pool->pooled;
    link_used(pool, b);
    *reused = 0;
    *out = b;
    return WGT_OK;
}

wgt_status wgt_wgpu_pool_adopt(wgt_webgpu *w, wgt_wgpu_pool *pool, WGPUBuffer handle, uint64_t size, wgt_buffer **out) {
    wgt_buffer *b = calloc(1, sizeof *b);
    if (!b) return wgt_error(WGT_ERR_OUT_OF_MEMORY, "out of host memory for a buffer handle");
    w->p->wgpuBufferAddRef(handle); /* ours, released as any buffer the pool never keeps */
    if (pool->counts_live) atomic_fetch_add(&live_buffers, 1);
    b->handle = handle;
    b->size = size;
    b->alloc = 0; /* the caller's memory: not within our budget or counters */
    b->size_class = -1;
    link_used(pool, b);
    *out = b;
    return WGT_OK;
}

void wgt_wgpu_pool_put(wgt_webgpu *w, wgt_wgpu_pool *pool, wgt_buffer *b) {
    pool->in_use -= b->alloc;
    unlink_used(pool, b);
    if (pool->detached) { /* its driver buffer went with the device */
        free(b);
        return;
    }
    /* A lost device's buffers can never be used again: keeping them would only hold memory. */
    if (b->size_class < 0 || b->alloc > pool->limit || atomic_load(&w->lost)) {
        release_to_driver(w, pool, b);
        return;
    }
    b->class_prev = NULL;
    b->class_next = pool->classes[b->size_class];
    if (b->class_next) b->class_next->class_prev = b;
    pool->classes[b->size_class] = b;
    b->age_next = NULL;
    b->age_prev = pool->newest;
    if (pool->newest) pool->newest->age_next = b;
    else pool->oldest = b;
    pool->newest = b;
    pool->pooled += b->alloc;
    while (pool->pooled > pool->limit) {
        wgt_buffer *old = pool->oldest;
        unlink_pooled(pool, old);
        release_to_driver(w, pool, old);
    }
}

void wgt_wgpu_pool_discard(wgt_webgpu *w, wgt_wgpu_pool *pool, wgt_buffer *b) {
    pool->in_use -= b->alloc;
    unlink_used(pool, b);
    if (pool->detached) free(b);
    else release_to_driver(w, pool, b);
}

void wgt_wgpu_pool_detach(wgt_webgpu *w, wgt_wgpu_pool *pool) {
    if (!pool || pool->detached) return;
    drain(w, pool);
    for (wgt_buffer *b = pool->used; b; b = b->used_next) {
        if (b->bind_refs) wgt_wgpu_bind_cache_forget(w, b);
        w->p->wgpuBufferRelease(b->handle);
        b->handle = NULL;
        if (pool->counts_live) atomic_fetch_sub(&live_buffers, 1);
    }
    pool->detached = 1;
}

void wgt_wgpu_pool_destroy(wgt_webgpu *w, wgt_wgpu_pool *pool) {
    if (!pool) return;
    wgt_wgpu_pool_detach(w, pool);
    while (pool->used) { /* owners that never put theirs back: nothing may refer to them now */
        wgt_buffer *b = pool->used;
        unlink_used(pool, b);
        free(b);
    }
    free(pool);
}

/* ---- backend table entries ---- */

void wgt_wgpu_stats(wgt_backend *be, wgt_stats *out) {
    wgt_webgpu *w = (wgt_webgpu *)be;
    const wgt_wgpu_pool *pool = w->storage_pool;
    out->device_bytes_in_use = pool->in_use;
    out->device_bytes_pooled = pool->pooled;
    out->device_bytes_peak = pool->peak;
    out->buffers_created = pool->created;
    out->buffers_reused = pool->reused;
    out->submits = w->submit_serial;
    out->dispatches = w->dispatches;
    out->compute_passes = w->passes;
    out->kernels_cached = w->pipeline_count + wgt_wgpu_fused_pipeline_count(w);
    out->bind_groups_created = w->bind_groups_created;
}

void wgt_wgpu_trim(wgt_backend *be) {
    wgt_webgpu *w = (wgt_webgpu *)be;
    release_idle(w);
    wgt_wgpu_uploads_release(w);
    wgt_wgpu_pipeline_caches_bound(w, 1); /* trim gives back what can be made again */
    w->storage_pool->peak = w->storage_pool->in_use;
    w->read_pool->peak = w->read_pool->in_use;
}
