/*
 * Device buffers: creation under an error scope (so out-of-memory is a status, not a
 * crash), uploads through the queue, and reads through one reused staging buffer that is
 * copied into, mapped and waited on.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "webgpu_internal.h"

#define BUFFER_USAGE (WGPU_BUFFER_USAGE_STORAGE | WGPU_BUFFER_USAGE_COPY_SRC | WGPU_BUFFER_USAGE_COPY_DST)

static atomic_llong live_buffers; /* storage buffers created minus released, for leak tests */

long long wgt_wgpu_live_buffers(void) { return atomic_load(&live_buffers); }

wgt_status wgt_wgpu_buffer_create(wgt_backend *be, size_t nbytes, int zero, wgt_buffer **out) {
    wgt_webgpu *w = (wgt_webgpu *)be;
    (void)zero; /* a new buffer reads as zeros: WebGPU clears it before first use */
    wgt_status st = wgt_wgpu_status(w);
    if (st != WGT_OK) return st;
    wgt_buffer *b = calloc(1, sizeof *b);
    if (!b) return wgt_error(WGT_ERR_OUT_OF_MEMORY, "out of host memory for a buffer handle");
    b->size = (nbytes + 3) & ~(uint64_t)3;
    if (b->size == 0) b->size = 4;
    WGPUBufferDescriptor desc = {0};
    desc.label = wgpu_str("wgtensor storage");
    desc.usage = BUFFER_USAGE;
    desc.size = b->size;
    wgt_wgpu_push_scope(w);
    b->handle = w->p->wgpuDeviceCreateBuffer(w->device, &desc);
    char what[96];
    snprintf(what, sizeof what, "creating a %llu-byte buffer", (unsigned long long)b->size);
    st = wgt_wgpu_pop_scope(w, what);
    if (st != WGT_OK || !b->handle) {
        if (b->handle) w->p->wgpuBufferRelease(b->handle);
        free(b);
        return st != WGT_OK ? st : wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s failed", what);
    }
    atomic_fetch_add(&live_buffers, 1);
    *out = b;
    return WGT_OK;
}

void wgt_wgpu_buffer_destroy(wgt_backend *be, wgt_buffer *buf) {
    wgt_webgpu *w = (wgt_webgpu *)be;
    if (!buf) return;
    /* Release, not destroy: commands already recorded may still read it, and WebGPU keeps
     * the memory alive until they finish. */
    w->p->wgpuBufferRelease(buf->handle);
    free(buf);
    atomic_fetch_sub(&live_buffers, 1);
}

wgt_status wgt_wgpu_buffer_write(wgt_backend *be, wgt_buffer *buf, size_t offset, const void *src, size_t n) {
    wgt_webgpu *w = (wgt_webgpu *)be;
    /* Queue writes run before the next submit: recorded work that reads this buffer must be
     * submitted first, or it would see the new data. */
    wgt_status st = wgt_wgpu_submit(w);
    if (st != WGT_OK) return st;
    if (offset % 4 || n % 4 || offset + n > buf->size)
        return wgt_error(WGT_ERR_INTERNAL, "buffer write of %zu bytes at %zu is not word aligned or too long", n, offset);
    w->p->wgpuQueueWriteBuffer(w->queue, buf->handle, offset, src, n);
    return wgt_wgpu_status(w);
}

static void on_mapped(uint32_t status, WGPUStringView message, void *u1, void *u2) {
    (void)u2;
    wgt_wgpu_result *r = u1;
    r->status = status;
    wgt_wgpu_copy_string(r->message, sizeof r->message, message);
    r->done = 1;
}

static wgt_status ensure_staging(wgt_webgpu *w, uint64_t size) {
    if (w->staging && w->staging_size >= size) return WGT_OK;
    if (w->staging) w->p->wgpuBufferRelease(w->staging);
    w->staging = NULL;
    uint64_t want = size < 65536 ? 65536 : size;
    WGPUBufferDescriptor desc = {0};
    desc.label = wgpu_str("wgtensor staging");
    desc.usage = WGPU_BUFFER_USAGE_MAP_READ | WGPU_BUFFER_USAGE_COPY_DST;
    desc.size = want;
    wgt_wgpu_push_scope(w);
    w->staging = w->p->wgpuDeviceCreateBuffer(w->device, &desc);
    wgt_status st = wgt_wgpu_pop_scope(w, "creating a staging buffer for a read");
    if (st != WGT_OK) {
        if (w->staging) w->p->wgpuBufferRelease(w->staging);
        w->staging = NULL;
        return st;
    }
    w->staging_size = want;
    return WGT_OK;
}

wgt_status wgt_wgpu_buffer_read(wgt_backend *be, wgt_buffer *buf, size_t offset, void *dst, size_t n) {
    wgt_webgpu *w = (wgt_webgpu *)be;
    wgt_status st = wgt_wgpu_status(w);
    if (st != WGT_OK) return st;
    if (offset % 4 || n % 4 || offset + n > buf->size)
        return wgt_error(WGT_ERR_INTERNAL, "buffer read of %zu bytes at %zu is not word aligned or too long", n, offset);
    if (n == 0) return WGT_OK;
    /* Large reads go in staging-sized pieces so the staging buffer stays bounded. */
    const uint64_t chunk_max = 64ull << 20;
    for (size_t done = 0; done < n;) {
        uint64_t chunk = n - done < chunk_max ? n - done : chunk_max;
        if ((st = ensure_staging(w, chunk)) != WGT_OK) return st;
        if ((st = wgt_wgpu_copy_buffer(w, buf->handle, offset + done, w->staging, 0, chunk)) != WGT_OK ||
            (st = wgt_wgpu_submit(w)) != WGT_OK)
            return st;
        wgt_wgpu_result *r = &w->map_result; /* not on the stack: see wgt_wgpu_result */
        memset(r, 0, sizeof *r);
        WGPUCallbackInfo cb = {0};
        cb.mode = WGPU_CALLBACK_MODE_WAIT_ANY_ONLY;
        cb.callback = (void (*)(void))on_mapped;
        cb.userdata1 = r;
        st = wgt_wgpu_wait(w, w->p->wgpuBufferMapAsync(w->staging, WGPU_MAP_MODE_READ, 0, (size_t)chunk, cb),
                           "a read from the device");
        if (st != WGT_OK) return st;
        if (r->status != WGPU_REQUEST_STATUS_SUCCESS) {
            st = wgt_wgpu_status(w); /* a lost device explains a failed map best */
            return st != WGT_OK ? st : wgt_error(WGT_ERR_BACKEND, "mapping the staging buffer failed: %s", r->message);
        }
        const void *src = w->p->wgpuBufferGetConstMappedRange(w->staging, 0, (size_t)chunk);
        if (!src) {
            w->p->wgpuBufferUnmap(w->staging);
            return wgt_error(WGT_ERR_BACKEND, "the mapped staging buffer has no memory range");
        }
        memcpy((char *)dst + done, src, (size_t)chunk);
        w->p->wgpuBufferUnmap(w->staging);
        done += (size_t)chunk;
    }
    return WGT_OK;
}

void *wgt_wgpu_buffer_export(wgt_backend *be, wgt_buffer *buf) {
    wgt_webgpu *w = (wgt_webgpu *)be;
    /* The caller's own submissions come after ours only if ours are submitted now. */
    if (wgt_wgpu_submit(w) != WGT_OK) return NULL;
    return buf->handle;
}

void wgt_wgpu_buffers_shutdown(wgt_webgpu *w) {
    if (w->staging) w->p->wgpuBufferRelease(w->staging);
    w->staging = NULL;
}
