/*
 * User kernels inside compiled graphs and on the CPU backend through a CPU function: a graph
 * with a kernel between library ops gives what eager dispatch gives, over several dispatches
 * with new inputs and an output bound at an offset; an in-place kernel on an intermediate; a
 * kernel's output as the graph's output; the kernel released while the graph holds it; the
 * refusals (several written bindings, writing a graph input, a CPU context without a CPU
 * function, a failing CPU function); bind groups reused by repeated dispatches and replays.
 */
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "user_kernel_sources.h"

/* The same computation on the host, as the CPU backend runs it; it covers the invocations
 * the grid launches, as the shader does, so a wrong grid shows. */
static int affine_cpu(void *user, const wgt_kernel_cpu_call *c) {
    int *calls = user;
    if (calls) ++*calls;
    affine_params p;
    if (c->nbuffers != 2 || c->params_size != sizeof p || strcmp(c->buffers[0].name, "x") ||
        strcmp(c->buffers[1].name, "y") || !c->buffers[1].read_write || c->buffers[0].read_write) {
        snprintf(c->error, c->error_size, "unexpected call: %d buffers, %zu param bytes", c->nbuffers, c->params_size);
        return 1;
    }
    memcpy(&p, c->params, sizeof p);
    const float *x = c->buffers[0].data;
    float *y = c->buffers[1].data;
    uint64_t invocations = (uint64_t)c->groups[0] * c->workgroup_size[0];
    for (uint64_t i = 0; i < invocations && i < p.n; i++) y[i] = x[i] * p.scale + p.bias;
    return 0;
}

static int twice_cpu(void *user, const wgt_kernel_cpu_call *c) {
    (void)user;
    float *b = c->buffers[0].data;
    for (size_t i = 0; i < c->buffers[0].nbytes / 4; i++) b[i] = b[i] * 2.0f + 1.0f;
    return 0;
}

static int released_count;
static void count_release(void *user) {
    (void)user;
    released_count++;
}

/* The kernel, with its CPU function on a CPU context (and on WebGPU, where it is never called). */
static wgt_kernel *make_kernel(wgt_context *ctx, const char *src, wgt_kernel_cpu_fn fn, void *user) {
    wgt_kernel *k = wgt_kernel_create(ctx, src, "main");
    CHECK(k != NULL, "%s", wgt_last_error());
    if (k) CHECK(wgt_kernel_set_cpu_fn(k, fn, user, NULL) == WGT_OK, "%s", wgt_last_error());
    return k;
}

static wgt_tensor *floats(wgt_context *ctx, int64_t n, const float *v) {
    return wgt_tensor_from_data(ctx, WGT_F32, 1, &n, v, (size_t)n * 4, WGT_USAGE_DEFAULT);
}

/* z = affine(x + x) + x, then twice(z) in place on the intermediate: x is a graph input or a
 * tensor with data. NULL with the error set when a step fails. */
static wgt_tensor *program(wgt_kernel *affine, wgt_kernel *twice, wgt_tensor *x, int64_t n) {
    wgt_tensor *a = wgt_add(x, x);
    if (!a) return NULL;
    affine_params p = {0.5f, 3.0f, (uint32_t)n, 0};
    wgt_kernel_arg args[2] = {{.name = "y", .dtype = WGT_F32, .ndim = 1, .shape = &n}, {.name = "x", .tensor = a}};
    wgt_tensor *out[2] = {NULL, NULL};
    uint32_t g[3];
    wgt_status st = wgt_kernel_groups_for(affine, n, g);
    if (st == WGT_OK) st = wgt_kernel_dispatch(affine, 2, args, &p, sizeof p, g[0], g[1], g[2], out);
    wgt_release(a);
    if (st != WGT_OK) return NULL;
    wgt_tensor *z = wgt_add(out[0], x);
    wgt_release(out[0]);
    if (!z) return NULL;
    wgt_kernel_arg in_place = {.name = "buf", .tensor = z};
    if (wgt_kernel_groups_for(twice, n, g) != WGT_OK || wgt_kernel_dispatch(twice, 1, &in_place, NULL, 0, g[0], g[1],
                                                                             g[2], NULL) != WGT_OK) {
        wgt_release(z);
        return NULL;
    }
    wgt_tensor *w = wgt_neg(z); /* a library op after the in-place kernel */
    wgt_release(z);
    return w;
}

TEST_BACKENDS(user_kernel_in_a_graph_matches_eager) {
    enum { N = 1000 }; /* not a multiple of either workgroup size */
    int64_t n = N;
    int cpu_calls = 0;
    wgt_kernel *affine = make_kernel(ctx, affine_src, affine_cpu, &cpu_calls);
    wgt_kernel *twice = make_kernel(ctx, twice_src, twice_cpu, NULL);
    wgt_tensor *x = wgt_graph_input(ctx, "x", WGT_F32, 1, &n);
    wgt_tensor *w = affine && twice && x ? program(affine, twice, x, n) : NULL;
    CHECK(w != NULL, "recording: %s", wgt_last_error());
    wgt_binding ob = {"w", w};
    wgt_graph *g = w ? wgt_graph_build(ctx, 1, &ob) : NULL;
    CHECK(g != NULL, "build: %s", wgt_last_error());
    wgt_release(w), wgt_release(x);
    /* The graph holds the kernels it recorded: releasing them changes nothing. */
    wgt_kernel_release(affine);
    if (!g) {
        wgt_kernel_release(twice);
        return;
    }
    float xs[N], got[N], eager[N];
    float *big = calloc(N + 7, sizeof(float));
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < N; i++) xs[i] = (float)((i * 7 + round * 13) % 301 - 150) / 4.0f; /* exact results */
        wgt_tensor *xt = floats(ctx, n, xs), *yt = wgt_zeros(ctx, WGT_F32, 1, &n);
        wgt_binding ib = {"x", xt}, yb = {"w", yt};
        CHECK(wgt_graph_dispatch(g, 1, &ib, 1, &yb) == WGT_OK, "dispatch %d: %s", round, wgt_last_error());
        CHECK(wgt_tensor_read(yt, got, sizeof got) == WGT_OK, "%s", wgt_last_error());
        /* Eager: the same program on a tensor with data, with a kernel made now. */
        wgt_kernel *affine2 = make_kernel(ctx, affine_src, affine_cpu, &cpu_calls);
        wgt_tensor *e = affine2 ? program(affine2, twice, xt, n) : NULL;
        CHECK(e && wgt_tensor_read(e, eager, sizeof eager) == WGT_OK, "eager: %s", wgt_last_error());
        for (int i = 0; i < N; i++) {
            float want = -(((xs[i] + xs[i]) * 0.5f + 3.0f + xs[i]) * 2.0f + 1.0f);
            CHECK(got[i] == want && eager[i] == want, "round %d: [%d] graph %g eager %g want %g", round, i, got[i],
                  eager[i], want);
            if (test_current_failed()) break;
        }
        wgt_release(e), wgt_release(yt);
        wgt_kernel_release(affine2);
        /* The output bound as a view at an offset: the elements around it stay. */
        if (big) {
            for (int i = 0; i < N + 7; i++) big[i] = -1000.0f - (float)i;
            int64_t bn = N + 7;
            wgt_tensor *bt = floats(ctx, bn, big), *view = bt ? wgt_slice(bt, 0, 5, 5 + N, 1) : NULL;
            yb.tensor = view;
            CHECK(view && wgt_graph_dispatch(g, 1, &ib, 1, &yb) == WGT_OK, "view dispatch: %s", wgt_last_error());
            float all[N + 7];
            CHECK(bt && wgt_tensor_read(bt, all, sizeof all) == WGT_OK, "%s", wgt_last_error());
            for (int i = 0; i < N + 7 && !test_current_failed(); i++)
                CHECK(all[i] == (i < 5 || i >= 5 + N ? big[i] : got[i - 5]), "round %d: view [%d] = %g", round, i,
                      all[i]);
            wgt_release(view), wgt_release(bt);
        }
        wgt_release(xt);
    }
    free(big);
    if (wgt_context_backend(ctx) == WGT_BACKEND_CPU) /* 3 rounds of graph, eager and view */
        CHECK(cpu_calls == 9, "the CPU function ran %d times", cpu_calls);
    else
        CHECK(cpu_calls == 0, "the CPU function ran %d times on WebGPU", cpu_calls);
    wgt_graph_release(g);
    wgt_kernel_release(twice);
}

TEST_BACKENDS(user_kernel_graph_refusals) {
    static const char two_out[] = "@group(0) @binding(0) var<storage, read> a : array<f32>;\n"
                                  "@group(0) @binding(1) var<storage, read_write> s : array<f32>;\n"
                                  "@group(0) @binding(2) var<storage, read_write> d : array<f32>;\n"
                                  "@compute @workgroup_size(16)\n"
                                  "fn main(@builtin(global_invocation_id) id : vec3<u32>) {\n"
                                  "    if (id.x < arrayLength(&a)) { s[id.x] = a[id.x]; d[id.x] = -a[id.x]; }\n"
                                  "}\n";
    int64_t n = 8;
    wgt_kernel *k2 = make_kernel(ctx, two_out, twice_cpu, NULL), *twice = make_kernel(ctx, twice_src, twice_cpu, NULL);
    wgt_tensor *x = wgt_graph_input(ctx, "x", WGT_F32, 1, &n), *data = wgt_full(ctx, WGT_F32, 1, &n, 2.0);
    if (!k2 || !twice || !x || !data) goto done;
    wgt_kernel_arg args[3] = {{.name = "a", .tensor = x},
                              {.name = "s", .dtype = WGT_F32, .ndim = 1, .shape = &n},
                              {.name = "d", .dtype = WGT_F32, .ndim = 1, .shape = &n}};
    wgt_tensor *out[3] = {NULL, NULL, NULL};
    CHECK_ERROR(wgt_kernel_dispatch(k2, 3, args, NULL, 0, 1, 1, 1, out) != WGT_OK, WGT_ERR_USAGE,
                "writes 2 bindings, and inside a compiled graph a kernel may write one");
    CHECK(!out[1] && !out[2], "no output handed out");
    wgt_kernel_arg in_input = {.name = "buf", .tensor = x};
    CHECK_ERROR(wgt_kernel_dispatch(twice, 1, &in_input, NULL, 0, 1, 1, 1, NULL) != WGT_OK, WGT_ERR_USAGE,
                "is graph input 'x', which a graph never writes");
    /* A tensor with data written from graph inputs in place: refused, nothing leaks. */
    wgt_kernel *affine = make_kernel(ctx, affine_src, affine_cpu, NULL);
    wgt_tensor *sum = wgt_add(x, x);
    affine_params p = {1, 0, (uint32_t)n, 0};
    wgt_kernel_arg mixed[2] = {{.name = "x", .tensor = sum}, {.name = "y", .tensor = data}};
    CHECK_ERROR(affine && wgt_kernel_dispatch(affine, 2, mixed, &p, sizeof p, 1, 1, 1, NULL) != WGT_OK, WGT_ERR_USAGE,
                "a tensor that holds data cannot be written from graph inputs in place");
    wgt_release(sum);
    wgt_kernel_release(affine);
done:
    wgt_release(x), wgt_release(data);
    wgt_kernel_release(k2), wgt_kernel_release(twice);
}

static int failing_cpu(void *user, const wgt_kernel_cpu_call *c) {
    (void)user;
    snprintf(c->error, c->error_size, "n is %zu bytes, too few", c->buffers[0].nbytes);
    return 7;
}

TEST(user_kernel_cpu_function) {
    wgt_context *cpu = test_new_context(WGT_BACKEND_CPU);
    CHECK(cpu != NULL, "%s", wgt_last_error());
    if (!cpu) return;
    int64_t n = 5;
    float v[5] = {1, 2, 3, 4, 5}, got[5];
    wgt_tensor *base = floats(cpu, n, v), *one = wgt_full(cpu, WGT_F32, 1, &n, 1.0);
    wgt_tensor *t = wgt_add(base, one); /* pending when the kernel is recorded */
    wgt_kernel_arg arg = {.name = "buf", .tensor = t};
    /* Without a CPU function the kernel reflects but cannot run. */
    wgt_kernel *bare = wgt_kernel_create(cpu, twice_src, "main");
    CHECK(bare && wgt_kernel_binding_count(bare) == 1, "%s", wgt_last_error());
    CHECK_ERROR(wgt_kernel_dispatch(bare, 1, &arg, NULL, 0, 1, 1, 1, NULL) != WGT_OK, WGT_ERR_UNAVAILABLE,
                "the cpu backend runs no WGSL, and kernel 'main' has no CPU function");
    CHECK_ERROR(wgt_kernel_set_cpu_fn(bare, NULL, NULL, NULL) != WGT_OK, WGT_ERR_INVALID_ARGUMENT, "fn is NULL");
    /* With one: it runs in place, after the op recorded before and before the read. */
    released_count = 0;
    CHECK(wgt_kernel_set_cpu_fn(bare, twice_cpu, &got, count_release) == WGT_OK, "%s", wgt_last_error());
    CHECK_ERROR(wgt_kernel_set_cpu_fn(bare, twice_cpu, NULL, NULL) != WGT_OK, WGT_ERR_USAGE, "has a CPU function already");
    CHECK(wgt_kernel_dispatch(bare, 1, &arg, NULL, 0, 1, 1, 1, NULL) == WGT_OK, "%s", wgt_last_error());
    wgt_kernel_release(bare);
    CHECK(released_count == 0, "released while a dispatch is pending");
    CHECK(wgt_tensor_read(t, got, sizeof got) == WGT_OK, "%s", wgt_last_error());
    for (int i = 0; i < 5; i++) CHECK(got[i] == (v[i] + 1) * 2 + 1, "t[%d] = %g", i, got[i]);
    CHECK(released_count == 1, "user data released %d times", released_count);
    /* A failing function fails the read with its reason. */
    wgt_kernel *bad = wgt_kernel_create(cpu, twice_src, "main");
    CHECK(bad && wgt_kernel_set_cpu_fn(bad, failing_cpu, NULL, NULL) == WGT_OK, "%s", wgt_last_error());
    CHECK(wgt_kernel_dispatch(bad, 1, &arg, NULL, 0, 1, 1, 1, NULL) == WGT_OK, "%s", wgt_last_error());
    CHECK_ERROR(wgt_tensor_read(t, got, sizeof got) != WGT_OK, WGT_ERR_BACKEND,
                "user kernel 'main': its CPU function failed: n is 20 bytes, too few");
    wgt_kernel_release(bad);
    wgt_release(one), wgt_release(t), wgt_release(base);
    wgt_context_release(cpu);
}

/* Repeated dispatches over the same tensors, eager or a graph's replays, reuse the first
 * dispatch's bind group; other tensors get one of their own. */
TEST(user_kernel_bind_groups_are_cached) {
    wgt_context *gpu = test_webgpu_context();
    if (!gpu) return;
    enum { N = 100 };
    int64_t n = N;
    float xs[N], got[N];
    for (int i = 0; i < N; i++) xs[i] = (float)i;
    wgt_kernel *affine = make_kernel(gpu, affine_src, affine_cpu, NULL);
    wgt_tensor *x = floats(gpu, n, xs), *y = wgt_zeros(gpu, WGT_F32, 1, &n), *y2 = wgt_zeros(gpu, WGT_F32, 1, &n);
    wgt_kernel_arg args[2] = {{.name = "x", .tensor = x}, {.name = "y", .tensor = y}};
    wgt_stats s0, s1, s2;
    uint32_t g[3];
    CHECK(affine && x && y && y2 && wgt_kernel_groups_for(affine, n, g) == WGT_OK, "%s", wgt_last_error());
    if (test_current_failed()) goto done;
    for (int round = 0; round < 6; round++) {
        affine_params p = {1.0f, (float)round, N, 0}; /* params travel in the ring, not the group */
        CHECK(wgt_kernel_dispatch(affine, 2, args, &p, sizeof p, g[0], 1, 1, NULL) == WGT_OK, "%s", wgt_last_error());
        CHECK(wgt_eval(1, &y) == WGT_OK, "%s", wgt_last_error());
        if (round == 0) wgt_context_stats(gpu, &s0);
    }
    wgt_context_stats(gpu, &s1);
    CHECK(s1.bind_groups_created == s0.bind_groups_created, "5 repeated dispatches made %llu bind groups",
          (unsigned long long)(s1.bind_groups_created - s0.bind_groups_created));
    CHECK(wgt_tensor_read(y, got, sizeof got) == WGT_OK, "%s", wgt_last_error());
    for (int i = 0; i < N; i++) CHECK(got[i] == xs[i] + 5.0f, "y[%d] = %g", i, got[i]);
    args[1].tensor = y2; /* another output: another group */
    affine_params p = {2.0f, 0.0f, N, 0};
    CHECK(wgt_kernel_dispatch(affine, 2, args, &p, sizeof p, g[0], 1, 1, NULL) == WGT_OK, "%s", wgt_last_error());
    CHECK(wgt_tensor_read(y2, got, sizeof got) == WGT_OK, "%s", wgt_last_error());
    for (int i = 0; i < N; i++) CHECK(got[i] == xs[i] * 2.0f, "y2[%d] = %g", i, got[i]);
    wgt_context_stats(gpu, &s2);
    CHECK(s2.bind_groups_created == s1.bind_groups_created + 1, "a new binding made %llu bind groups",
          (unsigned long long)(s2.bind_groups_created - s1.bind_groups_created));
    /* A graph's replays with the same bindings: nothing new after the first. */
    wgt_kernel *twice = make_kernel(gpu, twice_src, twice_cpu, NULL);
    wgt_tensor *in = wgt_graph_input(gpu, "gx", WGT_F32, 1, &n), *w = in && twice ? program(affine, twice, in, n) : NULL;
    wgt_binding ob = {"w", w};
    wgt_graph *graph = w ? wgt_graph_build(gpu, 1, &ob) : NULL;
    CHECK(graph != NULL, "%s", wgt_last_error());
    wgt_binding ib = {"gx", x}, yb = {"w", y};
    for (int round = 0; graph && round < 4; round++) {
        CHECK(wgt_graph_dispatch(graph, 1, &ib, 1, &yb) == WGT_OK, "%s", wgt_last_error());
        CHECK(wgt_eval(1, &y) == WGT_OK, "%s", wgt_last_error());
        if (round == 0) wgt_context_stats(gpu, &s1);
    }
    wgt_context_stats(gpu, &s2);
    CHECK(s2.bind_groups_created == s1.bind_groups_created, "3 replays made %llu bind groups",
          (unsigned long long)(s2.bind_groups_created - s1.bind_groups_created));
    CHECK(wgt_tensor_read(y, got, sizeof got) == WGT_OK, "%s", wgt_last_error());
    for (int i = 0; i < N; i++)
        CHECK(got[i] == -(((xs[i] + xs[i]) * 0.5f + 3.0f + xs[i]) * 2.0f + 1.0f), "w[%d] = %g", i, got[i]);
    wgt_graph_release(graph);
    wgt_release(w), wgt_release(in);
    wgt_kernel_release(twice);
done:
    wgt_release(x), wgt_release(y), wgt_release(y2);
    wgt_kernel_release(affine);
    wgt_context_release(gpu);
}

/* The graph "y" = affine("x") with params p over n elements, in one workgroup: the kernel's
 * created output is the graph's output. The kernel is released once the graph holds it. */
static wgt_graph *affine_graph(wgt_context *ctx, int64_t n, affine_params p) {
    wgt_kernel *affine = make_kernel(ctx, affine_src, affine_cpu, NULL);
    wgt_tensor *x = wgt_graph_input(ctx, "x", WGT_F32, 1, &n);
    wgt_kernel_arg args[2] = {{.name = "x", .tensor = x}, {.name = "y", .dtype = WGT_F32, .ndim = 1, .shape = &n}};
    wgt_tensor *out[2] = {NULL, NULL};
    CHECK(affine && x && wgt_kernel_dispatch(affine, 2, args, &p, sizeof p, 1, 1, 1, out) == WGT_OK, "%s",
          wgt_last_error());
    wgt_binding ob = {"y", out[1]};
    wgt_graph *g = out[1] ? wgt_graph_build(ctx, 1, &ob) : NULL;
    CHECK(g != NULL, "%s", wgt_last_error());
    wgt_release(out[1]), wgt_release(x);
    wgt_kernel_release(affine);
    return g;
}

/* A kernel's created output is itself the graph's output: written in parts, it starts as
 * zeros at each replay (the elements past p.n stay 0, whatever the bound tensor held). */
TEST_BACKENDS(user_kernel_output_is_the_graphs_output) {
    int64_t n = 70;
    wgt_graph *g = affine_graph(ctx, n, (affine_params){-1.0f, 0.25f, 60, 0}); /* the last 10 are never written */
    float xs[70], got[70];
    for (int round = 0; g && round < 2; round++) {
        for (int i = 0; i < 70; i++) xs[i] = (float)(i * (round + 1));
        wgt_tensor *xt = floats(ctx, n, xs), *yt = wgt_full(ctx, WGT_F32, 1, &n, 9.0);
        wgt_binding ib = {"x", xt}, yb = {"y", yt};
        CHECK(wgt_graph_dispatch(g, 1, &ib, 1, &yb) == WGT_OK, "%s", wgt_last_error());
        CHECK(wgt_tensor_read(yt, got, sizeof got) == WGT_OK, "%s", wgt_last_error());
        for (int i = 0; i < 70; i++)
            CHECK(got[i] == (i < 60 ? -xs[i] + 0.25f : 0.0f), "round %d: y[%d] = %g", round, i, got[i]);
        wgt_release(xt), wgt_release(yt);
    }
    wgt_graph_release(g);
}

/* A graph input the kernel reads directly, bound as a view at an offset into a larger tensor:
 * the kernel sees the view's elements (binding a buffer at an unaligned offset is invalid in
 * WebGPU, so such an input is copied first, as eager dispatch copies such a view). */
TEST_BACKENDS(user_kernel_reads_a_graph_input_bound_at_an_offset) {
    int64_t n = 50, big_n = 57;
    wgt_graph *g = affine_graph(ctx, n, (affine_params){2.0f, -1.0f, 50, 0});
    float all[57], got[50];
    for (int i = 0; i < 57; i++) all[i] = (float)(i * 3 - 20);
    wgt_tensor *bt = floats(ctx, big_n, all), *view = bt ? wgt_slice(bt, 0, 5, 55, 1) : NULL;
    wgt_tensor *yt = wgt_zeros(ctx, WGT_F32, 1, &n);
    wgt_binding ib = {"x", view}, yb = {"y", yt};
    CHECK(g && view && wgt_graph_dispatch(g, 1, &ib, 1, &yb) == WGT_OK, "%s", wgt_last_error());
    CHECK(wgt_tensor_read(yt, got, sizeof got) == WGT_OK, "%s", wgt_last_error());
    for (int i = 0; i < 50; i++) CHECK(got[i] == all[i + 5] * 2.0f - 1.0f, "y[%d] = %g", i, got[i]);
    wgt_release(yt), wgt_release(view), wgt_release(bt);
    wgt_graph_release(g);
}
