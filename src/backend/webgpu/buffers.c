/*
 * Device buffers for tensor storage: taken from and given back to the storage pool (pool.c),
 * cleared on request when reused, uploads through the queue, and blocking reads made of read
 * requests (read_requests.c) waited on at once. The context's own buffers come from a pool
 * of their own that keeps none and that wgt_wgpu_stats does not read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "webgpu_internal.h"

#define BUFFER_USAGE (WGPU_BUFFER_USAGE_STORAGE | WGPU_BUFFER_USAGE_COPY_SRC | WGPU_BUFFER_USAGE_COPY_DST)
#define READ_POOL_LIMIT (64ull << 20)

/* What the storage pool may keep idle: 256 MiB, or twice the largest tensor where that is
 * more (so freeing and making the largest tensors in turn still reuses them), at most 4 GiB;
 * on a discrete GPU whose memory is known, up to half the context's memory budget. A
 * training step frees and makes the same large tensors every step (a GPT-2-shaped step at
 * batch 8 turns over more than 10 GiB): each one the pool let go was made again, and making
 * a buffer costs the driver an allocation and Dawn a clear, which took half of such a step on
 * an H200 (152 ms of host time before the first kernel). Device memory the pool keeps is
 * memory no other program can use: wgt_context_trim gives it all back. */
static uint64_t storage_pool_limit(const wgt_webgpu *w) {
    const WGPULimits *l = &w->limits.limits;
    uint64_t largest = l->maxStorageBufferBindingSize < l->maxBufferSize ? l->maxStorageBufferBindingSize : l->maxBufferSize;
    uint64_t limit = 2 * largest;
    if (limit < 256ull << 20) limit = 256ull << 20;
    if (limit > 4ull << 30) limit = 4ull << 30;
    if (w->adapter.adapter_type == WGPU_ADAPTER_DISCRETE_GPU && w->memory_budget / 2 > limit)
        limit = w->memory_budget / 2;
    return limit;
}

wgt_status wgt_wgpu_buffers_init(wgt_webgpu *w) {
    w->storage_pool = wgt_wgpu_pool_create(BUFFER_USAGE, "wgtensor storage", storage_pool_limit(w), 1);
    w->read_pool = wgt_wgpu_pool_create(WGPU_BUFFER_USAGE_MAP_READ | WGPU_BUFFER_USAGE_COPY_DST, "wgtensor read staging",
                                        READ_POOL_LIMIT, 0);
    w->context_pool = wgt_wgpu_pool_create(BUFFER_USAGE, "wgtensor context's own", 0, 1);
    return w->storage_pool && w->read_pool && w->context_pool ? WGT_OK : WGT_ERR_OUT_OF_MEMORY;
}

wgt_status wgt_wgpu_buffer_create(wgt_backend *be, size_t nbytes, int zero, wgt_buffer **out) {
    wgt_webgpu *w = (wgt_webgpu *)be;
    wgt_status st = wgt_wgpu_status(w);
    if (st != WGT_OK) return st;
    int reused;
    wgt_buffer *b;
    if ((st = wgt_wgpu_pool_get(w, w->storage_pool, nbytes, &reused, &b)) != WGT_OK) return st;
    /* A new buffer reads as zeros (WebGPU clears it before first use); a reused one holds what
     * its last owner left, so it is cleared in the batch, after that owner's work. */
    if (reused && zero) b->used_serial = w->submit_serial + 1; /* the clear below is recorded work */
    if (reused && zero && (st = wgt_wgpu_clear_buffer(w, b->handle, 0, b->size)) != WGT_OK) {
        wgt_wgpu_pool_put(w, w->storage_pool, b);
        return st;
    }
    *out = b;
    return WGT_OK;
}

void wgt_wgpu_buffer_destroy(wgt_backend *be, wgt_buffer *buf) {
    wgt_webgpu *w = (wgt_webgpu *)be;
    if (buf) wgt_wgpu_pool_put(w, w->storage_pool, buf);
}

wgt_status wgt_wgpu_buffer_write(wgt_backend *be, wgt_buffer *buf, size_t offset, const void *src, size_t n) {
    wgt_webgpu *w = (wgt_webgpu *)be;
    /* Queue writes run before the next submit: recorded work that uses this buffer must be
     * submitted first, or it would see the new data. Other writes (fresh buffers, uploads of
     * constants) join the batch without breaking it. */
    wgt_status st = wgt_wgpu_status(w);
    if (st != WGT_OK) return st;
    if (offset % 4 || n % 4 || offset + n > buf->size)
        return wgt_error(WGT_ERR_INTERNAL, "buffer write of %zu bytes at %zu is not word aligned or too long", n, offset);
    if (buf->used_serial == w->submit_serial + 1) { /* small data rides along in the batch */
        int staged = 0;
        if (n <= UINT32_MAX && (st = wgt_wgpu_upload_in_batch(w, buf, offset, src, (uint32_t)n, &staged)) != WGT_OK)
            return st;
        if (staged) return WGT_OK;
        if ((st = wgt_wgpu_submit(w)) != WGT_OK) return st;
    }
    if (n > WGT_WGPU_UPLOAD_DIRECT_MAX) return wgt_wgpu_upload_staged(w, buf->handle, offset, src, n);
    w->p->wgpuQueueWriteBuffer(w->queue, buf->handle, offset, src, n);
    return wgt_wgpu_status(w);
}

wgt_status wgt_wgpu_buffer_read(wgt_backend *be, wgt_buffer *buf, size_t offset, void *dst, size_t n) {
    wgt_webgpu *w = (wgt_webgpu *)be;
    wgt_status st = wgt_wgpu_status(w);
    if (st != WGT_OK) return st;
    if (offset % 4 || n % 4 || offset + n > buf->size)
        return wgt_error(WGT_ERR_INTERNAL, "buffer read of %zu bytes at %zu is not word aligned or too long", n, offset);
    /* A read request waited on at once, per piece: large reads go in pieces so the staging
     * buffer stays bounded (and pooled for the next read). */
    const size_t piece_max = 64u << 20;
    for (size_t done = 0; done < n;) {
        size_t piece = n - done < piece_max ? n - done : piece_max;
        wgt_pending_read *r;
        if ((st = wgt_wgpu_read_begin(be, buf, offset + done, piece, &r)) != WGT_OK) return st;
        if ((st = wgt_wgpu_read_wait(be, r)) == WGT_OK) memcpy((char *)dst + done, wgt_wgpu_read_data(be, r), piece);
        wgt_wgpu_read_release(be, r);
        if (st != WGT_OK) return st;
        done += piece;
    }
    return WGT_OK;
}

void *wgt_wgpu_buffer_export(wgt_backend *be, wgt_buffer *buf) {
    wgt_webgpu *w = (wgt_webgpu *)be;
    /* The caller's own submissions come after ours only if ours are submitted now. */
    if (wgt_wgpu_submit(w) != WGT_OK) return NULL;
    return buf->handle;
}

wgt_status wgt_wgpu_context_memory_create(wgt_backend *be, size_t nbytes, wgt_buffer **buffer, void **host) {
    wgt_webgpu *w = (wgt_webgpu *)be;
    *host = NULL;
    wgt_status st = wgt_wgpu_status(w);
    int reused;
    return st != WGT_OK ? st : wgt_wgpu_pool_get(w, w->context_pool, nbytes, &reused, buffer);
}

void wgt_wgpu_context_memory_destroy(wgt_backend *be, wgt_buffer *buffer, void *host) {
    wgt_webgpu *w = (wgt_webgpu *)be;
    if (buffer) wgt_wgpu_pool_put(w, w->context_pool, buffer); /* the pool keeps none: to the driver */
}

void wgt_wgpu_buffers_detach(wgt_webgpu *w) {
    wgt_wgpu_pool_detach(w, w->storage_pool);
    wgt_wgpu_pool_detach(w, w->read_pool);
    wgt_wgpu_pool_detach(w, w->context_pool);
}

void wgt_wgpu_buffers_shutdown(wgt_webgpu *w) {
    wgt_wgpu_pool_destroy(w, w->storage_pool);
    wgt_wgpu_pool_destroy(w, w->read_pool);
    wgt_wgpu_pool_destroy(w, w->context_pool);
    w->storage_pool = w->read_pool = w->context_pool = NULL;
}
