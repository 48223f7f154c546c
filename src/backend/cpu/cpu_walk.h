/*
 * How the CPU kernels split their work. Elementwise kernels (binary, unary, cast, where,
 * copy) describe their operands as a walk: the output's shape with every operand's strides,
 * size-1 dimensions dropped and neighbouring dimensions merged where every operand chains
 * through them, so a dense tensor is one long run and a row broadcast along a matrix is one
 * run per row. The walk hands the kernel runs (a start per operand, a step per operand, a
 * length) and spreads ranges of elements over the context's worker pool when the work is
 * large enough to pay for waking the workers; small work stays on the calling thread.
 * Kernels that split their own work (reductions, row ops, f16 matmul) ask for a task count.
 *
 * Work is counted in units of about one element of a cheap elementwise op (two loads, an
 * add, a store); a kernel states its cost per element in those units.
 */
#ifndef WGT_CPU_WALK_H
#define WGT_CPU_WALK_H

#include "backend/backend.h"
#include "cpu_threads.h"

/* Below this much work a kernel runs on the calling thread. A sleeping worker joins a job
 * 20 to 50 us after it is published (2-core VM, idle core), so work the caller finishes in
 * less than about 70 us gains nothing and can lose: a dense f32 sum of 2^18 elements took
 * 37 us alone and 48 us split, of 2^19 73 and 78 us, of 2^20 145 and 91 us; an add of 2^19
 * 94 and 79 us. A unit is about 0.15 to 0.35 ns of work, so the cutoff is 2^19 units. */
#define WGT_CPU_PARALLEL_MIN_WORK 524288.0
/* The least work in one task, and tasks per thread at most: several per thread let a thread
 * that gets more of a busy machine's processor time take more of them. */
#define WGT_CPU_TASK_MIN_WORK 32768.0
#define WGT_CPU_TASKS_PER_THREAD 8

#define WGT_CPU_WALK_MAX_OPS 4

typedef struct wgt_cpu_walk {
    int ndim; /* at least 1 */
    int nops;
    int64_t numel;
    int64_t shape[WGT_MAX_DIMS];
    int64_t strides[WGT_CPU_WALK_MAX_OPS][WGT_MAX_DIMS];
    int64_t offsets[WGT_CPU_WALK_MAX_OPS];
} wgt_cpu_walk;

/* One run of len elements along the walk's last dimension: operand k's elements are at
 * storage indices base[k] + i * step[k]. slot: the thread (see cpu_threads.h). */
typedef void (*wgt_cpu_run_fn)(void *arg, const int64_t *base, const int64_t *step, int64_t len, int slot);

wgt_cpu_pool *wgt_cpu_pool_of(wgt_backend *be); /* cpu_backend.c */
/* cpu_output.c: called by a kernel before it first writes a fresh output (out covers it). */
void wgt_cpu_advise_output(const wgt_operand *out);

/* The walk of nops operands over shape (operand 0 is usually the output). */
void wgt_cpu_walk_init(wgt_cpu_walk *w, int ndim, const int64_t *shape, int nops, const wgt_operand *const *ops);
/* Calls fn for runs covering every element once, split over the pool when numel * cost is
 * large enough. Runs given to one call of fn never cross a task's range. */
void wgt_cpu_walk_run(wgt_backend *be, const wgt_cpu_walk *w, double cost, wgt_cpu_run_fn fn, void *arg);

/* Tasks for `items` equal items of `work` units each: 1 below the cutoff, else enough tasks
 * of at least WGT_CPU_TASK_MIN_WORK for the pool's threads to share; at most items. */
int64_t wgt_cpu_task_count(wgt_backend *be, int64_t items, double work);
/* The items of task t when n items are split into ntasks: [*begin, *end). */
void wgt_cpu_task_range(int64_t n, int64_t ntasks, int64_t t, int64_t *begin, int64_t *end);

#endif
