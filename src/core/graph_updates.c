/*
 * In-place updates by compiled graphs. A graph's outputs are fresh values bound at each
 * dispatch, but a training step must also change tensors that live across dispatches: the
 * parameters and an optimizer's moments. wgt_record_graph_update records dst = src, where src
 * is computed from graph inputs and dst holds data. The node does not become dst's producer
 * (dst would turn symbolic and lose its data); it waits in the context until the next
 * wgt_graph_build takes it, with the hooks recorded beside it, into the graph. Each dispatch
 * then runs the hooks, then the graph's work, the updates last (they are recorded last).
 *
 * A partial write (wgt_set_rows) of graph values into a tensor with data joins the updates
 * the same way (wgt_graph_update_in_place), but keeps its place in the record order: a
 * decoding step writes the new token's keys into its cache, then attends over the cache.
 *
 * An op whose operands all hold data runs once, when recorded: a value that the updates
 * change must be read through wgt_graph_read to be read afresh at each dispatch.
 *
 * A waiting update whose destination nobody else holds any more (the tensor released, no
 * recorded op reading it) can never be seen: it is dropped at that release, with what it holds
 * (graph inputs included, whose names become free again).
 */
#include <stdlib.h>
#include <string.h>

#include "node.h"

/* Grows an array to hold one more item of size bytes; 0 when out of host memory. */
static int grow(void **items, int n, int *cap, size_t size) {
    if (n < *cap) return 1;
    if (*cap > (1 << 28)) return 0;
    int grown = *cap ? *cap * 2 : 8;
    void *g = realloc(*items, size * (size_t)grown);
    if (!g) return 0;
    *items = g;
    *cap = grown;
    return 1;
}

wgt_status wgt_record_graph_update(wgt_context *ctx, const char *fn, wgt_tensor *dst, wgt_tensor *src) {
    wgt_storage *d = dst->storage;
    int same = dst->dtype == src->dtype && dst->ndim == src->ndim;
    for (int i = 0; same && i < dst->ndim; i++) same = dst->shape[i] == src->shape[i];
    if (!same || d->symbolic || !src->storage->symbolic || dst->offset || wgt_tensor_nbytes(dst) != d->nbytes ||
        !wgt_is_contiguous(dst->ndim, dst->shape, dst->strides))
        return wgt_error(WGT_ERR_INTERNAL, "%s: an in-place graph update needs a whole tensor with data written "
                         "from a value of a graph of its type and shape", fn);
    if (!grow((void **)&ctx->updates, ctx->nupdates, &ctx->updates_cap, sizeof *ctx->updates))
        return wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory", fn);
    wgt_node *n = wgt_node_new(WGT_NODE_COPY, 0, fn, 2);
    if (!n) return wgt_last_status();
    wgt_operand_whole(dst, &n->args[0]);
    wgt_operand_whole(src, &n->args[1]);
    n->seq = ++ctx->seq;
    n->symbolic = 1;
    n->update = 1;
    d->refs++;
    d->update_refs++;
    src->storage->refs++;
    ctx->updates[ctx->nupdates++] = n;
    return WGT_OK;
}

wgt_status wgt_graph_update_in_place(wgt_context *ctx, wgt_node *n) {
    if (!grow((void **)&ctx->updates, ctx->nupdates, &ctx->updates_cap, sizeof *ctx->updates)) {
        wgt_status st = wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory", n->fn);
        free(n); /* it holds nothing yet */
        return st;
    }
    /* As wgt_record makes a node symbolic, but nothing owns it: it holds every operand, the
     * storage it writes too, and the context holds it until the next build takes it. */
    n->symbolic = 1;
    n->update = 1;
    for (int i = 0; i < n->nargs; i++)
        if (n->args[i].storage) n->args[i].storage->refs++;
    n->args[0].storage->update_refs++;
    ctx->updates[ctx->nupdates++] = n;
    return WGT_OK;
}

void wgt_graph_updates_drop_into(wgt_storage *s) {
    wgt_context *ctx = s->ctx;
    wgt_node *dead[16];
    int ndead = 0, kept = 0;
    /* Out of the list first (the releases below may come back here), a few at a time. */
    for (int i = 0; i < ctx->nupdates; i++) {
        wgt_node *n = ctx->updates[i];
        if (n->args[0].storage == s && ndead < (int)(sizeof dead / sizeof dead[0])) {
            s->update_refs--;
            dead[ndead++] = n;
        } else {
            ctx->updates[kept++] = n;
        }
    }
    ctx->nupdates = kept;
    s->refs++; /* s must outlive the loop: it may hold more updates than one pass takes */
    for (int i = 0; i < ndead; i++) wgt_node_release(dead[i]);
    wgt_storage_release(s);
}

void wgt_graph_updates_taken(wgt_context *ctx) {
    for (int i = 0; i < ctx->nupdates; i++) ctx->updates[i]->args[0].storage->update_refs--;
    for (int i = 0; i < ctx->nupdates; i++) wgt_node_release(ctx->updates[i]);
    ctx->nupdates = 0;
}

wgt_tensor *wgt_graph_read(const char *fn, wgt_tensor *t) {
    wgt_context *ctx = t->storage->ctx;
    wgt_tensor *out = wgt_tensor_new(ctx, fn, t->dtype, t->ndim, t->shape, WGT_USAGE_DEFAULT);
    wgt_node *n = out ? wgt_node_new(WGT_NODE_COPY, 0, fn, 2) : NULL;
    if (!n) {
        wgt_release(out);
        return NULL;
    }
    wgt_operand_whole(out, &n->args[0]);
    wgt_operand_whole(t, &n->args[1]);
    /* As wgt_record makes a node symbolic: the result owns the node, the node holds t. */
    n->seq = ++ctx->seq;
    n->symbolic = 1;
    t->storage->refs++;
    out->storage->producer = n;
    out->storage->symbolic = 1;
    return out;
}

wgt_status wgt_graph_hook_add(wgt_context *ctx, const char *fn, wgt_graph_hook hook) {
    if (!grow((void **)&ctx->hooks, ctx->nhooks, &ctx->hooks_cap, sizeof *ctx->hooks)) {
        hook.release(hook.arg);
        return wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory", fn);
    }
    ctx->hooks[ctx->nhooks++] = hook;
    return WGT_OK;
}

void wgt_graph_updates_drop(wgt_context *ctx) {
    wgt_graph_updates_taken(ctx);
    for (int i = 0; i < ctx->nhooks; i++) ctx->hooks[i].release(ctx->hooks[i].arg);
    free(ctx->updates);
    free(ctx->hooks);
    ctx->updates = NULL;
    ctx->hooks = NULL;
    ctx->nupdates = ctx->updates_cap = ctx->nhooks = ctx->hooks_cap = 0;
}
