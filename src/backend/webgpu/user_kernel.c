/*
 * Callers' own WGSL kernels on the WebGPU backend, and callers' buffers as storage.
 *
 * A user kernel is compiled with an explicit layout made from the core's reflection of its
 * source (every @group(0) buffer, the uniform with a dynamic offset into our uniform ring), not
 * Dawn's automatic one: an automatic layout leaves out the bindings the entry point does not
 * use, and the core binds every declared one. Pipelines are kept per backend by exact source
 * and entry point, shared by every wgt_kernel made from them, so creating the same kernel
 * again compiles nothing. Bind groups come from the backend's cache (bind_groups.c), keyed by
 * each binding's number, buffer, offset and size: a loop or a graph's replays over the same
 * tensors creates none after the first dispatch.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "webgpu_internal.h"

#define WRAP_USAGE (WGPU_BUFFER_USAGE_STORAGE | WGPU_BUFFER_USAGE_COPY_SRC | WGPU_BUFFER_USAGE_COPY_DST)

struct wgt_user_pipeline {
    int refs;
    WGPUBindGroupLayout layout;
    WGPUPipelineLayout pipeline_layout;
    WGPUComputePipeline pipeline;
    int uniform_binding; /* -1: none */
    char label[96];
    struct wgt_user_pipeline *next;
    char *entry;  /* into key */
    char key[];   /* source, then entry, each NUL-terminated */
};

static void release_objects(wgt_webgpu *w, wgt_user_pipeline *k) {
    const wgpu_procs *p = w->p;
    /* A pipeline made later may get this one's address: the open pass must not take it for
     * the one it has set, nor the first-run list for one that ran. */
    if (w->pass_pipeline == k->pipeline) w->pass_pipeline = NULL;
    for (uint32_t i = 0; i < w->cold_count; i++)
        if (w->cold[i] == k->pipeline) w->cold[i--] = w->cold[--w->cold_count];
    if (k->pipeline) p->wgpuComputePipelineRelease(k->pipeline);
    if (k->pipeline_layout) p->wgpuPipelineLayoutRelease(k->pipeline_layout);
    if (k->layout) p->wgpuBindGroupLayoutRelease(k->layout);
    k->pipeline = NULL;
    k->pipeline_layout = NULL;
    k->layout = NULL;
}

/* Dawn reports a WGSL error as "...: :LINE:COL error: what <source line> ^^^ - While calling
 * [Device ...]...": this keeps one line that says where first and drops Dawn's call context. */
static wgt_status compile_error(wgt_status st) {
    const char *m = wgt_last_error(), *at = strstr(m, ": :");
    int line, col, used = 0;
    if (st != WGT_ERR_BACKEND || !at || sscanf(at + 3, "%d:%d error: %n", &line, &col, &used) < 2 || !used) return st;
    char what[1024];
    snprintf(what, sizeof what, "%s", at + 3 + used);
    char *tail = strstr(what, " - While calling");
    if (tail) *tail = '\0';
    return wgt_error(st, "wgt_kernel_create: the shader does not compile: line %d, column %d: %s", line, col, what);
}

static wgt_status compile(wgt_webgpu *w, wgt_user_pipeline *k, const char *source, int nlayout,
                          const wgt_user_layout_entry *layout) {
    const wgpu_procs *p = w->p;
    WGPUBindGroupLayoutEntry e[WGT_WGPU_GRID_MAX_ENTRIES + 1];
    if (nlayout > WGT_WGPU_GRID_MAX_ENTRIES + 1)
        return wgt_error(WGT_ERR_LIMIT, "wgt_kernel_create: %d bindings, more than %d", nlayout,
                         WGT_WGPU_GRID_MAX_ENTRIES + 1);
    memset(e, 0, sizeof e);
    k->uniform_binding = -1;
    for (int i = 0; i < nlayout; i++) {
        e[i].binding = layout[i].binding;
        e[i].visibility = WGPU_SHADER_STAGE_COMPUTE;
        e[i].buffer.type = layout[i].kind == 2   ? WGPU_BUFFER_BINDING_UNIFORM
                           : layout[i].kind == 1 ? WGPU_BUFFER_BINDING_STORAGE
                                                 : WGPU_BUFFER_BINDING_READ_ONLY_STORAGE;
        e[i].buffer.hasDynamicOffset = layout[i].kind == 2;
        if (layout[i].kind == 2) k->uniform_binding = (int)layout[i].binding;
    }
    wgt_wgpu_push_scope(w);
    WGPUBindGroupLayoutDescriptor ld = {0};
    ld.label = wgpu_str(k->label);
    ld.entryCount = (size_t)nlayout;
    ld.entries = e;
    k->layout = p->wgpuDeviceCreateBindGroupLayout(w->device, &ld);
    WGPUPipelineLayoutDescriptor pld = {0};
    pld.bindGroupLayoutCount = 1;
    pld.bindGroupLayouts = &k->layout;
    k->pipeline_layout = k->layout ? p->wgpuDeviceCreatePipelineLayout(w->device, &pld) : NULL;
    WGPUShaderModule module = wgt_wgpu_shader_module(w, source, k->label);
    WGPUComputePipelineDescriptor pd = {0};
    pd.label = wgpu_str(k->label);
    pd.layout = k->pipeline_layout;
    pd.compute.module = module;
    pd.compute.entryPoint = wgpu_str(k->entry);
    k->pipeline = module && k->pipeline_layout ? p->wgpuDeviceCreateComputePipeline(w->device, &pd) : NULL;
    wgt_status st = wgt_wgpu_pop_scope(w, "wgt_kernel_create: compiling the shader");
    if (module) p->wgpuShaderModuleRelease(module);
    if (st == WGT_OK && !k->pipeline) st = wgt_error(WGT_ERR_BACKEND, "wgt_kernel_create: compiling the shader failed");
    if (st != WGT_OK) return compile_error(st);
    if (st == WGT_OK) wgt_wgpu_pipeline_created(w, k->pipeline);
    return st;
}

wgt_status wgt_wgpu_user_kernel_create(wgt_backend *be, const char *source, const char *entry, int nlayout,
                                       const wgt_user_layout_entry *layout, wgt_user_pipeline **out) {
    wgt_webgpu *w = (wgt_webgpu *)be;
    wgt_status st = wgt_wgpu_status(w);
    if (st != WGT_OK) return st;
    size_t slen = strlen(source), elen = strlen(entry);
    for (wgt_user_pipeline *k = w->user_pipelines; k; k = k->next)
        if (k->pipeline && !strcmp(k->key, source) && !strcmp(k->entry, entry)) {
            k->refs++;
            *out = k;
            return WGT_OK;
        }
    wgt_user_pipeline *k = calloc(1, sizeof *k + slen + elen + 2);
    if (!k) return wgt_error(WGT_ERR_OUT_OF_MEMORY, "wgt_kernel_create: out of host memory");
    memcpy(k->key, source, slen + 1);
    k->entry = k->key + slen + 1;
    memcpy(k->entry, entry, elen + 1);
    snprintf(k->label, sizeof k->label, "user kernel %s", entry);
    k->refs = 1;
    if ((st = compile(w, k, source, nlayout, layout)) != WGT_OK) {
        release_objects(w, k);
        free(k);
        return st;
    }
    k->next = w->user_pipelines;
    w->user_pipelines = k;
    *out = k;
    return WGT_OK;
}

wgt_status wgt_wgpu_user_kernel_run(wgt_backend *be, wgt_user_pipeline *k, int n, const uint32_t *bindings,
                                    const wgt_operand *ops, const void *params, uint32_t params_size,
                                    const uint32_t *groups) {
    wgt_webgpu *w = (wgt_webgpu *)be;
    if (n < 0 || n > WGT_WGPU_GRID_MAX_ENTRIES)
        return wgt_error(WGT_ERR_INTERNAL, "%s: %d storage bindings", k->label, n);
    WGPUBindGroupEntry e[WGT_WGPU_GRID_MAX_ENTRIES];
    wgt_buffer *buffers[WGT_WGPU_GRID_MAX_ENTRIES];
    memset(e, 0, sizeof e);
    for (int i = 0; i < n; i++) {
        uint64_t numel = 1;
        for (int d = 0; d < ops[i].ndim; d++) numel *= (uint64_t)ops[i].shape[d];
        uint64_t esize = wgt_dtype_size(ops[i].dtype);
        /* Storage bindings are whole words; an empty tensor still binds one. */
        uint64_t bytes = (numel * esize + 3) & ~(uint64_t)3;
        e[i].binding = bindings[i];
        e[i].buffer = ops[i].buffer->handle;
        e[i].offset = (uint64_t)ops[i].offset * esize;
        e[i].size = bytes ? bytes : 4;
        buffers[i] = ops[i].buffer;
    }
    return wgt_wgpu_dispatch_grid(w, k->label, k->pipeline, k->layout, n, e, buffers, k->uniform_binding, params,
                                  params_size, groups);
}

void wgt_wgpu_user_kernel_release(wgt_backend *be, wgt_user_pipeline *k) {
    wgt_webgpu *w = (wgt_webgpu *)be;
    if (!k || --k->refs > 0) return;
    for (wgt_user_pipeline **p = &w->user_pipelines; *p; p = &(*p)->next)
        if (*p == k) {
            *p = k->next;
            break;
        }
    if (!w->device_released) release_objects(w, k);
    free(k);
}

void wgt_wgpu_user_kernels_shutdown(wgt_webgpu *w) {
    for (wgt_user_pipeline *k = w->user_pipelines; k; k = k->next) release_objects(w, k);
}

wgt_status wgt_wgpu_buffer_wrap(wgt_backend *be, void *handle, size_t nbytes, wgt_buffer **out) {
    static const char fn[] = "wgt_tensor_from_buffer";
    wgt_webgpu *w = (wgt_webgpu *)be;
    wgt_status st = wgt_wgpu_status(w);
    if (st != WGT_OK) return st;
    WGPUBuffer b = handle;
    WGPUFlags usage = w->p->wgpuBufferGetUsage(b), missing = WRAP_USAGE & ~usage;
    if (missing)
        return wgt_error(WGT_ERR_USAGE, "%s: the buffer lacks the usage%s%s%s (it needs Storage, CopySrc and CopyDst)",
                         fn, missing & WGPU_BUFFER_USAGE_STORAGE ? " Storage" : "",
                         missing & WGPU_BUFFER_USAGE_COPY_SRC ? " CopySrc" : "",
                         missing & WGPU_BUFFER_USAGE_COPY_DST ? " CopyDst" : "");
    uint64_t size = w->p->wgpuBufferGetSize(b), need = ((uint64_t)nbytes + 3) & ~(uint64_t)3;
    if (need == 0) need = 4;
    if (size < need)
        return wgt_error(WGT_ERR_SHAPE, "%s: the buffer has %llu bytes; the tensor needs %llu", fn,
                         (unsigned long long)size, (unsigned long long)need);
    return wgt_wgpu_pool_adopt(w, w->storage_pool, b, need, out);
}

void *wgt_wgpu_device_handle(wgt_backend *be) {
    wgt_webgpu *w = (wgt_webgpu *)be;
    return w->device_released ? NULL : w->device;
}
