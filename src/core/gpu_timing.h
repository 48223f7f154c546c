/*
 * Opt-in GPU timing for benchmarks (tools/bench.c), not part of the public API: while it is
 * on, every compute pass the backend begins records GPU timestamps at its beginning and its
 * end, and wgt_context_gpu_time returns the summed time of the passes run since the last
 * read. Copies and clears between passes are not counted. Off (the default), the backend's
 * only cost is one pointer test per pass.
 */
#ifndef WGT_CORE_GPU_TIMING_H
#define WGT_CORE_GPU_TIMING_H

#include "backend/backend.h"

/* on: 0 off, 1 every compute pass, 2 every dispatch (see wgt_context_gpu_kernel_times).
 * WGT_ERR_UNAVAILABLE, with the reason, where the backend or device offers no GPU
 * timestamps (the CPU backend; WebGPU devices without the timestamp-query feature). Turning
 * it on again restarts the count. */
/* Both take the caller's context handle. */
wgt_status wgt_context_gpu_timing(wgt_context *ctx, int on);
/* Runs the pending work, waits for the device, then fills *out with the time of the passes
 * run since timing was turned on or last read, and starts counting again. */
wgt_status wgt_context_gpu_time(wgt_context *ctx, wgt_gpu_time *out);
/* With timing turned on as 2 (every dispatch in a pass of its own: a profile, slower than the
 * batched passes a benchmark times): runs the pending work, then gives the GPU time by kernel
 * since the last read, most first, up to max entries; returns their count, -1 on an error. */
int wgt_context_gpu_kernel_times(wgt_context *ctx, wgt_gpu_kernel_time *out, int max);

#endif
