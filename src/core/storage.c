/*
 * Storage residency. A storage keeps a host copy, a device buffer, or both, each with a
 * valid flag. Data moves only when the other side asks for it: a host read syncs the host
 * copy from the device, a kernel launch syncs the buffer from the host. On host-resident
 * backends (CPU) the host copy is the only copy.
 */
#include <stdlib.h>
#include <string.h>

#include "node.h"

void wgt_context_unref(wgt_context *ctx); /* context.c */

wgt_storage *wgt_storage_create(wgt_context *ctx, size_t nbytes) {
    wgt_storage *s = calloc(1, sizeof *s);
    if (!s) {
        wgt_error(WGT_ERR_OUT_OF_MEMORY, "out of host memory for a storage of %zu bytes", nbytes);
        return NULL;
    }
    s->refs = 1;
    s->ctx = ctx;
    s->nbytes = nbytes;
    s->alloc_bytes = (nbytes + 3) & ~(size_t)3;
    if (s->alloc_bytes == 0) s->alloc_bytes = 4;
    ctx->refs++;
    return s;
}

static wgt_status ensure_host_memory(wgt_storage *s) {
    if (s->host) return WGT_OK;
    s->host = calloc(1, s->alloc_bytes);
    if (!s->host)
        return wgt_error(WGT_ERR_OUT_OF_MEMORY, "out of host memory for %zu bytes", s->alloc_bytes);
    return WGT_OK;
}

void wgt_storage_destroy_data(wgt_storage *s) {
    wgt_backend *be = s->ctx->backend;
    if (s->buffer) be->buffer_destroy(be, s->buffer);
    free(s->host);
    s->buffer = NULL;
    s->host = NULL;
    s->host_valid = s->device_valid = 0;
}

void wgt_storage_release(wgt_storage *s) {
    if (!s) return;
    if (--s->refs > 0) {
        if (s->update_refs || s->update_watch) wgt_graph_updates_collect(s->ctx);
        return;
    }
    wgt_context *ctx = s->ctx;
    wgt_storage_destroy_data(s);
    if (s->input_name) { /* a placeholder: its name becomes free again */
        wgt_name_index_remove(&ctx->input_names, s->input_name);
        free(s->input_name);
    }
    if (s->producer) wgt_node_release(s->producer);
    wgt_index_checks_forget(s);
    free(s->failed_message);
    free(s);
    wgt_context_unref(ctx);
}

/* Data the library cannot provide: a graph placeholder or what is computed from one, or the
 * result of work that failed. */
static wgt_status check_has_data(wgt_storage *s) {
    if (s->symbolic)
        return wgt_error(WGT_ERR_USAGE, "the tensor is %s; it has values only inside wgt_graph_dispatch",
                         s->input_name ? "a graph input" : "computed from graph inputs");
    if (s->failed) {
        wgt_status st = wgt_index_checks_settle(s);
        if (st != WGT_OK) return st;
        return wgt_error(s->failed, "the work computing this tensor failed: %s",
                         s->failed_message ? s->failed_message : wgt_status_name(s->failed));
    }
    return WGT_OK;
}

/* Reading s on the host is a synchronisation: the index checks run since the record was last
 * read are read with it where s depends on one (its values must not come back unchecked) or
 * where the device is read anyway (the record's copy then joins the same submission). read
 * (NULL: none) reads the device; a check that failed s then fails the read. */
static wgt_status read_checked(wgt_storage *s, int device_read, size_t offset, size_t n, void *dst) {
    wgt_context *ctx = s->ctx;
    wgt_backend *be = ctx->backend;
    int checks = wgt_index_checks_unread(ctx) && (s->check_mask || device_read);
    wgt_status st = checks ? wgt_index_checks_begin(ctx) : WGT_OK;
    if (st == WGT_OK && device_read) {
        if (s->block_dtype && (offset != 0 || n != s->alloc_bytes))
            st = wgt_error(WGT_ERR_INTERNAL, "a part of a %s storage read from the device", wgt_dtype_name(s->block_dtype));
        else if (s->block_dtype) st = wgt_blocks_download(s, dst);
        else st = be->buffer_read(be, s->buffer, offset, dst, n);
    }
    if (checks) {
        wgt_status cs = wgt_index_checks_finish(ctx, 0);
        if (st == WGT_OK) st = cs;
    }
    return st != WGT_OK ? st : check_has_data(s);
}

/* A caller's buffer may have been written by the caller's own queue work since the host copy
 * was made: while the buffer holds the values, the host copy is read afresh. */
static void drop_stale_host(wgt_storage *s) {
    if (s->external && s->device_valid) s->host_valid = 0;
}

wgt_status wgt_storage_sync_host(wgt_storage *s) {
    wgt_status st = check_has_data(s);
    /* Pending readers need not run for a read: a writer of the host copy flushes them first. */
    if (st != WGT_OK || (st = wgt_flush_for(s, 0)) != WGT_OK || (st = check_has_data(s)) != WGT_OK) return st;
    drop_stale_host(s);
    st = ensure_host_memory(s);
    if (st != WGT_OK) return st;
    if (s->host_valid && !s->check_mask) return WGT_OK;
    wgt_backend *be = s->ctx->backend;
    /* Never written on the device: zeros, or the host copy is the only copy. */
    int device_read = !s->host_valid && !be->host_resident && s->device_valid;
    if ((st = read_checked(s, device_read, 0, s->alloc_bytes, s->host)) == WGT_OK) s->host_valid = 1;
    return st;
}

wgt_status wgt_storage_read_bytes(wgt_storage *s, size_t offset, size_t n, void *dst, int *whole) {
    wgt_status st = check_has_data(s);
    if (st != WGT_OK || (st = wgt_flush_for(s, 0)) != WGT_OK || (st = check_has_data(s)) != WGT_OK) return st;
    wgt_backend *be = s->ctx->backend;
    drop_stale_host(s);
    *whole = s->host_valid || be->host_resident || !s->device_valid;
    if (*whole) return wgt_storage_sync_host(s); /* nothing to gain from a part */
    return read_checked(s, 1, offset, n, dst);
}

wgt_status wgt_storage_sync_device(wgt_storage *s) {
    wgt_status st = check_has_data(s);
    if (st != WGT_OK || (st = wgt_flush_for(s, 1)) != WGT_OK || (st = check_has_data(s)) != WGT_OK) return st;
    return wgt_storage_sync_device_now(s);
}

void wgt_storage_clear_failure(wgt_storage *s) {
    s->failed = WGT_OK;
    s->failed_in_run = 0;
    free(s->failed_message);
    s->failed_message = NULL;
}

wgt_status wgt_storage_sync_device_now(wgt_storage *s) {
    wgt_backend *be = s->ctx->backend;
    if (be->host_resident) return ensure_host_memory(s);
    if (s->device_valid) return WGT_OK;
    wgt_status st;
    if (!s->buffer && (st = be->buffer_create(be, s->alloc_bytes, !s->host_valid, &s->buffer)) != WGT_OK) return st;
    if (s->host_valid && (st = s->block_dtype ? wgt_blocks_upload(s, s->host)
                                              : be->buffer_write(be, s->buffer, 0, s->host, s->alloc_bytes)) != WGT_OK)
        return st;
    s->device_valid = 1; /* a new buffer without host data is zeros, as WebGPU guarantees */
    return WGT_OK;
}

void wgt_storage_mark_device_written(wgt_storage *s) {
    if (s->ctx->backend->host_resident) {
        s->host_valid = 1;
        return;
    }
    s->device_valid = 1;
    s->host_valid = 0;
}

/* Debug aid: fills a fresh output with 0xff bytes (NaN for floats, -1 or max for integers)
 * so a kernel that skips elements is caught by the tests. */
static wgt_status poison(wgt_storage *s) {
    wgt_backend *be = s->ctx->backend;
    if (be->host_resident) {
        memset(s->host, 0xff, s->alloc_bytes);
        return WGT_OK;
    }
    void *junk = malloc(s->alloc_bytes);
    if (!junk) return wgt_error(WGT_ERR_OUT_OF_MEMORY, "out of host memory for %zu bytes", s->alloc_bytes);
    memset(junk, 0xff, s->alloc_bytes);
    wgt_status st = be->buffer_write(be, s->buffer, 0, junk, s->alloc_bytes);
    free(junk);
    return st;
}

wgt_status wgt_storage_prepare_output(wgt_storage *s) {
    wgt_backend *be = s->ctx->backend;
    wgt_status st;
    if (be->host_resident) {
        if ((st = ensure_host_memory(s)) != WGT_OK) return st;
    } else if (!s->buffer && (st = be->buffer_create(be, s->alloc_bytes, 0, &s->buffer)) != WGT_OK) {
        return st;
    }
    return s->ctx->poison ? poison(s) : WGT_OK;
}
