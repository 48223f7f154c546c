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
 * A waiting update whose writes no one could ever see (its destination held by nothing
 * outside the updates and what they read) is dropped, with what it holds (graph inputs
 * included, whose names become free again): see the collector below.
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
    /* Operands with data still to be computed (a copy of rows that overlap the destination)
     * get it now: pending work would hold them, and what they read, from outside the updates,
     * which keeps the collector from seeing when only the update holds its destination. */
    wgt_status st = WGT_OK;
    for (int i = 1; i < n->nargs && st == WGT_OK; i++)
        if (n->args[i].storage && !n->args[i].storage->symbolic) st = wgt_flush_for(n->args[i].storage, 0);
    if (st != WGT_OK) {
        free(n); /* it holds nothing yet */
        return st;
    }
    if (!grow((void **)&ctx->updates, ctx->nupdates, &ctx->updates_cap, sizeof *ctx->updates)) {
        st = wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory", n->fn);
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

/* ---- the collector ----
 * The context holds waiting updates, and each holds its destination and what it reads, which
 * may read the destination again (an update of x from values computed from x: an optimizer
 * step, or rows of a cache set from the cache itself). Such a cycle would keep everything in
 * it, graph inputs included, until the next build or the context's end, though no one could
 * ever see what the updates write. So when a destination, or a storage that the last look
 * found held from outside, loses a reference, the collector looks again, by trial deletion
 * over what the updates reach (their operands, the symbolic producers and prior writers of
 * those, and so on): it counts the references found inside; a storage or node with more
 * references than that is held from outside, and is live; what a live storage's producer, a
 * live node, or an update of a live destination reads is live too; an update whose
 * destination is not live is dropped. Compiled graphs, tensor handles, pending work and other
 * contexts all hold from outside, so what they may still read is kept. */

typedef struct {
    wgt_storage **storages; /* every storage reached, then the live ones to spread from */
    wgt_node **nodes;
    int ns, scap, nn, ncap;
    int oom;
} collector;

static void add_storage(collector *c, wgt_storage *x) {
    if (grow((void **)&c->storages, c->ns, &c->scap, sizeof *c->storages)) c->storages[c->ns++] = x;
    else c->oom = 1;
}

static void add_node(collector *c, wgt_node *m) {
    if (grow((void **)&c->nodes, c->nn, &c->ncap, sizeof *c->nodes)) c->nodes[c->nn++] = m;
    else c->oom = 1;
}

static void count_node(collector *c, uint64_t walk, wgt_node *m) {
    if (m->update_walk != walk) {
        m->update_walk = walk;
        m->update_count = m->update_live = 0;
        add_node(c, m);
    }
    m->update_count++;
}

/* One reference to x found inside; the first also counts x's reference to its producer. */
static void count_storage(collector *c, uint64_t walk, wgt_storage *x) {
    if (x->update_walk != walk) {
        x->update_walk = walk;
        x->update_count = x->update_live = 0;
        add_storage(c, x);
        if (x->symbolic && x->producer) count_node(c, walk, x->producer);
    }
    x->update_count++;
}

/* The storages a node holds: every operand of an update, the read ones of a graph's node. */
static int first_held(const wgt_node *m) { return m->update ? 0 : 1; }

static void live_node(collector *c, wgt_node *m);

static void live_storage(collector *c, wgt_storage *x) {
    if (x->update_live) return;
    x->update_live = 1;
    add_storage(c, x);
}

static void live_node(collector *c, wgt_node *m) {
    if (m->update_live) return;
    m->update_live = 1;
    add_node(c, m);
}

/* Spreads liveness from the listed live storages and nodes until nothing new is reached. */
static void spread(collector *c) {
    while (!c->oom && (c->ns || c->nn)) {
        if (c->nn) {
            wgt_node *m = c->nodes[--c->nn];
            for (int i = first_held(m); i < m->nargs; i++)
                if (m->args[i].storage) live_storage(c, m->args[i].storage);
            if (m->prior) live_node(c, m->prior);
        } else {
            wgt_storage *x = c->storages[--c->ns];
            if (x->symbolic && x->producer) live_node(c, x->producer);
        }
    }
}

void wgt_graph_updates_collect(wgt_context *ctx) {
    if (!ctx->nupdates || ctx->updates_frozen) return;
    ctx->updates_frozen = 1; /* the releases below come back here */
    collector c = {0};
    uint64_t walk = ++ctx->update_walks;
    /* Count the references found inside. */
    for (int u = 0; u < ctx->nupdates; u++) {
        wgt_node *n = ctx->updates[u];
        n->update_walk = walk;
        n->update_live = 0;
        for (int i = 0; i < n->nargs; i++)
            if (n->args[i].storage) count_storage(&c, walk, n->args[i].storage);
    }
    for (int k = 0; k < c.nn && !c.oom; k++) {
        wgt_node *m = c.nodes[k];
        for (int i = first_held(m); i < m->nargs; i++)
            if (m->args[i].storage) count_storage(&c, walk, m->args[i].storage);
        if (m->prior) count_node(&c, walk, m->prior);
    }
    /* What is held from outside is live, and so is all it may read. */
    int ns = c.ns, nn = c.nn, dropped = 0;
    wgt_storage **reached = c.storages;
    wgt_node **reached_nodes = c.nodes;
    c.storages = NULL, c.nodes = NULL, c.ns = c.nn = c.scap = c.ncap = 0;
    for (int k = 0; k < ns && !c.oom; k++)
        if (reached[k]->refs > reached[k]->update_count) {
            reached[k]->update_watch = 1;
            live_storage(&c, reached[k]);
        }
    for (int k = 0; k < nn && !c.oom; k++)
        if (reached_nodes[k]->refs > reached_nodes[k]->update_count) live_node(&c, reached_nodes[k]);
    spread(&c);
    for (int again = 1; again && !c.oom;) { /* an update of a live destination keeps what it reads */
        again = 0;
        for (int u = 0; u < ctx->nupdates; u++) {
            wgt_node *n = ctx->updates[u];
            if (n->update_live || !n->args[0].storage->update_live) continue;
            n->update_live = again = 1;
            for (int i = 1; i < n->nargs; i++)
                if (n->args[i].storage) live_storage(&c, n->args[i].storage);
            spread(&c);
        }
    }
    /* Drop the rest (out of the list first: their releases may free what the list names). */
    wgt_node **dead = c.oom ? NULL : malloc(sizeof *dead * (size_t)ctx->nupdates);
    if (dead) {
        int kept = 0;
        for (int u = 0; u < ctx->nupdates; u++) {
            wgt_node *n = ctx->updates[u];
            if (n->update_live) {
                ctx->updates[kept++] = n;
            } else {
                n->args[0].storage->update_refs--;
                dead[dropped++] = n;
            }
        }
        ctx->nupdates = kept;
    }
    free(c.storages), free(c.nodes), free(reached), free(reached_nodes);
    for (int k = 0; k < dropped; k++) wgt_node_release(dead[k]);
    free(dead);
    ctx->updates_frozen = 0;
}

void wgt_graph_updates_taken(wgt_context *ctx) {
    int frozen = ctx->updates_frozen;
    ctx->updates_frozen = 1;
    for (int i = 0; i < ctx->nupdates; i++) ctx->updates[i]->args[0].storage->update_refs--;
    for (int i = 0; i < ctx->nupdates; i++) wgt_node_release(ctx->updates[i]);
    ctx->nupdates = 0;
    ctx->updates_frozen = frozen;
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
