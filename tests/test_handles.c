/*
 * Tensor handles: a released handle is stale for good. Releasing it again, using it, or
 * releasing it after its slot went to a new tensor is WGT_ERR_INVALID_ARGUMENT naming the
 * function, never a crash, and never touches the new tensor. Run under AddressSanitizer
 * (make test-asan) these also prove that no check reads freed memory.
 */
#include <ctype.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/handles.h"
#include "test.h"

static const int64_t S4[1] = {4};

static wgt_tensor *filled(wgt_context *ctx, float base) {
    float v[4] = {base, base + 1, base + 2, base + 3};
    return wgt_tensor_from_data(ctx, WGT_F32, 1, S4, v, sizeof v, WGT_USAGE_DEFAULT);
}

static int holds(wgt_tensor *t, float base) {
    float v[4] = {0};
    if (wgt_tensor_read(t, v, sizeof v) != WGT_OK) return 0;
    for (int i = 0; i < 4; i++)
        if (v[i] != base + (float)i) return 0;
    return 1;
}

TEST_BACKENDS(handles_double_release_is_an_error) {
    wgt_tensor *t = filled(ctx, 1);
    CHECK(t, "%s", wgt_last_error());
    wgt_release(t);
    CHECK_ERROR((wgt_release(t), 1), WGT_ERR_INVALID_ARGUMENT, "wgt_release: tensor is not a live tensor");
    /* A retained handle takes as many releases as references, then no more. */
    wgt_tensor *u = filled(ctx, 2);
    CHECK(wgt_retain(u) == u, "retain gives the same handle");
    wgt_release(u);
    CHECK(holds(u, 2), "one reference left: %s", wgt_last_error());
    wgt_release(u);
    CHECK_ERROR((wgt_release(u), 1), WGT_ERR_INVALID_ARGUMENT, "wgt_release");
    CHECK_ERROR(!wgt_retain(u), WGT_ERR_INVALID_ARGUMENT, "wgt_retain");
}

TEST_BACKENDS(handles_use_after_release_is_an_error) {
    wgt_tensor *a = filled(ctx, 1), *b = filled(ctx, 5);
    wgt_tensor *view = wgt_slice(a, 0, 1, 3, 1);
    wgt_release(a);
    CHECK(view && wgt_tensor_numel(view) == 2, "a view keeps its own handle: %s", wgt_last_error());
    float out[4];
    CHECK_ERROR(!wgt_add(a, b), WGT_ERR_INVALID_ARGUMENT, "wgt_add: a is not a live tensor");
    CHECK_ERROR(!wgt_mul(b, a), WGT_ERR_INVALID_ARGUMENT, "wgt_mul: b is not a live tensor");
    CHECK_ERROR(wgt_tensor_read(a, out, sizeof out) != WGT_OK, WGT_ERR_INVALID_ARGUMENT, "wgt_tensor_read");
    CHECK_ERROR(!wgt_tensor_data(a), WGT_ERR_INVALID_ARGUMENT, "wgt_tensor_data");
    CHECK_ERROR(!wgt_concat((wgt_tensor *[]){b, a}, 2, 0), WGT_ERR_INVALID_ARGUMENT, "tensors[1]");
    CHECK_ERROR(wgt_eval(2, (wgt_tensor *const[]){b, a}) != WGT_OK, WGT_ERR_INVALID_ARGUMENT, "tensors[1]");
    CHECK_ERROR(wgt_tensor_destroy(a) != WGT_OK, WGT_ERR_INVALID_ARGUMENT, "wgt_tensor_destroy");
    wgt_clear_error();
    CHECK(wgt_tensor_ndim(a) == -1 && wgt_tensor_numel(a) == -1 && !wgt_tensor_shape(a) && !wgt_tensor_context(a),
          "properties of a stale handle are the neutral values");
    CHECK(wgt_last_status() == WGT_OK, "properties record nothing: %s", wgt_last_error());
    /* Not a handle at all (a stack address) reads as not live, too. */
    float not_a_tensor[64] = {0};
    CHECK_ERROR(!wgt_neg((wgt_tensor *)(void *)not_a_tensor), WGT_ERR_INVALID_ARGUMENT, "wgt_neg: a is not a live tensor");
    CHECK(holds(b, 5), "other tensors unaffected: %s", wgt_last_error());
    wgt_release(view);
    wgt_release(b);
}

/* The old handle's slot (and, before handles, its address) goes to the next tensor made:
 * the stale handle must not reach it. */
TEST_BACKENDS(handles_stale_after_reuse_leaves_the_new_tensor_alone) {
    enum { N = 64 };
    wgt_tensor *old[N], *fresh[N];
    for (int i = 0; i < N; i++) old[i] = filled(ctx, (float)i);
    for (int i = 0; i < N; i++) wgt_release(old[i]);
    for (int i = 0; i < N; i++) fresh[i] = filled(ctx, (float)(100 + i));
    for (int i = 0; i < N; i++) {
        CHECK(fresh[i] != old[i] || !fresh[i], "a new tensor got a stale handle's value");
        CHECK_ERROR((wgt_release(old[i]), 1), WGT_ERR_INVALID_ARGUMENT, "not a live tensor");
        CHECK_ERROR(!wgt_neg(old[i]), WGT_ERR_INVALID_ARGUMENT, "not a live tensor");
    }
    for (int i = 0; i < N; i++) {
        CHECK(holds(fresh[i], (float)(100 + i)), "fresh[%d] changed: %s", i, wgt_last_error());
        wgt_release(fresh[i]);
    }
}

/* The library's own references (a pending read) do not make a released handle live again:
 * a second release is refused instead of taking the read's reference. */
TEST_BACKENDS(handles_library_references_do_not_revive_a_handle) {
    wgt_tensor *t = filled(ctx, 7);
    float out[4] = {0};
    wgt_read *r = wgt_read_begin(t, out, sizeof out);
    CHECK(r, "%s", wgt_last_error());
    wgt_release(t);
    CHECK_ERROR((wgt_release(t), 1), WGT_ERR_INVALID_ARGUMENT, "wgt_release");
    CHECK(r && wgt_read_wait(r) == WGT_OK && out[0] == 7 && out[3] == 10, "the read still completes: %s",
          wgt_last_error());
    wgt_read_release(r);
}

/* The table is bounded: past its limit a new tensor is WGT_ERR_LIMIT naming the function. */
TEST_BACKENDS(handles_table_limit_is_an_error) {
    enum { N = 40 };
    wgt_tensor *t[N] = {0};
    int made = 0;
    t[made++] = filled(ctx, 0);
    uint32_t old = wgt_handles_set_limit(1); /* below what lives now (t[0] at least) */
    wgt_clear_error();
    wgt_tensor *x = wgt_neg(t[0]);
    CHECK(!x, "a tensor past the limit was made");
    CHECK(wgt_last_status() == WGT_ERR_LIMIT && test_contains(wgt_last_error(), "wgt_neg: 1 tensors are alive"), "%s",
          wgt_last_error());
    wgt_handles_set_limit(old);
    wgt_clear_error();
    while (made < N && (t[made] = wgt_neg(t[0])) != NULL) made++;
    CHECK(made == N, "after the limit is raised: %s", wgt_last_error());
    for (int i = 0; i < made; i++) wgt_release(t[i]);
    wgt_release(x);
}

typedef struct churn_arg {
    wgt_context *ctx;
    int failures;
} churn_arg;

static void *churn(void *p) {
    churn_arg *a = p;
    wgt_tensor *base = filled(a->ctx, 3);
    for (int i = 0; i < 20000 && base; i++) {
        wgt_tensor *v = wgt_slice(base, 0, 1, 3, 1);
        if (!v || wgt_tensor_numel(v) != 2) a->failures++;
        wgt_release(v);
        wgt_release(v); /* stale at once: refused, never another thread's tensor */
        if (wgt_last_status() != WGT_ERR_INVALID_ARGUMENT) a->failures++;
        wgt_clear_error();
    }
    if (!base || !holds(base, 3)) a->failures++;
    wgt_release(base);
    return NULL;
}

/* Contexts on different threads create and end handles at once (one table for the process). */
TEST(handles_threads_share_the_table) {
    enum { T = 4 };
    pthread_t th[T];
    churn_arg args[T];
    for (int i = 0; i < T; i++) {
        args[i] = (churn_arg){test_new_context(WGT_BACKEND_CPU), 0};
        CHECK(args[i].ctx && pthread_create(&th[i], NULL, churn, &args[i]) == 0, "thread %d", i);
    }
    for (int i = 0; i < T; i++) {
        pthread_join(th[i], NULL);
        CHECK(args[i].failures == 0, "thread %d: %d failures", i, args[i].failures);
        wgt_context_release(args[i].ctx);
    }
}

#ifndef WGT_SOURCE_DIR
#define WGT_SOURCE_DIR "."
#endif

extern const char *const wgt_handle_functions[]; /* src/core/api.c */
extern const char *const wgt_context_functions[]; /* src/core/api.c */
extern const char *const test_context_calls[];    /* tests/test_context_handles.c */
extern const char *const wgt_kernel_functions[];  /* src/core/api.c */
extern const char *const test_kernel_calls[];     /* tests/test_kernel_handles.c */
extern const char *const wgt_graph_functions[];   /* src/core/api.c */
extern const char *const test_graph_calls[];      /* tests/test_graph_handles.c */
extern const char *const wgt_read_functions[];    /* src/core/api.c */
extern const char *const test_read_calls[];       /* tests/test_read_handles.c */

/* The kinds of handle checked as contexts are: what a parameter's type contains, the
 * functions api.c generated for it and the calls its test makes. */
static const struct {
    const char *param;
    const char *const *generated, *const *tested;
    int at_least;
} single_kinds[] = {{"wgt_kernel *", wgt_kernel_functions, test_kernel_calls, 6},
                    {"wgt_graph *", wgt_graph_functions, test_graph_calls, 3},
                    {"wgt_read *", wgt_read_functions, test_read_calls, 3}};
enum { NKINDS = sizeof single_kinds / sizeof single_kinds[0] };

static int listed(const char *const *list, const char *name) {
    for (int i = 0; list[i]; i++)
        if (!strcmp(list[i], name)) return 1;
    return 0;
}

/* Every function of the header that takes or returns a tensor or a context has an entry
 * point over handles (scripts/gen_api.py was run after the header changed): one without
 * would hand the library's code a handle where it expects a record. One that takes a context
 * checks it, and test_context_handles calls it with a released one. */
TEST(handles_every_entry_point_is_wrapped) {
    char path[4096];
    snprintf(path, sizeof path, "%s/include/wgtensor.h", WGT_SOURCE_DIR);
    FILE *f = fopen(path, "r");
    CHECK(f, "cannot read %s", path);
    if (!f) return;
    char line[1024], proto[4096] = "";
    int checked = 0, with_context = 0, with_kind[NKINDS] = {0};
    while (fgets(line, sizeof line, f)) {
        int starts = !proto[0] && !strchr(" \t/*#}\n", line[0]) && strstr(line, "wgt_") && strchr(line, '(');
        if (!starts && !proto[0]) continue;
        strncat(proto, line, sizeof proto - strlen(proto) - 1);
        if (!strchr(proto, ';')) continue;
        int kind = -1;
        for (int k = 0; k < NKINDS; k++)
            if (strchr(proto, '(') && strstr(strchr(proto, '('), single_kinds[k].param)) kind = k;
        if (strstr(proto, "wgt_tensor") || strstr(proto, "wgt_binding") || strstr(proto, "wgt_context *") || kind >= 0) {
            char *paren = strchr(proto, '('), *begin = paren;
            int takes_context = strstr(paren, "wgt_context *") != NULL;
            while (begin > proto && (begin[-1] == '_' || isalnum((unsigned char)begin[-1]))) begin--;
            *paren = '\0';
            CHECK(listed(wgt_handle_functions, begin),
                  "%s takes or returns a tensor or a context but has no entry point over handles: run scripts/gen_api.py",
                  begin);
            if (takes_context) {
                CHECK(listed(wgt_context_functions, begin), "%s takes a context but checks no handle: run scripts/gen_api.py",
                      begin);
                CHECK(listed(test_context_calls, begin), "%s takes a context: give it a row in CONTEXT_CALLS", begin);
                with_context++;
            }
            if (kind >= 0) {
                CHECK(listed(single_kinds[kind].generated, begin), "%s takes a %s but checks no handle: run "
                      "scripts/gen_api.py", begin, single_kinds[kind].param);
                CHECK(listed(single_kinds[kind].tested, begin), "%s takes a %s: give it a row in its test's calls",
                      begin, single_kinds[kind].param);
                with_kind[kind]++;
            }
            checked++;
        }
        proto[0] = '\0';
    }
    fclose(f);
    CHECK(checked > 100, "only %d functions with tensors found in the header", checked);
    CHECK(with_context >= 20, "only %d functions with a context found in the header", with_context);
    for (int k = 0; k < NKINDS; k++) {
        CHECK(with_kind[k] >= single_kinds[k].at_least, "only %d functions with a %s found in the header", with_kind[k],
              single_kinds[k].param);
        for (int i = 0; single_kinds[k].tested[i]; i++)
            CHECK(listed(single_kinds[k].generated, single_kinds[k].tested[i]), "%s is not generated",
                  single_kinds[k].tested[i]);
    }
    for (int i = 0; test_context_calls[i]; i++)
        CHECK(listed(wgt_context_functions, test_context_calls[i]), "%s is not generated", test_context_calls[i]);
}
