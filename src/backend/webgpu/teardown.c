/*
 * Giving a context's device back. The caches, pools and buffers are released on the caller's
 * thread (Dawn only drops references there); destroying the device then waits until the
 * device has finished the work already submitted. That wait is the driver's and has no
 * deadline: after one of our waits timed out (the context is late) it may last as long as
 * the late work, or for ever on a hung device. So a late context's device, adapter and
 * instance go back on a detached thread of their own, and the release returns at once.
 *
 * Dawn delivers every callback still owed (cancelled) when the instance goes, into the
 * backend's own memory, so the backend is freed only after that: by destroy when the
 * device went back inline, by the teardown thread when it was still running then. At
 * process exit, teardowns still running are given a bounded time to finish, so the driver
 * is not unloaded under them.
 */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "webgpu_internal.h"

static pthread_mutex_t teardown_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t teardown_done = PTHREAD_COND_INITIALIZER;
static int teardowns_running;
static pthread_once_t exit_hook_once = PTHREAD_ONCE_INIT;

/* What late work may still take at exit before the process goes anyway. */
#define EXIT_GRACE_S 10

typedef struct teardown {
    wgt_webgpu *w;
    int free_backend; /* destroy came while the thread ran: the thread frees the backend */
} teardown;

static void free_backend(wgt_webgpu *w) {
    wgt_wgpu_buffers_shutdown(w);
    pthread_mutex_destroy(&w->message_lock);
    free(w->teardown);
    free(w);
}

/* The part that may wait on the device: the device, the adapter and the instance. */
static void release_driver_objects(wgt_webgpu *w) {
    const wgpu_procs *p = w->p;
    if (w->queue) p->wgpuQueueRelease(w->queue);
    if (w->device) {
        p->wgpuDeviceDestroy(w->device);
        p->wgpuDeviceRelease(w->device);
    }
    if (w->adapter.adapter) p->wgpuAdapterRelease(w->adapter.adapter);
    if (w->instance) {
        p->wgpuInstanceProcessEvents(w->instance); /* lets Dawn run the cancelled callbacks now */
        p->wgpuInstanceRelease(w->instance); /* runs the callbacks of abandoned waits, into w */
    }
    wgt_wgpu_reads_shutdown(w); /* released read requests whose callbacks were still owed */
}

static void *teardown_main(void *arg) {
    wgt_webgpu *w = arg;
    release_driver_objects(w);
    pthread_mutex_lock(&teardown_lock);
    int free_it = w->teardown->free_backend;
    w->teardown_running = 0;
    teardowns_running--;
    pthread_cond_broadcast(&teardown_done);
    pthread_mutex_unlock(&teardown_lock);
    if (free_it) free_backend(w);
    return NULL;
}

static void wait_for_teardowns_at_exit(void) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += EXIT_GRACE_S;
    pthread_mutex_lock(&teardown_lock);
    while (teardowns_running > 0 && pthread_cond_timedwait(&teardown_done, &teardown_lock, &until) == 0) {
    }
    pthread_mutex_unlock(&teardown_lock);
}

static void install_exit_hook(void) { atexit(wait_for_teardowns_at_exit); }

/* Starts the driver objects' release on a thread of its own; 0 when no thread could start
 * (the caller then releases them itself, waiting). */
static int release_in_background(wgt_webgpu *w) {
    w->teardown = calloc(1, sizeof *w->teardown);
    if (!w->teardown) return 0;
    w->teardown->w = w;
    pthread_once(&exit_hook_once, install_exit_hook);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_mutex_lock(&teardown_lock);
    w->teardown_running = 1;
    teardowns_running++;
    pthread_t thread;
    int started = pthread_create(&thread, &attr, teardown_main, w) == 0;
    if (!started) {
        w->teardown_running = 0;
        teardowns_running--;
    }
    pthread_mutex_unlock(&teardown_lock);
    pthread_attr_destroy(&attr);
    if (!started) {
        free(w->teardown);
        w->teardown = NULL;
    }
    return started;
}

void wgt_wgpu_release_device(wgt_backend *be) {
    wgt_webgpu *w = (wgt_webgpu *)be;
    if (w->device_released) return;
    int healthy = w->device && !atomic_load(&w->lost) && w->stuck == WGT_OK;
    if (healthy) wgt_wgpu_submit(w);
    /* Late work that has finished by now needs no thread. */
    int late = w->stuck != WGT_OK || (healthy && wgt_wgpu_late_pending(w));
    atomic_store(&w->shutting_down, 1);
    wgt_wgpu_fused_shutdown(w);
    wgt_wgpu_user_kernels_shutdown(w);
    wgt_wgpu_timestamps_shutdown(w);
    wgt_wgpu_encoder_shutdown(w);
    wgt_wgpu_uploads_release(w);
    wgt_wgpu_buffers_detach(w);
    w->device_released = 1; /* from here on nothing of ours calls the driver for this backend */
    if (!late || !release_in_background(w)) release_driver_objects(w);
}

void wgt_wgpu_destroy(wgt_backend *be) {
    wgt_webgpu *w = (wgt_webgpu *)be;
    wgt_wgpu_release_device(be);
    pthread_mutex_lock(&teardown_lock);
    int running = w->teardown_running;
    if (running) w->teardown->free_backend = 1;
    pthread_mutex_unlock(&teardown_lock);
    if (!running) free_backend(w);
}
