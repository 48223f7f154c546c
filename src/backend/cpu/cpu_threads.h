/*
 * The CPU backend's worker pool: a few persistent threads that share the large kernels with
 * the thread that called them. Each CPU backend (one per context) owns its pool, so contexts
 * used from different threads never share or wait for one another's workers, and releasing
 * the context joins its threads. Workers start at the first job that is worth splitting, so a
 * context that only ever sees small tensors never starts a thread.
 *
 * A job is ntasks independent tasks; each runs exactly once, on the caller or a worker, and
 * the call returns when all have finished. Which thread runs which task is not fixed (idle
 * threads take the next one), so a kernel whose result must not depend on the thread count
 * gives each task its own output or partial result and combines partials in task order.
 */
#ifndef WGT_CPU_THREADS_H
#define WGT_CPU_THREADS_H

#include <stdint.h>

typedef struct wgt_cpu_pool wgt_cpu_pool;

#define WGT_CPU_MAX_THREADS 256 /* a pool's threads, the caller included */

/* slot: which thread runs the task, 0 (the caller) .. wgt_cpu_pool_slots() - 1, so a kernel
 * can give each thread its own scratch memory, allocated before the job. */
typedef void (*wgt_cpu_task_fn)(void *arg, int64_t task, int slot);

/* A pool for `threads` threads, the caller included (1: everything runs on the caller).
 * NULL when out of memory. No thread starts here. */
wgt_cpu_pool *wgt_cpu_pool_create(int threads);
/* Stops and joins the workers; no job may be running. NULL is ignored. */
void wgt_cpu_pool_destroy(wgt_cpu_pool *pool);
/* Threads a job may use, the caller included: the slots a kernel needs scratch for. */
int wgt_cpu_pool_slots(const wgt_cpu_pool *pool);

/* Runs fn(arg, t, slot) for every t in [0, ntasks). One job at a time per pool (the context's
 * one-thread-at-a-time contract guarantees it). When the workers cannot be started, the
 * caller runs every task itself: slower, never wrong. */
void wgt_cpu_pool_run(wgt_cpu_pool *pool, int64_t ntasks, wgt_cpu_task_fn fn, void *arg);

/* The processors this process may run on, at most WGT_CPU_MAX_THREADS: a pool's size where
 * WGT_CPU_THREADS does not set it. */
int wgt_cpu_available_threads(void);

#endif
