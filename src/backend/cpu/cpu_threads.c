/*
 * The CPU backend's worker pool (see cpu_threads.h). Workers sleep on a condition variable
 * between jobs, so an idle context costs nothing but its threads' stacks. A job is published
 * under the pool's lock (function, argument, task count, a new generation); the tasks are
 * handed out through one atomic counter, so a thread that gets less processor time on a busy
 * machine simply takes fewer of them. The caller runs tasks too, and when it finds none left
 * it closes the job: a worker that wakes after that sees the job closed and goes back to
 * sleep without touching it, so the caller waits only for workers that are still inside a
 * task, never for a slow wake-up.
 */
#include <pthread.h>
#include <sched.h>
#ifndef __wasi__ /* WASI has no signals (and no threads: pthread_create fails there) */
#include <signal.h>
#endif
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpu_threads.h"

typedef struct worker {
    wgt_cpu_pool *pool;
    int slot;
    pthread_t thread;
} worker;

struct wgt_cpu_pool {
    int size;    /* threads a job may use, the caller included */
    int started; /* workers running; 0 until the first job that wants them */
    int start_failed;
    worker *workers; /* size - 1 of them, slots 1..size-1 */

    pthread_mutex_t lock;
    pthread_cond_t wake; /* a new job or stop */
    pthread_cond_t done; /* the last active worker left the job */
    /* Under lock: */
    uint64_t generation; /* bumped for every job */
    int open;            /* the current job may still be joined */
    int active;          /* workers inside the current job */
    int stop;
    wgt_cpu_task_fn fn;
    void *arg;
    int64_t ntasks;
    /* The next task index of the current job. */
    atomic_int_fast64_t next;
};

static void run_tasks(wgt_cpu_pool *pool, wgt_cpu_task_fn fn, void *arg, int64_t ntasks, int slot) {
    for (;;) {
        int64_t t = atomic_fetch_add_explicit(&pool->next, 1, memory_order_relaxed);
        if (t >= ntasks) return;
        fn(arg, t, slot);
    }
}

static void *worker_main(void *p) {
    worker *w = p;
    wgt_cpu_pool *pool = w->pool;
    pthread_mutex_lock(&pool->lock);
    uint64_t seen = pool->generation;
    for (;;) {
        while (!pool->stop && pool->generation == seen) pthread_cond_wait(&pool->wake, &pool->lock);
        if (pool->stop) break;
        seen = pool->generation;
        if (!pool->open) continue; /* the caller finished it alone */
        wgt_cpu_task_fn fn = pool->fn;
        void *arg = pool->arg;
        int64_t ntasks = pool->ntasks;
        pool->active++;
        pthread_mutex_unlock(&pool->lock);
        run_tasks(pool, fn, arg, ntasks, w->slot);
        pthread_mutex_lock(&pool->lock);
        if (--pool->active == 0) pthread_cond_signal(&pool->done);
    }
    pthread_mutex_unlock(&pool->lock);
    return NULL;
}

/* Starts the workers once. Signals are blocked in them (they inherit the mask in force at
 * pthread_create), so the application's handlers keep running on its own threads. A worker
 * that cannot be started leaves the pool with fewer slots in use; tasks still all run. */
static int start_workers(wgt_cpu_pool *pool) {
    if (pool->started || pool->start_failed) return pool->started > 0;
#ifndef __wasi__
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
#endif
    for (int i = 0; i < pool->size - 1; i++) {
        worker *w = &pool->workers[i];
        w->pool = pool;
        w->slot = i + 1;
        if (pthread_create(&w->thread, NULL, worker_main, w) != 0) break;
        pool->started++;
    }
#ifndef __wasi__
    pthread_sigmask(SIG_SETMASK, &old, NULL);
#endif
    if (pool->started == 0) pool->start_failed = 1;
    return pool->started > 0;
}

wgt_cpu_pool *wgt_cpu_pool_create(int threads) {
    if (threads < 1) threads = 1;
    if (threads > WGT_CPU_MAX_THREADS) threads = WGT_CPU_MAX_THREADS;
    wgt_cpu_pool *pool = calloc(1, sizeof *pool);
    if (!pool) return NULL;
    pool->size = threads;
    if (threads > 1 && !(pool->workers = calloc((size_t)threads - 1, sizeof *pool->workers))) {
        free(pool);
        return NULL;
    }
    pthread_mutex_init(&pool->lock, NULL);
    pthread_cond_init(&pool->wake, NULL);
    pthread_cond_init(&pool->done, NULL);
    atomic_init(&pool->next, 0);
    return pool;
}

void wgt_cpu_pool_destroy(wgt_cpu_pool *pool) {
    if (!pool) return;
    pthread_mutex_lock(&pool->lock);
    pool->stop = 1;
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->lock);
    for (int i = 0; i < pool->started; i++) pthread_join(pool->workers[i].thread, NULL);
    pthread_cond_destroy(&pool->done);
    pthread_cond_destroy(&pool->wake);
    pthread_mutex_destroy(&pool->lock);
    free(pool->workers);
    free(pool);
}

int wgt_cpu_pool_slots(const wgt_cpu_pool *pool) { return pool->size; }

void wgt_cpu_pool_run(wgt_cpu_pool *pool, int64_t ntasks, wgt_cpu_task_fn fn, void *arg) {
    if (ntasks <= 0) return;
    if (ntasks == 1 || pool->size == 1 || !start_workers(pool)) {
        for (int64_t t = 0; t < ntasks; t++) fn(arg, t, 0);
        return;
    }
    pthread_mutex_lock(&pool->lock);
    pool->fn = fn;
    pool->arg = arg;
    pool->ntasks = ntasks;
    atomic_store_explicit(&pool->next, 0, memory_order_relaxed);
    pool->open = 1;
    pool->generation++;
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->lock);

    run_tasks(pool, fn, arg, ntasks, 0);

    pthread_mutex_lock(&pool->lock);
    pool->open = 0;
    while (pool->active > 0) pthread_cond_wait(&pool->done, &pool->lock);
    pthread_mutex_unlock(&pool->lock);
}

/* Processors this process may run on: the affinity mask where the system has one (taskset
 * and container CPU sets narrow it), else the processors online. */
static int available_processors(void) {
#ifdef __linux__
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
#endif
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)(n < WGT_CPU_MAX_THREADS ? n : WGT_CPU_MAX_THREADS) : 1;
}

int wgt_cpu_available_threads(void) {
    int n = available_processors();
    return n < WGT_CPU_MAX_THREADS ? n : WGT_CPU_MAX_THREADS;
}
