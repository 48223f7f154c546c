/*
 * Moving data between the caller's memory and tensors: read, write, the host data pointer
 * and the exported WGPUBuffer. Usage flags are checked first, then byte counts, so a misuse
 * never touches the storage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/strided_iter.h"
#include "core/node.h"

/* Copies between a strided view of storage memory and a dense row-major buffer. */
static void host_transfer(const wgt_tensor *view, char *storage, char *dense, int to_dense) {
    wgt_tensor units; /* block types move whole blocks */
    wgt_block_units(view, &units);
    const wgt_tensor *t = &units;
    size_t es = wgt_dtype_block_bytes(t->dtype);
    const int64_t *strides[1] = {t->strides};
    int64_t offsets[1] = {t->offset};
    int64_t inner, istride[1];
    wgt_strided_iter it;
    if (wgt_numel(t->ndim, t->shape) == 0) return;
    wgt_strided_iter_init(&it, t->ndim, t->shape, 1, strides, offsets, &inner, istride);
    do {
        char *src = storage + (size_t)it.base[0] * es;
        if (istride[0] == 1) {
            if (to_dense) memcpy(dense, src, (size_t)inner * es);
            else memcpy(src, dense, (size_t)inner * es);
            dense += (size_t)inner * es;
        } else {
            for (int64_t i = 0; i < inner; i++, dense += es) {
                char *p = src + (ptrdiff_t)(i * istride[0]) * (ptrdiff_t)es;
                if (to_dense) memcpy(dense, p, es);
                else memcpy(p, dense, es);
            }
        }
    } while (wgt_strided_iter_next(&it));
}

/* A view over at most half of a storage that has no host copy is read by the words its
 * elements span, and no host copy is made: reading a row of a 1 GiB tensor moves the row,
 * not the gigabyte. A view over more syncs the whole storage, whose host copy then serves
 * later reads for nothing. Returns 0 when the view is not read this way; else *st is the
 * read's status. */
static int read_span(const wgt_tensor *t, void *dst, wgt_status *st) {
    /* Blocks (34 or 18 bytes) do not split into the words read here: block types sync whole. */
    if (wgt_dtype_is_block(t->dtype)) return 0;
    wgt_storage *s = t->storage;
    size_t es = wgt_dtype_size(t->dtype);
    int64_t lo = t->offset, hi = t->offset;
    for (int d = 0; d < t->ndim; d++) {
        int64_t reach = (t->shape[d] - 1) * t->strides[d];
        if (reach < 0) lo += reach;
        else hi += reach;
    }
    size_t first = (size_t)lo * es & ~(size_t)3, end = ((size_t)(hi + 1) * es + 3) & ~(size_t)3;
    if (2 * (end - first) > s->alloc_bytes) return 0;
    char *words = malloc(end - first);
    if (!words) {
        *st = wgt_error(WGT_ERR_OUT_OF_MEMORY, "wgt_tensor_read: out of host memory for %zu bytes", end - first);
        return 1;
    }
    int whole = 0;
    *st = wgt_storage_read_bytes(s, first, end - first, words, &whole);
    if (*st == WGT_OK) {
        wgt_tensor part = *t; /* the view, placed in the words read */
        part.offset = t->offset - (int64_t)(first / es);
        host_transfer(whole ? t : &part, whole ? s->host : words, dst, 1);
    }
    free(words);
    return 1;
}

wgt_status wgt_tensor_read(wgt_tensor *t, void *dst, size_t nbytes) {
    static const char fn[] = "wgt_tensor_read";
    /* The check below records a lost or stuck device; when that turns out not to matter, the
     * error state before the call is put back: a read that succeeds leaves it alone. */
    wgt_status pending = wgt_last_status();
    char pending_msg[1024] = "";
    if (pending != WGT_OK) snprintf(pending_msg, sizeof pending_msg, "%s", wgt_last_error());
    wgt_status st = wgt_check_tensor(fn, "tensor", t);
    wgt_storage *s = t ? t->storage : NULL;
    /* Data already on the host stays readable after a device loss or a timeout. */
    if ((st == WGT_ERR_DEVICE_LOST || st == WGT_ERR_TIMEOUT) && s && s->host_valid && !s->destroyed) {
        st = WGT_OK;
        if (pending == WGT_OK) wgt_clear_error();
        else wgt_error(pending, "%s", pending_msg);
    }
    if (st != WGT_OK) return st;
    if (!(t->usage & WGT_USAGE_READABLE))
        return wgt_error(WGT_ERR_USAGE, "%s: the tensor was created without the readable usage", fn);
    size_t want = wgt_tensor_nbytes(t);
    if (nbytes != want)
        return wgt_error(WGT_ERR_USAGE, "%s: byte count %zu does not match the tensor's %zu bytes (%lld %s elements)",
                         fn, nbytes, want, (long long)wgt_tensor_numel(t), wgt_dtype_name(t->dtype));
    if (want == 0) return WGT_OK;
    if (!dst) return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: destination is NULL", fn);
    if (!s->host_valid && read_span(t, dst, &st)) return st;
    if ((st = wgt_storage_sync_host(s)) != WGT_OK) return st;
    host_transfer(t, s->host, dst, 1);
    return WGT_OK;
}

wgt_status wgt_tensor_write(wgt_tensor *t, const void *src, size_t nbytes) {
    static const char fn[] = "wgt_tensor_write";
    wgt_status st = wgt_check_tensor(fn, "tensor", t);
    if (st != WGT_OK) return st;
    if (!(t->usage & WGT_USAGE_WRITABLE))
        return wgt_error(WGT_ERR_USAGE, "%s: the tensor was created without the writable usage", fn);
    size_t want = wgt_tensor_nbytes(t);
    if (nbytes != want)
        return wgt_error(WGT_ERR_USAGE, "%s: byte count %zu does not match the tensor's %zu bytes (%lld %s elements)",
                         fn, nbytes, want, (long long)wgt_tensor_numel(t), wgt_dtype_name(t->dtype));
    if (want == 0) return WGT_OK;
    if (!src) return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: source is NULL", fn);
    if (wgt_view_overlaps_itself(t->ndim, t->shape, t->strides))
        return wgt_error(WGT_ERR_USAGE, "%s: the view addresses some elements more than once (a broadcast view); "
                         "write the tensor it was made from", fn);
    wgt_storage *s = t->storage;
    wgt_backend *be = s->ctx->backend;
    if (s->symbolic)
        return wgt_error(WGT_ERR_USAGE, "%s: the tensor is %s; bind a tensor to it in wgt_graph_dispatch instead", fn,
                         s->input_name ? "a graph input" : "computed from graph inputs");
    /* Recorded work that reads or writes it runs first, against the old contents. */
    if ((st = wgt_flush_for(s, 1)) != WGT_OK) return st;
    if (!be->host_resident && wgt_layout_covers(t->ndim, t->shape, t->strides, t->offset, t->dtype, s->nbytes)) {
        /* Straight to the device: no host copy needed, and the old host copy is stale. */
        if (!s->buffer && (st = be->buffer_create(be, s->alloc_bytes, 0, &s->buffer)) != WGT_OK) return st;
        if (s->block_dtype) { /* whole blocks (nbytes is the storage's), split on the way */
            st = wgt_blocks_upload(s, src);
        } else if (nbytes % 4 == 0) {
            st = be->buffer_write(be, s->buffer, 0, src, nbytes);
        } else { /* device writes are whole words: pad the tail */
            char tail[4] = {0};
            size_t head = nbytes & ~(size_t)3;
            memcpy(tail, (const char *)src + head, nbytes - head);
            st = head ? be->buffer_write(be, s->buffer, 0, src, head) : WGT_OK;
            if (st == WGT_OK) st = be->buffer_write(be, s->buffer, head, tail, 4);
        }
        if (st != WGT_OK) return st;
        s->device_valid = 1;
        s->host_valid = 0;
        wgt_index_checks_forget(s); /* the new contents depend on no check */
        return WGT_OK;
    }
    if ((st = wgt_storage_sync_host(s)) != WGT_OK) return st;
    host_transfer(t, s->host, (char *)src, 0);
    s->device_valid = 0;
    return WGT_OK;
}

static void *host_pointer(wgt_tensor *t, const char *fn, unsigned need, const char *need_name) {
    wgt_status st = wgt_check_tensor(fn, "tensor", t);
    if (st != WGT_OK) return NULL;
    if (!(t->usage & need)) {
        wgt_error(WGT_ERR_USAGE, "%s: the tensor was created without the %s usage", fn, need_name);
        return NULL;
    }
    if (wgt_storage_sync_host(t->storage) != WGT_OK) return NULL;
    return (char *)t->storage->host + wgt_dtype_bytes(t->dtype, t->offset);
}

const void *wgt_tensor_data(wgt_tensor *t) {
    return host_pointer(t, "wgt_tensor_data", WGT_USAGE_READABLE, "readable");
}

/* A handle whose storage may be flushed before the checks (which report every misuse). */
static int live_storage(const wgt_tensor *t) {
    return t && t->refs > 0 && t->storage && !t->storage->destroyed && !t->storage->symbolic;
}

void *wgt_tensor_data_mut(wgt_tensor *t) {
    /* Recorded work that reads it runs first, against the contents before the caller writes. */
    if (live_storage(t) && wgt_flush_for(t->storage, 1) != WGT_OK) return NULL;
    void *p = host_pointer(t, "wgt_tensor_data_mut", WGT_USAGE_WRITABLE, "writable");
    if (p) t->storage->device_valid = 0; /* the caller may write: the device copy goes stale */
    return p;
}

void *wgt_tensor_export_buffer(wgt_tensor *t, uint64_t *offset_bytes) {
    static const char fn[] = "wgt_tensor_export_buffer";
    if (wgt_check_tensor(fn, "tensor", t) != WGT_OK) return NULL;
    if (!(t->usage & WGT_USAGE_EXPORTABLE)) {
        wgt_error(WGT_ERR_USAGE, "%s: the tensor was created without the exportable usage", fn);
        return NULL;
    }
    wgt_backend *be = t->storage->ctx->backend;
    if (wgt_storage_sync_device(t->storage) != WGT_OK) return NULL;
    /* The caller's WebGPU work may write the buffer: the host copy can no longer be trusted. */
    t->storage->host_valid = 0;
    if (offset_bytes) *offset_bytes = (uint64_t)wgt_dtype_bytes(t->dtype, t->offset);
    return be->buffer_export(be, t->storage->buffer);
}
