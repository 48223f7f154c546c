/*
 * The thread-safety contract (docs/errors.md), exercised: several threads, each with its own
 * CPU or WebGPU context, compute and check a few hundred ops at once while another thread
 * creates and releases contexts; every thread's last error is its own; one WebGPU context is
 * lost mid-run without disturbing the others; a context and its tensors move between threads
 * when the caller hands them over. Worker threads never call CHECK (the runner's failure
 * count is not thread-safe): they write what went wrong into their own record, and the main
 * thread checks the records after joining.
 *
 * Build the suite with -fsanitize=thread and run `wgt_tests threads` to have ThreadSanitizer
 * watch this (the command is in docs/errors.md).
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

#define WORKERS 4
#define ITERATIONS 100 /* three ops each, and a read */
#define N 64           /* sum over k < N of (k + i) * k is exact in f32 */
#define M 96           /* the matmul's size */

typedef struct worker {
    int id;
    wgt_backend_kind kind;
    int lose_device; /* simulate a device loss halfway and check that only this context sees it */
    pthread_barrier_t *barrier;
    char failure[512]; /* first failure, "" when none */
    int skipped;       /* no WebGPU adapter */
    int ops;
} worker;

static void fail_once(worker *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail_once(worker *w, const char *fmt, ...) {
    if (w->failure[0]) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->failure, sizeof w->failure, fmt, ap);
    va_end(ap);
}

static wgt_context *own_context(wgt_backend_kind kind) {
    wgt_context_options opt = {0};
    opt.backend = kind;
    opt.quiet = 1;
    return wgt_context_create(&opt);
}

static double expected_sum(int i) {
    double s = 0;
    for (int k = 0; k < N; k++) s += (double)(k + i) * k;
    return s;
}

static void compute(worker *w, wgt_context *ctx) {
    wgt_tensor *x = wgt_arange(ctx, WGT_F32, 0, N, 1);
    if (!x) {
        fail_once(w, "arange: %s", wgt_last_error());
        return;
    }
    for (int i = 0; i < ITERATIONS && !w->failure[0]; i++) {
        if (w->lose_device && i == ITERATIONS / 2) {
            if (wgt_context_simulate_device_loss(ctx) != WGT_OK) fail_once(w, "simulate loss: %s", wgt_last_error());
            wgt_tensor *after = wgt_add(x, x);
            if (after || wgt_last_status() != WGT_ERR_DEVICE_LOST)
                fail_once(w, "after the loss an op gave %p, status %s", (void *)after, wgt_status_name(wgt_last_status()));
            wgt_release(after);
            wgt_clear_error();
            break;
        }
        wgt_tensor *y = wgt_add_scalar(x, i), *z = wgt_mul(y, x), *s = wgt_sum(z, 0, NULL, 0);
        float v = -1;
        if (!s || wgt_tensor_read(s, &v, sizeof v) != WGT_OK) fail_once(w, "iteration %d: %s", i, wgt_last_error());
        else if (v != (float)expected_sum(i)) fail_once(w, "iteration %d: sum %.1f, wanted %.1f", i, v, expected_sum(i));
        wgt_release(y), wgt_release(z), wgt_release(s);
        w->ops += 3;
    }
    if (!w->lose_device && !w->failure[0]) { /* ones [96, 96] @ B with B[k][j] = 96 k + j (OpenBLAS on the CPU) */
        int64_t s[2] = {M, M};
        wgt_tensor *ones = wgt_ones(ctx, WGT_F32, 2, s), *r = wgt_arange(ctx, WGT_F32, 0, M * M, 1);
        wgt_tensor *b = wgt_reshape(r, 2, s), *m = wgt_matmul(ones, b);
        float *got = calloc(M * M, sizeof *got);
        if (!got || !m || wgt_tensor_read(m, got, sizeof *got * M * M) != WGT_OK) {
            fail_once(w, "matmul: %s", wgt_last_error());
        } else {
            for (int i = 0; i < M * M; i++) /* sum over k of 96 k + j: exact in f32 */
                if (got[i] != (float)(M * (i % M) + M * (M * (M - 1) / 2))) {
                    fail_once(w, "matmul element %d: %.1f", i, got[i]);
                    break;
                }
        }
        free(got);
        wgt_release(ones), wgt_release(r), wgt_release(b), wgt_release(m);
        w->ops++;
    }
    if (!w->lose_device && wgt_last_status() != WGT_OK) fail_once(w, "an error was recorded: %s", wgt_last_error());
    wgt_release(x);
}

static void *worker_main(void *arg) {
    worker *w = arg;
    wgt_clear_error();
    /* Contexts are created at the same moment on every thread. */
    pthread_barrier_wait(w->barrier);
    wgt_context *ctx = own_context(w->kind);
    if (!ctx && w->kind == WGT_BACKEND_WEBGPU) {
        w->skipped = 1;
        wgt_clear_error();
    } else if (!ctx) {
        fail_once(w, "context: %s", wgt_last_error());
    }
    /* Errors are per thread: each thread records its own, waits until every thread has, and
     * must still see its own. */
    wgt_tensor *t = ctx ? wgt_zeros(ctx, WGT_F32, 1, (const int64_t[]){4}) : NULL;
    wgt_clear_error();
    wgt_tensor *bad = t ? wgt_transpose(t, 10 + w->id, 0) : NULL;
    pthread_barrier_wait(w->barrier);
    char want[32];
    snprintf(want, sizeof want, "axis %d", 10 + w->id);
    if (t && (bad || wgt_last_status() != WGT_ERR_SHAPE || !strstr(wgt_last_error(), want)))
        fail_once(w, "thread %d sees another thread's error: %s: %s", w->id, wgt_status_name(wgt_last_status()),
                  wgt_last_error());
    pthread_barrier_wait(w->barrier);
    wgt_clear_error();
    wgt_release(t), wgt_release(bad);
    if (ctx) compute(w, ctx);
    wgt_context_release(ctx);
    return NULL;
}

typedef struct creator {
    atomic_int *stop;
    int made;
    char failure[512];
} creator;

/* Creates, uses and releases contexts of both kinds while the workers compute. */
static void *creator_main(void *arg) {
    creator *c = arg;
    for (int round = 0; round < 8 && (round < 2 || !atomic_load(c->stop)); round++) {
        wgt_backend_kind kind = round % 2 ? WGT_BACKEND_WEBGPU : WGT_BACKEND_CPU;
        wgt_context *ctx = own_context(kind);
        if (!ctx) {
            if (kind == WGT_BACKEND_CPU && !c->failure[0])
                snprintf(c->failure, sizeof c->failure, "cpu context: %s", wgt_last_error());
            wgt_clear_error();
            continue;
        }
        wgt_tensor *a = wgt_full(ctx, WGT_I32, 1, (const int64_t[]){3}, round), *b = wgt_mul(a, a);
        int32_t v[3] = {-1, -1, -1};
        if ((!b || wgt_tensor_read(b, v, sizeof v) != WGT_OK || v[2] != round * round) && !c->failure[0])
            snprintf(c->failure, sizeof c->failure, "round %d: %d: %s", round, v[2], wgt_last_error());
        wgt_release(a), wgt_release(b);
        wgt_context_release(ctx);
        c->made++;
    }
    return NULL;
}

TEST(threads_own_contexts_compute_concurrently) {
    worker w[WORKERS];
    pthread_t th[WORKERS], ct;
    pthread_barrier_t barrier;
    atomic_int stop = 0;
    creator cr = {.stop = &stop};
    pthread_barrier_init(&barrier, NULL, WORKERS);
    for (int i = 0; i < WORKERS; i++) {
        memset(&w[i], 0, sizeof w[i]);
        w[i].id = i;
        w[i].kind = i % 2 ? WGT_BACKEND_WEBGPU : WGT_BACKEND_CPU;
        w[i].lose_device = i == 3;
        w[i].barrier = &barrier;
    }
    int started = 0;
    for (int i = 0; i < WORKERS; i++) started += pthread_create(&th[i], NULL, worker_main, &w[i]) == 0;
    int creator_started = pthread_create(&ct, NULL, creator_main, &cr) == 0;
    CHECK(started == WORKERS && creator_started, "could not start the threads");
    if (started != WORKERS) abort(); /* the barrier would never open: nothing sensible is left to do */
    for (int i = 0; i < WORKERS; i++) pthread_join(th[i], NULL);
    atomic_store(&stop, 1);
    if (creator_started) pthread_join(ct, NULL);
    pthread_barrier_destroy(&barrier);
    for (int i = 0; i < WORKERS; i++) {
        CHECK(!w[i].failure[0], "thread %d (%s): %s", i, w[i].kind == WGT_BACKEND_CPU ? "cpu" : "webgpu", w[i].failure);
        if (!w[i].skipped && !w[i].lose_device)
            CHECK(w[i].ops == 3 * ITERATIONS + 1, "thread %d ran %d ops", i, w[i].ops);
    }
    CHECK(!cr.failure[0], "context creator: %s", cr.failure);
    CHECK(cr.made >= 1, "the creator made no context");
    /* The main thread's error state was never touched by the workers. */
    CHECK(wgt_last_status() == WGT_OK, "main thread error: %s", wgt_last_error());
}

/* A context and its tensors may move to another thread when the caller hands them over (here
 * through pthread_create and pthread_join, which order the accesses). */
typedef struct handoff {
    wgt_context *ctx;
    wgt_tensor *in, *out;
    wgt_status st;
} handoff;

static void *handoff_main(void *arg) {
    handoff *h = arg;
    wgt_tensor *sq = wgt_mul(h->in, h->in);
    h->out = wgt_add_scalar(sq, 1);
    wgt_release(sq);
    wgt_release(h->in); /* released on a thread other than the one that made it */
    h->in = NULL;
    float v[4];
    h->st = h->out ? wgt_tensor_read(h->out, v, sizeof v) : wgt_last_status();
    return NULL;
}

TEST(threads_context_handoff) {
    for (int k = 0; k < 2; k++) {
        wgt_context *c = k ? test_webgpu_context() : test_new_context(WGT_BACKEND_CPU);
        if (!c) continue;
        handoff h = {c, wgt_arange(c, WGT_F32, 0, 4, 1), NULL, WGT_ERR_INTERNAL};
        pthread_t t;
        CHECK(pthread_create(&t, NULL, handoff_main, &h) == 0, "pthread_create");
        pthread_join(t, NULL);
        float v[4] = {0};
        CHECK(h.st == WGT_OK && wgt_tensor_read(h.out, v, sizeof v) == WGT_OK && v[3] == 10.0f,
              "%s: %g: %s", k ? "webgpu" : "cpu", v[3], wgt_last_error());
        wgt_release(h.out);
        wgt_context_release(c);
    }
}
