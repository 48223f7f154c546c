/*
 * Asynchronous reads. A request copies its bytes into a staging buffer of its own (MAP_READ,
 * from the read pool), recorded with the current batch and not submitted: requests begun
 * before the next submit share it, and work recorded after the request is not held back. The
 * first poll or wait submits the batch if the copy has not gone to the queue yet (each submit
 * advances w->submit_serial; a request remembers the serial its copy was recorded under),
 * then asks Dawn once to map the staging buffer. A poll lets Dawn deliver callbacks
 * (wgpuInstanceProcessEvents) and never blocks; a wait blocks within the context's timeout.
 *
 * Dawn's map callback writes into the request. A request released while its mapping is still
 * pending therefore cannot be freed: its staging buffer is released (which cancels the
 * mapping) and it waits on the zombie list until the callback has been delivered, or until
 * the instance is released at shutdown, which delivers every callback still owed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "webgpu_internal.h"

enum { READ_RECORDED, READ_MAPPING, READ_DONE, READ_FAILED };

struct wgt_pending_read {
    int state;
    wgt_buffer *staging; /* NULL for an empty read */
    uint64_t bytes;      /* copied and mapped: the request's size rounded up to 4 */
    uint64_t serial;     /* w->submit_serial when the copy was recorded */
    WGPUFuture future;
    const void *data;    /* the mapped range, once done */
    wgt_status failure;  /* READ_FAILED: what to report again */
    char failure_message[512];
    /* Written by the map callback. */
    int callback_ran;
    uint32_t map_status;
    char map_message[256];
    struct wgt_pending_read *next_zombie;
};

static void on_mapped(uint32_t status, WGPUStringView message, void *u1, void *u2) {
    (void)u2;
    wgt_pending_read *r = u1;
    r->map_status = status;
    wgt_wgpu_copy_string(r->map_message, sizeof r->map_message, message);
    r->callback_ran = 1;
}

/* Frees the released requests whose callbacks have run. */
static void sweep_zombies(wgt_webgpu *w) {
    for (wgt_pending_read **link = &w->zombie_reads; *link;) {
        wgt_pending_read *r = *link;
        if (r->callback_ran) {
            *link = r->next_zombie;
            free(r);
        } else {
            link = &r->next_zombie;
        }
    }
}

static wgt_status fail(wgt_pending_read *r, wgt_status st, const char *message) {
    r->state = READ_FAILED;
    r->failure = st;
    snprintf(r->failure_message, sizeof r->failure_message, "%s", message);
    return wgt_error(st, "%s", r->failure_message);
}

wgt_status wgt_wgpu_read_begin(wgt_backend *be, wgt_buffer *buf, size_t offset, size_t n, wgt_pending_read **out) {
    wgt_webgpu *w = (wgt_webgpu *)be;
    wgt_status st = wgt_wgpu_status(w);
    if (st != WGT_OK) return st;
    if (offset % 4 || offset > buf->size || n > buf->size - offset)
        return wgt_error(WGT_ERR_INTERNAL, "read of %zu bytes at %zu from a %llu-byte buffer is not word aligned or too long",
                         n, offset, (unsigned long long)buf->size);
    sweep_zombies(w);
    wgt_pending_read *r = calloc(1, sizeof *r);
    if (!r) return wgt_error(WGT_ERR_OUT_OF_MEMORY, "out of host memory for a read request");
    if (n == 0) {
        static const char nothing;
        r->state = READ_DONE;
        r->data = &nothing;
        *out = r;
        return WGT_OK;
    }
    /* Buffers are whole words (buf->size is rounded up to 4), so the copy may round up too. */
    r->bytes = ((uint64_t)n + 3) & ~(uint64_t)3;
    int reused;
    if ((st = wgt_wgpu_pool_get(w, w->read_pool, r->bytes, &reused, &r->staging)) != WGT_OK) {
        free(r);
        return st;
    }
    buf->used_serial = w->submit_serial + 1; /* a later queue write must not overtake the copy */
    if ((st = wgt_wgpu_copy_buffer(w, buf->handle, offset, r->staging->handle, 0, r->bytes)) != WGT_OK) {
        wgt_wgpu_pool_put(w, w->read_pool, r->staging);
        free(r);
        return st;
    }
    r->serial = w->submit_serial;
    r->state = READ_RECORDED;
    *out = r;
    return WGT_OK;
}

/* Moves r on as far as it can go; block: wait for the mapping rather than just look. */
static wgt_status advance(wgt_webgpu *w, wgt_pending_read *r, int block) {
    if (r->state == READ_DONE) return WGT_OK;
    if (r->state == READ_FAILED) return wgt_error(r->failure, "%s", r->failure_message);
    wgt_status st = wgt_wgpu_status(w);
    if (st != WGT_OK) return st;
    if (r->state == READ_RECORDED) {
        if (w->submit_serial == r->serial && (st = wgt_wgpu_submit(w)) != WGT_OK) return st;
        if (w->failed_serial == r->serial + 1)
            return fail(r, WGT_ERR_BACKEND, "the command buffer holding the read's copy could not be submitted");
        WGPUCallbackInfo cb = {0};
        cb.mode = WGPU_CALLBACK_MODE_ALLOW_PROCESS_EVENTS; /* delivered by polls and by waits */
        cb.callback = (void (*)(void))on_mapped;
        cb.userdata1 = r;
        r->future = w->p->wgpuBufferMapAsync(r->staging->handle, WGPU_MAP_MODE_READ, 0, (size_t)r->bytes, cb);
        r->state = READ_MAPPING;
    }
    if (!r->callback_ran) {
        if (!block) w->p->wgpuInstanceProcessEvents(w->instance);
        else if ((st = wgt_wgpu_wait_work(w, r->future, "a read from the device")) != WGT_OK) return st;
    }
    if (!r->callback_ran) return WGT_OK;
    if (r->map_status != WGPU_REQUEST_STATUS_SUCCESS) {
        st = wgt_wgpu_status(w); /* a lost device explains a failed map best */
        if (st != WGT_OK) return st;
        char why[400];
        snprintf(why, sizeof why, "mapping the read's staging buffer failed: %s", r->map_message);
        return fail(r, WGT_ERR_BACKEND, why);
    }
    r->data = w->p->wgpuBufferGetConstMappedRange(r->staging->handle, 0, (size_t)r->bytes);
    if (!r->data) return fail(r, WGT_ERR_BACKEND, "the mapped staging buffer of a read has no memory range");
    r->state = READ_DONE;
    return WGT_OK;
}

wgt_status wgt_wgpu_read_poll(wgt_backend *be, wgt_pending_read *r, int *done) {
    wgt_webgpu *w = (wgt_webgpu *)be;
    *done = 0;
    wgt_status st = advance(w, r, 0);
    sweep_zombies(w); /* the events just processed may have been theirs */
    *done = st == WGT_OK && r->state == READ_DONE;
    return st;
}

wgt_status wgt_wgpu_read_wait(wgt_backend *be, wgt_pending_read *r) {
    wgt_webgpu *w = (wgt_webgpu *)be;
    wgt_status st = advance(w, r, 1);
    if (st == WGT_OK && r->state != READ_DONE) /* the wait returned without the callback: not expected */
        st = fail(r, WGT_ERR_BACKEND, "a read's mapping finished without reporting");
    return st;
}

const void *wgt_wgpu_read_data(wgt_backend *be, wgt_pending_read *r) {
    (void)be;
    return r->state == READ_DONE ? r->data : NULL;
}

void wgt_wgpu_read_release(wgt_backend *be, wgt_pending_read *r) {
    wgt_webgpu *w = (wgt_webgpu *)be;
    if (!r) return;
    if (w->device_released) { /* every callback was delivered when the instance went */
        if (r->staging) wgt_wgpu_pool_discard(w, w->read_pool, r->staging); /* frees the record only */
        free(r);
        return;
    }
    if (r->state == READ_MAPPING && !r->callback_ran) {
        /* Dawn still owes the callback, into r: cancel the mapping by letting the buffer go,
         * and keep r until the cancelled callback has been delivered. */
        wgt_wgpu_pool_discard(w, w->read_pool, r->staging);
        r->staging = NULL;
        r->next_zombie = w->zombie_reads;
        w->zombie_reads = r;
        w->p->wgpuInstanceProcessEvents(w->instance);
        sweep_zombies(w);
        return;
    }
    if (r->staging) {
        int mapped = r->callback_ran && r->map_status == WGPU_REQUEST_STATUS_SUCCESS;
        if (mapped) w->p->wgpuBufferUnmap(r->staging->handle);
        /* Unmapped, or never mapped (its copy may still wait in the batch, but a later copy
         * into the buffer runs after it), the buffer can serve another read. A failed mapping
         * leaves it in no state worth keeping. */
        if (mapped || r->state == READ_RECORDED) wgt_wgpu_pool_put(w, w->read_pool, r->staging);
        else wgt_wgpu_pool_discard(w, w->read_pool, r->staging);
    }
    free(r);
}

void wgt_wgpu_reads_shutdown(wgt_webgpu *w) {
    while (w->zombie_reads) {
        wgt_pending_read *r = w->zombie_reads;
        w->zombie_reads = r->next_zombie;
        free(r);
    }
}
