/*
 * The elementwise walk and the split of work into tasks (see cpu_walk.h).
 */
#include "cpu_walk.h"

void wgt_cpu_walk_init(wgt_cpu_walk *w, int ndim, const int64_t *shape, int nops, const wgt_operand *const *ops) {
    w->nops = nops;
    w->ndim = 0;
    w->numel = 1;
    for (int k = 0; k < nops; k++) w->offsets[k] = ops[k]->offset;
    for (int d = 0; d < ndim; d++) {
        w->numel *= shape[d];
        if (shape[d] == 1) continue; /* its stride is never used */
        int n = w->ndim;
        /* Merge into the previous dimension when every operand steps through this one
         * exactly as the previous one's stride continues. */
        int merge = n > 0;
        for (int k = 0; k < nops && merge; k++) merge = w->strides[k][n - 1] == ops[k]->strides[d] * shape[d];
        if (merge) {
            w->shape[n - 1] *= shape[d];
            for (int k = 0; k < nops; k++) w->strides[k][n - 1] = ops[k]->strides[d];
            continue;
        }
        w->shape[n] = shape[d];
        for (int k = 0; k < nops; k++) w->strides[k][n] = ops[k]->strides[d];
        w->ndim++;
    }
    if (w->ndim == 0) { /* rank 0, or only size-1 dimensions: one element */
        w->ndim = 1;
        w->shape[0] = 1;
        for (int k = 0; k < nops; k++) w->strides[k][0] = 0;
    }
}

typedef struct {
    const wgt_cpu_walk *w;
    int64_t ntasks;
    wgt_cpu_run_fn fn;
    void *arg;
} walk_job;

/* The runs of elements [begin, end) in row-major order. */
static void walk_range(const wgt_cpu_walk *w, int64_t begin, int64_t end, wgt_cpu_run_fn fn, void *arg, int slot) {
    int last = w->ndim - 1;
    int64_t index[WGT_MAX_DIMS], base[WGT_CPU_WALK_MAX_OPS], step[WGT_CPU_WALK_MAX_OPS];
    int64_t rest = begin;
    for (int d = last; d >= 0; d--) {
        index[d] = rest % w->shape[d];
        rest /= w->shape[d];
    }
    for (int k = 0; k < w->nops; k++) {
        base[k] = w->offsets[k];
        for (int d = 0; d <= last; d++) base[k] += index[d] * w->strides[k][d];
        step[k] = w->strides[k][last];
    }
    for (int64_t at = begin; at < end;) {
        int64_t len = w->shape[last] - index[last];
        if (len > end - at) len = end - at;
        fn(arg, base, step, len, slot);
        at += len;
        if (at >= end) break;
        /* Back to the start of the last dimension, then carry into the outer ones. */
        for (int k = 0; k < w->nops; k++) base[k] -= index[last] * step[k];
        index[last] = 0;
        for (int d = last - 1; d >= 0; d--) {
            for (int k = 0; k < w->nops; k++) base[k] += w->strides[k][d];
            if (++index[d] < w->shape[d]) break;
            for (int k = 0; k < w->nops; k++) base[k] -= w->strides[k][d] * w->shape[d];
            index[d] = 0;
        }
    }
}

static void walk_task(void *arg, int64_t t, int slot) {
    const walk_job *job = arg;
    int64_t begin, end;
    wgt_cpu_task_range(job->w->numel, job->ntasks, t, &begin, &end);
    walk_range(job->w, begin, end, job->fn, job->arg, slot);
}

void wgt_cpu_walk_run(wgt_backend *be, const wgt_cpu_walk *w, double cost, wgt_cpu_run_fn fn, void *arg) {
    if (w->numel == 0) return;
    walk_job job = {w, wgt_cpu_task_count(be, w->numel, cost), fn, arg};
    wgt_cpu_pool_run(wgt_cpu_pool_of(be), job.ntasks, walk_task, &job);
}

int64_t wgt_cpu_task_count(wgt_backend *be, int64_t items, double work) {
    double total = (double)items * work;
    int slots = wgt_cpu_pool_slots(wgt_cpu_pool_of(be));
    if (slots == 1 || items < 2 || total < WGT_CPU_PARALLEL_MIN_WORK) return 1;
    double tasks = total / WGT_CPU_TASK_MIN_WORK;
    double most = (double)slots * WGT_CPU_TASKS_PER_THREAD;
    if (tasks > most) tasks = most;
    if (tasks > (double)items) tasks = (double)items;
    return tasks < 2 ? 2 : (int64_t)tasks;
}

/* Boundaries fall on multiples of 16 items where the tasks are that long, so threads writing
 * neighbouring ranges of a dense f32 output do not share a 64-byte cache line. */
void wgt_cpu_task_range(int64_t n, int64_t ntasks, int64_t t, int64_t *begin, int64_t *end) {
    int64_t per = n / ntasks, extra = n % ntasks, align = per >= 64 ? 16 : 1;
    int64_t b = t * per + t * extra / ntasks, e = (t + 1) * per + (t + 1) * extra / ntasks;
    *begin = t == 0 ? 0 : b / align * align;
    *end = t == ntasks - 1 ? n : e / align * align;
}
