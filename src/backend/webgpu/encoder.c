/*
 * Recording and submitting work. Dispatches and copies accumulate in one command encoder
 * (one compute pass between copies) and go to the queue in a single submit when something
 * needs the results (a read, a queue write, a sync) or the batch reaches a bound: a full
 * uniform ring, WGT_WGPU_BATCH_COMMANDS commands, or WGT_WGPU_BATCH_BIND_GROUPS bind groups
 * created for it, so a long run (a compiled graph's replay) goes out in pieces the driver
 * can retire while the rest is recorded; a new batch begins only while the work in flight
 * is within its bounds (in_flight.c). Op parameters are staged in a host-side
 * uniform ring and uploaded with one queue write per submit; each dispatch binds its slice
 * through a dynamic offset, so no buffer is created and nothing is mapped per op.
 * Pipelines are compiled once per key and found again through a hash table; bind groups come
 * from their cache (bind_groups.c). Recording a dispatch whose pipeline and bind group are
 * cached thus creates no driver object. Each submit advances a serial, so a read request
 * knows whether the batch holding its copy has gone to the queue.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "webgpu_internal.h"

#define RING_SIZE (256u * 1024u)
#define UPLOAD_RING_SIZE (1024u * 1024u)
#define WORKGROUP_SIZE 256u

void wgt_wgpu_create_layout(wgt_webgpu *w, int count, int written, const char *label, WGPUBindGroupLayout *layout,
                            WGPUPipelineLayout *pipeline) {
    const wgpu_procs *p = w->p;
    *layout = NULL;
    *pipeline = NULL;
    if (count < 1 || count > WGT_MAX_LAYOUT_STORAGE || written < 0 || written > count) return;
    WGPUBindGroupLayoutEntry e[WGT_MAX_LAYOUT_STORAGE + 1];
    memset(e, 0, sizeof e);
    for (int i = 0; i <= count; i++) {
        e[i].binding = (uint32_t)i;
        e[i].visibility = WGPU_SHADER_STAGE_COMPUTE;
        e[i].buffer.type = i == count            ? WGPU_BUFFER_BINDING_UNIFORM
                           : i >= count - written ? WGPU_BUFFER_BINDING_STORAGE
                                                  : WGPU_BUFFER_BINDING_READ_ONLY_STORAGE;
        e[i].buffer.hasDynamicOffset = i == count;
    }
    WGPUBindGroupLayoutDescriptor d = {0};
    d.label = wgpu_str(label);
    d.entryCount = (size_t)count + 1;
    d.entries = e;
    *layout = p->wgpuDeviceCreateBindGroupLayout(w->device, &d);
    if (!*layout) return;
    WGPUPipelineLayoutDescriptor pd = {0};
    pd.bindGroupLayoutCount = 1;
    pd.bindGroupLayouts = layout;
    *pipeline = p->wgpuDeviceCreatePipelineLayout(w->device, &pd);
}

static wgt_status create_layouts(wgt_webgpu *w) {
    for (int k = 1; k <= WGT_MAX_STORAGE_BINDINGS; k++)
        for (int written = 1; written <= WGT_MAX_WRITTEN_BINDINGS && written <= k; written++)
            wgt_wgpu_create_layout(w, k, written, "wgtensor kernel bindings", &w->layouts[k][written],
                                   &w->pipeline_layouts[k][written]);
    return WGT_OK;
}

wgt_status wgt_wgpu_encoder_init(wgt_webgpu *w) {
    w->ring_align = w->limits.limits.minUniformBufferOffsetAlignment;
    if (w->ring_align < 16 || w->ring_align > 4096) w->ring_align = 256;
    w->ring_size = RING_SIZE;
    w->ring_host = calloc(1, w->ring_size);
    if (!w->ring_host) return wgt_error(WGT_ERR_OUT_OF_MEMORY, "out of host memory for the uniform ring");
    w->upload_size = UPLOAD_RING_SIZE;
    w->upload_host = malloc(w->upload_size);
    if (!w->upload_host) return wgt_error(WGT_ERR_OUT_OF_MEMORY, "out of host memory for the upload ring");
    WGPUBufferDescriptor up = {0};
    up.label = wgpu_str("wgtensor upload ring");
    up.usage = WGPU_BUFFER_USAGE_COPY_SRC | WGPU_BUFFER_USAGE_COPY_DST;
    up.size = w->upload_size;
    WGPUBufferDescriptor desc = {0};
    desc.label = wgpu_str("wgtensor uniform ring");
    desc.usage = WGPU_BUFFER_USAGE_UNIFORM | WGPU_BUFFER_USAGE_COPY_DST;
    desc.size = w->ring_size;
    wgt_wgpu_push_scope(w);
    w->ring = w->p->wgpuDeviceCreateBuffer(w->device, &desc);
    w->upload = w->p->wgpuDeviceCreateBuffer(w->device, &up);
    create_layouts(w);
    wgt_status st = wgt_wgpu_pop_scope(w, "creating the uniform ring and binding layouts");
    if (st != WGT_OK) return st;
    w->pipeline_capacity = 64;
    w->pipeline_slots = calloc(w->pipeline_capacity, sizeof *w->pipeline_slots);
    if (!w->pipeline_slots) return wgt_error(WGT_ERR_OUT_OF_MEMORY, "out of host memory for the pipeline table");
    return wgt_wgpu_bind_cache_init(w);
}

void wgt_wgpu_encoder_shutdown(wgt_webgpu *w) {
    const wgpu_procs *p = w->p;
    if (w->pass) p->wgpuComputePassEncoderRelease(w->pass);
    if (w->encoder) p->wgpuCommandEncoderRelease(w->encoder);
    w->pass = NULL;
    w->encoder = NULL;
    wgt_wgpu_bind_cache_shutdown(w);
    wgt_wgpu_pipelines_release(w);
    free(w->pipeline_slots);
    w->pipeline_slots = NULL;
    w->pipeline_capacity = 0;
    for (int k = 0; k <= WGT_MAX_STORAGE_BINDINGS; k++)
        for (int written = 0; written <= WGT_MAX_WRITTEN_BINDINGS; written++) {
            if (w->pipeline_layouts[k][written]) p->wgpuPipelineLayoutRelease(w->pipeline_layouts[k][written]);
            if (w->layouts[k][written]) p->wgpuBindGroupLayoutRelease(w->layouts[k][written]);
            w->pipeline_layouts[k][written] = NULL;
            w->layouts[k][written] = NULL;
        }
    if (w->ring) p->wgpuBufferRelease(w->ring);
    w->ring = NULL;
    if (w->upload) p->wgpuBufferRelease(w->upload);
    w->upload = NULL;
    free(w->upload_host);
    w->upload_host = NULL;
    free(w->ring_host);
    w->ring_host = NULL;
}

void wgt_wgpu_pipelines_release(wgt_webgpu *w) {
    for (wgt_pipeline *pl = w->pipelines, *next; pl; pl = next) {
        next = pl->next;
        if (pl->pipeline) w->p->wgpuComputePipelineRelease(pl->pipeline);
        free(pl);
    }
    w->pipelines = NULL;
    if (w->pipeline_slots) memset(w->pipeline_slots, 0, w->pipeline_capacity * sizeof *w->pipeline_slots);
    w->pipeline_count = 0;
    w->pass_pipeline = NULL; /* a new pipeline may reuse a released one's address */
}

/* Kernels are compiled once per variant and kept. A workload that keeps asking for new
 * variants (many operand layouts, dtype and op combinations, as a fuzzer makes) would
 * otherwise keep every pipeline it ever compiled, and a driver's pipeline can take a
 * megabyte (lavapipe's do). Starting a cache over costs only recompiles of the variants still
 * in use, which a real workload never meets at this size. */
void wgt_wgpu_pipeline_caches_bound(wgt_webgpu *w, int drop_all) {
    if (drop_all || w->pipeline_count > WGT_WGPU_PIPELINE_CACHE_MAX) wgt_wgpu_pipelines_release(w);
    if (drop_all || wgt_wgpu_fused_pipeline_count(w) > WGT_WGPU_PIPELINE_CACHE_MAX) wgt_wgpu_fused_pipelines_release(w);
}

/* FNV-1a over the key; keys are short, and the table keeps probe runs short. */
static uint32_t key_hash(const char *key) {
    uint32_t h = 2166136261u;
    for (const unsigned char *c = (const unsigned char *)key; *c; c++) h = (h ^ *c) * 16777619u;
    return h;
}

/* Inserts pl into the open-addressed table, doubling it past half full. */
static wgt_status table_insert(wgt_webgpu *w, wgt_pipeline *pl) {
    if (2 * (w->pipeline_count + 1) > w->pipeline_capacity) {
        uint32_t cap = w->pipeline_capacity * 2;
        wgt_pipeline **slots = calloc(cap, sizeof *slots);
        if (!slots) return wgt_error(WGT_ERR_OUT_OF_MEMORY, "out of host memory for the pipeline table");
        for (uint32_t i = 0; i < w->pipeline_capacity; i++) {
            wgt_pipeline *q = w->pipeline_slots[i];
            if (!q) continue;
            uint32_t j = key_hash(q->key) & (cap - 1);
            while (slots[j]) j = (j + 1) & (cap - 1);
            slots[j] = q;
        }
        free(w->pipeline_slots);
        w->pipeline_slots = slots;
        w->pipeline_capacity = cap;
    }
    uint32_t mask = w->pipeline_capacity - 1, j = key_hash(pl->key) & mask;
    while (w->pipeline_slots[j]) j = (j + 1) & mask;
    w->pipeline_slots[j] = pl;
    w->pipeline_count++;
    return WGT_OK;
}

wgt_status wgt_wgpu_pipeline(wgt_webgpu *w, const char *key, int storage_count,
                             char *(*build_wgsl)(wgt_webgpu *w, const void *arg), const void *arg,
                             wgt_pipeline **out) {
    return wgt_wgpu_pipeline_writing(w, key, storage_count, 1, build_wgsl, arg, out);
}

wgt_status wgt_wgpu_pipeline_writing(wgt_webgpu *w, const char *key, int storage_count, int written,
                                     char *(*build_wgsl)(wgt_webgpu *w, const void *arg), const void *arg,
                                     wgt_pipeline **out) {
    uint32_t mask = w->pipeline_capacity - 1;
    for (uint32_t j = key_hash(key) & mask; w->pipeline_slots[j]; j = (j + 1) & mask)
        if (!strcmp(w->pipeline_slots[j]->key, key)) {
            *out = w->pipeline_slots[j];
            return WGT_OK;
        }
    if (storage_count < 1 || storage_count > WGT_MAX_STORAGE_BINDINGS || written < 1 ||
        written > WGT_MAX_WRITTEN_BINDINGS || written > storage_count)
        return wgt_error(WGT_ERR_INTERNAL, "kernel %s wants %d storage bindings, %d of them written", key, storage_count,
                         written);
    char *wgsl = build_wgsl(w, arg);
    if (!wgsl) return wgt_error(WGT_ERR_INTERNAL, "no WGSL source for kernel %s", key);
    const wgpu_procs *p = w->p;
    wgt_wgpu_push_scope(w);
    WGPUShaderModule module = wgt_wgpu_shader_module(w, wgsl, key);
    WGPUComputePipelineDescriptor pd = {0};
    pd.label = wgpu_str(key);
    pd.layout = w->pipeline_layouts[storage_count][written];
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
    size_t key_len = strlen(key);
    wgt_pipeline *pl = calloc(1, sizeof *pl + key_len + 1);
    if (!pl) {
        p->wgpuComputePipelineRelease(pipeline);
        return wgt_error(WGT_ERR_OUT_OF_MEMORY, "out of host memory for a pipeline");
    }
    memcpy(pl->key, key, key_len + 1);
    pl->pipeline = pipeline;
    pl->storage_count = storage_count;
    pl->written = written;
    if ((st = table_insert(w, pl)) != WGT_OK) {
        p->wgpuComputePipelineRelease(pipeline);
        free(pl);
        return st;
    }
    pl->next = w->pipelines; /* the list owns the pipelines; the table finds them */
    w->pipelines = pl;
    wgt_wgpu_pipeline_created(w, pipeline);
    *out = pl;
    return WGT_OK;
}

void wgt_wgpu_pipeline_created(wgt_webgpu *w, WGPUComputePipeline pipeline) {
    const uint32_t max = sizeof w->cold / sizeof *w->cold;
    if (w->cold_count == max) { /* the oldest never ran (a dropped cache, say): forget it */
        memmove(w->cold, w->cold + 1, (max - 1) * sizeof *w->cold);
        w->cold_count--;
    }
    w->cold[w->cold_count++] = pipeline;
}

/* 1 (and the pipeline leaves the list) when this is its first dispatch. */
static int first_run(wgt_webgpu *w, WGPUComputePipeline pipeline) {
    for (uint32_t i = 0; i < w->cold_count; i++)
        if (w->cold[i] == pipeline) {
            w->cold[i] = w->cold[--w->cold_count];
            return 1;
        }
    return 0;
}

static void on_first_runs_done(uint32_t status, void *u1, void *u2) {
    (void)status;
    (void)u1;
    (void)u2;
}

/* Sends the batch holding a first run and notes its completion future (see wgt_webgpu.cold). */
static wgt_status submit_first_run(wgt_webgpu *w) {
    wgt_status st = wgt_wgpu_submit(w);
    if (st != WGT_OK) return st;
    WGPUCallbackInfo cb = {0};
    cb.mode = WGPU_CALLBACK_MODE_WAIT_ANY_ONLY;
    cb.callback = (void (*)(void))on_first_runs_done;
    w->first_runs_done = w->p->wgpuQueueOnSubmittedWorkDone(w->queue, cb);
    w->first_runs_pending = 1;
    return WGT_OK;
}

static wgt_status ensure_encoder(wgt_webgpu *w) {
    if (w->encoder) return WGT_OK;
    wgt_status st = wgt_wgpu_in_flight_room(w); /* the device is not left too far behind */
    if (st != WGT_OK) return st;
    WGPUCommandEncoderDescriptor d = {0};
    w->encoder = w->p->wgpuDeviceCreateCommandEncoder(w->device, &d);
    return w->encoder ? WGT_OK : wgt_error(WGT_ERR_BACKEND, "cannot create a command encoder");
}

static void end_pass(wgt_webgpu *w) {
    if (!w->pass) return;
    w->p->wgpuComputePassEncoderEnd(w->pass);
    w->p->wgpuComputePassEncoderRelease(w->pass);
    w->pass = NULL;
    w->pass_pipeline = NULL;
}

wgt_status wgt_wgpu_submit(wgt_webgpu *w) {
    const wgpu_procs *p = w->p;
    if (!w->encoder) return WGT_OK;
    end_pass(w);
    if (w->ring_used) p->wgpuQueueWriteBuffer(w->queue, w->ring, 0, w->ring_host, w->ring_used);
    if (w->upload_used) p->wgpuQueueWriteBuffer(w->queue, w->upload, 0, w->upload_host, w->upload_used);
    w->upload_used = 0;
    WGPUCommandBufferDescriptor d = {0};
    WGPUCommandBuffer cmd = p->wgpuCommandEncoderFinish(w->encoder, &d);
    p->wgpuCommandEncoderRelease(w->encoder);
    w->encoder = NULL;
    w->ring_used = 0;
    uint32_t groups = w->batch_groups;
    w->batch_commands = 0;
    w->batch_groups = 0;
    w->submit_serial++; /* the batch is gone either way */
    if (!cmd) {
        w->failed_serial = w->submit_serial;
        return wgt_error(WGT_ERR_BACKEND, "finishing the command buffer failed");
    }
    p->wgpuQueueSubmit(w->queue, 1, &cmd);
    p->wgpuCommandBufferRelease(cmd);
    wgt_wgpu_in_flight_add(w, groups);
    return wgt_wgpu_status(w);
}

/* The part of a dispatch before its bind group: the device is usable, a first run goes to the
 * queue alone (what was recorded before it is timed as usual), params_size bytes of params
 * take a slot of the uniform ring (*slot, bound as *bind_size bytes; a full ring or a batch
 * grown to its bounds submits first), and the encoder is open. */
static wgt_status dispatch_begin(wgt_webgpu *w, WGPUComputePipeline pipeline, const void *params,
                                 uint32_t params_size, uint32_t *slot, uint32_t *bind_size, int *first) {
    wgt_status st = wgt_wgpu_status(w);
    if (st != WGT_OK) return st;
    /* A profile's full query set is read before this dispatch takes its ring slot. */
    if (wgt_wgpu_timing_per_dispatch(w) && (st = wgt_wgpu_timestamps_make_room(w)) != WGT_OK) return st;
    *first = first_run(w, pipeline);
    if (*first && w->encoder && (st = wgt_wgpu_submit(w)) != WGT_OK) return st;
    *bind_size = (params_size + 15u) & ~15u;
    *slot = (w->ring_used + w->ring_align - 1) / w->ring_align * w->ring_align;
    if (*slot + *bind_size > w->ring_size || w->batch_commands >= WGT_WGPU_BATCH_COMMANDS ||
        w->batch_groups >= WGT_WGPU_BATCH_BIND_GROUPS) {
        if ((st = wgt_wgpu_submit(w)) != WGT_OK) return st;
        *slot = 0;
    }
    if ((st = ensure_encoder(w)) != WGT_OK) return st;
    if (*bind_size) {
        memcpy(w->ring_host + *slot, params, params_size);
        memset(w->ring_host + *slot + params_size, 0, *bind_size - params_size);
        w->ring_used = *slot + *bind_size;
    }
    return WGT_OK;
}

/* The rest: the pass (begun on first use), the pipeline (kept between dispatches), the group
 * (with the ring slot as its one dynamic offset, when it has one) and the grid. */
static wgt_status dispatch_end(wgt_webgpu *w, const char *label, WGPUComputePipeline pipeline, WGPUBindGroup group,
                               int dynamic, uint32_t slot, const uint32_t *grid, int first) {
    const wgpu_procs *p = w->p;
    int own_pass = wgt_wgpu_timing_per_dispatch(w);
    if (!w->pass) {
        WGPUComputePassDescriptor pd = {0};
        WGPUPassTimestampWrites writes;
        if (w->timestamps) pd.timestampWrites = wgt_wgpu_timestamps_for_pass(w, &writes);
        if (own_pass && pd.timestampWrites) wgt_wgpu_timestamps_label(w, label);
        w->pass = p->wgpuCommandEncoderBeginComputePass(w->encoder, &pd);
        w->passes++;
    }
    if (w->pass_pipeline != pipeline) { /* the pass keeps its pipeline between dispatches */
        p->wgpuComputePassEncoderSetPipeline(w->pass, pipeline);
        w->pass_pipeline = pipeline;
    }
    p->wgpuComputePassEncoderSetBindGroup(w->pass, 0, group, dynamic ? 1 : 0, dynamic ? &slot : NULL);
    p->wgpuComputePassEncoderDispatchWorkgroups(w->pass, grid[0], grid[1], grid[2]);
    w->batch_commands++;
    w->dispatches++;
    if (own_pass) end_pass(w);
    return first ? submit_first_run(w) : WGT_OK;
}

wgt_status wgt_wgpu_dispatch_with_layout(wgt_webgpu *w, const char *label, WGPUComputePipeline pipeline,
                                         WGPUBindGroupLayout layout, int count, wgt_buffer *const *buffers,
                                         const void *params, uint32_t params_size, uint64_t workgroups) {
    if (count < 1 || count > WGT_MAX_LAYOUT_STORAGE)
        return wgt_error(WGT_ERR_INTERNAL, "kernel %s wants %d storage bindings", label, count);
    uint32_t max_dim = w->limits.limits.maxComputeWorkgroupsPerDimension;
    if (max_dim == 0) max_dim = 65535;
    uint64_t x = workgroups < max_dim ? workgroups : max_dim;
    uint64_t y = (workgroups + x - 1) / x;
    if (y > max_dim)
        return wgt_error(WGT_ERR_LIMIT, "kernel %s needs %llu workgroups, more than %u x %u", label,
                         (unsigned long long)workgroups, max_dim, max_dim);
    uint32_t slot, bind_size;
    int first;
    wgt_status st = dispatch_begin(w, pipeline, params, params_size, &slot, &bind_size, &first);
    if (st != WGT_OK) return st;
    WGPUBindGroup group;
    if ((st = wgt_wgpu_bind_group(w, layout, count, buffers, bind_size, &group)) != WGT_OK) return st;
    for (int i = 0; i < count; i++) buffers[i]->used_serial = w->submit_serial + 1;
    const uint32_t grid[3] = {(uint32_t)x, (uint32_t)y, 1};
    return dispatch_end(w, label, pipeline, group, 1, slot, grid, first);
}

wgt_status wgt_wgpu_dispatch_grid(wgt_webgpu *w, const char *label, WGPUComputePipeline pipeline,
                                  WGPUBindGroupLayout layout, int count, const WGPUBindGroupEntry *entries,
                                  wgt_buffer *const *buffers, int uniform_binding, const void *params,
                                  uint32_t params_size, const uint32_t *grid) {
    if (count < 0 || count > WGT_WGPU_GRID_MAX_ENTRIES)
        return wgt_error(WGT_ERR_INTERNAL, "kernel %s wants %d storage bindings", label, count);
    uint32_t slot = 0, bind_size = 0;
    int first;
    wgt_status st = dispatch_begin(w, pipeline, params, uniform_binding >= 0 ? params_size : 0, &slot, &bind_size, &first);
    if (st != WGT_OK) return st;
    /* Repeated dispatches over the same tensors (a loop, a graph's replays) reuse their group. */
    if (count <= WGT_MAX_LAYOUT_STORAGE) {
        WGPUBindGroup cached;
        st = wgt_wgpu_bind_group_entries(w, label, layout, count, entries, buffers, uniform_binding, bind_size, &cached);
        if (st != WGT_OK) return st;
        for (int i = 0; i < count; i++) buffers[i]->used_serial = w->submit_serial + 1;
        return dispatch_end(w, label, pipeline, cached, uniform_binding >= 0, slot, grid, first);
    }
    WGPUBindGroupEntry e[WGT_WGPU_GRID_MAX_ENTRIES + 1];
    memcpy(e, entries, sizeof *e * (size_t)count);
    if (uniform_binding >= 0) {
        memset(&e[count], 0, sizeof e[count]);
        e[count].binding = (uint32_t)uniform_binding;
        e[count].buffer = w->ring;
        e[count].size = bind_size;
    }
    WGPUBindGroupDescriptor d = {0};
    d.label = wgpu_str(label);
    d.layout = layout;
    d.entryCount = (size_t)count + (uniform_binding >= 0);
    d.entries = e;
    /* More bindings than the cache keeps: made for this dispatch and released once set (the
     * pass keeps what it needs). Validation errors (a buffer of another device, say) surface
     * at the batch's submit. */
    WGPUBindGroup group = w->p->wgpuDeviceCreateBindGroup(w->device, &d);
    if (!group) return wgt_error(WGT_ERR_BACKEND, "kernel %s: creating its bind group failed", label);
    w->bind_groups_created++;
    w->batch_groups++;
    for (int i = 0; i < count; i++) buffers[i]->used_serial = w->submit_serial + 1;
    st = dispatch_end(w, label, pipeline, group, uniform_binding >= 0, slot, grid, first);
    w->p->wgpuBindGroupRelease(group);
    return st;
}

wgt_status wgt_wgpu_dispatch(wgt_webgpu *w, wgt_pipeline *pl, wgt_buffer *const *buffers, const void *params,
                             uint32_t params_size, uint64_t workgroups) {
    return wgt_wgpu_dispatch_with_layout(w, pl->key, pl->pipeline, w->layouts[pl->storage_count][pl->written], pl->storage_count,
                                         buffers, params, params_size, workgroups);
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

wgt_status wgt_wgpu_resolve_queries(wgt_webgpu *w, WGPUQuerySet set, uint32_t first, uint32_t count, WGPUBuffer dst,
                                    uint64_t offset) {
    wgt_status st = ensure_encoder(w);
    if (st != WGT_OK) return st;
    end_pass(w); /* resolves live outside compute passes, as copies do */
    w->p->wgpuCommandEncoderResolveQuerySet(w->encoder, set, first, count, dst, offset);
    w->batch_commands++;
    return WGT_OK;
}

wgt_status wgt_wgpu_clear_buffer(wgt_webgpu *w, WGPUBuffer buf, uint64_t offset, uint64_t size) {
    wgt_status st = ensure_encoder(w);
    if (st != WGT_OK) return st;
    end_pass(w); /* clears live outside compute passes, as copies do */
    w->p->wgpuCommandEncoderClearBuffer(w->encoder, buf, offset, size);
    w->batch_commands++;
    return WGT_OK;
}

wgt_status wgt_wgpu_upload_in_batch(wgt_webgpu *w, wgt_buffer *dst, uint64_t offset, const void *src, uint32_t n,
                                    int *done) {
    *done = 0;
    if (!w->encoder || !w->upload || n == 0 || n % 4 || offset % 4 || w->upload_size - w->upload_used < n)
        return WGT_OK;
    uint32_t at = w->upload_used;
    wgt_status st = wgt_wgpu_copy_buffer(w, w->upload, at, dst->handle, offset, n);
    if (st != WGT_OK) return st;
    memcpy(w->upload_host + at, src, n);
    w->upload_used = at + n;
    dst->used_serial = w->submit_serial + 1;
    *done = 1;
    return WGT_OK;
}
