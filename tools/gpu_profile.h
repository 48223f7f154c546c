/* Printing a per-dispatch GPU profile (tools/gpu_profile.c). */
#ifndef WGT_TOOLS_GPU_PROFILE_H
#define WGT_TOOLS_GPU_PROFILE_H

#include "wgtensor.h"

/* With the context's GPU timing on as 2 (every dispatch timed in a pass of its own): runs the
 * pending work and prints the GPU time by kernel since the last read, most first, the top 30,
 * under a heading naming `what` and its wall time. */
void gpu_profile_print(wgt_context *ctx, const char *what, double wall_ms);

#endif
