/*
 * User WGSL kernels: wgt_kernel_create reflects the source's bindings (wgsl_reflect.c) and has
 * the backend compile it; wgt_kernel_dispatch checks every argument against that reflection
 * and records one node, so a dispatch is an op of the lazy graph like any other. The node
 * writes every read_write binding (args[0..nwrites-1]) and reads the rest; it is a partial
 * write (a kernel may leave elements alone and may read what it writes), so an in-place
 * tensor keeps what the kernel does not touch and a created output starts as zeros. Ops
 * recorded before on an in-place tensor run first, later ones after (the storage's pending
 * readers and writers order them, as for wgt_set_rows).
 *
 * Inside a compiled graph the node is symbolic like any op's and belongs to the storage it
 * writes, so it may write one binding there; the graph resolves its operands at each dispatch.
 * On a backend that runs no WGSL the node calls the kernel's CPU function instead.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "node.h"
#include "wgsl_reflect.h"

void wgt_context_unref(wgt_context *ctx); /* context.c */

#define MAX_PARAMS_BYTES 65536u /* WebGPU's minimum maxUniformBufferBindingSize */

/* The record a kernel handle names (handles.c): a released kernel's handle is stale in the
 * table, so a record reached here is live. */
struct wgt_kernel {
    int refs; /* the caller's, and one per recorded dispatch */
    wgt_context *ctx;
    wgt_user_pipeline *pipeline; /* NULL on a backend that runs no WGSL */
    wgt_kernel_cpu_fn cpu_fn;    /* set once: recorded dispatches call it when they run */
    void *cpu_user;
    wgt_kernel_user_release_fn cpu_release;
    char entry[64];
    wgt_reflection r;
};

typedef struct wgt_user_call {
    wgt_kernel *k;
    uint32_t bindings[WGT_NODE_MAX_BINDINGS]; /* per node operand */
    uint32_t groups[3];
    uint32_t params_size;
    unsigned char params[];
} wgt_user_call;

static void kernel_unref(wgt_kernel *k) {
    if (--k->refs > 0) return;
    wgt_backend *be = k->ctx->backend;
    if (k->pipeline) be->user_kernel_release(be, k->pipeline);
    if (k->cpu_release) k->cpu_release(k->cpu_user);
    wgt_context_unref(k->ctx);
    free(k);
}

static wgt_status check_kernel(const char *fn, const wgt_kernel *k) {
    return k ? WGT_OK : wgt_error_if_clear(WGT_ERR_INVALID_ARGUMENT, "%s: kernel is NULL", fn);
}

/* Workgroups per grid dimension: the device's limit, none for a CPU function. */
static uint32_t max_groups(const wgt_kernel *k) {
    uint32_t max = k->ctx->backend->max_workgroups_per_dim;
    return max ? max : UINT32_MAX;
}

wgt_kernel *wgt_kernel_create(wgt_context *ctx, const char *wgsl, const char *entry_point) {
    static const char fn[] = "wgt_kernel_create";
    if (wgt_check_context(fn, ctx) != WGT_OK) return NULL;
    if (!wgsl || !entry_point) {
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, !wgsl ? "wgsl" : "entry_point");
        return NULL;
    }
    wgt_backend *be = ctx->backend;
    wgt_kernel *k = calloc(1, sizeof *k);
    if (!k) {
        wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory", fn);
        return NULL;
    }
    if (wgt_wgsl_reflect(fn, wgsl, entry_point, &k->r) != WGT_OK) {
        free(k);
        return NULL;
    }
    if (!k->r.entry_found) {
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: the shader has no @compute fn %s", fn, entry_point);
        free(k);
        return NULL;
    }
    int writes = 0;
    for (int i = 0; i < k->r.count; i++) writes += k->r.bindings[i].read_write;
    if (!writes) {
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: the shader declares no var<storage, read_write> binding, so a "
                  "dispatch could write nothing", fn);
        free(k);
        return NULL;
    }
    wgt_user_layout_entry layout[WGT_REFLECT_MAX_BINDINGS];
    for (int i = 0; i < k->r.count; i++) {
        const wgt_reflect_binding *b = &k->r.bindings[i];
        layout[i] = (wgt_user_layout_entry){b->binding, b->uniform ? 2 : b->read_write ? 1 : 0};
    }
    /* A backend that runs no WGSL keeps only the reflection: dispatches call the CPU function. */
    if (be->user_kernel_create &&
        be->user_kernel_create(be, wgsl, entry_point, k->r.count, layout, &k->pipeline) != WGT_OK) {
        free(k);
        return NULL;
    }
    snprintf(k->entry, sizeof k->entry, "%s", entry_point);
    k->refs = 1;
    k->ctx = ctx;
    ctx->refs++; /* the backend, which holds the pipeline, stays until the kernel goes */
    return k;
}

void wgt_kernel_release(wgt_kernel *k) {
    if (!k) return;
    if (check_kernel("wgt_kernel_release", k) != WGT_OK) return;
    kernel_unref(k);
}

int wgt_kernel_binding_count(const wgt_kernel *k) {
    return check_kernel("wgt_kernel_binding_count", k) == WGT_OK ? k->r.count : 0;
}

wgt_status wgt_kernel_binding(const wgt_kernel *k, int i, wgt_kernel_binding_info *out) {
    static const char fn[] = "wgt_kernel_binding";
    wgt_status st = check_kernel(fn, k);
    if (st != WGT_OK) return st;
    if (!out) return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: out is NULL", fn);
    if (i < 0 || i >= k->r.count)
        return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: index %d is outside the shader's %d bindings", fn, i, k->r.count);
    const wgt_reflect_binding *b = &k->r.bindings[i];
    *out = (wgt_kernel_binding_info){b->name, b->type, b->binding, b->read_write, b->uniform, b->element_size,
                                     b->component_size};
    return WGT_OK;
}

wgt_status wgt_kernel_workgroup_size(const wgt_kernel *k, uint32_t size[3]) {
    wgt_status st = check_kernel("wgt_kernel_workgroup_size", k);
    if (st != WGT_OK) return st;
    if (!size) return wgt_error(WGT_ERR_INVALID_ARGUMENT, "wgt_kernel_workgroup_size: size is NULL");
    memcpy(size, k->r.workgroup_size, sizeof k->r.workgroup_size);
    return WGT_OK;
}

wgt_status wgt_kernel_groups_for(const wgt_kernel *k, int64_t n, uint32_t groups[3]) {
    static const char fn[] = "wgt_kernel_groups_for";
    wgt_status st = check_kernel(fn, k);
    if (st != WGT_OK) return st;
    if (!groups) return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: groups is NULL", fn);
    if (n < 0) return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: n is %lld", fn, (long long)n);
    uint32_t wx = k->r.workgroup_size[0];
    if (!wx)
        return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: the entry point's @workgroup_size x is not an integer literal",
                         fn);
    uint64_t x = ((uint64_t)n + wx - 1) / wx, max = max_groups(k);
    if (x > max)
        return wgt_error(WGT_ERR_LIMIT, "%s: %lld invocations need %llu workgroups of %u, more than the device's %llu "
                         "per dimension; dispatch a 2-D grid", fn, (long long)n, (unsigned long long)x, wx,
                         (unsigned long long)max);
    groups[0] = (uint32_t)x;
    groups[1] = groups[2] = 1;
    return WGT_OK;
}

void wgt_user_call_free(wgt_user_call *call) {
    if (!call) return;
    kernel_unref(call->k);
    free(call);
}

wgt_status wgt_kernel_set_cpu_fn(wgt_kernel *k, wgt_kernel_cpu_fn fn, void *user_data,
                                 wgt_kernel_user_release_fn release) {
    static const char fn_name[] = "wgt_kernel_set_cpu_fn";
    wgt_status st = check_kernel(fn_name, k);
    if (st != WGT_OK) return st;
    if (!fn) return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: fn is NULL", fn_name);
    /* Dispatches recorded already call the kernel's function when they run: replacing it
     * would change work the caller recorded, and the old user data could not be released. */
    if (k->cpu_fn)
        return wgt_error(WGT_ERR_USAGE, "%s: kernel '%s' has a CPU function already; create another kernel", fn_name,
                         k->entry);
    k->cpu_fn = fn;
    k->cpu_user = user_data;
    k->cpu_release = release;
    return WGT_OK;
}

/* The dispatch on host memory: the shader's tensor bindings in declaration order. */
static wgt_status run_cpu(const wgt_user_call *call, const wgt_operand *args, int nargs) {
    const wgt_kernel *k = call->k;
    wgt_kernel_buffer b[WGT_REFLECT_MAX_BINDINGS];
    int nb = 0;
    for (int r = 0; r < k->r.count; r++) {
        const wgt_reflect_binding *rb = &k->r.bindings[r];
        if (rb->uniform) continue;
        int q = 0;
        while (q < nargs && call->bindings[q] != rb->binding) q++;
        if (q == nargs)
            return wgt_error(WGT_ERR_INTERNAL, "user kernel '%s': binding %u has no operand", k->entry, rb->binding);
        size_t esize = wgt_dtype_size(args[q].dtype);
        b[nb++] = (wgt_kernel_buffer){rb->name, rb->binding, rb->read_write,
                                      args[q].host ? (char *)args[q].host + (size_t)args[q].offset * esize : NULL,
                                      (size_t)wgt_numel(args[q].ndim, args[q].shape) * esize, args[q].dtype,
                                      args[q].ndim, args[q].shape};
    }
    char why[256] = "";
    wgt_kernel_cpu_call c = {nb, b, call->params_size ? call->params : NULL, call->params_size,
                             {call->groups[0], call->groups[1], call->groups[2]},
                             {k->r.workgroup_size[0], k->r.workgroup_size[1], k->r.workgroup_size[2]}, why, sizeof why};
    if (k->cpu_fn(k->cpu_user, &c) == 0) return WGT_OK;
    why[sizeof why - 1] = '\0';
    return wgt_error(WGT_ERR_BACKEND, "user kernel '%s': its CPU function failed: %s", k->entry,
                     why[0] ? why : "(no reason given)");
}

wgt_status wgt_user_call_run(wgt_backend *be, const wgt_user_call *call, const wgt_operand *args, int nargs) {
    if (!call->k->pipeline) return run_cpu(call, args, nargs);
    return be->user_kernel_run(be, call->k->pipeline, nargs, call->bindings, args, call->params_size ? call->params : NULL,
                               call->params_size, call->groups);
}

/* ---- dispatch ---- */

typedef struct {
    int binding;        /* index into the reflection */
    wgt_tensor *tensor; /* what the node binds: the caller's, a contiguous copy, or a new output */
    int owned;          /* tensor is ours to release (a copy or an output not yet handed out) */
} bound;

/* The reflection index args[i] names, or an error naming it. */
static wgt_status find_binding(const char *fn, const wgt_kernel *k, int i, const wgt_kernel_arg *a, int *out) {
    const wgt_reflection *r = &k->r;
    for (int b = 0; b < r->count; b++)
        if (a->name ? !strcmp(r->bindings[b].name, a->name) : r->bindings[b].binding == a->binding) {
            if (r->bindings[b].uniform)
                return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: args[%d] names '%s', the shader's var<uniform>: "
                                 "its values are the params, not a tensor", fn, i, r->bindings[b].name);
            *out = b;
            return WGT_OK;
        }
    char names[512] = "";
    size_t used = 0;
    for (int b = 0; b < r->count && used < sizeof names; b++)
        if (!r->bindings[b].uniform)
            used += (size_t)snprintf(names + used, sizeof names - used, "%s%s (%u)", used ? ", " : "",
                                     r->bindings[b].name, r->bindings[b].binding);
    if (a->name)
        return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: args[%d] names binding '%s', which the shader does not "
                         "declare (it declares %s)", fn, i, a->name, names[0] ? names : "none");
    return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: args[%d] names @binding(%u), which the shader does not declare "
                     "(it declares %s)", fn, i, a->binding, names[0] ? names : "none");
}

/* Size checks of a tensor (dtype, ndim, shape) against binding b. */
static wgt_status check_fit(const char *fn, const wgt_kernel *k, int i, const wgt_reflect_binding *b, wgt_dtype dtype,
                            int64_t numel) {
    size_t esize = wgt_dtype_size(dtype);
    uint64_t bytes = (uint64_t)numel * esize, max = k->ctx->backend->max_binding_bytes;
    if (b->component_size && esize != b->component_size)
        return wgt_error(WGT_ERR_DTYPE, "%s: args[%d] is a %s tensor (%zu-byte elements) for binding '%s' of "
                         "array<%s>, whose scalars take %u bytes", fn, i, wgt_dtype_name(dtype), esize, b->name,
                         b->type, b->component_size);
    if (b->element_size && bytes % b->element_size)
        return wgt_error(WGT_ERR_SHAPE, "%s: args[%d] holds %llu bytes for binding '%s', not a whole number of "
                         "%s (%u bytes each)", fn, i, (unsigned long long)bytes, b->name, b->type, b->element_size);
    if (max && ((bytes + 3) & ~3ull) > max)
        return wgt_error(WGT_ERR_LIMIT, "%s: args[%d] for binding '%s' is %llu bytes, more than the device's "
                         "maxStorageBufferBindingSize of %llu", fn, i, b->name, (unsigned long long)bytes,
                         (unsigned long long)max);
    return WGT_OK;
}

/* Checks args[i] (bound to reflection index b) and fills what the node binds. Nothing is
 * created here, so a later argument's error leaves nothing behind. */
static wgt_status check_arg(const char *fn, const wgt_kernel *k, int i, const wgt_kernel_arg *a, int b) {
    const wgt_reflect_binding *rb = &k->r.bindings[b];
    char name[48];
    snprintf(name, sizeof name, "args[%d].tensor", i);
    if (!a->tensor) {
        if (!rb->read_write)
            return wgt_error(WGT_ERR_USAGE, "%s: args[%d]: binding '%s' is read-only (var<storage, read>), so the "
                             "call cannot create it as an output; give it a tensor", fn, i, rb->name);
        int64_t numel;
        wgt_status st = wgt_check_dtype(fn, a->dtype);
        if (st == WGT_OK && a->ndim > 0 && !a->shape)
            st = wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: args[%d].shape is NULL for ndim %d", fn, i, a->ndim);
        if (st == WGT_OK) st = wgt_check_shape(fn, a->ndim, a->shape, &numel);
        return st != WGT_OK ? st : check_fit(fn, k, i, rb, a->dtype, numel);
    }
    const wgt_tensor *t = a->tensor;
    wgt_status st = wgt_check_tensor(fn, name, t);
    if (st != WGT_OK) return st;
    if (t->storage->ctx != k->ctx)
        return wgt_error(WGT_ERR_CONTEXT_MISMATCH, "%s: args[%d] belongs to another context than the kernel", fn, i);
    if (rb->read_write && t->storage->input_name)
        return wgt_error(WGT_ERR_USAGE, "%s: args[%d] for read_write binding '%s' is graph input '%s', which a graph "
                         "never writes; let the call create the output", fn, i, rb->name, t->storage->input_name);
    if ((st = check_fit(fn, k, i, rb, t->dtype, wgt_numel(t->ndim, t->shape))) != WGT_OK) return st;
    if (!rb->read_write) return WGT_OK;
    if (!(t->usage & WGT_USAGE_WRITABLE))
        return wgt_error(WGT_ERR_USAGE, "%s: args[%d] for read_write binding '%s' is written in place, and the tensor "
                         "lacks the writable usage", fn, i, rb->name);
    if (!wgt_is_contiguous(t->ndim, t->shape, t->strides) || t->offset != 0)
        return wgt_error(WGT_ERR_USAGE, "%s: args[%d] for read_write binding '%s' is written in place, so it must be "
                         "contiguous from its storage's first element (this view has offset %lld%s)", fn, i, rb->name,
                         (long long)t->offset,
                         wgt_is_contiguous(t->ndim, t->shape, t->strides) ? "" : " and is not contiguous");
    return WGT_OK;
}

static void release_bound(bound *bd, int n) {
    for (int i = 0; i < n; i++)
        if (bd[i].owned) wgt_release(bd[i].tensor);
}

static wgt_status check_params(const char *fn, const wgt_kernel *k, const void *params, size_t params_size) {
    const wgt_reflect_binding *u = NULL;
    for (int b = 0; b < k->r.count; b++)
        if (k->r.bindings[b].uniform) u = &k->r.bindings[b];
    if (!u) {
        if (params_size)
            return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: params_size is %zu, and the shader declares no var<uniform>",
                             fn, params_size);
        return WGT_OK;
    }
    if (!params || !params_size)
        return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: the shader's var<uniform> '%s' (%s) needs params", fn, u->name,
                         u->type);
    if (u->element_size && params_size != u->element_size)
        return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: params_size is %zu; the shader's var<uniform> '%s' (%s) is "
                         "%u bytes", fn, params_size, u->name, u->type, u->element_size);
    if (params_size % 4 || params_size > MAX_PARAMS_BYTES)
        return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: params_size is %zu; a uniform takes whole words, at most %u "
                         "bytes", fn, params_size, MAX_PARAMS_BYTES);
    return WGT_OK;
}

wgt_status wgt_kernel_dispatch(wgt_kernel *k, int nargs, const wgt_kernel_arg *args, const void *params,
                               size_t params_size, uint32_t groups_x, uint32_t groups_y, uint32_t groups_z,
                               wgt_tensor **outputs) {
    static const char fn[] = "wgt_kernel_dispatch";
    wgt_status st = check_kernel(fn, k);
    if (st != WGT_OK || (st = wgt_check_context(fn, k->ctx)) != WGT_OK) return st;
    if (nargs < 0 || nargs > WGT_NODE_MAX_BINDINGS || (nargs > 0 && !args))
        return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: nargs is %d with args %s", fn, nargs, args ? "given" : "NULL");
    if (outputs)
        for (int i = 0; i < nargs; i++) outputs[i] = NULL;
    uint32_t grid[3] = {groups_x, groups_y, groups_z}, max = max_groups(k);
    for (int d = 0; d < 3; d++)
        if (grid[d] > max)
            return wgt_error(WGT_ERR_LIMIT, "%s: groups_%c is %u, more than the device's %u workgroups per dimension",
                             fn, 'x' + d, grid[d], max);
    if (!k->pipeline && !k->cpu_fn)
        return wgt_error(WGT_ERR_UNAVAILABLE, "%s: the %s backend runs no WGSL, and kernel '%s' has no CPU function "
                         "(wgt_kernel_set_cpu_fn)", fn, k->ctx->backend->name, k->entry);
    if ((st = check_params(fn, k, params, params_size)) != WGT_OK) return st;

    int which[WGT_NODE_MAX_BINDINGS], given[WGT_REFLECT_MAX_BINDINGS];
    for (int b = 0; b < k->r.count; b++) given[b] = -1;
    for (int i = 0; i < nargs; i++) {
        if ((st = find_binding(fn, k, i, &args[i], &which[i])) != WGT_OK) return st;
        if (given[which[i]] >= 0)
            return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: args[%d] and args[%d] both bind '%s'", fn, given[which[i]],
                             i, k->r.bindings[which[i]].name);
        given[which[i]] = i;
        if ((st = check_arg(fn, k, i, &args[i], which[i])) != WGT_OK) return st;
        if (!args[i].tensor && !outputs)
            return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: args[%d] asks for an output and outputs is NULL", fn, i);
    }
    for (int b = 0; b < k->r.count; b++)
        if (!k->r.bindings[b].uniform && given[b] < 0)
            return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: binding '%s' (@binding(%u)) is not given", fn,
                             k->r.bindings[b].name, k->r.bindings[b].binding);
    /* A graph's node belongs to the one storage it writes (lazy.c). */
    int symbolic = 0, written = 0;
    for (int i = 0; i < nargs; i++) {
        symbolic |= args[i].tensor && args[i].tensor->storage->symbolic;
        written += k->r.bindings[which[i]].read_write;
    }
    if (symbolic && written > 1)
        return wgt_error(WGT_ERR_USAGE, "%s: kernel '%s' writes %d bindings, and inside a compiled graph a kernel may "
                         "write one; split it into kernels of one output each", fn, k->entry, written);
    /* A tensor written in place must be the only binding of its storage: WebGPU forbids a
     * writable binding overlapping any other of the same dispatch. */
    for (int i = 0; i < nargs; i++)
        for (int j = 0; j < nargs && args[i].tensor && k->r.bindings[which[i]].read_write; j++)
            if (j != i && args[j].tensor && args[j].tensor->storage == args[i].tensor->storage)
                return wgt_error(WGT_ERR_USAGE, "%s: args[%d] is written in place and args[%d] views the same storage; "
                                 "a written binding must not alias another", fn, i, j);

    /* Operands: written bindings first (the node writes args[0..nwrites-1]). */
    bound bd[WGT_NODE_MAX_BINDINGS];
    int n = 0, nwrites = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < nargs; i++) {
            if (k->r.bindings[which[i]].read_write != (pass == 0)) continue;
            bound *x = &bd[n];
            *x = (bound){which[i], args[i].tensor, 0};
            if (!x->tensor) {
                x->tensor = wgt_tensor_new(k->ctx, fn, args[i].dtype, args[i].ndim, args[i].shape, WGT_USAGE_DEFAULT);
                x->owned = 1;
            } else if (!wgt_is_contiguous(x->tensor->ndim, x->tensor->shape, x->tensor->strides) ||
                       x->tensor->offset != 0) {
                x->tensor = wgt_contiguous(x->tensor); /* read bindings only: check_arg refused written views */
                x->owned = 1;
            }
            if (!x->tensor) {
                release_bound(bd, n);
                return wgt_last_status();
            }
            n++;
            nwrites += pass == 0;
        }

    wgt_user_call *call = calloc(1, sizeof *call + params_size);
    wgt_node *node = call ? wgt_node_new(WGT_NODE_USER_KERNEL, 0, fn, n) : NULL;
    if (!node) {
        free(call);
        release_bound(bd, n);
        return wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory for recording the dispatch", fn);
    }
    call->k = k;
    k->refs++;
    memcpy(call->groups, grid, sizeof grid);
    call->params_size = (uint32_t)params_size;
    if (params_size) memcpy(call->params, params, params_size);
    for (int q = 0; q < n; q++) {
        call->bindings[q] = k->r.bindings[bd[q].binding].binding;
        wgt_operand_whole(bd[q].tensor, &node->args[q]);
    }
    node->user = call;
    node->nwrites = nwrites;
    node->partial = 1;
    st = wgt_record(k->ctx, node);
    if (st == WGT_OK && outputs)
        for (int q = 0; q < n; q++)
            if (bd[q].owned && k->r.bindings[bd[q].binding].read_write) { /* created, not a copy */
                outputs[given[bd[q].binding]] = bd[q].tensor;
                bd[q].owned = 0;
            }
    release_bound(bd, n);
    return st;
}
