/*
 * What wasm32-wasi lacks and the library and its tests call, answered as a system without
 * it would. wasi-libc (without wasi-threads) has pthread.h but no pthread functions at all:
 * this is the single-threaded implementation. pthread_create fails with EAGAIN (POSIX's "no
 * resources for another thread"), so the CPU backend runs its tasks on the calling thread and
 * the WebGPU teardown releases in place, as they do natively when a thread cannot start.
 * With one thread a mutex is never contended, a once-routine runs on the first call, and a
 * condition nobody else can signal is a wait that can only time out (a wait without a
 * deadline could never end: EDEADLK, which no caller reaches, since none waits on work of a
 * thread that never started). dlsym finds nothing (no shared objects); sysinfo, popen,
 * pclose and system are unsupported (no processes). The tests that need threads or process limits are skipped by name in the wasm
 * runs (web/tests/wasm_skips.txt).
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>

int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *), void *arg) {
    (void)thread, (void)attr, (void)start, (void)arg;
    return EAGAIN;
}

int pthread_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *attr) {
    (void)m, (void)attr;
    return 0;
}
int pthread_mutex_destroy(pthread_mutex_t *m) {
    (void)m;
    return 0;
}
int pthread_mutex_lock(pthread_mutex_t *m) {
    (void)m;
    return 0;
}
int pthread_mutex_trylock(pthread_mutex_t *m) {
    (void)m;
    return 0;
}
int pthread_mutex_unlock(pthread_mutex_t *m) {
    (void)m;
    return 0;
}

int pthread_cond_init(pthread_cond_t *c, const pthread_condattr_t *attr) {
    (void)c, (void)attr;
    return 0;
}
int pthread_cond_destroy(pthread_cond_t *c) {
    (void)c;
    return 0;
}
int pthread_cond_signal(pthread_cond_t *c) {
    (void)c;
    return 0;
}
int pthread_cond_broadcast(pthread_cond_t *c) {
    (void)c;
    return 0;
}
int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m) {
    (void)c, (void)m;
    return EDEADLK;
}
int pthread_cond_timedwait(pthread_cond_t *restrict c, pthread_mutex_t *restrict m, const struct timespec *restrict t) {
    (void)c, (void)m, (void)t;
    return ETIMEDOUT;
}

int pthread_once(pthread_once_t *once, void (*fn)(void)) {
    if (*once == PTHREAD_ONCE_INIT) {
        *once = 1;
        fn();
    }
    return 0;
}

/* Barriers: only tests of the threaded CPU backend use them, and those are skipped. */
int pthread_barrier_init(pthread_barrier_t *restrict b, const pthread_barrierattr_t *restrict attr, unsigned count) {
    (void)b, (void)attr;
    return count == 1 ? 0 : EAGAIN;
}
int pthread_barrier_destroy(pthread_barrier_t *b) {
    (void)b;
    return 0;
}
int pthread_barrier_wait(pthread_barrier_t *b) {
    (void)b;
    return PTHREAD_BARRIER_SERIAL_THREAD;
}

int pthread_join(pthread_t thread, void **result) {
    (void)thread, (void)result;
    return ESRCH; /* no thread was ever started */
}

int pthread_attr_init(pthread_attr_t *attr) {
    (void)attr;
    return 0;
}

int pthread_attr_destroy(pthread_attr_t *attr) {
    (void)attr;
    return 0;
}

int pthread_attr_setdetachstate(pthread_attr_t *attr, int state) {
    (void)attr, (void)state;
    return 0;
}

int pthread_attr_setstacksize(pthread_attr_t *attr, size_t size) {
    (void)attr, (void)size;
    return 0;
}

void *dlsym(void *handle, const char *name) {
    (void)handle, (void)name;
    return NULL;
}

struct sysinfo;
int sysinfo(struct sysinfo *info) {
    (void)info;
    errno = ENOSYS;
    return -1;
}

FILE *popen(const char *command, const char *mode) {
    (void)command, (void)mode;
    errno = ENOSYS;
    return NULL;
}

int pclose(FILE *stream) {
    (void)stream;
    errno = ENOSYS;
    return -1;
}

int system(const char *command) {
    (void)command;
    errno = ENOSYS;
    return -1;
}
