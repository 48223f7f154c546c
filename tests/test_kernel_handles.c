/*
 * Kernel handles: a released kernel's handle is stale for good. Releasing it again, or passing
 * it (or something that never was a kernel) to any function that takes a kernel, is
 * WGT_ERR_INVALID_ARGUMENT naming the function, found from the handle table alone, never
 * from the freed kernel. Kernels need WebGPU, so these skip without it.
 */
#include <stdint.h>
#include <string.h>

#include "core/handles.h"
#include "stale_calls.h"
#include "test.h"

static const char twice_src[] =
    "@group(0) @binding(0) var<storage, read_write> buf : array<f32>;\n"
    "@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) id : vec3<u32>) {\n"
    "    if (id.x < arrayLength(&buf)) { buf[id.x] = buf[id.x] * 2.0 + 1.0; }\n"
    "}\n";

static const int64_t S4[1] = {4};

static int never_called(void *user, const wgt_kernel_cpu_call *call) {
    (void)user, (void)call;
    return 1;
}

/* One call per public function that takes a kernel, each given `dead`; `t` is a live tensor. */
#define KERNEL_CALLS(X)                                                                                       \
    X(wgt_kernel_release, (wgt_kernel_release(dead), 1))                                                     \
    X(wgt_kernel_binding_count, wgt_kernel_binding_count(dead) == 0)                                         \
    X(wgt_kernel_binding, wgt_kernel_binding(dead, 0, &info) != WGT_OK)                                      \
    X(wgt_kernel_workgroup_size, wgt_kernel_workgroup_size(dead, size) != WGT_OK)                            \
    X(wgt_kernel_groups_for, wgt_kernel_groups_for(dead, 4, size) != WGT_OK)                                 \
    X(wgt_kernel_set_cpu_fn, wgt_kernel_set_cpu_fn(dead, never_called, NULL, NULL) != WGT_OK)                \
    X(wgt_kernel_dispatch, wgt_kernel_dispatch(dead, 1, &(wgt_kernel_arg){.name = "buf", .tensor = t}, NULL, 0, \
                                               1, 1, 1, NULL) != WGT_OK)

/* handles_every_entry_point_is_wrapped checks that this covers every function of the header
 * with a kernel parameter. */
#define CALL_NAME(name, call) #name,
const char *const test_kernel_calls[] = {KERNEL_CALLS(CALL_NAME) NULL};

/* Each call fails naming its function; `t` is untouched (nothing was recorded on it). */
static void refuse_every_call(wgt_context *ctx, wgt_kernel *dead, const char *what) {
    float data[4] = {1, 2, 3, 4}, out[4] = {0};
    wgt_kernel_binding_info info;
    uint32_t size[3];
    wgt_tensor *t = wgt_tensor_from_data(ctx, WGT_F32, 1, S4, data, sizeof data, WGT_USAGE_DEFAULT);
    CHECK(t, "%s", wgt_last_error());
#define CALL_CHECK(name, call) CHECK_STALE_CALL(name, call, what, "kernel is not a live kernel")
    KERNEL_CALLS(CALL_CHECK)
#undef CALL_CHECK
    wgt_clear_error();
    CHECK(wgt_tensor_read(t, out, sizeof out) == WGT_OK && out[0] == 1 && out[3] == 4,
          "the tensor given with %s: %g %g (%s)", what, out[0], out[3], wgt_last_error());
    wgt_release(t);
}

TEST(kernel_handles_double_release_is_an_error) {
    wgt_context *gpu = test_webgpu_context();
    if (!gpu) return;
    wgt_kernel *k = wgt_kernel_create(gpu, twice_src, "main");
    CHECK(k, "%s", wgt_last_error());
    wgt_kernel_release(k);
    CHECK_ERROR((wgt_kernel_release(k), 1), WGT_ERR_INVALID_ARGUMENT, "wgt_kernel_release: kernel is not a live kernel");
    CHECK_ERROR((wgt_kernel_release(k), 1), WGT_ERR_INVALID_ARGUMENT, "wgt_kernel_release");
    wgt_clear_error();
    wgt_kernel_release(NULL); /* still nothing, and no error */
    CHECK(wgt_last_status() == WGT_OK, "releasing NULL recorded %s", wgt_last_error());
    wgt_context_release(gpu);
}

/* Every function that takes a kernel refuses a released one, and ones that never were
 * kernels, before reading them. */
TEST(kernel_handles_use_after_release_is_an_error_in_every_function) {
    wgt_context *gpu = test_webgpu_context();
    if (!gpu) return;
    wgt_kernel *dead = wgt_kernel_create(gpu, twice_src, "main");
    CHECK(dead, "%s", wgt_last_error());
    wgt_kernel_release(dead);
    refuse_every_call(gpu, dead, "a released kernel");
    /* A stack address holding what a kernel record starts with (the magic number and one
     * reference the old check trusted), as a caller's stray pointer might. */
    uint32_t forged[256] = {0x6b65726eu, 1};
    refuse_every_call(gpu, (wgt_kernel *)(void *)forged, "a stack address");
    /* An odd value past every slot in use: the shape of a handle, naming no live slot. */
    refuse_every_call(gpu, (wgt_kernel *)(uintptr_t)0xfff001, "a forged handle");
    wgt_context_release(gpu);
}

/* A released kernel's slot goes to the next kernel: the old handle stays stale and never acts
 * on the new kernel, which works; a dispatch recorded before the release still runs. */
TEST(kernel_handles_reused_slot_is_not_the_old_kernel) {
    wgt_context *gpu = test_webgpu_context();
    if (!gpu) return;
    float v[4] = {1, 2, 3, 4}, got[4] = {0};
    wgt_tensor *t = wgt_tensor_from_data(gpu, WGT_F32, 1, S4, v, sizeof v, WGT_USAGE_DEFAULT);
    wgt_kernel *old = wgt_kernel_create(gpu, twice_src, "main");
    CHECK(t && old, "%s", wgt_last_error());
    wgt_kernel_arg arg = {.name = "buf", .tensor = t};
    CHECK(wgt_kernel_dispatch(old, 1, &arg, NULL, 0, 1, 1, 1, NULL) == WGT_OK, "%s", wgt_last_error());
    wgt_kernel_release(old); /* the recorded dispatch keeps the kernel */
    wgt_kernel *k = wgt_kernel_create(gpu, twice_src, "main");
    CHECK(k && k != old, "the new kernel's handle is not the released one's (%s)", wgt_last_error());
    CHECK_ERROR(wgt_kernel_dispatch(old, 1, &arg, NULL, 0, 1, 1, 1, NULL) != WGT_OK, WGT_ERR_INVALID_ARGUMENT,
                "wgt_kernel_dispatch: kernel is not a live kernel");
    CHECK(wgt_kernel_binding_count(k) == 1, "the new kernel: %s", wgt_last_error());
    CHECK(wgt_kernel_dispatch(k, 1, &arg, NULL, 0, 1, 1, 1, NULL) == WGT_OK, "%s", wgt_last_error());
    CHECK(wgt_tensor_read(t, got, sizeof got) == WGT_OK, "%s", wgt_last_error());
    for (int i = 0; i < 4; i++) /* twice (2x + 1), once per live dispatch: the refused one ran nothing */
        CHECK(got[i] == (v[i] * 2 + 1) * 2 + 1, "t[%d] = %g, want %g", i, got[i], (v[i] * 2 + 1) * 2 + 1);
    wgt_kernel_release(k);
    wgt_release(t);
    wgt_context_release(gpu);
}

/* A full table fails wgt_kernel_create with WGT_ERR_LIMIT and frees what it compiled. */
TEST(kernel_handles_full_table_is_a_limit_error) {
    wgt_context *gpu = test_webgpu_context();
    if (!gpu) return;
    uint32_t old = wgt_kernel_handles_set_limit(0);
    CHECK_ERROR(!wgt_kernel_create(gpu, twice_src, "main"), WGT_ERR_LIMIT,
                "wgt_kernel_create: 0 kernels are alive, the most one process may hold at once");
    wgt_kernel_handles_set_limit(old);
    wgt_kernel *k = wgt_kernel_create(gpu, twice_src, "main");
    CHECK(k && wgt_kernel_binding_count(k) == 1, "after the limit is lifted: %s", wgt_last_error());
    wgt_kernel_release(k);
    wgt_context_release(gpu);
}
