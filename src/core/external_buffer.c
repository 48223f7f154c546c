/*
 * Sharing device memory with the caller's own WebGPU code: the context's device, on which the
 * caller creates buffers, and a caller's buffer wrapped as a tensor without a copy (the
 * inverse of wgt_tensor_export_buffer). The backend takes a reference of its own on the
 * buffer, so the caller may drop theirs at once; the storage is marked external, so host
 * reads fetch it afresh each time instead of trusting a host copy the caller's writes
 * would make stale.
 */
#include "node.h"

void *wgt_context_webgpu_device(wgt_context *ctx) {
    static const char fn[] = "wgt_context_webgpu_device";
    if (wgt_check_context(fn, ctx) != WGT_OK) return NULL;
    wgt_backend *be = ctx->backend;
    void *device = be->device_handle ? be->device_handle(be) : NULL;
    if (!device) wgt_error(WGT_ERR_UNAVAILABLE, "%s: the context runs on %s, which has no WebGPU device", fn, be->name);
    return device;
}

wgt_tensor *wgt_tensor_from_buffer(wgt_context *ctx, void *wgpu_buffer, wgt_dtype dtype, int ndim,
                                   const int64_t *shape, unsigned usage) {
    static const char fn[] = "wgt_tensor_from_buffer";
    if (wgt_check_context(fn, ctx) != WGT_OK) return NULL;
    wgt_backend *be = ctx->backend;
    if (!be->buffer_wrap) {
        wgt_error(WGT_ERR_UNAVAILABLE, "%s: the context runs on %s; wrapping a WGPUBuffer needs the WebGPU backend", fn,
                  be->name);
        return NULL;
    }
    if (!wgpu_buffer) {
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: wgpu_buffer is NULL", fn);
        return NULL;
    }
    wgt_tensor *t = wgt_tensor_new(ctx, fn, dtype, ndim, shape, usage);
    if (!t) return NULL;
    wgt_storage *s = t->storage;
    if (be->buffer_wrap(be, wgpu_buffer, s->nbytes, &s->buffer) != WGT_OK) {
        wgt_release(t);
        return NULL;
    }
    s->device_valid = 1; /* the buffer's contents are the tensor's values */
    s->external = 1;
    return t;
}
