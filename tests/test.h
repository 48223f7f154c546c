/*
 * A small test framework. TEST(name) runs once; TEST_BACKENDS(name) runs once per backend
 * with that backend's shared context. Tests register themselves at load time, so a new
 * file in tests/ needs no list to be edited. CHECK failures print the file, line and a
 * message with what is needed to reproduce (seed, shape).
 *
 * A test that cannot run says so with test_skip() and returns: it is counted as skipped, not
 * passed. One that needs WebGPU and finds none skips through test_webgpu_context() (or
 * test_skip_no_webgpu()); unless WGT_TEST_ALLOW_NO_WEBGPU=1 says the machine has no adapter,
 * such a skip fails the test, so a run meant for a GPU cannot pass with its GPU half unrun.
 */
#ifndef WGT_TEST_H
#define WGT_TEST_H

#include <stdio.h>

#include "wgtensor.h"

typedef void (*test_fn)(wgt_context *ctx);
void test_register(const char *name, test_fn fn, int per_backend);
void test_fail(const char *file, int line, const char *cond, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
int test_current_failed(void);
/* The current test cannot run here (an opt-in variable unset, a sanitizer build, a kernel
 * setting that makes the check meaningless): it is reported as skipped with the reason. */
void test_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The current test needs a WebGPU device and none could be created: a skip where the run
 * allows a machine without WebGPU, a failure otherwise. */
void test_skip_no_webgpu(void);
/* Name of the backend the current test runs on ("cpu", "webgpu") or "-" for plain tests. */
const char *test_backend_name(void);
/* A context of the given kind for tests that must own theirs (NULL and a failure if none). */
wgt_context *test_new_context(wgt_backend_kind kind);
/* A context of the given kind with fusion off (the planner's folds too) or on. */
wgt_context *test_fusion_context(wgt_backend_kind kind, int no_fusion);
/* The launches ctx has made so far (wgt_context_stats). */
uint64_t test_launches(wgt_context *ctx);
/* A WebGPU context of the test's own, or NULL after test_skip_no_webgpu() when there is none. */
wgt_context *test_webgpu_context(void);
/* A CPU and a WebGPU context for tests that compare the backends; 0 (nothing to release,
 * test_skip_no_webgpu() called) when WebGPU is unavailable. */
int test_backend_pair(wgt_context **cpu, wgt_context **gpu);

#define TEST_REGISTER_(name, per_backend)                                                     \
    static void test_##name(wgt_context *ctx);                                                \
    __attribute__((constructor)) static void register_##name(void) {                          \
        test_register(#name, test_##name, per_backend);                                       \
    }                                                                                         \
    static void test_##name(wgt_context *ctx __attribute__((unused)))

#define TEST(name) TEST_REGISTER_(name, 0)
#define TEST_BACKENDS(name) TEST_REGISTER_(name, 1)

#define CHECK(cond, ...)                                                                      \
    do {                                                                                      \
        if (!(cond)) test_fail(__FILE__, __LINE__, #cond, " " __VA_ARGS__);                   \
    } while (0)

/* A call expected to fail with `status` and a message containing `word`. */
#define CHECK_ERROR(expr_ok, status, word)                                                    \
    do {                                                                                      \
        wgt_clear_error();                                                                    \
        int ok_ = (expr_ok);                                                                  \
        CHECK(ok_, "call did not fail");                                                      \
        CHECK(wgt_last_status() == (status), "status %s, wanted %s; message: %s",             \
              wgt_status_name(wgt_last_status()), wgt_status_name(status), wgt_last_error()); \
        CHECK(test_contains(wgt_last_error(), word), "message lacks '%s': %s", word,          \
              wgt_last_error());                                                              \
        wgt_clear_error();                                                                    \
    } while (0)

int test_contains(const char *hay, const char *needle);

/* Sets var=value (value NULL: unsets it) and keeps the old value, which test_env_restore puts
 * back: a test that changes the environment must leave it as the run (or the user) set it. */
typedef struct test_saved_env {
    const char *var;
    char *old;
    int had;
} test_saved_env;
test_saved_env test_env_set(const char *var, const char *value);
void test_env_restore(test_saved_env *saved);

/* 1 when built with AddressSanitizer or ThreadSanitizer: their allocators and shadow memory
 * make host-memory figures and huge allocations mean something else. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif


/* Bytes of host heap in use (mallinfo2: small blocks and mmapped ones), for tests of memory
 * growth. Meaningless under a sanitizer's allocator (see SANITIZED). */
long long test_heap_in_use(void);

/* ---- helpers for differential tests (test_util.c) ---- */
/* Reads any tensor as float64 values, row-major; returns a malloc'd array. */
double *test_read_f64(wgt_tensor *t);
/* Largest allowed difference for one element, by type: exact for integers. */
double test_tolerance(wgt_dtype dtype, double reference);
/* The value a dtype stores for v (rounded as the library rounds). */
double test_round_to(wgt_dtype dtype, double v);

#endif
