/*
 * Recording and running lazy work. Ops build a node and hand it to wgt_record: ordinary
 * nodes wait in the context's pending list, holding their storages; nodes computed from a
 * graph input become symbolic and hang off the storage they write. wgt_flush plans the
 * pending list (scheduler.c) and runs it step by step, releasing each node as soon as it ran
 * so intermediates nobody holds go back to the pool before the next step allocates.
 *
 * When a step fails (device lost, out of memory), the steps after it do not run: every
 * storage they were to write is marked failed with the message, so reading one reports the
 * cause instead of returning stale data.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "node.h"

void wgt_context_unref(wgt_context *ctx); /* context.c */

/* Whether running the pending work may wait for ctx's device now. Not inside a synchronous
 * call from JavaScript (WebAssembly build) on WebGPU: nothing settles until the JS event loop
 * runs, and V8 traps a wait there; the work waits for the next call that can (a read, a sync,
 * an op's Async form). */
#ifdef __wasi__
int wgt_wgpu_can_wait(void); /* web/c/loader_js.c */
static int may_wait(const wgt_context *ctx) { return ctx->backend->kind != WGT_BACKEND_WEBGPU || wgt_wgpu_can_wait(); }
#else
static int may_wait(const wgt_context *ctx) { (void)ctx; return 1; }
#endif

void wgt_operand_view(wgt_tensor *t, int ndim, const int64_t *shape, const int64_t *strides, wgt_operand *op) {
    memset(op, 0, sizeof *op);
    op->dtype = t->dtype;
    op->ndim = ndim;
    for (int i = 0; i < ndim; i++) {
        op->shape[i] = shape[i];
        op->strides[i] = strides[i];
    }
    op->offset = t->offset;
    op->storage = t->storage;
}

void wgt_operand_whole(wgt_tensor *t, wgt_operand *op) { wgt_operand_view(t, t->ndim, t->shape, t->strides, op); }

wgt_node *wgt_node_new(wgt_node_kind kind, int op, const char *fn, int nargs) {
    size_t room = (size_t)(nargs > WGT_NODE_MAX_ARGS ? nargs : WGT_NODE_MAX_ARGS);
    wgt_node *n = nargs <= WGT_NODE_MAX_BINDINGS ? calloc(1, sizeof *n + room * sizeof(wgt_operand)) : NULL;
    if (!n) {
        wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory for recording the op", fn);
        return NULL;
    }
    n->kind = kind;
    n->op = op;
    n->fn = fn;
    n->nargs = nargs;
    n->nwrites = 1;
    n->refs = 1;
    return n;
}

static int reads_arg(const wgt_node *n, int i) { return i >= n->nwrites || n->partial; }

/* Releasing a node releases the storages it holds, and a storage computed from graph inputs
 * holds the node that writes it: freeing a chain of N recorded ops directly would nest N calls
 * deep and overflow the stack for long chains. So a node whose last reference goes is queued,
 * and the outermost release on this thread frees the queue one node at a time; the storages a
 * node frees only queue their producers. The depth stays constant for any graph. */
static _Thread_local wgt_node *release_queue;
static _Thread_local int releasing;

static void node_free(wgt_node *n) {
    for (int i = 0; i < n->nargs; i++) {
        wgt_storage *s = n->args[i].storage;
        if (!s) continue;
        if (n->symbolic) {
            /* args[0] holds the node, not the other way, except for an update of a tensor with data */
            if (i > 0 || n->update) wgt_storage_release(s);
            continue;
        }
        s->node_refs--;
        if (i < n->nwrites) s->pending_writers--;
        if (reads_arg(n, i)) s->pending_readers--;
        wgt_storage_release(s);
    }
    if (n->prior) wgt_node_release(n->prior);
    wgt_user_call_free(n->user);
    free(n);
}

void wgt_node_release(wgt_node *n) {
    if (!n || --n->refs > 0) return;
    n->next = release_queue; /* out of any pending list by now: the link is free */
    release_queue = n;
    if (releasing) return;
    releasing = 1;
    while (release_queue) {
        wgt_node *m = release_queue;
        release_queue = m->next;
        node_free(m);
    }
    releasing = 0;
}

/* A storage nothing has written yet, so a symbolic partial write may start from zeros. */
static int is_fresh(const wgt_storage *s) {
    return !s->host_valid && !s->device_valid && !s->pending_writers && !s->symbolic;
}

/* Whether target is among the storages that the symbolic values n reads are computed from
 * (n's operands, their producers' operands, and so on; -1 when out of host memory). A symbolic
 * partial write of such values into target would make target own its node and the node,
 * through its inputs, target: neither would ever be freed. Visited storages are marked in
 * live_mark, the scheduler's scratch (it resets it before every use), with a token of this walk. */
static int computed_from(const wgt_node *n, const wgt_storage *target) {
    int token = (int)(n->seq & 0x3fffffff) | 0x40000000; /* never the scheduler's 0 or 1 */
    wgt_storage **stack = NULL;
    size_t top = 0, cap = 0;
    int found = 0;
    for (const wgt_node *m = n; m && !found;) {
        for (; m && !found; m = m->prior) /* a partial writer builds on the earlier writers */
            for (int i = 1; i < m->nargs && !found; i++) {
                wgt_storage *s = m->args[i].storage;
                if (!s || s->live_mark == token) continue;
                if (s == target) {
                    found = 1;
                    break;
                }
                s->live_mark = token;
                if (!s->symbolic || !s->producer) continue;
                if (top == cap) {
                    size_t grown = cap ? cap * 2 : 16;
                    wgt_storage **g = realloc(stack, sizeof *g * grown);
                    if (!g) {
                        found = -1;
                        break;
                    }
                    stack = g, cap = grown;
                }
                stack[top++] = s;
            }
        if (!found && top) m = stack[--top]->producer;
    }
    free(stack);
    return found;
}

wgt_status wgt_record(wgt_context *ctx, wgt_node *n) {
    n->seq = ++ctx->seq;
    int symbolic = 0;
    for (int i = 0; i < n->nargs; i++)
        if (n->args[i].storage && reads_arg(n, i) && n->args[i].storage->symbolic) symbolic = 1;
    wgt_storage *out = n->args[0].storage;
    if (symbolic && n->nwrites > 1) { /* a graph's node belongs to the one storage it writes */
        wgt_status st = wgt_error(WGT_ERR_INTERNAL, "%s: a graph's node writes %d storages", n->fn, n->nwrites);
        wgt_user_call_free(n->user);
        free(n);
        return st;
    }
    if (symbolic) {
        /* Rows set into a tensor with data (a KV cache) stay that tensor's: an in-place update
         * the next graph build takes, at this place in the record order. */
        if (n->kind == WGT_NODE_SET_ROWS && !out->symbolic && !is_fresh(out)) return wgt_graph_update_in_place(ctx, n);
        if (n->partial && !out->symbolic && !is_fresh(out)) {
            wgt_status st = wgt_error(WGT_ERR_USAGE,
                                      "%s: a tensor that holds data cannot be written from graph inputs in place; "
                                      "compute a new tensor instead", n->fn);
            wgt_user_call_free(n->user);
            free(n);
            return st;
        }
        int cycle = n->partial ? computed_from(n, out) : 0;
        if (cycle) {
            wgt_status st = cycle < 0 ? wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory", n->fn)
                                      : wgt_error(WGT_ERR_USAGE,
                                                  "%s: the values written are computed from graph inputs and from the "
                                                  "tensor they are written into; compute a new tensor instead", n->fn);
            wgt_user_call_free(n->user);
            free(n);
            return st;
        }
        n->symbolic = 1;
        for (int i = 1; i < n->nargs; i++)
            if (n->args[i].storage) n->args[i].storage->refs++;
        n->prior = out->producer; /* a partial write builds on the previous writer's result */
        out->producer = n;
        out->symbolic = 1;
        return WGT_OK;
    }
    for (int i = 0; i < n->nargs; i++) {
        wgt_storage *s = n->args[i].storage;
        if (!s) continue;
        s->refs++;
        s->node_refs++;
        if (i < n->nwrites) s->pending_writers++;
        if (reads_arg(n, i)) s->pending_readers++;
        if (i < n->nwrites) ctx->pending_bytes += s->alloc_bytes;
    }
    if (ctx->pending_tail) ctx->pending_tail->next = n;
    else ctx->pending_head = n;
    ctx->pending_tail = n;
    ctx->npending++;
    /* Work nobody reads would otherwise pile up without bound (nodes, and the storages only
     * they hold): past a budget it runs now, and a failure is this op's to report (unless it
     * may not wait now: then it runs at the next call that may). */
    if (!ctx->flushing && (ctx->npending >= WGT_PENDING_MAX_NODES || ctx->pending_bytes >= WGT_PENDING_MAX_BYTES) &&
        may_wait(ctx))
        return wgt_flush(ctx);
    return WGT_OK;
}

/* The storages a node was to write never get their values: reads report why. */
static void mark_failed(wgt_node *n, wgt_status st, const char *message) {
    for (int i = 0; i < n->nwrites; i++) {
        wgt_storage *s = n->args[i].storage;
        if (!s || s->failed) continue;
        s->failed = st;
        s->failed_message = strdup(message);
    }
}

static int needed_eager(wgt_storage *s, void *arg) {
    (void)arg;
    return s->refs > s->node_refs; /* a tensor (or a graph, or a read request) holds it */
}

/* The plan runs now: a value on the host is the value the kernel would read. */
static int foldable_now(wgt_storage *s, void *arg) {
    (void)s, (void)arg;
    return 1;
}

wgt_status wgt_flush(wgt_context *ctx) {
    if (ctx->flushing || !ctx->pending_head) return WGT_OK;
    if (!may_wait(ctx)) /* refused before anything runs: the work stays pending, whole */
        return wgt_error(WGT_ERR_USAGE, "running %d recorded ops on WebGPU: a synchronous call from JavaScript cannot wait "
                                        "for the device; await a read or ctx.sync() first, or call the op's Async form",
                         ctx->npending);
    int n = ctx->npending;
    wgt_node **nodes = malloc(sizeof *nodes * (size_t)n);
    if (!nodes) return wgt_error(WGT_ERR_OUT_OF_MEMORY, "out of host memory for running %d recorded ops", n);
    int k = 0;
    for (wgt_node *p = ctx->pending_head; p; p = p->next) nodes[k++] = p;
    ctx->pending_head = ctx->pending_tail = NULL;
    ctx->npending = 0;
    ctx->pending_bytes = 0;
    ctx->flushing = 1;
    ctx->refs++; /* releasing the last storage inside the loop must not free the context */

    wgt_plan plan;
    wgt_status st = wgt_plan_build(ctx, nodes, n, needed_eager, NULL, ctx->fusion && ctx->backend->fused != NULL,
                                   foldable_now, &plan);
    if (st == WGT_OK) {
        for (int i = 0; i < n; i++)
            if (plan.node_step[i] < 0) { /* dropped: its inputs may return to the pool now */
                wgt_node_release(nodes[i]);
                nodes[i] = NULL;
            }
        ctx->counters.ops_skipped += (uint64_t)plan.skipped;
        /* The nodes of each step, so each is released once its step ran: a fused step's
         * members may sit after nodes of later steps, and no step scans the rest of the list. */
        int *first = calloc((size_t)plan.nsteps + 1, sizeof *first), *order = malloc(sizeof *order * (size_t)n);
        if (!first || !order) st = wgt_error(WGT_ERR_OUT_OF_MEMORY, "out of host memory for running %d recorded ops", n);
        for (int i = 0; st == WGT_OK && i < n; i++)
            if (nodes[i]) first[plan.node_step[i] + 1]++;
        for (int s = 0; st == WGT_OK && s < plan.nsteps; s++) first[s + 1] += first[s];
        for (int i = 0; st == WGT_OK && i < n; i++)
            if (nodes[i]) order[first[plan.node_step[i]]++] = i;
        for (int s = plan.nsteps; st == WGT_OK && s > 0; s--) first[s] = first[s - 1]; /* back to starts */
        if (st == WGT_OK) first[0] = 0;
        wgt_index_checks_new_run(ctx);
        for (int s = 0; s < plan.nsteps && st == WGT_OK; s++) {
            st = wgt_step_run(ctx, &plan.steps[s], NULL, NULL);
            if (st != WGT_OK) break;
            ctx->counters.ops_run += (uint64_t)plan.steps[s].members;
            if (plan.steps[s].fused) ctx->counters.ops_fused += (uint64_t)plan.steps[s].members;
            ctx->counters.launches++;
            for (int q = first[s]; q < first[s + 1]; q++) {
                wgt_node_release(nodes[order[q]]);
                nodes[order[q]] = NULL;
            }
        }
        free(first);
        free(order);
        wgt_plan_free(&plan);
    }
    if (st != WGT_OK) {
        char message[1024];
        snprintf(message, sizeof message, "%s", wgt_last_error());
        for (int i = 0; i < n; i++)
            if (nodes[i]) mark_failed(nodes[i], st, message);
        for (int i = 0; i < n; i++) wgt_node_release(nodes[i]);
        wgt_error(st, "%s", message);
    }
    free(nodes);
    ctx->flushing = 0;
    wgt_context_unref(ctx);
    return st;
}

wgt_status wgt_flush_for(wgt_storage *s, int for_write) {
    if (s->pending_writers || (for_write && s->pending_readers)) return wgt_flush(s->ctx);
    return WGT_OK;
}

void wgt_drop_pending(wgt_context *ctx, wgt_status why, const char *message) {
    wgt_node *p = ctx->pending_head;
    ctx->pending_head = ctx->pending_tail = NULL;
    ctx->npending = 0;
    ctx->pending_bytes = 0;
    while (p) {
        wgt_node *next = p->next;
        mark_failed(p, why, message);
        wgt_node_release(p);
        p = next;
    }
}

wgt_status wgt_eval(int n, wgt_tensor *const *tensors) {
    static const char fn[] = "wgt_eval";
    if (n < 0) return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: n is %d", fn, n);
    if (n > 0 && !tensors) return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: tensors is NULL for n = %d", fn, n);
    int first = -1; /* the first tensor given: every other must share its context */
    for (int i = 0; i < n; i++) {
        if (!tensors[i]) continue;
        char name[32];
        snprintf(name, sizeof name, "tensors[%d]", i);
        wgt_status st = wgt_check_tensor(fn, name, tensors[i]);
        if (st != WGT_OK) return st;
        if (first < 0) first = i;
        wgt_context *c0 = tensors[first]->storage->ctx, *ci = tensors[i]->storage->ctx;
        if (ci != c0)
            return wgt_error(WGT_ERR_CONTEXT_MISMATCH, "%s: tensors[%d] (%s) and tensors[%d] (%s) belong to two different contexts",
                             fn, first, wgt_context_device_name(c0), i, wgt_context_device_name(ci));
        if (tensors[i]->storage->symbolic)
            return wgt_error(WGT_ERR_USAGE, "%s: %s is computed from graph inputs; dispatch a compiled graph instead",
                             fn, name);
    }
    for (int i = 0; i < n; i++) {
        if (!tensors[i]) continue;
        wgt_context *ctx = tensors[i]->storage->ctx;
        wgt_status st = wgt_flush_for(tensors[i]->storage, 0);
        if (st == WGT_OK && ctx->backend->submit) st = ctx->backend->submit(ctx->backend);
        if (st != WGT_OK) return st;
        if (tensors[i]->storage->failed) return wgt_check_tensor(fn, "tensor", tensors[i]);
    }
    return WGT_OK;
}
