/*
 * The WebGPU runtime against the real library: the feature numbers we declare are the ones
 * the binary answers to (a requested feature is present and a shader needing it compiles),
 * adapter choice by index and name, Dawn's Null adapter is never used, a missing library
 * gives a clear message and a working CPU fallback, shader errors come back as statuses
 * with the compiler's message, and device loss fails later calls without a crash.
 */
#include <stdlib.h>
#include <string.h>

#include "backend/webgpu/webgpu_internal.h"
#include "core/handles.h"
#include "core/tensor.h"
#include "test.h"

static char *wgsl_text(wgt_webgpu *w, const void *arg) {
    (void)w;
    const char *src = arg;
    char *s = malloc(strlen(src) + 1);
    if (s) strcpy(s, src);
    return s;
}

static wgt_status compile(wgt_webgpu *w, const char *key, const char *wgsl) {
    wgt_pipeline *pl;
    return wgt_wgpu_pipeline(w, key, 1, wgsl_text, wgsl, &pl);
}

TEST(webgpu_feature_values_match_the_library) {
    wgt_context *gpu = test_webgpu_context();
    if (!gpu) return;
    wgt_webgpu *w = (wgt_webgpu *)wgt_context_record(gpu)->backend;
    CHECK(w->adapter.backend_type != WGPU_BACKEND_NULL, "the Null adapter was chosen");
    int listed_f16 = 0, listed_subgroups = 0;
    for (size_t i = 0; i < w->feature_count; i++) {
        listed_f16 |= w->features[i] == WGPU_FEATURE_SHADER_F16;
        listed_subgroups |= w->features[i] == WGPU_FEATURE_SUBGROUPS;
    }
    CHECK(listed_f16 == w->has_f16 && listed_subgroups == w->has_subgroups, "feature list and device disagree");
    /* Each feature number is proven by a shader that needs it: it compiles only if the
     * device really enabled that feature under that number. */
    static const char f16_shader[] =
        "enable f16;\n@group(0) @binding(0) var<storage, read_write> o: array<f32>;\n"
        "struct P { x: u32 };\n@group(0) @binding(1) var<uniform> p: P;\n"
        "@compute @workgroup_size(1) fn main() { let h: f16 = f16(1.5); o[0] = f32(h * h) + f32(p.x); }\n";
    static const char subgroup_shader[] =
        "enable subgroups;\n@group(0) @binding(0) var<storage, read_write> o: array<f32>;\n"
        "struct P { x: u32 };\n@group(0) @binding(1) var<uniform> p: P;\n"
        "@compute @workgroup_size(32) fn main(@builtin(local_invocation_index) i: u32) {\n"
        "  let s = subgroupAdd(f32(i)); if (i == 0u) { o[0] = s + f32(p.x); } }\n";
    if (w->has_f16) CHECK(compile(w, "test:f16", f16_shader) == WGT_OK, "shader-f16 (0x%x): %s", WGPU_FEATURE_SHADER_F16, wgt_last_error());
    else CHECK(compile(w, "test:f16", f16_shader) == WGT_ERR_BACKEND, "f16 must fail where not offered");
    wgt_clear_error();
    if (w->has_subgroups)
        CHECK(compile(w, "test:subgroups", subgroup_shader) == WGT_OK, "subgroups (0x%x): %s", WGPU_FEATURE_SUBGROUPS,
              wgt_last_error());
    wgt_clear_error();
    /* The limits come from the adapter, not the 128 MiB / 256 MiB defaults. */
    CHECK(w->limits.limits.maxBufferSize > (256ull << 20), "maxBufferSize %llu looks like the default",
          (unsigned long long)w->limits.limits.maxBufferSize);
    CHECK(w->limits.limits.maxComputeWorkgroupSizeX >= 256 && w->limits.limits.maxComputeWorkgroupsPerDimension >= 65535,
          "compute limits read wrongly");
    /* The memory-heaps feature and struct numbers: every Vulkan adapter of this build lists the
     * feature, and the heaps it reports hold at least a GiB of device-local memory (lavapipe's
     * is host memory) and the memory budget sits just below that. */
    if (w->adapter.backend_type == WGPU_BACKEND_VULKAN) {
        int listed_heaps = 0;
        for (size_t i = 0; i < w->feature_count; i++)
            listed_heaps |= w->features[i] == WGPU_FEATURE_ADAPTER_PROPERTIES_MEMORY_HEAPS;
        CHECK(listed_heaps, "adapter-properties-memory-heaps (0x%x) is not listed",
              WGPU_FEATURE_ADAPTER_PROPERTIES_MEMORY_HEAPS);
        CHECK(w->adapter.device_local_bytes >= (1ull << 30) && w->adapter.device_local_bytes < (1ull << 50),
              "device-local memory of %llu bytes", (unsigned long long)w->adapter.device_local_bytes);
        CHECK(w->memory_budget < w->adapter.device_local_bytes && w->memory_budget >= w->adapter.device_local_bytes / 2,
              "memory budget %llu of %llu", (unsigned long long)w->memory_budget,
              (unsigned long long)w->adapter.device_local_bytes);
    }
    wgt_context_release(gpu);
}

TEST(webgpu_shader_errors_are_statuses_with_the_compiler_message) {
    wgt_context *gpu = test_webgpu_context();
    if (!gpu) return;
    wgt_webgpu *w = (wgt_webgpu *)wgt_context_record(gpu)->backend;
    CHECK_ERROR(compile(w, "test:broken", "@compute @workgroup_size(1) fn main() { let x: f32 = undefined_name; }") != WGT_OK,
                WGT_ERR_BACKEND, "undefined_name");
    CHECK_ERROR(compile(w, "test:unknown-enable", "enable no_such_extension;\n@compute @workgroup_size(1) fn main() {}") != WGT_OK,
                WGT_ERR_BACKEND, "no_such_extension");
    /* The compiler's message, which spans lines with a source excerpt, arrives as one line. */
    wgt_clear_error();
    CHECK(compile(w, "test:two-lines", "@compute @workgroup_size(1)\nfn main() {\n  let x: f32 = y;\n}\n") != WGT_OK,
          "a broken shader compiled");
    CHECK(test_contains(wgt_last_error(), "y") && !strchr(wgt_last_error(), '\n') && !strstr(wgt_last_error(), ".cpp:"),
          "not one line: %s", wgt_last_error());
    wgt_clear_error();
    /* The context is still usable. */
    int64_t shape[1] = {3};
    wgt_tensor *a = wgt_ones(gpu, WGT_F32, 1, shape), *b = wgt_add(a, a);
    float v[3];
    CHECK(b && wgt_tensor_read(b, v, sizeof v) == WGT_OK && v[2] == 2.0f, "%s", wgt_last_error());
    wgt_release(a), wgt_release(b);
    wgt_context_release(gpu);
}

TEST(webgpu_adapter_choice_by_index_and_name) {
    char *list = wgt_list_adapters(NULL);
    if (!list) {
        wgt_clear_error();
        return;
    }
    CHECK(strstr(list, "[0] ") != NULL, "listing: %s", list);
    free(list);
    wgt_context *base = test_webgpu_context();
    if (!base) return;
    char name[64];
    snprintf(name, sizeof name, "%.8s", wgt_context_device_name(base)); /* a prefix is a substring */
    wgt_context_options opt = {0};
    opt.backend = WGT_BACKEND_WEBGPU;
    opt.adapter = "0";
    wgt_context *by_index = wgt_context_create(&opt);
    CHECK(by_index && !strcmp(wgt_context_device_name(by_index), wgt_context_device_name(base)), "%s", wgt_last_error());
    opt.adapter = name;
    wgt_context *by_name = wgt_context_create(&opt);
    CHECK(by_name && !strcmp(wgt_context_device_name(by_name), wgt_context_device_name(base)), "%s", wgt_last_error());
    opt.adapter = "no such adapter anywhere";
    CHECK_ERROR(wgt_context_create(&opt) == NULL, WGT_ERR_UNAVAILABLE, "no such adapter anywhere");
    opt.adapter = "99";
    CHECK_ERROR(wgt_context_create(&opt) == NULL, WGT_ERR_UNAVAILABLE, "'99'");
    wgt_context_release(by_index), wgt_context_release(by_name), wgt_context_release(base);
}

TEST(missing_library_is_a_clear_error_and_auto_falls_back) {
    wgt_context_options opt = {0};
    opt.backend = WGT_BACKEND_WEBGPU;
    opt.library_path = "/nonexistent/libwebgpu_dawn.so";
    CHECK_ERROR(wgt_context_create(&opt) == NULL, WGT_ERR_UNAVAILABLE, "/nonexistent/libwebgpu_dawn.so");
    opt.backend = WGT_BACKEND_AUTO;
    opt.quiet = 1;
    wgt_context *fallback = wgt_context_create(&opt);
    CHECK(fallback && wgt_context_backend(fallback) == WGT_BACKEND_CPU, "AUTO must fall back to the CPU: %s", wgt_last_error());
    CHECK(wgt_last_status() == WGT_OK, "the fallback is not an error: %s", wgt_last_error());
    int64_t shape[1] = {2};
    wgt_tensor *a = fallback ? wgt_full(fallback, WGT_I32, 1, shape, 20) : NULL, *b = a ? wgt_div(a, a) : NULL;
    int32_t v[2] = {0, 0};
    CHECK(b && wgt_tensor_read(b, v, sizeof v) == WGT_OK && v[0] == 1, "the CPU fallback computes");
    wgt_release(a), wgt_release(b);
    wgt_context_release(fallback);
}

TEST(device_loss_fails_later_calls_and_keeps_read_data) {
    wgt_context *gpu = test_webgpu_context();
    if (!gpu) return;
    int64_t shape[1] = {1000};
    long long live = wgt_wgpu_live_buffers();
    wgt_tensor *a = wgt_arange(gpu, WGT_F32, 0, 1000, 1);
    wgt_tensor *b = wgt_add(a, a);
    float before[1000];
    CHECK(wgt_tensor_read(b, before, sizeof before) == WGT_OK && before[999] == 1998.0f, "%s", wgt_last_error());
    wgt_tensor *queued = wgt_mul(b, b); /* recorded, not yet submitted */
    CHECK(wgt_context_simulate_device_loss(gpu) == WGT_OK, "%s", wgt_last_error());
    CHECK_ERROR(wgt_context_sync(gpu) != WGT_OK, WGT_ERR_DEVICE_LOST, "lost");
    float after[1000];
    CHECK_ERROR(wgt_tensor_read(queued, after, sizeof after) != WGT_OK, WGT_ERR_DEVICE_LOST, "lost");
    CHECK_ERROR(wgt_add(a, b) == NULL, WGT_ERR_DEVICE_LOST, "lost");
    CHECK_ERROR(wgt_zeros(gpu, WGT_F32, 1, shape) == NULL, WGT_ERR_DEVICE_LOST, "create a new context");
    /* Data read back before the loss is still there on the host side. */
    CHECK(wgt_tensor_read(b, after, sizeof after) == WGT_OK && after[999] == 1998.0f,
          "host copy survives the loss: %s", wgt_last_error());
    wgt_clear_error();
    wgt_release(a), wgt_release(b), wgt_release(queued);
    /* The lost device's buffers go back with their tensors, not only at context release. */
    wgt_context_trim(gpu);
    wgt_clear_error();
    CHECK(wgt_wgpu_live_buffers() == live, "%lld device buffers live after the release, %lld before",
          wgt_wgpu_live_buffers(), live);
    wgt_context_release(gpu);
    /* A new context works. */
    wgt_context *fresh = test_webgpu_context();
    CHECK(fresh != NULL, "a new context after a loss");
    wgt_tensor *c = fresh ? wgt_ones(fresh, WGT_F32, 1, shape) : NULL, *d = c ? wgt_add(c, c) : NULL;
    CHECK(d && wgt_tensor_read(d, after, sizeof after) == WGT_OK && after[0] == 2.0f, "%s", wgt_last_error());
    wgt_release(c), wgt_release(d);
    wgt_context_release(fresh);
}

/* Dawn's text becomes one line: its words and context kept, its source locations gone. */
TEST(webgpu_driver_text_is_one_line_without_source_paths) {
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"device loss simulated by the caller\n - While handling unexpected error type Internal when allowed errors are "
         "(Validation|DeviceLost).\n    at APIForceLoss (/__w/dawn/dawn/src/dawn/native/Device.cpp:914)\n",
         "device loss simulated by the caller - While handling unexpected error type Internal when allowed errors are "
         "(Validation|DeviceLost)."},
        {"Error while parsing WGSL: :1:52 error: unresolved value 'y'\n\tlet x = y;\r\n\n - While validating "
         "[ShaderModuleDescriptor]\n    at ValidateShaderModule (C:\\dawn\\src\\ShaderModule.cpp:1204:7),\n",
         "Error while parsing WGSL: :1:52 error: unresolved value 'y' let x = y; - While validating "
         "[ShaderModuleDescriptor]"},
        {"at Frame (/a/b.cpp:1) Out of memory at /x/y.h:22", "Out of memory"},
        {"a/b ratio: 3 (see 1:2)", "a/b ratio: 3 (see 1:2)"}, /* a slash or a colon alone is no location */
        {"   \n\n  ", ""},
    };
    char out[256];
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        wgt_wgpu_copy_string(out, sizeof out, (WGPUStringView){cases[k].in, WGPU_STRLEN});
        CHECK(!strcmp(out, cases[k].out), "case %zu: got '%s', want '%s'", k, out, cases[k].out);
    }
    /* A cut keeps to the buffer, says so, and never splits a UTF-8 character. */
    char small[12];
    wgt_wgpu_copy_string(small, sizeof small, (WGPUStringView){"the adapter\nrefused: no memory", 31});
    CHECK(!strcmp(small, "the adap..."), "cut: '%s'", small);
    wgt_wgpu_copy_string(small, sizeof small, (WGPUStringView){"abcdef\xc3\xa9\xc3\xa9\xc3\xa9", WGPU_STRLEN});
    CHECK(!strcmp(small, "abcdef\xc3\xa9..."), "cut in UTF-8: '%s'", small);
    wgt_wgpu_copy_string(small, sizeof small, (WGPUStringView){NULL, 0});
    CHECK(small[0] == '\0', "no text: '%s'", small);
}

/* A lost device's message keeps the driver's words on one line, without Dawn's source paths. */
TEST(device_loss_message_is_one_line_with_the_drivers_words) {
    wgt_context *gpu = test_webgpu_context();
    if (!gpu) return;
    CHECK(wgt_context_simulate_device_loss(gpu) == WGT_OK, "%s", wgt_last_error());
    for (int k = 0; k < 2; k++) {
        wgt_clear_error();
        wgt_status st = k ? wgt_context_status(gpu) : wgt_context_sync(gpu);
        const char *m = wgt_last_error(), *reason = strstr(m, "was lost: ");
        CHECK(st == WGT_ERR_DEVICE_LOST && reason && test_contains(m, "device loss simulated by the caller"),
              "%s: %s", wgt_status_name(st), m);
        CHECK(!strchr(m, '\n') && !strchr(m, '\r') && !strstr(m, ".cpp:") && !strstr(m, "  ") &&
                  (!reason || !strchr(reason, '/')),
              "not one line without paths: %s", m);
    }
    wgt_clear_error();
    wgt_context_release(gpu);
}

TEST(exported_buffer_is_the_storage) {
    wgt_context *gpu = test_webgpu_context();
    if (!gpu) return;
    int64_t shape[1] = {8};
    wgt_tensor *t = wgt_tensor_create(gpu, WGT_F32, 1, shape, WGT_USAGE_DEFAULT | WGT_USAGE_EXPORTABLE);
    wgt_tensor *v = wgt_slice(t, 0, 3, 8, 1);
    uint64_t off = 0;
    void *buf = wgt_tensor_export_buffer(v, &off);
    CHECK(buf != NULL && off == 12, "buffer %p offset %llu: %s", buf, (unsigned long long)off, wgt_last_error());
    CHECK(buf == (void *)wgt_handle_record(t)->storage->buffer->handle, "the tensor's own buffer");
    wgt_release(v), wgt_release(t);
    wgt_context_release(gpu);
}
