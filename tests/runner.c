/*
 * The test runner: runs every registered test on the CPU backend and on the WebGPU backend
 * and ends with "N passed, N failed". A missing WebGPU adapter fails the run unless
 * WGT_TEST_ALLOW_NO_WEBGPU=1 says the machine has none; the adapter in use is printed so a
 * log shows that real work ran on it. An argument filters tests by name substring.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "test.h"

#define MAX_TESTS 512
static struct {
    const char *name;
    test_fn fn;
    int per_backend;
} tests[MAX_TESTS];
static int test_count;
static int current_failed;
static const char *current_backend = "-";
static const char *current_name = "";

void test_register(const char *name, test_fn fn, int per_backend) {
    if (test_count == MAX_TESTS) {
        fprintf(stderr, "too many tests\n");
        exit(2);
    }
    tests[test_count].name = name;
    tests[test_count].fn = fn;
    tests[test_count].per_backend = per_backend;
    test_count++;
}

void test_fail(const char *file, int line, const char *cond, const char *fmt, ...) {
    if (current_failed < 8) { /* enough to diagnose; the rest is noise */
        va_list ap;
        va_start(ap, fmt);
        fprintf(stderr, "  FAIL %s [%s] %s:%d: CHECK(%s)", current_name, current_backend, file, line, cond);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
    }
    current_failed++;
}

int test_current_failed(void) { return current_failed; }
const char *test_backend_name(void) { return current_backend; }

int test_contains(const char *hay, const char *needle) { return hay && needle && strstr(hay, needle) != NULL; }

wgt_context *test_new_context(wgt_backend_kind kind) {
    wgt_context_options opt = {0};
    opt.backend = kind;
    opt.quiet = 1;
    wgt_context *ctx = wgt_context_create(&opt);
    if (!ctx) test_fail(__FILE__, __LINE__, "context", "cannot create a %s context: %s", kind == WGT_BACKEND_CPU ? "cpu" : "webgpu",
                        wgt_last_error());
    return ctx;
}

wgt_context *test_webgpu_context(void) {
    wgt_context_options opt = {0};
    opt.backend = WGT_BACKEND_WEBGPU;
    opt.quiet = 1;
    wgt_context *ctx = wgt_context_create(&opt);
    if (!ctx) wgt_clear_error();
    return ctx;
}

int test_backend_pair(wgt_context **cpu, wgt_context **gpu) {
    *gpu = test_webgpu_context();
    *cpu = *gpu ? test_new_context(WGT_BACKEND_CPU) : NULL;
    if (*gpu && !*cpu) wgt_context_release(*gpu);
    return *gpu && *cpu;
}

static double seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int passed, failed;

static void run_one(int i, wgt_context *ctx, const char *backend) {
    current_failed = 0;
    current_backend = backend;
    current_name = tests[i].name;
    wgt_clear_error();
    double t0 = seconds();
    tests[i].fn(ctx);
    double dt = seconds() - t0;
    if (current_failed) failed++;
    else passed++;
    printf("%s %-40s %-7s %7.1f ms\n", current_failed ? "FAIL" : "ok  ", tests[i].name, backend, dt * 1e3);
    fflush(stdout);
}

int main(int argc, char **argv) {
    const char *filter = argc > 1 ? argv[1] : NULL;
    wgt_context_options cpu_opt = {0}, gpu_opt = {0};
    cpu_opt.backend = WGT_BACKEND_CPU;
    gpu_opt.backend = WGT_BACKEND_WEBGPU;
    wgt_context *cpu = wgt_context_create(&cpu_opt);
    wgt_context *gpu = wgt_context_create(&gpu_opt);
    const char *allow = getenv("WGT_TEST_ALLOW_NO_WEBGPU");
    int allow_missing = allow && !strcmp(allow, "1");
    if (gpu) {
        printf("webgpu device: %s\n", wgt_context_device_name(gpu));
        char *d = wgt_context_describe(gpu);
        if (d) {
            const char *b = strstr(d, "adapter backend:");
            if (b) printf("webgpu %.*s\n", (int)strcspn(b, "\n"), b);
            free(d);
        }
    } else if (allow_missing) {
        printf("webgpu: unavailable (%s); WGT_TEST_ALLOW_NO_WEBGPU=1, so only the CPU backend is tested\n",
               wgt_last_error());
    } else {
        printf("FAIL webgpu: no WebGPU device (%s); set WGT_TEST_ALLOW_NO_WEBGPU=1 on machines without one\n",
               wgt_last_error());
        failed++;
    }
    wgt_clear_error();
    for (int i = 0; i < test_count; i++) {
        if (filter && !strstr(tests[i].name, filter)) continue;
        if (!tests[i].per_backend) {
            run_one(i, NULL, "-");
            continue;
        }
        run_one(i, cpu, "cpu");
        if (gpu) run_one(i, gpu, "webgpu");
    }
    wgt_context_release(gpu);
    wgt_context_release(cpu);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
