/*
 * The test runner: runs every registered test on the CPU backend and on the WebGPU backend,
 * once as users run the library and once with fresh kernel outputs poisoned, and ends with
 * "N passed, N failed, N skipped". A missing WebGPU adapter fails the run unless
 * WGT_TEST_ALLOW_NO_WEBGPU=1 says the machine has none; the adapter in use is printed so a
 * log shows that real work ran on it. An argument filters tests by name substring.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "test.h"

#define MAX_TESTS 2048 /* registered tests (each counts once, whatever its backends) */
static struct {
    const char *name;
    test_fn fn;
    int per_backend;
} tests[MAX_TESTS];
static int test_count;
static int current_failed;
static int current_skipped;          /* 1: test_skip, 2: test_skip_no_webgpu */
static char current_skip_reason[256];
static int webgpu_required = 1;      /* unless WGT_TEST_ALLOW_NO_WEBGPU=1 */
static const char *current_backend = "-";
static const char *current_name = "";

void test_register(const char *name, test_fn fn, int per_backend) {
    if (test_count == MAX_TESTS) {
        fprintf(stderr, "too many tests: more than %d are registered; raise MAX_TESTS in tests/runner.c\n", MAX_TESTS);
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

void test_skip(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(current_skip_reason, sizeof current_skip_reason, fmt, ap);
    va_end(ap);
    current_skipped = 1;
}

void test_skip_no_webgpu(void) {
    snprintf(current_skip_reason, sizeof current_skip_reason, "no WebGPU device: %s", wgt_last_error());
    current_skipped = 2;
}
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

wgt_context *test_fusion_context(wgt_backend_kind kind, int no_fusion) {
    wgt_context_options opt = {0};
    opt.backend = kind;
    opt.quiet = 1;
    opt.no_fusion = no_fusion;
    wgt_context *ctx = wgt_context_create(&opt);
    if (!ctx) test_fail(__FILE__, __LINE__, "context", "cannot create a context: %s", wgt_last_error());
    return ctx;
}

uint64_t test_launches(wgt_context *ctx) {
    wgt_stats s;
    memset(&s, 0, sizeof s);
    if (wgt_context_stats(ctx, &s) != WGT_OK) test_fail(__FILE__, __LINE__, "stats", "%s", wgt_last_error());
    return s.launches;
}

wgt_context *test_webgpu_context(void) {
    wgt_context_options opt = {0};
    opt.backend = WGT_BACKEND_WEBGPU;
    opt.quiet = 1;
    wgt_context *ctx = wgt_context_create(&opt);
    if (!ctx) {
        test_skip_no_webgpu();
        wgt_clear_error();
    }
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

static int passed, failed, skipped;
static const char *pass_suffix = ""; /* "poison" in the poisoned pass */

/* The backend column of a result row: the backend, and the pass when it is the poisoned one. */
static void row_label(char *label, size_t size, const char *backend) {
    if (*pass_suffix) snprintf(label, size, "%s+%s", strcmp(backend, "-") ? backend : "", pass_suffix);
    else snprintf(label, size, "%s", backend);
}

static void run_one(int i, wgt_context *ctx, const char *backend) {
    current_failed = 0;
    current_skipped = 0;
    current_backend = backend;
    current_name = tests[i].name;
    wgt_clear_error();
    double t0 = seconds();
    tests[i].fn(ctx);
    double dt = seconds() - t0;
    if (current_skipped == 2 && webgpu_required && !current_failed) {
        fprintf(stderr, "  FAIL %s [%s]: skipped for want of WebGPU, which this run requires (%s)\n", current_name,
                current_backend, current_skip_reason);
        current_failed = 1;
    }
    const char *verdict = "ok  ";
    if (current_failed) failed++, verdict = "FAIL";
    else if (current_skipped) skipped++, verdict = "skip";
    else passed++;
    char label[32];
    row_label(label, sizeof label, backend);
    printf("%s %-40s %-14s %9.1f ms", verdict, tests[i].name, label, dt * 1e3);
    if (current_skipped && !current_failed) printf("  (%s)", current_skip_reason);
    putchar('\n');
    fflush(stdout);
}

/* Whether a shared context still computes: a test that failed (a wait that passed its bound
 * on a loaded machine, a lost device) must not take every later test down with it. */
static int still_computes(wgt_context *ctx) {
    int64_t shape[1] = {3};
    wgt_tensor *a = wgt_full(ctx, WGT_F32, 1, shape, 2.0), *b = wgt_add(a, a);
    float out[3] = {0};
    int ok = b && wgt_tensor_read(b, out, sizeof out) == WGT_OK && out[0] == 4.0f && out[2] == 4.0f;
    wgt_release(a), wgt_release(b);
    wgt_clear_error();
    return ok;
}

static wgt_context *shared_context(wgt_backend_kind kind) {
    wgt_context_options opt = {0};
    opt.backend = kind;
    return wgt_context_create(&opt);
}

/* The first of a comma-separated list of substrings (a,b,...) that name contains, copied into
 * part; NULL when none does. */
static const char *list_part_in(const char *list, const char *name, char *part, size_t part_size) {
    for (const char *p = list; p && *p;) {
        size_t n = strcspn(p, ",");
        if (n > 0 && n < part_size) {
            memcpy(part, p, n);
            part[n] = 0;
            if (strstr(name, part)) return part;
        }
        p += n + (p[n] == ',');
    }
    return NULL;
}

/* WGT_TEST_EXCLUDE=a,b,...: tests whose names contain one of these substrings are counted as
 * skipped, with the reason printed. Runs under memcheck use it to leave out the tests whose
 * kernels do hours of arithmetic there and nothing the other tests' memory use does not. */
static const char *excluded_by(const char *name, char *part, size_t part_size) {
    return list_part_in(getenv("WGT_TEST_EXCLUDE"), name, part, part_size);
}

static void report_excluded(int i, const char *backend, const char *part) {
    skipped++;
    char label[32];
    row_label(label, sizeof label, backend);
    printf("skip %-40s %-14s %9.1f ms  (WGT_TEST_EXCLUDE names '%s')\n", tests[i].name, label, 0.0, part);
}

/* After a failed test: a shared context that no longer computes is replaced by a new one. */
static void renew_if_broken(wgt_context **ctx, wgt_backend_kind kind, const char *after) {
    if (!*ctx || still_computes(*ctx)) return;
    printf("note: the shared %s context stopped computing after %s; the next tests get a new one\n",
           kind == WGT_BACKEND_CPU ? "cpu" : "webgpu", after);
    wgt_context_release(*ctx);
    *ctx = shared_context(kind);
    if (!*ctx) {
        printf("FAIL cannot create a new %s context: %s\n", kind == WGT_BACKEND_CPU ? "cpu" : "webgpu",
               wgt_last_error());
        failed++;
    }
    wgt_clear_error();
}

/* One pass over the tests with WGT_POISON set as given: every context the pass creates (the
 * shared ones and the tests' own) reads it. Returns 0 when WebGPU is missing and required. */
static void run_pass(const char *filter, int poisoned) {
    setenv("WGT_POISON", poisoned ? "1" : "0", 1);
    pass_suffix = poisoned ? "poison" : "";
    printf("-- pass with WGT_POISON=%d%s\n", poisoned,
           poisoned ? ": fresh kernel outputs hold 0xff bytes, so an element no kernel wrote shows" : ": as users run");
    wgt_context *cpu = shared_context(WGT_BACKEND_CPU);
    wgt_context *gpu = shared_context(WGT_BACKEND_WEBGPU);
    if (!cpu) {
        printf("FAIL cpu: no CPU context (%s)\n", wgt_last_error());
        failed++;
        return;
    }
    if (gpu) {
        printf("webgpu device: %s\n", wgt_context_device_name(gpu));
        char *d = wgt_context_describe(gpu);
        if (d) {
            const char *b = strstr(d, "adapter backend:");
            if (b) printf("webgpu %.*s\n", (int)strcspn(b, "\n"), b);
            free(d);
        }
    } else if (!webgpu_required) {
        printf("webgpu: unavailable (%s); WGT_TEST_ALLOW_NO_WEBGPU=1, so only the CPU backend is tested\n",
               wgt_last_error());
    } else {
        printf("FAIL webgpu: no WebGPU device (%s); set WGT_TEST_ALLOW_NO_WEBGPU=1 on machines without one\n",
               wgt_last_error());
        failed++;
    }
    wgt_clear_error();
    for (int i = 0; i < test_count; i++) {
        char part[128];
        if (filter && !list_part_in(filter, tests[i].name, part, sizeof part)) continue;
        if (excluded_by(tests[i].name, part, sizeof part)) {
            if (!tests[i].per_backend) report_excluded(i, "-", part);
            else {
                report_excluded(i, "cpu", part);
                if (gpu) report_excluded(i, "webgpu", part);
            }
            continue;
        }
        if (!tests[i].per_backend) {
            run_one(i, NULL, "-");
            continue;
        }
        run_one(i, cpu, "cpu");
        if (current_failed) renew_if_broken(&cpu, WGT_BACKEND_CPU, tests[i].name);
        if (!gpu) continue;
        run_one(i, gpu, "webgpu");
        if (current_failed) renew_if_broken(&gpu, WGT_BACKEND_WEBGPU, tests[i].name);
    }
    wgt_context_release(gpu);
    wgt_context_release(cpu);
}

/* Usage: wgt_tests [a,b,...]: only the tests whose names contain one of the substrings.
 * WGT_TEST_POISON=off|on|both (default both): the passes to run. Poison is a debugging aid
 * that users do not run with, so the suite runs as users do and again poisoned. */
int main(int argc, char **argv) {
    const char *filter = argc > 1 ? argv[1] : NULL;
    const char *allow = getenv("WGT_TEST_ALLOW_NO_WEBGPU");
    webgpu_required = !(allow && !strcmp(allow, "1"));
    const char *mode = getenv("WGT_TEST_POISON");
    if (!mode || !*mode) mode = "both";
    int off = !strcmp(mode, "off") || !strcmp(mode, "both"), on = !strcmp(mode, "on") || !strcmp(mode, "both");
    if (!off && !on) {
        fprintf(stderr, "WGT_TEST_POISON=%s is not off, on or both\n", mode);
        return 2;
    }
    if (off) run_pass(filter, 0);
    if (on) run_pass(filter, 1);
    printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
    return failed ? 1 : 0;
}
