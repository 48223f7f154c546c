/*
 * Recording and submitting work. Dispatches and copies accumulate in one command encoder
 * (one compute pass between copies) and go to the queue in a single submit when something
 * needs the results: a read, a queue write, a sync. Op parameters are staged in a host-side
 * uniform ring and uploaded with one queue write per submit; each dispatch binds its slice
 * through a dynamic offset, so no buffer is created and nothing is mapped per op.
 * Pipelines are compiled once per key and cached.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "webgpu_internal.h"

#define RING_SIZE (256u * 1024u)
#define WORKGROUP_SIZE 256u

static wgt_status create_layouts(wgt_webgpu *w) {
    const wgpu_procs *p = w->p;
    for (int k = 1; k <= WGT_MAX_STORAGE_BINDINGS; k++) {
        WGPUBindGroupLayoutEntry e[WGT_MAX_STORAGE_BINDINGS + 1];
        memset(e, 0, sizeof e);
        for (int i = 0; i <= k; i++) {
            e[i].binding = (uint32_t)i;
            e[i].visibility = WGPU_SHADER_STAGE_COMPUTE;
            e[i].buffer.type = i == k       ? WGPU_BUFFER_BINDING_UNIFORM
                               : i == k - 1 ? WGPU_BUFFER_BINDING_STORAGE
                                            : WGPU_BUFFER_BINDING_READ_ONLY_STORAGE;
            e[i].buffer.hasDynamicOffset = i == k;
        }
        WGPUBindGroupLayoutDescriptor d = {0};
        d.label = wgpu_str("wgtensor kernel bindings");
        d.entryCount = (size_t)k + 1;
        d.entries = e;
        w->layouts[k] = p->wgpuDeviceCreateBindGroupLayout(w->device, &d);
        WGPUPipelineLayoutDescriptor pd = {0};
        pd.bindGroupLayoutCount = 1;
        pd.bindGroupLayouts = &w->layouts[k];
        w->pipeline_layouts[k] = p->wgpuDeviceCreatePipelineLayout(w->device, &pd);
    }
    return WGT_OK;
}

wgt_status wgt_wgpu_encoder_init(wgt_webgpu *w) {
    w->ring_align = w->limits.limits.minUniformBufferOffsetAlignment;
    if (w->ring_align < 16 || w->ring_align > 4096) w->ring_align = 256;
    w->ring_size = RING_SIZE;
    w->ring_host = calloc(1, w->ring_size);
    if (!w->ring_host) return wgt_error(WGT_ERR_OUT_OF_MEMORY, "out of host memory for the uniform ring");
    WGPUBufferDescriptor desc = {0};
    desc.label = wgpu_str("wgtensor uniform ring");
    desc.usage = WGPU_BUFFER_USAGE_UNIFORM | WGPU_BUFFER_USAGE_COPY_DST;
    desc.size = w->ring_size;
    wgt_wgpu_push_scope(w);
    w->ring = w->p->wgpuDeviceCreateBuffer(w->device, &desc);
    create_layouts(w);
    return wgt_wgpu_pop_scope(w, "creating the uniform ring and binding layouts");
}

void wgt_wgpu_encoder_shutdown(wgt_webgpu *w) {
    const wgpu_procs *p = w->p;
    if (w->pass) p->wgpuComputePassEncoderRelease(w->pass);
    if (w->encoder) p->wgpuCommandEncoderRelease(w->encoder);
    w->pass = NULL;
    w->encoder = NULL;
    for (wgt_pipeline *pl = w->pipelines, *next; pl; pl = next) {
        next = pl->next;
        if (pl->pipeline) p->wgpuComputePipelineRelease(pl->pipeline);
        free(pl);
    }
    w->pipelines = NULL;
    for (int k = 0; k <= WGT_MAX_STORAGE_BINDINGS; k++) {
        if (w->pipeline_layouts[k]) p->wgpuPipelineLayoutRelease(w->pipeline_layouts[k]);
        if (w->layouts[k]) p->wgpuBindGroupLayoutRelease(w->layouts[k]);
        w->pipeline_layouts[k] = NULL;
        w->layouts[k] = NULL;
    }
    if (w->ring) p->wgpuBufferRelease(w->ring);
    w->ring = NULL;
    free(w->ring_host);
    w->ring_host = NULL;
}

wgt_status wgt_wgpu_pipeline(wgt_webgpu *w, const char *key, int storage_count,
                             char *(*build_wgsl)(wgt_webgpu *w, const void *arg), const void *arg,
                             wgt_pipeline **out) {
    for (wgt_pipeline *pl = w->pipelines; pl; pl = pl->next)
        if (!strcmp(pl->key, key)) {
            *out = pl;
            return WGT_OK;
        }
    if (storage_count < 1 || storage_count > WGT_MAX_STORAGE_BINDINGS)
        return wgt_error(WGT_ERR_INTERNAL, "kernel %s wants %d storage bindings", key, storage_count);
    char *wgsl = build_wgsl(w, arg);
    if (!wgsl) return wgt_error(WGT_ERR_INTERNAL, "no WGSL source for kernel %s", key);
    const wgpu_procs *p = w->p;
    WGPUShaderSourceWGSL src = {0};
    src.chain.sType = WGPU_STYPE_SHADER_SOURCE_WGSL;
    src.code = wgpu_str(wgsl);
    WGPUShaderModuleDescriptor md = {0};
    md.nextInChain = &src.chain;
    md.label = wgpu_str(key);
    wgt_wgpu_push_scope(w);
    WGPUShaderModule module = p->wgpuDeviceCreateShaderModule(w->device, &md);
    WGPUComputePipelineDescriptor pd = {0};
    pd.label = wgpu_str(key);
    pd.layout = w->pipeline_layouts[storage_count];
    pd.compute.module = module;
    pd.compute.entryPoint = wgpu_str("main");
    WGPUComputePipeline pipeline = p->wgpuDeviceCreateComputePipeline(w->device, &pd);
    char what[192];
    snprintf(what, sizeof what, "compiling kernel %s", key);
    wgt_status st = wgt_wgpu_pop_scope(w, what);
    free(wgsl);
    if (module) p->wgpuShaderModuleRelease(module);
    if (st != WGT_OK || !pipeline) {
        if (pipeline) p->wgpuComputePipelineRelease(pipeline);
        return st != WGT_OK ? st : wgt_error(WGT_ERR_BACKEND, "%s failed", what);
    }
    wgt_pipeline *pl = calloc(1, sizeof *pl);
    if (!pl) {
        p->wgpuComputePipelineRelease(pipeline);
        return wgt_error(WGT_ERR_OUT_OF_MEMORY, "out of host memory for a pipeline");
    }
    snprintf(pl->key, sizeof pl->key, "%s", key);
    pl->pipeline = pipeline;
    pl->storage_count = storage_count;
    pl->next = w->pipelines;
    w->pipelines = pl;
    *out = pl;
    return WGT_OK;
}

static wgt_status ensure_encoder(wgt_webgpu *w) {
    if (w->encoder) return WGT_OK;
    WGPUCommandEncoderDescriptor d = {0};
    w->encoder = w->p->wgpuDeviceCreateCommandEncoder(w->device, &d);
    return w->encoder ? WGT_OK : wgt_error(WGT_ERR_BACKEND, "cannot create a command encoder");
}

static void end_pass(wgt_webgpu *w) {
    if (!w->pass) return;
    w->p->wgpuComputePassEncoderEnd(w->pass);
    w->p->wgpuComputePassEncoderRelease(w->pass);
    w->pass = NULL;
}

wgt_status wgt_wgpu_submit(wgt_webgpu *w) {
    const wgpu_procs *p = w->p;
    if (!w->encoder) return WGT_OK;
    end_pass(w);
    if (w->ring_used) p->wgpuQueueWriteBuffer(w->queue, w->ring, 0, w->ring_host, w->ring_used);
    WGPUCommandBufferDescriptor d = {0};
    WGPUCommandBuffer cmd = p->wgpuCommandEncoderFinish(w->encoder, &d);
    p->wgpuCommandEncoderRelease(w->encoder);
    w->encoder = NULL;
    w->ring_used = 0;
    w->batch_commands = 0;
    if (!cmd) return wgt_error(WGT_ERR_BACKEND, "finishing the command buffer failed");
    p->wgpuQueueSubmit(w->queue, 1, &cmd);
    p->wgpuCommandBufferRelease(cmd);
    return wgt_wgpu_status(w);
}

wgt_status wgt_wgpu_dispatch(wgt_webgpu *w, wgt_pipeline *pl, wgt_buffer *const *buffers, const void *params,
                             uint32_t params_size, uint64_t workgroups) {
    const wgpu_procs *p = w->p;
    wgt_status st = wgt_wgpu_status(w);
    if (st != WGT_OK) return st;
    uint32_t bind_size = (params_size + 15u) & ~15u;
    uint32_t slot = (w->ring_used + w->ring_align - 1) / w->ring_align * w->ring_align;
    if (slot + bind_size > w->ring_size) { /* ring full: what is recorded goes now */
        if ((st = wgt_wgpu_submit(w)) != WGT_OK) return st;
        slot = 0;
    }
    uint32_t max_dim = w->limits.limits.maxComputeWorkgroupsPerDimension;
    if (max_dim == 0) max_dim = 65535;
    uint64_t x = workgroups < max_dim ? workgroups : max_dim;
    uint64_t y = (workgroups + x - 1) / x;
    if (y > max_dim)
        return wgt_error(WGT_ERR_LIMIT, "kernel %s needs %llu workgroups, more than %u x %u", pl->key,
                         (unsigned long long)workgroups, max_dim, max_dim);
    if ((st = ensure_encoder(w)) != WGT_OK) return st;
    memcpy(w->ring_host + slot, params, params_size);
    memset(w->ring_host + slot + params_size, 0, bind_size - params_size);
    w->ring_used = slot + bind_size;

    WGPUBindGroupEntry e[WGT_MAX_STORAGE_BINDINGS + 1];
    memset(e, 0, sizeof e);
    int k = pl->storage_count;
    for (int i = 0; i < k; i++) {
        e[i].binding = (uint32_t)i;
        e[i].buffer = buffers[i]->handle;
        e[i].size = buffers[i]->size;
    }
    e[k].binding = (uint32_t)k;
    e[k].buffer = w->ring;
    e[k].size = bind_size;
    WGPUBindGroupDescriptor bd = {0};
    bd.layout = w->layouts[k];
    bd.entryCount = (size_t)k + 1;
    bd.entries = e;
    WGPUBindGroup group = p->wgpuDeviceCreateBindGroup(w->device, &bd);
    if (!group) return wgt_error(WGT_ERR_BACKEND, "cannot create a bind group for kernel %s", pl->key);
    if (!w->pass) {
        WGPUComputePassDescriptor pd = {0};
        w->pass = p->wgpuCommandEncoderBeginComputePass(w->encoder, &pd);
    }
    p->wgpuComputePassEncoderSetPipeline(w->pass, pl->pipeline);
    p->wgpuComputePassEncoderSetBindGroup(w->pass, 0, group, 1, &slot);
    p->wgpuComputePassEncoderDispatchWorkgroups(w->pass, (uint32_t)x, (uint32_t)y, 1);
    p->wgpuBindGroupRelease(group); /* the encoder keeps what it needs */
    w->batch_commands++;
    return WGT_OK;
}

wgt_status wgt_wgpu_copy_buffer(wgt_webgpu *w, WGPUBuffer src, uint64_t src_off, WGPUBuffer dst, uint64_t dst_off,
                                uint64_t size) {
    wgt_status st = ensure_encoder(w);
    if (st != WGT_OK) return st;
    end_pass(w); /* copies live outside compute passes */
    w->p->wgpuCommandEncoderCopyBufferToBuffer(w->encoder, src, src_off, dst, dst_off, size);
    w->batch_commands++;
    return WGT_OK;
}

wgt_status wgt_wgpu_dispatch_with_layout(wgt_webgpu *w, const char *label, WGPUComputePipeline pipeline,
                                         WGPUBindGroupLayout layout, int count, wgt_buffer *const *buffers,
                                         const void *params, uint32_t params_size, uint64_t workgroups) {
    const wgpu_procs *p = w->p;
    wgt_status st = wgt_wgpu_status(w);
    if (st != WGT_OK) return st;
    if (count < 1 || count > WGT_MAX_LAYOUT_STORAGE)
        return wgt_error(WGT_ERR_INTERNAL, "kernel %s wants %d storage bindings", label, count);
    uint32_t bind_size = (params_size + 15u) & ~15u;
    uint32_t slot = (w->ring_used + w->ring_align - 1) / w->ring_align * w->ring_align;
    if (slot + bind_size > w->ring_size) { /* ring full: what is recorded goes now */
        if ((st = wgt_wgpu_submit(w)) != WGT_OK) return st;
        slot = 0;
    }
    uint32_t max_dim = w->limits.limits.maxComputeWorkgroupsPerDimension;
    if (max_dim == 0) max_dim = 65535;
    uint64_t x = workgroups < max_dim ? workgroups : max_dim;
    uint64_t y = (workgroups + x - 1) / x;
    if (y > max_dim)
        return wgt_error(WGT_ERR_LIMIT, "kernel %s needs %llu workgroups, more than %u x %u", label,
                         (unsigned long long)workgroups, max_dim, max_dim);
    if ((st = ensure_encoder(w)) != WGT_OK) return st;
    memcpy(w->ring_host + slot, params, params_size);
    memset(w->ring_host + slot + params_size, 0, bind_size - params_size);
    w->ring_used = slot + bind_size;

    WGPUBindGroupEntry e[WGT_MAX_LAYOUT_STORAGE + 1];
    memset(e, 0, sizeof e);
    for (int i = 0; i < count; i++) {
        e[i].binding = (uint32_t)i;
        e[i].buffer = buffers[i]->handle;
        e[i].size = buffers[i]->size;
    }
    e[count].binding = (uint32_t)count;
    e[count].buffer = w->ring;
    e[count].size = bind_size;
    WGPUBindGroupDescriptor bd = {0};
    bd.layout = layout;
    bd.entryCount = (size_t)count + 1;
    bd.entries = e;
    WGPUBindGroup group = p->wgpuDeviceCreateBindGroup(w->device, &bd);
    if (!group) return wgt_error(WGT_ERR_BACKEND, "cannot create a bind group for kernel %s", label);
    if (!w->pass) {
        WGPUComputePassDescriptor pd = {0};
        w->pass = p->wgpuCommandEncoderBeginComputePass(w->encoder, &pd);
    }
    p->wgpuComputePassEncoderSetPipeline(w->pass, pipeline);
    p->wgpuComputePassEncoderSetBindGroup(w->pass, 0, group, 1, &slot);
    p->wgpuComputePassEncoderDispatchWorkgroups(w->pass, (uint32_t)x, (uint32_t)y, 1);
    p->wgpuBindGroupRelease(group); /* the encoder keeps what it needs */
    /* The pass ends with this dispatch, so whatever the encoder remembers about the pass
     * (its pipeline) is never stale for the next one. */
    end_pass(w);
    w->batch_commands++;
    return WGT_OK;
}
