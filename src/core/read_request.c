/*
 * Asynchronous reads. A request runs the recorded work its tensor depends on, then asks the
 * backend to copy the tensor's bytes to a mapped staging buffer; the copy joins the current
 * batch, so requests made one after another share a submission, and nothing waits until the
 * caller polls or waits. Views are first copied to a contiguous tensor on the device, so the
 * transfer is exactly the tensor's bytes (widened to whole words at the ends). Data already on
 * the host, and every CPU tensor, is copied at once.
 */
#include <stdlib.h>
#include <string.h>

#include "node.h"

/* The record a read request's handle names (handles.c): a released request's handle is stale
 * in the table, so a record reached here is live. */
struct wgt_read {
    wgt_context *ctx;
    wgt_tensor *src; /* contiguous; holds the storage while the copy is in flight */
    void *dst;
    size_t nbytes, skip; /* bytes wanted, and where they start in the widened transfer */
    wgt_pending_read *pending;
    int done;
    int checks; /* the tensor depends on index checks whose record is read with it */
    uint64_t check_mark; /* those reads of the record (wgt_index_checks_mark) */
};

wgt_read *wgt_read_begin(wgt_tensor *t, void *dst, size_t nbytes) {
    static const char fn[] = "wgt_read_begin";
    if (wgt_check_tensor(fn, "tensor", t) != WGT_OK) return NULL;
    if (t->storage->symbolic) {
        wgt_error(WGT_ERR_USAGE, "%s: the tensor is %s; it has values only inside wgt_graph_dispatch", fn,
                  t->storage->input_name ? "a graph input" : "computed from graph inputs");
        return NULL;
    }
    if (!(t->usage & WGT_USAGE_READABLE)) {
        wgt_error(WGT_ERR_USAGE, "%s: the tensor was created without the readable usage", fn);
        return NULL;
    }
    size_t want = wgt_tensor_nbytes(t);
    if (nbytes != want) {
        wgt_error(WGT_ERR_USAGE, "%s: byte count %zu does not match the tensor's %zu bytes (%lld %s elements)", fn,
                  nbytes, want, (long long)wgt_tensor_numel(t), wgt_dtype_name(t->dtype));
        return NULL;
    }
    if (want && !dst) {
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: destination is NULL", fn);
        return NULL;
    }
    wgt_read *r = calloc(1, sizeof *r);
    if (!r) {
        wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory", fn);
        return NULL;
    }
    r->ctx = t->storage->ctx;
    r->dst = dst;
    r->nbytes = nbytes;
    wgt_backend *be = r->ctx->backend;
    wgt_storage *s = t->storage;
    /* Block types come back whole through the synchronous read, which joins the device
     * layout's two parts (block_layout.c). */
    int on_host = be->host_resident || !be->read_begin || (s->host_valid && !s->pending_writers) || s->block_dtype;
    if (want == 0 || on_host) { /* nothing to wait for */
        if (want && wgt_tensor_read(t, dst, nbytes) != WGT_OK) {
            free(r);
            return NULL;
        }
        r->done = 1;
        return r;
    }
    int contiguous = wgt_is_contiguous(t->ndim, t->shape, t->strides);
    r->src = contiguous ? wgt_retain(t) : wgt_contiguous(t);
    if (!r->src || wgt_flush_for(r->src->storage, 0) != WGT_OK) goto fail;
    s = r->src->storage;
    if (s->failed && !s->failed_in_run) {
        wgt_check_tensor(fn, "tensor", r->src);
        goto fail;
    }
    if (!s->device_valid) { /* never written on the device: the host copy (or zeros) is the value */
        if (wgt_tensor_read(r->src, dst, nbytes) != WGT_OK) goto fail;
        r->done = 1;
        return r;
    }
    /* Values that depend on unread index checks come back only with the checks' verdict, as
     * do those a run already found failed (failed_in_run: a verdict that came early). */
    if (s->check_mask && wgt_index_checks_begin(r->ctx) != WGT_OK) goto fail;
    r->checks = s->check_mask != 0 || s->failed;
    r->check_mark = wgt_index_checks_mark(r->ctx);
    size_t first = wgt_dtype_bytes(r->src->dtype, r->src->offset);
    size_t lo = first & ~(size_t)3, hi = (first + nbytes + 3) & ~(size_t)3;
    r->skip = first - lo;
    if (be->read_begin(be, s->buffer, lo, hi - lo, &r->pending) != WGT_OK) goto fail;
    return r;
fail:
    wgt_release(r->src);
    free(r);
    return NULL;
}

static wgt_status finish(wgt_read *r) {
    wgt_backend *be = r->ctx->backend;
    const char *bytes = be->read_data(be, r->pending);
    if (!bytes) return wgt_error(WGT_ERR_INTERNAL, "wgt_read: the finished read has no data");
    wgt_status st;
    if (r->checks) {
        if ((st = wgt_index_checks_finish_through(r->ctx, r->check_mark, 0)) != WGT_OK) return st;
        r->src->storage->failed_in_run = 0; /* reported here, whichever way it was found */
        if ((st = wgt_check_tensor("wgt_read", "tensor", r->src)) != WGT_OK) return st;
    }
    memcpy(r->dst, bytes + r->skip, r->nbytes);
    be->read_release(be, r->pending);
    r->pending = NULL;
    r->done = 1;
    wgt_release(r->src);
    r->src = NULL;
    return WGT_OK;
}

wgt_status wgt_read_poll(wgt_read *r, int *done) {
    if (!r) return wgt_error_if_clear(WGT_ERR_INVALID_ARGUMENT, "wgt_read_poll: request is NULL");
    if (!done) return wgt_error(WGT_ERR_INVALID_ARGUMENT, "wgt_read_poll: done is NULL");
    *done = r->done;
    if (r->done) return WGT_OK;
    wgt_backend *be = r->ctx->backend;
    int ready = 0;
    wgt_status st = be->read_poll(be, r->pending, &ready);
    if (st != WGT_OK || !ready) return st;
    st = finish(r);
    *done = st == WGT_OK;
    return st;
}

wgt_status wgt_read_wait(wgt_read *r) {
    if (!r) return wgt_error_if_clear(WGT_ERR_INVALID_ARGUMENT, "wgt_read_wait: request is NULL");
    if (r->done) return WGT_OK;
    wgt_backend *be = r->ctx->backend;
    wgt_status st = be->read_wait(be, r->pending);
    return st != WGT_OK ? st : finish(r);
}

void wgt_read_release(wgt_read *r) {
    if (!r) return;
    if (r->pending) r->ctx->backend->read_release(r->ctx->backend, r->pending);
    wgt_release(r->src);
    free(r);
}
