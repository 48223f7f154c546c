/*
 * What `wgtensor bench`'s files share (tools/bench.c: the timing, the GEMM and bandwidth rows,
 * the table; tools/bench_rows.c: the sorting, cross-entropy, attention and convolution rows):
 * a row's figures and the run's environment.
 */
#ifndef WGT_TOOLS_BENCH_H
#define WGT_TOOLS_BENCH_H

#include "wgtensor.h"

typedef struct {
    const char *name;
    /* ms: the figure (ms_gpu where GPU timestamps are offered, else ms_wall); ms_wall: back to
     * back; ms_sync: one run with its sync; ms_gpu: compute-pass time per run, -1 if not taken */
    double ms, ms_wall, ms_sync, ms_gpu, passes_per_run, gflop, gbyte, max_rel_err;
    int ok;
    char size[64];
    /* Rows limited by reading their operands once (matrix-vector, few-row GEMM) also report
     * the bytes they read and how close that comes to the device copy in the same run. */
    double gbyte_read, copy_fraction;
    /* Step 6 of the header, for read-bound rows and the copy (ms_chained <= 0 where not taken):
     * ms per run in a chain, its timing ("gpu" or "wall"), the chain's length, and bytes read
     * per second against the chained copy's bytes moved per second. */
    double ms_chained, chained_copy_fraction;
    const char *chained_timing;
    int chain_runs;
    char error[256]; /* why the row has no time: the library's message */
} bench_row;

typedef struct {
    wgt_context *ctx;
    wgt_context_options options; /* what ctx was made with: the chained copy's context differs in fusion only */
    int repeats, quick;
    int gpu_timing; /* the context offers GPU timestamps (and --wall-clock was not given) */
    double peak_gflops, peak_gbps;
} bench_env;

/* Times op as tools/bench.c's header says into r (ms, ms_wall, ms_sync, ms_gpu); 0 on failure. */
int bench_time_op(bench_env *env, wgt_tensor *(*op)(void *), void *arg, bench_row *r);

bench_row bench_sort(bench_env *env, const char *name, int64_t rows, int64_t cols, int64_t k);
bench_row bench_xent(bench_env *env, const char *name, int64_t rows, int64_t cols);
bench_row bench_attention(bench_env *env, const char *name, int64_t heads, int64_t lq, int64_t lk, int64_t d,
                          int causal);
bench_row bench_conv(bench_env *env, const char *name, int64_t n, int64_t cin, int64_t h, int64_t w, int64_t cout,
                     int64_t k);

#endif
