/*
 * User WGSL kernels (wgt_kernel_*) and callers' WGPUBuffers as tensors: results against C
 * references (params, views as inputs, chains with library ops and asynchronous reads,
 * in-place writes ordered among pending ops, the workgroup helper), every argument error
 * before any dispatch, compile errors with their line, the CPU backend's answer without a CPU
 * function, and the
 * lifetime of a wrapped buffer whichever of tensor and context goes first.
 */
#include <stdlib.h>
#include <string.h>

#include "backend/webgpu/webgpu_internal.h"
#include "core/handles.h"
#include "core/tensor.h"
#include "core/wgsl_reflect.h"
#include "test.h"
#include "user_kernel_sources.h"

/* The kernel on a WebGPU context; on the CPU backend, checks that a kernel without a CPU
 * function cannot be dispatched (tests/test_user_kernel_graph.c gives it one) and gives NULL. */
static wgt_kernel *kernel_or_cpu_refusal(wgt_context *ctx, const char *src) {
    if (wgt_context_backend(ctx) == WGT_BACKEND_CPU) {
        wgt_kernel *k = wgt_kernel_create(ctx, src, "main");
        CHECK(k != NULL, "the CPU backend reflects the bindings: %s", wgt_last_error());
        CHECK_ERROR(wgt_kernel_dispatch(k, 0, NULL, NULL, 0, 1, 1, 1, NULL) != WGT_OK, WGT_ERR_UNAVAILABLE,
                    "the cpu backend runs no WGSL, and kernel 'main' has no CPU function");
        wgt_kernel_release(k);
        return NULL;
    }
    wgt_kernel *k = wgt_kernel_create(ctx, src, "main");
    CHECK(k != NULL, "%s", wgt_last_error());
    return k;
}

static wgt_tensor *from_floats(wgt_context *ctx, int ndim, const int64_t *shape, const float *v) {
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) n *= shape[d];
    return wgt_tensor_from_data(ctx, WGT_F32, ndim, shape, v, (size_t)n * sizeof(float), WGT_USAGE_DEFAULT);
}

/* Reads n 4-byte elements; a failed read is a failure of the test, not a skipped check. */
static int read_floats(wgt_tensor *t, void *out, size_t n) {
    wgt_status st = wgt_tensor_read(t, out, n * 4);
    CHECK(st == WGT_OK, "read: %s", wgt_last_error());
    return st == WGT_OK;
}

/* Runs affine over x into a new output of n + extra elements. */
static wgt_tensor *affine(wgt_kernel *k, wgt_tensor *x, int64_t n, int64_t extra, float scale, float bias) {
    affine_params p = {scale, bias, (uint32_t)n, 0};
    int64_t shape[1] = {n + extra};
    wgt_kernel_arg args[2] = {{.name = "x", .tensor = x}, {.name = "y", .dtype = WGT_F32, .ndim = 1, .shape = shape}};
    uint32_t g[3];
    wgt_tensor *out[2] = {NULL, NULL};
    if (wgt_kernel_groups_for(k, n, g) != WGT_OK) return NULL;
    if (wgt_kernel_dispatch(k, 2, args, &p, sizeof p, g[0], g[1], g[2], out) != WGT_OK) return NULL;
    return out[1];
}

TEST_BACKENDS(user_kernel_elementwise_with_params) {
    if (wgt_context_backend(ctx) == WGT_BACKEND_CPU) { /* the CPU backend runs no WGSL and has no device */
        CHECK(!kernel_or_cpu_refusal(ctx, affine_src), "a kernel on the CPU backend");
        CHECK_ERROR(!wgt_context_webgpu_device(ctx), WGT_ERR_UNAVAILABLE, "no WebGPU device");
        int dummy = 0;
        int64_t one = 1;
        CHECK_ERROR(!wgt_tensor_from_buffer(ctx, &dummy, WGT_F32, 1, &one, WGT_USAGE_DEFAULT), WGT_ERR_UNAVAILABLE,
                    "WebGPU backend");
        return;
    }
    wgt_kernel *k = kernel_or_cpu_refusal(ctx, affine_src);
    if (!k) return;
    /* Reflection: the comments' declarations are not bindings. */
    CHECK(wgt_kernel_binding_count(k) == 3, "%d bindings", wgt_kernel_binding_count(k));
    wgt_kernel_binding_info info;
    CHECK(wgt_kernel_binding(k, 2, &info) == WGT_OK && info.uniform && info.element_size == 16 &&
              !strcmp(info.name, "p") && !strcmp(info.type, "Params"),
          "uniform %s %s %u", info.name, info.type, info.element_size);
    CHECK(wgt_kernel_binding(k, 1, &info) == WGT_OK && info.read_write && info.binding == 1 &&
              info.element_size == 4 && info.component_size == 4 && !strcmp(info.type, "f32"),
          "y: %s %u", info.type, info.element_size);
    uint32_t wg[3];
    CHECK(wgt_kernel_workgroup_size(k, wg) == WGT_OK && wg[0] == 64 && wg[1] == 1 && wg[2] == 1, "%u %u %u", wg[0],
          wg[1], wg[2]);

    enum { N = 1000 };
    float xs[N], got[N], want[N];
    for (int i = 0; i < N; i++) xs[i] = (float)(i - 500) / 8.0f; /* exact in f32, and so is every result */
    int64_t shape[1] = {N};
    wgt_tensor *x = from_floats(ctx, 1, shape, xs);
    wgt_tensor *y = affine(k, x, N, 0, 0.5f, 3.0f);
    CHECK(y != NULL, "%s", wgt_last_error());
    for (int i = 0; i < N; i++) want[i] = xs[i] * 0.5f + 3.0f;
    if (y && read_floats(y, got, N))
        for (int i = 0; i < N; i++) CHECK(got[i] == want[i], "y[%d] = %g, want %g", i, got[i], want[i]);
    wgt_release(y);
    wgt_release(x);
    wgt_kernel_release(k);
}

TEST_BACKENDS(user_kernel_reads_views) {
    wgt_kernel *k = kernel_or_cpu_refusal(ctx, affine_src);
    if (!k) return;
    float base[4 * 6];
    for (int i = 0; i < 24; i++) base[i] = (float)i;
    int64_t shape[2] = {4, 6};
    wgt_tensor *m = from_floats(ctx, 2, shape, base);
    /* A transposed view ([6, 4], not contiguous) and a slice (rows 1..2, an offset). */
    wgt_tensor *tr = wgt_transpose(m, 0, 1), *sl = wgt_slice(m, 0, 1, 3, 1);
    wgt_tensor *yt = affine(k, tr, 24, 0, 2.0f, -1.0f), *ys = affine(k, sl, 12, 0, 2.0f, -1.0f);
    CHECK(yt && ys, "%s", wgt_last_error());
    float got[24];
    if (yt && read_floats(yt, got, 24))
        for (int i = 0; i < 6; i++)
            for (int j = 0; j < 4; j++)
                CHECK(got[i * 4 + j] == base[j * 6 + i] * 2.0f - 1.0f, "transposed [%d,%d] = %g", i, j, got[i * 4 + j]);
    if (ys && read_floats(ys, got, 12))
        for (int i = 0; i < 12; i++) CHECK(got[i] == base[6 + i] * 2.0f - 1.0f, "slice [%d] = %g", i, got[i]);
    wgt_release(yt), wgt_release(ys), wgt_release(tr), wgt_release(sl), wgt_release(m);
    wgt_kernel_release(k);
}

TEST_BACKENDS(user_kernel_chains_with_ops_and_async_read) {
    wgt_kernel *k = kernel_or_cpu_refusal(ctx, affine_src);
    if (!k) return;
    enum { N = 300 };
    float xs[N], got[N];
    for (int i = 0; i < N; i++) xs[i] = (float)(i % 37) - 10.0f;
    int64_t shape[1] = {N};
    wgt_tensor *x = from_floats(ctx, 1, shape, xs);
    wgt_tensor *a = affine(k, x, N, 0, 4.0f, 1.0f); /* kernel */
    wgt_tensor *b = wgt_add(a, x);                   /* library op on its output */
    wgt_tensor *c = affine(k, b, N, 0, 0.25f, 2.0f); /* kernel on the op's output */
    CHECK(a && b && c, "%s", wgt_last_error());
    wgt_read *r = c ? wgt_read_begin(c, got, sizeof got) : NULL;
    CHECK(r != NULL, "%s", wgt_last_error());
    if (r) {
        CHECK(wgt_read_wait(r) == WGT_OK, "%s", wgt_last_error());
        for (int i = 0; i < N; i++) {
            float want = ((xs[i] * 4.0f + 1.0f) + xs[i]) * 0.25f + 2.0f;
            CHECK(got[i] == want, "c[%d] = %g, want %g", i, got[i], want);
        }
        wgt_read_release(r);
    }
    wgt_release(a), wgt_release(b), wgt_release(c), wgt_release(x);
    wgt_kernel_release(k);
}

TEST_BACKENDS(user_kernel_in_place_is_ordered_among_pending_ops) {
    wgt_kernel *k = kernel_or_cpu_refusal(ctx, twice_src);
    if (!k) return;
    enum { N = 100 };
    float v[N], got[N];
    for (int i = 0; i < N; i++) v[i] = (float)i * 0.5f;
    int64_t shape[1] = {N};
    wgt_tensor *t = from_floats(ctx, 1, shape, v);
    wgt_tensor *before = wgt_add_scalar(t, 1.0); /* recorded before the write: sees the old values */
    wgt_kernel_arg arg = {.name = "buf", .tensor = t};
    CHECK(wgt_kernel_dispatch(k, 1, &arg, NULL, 0, (N + 31) / 32, 1, 1, NULL) == WGT_OK, "%s", wgt_last_error());
    wgt_tensor *after = wgt_add_scalar(t, 1.0); /* recorded after: sees the new ones */
    CHECK(wgt_kernel_dispatch(k, 1, &arg, NULL, 0, (N + 31) / 32, 1, 1, NULL) == WGT_OK, "%s", wgt_last_error());
    if (read_floats(after, got, N))
        for (int i = 0; i < N; i++) CHECK(got[i] == v[i] * 2.0f + 2.0f, "after[%d] = %g", i, got[i]);
    if (read_floats(before, got, N))
        for (int i = 0; i < N; i++) CHECK(got[i] == v[i] + 1.0f, "before[%d] = %g", i, got[i]);
    if (read_floats(t, got, N)) /* both dispatches, in order */
        for (int i = 0; i < N; i++) CHECK(got[i] == (v[i] * 2.0f + 1.0f) * 2.0f + 1.0f, "t[%d] = %g", i, got[i]);
    wgt_release(before), wgt_release(after), wgt_release(t);
    wgt_kernel_release(k);
}

TEST_BACKENDS(user_kernel_groups_for_sizes_off_the_workgroup) {
    wgt_kernel *k = kernel_or_cpu_refusal(ctx, affine_src);
    if (!k) return;
    const int64_t sizes[] = {1, 63, 64, 65, 129, 1000};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        int64_t n = sizes[s];
        uint32_t g[3];
        CHECK(wgt_kernel_groups_for(k, n, g) == WGT_OK && g[0] == (uint32_t)((n + 63) / 64) && g[1] == 1 && g[2] == 1,
              "n %lld: %u %u %u", (long long)n, g[0], g[1], g[2]);
        float *xs = malloc(sizeof(float) * (size_t)n), *got = malloc(sizeof(float) * (size_t)(n + 5));
        for (int64_t i = 0; i < n; i++) xs[i] = (float)i;
        int64_t shape[1] = {n};
        wgt_tensor *x = from_floats(ctx, 1, shape, xs);
        wgt_tensor *y = affine(k, x, n, 5, 1.0f, 1.0f); /* 5 more elements the kernel must not touch */
        CHECK(y != NULL, "%s", wgt_last_error());
        if (y && read_floats(y, got, (size_t)n + 5))
            for (int64_t i = 0; i < n + 5; i++)
                CHECK(got[i] == (i < n ? (float)i + 1.0f : 0.0f), "n %lld: y[%lld] = %g", (long long)n, (long long)i,
                      got[i]);
        wgt_release(x), wgt_release(y);
        free(xs), free(got);
    }
    uint32_t g[3];
    CHECK(wgt_kernel_groups_for(k, 0, g) == WGT_OK && g[0] == 0, "n 0: %u", g[0]);
    CHECK_ERROR(wgt_kernel_groups_for(k, (int64_t)1 << 40, g) != WGT_OK, WGT_ERR_LIMIT, "per dimension");
    wgt_kernel_release(k);
}

TEST(user_kernel_argument_errors) {
    wgt_context *gpu = test_webgpu_context();
    if (!gpu) return;
    wgt_kernel *k = wgt_kernel_create(gpu, affine_src, "main");
    CHECK(k != NULL, "%s", wgt_last_error());
    if (!k) {
        wgt_context_release(gpu);
        return;
    }
    int64_t shape[1] = {8}, mshape[2] = {4, 2};
    float v[8] = {0};
    wgt_tensor *x = from_floats(gpu, 1, shape, v), *y = from_floats(gpu, 1, shape, v);
    wgt_tensor *h = wgt_zeros(gpu, WGT_F16, 1, shape);
    wgt_tensor *ro = wgt_tensor_create(gpu, WGT_F32, 1, shape, WGT_USAGE_READABLE);
    wgt_tensor *m = from_floats(gpu, 2, mshape, v), *mt = wgt_transpose(m, 0, 1);
    affine_params p = {1, 0, 8, 0};
    wgt_tensor *out[2];
    wgt_kernel_arg ok[2] = {{.name = "x", .tensor = x}, {.name = "y", .tensor = y}};
    wgt_kernel_arg a[2];
    wgt_stats before, after;
    wgt_context_stats(gpu, &before);

    memcpy(a, ok, sizeof a), a[1].name = "why";
    CHECK_ERROR(wgt_kernel_dispatch(k, 2, a, &p, sizeof p, 1, 1, 1, out) != WGT_OK, WGT_ERR_INVALID_ARGUMENT,
                "'why', which the shader does not declare (it declares x (0), y (1))");
    CHECK_ERROR(wgt_kernel_dispatch(k, 1, ok, &p, sizeof p, 1, 1, 1, out) != WGT_OK, WGT_ERR_INVALID_ARGUMENT,
                "binding 'y' (@binding(1)) is not given");
    memcpy(a, ok, sizeof a), a[1].name = NULL, a[1].binding = 7;
    CHECK_ERROR(wgt_kernel_dispatch(k, 2, a, &p, sizeof p, 1, 1, 1, out) != WGT_OK, WGT_ERR_INVALID_ARGUMENT,
                "@binding(7)");
    memcpy(a, ok, sizeof a), a[1].name = "x";
    CHECK_ERROR(wgt_kernel_dispatch(k, 2, a, &p, sizeof p, 1, 1, 1, out) != WGT_OK, WGT_ERR_INVALID_ARGUMENT,
                "both bind 'x'");
    memcpy(a, ok, sizeof a), a[0].tensor = h;
    CHECK_ERROR(wgt_kernel_dispatch(k, 2, a, &p, sizeof p, 1, 1, 1, out) != WGT_OK, WGT_ERR_DTYPE,
                "f16 tensor (2-byte elements) for binding 'x' of array<f32>, whose scalars take 4 bytes");
    memcpy(a, ok, sizeof a), a[0].tensor = NULL, a[0].dtype = WGT_F32, a[0].ndim = 1, a[0].shape = shape;
    CHECK_ERROR(wgt_kernel_dispatch(k, 2, a, &p, sizeof p, 1, 1, 1, out) != WGT_OK, WGT_ERR_USAGE,
                "binding 'x' is read-only");
    memcpy(a, ok, sizeof a), a[1].tensor = ro;
    CHECK_ERROR(wgt_kernel_dispatch(k, 2, a, &p, sizeof p, 1, 1, 1, out) != WGT_OK, WGT_ERR_USAGE, "writable usage");
    memcpy(a, ok, sizeof a), a[1].tensor = mt;
    CHECK_ERROR(wgt_kernel_dispatch(k, 2, a, &p, sizeof p, 1, 1, 1, out) != WGT_OK, WGT_ERR_USAGE, "not contiguous");
    memcpy(a, ok, sizeof a), a[0].tensor = y;
    CHECK_ERROR(wgt_kernel_dispatch(k, 2, a, &p, sizeof p, 1, 1, 1, out) != WGT_OK, WGT_ERR_USAGE,
                "must not alias");
    /* An output past the device's binding size fails before anything is allocated. */
    uint64_t max = wgt_handle_record(x)->storage->ctx->backend->max_binding_bytes;
    int64_t huge[1] = {(int64_t)(max / 4 + 1)};
    memcpy(a, ok, sizeof a), a[1].tensor = NULL, a[1].dtype = WGT_F32, a[1].ndim = 1, a[1].shape = huge;
    char words[96];
    snprintf(words, sizeof words, "%llu bytes, more than the device's maxStorageBufferBindingSize of %llu",
             (unsigned long long)huge[0] * 4, (unsigned long long)max);
    CHECK_ERROR(wgt_kernel_dispatch(k, 2, a, &p, sizeof p, 1, 1, 1, out) != WGT_OK, WGT_ERR_LIMIT, words);
    CHECK_ERROR(wgt_kernel_dispatch(k, 2, ok, &p, sizeof p - 4, 1, 1, 1, out) != WGT_OK, WGT_ERR_INVALID_ARGUMENT,
                "params_size is 12; the shader's var<uniform> 'p' (Params) is 16 bytes");
    CHECK_ERROR(wgt_kernel_dispatch(k, 2, ok, NULL, 0, 1, 1, 1, out) != WGT_OK, WGT_ERR_INVALID_ARGUMENT,
                "needs params");
    CHECK_ERROR(wgt_kernel_dispatch(k, 2, ok, &p, sizeof p, 1u << 30, 1, 1, out) != WGT_OK, WGT_ERR_LIMIT,
                "groups_x is 1073741824");
    wgt_context_stats(gpu, &after);
    CHECK(after.ops_run == before.ops_run && after.dispatches == before.dispatches, "an erroneous call ran work");

    /* A shader without a uniform takes no params. */
    wgt_kernel *t = wgt_kernel_create(gpu, twice_src, "main");
    wgt_kernel_arg one = {.name = "buf", .tensor = y};
    CHECK_ERROR(wgt_kernel_dispatch(t, 1, &one, &p, sizeof p, 1, 1, 1, NULL) != WGT_OK, WGT_ERR_INVALID_ARGUMENT,
                "declares no var<uniform>");
    wgt_kernel_release(t);
    wgt_release(x), wgt_release(y), wgt_release(h), wgt_release(ro), wgt_release(m), wgt_release(mt);
    wgt_kernel_release(k);
    wgt_context_release(gpu);
}

TEST(user_kernel_compile_errors_name_the_line) {
    wgt_context *gpu = test_webgpu_context();
    if (!gpu) return;
    static const char bad[] = "@group(0) @binding(0) var<storage, read_write> y : array<f32>;\n"
                              "@compute @workgroup_size(1)\n"
                              "fn main() {\n"
                              "    y[0] = 1.0 +;\n"
                              "}\n";
    CHECK_ERROR(!wgt_kernel_create(gpu, bad, "main"), WGT_ERR_BACKEND, "does not compile: line 4, column 17: ");
    wgt_clear_error();
    wgt_kernel_create(gpu, bad, "main");
    CHECK(strchr(wgt_last_error(), '\n') == NULL, "one line: %s", wgt_last_error());
    static const char group1[] = "@group(0) @binding(0) var<storage, read_write> y : array<f32>;\n"
                                 "\n"
                                 "@group(1) @binding(0) var<storage, read> x : array<f32>;\n"
                                 "@compute @workgroup_size(1) fn main() { y[0] = x[0]; }\n";
    CHECK_ERROR(!wgt_kernel_create(gpu, group1, "main"), WGT_ERR_INVALID_ARGUMENT, "line 3: ");
    CHECK_ERROR(!wgt_kernel_create(gpu, twice_src, "other"), WGT_ERR_INVALID_ARGUMENT, "no @compute fn other");
    wgt_context_release(gpu);
}

/* The Dawn entry points of the library the context loaded, for the caller's side of interop. */
static const wgpu_procs *dawn(void) {
    char path[4096];
    return wgt_wgpu_load(NULL, path, sizeof path);
}

static WGPUBuffer make_buffer(const wgpu_procs *p, WGPUDevice device, uint64_t size, WGPUFlags usage) {
    WGPUBufferDescriptor d = {0};
    d.usage = usage;
    d.size = size;
    return p->wgpuDeviceCreateBuffer(device, &d);
}

TEST(user_kernel_wraps_a_callers_buffer) {
    wgt_context *gpu = test_webgpu_context();
    if (!gpu) return;
    const wgpu_procs *p = dawn();
    WGPUDevice device = wgt_context_webgpu_device(gpu);
    CHECK(p && device, "%s", wgt_last_error());
    if (!p || !device) {
        wgt_context_release(gpu);
        return;
    }
    long long live = wgt_wgpu_live_buffers();
    const WGPUFlags usage = WGPU_BUFFER_USAGE_STORAGE | WGPU_BUFFER_USAGE_COPY_SRC | WGPU_BUFFER_USAGE_COPY_DST;
    WGPUQueue queue = p->wgpuDeviceGetQueue(device);
    enum { N = 16 };
    float v[N], got[N];
    for (int i = 0; i < N; i++) v[i] = (float)i - 3.5f;
    int64_t shape[1] = {N};

    /* Order 1: the caller drops its reference at once; the tensor keeps the buffer. */
    WGPUBuffer b = make_buffer(p, device, N * sizeof(float), usage);
    p->wgpuQueueWriteBuffer(queue, b, 0, v, sizeof v);
    wgt_tensor *t = wgt_tensor_from_buffer(gpu, b, WGT_F32, 1, shape, WGT_USAGE_DEFAULT);
    CHECK(t != NULL, "%s", wgt_last_error());
    p->wgpuBufferRelease(b);
    if (t && read_floats(t, got, N))
        for (int i = 0; i < N; i++) CHECK(got[i] == v[i], "wrapped[%d] = %g", i, got[i]);
    /* Ops and kernels use it without a copy, in place too. */
    wgt_tensor *s = wgt_add(t, t);
    wgt_kernel *k = wgt_kernel_create(gpu, twice_src, "main");
    wgt_kernel_arg arg = {.name = "buf", .tensor = t};
    CHECK(k && wgt_kernel_dispatch(k, 1, &arg, NULL, 0, 1, 1, 1, NULL) == WGT_OK, "%s", wgt_last_error());
    if (s && read_floats(s, got, N))
        for (int i = 0; i < N; i++) CHECK(got[i] == v[i] + v[i], "sum[%d] = %g", i, got[i]);
    if (read_floats(t, got, N))
        for (int i = 0; i < N; i++) CHECK(got[i] == v[i] * 2.0f + 1.0f, "in place[%d] = %g", i, got[i]);
    CHECK(wgt_handle_record(t)->storage->buffer->handle == b, "no copy: the tensor binds the caller's buffer");
    wgt_kernel_release(k);
    wgt_release(s);
    wgt_release(t);

    /* Order 2: the caller keeps its reference and writes through its own queue between reads. */
    b = make_buffer(p, device, N * sizeof(float), usage);
    t = wgt_tensor_from_buffer(gpu, b, WGT_F32, 1, shape, WGT_USAGE_DEFAULT);
    CHECK(t != NULL, "%s", wgt_last_error());
    p->wgpuQueueWriteBuffer(queue, b, 0, v, sizeof v);
    if (t && read_floats(t, got, N))
        for (int i = 0; i < N; i++) CHECK(got[i] == v[i], "first[%d] = %g", i, got[i]);
    float w[N];
    for (int i = 0; i < N; i++) w[i] = 100.0f + (float)i;
    p->wgpuQueueWriteBuffer(queue, b, 0, w, sizeof w);
    if (t && read_floats(t, got, N)) /* read afresh, not from a host copy */
        for (int i = 0; i < N; i++) CHECK(got[i] == w[i], "rewritten[%d] = %g", i, got[i]);
    wgt_release(t);
    p->wgpuBufferRelease(b);

    /* Usages and size are checked. */
    WGPUBuffer small = make_buffer(p, device, 8, usage), plain = make_buffer(p, device, 64, WGPU_BUFFER_USAGE_STORAGE);
    CHECK_ERROR(!wgt_tensor_from_buffer(gpu, small, WGT_F32, 1, shape, WGT_USAGE_DEFAULT), WGT_ERR_SHAPE,
                "the buffer has 8 bytes; the tensor needs 64");
    CHECK_ERROR(!wgt_tensor_from_buffer(gpu, plain, WGT_F32, 1, shape, WGT_USAGE_DEFAULT), WGT_ERR_USAGE,
                "lacks the usage CopySrc CopyDst");
    p->wgpuBufferRelease(small);
    p->wgpuBufferRelease(plain);

    /* Order 3: the context goes first; the tensor fails as released and still frees cleanly. */
    b = make_buffer(p, device, N * sizeof(float), usage);
    t = wgt_tensor_from_buffer(gpu, b, WGT_F32, 1, shape, WGT_USAGE_DEFAULT);
    p->wgpuBufferRelease(b);
    p->wgpuQueueRelease(queue);
    wgt_context_release(gpu);
    CHECK_ERROR(wgt_tensor_read(t, got, sizeof got) != WGT_OK, WGT_ERR_INVALID_ARGUMENT, "released");
    wgt_release(t);
    CHECK(wgt_wgpu_live_buffers() == live, "buffers %lld, %lld before", wgt_wgpu_live_buffers(), live);
}

TEST(user_kernel_outlives_its_context_release) {
    wgt_context *gpu = test_webgpu_context();
    if (!gpu) return;
    wgt_kernel *k = wgt_kernel_create(gpu, twice_src, "main");
    wgt_kernel *again = wgt_kernel_create(gpu, twice_src, "main"); /* shares the compiled pipeline */
    CHECK(k && again, "%s", wgt_last_error());
    wgt_stats st;
    wgt_context_stats(gpu, &st);
    int64_t shape[1] = {4};
    wgt_tensor *t = wgt_zeros(gpu, WGT_F32, 1, shape);
    wgt_kernel_arg arg = {.name = "buf", .tensor = t};
    CHECK(wgt_kernel_dispatch(again, 1, &arg, NULL, 0, 1, 1, 1, NULL) == WGT_OK, "%s", wgt_last_error());
    wgt_kernel_release(again); /* the recorded dispatch keeps it */
    float got[4];
    if (read_floats(t, got, 4))
        for (int i = 0; i < 4; i++) CHECK(got[i] == 1.0f, "t[%d] = %g", i, got[i]);
    wgt_context_release(gpu);
    CHECK_ERROR(wgt_kernel_dispatch(k, 1, &arg, NULL, 0, 1, 1, 1, NULL) != WGT_OK, WGT_ERR_INVALID_ARGUMENT,
                "released");
    wgt_kernel_release(k);
    wgt_release(t);
}

/* Two written bindings: each output is waited for and kept alive on its own. */
TEST_BACKENDS(user_kernel_writes_several_outputs) {
    static const char src[] = "@group(0) @binding(0) var<storage, read> a : array<i32>;\n"
                              "@group(0) @binding(1) var<storage, read_write> sum : array<i32>;\n"
                              "@group(0) @binding(3) var<storage, read_write> diff : array<i32>;\n"
                              "@group(0) @binding(2) var<storage, read> b : array<i32>;\n"
                              "@compute @workgroup_size(16)\n"
                              "fn main(@builtin(global_invocation_id) id : vec3<u32>) {\n"
                              "    if (id.x < arrayLength(&a)) { sum[id.x] = a[id.x] + b[id.x]; diff[id.x] = a[id.x] - b[id.x]; }\n"
                              "}\n";
    wgt_kernel *k = kernel_or_cpu_refusal(ctx, src);
    if (!k) return;
    enum { N = 40 };
    int32_t av[N], bv[N], got[N];
    for (int i = 0; i < N; i++) av[i] = i * 3 - 7, bv[i] = 100 - i * i;
    int64_t shape[1] = {N};
    wgt_tensor *a = wgt_tensor_from_data(ctx, WGT_I32, 1, shape, av, sizeof av, WGT_USAGE_DEFAULT);
    wgt_tensor *b = wgt_tensor_from_data(ctx, WGT_I32, 1, shape, bv, sizeof bv, WGT_USAGE_DEFAULT);
    wgt_kernel_arg args[4] = {{.name = "diff", .dtype = WGT_I32, .ndim = 1, .shape = shape},
                              {.name = NULL, .binding = 2, .tensor = b},
                              {.name = "sum", .dtype = WGT_I32, .ndim = 1, .shape = shape},
                              {.name = "a", .tensor = a}};
    wgt_tensor *out[4];
    uint32_t g[3];
    CHECK(wgt_kernel_groups_for(k, N, g) == WGT_OK, "%s", wgt_last_error());
    CHECK(wgt_kernel_dispatch(k, 4, args, NULL, 0, g[0], g[1], g[2], out) == WGT_OK, "%s", wgt_last_error());
    CHECK(out[0] && !out[1] && out[2] && !out[3], "outputs at the created arguments' indices");
    /* The node writes diff first (argument order), sum second: sum's readers must wait for it
     * and keep it alive alone. */
    wgt_tensor *neg = wgt_neg(out[2]);
    wgt_release(out[0]); /* diff: nobody reads it, the dispatch still runs for sum */
    if (read_floats(out[2], got, N))
        for (int i = 0; i < N; i++) CHECK(got[i] == av[i] + bv[i], "sum[%d] = %d", i, got[i]);
    if (neg && read_floats(neg, got, N))
        for (int i = 0; i < N; i++) CHECK(got[i] == -(av[i] + bv[i]), "-sum[%d] = %d", i, got[i]);
    wgt_release(neg), wgt_release(out[2]), wgt_release(a), wgt_release(b);
    wgt_kernel_release(k);
}

/* examples/user_kernel.c, built by `make all`, checks its kernel against C and exits 0. */
TEST(user_kernel_example_runs) {
#ifdef WGT_SOURCE_DIR
    const char *exe = WGT_SOURCE_DIR "/build/examples/user_kernel";
    FILE *f = fopen(exe, "rb");
    if (!f) {
        test_skip("%s is not built (a build directory other than build/)", exe);
        return;
    }
    fclose(f);
    wgt_context *gpu = test_webgpu_context(); /* the example needs what this test needs */
    if (!gpu) return;
    wgt_context_release(gpu);
    char cmd[4200], line[512] = "";
    snprintf(cmd, sizeof cmd, "'%s' 2>&1", exe);
    FILE *p = popen(cmd, "r");
    CHECK(p != NULL, "cannot run %s", exe);
    if (!p) return;
    while (fgets(line, sizeof line, p) && !test_contains(line, "largest relative error")) {}
    int rc = pclose(p);
    CHECK(rc == 0 && test_contains(line, "hard_swish(-1) = -0.333333"), "exit %d, output: %s", rc, line);
#else
    test_skip("WGT_SOURCE_DIR is not defined");
#endif
}

/* The reader of declarations alone (no device): sizes by WGSL's layout rules, access modes,
 * binding numbers, workgroup sizes, and what it refuses. */
TEST(user_kernel_reflection_sizes_and_refusals) {
    static const char src[] =
        "enable f16;\n"
        "struct S { a : vec3<f32>, b : f32, c : vec2f, }  // 32 bytes: c at 16, aligned 16\n"
        "struct T { m : mat2x2<f32>, h : array<f16, 3> }   /* 16 + 6 = 22 -> 24 */\n"
        "@group(0) @binding(5) var<storage, read_write> s : array<S>;\n"
        "@binding(1) @group(0) var<storage> t : array<T, 4>;\n"
        "@group(0) @binding(2) var<storage, read> v3 : array<vec3<i32>>;\n"
        "@group(0) @binding(3) var<storage, read_write> h : array<f16>;\n"
        "@group(0) @binding(4) var<storage, read_write> at : array<atomic<u32>>;\n"
        "@group(0) @binding(0) var<uniform> u : vec4<f32>;\n"
        "var<workgroup> tile : array<f32, 64>;\n"
        "override W : u32 = 8;\n"
        "@compute @workgroup_size(8, 4,) fn first() {}\n"
        "@compute @workgroup_size(W) fn second() { let q = vec2<f32>(1.0, 2.0); }\n";
    wgt_reflection r;
    CHECK(wgt_wgsl_reflect("t", src, "first", &r) == WGT_OK, "%s", wgt_last_error());
    CHECK(r.count == 6 && r.entry_found, "%d bindings", r.count);
    struct { const char *name; uint32_t binding; int rw, uniform; uint32_t size, comp; const char *type; } want[] = {
        {"s", 5, 1, 0, 32, 4, "S"},          {"t", 1, 0, 0, 24, 0, "T"},
        {"v3", 2, 0, 0, 16, 4, "vec3<i32>"}, {"h", 3, 1, 0, 2, 2, "f16"},
        {"at", 4, 1, 0, 4, 4, "atomic<u32>"}, {"u", 0, 0, 1, 16, 4, "vec4<f32>"}};
    for (int i = 0; i < 6 && i < r.count; i++) {
        const wgt_reflect_binding *b = &r.bindings[i];
        CHECK(!strcmp(b->name, want[i].name) && b->binding == want[i].binding && b->read_write == want[i].rw &&
                  b->uniform == want[i].uniform && b->element_size == want[i].size &&
                  b->component_size == want[i].comp && !strcmp(b->type, want[i].type),
              "[%d] %s @%u rw %d uniform %d size %u comp %u type %s", i, b->name, b->binding, b->read_write, b->uniform,
              b->element_size, b->component_size, b->type);
    }
    CHECK(r.workgroup_size[0] == 8 && r.workgroup_size[1] == 4 && r.workgroup_size[2] == 1, "%u %u %u",
          r.workgroup_size[0], r.workgroup_size[1], r.workgroup_size[2]);
    CHECK(wgt_wgsl_reflect("t", src, "second", &r) == WGT_OK && r.entry_found && r.workgroup_size[0] == 0,
          "an override's size is not known: %u", r.workgroup_size[0]);
    CHECK(wgt_wgsl_reflect("t", src, "third", &r) == WGT_OK && !r.entry_found, "no such entry point");
    CHECK_ERROR(wgt_wgsl_reflect("t", "@group(0) @binding(0) var<uniform> a : vec4f;\n"
                                      "@group(0) @binding(1) var<uniform> b : vec4f;\n", "main", &r) != WGT_OK,
                WGT_ERR_INVALID_ARGUMENT, "t: line 2: more than one var<uniform>");
    CHECK_ERROR(wgt_wgsl_reflect("t", "@group(0) @binding(0) var<storage> a : array<f32>;\n"
                                      "/* two\n lines */ @group(0) @binding(0) var<storage> b : array<f32>;\n", "main",
                                 &r) != WGT_OK,
                WGT_ERR_INVALID_ARGUMENT, "t: line 3: two buffers at one @binding");
    CHECK_ERROR(wgt_wgsl_reflect("t", "@group(0) @binding(N) var<storage> a : array<f32>;\n", "main", &r) != WGT_OK,
                WGT_ERR_INVALID_ARGUMENT, "literal @binding(N)");
}
