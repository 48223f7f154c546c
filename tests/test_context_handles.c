/*
 * Context handles: a released context's handle is stale for good. Releasing it again, or
 * passing it (or something that never was a context) to any function that takes a context,
 * is WGT_ERR_INVALID_ARGUMENT naming the function, found from the handle table alone. Built
 * with AddressSanitizer (or run under valgrind) these also prove that no check reads the
 * freed context.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/handles.h"
#include "stale_calls.h"
#include "test.h"

static const int64_t S4[1] = {4};

/* A context of the fixture's kind, released at once: its handle is stale. */
static wgt_context *released_context(wgt_context *like) {
    wgt_context *c = test_new_context(wgt_context_backend(like));
    wgt_context_release(c);
    return c;
}

TEST_BACKENDS(context_handles_double_release_is_an_error) {
    wgt_context *own = released_context(ctx);
    if (!own) return;
    CHECK_ERROR((wgt_context_release(own), 1), WGT_ERR_INVALID_ARGUMENT,
                "wgt_context_release: context is not a live context");
    /* And a third time: the table still says stale, and the fixture is untouched. */
    CHECK_ERROR((wgt_context_release(own), 1), WGT_ERR_INVALID_ARGUMENT, "wgt_context_release");
    CHECK(wgt_context_status(ctx) == WGT_OK, "the fixture's context: %s", wgt_last_error());
    wgt_clear_error();
    wgt_context_release(NULL); /* still nothing, and no error */
    CHECK(wgt_last_status() == WGT_OK, "releasing NULL recorded %s", wgt_last_error());
}

/* One call per public function that takes a context, each given the stale handle `dead`; a
 * live tensor `t` of the fixture stands in where a tensor is needed. */
#define CONTEXT_CALLS(X)                                                                                      \
    X(wgt_context_release, (wgt_context_release(dead), 1))                                                   \
    X(wgt_context_backend, wgt_context_backend(dead) == WGT_BACKEND_AUTO)                                    \
    X(wgt_context_device_name, !strcmp(wgt_context_device_name(dead), ""))                                   \
    X(wgt_context_status, wgt_context_status(dead) != WGT_OK)                                                \
    X(wgt_context_sync, wgt_context_sync(dead) != WGT_OK)                                                    \
    X(wgt_context_describe, !wgt_context_describe(dead))                                                     \
    X(wgt_context_simulate_device_loss, wgt_context_simulate_device_loss(dead) != WGT_OK)                    \
    X(wgt_context_stats, wgt_context_stats(dead, &stats) != WGT_OK)                                          \
    X(wgt_context_trim, wgt_context_trim(dead) != WGT_OK)                                                    \
    X(wgt_graph_input, !wgt_graph_input(dead, "x", WGT_F32, 1, S4))                                          \
    X(wgt_graph_build, !wgt_graph_build(dead, 1, &(wgt_binding){"y", t}))                                    \
    X(wgt_tensor_create, !wgt_tensor_create(dead, WGT_F32, 1, S4, WGT_USAGE_DEFAULT))                        \
    X(wgt_tensor_from_data, !wgt_tensor_from_data(dead, WGT_F32, 1, S4, data, sizeof data, WGT_USAGE_DEFAULT)) \
    X(wgt_zeros, !wgt_zeros(dead, WGT_F32, 1, S4))                                                           \
    X(wgt_ones, !wgt_ones(dead, WGT_F32, 1, S4))                                                             \
    X(wgt_full, !wgt_full(dead, WGT_F32, 1, S4, 2.0))                                                        \
    X(wgt_arange, !wgt_arange(dead, WGT_F32, 0, 4, 1))                                                       \
    X(wgt_rand_uniform, !wgt_rand_uniform(dead, WGT_F32, 1, S4, 0, 1, 7))                                    \
    X(wgt_rand_normal, !wgt_rand_normal(dead, WGT_F32, 1, S4, 0, 1, 7))                                      \
    X(wgt_rand_bits, !wgt_rand_bits(dead, 1, S4, 7))                                                        \
    X(wgt_scalar, !wgt_scalar(dead, WGT_F32, 1.0))                                                          \
    X(wgt_tensor_from_buffer, !wgt_tensor_from_buffer(dead, NULL, WGT_F32, 1, S4, WGT_USAGE_DEFAULT))        \
    X(wgt_context_webgpu_device, !wgt_context_webgpu_device(dead))                                           \
    X(wgt_kernel_create, !wgt_kernel_create(dead, "@compute @workgroup_size(1) fn main() {}", "main"))      \
    X(wgt_gguf_load, !wgt_gguf_load(NULL, dead, "w", WGT_USAGE_DEFAULT))                                     \
    X(wgt_load_npy, !wgt_load_npy(dead, "/nonexistent.npy", WGT_USAGE_DEFAULT))                              \
    X(wgt_load_safetensors, !wgt_load_safetensors(dead, "/nonexistent.safetensors", "w", WGT_USAGE_DEFAULT))

/* handles_every_entry_point_is_wrapped checks that this covers every function of the header
 * with a context parameter. */
#define CALL_NAME(name, call) #name,
const char *const test_context_calls[] = {CONTEXT_CALLS(CALL_NAME) NULL};

static void refuse_every_call(wgt_context *ctx, wgt_context *dead, const char *what) {
    float data[4] = {1, 2, 3, 4};
    wgt_stats stats;
    wgt_tensor *t = wgt_tensor_from_data(ctx, WGT_F32, 1, S4, data, sizeof data, WGT_USAGE_DEFAULT);
    CHECK(t, "%s", wgt_last_error());
#define CALL_CHECK(name, call) CHECK_STALE_CALL(name, call, what, "not a live context")
    CONTEXT_CALLS(CALL_CHECK)
#undef CALL_CHECK
    wgt_clear_error();
    float out[4] = {0};
    CHECK(wgt_tensor_read(t, out, sizeof out) == WGT_OK && out[3] == 4, "the fixture's tensor: %s", wgt_last_error());
    wgt_release(t);
}

/* Every function that takes a context refuses a released one, and one that never was a
 * context, before reading it. */
TEST_BACKENDS(context_handles_use_after_release_is_an_error_in_every_function) {
    wgt_context *dead = released_context(ctx);
    if (!dead) return;
    refuse_every_call(ctx, dead, "a released context");
    long not_a_context[64] = {0}; /* a stack address, as a caller's stray pointer would be */
    refuse_every_call(ctx, (wgt_context *)(void *)not_a_context, "a stack address");
    /* An odd value past every slot in use: the shape of a handle, naming no live slot. */
    refuse_every_call(ctx, (wgt_context *)(uintptr_t)0xfff001, "a forged handle");
}

/* Tensors keep their context's record alive after the caller released it: they fail as
 * "released", their context is the stale handle, and the last one frees the record. */
TEST_BACKENDS(context_handles_tensor_outlives_its_context) {
    wgt_context *own = test_new_context(wgt_context_backend(ctx));
    if (!own) return;
    float v[4] = {1, 2, 3, 4};
    wgt_tensor *a = wgt_tensor_from_data(own, WGT_F32, 1, S4, v, sizeof v, WGT_USAGE_DEFAULT);
    wgt_tensor *b = wgt_add(a, a); /* pending at the release */
    CHECK(a && b, "%s", wgt_last_error());
    CHECK(wgt_tensor_context(a) == own, "a tensor's context is the caller's handle");
    wgt_context_release(own);
    CHECK(wgt_context_record(own) == NULL, "the handle is stale after the release");
    CHECK_ERROR(wgt_tensor_read(b, v, sizeof v) != WGT_OK, WGT_ERR_INVALID_ARGUMENT, "released");
    wgt_context *of_a = wgt_tensor_context(a);
    CHECK(of_a == own, "the tensor's context is the handle the caller had");
    CHECK_ERROR(wgt_context_sync(of_a) != WGT_OK, WGT_ERR_INVALID_ARGUMENT, "wgt_context_sync: context is not a live");
    CHECK_ERROR(!wgt_zeros(of_a, WGT_F32, 1, S4), WGT_ERR_INVALID_ARGUMENT, "wgt_zeros: context is not a live");
    CHECK_ERROR((wgt_context_release(of_a), 1), WGT_ERR_INVALID_ARGUMENT, "wgt_context_release");
    wgt_release(b);
    wgt_release(a); /* the last storage: the record goes now */
    CHECK_ERROR(wgt_context_status(own) != WGT_OK, WGT_ERR_INVALID_ARGUMENT, "wgt_context_status");
}

/* A new context may take the released one's slot: the stale handle must not reach it. */
TEST_BACKENDS(context_handles_stale_after_reuse_leaves_the_new_context_alone) {
    enum { N = 8 };
    wgt_context *old[N], *fresh[N];
    for (int i = 0; i < N; i++) old[i] = released_context(ctx);
    for (int i = 0; i < N; i++) fresh[i] = test_new_context(wgt_context_backend(ctx));
    for (int i = 0; i < N; i++) {
        if (!old[i] || !fresh[i]) continue;
        CHECK(fresh[i] != old[i], "a new context got a stale handle's value");
        CHECK_ERROR((wgt_context_release(old[i]), 1), WGT_ERR_INVALID_ARGUMENT, "not a live context");
        wgt_tensor *t = wgt_full(fresh[i], WGT_F32, 1, S4, (double)i);
        float v[4] = {0};
        CHECK(t && wgt_tensor_read(t, v, sizeof v) == WGT_OK && v[0] == (float)i, "fresh[%d]: %s", i, wgt_last_error());
        wgt_release(t);
    }
    for (int i = 0; i < N; i++) wgt_context_release(fresh[i]);
}

/* The table is bounded: past its limit a new context is WGT_ERR_LIMIT. */
TEST(context_handles_table_limit_is_an_error) {
    uint32_t old = wgt_context_handles_set_limit(0);
    wgt_context_options opt = {.backend = WGT_BACKEND_CPU, .quiet = 1};
    CHECK_ERROR(!wgt_context_create(&opt), WGT_ERR_LIMIT, "wgt_context_create: 0 contexts are alive");
    wgt_context_handles_set_limit(old);
    wgt_context *c = test_new_context(WGT_BACKEND_CPU);
    CHECK(c && wgt_context_status(c) == WGT_OK, "after the limit is raised: %s", wgt_last_error());
    wgt_context_release(c);
}

typedef struct churn_arg {
    int failures;
} churn_arg;

static void *churn(void *p) {
    churn_arg *a = p;
    wgt_context_options opt = {.backend = WGT_BACKEND_CPU, .quiet = 1};
    for (int i = 0; i < 500; i++) {
        wgt_context *c = wgt_context_create(&opt);
        if (!c) {
            a->failures++;
            continue;
        }
        wgt_tensor *t = wgt_ones(c, WGT_F32, 1, S4);
        if (!t) a->failures++;
        wgt_context_release(c);
        wgt_context_release(c); /* stale at once: refused, never another thread's context */
        if (wgt_last_status() != WGT_ERR_INVALID_ARGUMENT) a->failures++;
        wgt_clear_error();
        wgt_release(t);
    }
    return NULL;
}

/* Threads create and release contexts at once (one table for the process). */
TEST(context_handles_threads_share_the_table) {
    enum { T = 4 };
    pthread_t th[T];
    churn_arg args[T] = {{0}};
    int started[T] = {0};
    for (int i = 0; i < T; i++) started[i] = pthread_create(&th[i], NULL, churn, &args[i]) == 0;
    for (int i = 0; i < T; i++) {
        CHECK(started[i], "thread %d did not start", i);
        if (!started[i]) continue;
        pthread_join(th[i], NULL);
        CHECK(args[i].failures == 0, "thread %d: %d failures", i, args[i].failures);
    }
}
