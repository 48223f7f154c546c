/*
 * Opt-in GPU timing (gpu_timing.h): the checks and the sync around the backend's entries.
 */
#include <string.h>

#include "core/gpu_timing.h"
#include "handles.h"
#include "node.h"

/* Callers (tools/bench.c, tests) hold context handles. */
wgt_status wgt_context_gpu_timing(wgt_context *handle, int on) {
    wgt_context *ctx;
    if (!wgt_context_arg("wgt_context_gpu_timing", handle, &ctx)) return wgt_last_status();
    wgt_status st = wgt_check_context("wgt_context_gpu_timing", ctx);
    if (st != WGT_OK) return st;
    if (!ctx->backend->gpu_timing)
        return wgt_error(WGT_ERR_UNAVAILABLE, "wgt_context_gpu_timing: the %s backend has no GPU timestamps",
                         ctx->backend->name);
    /* Work recorded earlier runs in passes of its own, not timed. */
    if (on && (st = wgt_flush(ctx)) != WGT_OK) return st;
    return ctx->backend->gpu_timing(ctx->backend, on);
}

wgt_status wgt_context_gpu_time(wgt_context *handle, wgt_gpu_time *out) {
    wgt_context *ctx;
    if (!wgt_context_arg("wgt_context_gpu_time", handle, &ctx)) return wgt_last_status();
    if (!out) return wgt_error(WGT_ERR_INVALID_ARGUMENT, "wgt_context_gpu_time: out is NULL");
    memset(out, 0, sizeof *out);
    wgt_status st = wgt_context_sync(ctx);
    if (st != WGT_OK) return st;
    if (!ctx->backend->gpu_time)
        return wgt_error(WGT_ERR_UNAVAILABLE, "wgt_context_gpu_time: the %s backend has no GPU timestamps",
                         ctx->backend->name);
    return ctx->backend->gpu_time(ctx->backend, out);
}

int wgt_context_gpu_kernel_times(wgt_context *handle, wgt_gpu_kernel_time *out, int max) {
    wgt_context *ctx;
    if (!wgt_context_arg("wgt_context_gpu_kernel_times", handle, &ctx)) return -1;
    if (!out || max < 0) {
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "wgt_context_gpu_kernel_times: out is NULL or max %d is negative", max);
        return -1;
    }
    if (!ctx->backend->gpu_kernel_times) {
        wgt_error(WGT_ERR_UNAVAILABLE, "wgt_context_gpu_kernel_times: the %s backend has no GPU timestamps",
                  ctx->backend->name);
        return -1;
    }
    if (wgt_context_sync(ctx) != WGT_OK) return -1;
    return ctx->backend->gpu_kernel_times(ctx->backend, out, max);
}
