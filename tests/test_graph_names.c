/*
 * Compiled graphs with many named inputs and outputs: creating the placeholders, building
 * and dispatching cost a constant per name (hashed names, sorted storages), not a scan of
 * the names seen so far. 100,000 inputs and as many outputs build and dispatch within
 * seconds on the CPU backend and give exact values; the duplicate checks still name the
 * culprits at that size.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "test.h"

#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif
#ifndef RUNNING_ON_VALGRIND
#define RUNNING_ON_VALGRIND 0
#endif

static const int64_t S1[1] = {1};

static double seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct wide_graph {
    int n;
    wgt_tensor **in;    /* placeholders x<i> */
    wgt_tensor **out;   /* y<i> = x<i> + x<(i+1) mod n> */
    char (*names)[16];  /* x<i> then y<i> */
    wgt_binding *inputs, *outputs;
    wgt_graph *graph;
} wide_graph;

static void wide_free(wide_graph *w) {
    wgt_graph_release(w->graph);
    for (int i = 0; i < w->n; i++) {
        if (w->in) wgt_release(w->in[i]);
        if (w->out) wgt_release(w->out[i]);
        if (w->inputs) wgt_release(w->inputs[i].tensor);
        if (w->outputs) wgt_release(w->outputs[i].tensor);
    }
    free(w->in), free(w->out), free(w->names), free(w->inputs), free(w->outputs);
}

/* n placeholders and n outputs recorded and built; 0 with the failure reported. */
static int wide_build(wgt_context *ctx, wide_graph *w, int n) {
    w->n = n;
    w->in = calloc((size_t)n, sizeof *w->in);
    w->out = calloc((size_t)n, sizeof *w->out);
    w->names = calloc((size_t)n * 2, sizeof *w->names);
    w->inputs = calloc((size_t)n, sizeof *w->inputs);
    w->outputs = calloc((size_t)n, sizeof *w->outputs);
    CHECK(w->in && w->out && w->names && w->inputs && w->outputs, "out of host memory");
    if (!w->in || !w->out || !w->names || !w->inputs || !w->outputs) return 0;
    for (int i = 0; i < n; i++) {
        snprintf(w->names[i], sizeof w->names[i], "x%d", i);
        snprintf(w->names[n + i], sizeof w->names[i], "y%d", i);
        w->in[i] = wgt_graph_input(ctx, w->names[i], WGT_F32, 1, S1);
        CHECK(w->in[i], "input %d: %s", i, wgt_last_error());
        if (!w->in[i]) return 0;
    }
    for (int i = 0; i < n; i++) {
        w->out[i] = wgt_add(w->in[i], w->in[(i + 1) % n]);
        CHECK(w->out[i], "output %d: %s", i, wgt_last_error());
        if (!w->out[i]) return 0;
        w->outputs[i] = (wgt_binding){w->names[n + i], w->out[i]};
    }
    w->graph = wgt_graph_build(ctx, n, w->outputs);
    CHECK(w->graph, "building: %s", wgt_last_error());
    for (int i = 0; i < n; i++) w->outputs[i].tensor = NULL; /* the bindings get the dispatch's tensors */
    return w->graph != NULL;
}

/* Binds x<i> = i and fresh outputs, dispatches and checks y<i> = 2i + 1 (i + 1 mod n). */
static void wide_dispatch(wgt_context *ctx, wide_graph *w) {
    int n = w->n;
    for (int i = 0; i < n; i++) {
        float v = (float)i;
        w->inputs[i] = (wgt_binding){w->names[i], wgt_tensor_from_data(ctx, WGT_F32, 1, S1, &v, sizeof v, WGT_USAGE_DEFAULT)};
        w->outputs[i] = (wgt_binding){w->names[n + i], wgt_tensor_create(ctx, WGT_F32, 1, S1, WGT_USAGE_DEFAULT)};
        CHECK(w->inputs[i].tensor && w->outputs[i].tensor, "%s", wgt_last_error());
    }
    CHECK(wgt_graph_dispatch(w->graph, n, w->inputs, n, w->outputs) == WGT_OK, "dispatching: %s", wgt_last_error());
    int wrong = 0;
    for (int i = 0; i < n; i++) {
        float got = -1;
        if (wgt_tensor_read(w->outputs[i].tensor, &got, sizeof got) != WGT_OK || got != (float)(i + (i + 1) % n)) {
            if (wrong++ < 3) CHECK(0, "y%d = %g, wanted %d: %s", i, got, i + (i + 1) % n, wgt_last_error());
        }
    }
    CHECK(!wrong, "%d outputs wrong", wrong);
}

/* Before the names were hashed this took minutes (every new name compared with all before it,
 * at wgt_graph_input, at the build and at each binding). */
TEST(graph_names_100k_inputs_and_outputs_build_and_dispatch_in_seconds) {
    enum { N = 100000 };
    wgt_context *own = test_new_context(WGT_BACKEND_CPU);
    if (!own) return;
    wide_graph w = {0};
    double t0 = seconds();
    if (wide_build(own, &w, N)) {
        double t1 = seconds();
        wide_dispatch(own, &w);
        double t2 = seconds();
        fprintf(stderr, "  %d inputs and outputs: record + build %.2f s, bind + dispatch + read %.2f s\n", N, t1 - t0,
                t2 - t1);
        /* Generous for a loaded machine; the quadratic checks took minutes. */
        if (!SANITIZED && !RUNNING_ON_VALGRIND) CHECK(t2 - t0 < 10.0, "%.1f s for %d names", t2 - t0, N);
    }
    wide_free(&w);
    wgt_context_release(own);
}

/* The checks the hashing replaced still find duplicates anywhere in a long list. */
TEST_BACKENDS(graph_names_duplicates_are_found_among_many) {
    enum { N = 2000 };
    wide_graph w = {0};
    if (!wide_build(ctx, &w, N)) {
        wide_free(&w);
        return;
    }
    CHECK_ERROR(!wgt_graph_input(ctx, "x1234", WGT_F32, 1, S1), WGT_ERR_INVALID_ARGUMENT,
                "an input named 'x1234' already exists");
    /* Build: a repeated output name, and one tensor under two names, both far apart. */
    wgt_binding *b = calloc(N, sizeof *b);
    CHECK(b, "out of host memory");
    for (int i = 0; b && i < N; i++) b[i] = (wgt_binding){w.names[N + i], w.out[i]};
    if (b) {
        b[N - 1].name = w.names[N + 7];
        CHECK_ERROR(!wgt_graph_build(ctx, N, b), WGT_ERR_INVALID_ARGUMENT, "two outputs are named 'y7'");
        b[N - 1] = (wgt_binding){w.names[2 * N - 1], w.out[5]};
        CHECK_ERROR(!wgt_graph_build(ctx, N, b), WGT_ERR_INVALID_ARGUMENT, "outputs 'y5' and 'y1999' are the same tensor");
    }
    free(b);
    /* Dispatch: a name bound twice, an unknown name, an output sharing an input's storage, two
     * outputs sharing one. */
    wide_dispatch(ctx, &w);
    wgt_binding keep_in = w.inputs[N - 1], keep_out = w.outputs[N - 1];
    w.inputs[N - 1].name = w.names[3];
    CHECK_ERROR(wgt_graph_dispatch(w.graph, N, w.inputs, N, w.outputs) != WGT_OK, WGT_ERR_INVALID_ARGUMENT,
                "input 'x3' is bound twice");
    w.inputs[N - 1].name = "nope";
    CHECK_ERROR(wgt_graph_dispatch(w.graph, N, w.inputs, N, w.outputs) != WGT_OK, WGT_ERR_INVALID_ARGUMENT,
                "no input named 'nope'");
    w.inputs[N - 1] = keep_in;
    w.outputs[N - 1].tensor = w.inputs[17].tensor;
    CHECK_ERROR(wgt_graph_dispatch(w.graph, N, w.inputs, N, w.outputs) != WGT_OK, WGT_ERR_USAGE,
                "output 'y1999' shares its storage with input 'x17'");
    w.outputs[N - 1].tensor = w.outputs[11].tensor;
    CHECK_ERROR(wgt_graph_dispatch(w.graph, N, w.inputs, N, w.outputs) != WGT_OK, WGT_ERR_USAGE,
                "outputs 'y11' and 'y1999' share one storage");
    /* Two inputs may share a tensor. */
    w.outputs[N - 1] = keep_out;
    wgt_binding keep2 = w.inputs[2];
    w.inputs[2].tensor = w.inputs[9].tensor;
    CHECK(wgt_graph_dispatch(w.graph, N, w.inputs, N, w.outputs) == WGT_OK, "inputs sharing a tensor: %s",
          wgt_last_error());
    w.inputs[2] = keep2;
    wide_free(&w);
}

/* A released placeholder's name is free again, and the names still live stay taken, through
 * many releases and re-creations (the index drops removed names when it rehashes). */
TEST(graph_names_released_placeholders_free_their_names) {
    enum { N = 3000, ROUNDS = 4 };
    wgt_context *own = test_new_context(WGT_BACKEND_CPU);
    wgt_tensor **x = calloc(N, sizeof *x);
    CHECK(own && x, "%s", wgt_last_error());
    char name[16];
    for (int r = 0; own && x && r < ROUNDS; r++) {
        for (int i = 0; i < N; i++) {
            if (x[i]) continue;
            snprintf(name, sizeof name, "in%d", i);
            x[i] = wgt_graph_input(own, name, WGT_F32, 1, S1);
            CHECK(x[i], "round %d, %s: %s", r, name, wgt_last_error());
        }
        for (int i = r % 2; i < N; i += 2 + r) { /* a different set each round */
            wgt_release(x[i]);
            x[i] = NULL;
        }
        int wrong = 0;
        for (int i = 0; i < N; i++) {
            snprintf(name, sizeof name, "in%d", i);
            wgt_clear_error();
            wgt_tensor *again = wgt_graph_input(own, name, WGT_F32, 1, S1);
            if (!again != !!x[i] || (x[i] && wgt_last_status() != WGT_ERR_INVALID_ARGUMENT)) wrong++;
            wgt_release(again);
        }
        CHECK(!wrong, "round %d: %d names wrongly taken or free", r, wrong);
    }
    for (int i = 0; x && i < N; i++) wgt_release(x[i]);
    free(x);
    wgt_clear_error();
    wgt_context_release(own);
}
