/*
 * Graph handles: a released compiled graph's handle is stale for good. Releasing it again
 * (which used to be ignored silently), or passing it (or something that never was a graph)
 * to any function that takes a graph, is WGT_ERR_INVALID_ARGUMENT naming the function, found
 * from the handle table alone, never from the freed graph.
 */
#include <stdint.h>
#include <string.h>

#include "core/handles.h"
#include "stale_calls.h"
#include "test.h"

static const int64_t S4[1] = {4};

/* y = x + 1 over a graph input x of 4 floats. */
static wgt_graph *plus_one(wgt_context *ctx) {
    wgt_tensor *x = wgt_graph_input(ctx, "x", WGT_F32, 1, S4), *y = x ? wgt_add_scalar(x, 1) : NULL;
    wgt_graph *g = y ? wgt_graph_build(ctx, 1, &(wgt_binding){"y", y}) : NULL;
    CHECK(g, "%s", wgt_last_error());
    wgt_release(y);
    wgt_release(x);
    return g;
}

/* Dispatches g on x = {1, 2, 3, 4}; 1 when it ran and y = x + 1. */
static int runs_plus_one(wgt_context *ctx, wgt_graph *g) {
    float v[4] = {1, 2, 3, 4}, got[4] = {0};
    wgt_tensor *x = wgt_tensor_from_data(ctx, WGT_F32, 1, S4, v, sizeof v, WGT_USAGE_DEFAULT);
    wgt_tensor *y = wgt_tensor_create(ctx, WGT_F32, 1, S4, WGT_USAGE_DEFAULT);
    int ok = wgt_graph_dispatch(g, 1, &(wgt_binding){"x", x}, 1, &(wgt_binding){"y", y}) == WGT_OK &&
             wgt_tensor_read(y, got, sizeof got) == WGT_OK;
    for (int i = 0; i < 4; i++) ok = ok && got[i] == v[i] + 1;
    wgt_release(x);
    wgt_release(y);
    return ok;
}

/* One call per public function that takes a graph, each given `dead`; x and y are live. */
#define GRAPH_CALLS(X)                                                                              \
    X(wgt_graph_release, (wgt_graph_release(dead), 1))                                             \
    X(wgt_graph_launches, wgt_graph_launches(dead) == -1)                                          \
    X(wgt_graph_dispatch, wgt_graph_dispatch(dead, 1, &(wgt_binding){"x", x}, 1, &(wgt_binding){"y", y}) != WGT_OK)

/* handles_every_entry_point_is_wrapped checks that this covers every function of the header
 * with a graph parameter. */
#define CALL_NAME(name, call) #name,
const char *const test_graph_calls[] = {GRAPH_CALLS(CALL_NAME) NULL};

static void refuse_every_call(wgt_context *ctx, wgt_graph *dead, const char *what) {
    float v[4] = {1, 2, 3, 4}, got[4] = {0};
    wgt_tensor *x = wgt_tensor_from_data(ctx, WGT_F32, 1, S4, v, sizeof v, WGT_USAGE_DEFAULT);
    wgt_tensor *y = wgt_zeros(ctx, WGT_F32, 1, S4);
    CHECK(x && y, "%s", wgt_last_error());
#define CALL_CHECK(name, call) CHECK_STALE_CALL(name, call, what, "graph is not a live graph")
    GRAPH_CALLS(CALL_CHECK)
#undef CALL_CHECK
    wgt_clear_error();
    CHECK(wgt_tensor_read(y, got, sizeof got) == WGT_OK && got[0] == 0 && got[3] == 0,
          "the output given with %s was written: %g %g (%s)", what, got[0], got[3], wgt_last_error());
    wgt_release(x);
    wgt_release(y);
}

TEST_BACKENDS(graph_handles_double_release_is_an_error) {
    wgt_graph *g = plus_one(ctx);
    if (!g) return;
    wgt_graph_release(g);
    CHECK_ERROR((wgt_graph_release(g), 1), WGT_ERR_INVALID_ARGUMENT, "wgt_graph_release: graph is not a live graph");
    CHECK_ERROR((wgt_graph_release(g), 1), WGT_ERR_INVALID_ARGUMENT, "wgt_graph_release");
    wgt_clear_error();
    wgt_graph_release(NULL); /* still nothing, and no error */
    CHECK(wgt_last_status() == WGT_OK && wgt_graph_launches(NULL) == -1, "NULL: %s", wgt_last_error());
}

TEST_BACKENDS(graph_handles_use_after_release_is_an_error_in_every_function) {
    wgt_graph *dead = plus_one(ctx);
    if (!dead) return;
    wgt_graph_release(dead);
    refuse_every_call(ctx, dead, "a released graph");
    /* A stack address holding what a graph record started with (its old magic number). */
    uint32_t forged[256] = {0x77674772u};
    refuse_every_call(ctx, (wgt_graph *)(void *)forged, "a stack address");
    refuse_every_call(ctx, (wgt_graph *)(uintptr_t)0xfff001, "a forged handle");
}

/* A released graph's slot goes to the next graph: the old handle stays stale and never runs
 * the new graph, which works. */
TEST_BACKENDS(graph_handles_reused_slot_is_not_the_old_graph) {
    wgt_graph *old = plus_one(ctx);
    if (!old) return;
    wgt_graph_release(old);
    wgt_graph *g = plus_one(ctx);
    if (!g) return;
    CHECK(g != old, "the new graph's handle is the released one's");
    CHECK_ERROR(wgt_graph_launches(old) == -1, WGT_ERR_INVALID_ARGUMENT, "wgt_graph_launches: graph is not a live");
    CHECK(runs_plus_one(ctx, g), "the new graph: %s", wgt_last_error());
    CHECK_ERROR(!runs_plus_one(ctx, old), WGT_ERR_INVALID_ARGUMENT, "wgt_graph_dispatch: graph is not a live graph");
    wgt_graph_release(g);
}

TEST_BACKENDS(graph_handles_full_table_is_a_limit_error) {
    uint32_t old = wgt_graph_handles_set_limit(0);
    wgt_tensor *x = wgt_graph_input(ctx, "x", WGT_F32, 1, S4), *y = wgt_add_scalar(x, 1);
    CHECK_ERROR(!wgt_graph_build(ctx, 1, &(wgt_binding){"y", y}), WGT_ERR_LIMIT,
                "wgt_graph_build: 0 graphs are alive, the most one process may hold at once");
    wgt_graph_handles_set_limit(old);
    wgt_release(y);
    wgt_release(x);
    wgt_graph *g = plus_one(ctx);
    CHECK(g && runs_plus_one(ctx, g), "after the limit is lifted: %s", wgt_last_error());
    wgt_graph_release(g);
}
