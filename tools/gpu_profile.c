/* GPU time by kernel for the benchmark tools' --profile (bench-train, bench-quant). */
#include <stdio.h>
#include <stdlib.h>

#include "core/gpu_timing.h"
#include "gpu_profile.h"

void gpu_profile_print(wgt_context *ctx, const char *what, double wall_ms) {
    enum { KEPT = 1024, SHOWN = 30 };
    wgt_gpu_kernel_time *k = malloc(sizeof *k * KEPT);
    int n = k ? wgt_context_gpu_kernel_times(ctx, k, KEPT) : -1;
    if (n < 0) {
        printf("profile of one %s: %s\n", what, k ? wgt_last_error() : "out of memory");
        free(k);
        return;
    }
    double total = 0, shown = 0;
    uint64_t dispatches = 0;
    for (int i = 0; i < n; i++) total += k[i].ms, dispatches += k[i].dispatches;
    printf("profile of one %s (each dispatch in a pass of its own; %.2f ms wall):\n", what, wall_ms);
    printf("  %9s %6s %9s  %s\n", "GPU ms", "share", "dispatches", "kernel");
    for (int i = 0; i < n && i < SHOWN; i++) {
        shown += k[i].ms;
        printf("  %9.3f %5.1f%% %9llu  %s\n", k[i].ms, total > 0 ? 100 * k[i].ms / total : 0,
               (unsigned long long)k[i].dispatches, k[i].label);
    }
    printf("  %9.3f GPU ms in all %d kernels (%llu dispatches); %.3f in the %d shown\n", total, n,
           (unsigned long long)dispatches, shown, n < SHOWN ? n : SHOWN);
    free(k);
}
