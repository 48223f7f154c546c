/*
 * Compiled graphs, after WebNN's build and dispatch. Ops applied to placeholders
 * (wgt_graph_input) record symbolic nodes; wgt_graph_build walks back from the named outputs,
 * keeps the nodes and storages they need, and plans them once (dropping what no output needs,
 * fusing elementwise chains). wgt_graph_dispatch checks every binding, maps the placeholders
 * and outputs onto the caller's storages and runs the plan. Intermediates give their buffers
 * back to the pool after their last step, so a replay reuses the same memory (and, through the
 * backend's caches, the same pipelines and bind groups) while holding only the live set.
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "node.h"

void wgt_context_unref(wgt_context *ctx); /* context.c */

typedef struct graph_value {
    char *name;
    wgt_storage *storage; /* the placeholder, or the symbolic storage the output is */
    wgt_dtype dtype;
    int ndim;
    int64_t shape[WGT_MAX_DIMS];
    int in_parts; /* an output whose first writer writes only part of it (the rest is zeros) */
    int bound_whole; /* an input a user kernel binds: bound from its storage's first element */
    /* During a dispatch: the caller's storage and the element offset of its view. */
    wgt_storage *bound;
    int64_t shift;
    wgt_tensor *bound_tensor;
} graph_value;

/* The record a graph handle names (handles.c): a released graph's handle is stale in the
 * table, so a record reached here is live. */
struct wgt_graph {
    wgt_context *ctx;
    graph_value *inputs, *outputs;
    int ninputs, noutputs;
    wgt_name_index input_names, output_names; /* the values by name, for the bindings */
    wgt_node **nodes;
    int nnodes;
    wgt_storage **storages; /* every storage the nodes name, each held once */
    int nstorages;
    wgt_plan plan;
    wgt_graph_hook *hooks; /* run before each dispatch (graph_updates.c) */
    int nhooks;
    /* Inputs and outputs by storage (open addressing, a power of two of slots): each operand
     * of each step is looked up, so the lookup must not grow with their number. */
    struct value_slot {
        const wgt_storage *key;
        graph_value *value;
    } *slots;
    size_t nslots;
};

/* The slot holding s, or the empty slot where it would go (NULL: no slots). */
static struct value_slot *slot_of(const wgt_graph *g, const wgt_storage *s) {
    if (!g->nslots) return NULL;
    size_t i = (size_t)(((uintptr_t)s >> 4) * 0x9e3779b97f4a7c15ull) & (g->nslots - 1);
    while (g->slots[i].key && g->slots[i].key != s) i = (i + 1) & (g->nslots - 1);
    return &g->slots[i];
}

static graph_value *value_of(const wgt_graph *g, const wgt_storage *s) {
    const struct value_slot *slot = slot_of(g, s);
    return slot ? slot->value : NULL;
}

/* Whether s is a tensor with data the graph reads (a constant captured at the build): its
 * slot holds no value. */
static int is_constant(const wgt_graph *g, const wgt_storage *s) {
    const struct value_slot *slot = s ? slot_of(g, s) : NULL;
    return slot && slot->key == s && !slot->value;
}

/* Indexes the inputs and the outputs by storage, and the constants with no value. 0 when out
 * of host memory. */
static int index_values(wgt_graph *g) {
    size_t n = (size_t)g->ninputs + (size_t)g->noutputs, size = 4;
    for (int k = 0; k < g->nstorages; k++) n += !g->storages[k]->symbolic;
    while (size < 2 * n) size *= 2;
    if (!(g->slots = calloc(size, sizeof *g->slots))) return 0;
    g->nslots = size;
    for (int k = 0; k < g->ninputs + g->noutputs; k++) {
        graph_value *v = k < g->ninputs ? &g->inputs[k] : &g->outputs[k - g->ninputs];
        *slot_of(g, v->storage) = (struct value_slot){v->storage, v};
    }
    for (int k = 0; k < g->nstorages; k++)
        if (!g->storages[k]->symbolic) *slot_of(g, g->storages[k]) = (struct value_slot){g->storages[k], NULL};
    return 1;
}

wgt_tensor *wgt_graph_input(wgt_context *ctx, const char *name, wgt_dtype dtype, int ndim, const int64_t *shape) {
    static const char fn[] = "wgt_graph_input";
    if (wgt_check_context(fn, ctx) != WGT_OK) return NULL;
    if (!name || !*name) {
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: name is %s", fn, name ? "empty" : "NULL");
        return NULL;
    }
    if (wgt_name_index_get(&ctx->input_names, name)) {
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: an input named '%s' already exists in this context", fn, name);
        return NULL;
    }
    wgt_tensor *t = wgt_tensor_new(ctx, fn, dtype, ndim, shape, WGT_USAGE_DEFAULT); /* it never holds data */
    if (!t) return NULL;
    wgt_storage *s = t->storage;
    s->input_name = strdup(name);
    if (!s->input_name || !wgt_name_index_put(&ctx->input_names, s->input_name, s)) {
        free(s->input_name);
        s->input_name = NULL; /* not in the index: its release must not remove another's */
        wgt_release(t);
        wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory", fn);
        return NULL;
    }
    s->input_dtype = dtype;
    s->input_ndim = ndim;
    memcpy(s->input_shape, t->shape, sizeof s->input_shape);
    s->symbolic = 1;
    return t;
}

/* ---- building ---- */

/* What a build reached, each once: nodes and storages are marked with the walk's number, so
 * the walk is linear in the graph and needs no recursion (a chain of millions of nodes). */
typedef struct {
    uint64_t walk;
    wgt_node **nodes;
    int n, cap;
    wgt_storage **storages;
    int ns, scap;
    wgt_node **todo; /* reached, not yet looked at */
    int ntodo, tcap;
} collector;

/* Appends to a growing array of pointers; 0 when out of host memory or past INT_MAX. */
static int push(void ***items, int *n, int *cap, void *item) {
    if (*n == *cap) {
        if (*cap > INT_MAX / 2) return 0;
        int grown = *cap ? *cap * 2 : 32;
        void **g = realloc(*items, sizeof *g * (size_t)grown);
        if (!g) return 0;
        *items = g;
        *cap = grown;
    }
    (*items)[(*n)++] = item;
    return 1;
}

static int add_storage(collector *c, wgt_storage *s) {
    if (s->walk == c->walk) return 1;
    s->walk = c->walk;
    return push((void ***)&c->storages, &c->ns, &c->scap, s);
}

static int reach_node(collector *c, wgt_node *n) {
    if (!n || n->walk == c->walk) return 1;
    n->walk = c->walk;
    return push((void ***)&c->todo, &c->ntodo, &c->tcap, n);
}

/* Adds the node and everything it depends on; 0 when out of host memory. */
static int collect_node(collector *c, wgt_node *root) {
    if (!reach_node(c, root)) return 0;
    while (c->ntodo) {
        wgt_node *n = c->todo[--c->ntodo];
        if (!push((void ***)&c->nodes, &c->n, &c->cap, n) || !reach_node(c, n->prior)) return 0;
        for (int i = 0; i < n->nargs; i++) {
            wgt_storage *s = n->args[i].storage;
            if (!s) continue;
            if (!add_storage(c, s)) return 0;
            if (i > 0 && !reach_node(c, s->producer)) return 0;
        }
    }
    return 1;
}

static int by_seq(const void *a, const void *b) {
    uint64_t x = (*(wgt_node *const *)a)->seq, y = (*(wgt_node *const *)b)->seq;
    return (x > y) - (x < y);
}

static int is_output(wgt_storage *s, void *arg) {
    const wgt_graph *g = arg;
    const graph_value *v = value_of(g, s);
    return v && v >= g->outputs && v < g->outputs + g->noutputs;
}

/* Outputs, and tensors with data that the graph's updates write in place (nothing else of the
 * graph writes one). */
static int kept_after_run(wgt_storage *s, void *arg) { return !s->symbolic || is_output(s, arg); }

static int held_by_graph_only(wgt_storage *s, void *arg) {
    (void)arg;
    return s->graph_only;
}

static void graph_free(wgt_graph *g) {
    if (!g) return;
    wgt_plan_free(&g->plan);
    for (int i = 0; i < g->nhooks; i++) g->hooks[i].release(g->hooks[i].arg);
    free(g->hooks);
    for (int i = 0; i < g->nnodes; i++) wgt_node_release(g->nodes[i]);
    for (int i = 0; i < g->nstorages; i++) wgt_storage_release(g->storages[i]);
    for (int i = 0; i < g->ninputs; i++) free(g->inputs[i].name);
    for (int i = 0; i < g->noutputs; i++) free(g->outputs[i].name);
    free(g->inputs);
    free(g->outputs);
    free(g->nodes);
    free(g->storages);
    free(g->slots);
    wgt_name_index_free(&g->input_names);
    wgt_name_index_free(&g->output_names);
    wgt_context *ctx = g->ctx;
    free(g);
    if (ctx) wgt_context_unref(ctx);
}

/* A value's storage and where the value is, for finding storages named twice by sorting. */
typedef struct storage_use {
    const wgt_storage *storage;
    int is_output;
    int index;
} storage_use;

static int by_storage(const void *a, const void *b) {
    const storage_use *x = a, *y = b;
    if (x->storage != y->storage) return (uintptr_t)x->storage < (uintptr_t)y->storage ? -1 : 1;
    if (x->is_output != y->is_output) return x->is_output - y->is_output; /* inputs first */
    return (x->index > y->index) - (x->index < y->index);
}

/* Sorts n uses by storage and finds, among storages that an output shares, the clash a scan
 * of the outputs in order meets first: the lowest output index that shares its storage with
 * an input (the lowest such input) or with an earlier output (the lowest such output). 0
 * when none, else 1 with *out and *other the two uses. */
static int first_clash(storage_use *u, size_t n, storage_use *out, storage_use *other) {
    qsort(u, n, sizeof *u, by_storage);
    int found = 0;
    for (size_t i = 0; i < n;) {
        size_t end = i + 1, first_out = SIZE_MAX;
        while (end < n && u[end].storage == u[i].storage) end++;
        for (size_t k = i; k < end && first_out == SIZE_MAX; k++)
            if (u[k].is_output) first_out = k;
        /* Inputs sort first: with an input, the first output clashes with the first input;
         * with none, the second output with the first. */
        size_t clash = first_out;
        if (first_out == i) clash = first_out + 1 < end ? first_out + 1 : SIZE_MAX;
        if (clash != SIZE_MAX && (!found || u[clash].index < out->index)) {
            *out = u[clash];
            *other = u[i];
            found = 1;
        }
        i = end;
    }
    return found;
}

/* No two outputs are one tensor; 0 with the error naming the first pair. */
static int outputs_distinct(const char *fn, const wgt_graph *g) {
    storage_use *u = malloc(sizeof *u * (size_t)g->noutputs), clash, first;
    if (!u) {
        wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory", fn);
        return 0;
    }
    for (int i = 0; i < g->noutputs; i++) u[i] = (storage_use){g->outputs[i].storage, 1, i};
    int found = first_clash(u, (size_t)g->noutputs, &clash, &first);
    free(u);
    if (found)
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: outputs '%s' and '%s' are the same tensor", fn,
                  g->outputs[first.index].name, g->outputs[clash.index].name);
    return !found;
}

static void set_value(graph_value *v, wgt_storage *s, const wgt_tensor *t) {
    v->storage = s;
    v->dtype = t->dtype;
    v->ndim = t->ndim;
    memcpy(v->shape, t->shape, sizeof v->shape);
}

static wgt_graph *build(wgt_context *ctx, int n_outputs, const wgt_binding *outputs) {
    static const char fn[] = "wgt_graph_build";
    if (n_outputs < 1 || !outputs) {
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: needs at least one output (n_outputs is %d, outputs %s)", fn, n_outputs,
                  outputs ? "given" : "NULL");
        return NULL;
    }
    wgt_graph *g = calloc(1, sizeof *g);
    if (!g || !(g->outputs = calloc((size_t)n_outputs, sizeof *g->outputs))) {
        free(g);
        wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory", fn);
        return NULL;
    }
    g->ctx = ctx;
    ctx->refs++;
    collector c = {0};
    c.walk = ++ctx->walks;
    wgt_tensor *made[64] = {0}; /* contiguous copies of outputs that are views */
    int nmade = 0;
    for (int i = 0; i < n_outputs; i++) {
        const char *name = outputs[i].name;
        wgt_tensor *t = outputs[i].tensor;
        char what[64];
        snprintf(what, sizeof what, "outputs[%d].tensor", i);
        if (!name || !*name) {
            wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: outputs[%d].name is %s", fn, i, name ? "empty" : "NULL");
            goto fail;
        }
        if (wgt_name_index_get(&g->output_names, name)) {
            wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: two outputs are named '%s'", fn, name);
            goto fail;
        }
        if (wgt_check_tensor(fn, what, t) != WGT_OK) goto fail;
        if (t->storage->ctx != ctx) {
            wgt_error(WGT_ERR_CONTEXT_MISMATCH, "%s: output '%s' belongs to another context", fn, name);
            goto fail;
        }
        if (!wgt_storage_is_intermediate(t->storage)) {
            wgt_error(WGT_ERR_USAGE, "%s: output '%s' is %s; outputs must be computed from graph inputs", fn, name,
                      t->storage->input_name ? "a graph input itself" : "not computed from any graph input");
            goto fail;
        }
        /* An output is a whole storage, so a view of one is copied out inside the graph. */
        int whole = t->offset == 0 && wgt_is_contiguous(t->ndim, t->shape, t->strides) &&
                    (size_t)wgt_numel(t->ndim, t->shape) * wgt_dtype_size(t->dtype) == t->storage->nbytes;
        if (!whole) {
            if (nmade == 64) {
                wgt_error(WGT_ERR_LIMIT, "%s: more than 64 outputs are views", fn);
                goto fail;
            }
            if (!(t = made[nmade++] = wgt_contiguous(t))) goto fail;
        }
        if (!(g->outputs[i].name = strdup(name)) ||
            !wgt_name_index_put(&g->output_names, g->outputs[i].name, &g->outputs[i]))
            goto oom;
        set_value(&g->outputs[i], t->storage, t);
        wgt_node *first = t->storage->producer;
        while (first && first->prior) first = first->prior;
        g->outputs[i].in_parts = first && first->partial;
        g->noutputs = i + 1;
        /* An empty view's copy is a fresh empty tensor: nothing computes it. */
        if (!add_storage(&c, t->storage) || (t->storage->producer && !collect_node(&c, t->storage->producer)))
            goto oom;
    }
    if (!outputs_distinct(fn, g)) goto fail;
    /* In-place updates recorded since the last build (an optimizer step) run in every dispatch. */
    for (int i = 0; i < ctx->nupdates; i++)
        if (!collect_node(&c, ctx->updates[i])) goto oom;
    free(c.todo);
    c.todo = NULL;
    if (c.n) qsort(c.nodes, (size_t)c.n, sizeof *c.nodes, by_seq); /* none when every output is empty */
    /* Hold what the graph names; inputs are the placeholders reached. */
    g->nodes = c.nodes;
    g->nnodes = c.n;
    for (int i = 0; i < c.n; i++) c.nodes[i]->refs++;
    g->storages = c.storages;
    g->nstorages = c.ns;
    c.nodes = NULL;
    c.storages = NULL;
    int placeholders = 0;
    for (int i = 0; i < g->nstorages; i++) placeholders += g->storages[i]->input_name != NULL;
    if (placeholders && !(g->inputs = calloc((size_t)placeholders, sizeof *g->inputs))) goto oom;
    for (int i = 0; i < g->nstorages; i++) {
        wgt_storage *s = g->storages[i];
        s->refs++;
        if (!s->symbolic && wgt_flush_for(s, 0) != WGT_OK) goto fail; /* constants get their values now */
        if (!s->input_name) continue;
        graph_value *v = &g->inputs[g->ninputs++];
        v->storage = s;
        v->dtype = s->input_dtype;
        v->ndim = s->input_ndim;
        memcpy(v->shape, s->input_shape, sizeof v->shape);
        if (!(v->name = strdup(s->input_name)) || !wgt_name_index_put(&g->input_names, v->name, v)) goto oom;
    }
    if (!index_values(g)) goto oom;
    /* A user kernel binds its buffers at the tensor's offset, which WebGPU wants aligned: a
     * view at an offset bound to such an input is copied first, as eager dispatch copies it. */
    for (int k = 0; k < g->nnodes; k++)
        for (int j = 0; j < g->nodes[k]->nargs && g->nodes[k]->kind == WGT_NODE_USER_KERNEL; j++) {
            graph_value *v = g->nodes[k]->args[j].storage ? value_of(g, g->nodes[k]->args[j].storage) : NULL;
            if (v && v < g->inputs + g->ninputs && v >= g->inputs) v->bound_whole = 1;
        }
    /* Constants only the graph holds cannot change between dispatches: they may be baked in. */
    for (int i = 0; i < g->nstorages; i++) g->storages[i]->walk_count = 1; /* the graph's own reference */
    for (int k = 0; k < g->nnodes; k++)
        for (int j = 1; j < g->nodes[k]->nargs; j++)
            if (g->nodes[k]->args[j].storage) g->nodes[k]->args[j].storage->walk_count++;
    for (int i = 0; i < g->nstorages; i++) {
        wgt_storage *x = g->storages[i];
        x->graph_only = !x->symbolic && x->refs == x->walk_count;
    }
    if (wgt_plan_build(ctx, g->nodes, g->nnodes, kept_after_run, g, ctx->fusion && ctx->backend->fused != NULL,
                       held_by_graph_only, &g->plan) != WGT_OK)
        goto fail;
    for (int i = 0; i < nmade; i++) wgt_release(made[i]);
    /* The graph holds the updates now, and runs their hooks. */
    wgt_graph_updates_taken(ctx);
    g->hooks = ctx->hooks;
    g->nhooks = ctx->nhooks;
    ctx->hooks = NULL;
    ctx->nhooks = ctx->hooks_cap = 0;
    return g;
oom:
    wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory", fn);
fail:
    free(c.nodes);
    free(c.storages);
    free(c.todo);
    for (int i = 0; i < nmade; i++) wgt_release(made[i]);
    graph_free(g);
    return NULL;
}

wgt_graph *wgt_graph_build(wgt_context *ctx, int n_outputs, const wgt_binding *outputs) {
    if (wgt_check_context("wgt_graph_build", ctx) != WGT_OK) return NULL;
    /* The waiting updates stay as they are while the build reads and takes them (releases of
     * its own temporaries would have the collector look at them); a failed build leaves them
     * waiting, and the look it put off happens after. */
    ctx->updates_frozen = 1;
    wgt_graph *g = build(ctx, n_outputs, outputs);
    ctx->updates_frozen = 0;
    wgt_graph_updates_collect(ctx);
    return g;
}

int wgt_graph_launches(const wgt_graph *g) { return g ? g->plan.nsteps : -1; }

void wgt_graph_release(wgt_graph *g) {
    graph_free(g);
}

/* ---- dispatching ---- */

static wgt_storage *resolve(wgt_storage *s, int64_t *shift, void *arg) {
    const graph_value *v = value_of(arg, s);
    if (!v) return s;
    *shift = v->shift;
    return v->bound;
}

static const char *names_of(const graph_value *v, int n, char *buf, size_t size) {
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && used + 1 < size; i++)
        used += (size_t)snprintf(buf + used, size - used, "%s'%s'", i ? ", " : "", v[i].name);
    return buf;
}

/* Matches the bindings to the graph's values by name and checks each tensor. */
static wgt_status bind(const char *fn, wgt_graph *g, const char *kind, graph_value *vals, int nvals,
                       const wgt_name_index *by_name, int n, const wgt_binding *b, int is_output) {
    char list[512];
    if (n < 0 || (n > 0 && !b))
        return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: %s count %d with %s bindings", fn, kind, n, b ? "given" : "NULL");
    for (int i = 0; i < nvals; i++) vals[i].bound = NULL;
    for (int i = 0; i < n; i++) {
        const char *name = b[i].name;
        if (!name) return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: %s binding %d has a NULL name", fn, kind, i);
        graph_value *v = wgt_name_index_get(by_name, name);
        if (!v)
            return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: the graph has no %s named '%s' (its %ss: %s)", fn, kind, name,
                             kind, names_of(vals, nvals, list, sizeof list));
        if (v->bound) return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: %s '%s' is bound twice", fn, kind, name);
        wgt_tensor *t = b[i].tensor;
        char what[300];
        snprintf(what, sizeof what, "%s '%s'", kind, name);
        wgt_status st = wgt_check_tensor(fn, what, t);
        if (st != WGT_OK) return st;
        if (t->storage->ctx != g->ctx)
            return wgt_error(WGT_ERR_CONTEXT_MISMATCH, "%s: %s belongs to another context than the graph", fn, what);
        if (t->storage->symbolic)
            return wgt_error(WGT_ERR_USAGE, "%s: %s is a placeholder or computed from one; bind a tensor with data", fn,
                             what);
        if (t->dtype != v->dtype)
            return wgt_error(WGT_ERR_DTYPE, "%s: %s is %s; the graph was built for %s", fn, what,
                             wgt_dtype_name(t->dtype), wgt_dtype_name(v->dtype));
        int same = t->ndim == v->ndim;
        for (int d = 0; same && d < t->ndim; d++) same = t->shape[d] == v->shape[d];
        if (!same) {
            char have[256], want[256];
            wgt_format_shape(have, sizeof have, t->ndim, t->shape);
            wgt_format_shape(want, sizeof want, v->ndim, v->shape);
            return wgt_error(WGT_ERR_SHAPE, "%s: %s has shape %s; the graph was built for %s", fn, what, have, want);
        }
        if (is_output) {
            if (!(t->usage & WGT_USAGE_WRITABLE))
                return wgt_error(WGT_ERR_USAGE, "%s: %s was created without the writable usage", fn, what);
            if (!wgt_is_contiguous(t->ndim, t->shape, t->strides))
                return wgt_error(WGT_ERR_USAGE, "%s: %s is not contiguous; bind a contiguous tensor and copy from it",
                                 fn, what);
        }
        v->bound = t->storage;
        v->shift = t->offset;
        v->bound_tensor = t;
    }
    for (int i = 0; i < nvals; i++)
        if (!vals[i].bound)
            return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: %s '%s' is not bound (the graph's %ss: %s)", fn, kind,
                             vals[i].name, kind, names_of(vals, nvals, list, sizeof list));
    return WGT_OK;
}

/* Outputs bound to storages no input and no other output is bound to. */
static wgt_status bound_apart(const char *fn, const wgt_graph *g) {
    size_t n = (size_t)g->ninputs + (size_t)g->noutputs;
    storage_use buf[32], *u = n <= 32 ? buf : malloc(sizeof *u * n), clash, first;
    if (!u) return wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory", fn);
    for (int i = 0; i < g->ninputs; i++) u[i] = (storage_use){g->inputs[i].bound, 0, i};
    for (int o = 0; o < g->noutputs; o++) u[g->ninputs + o] = (storage_use){g->outputs[o].bound, 1, o};
    int found = first_clash(u, n, &clash, &first);
    if (u != buf) free(u);
    if (!found) return WGT_OK;
    if (!first.is_output)
        return wgt_error(WGT_ERR_USAGE, "%s: output '%s' shares its storage with input '%s'", fn,
                         g->outputs[clash.index].name, g->inputs[first.index].name);
    return wgt_error(WGT_ERR_USAGE, "%s: outputs '%s' and '%s' share one storage", fn, g->outputs[first.index].name,
                     g->outputs[clash.index].name);
}

/* No output is bound to a tensor the graph reads as a constant: a kernel would read and
 * write one buffer (WebGPU refuses that within a pass), and what it read would depend on the
 * order of its writes. */
static wgt_status outputs_not_constants(const char *fn, const wgt_graph *g) {
    for (int o = 0; o < g->noutputs; o++)
        if (is_constant(g, g->outputs[o].bound))
            return wgt_error(WGT_ERR_USAGE, "%s: output '%s' is bound to a tensor the graph reads (a tensor with "
                             "data captured when it was built); bind another tensor", fn, g->outputs[o].name);
    return WGT_OK;
}

/* No output is bound to a tensor that the graph updates in place (a parameter): both would
 * write it. */
static wgt_status outputs_not_updated(const char *fn, const wgt_graph *g) {
    for (int i = 0; i < g->nnodes; i++) {
        if (!g->nodes[i]->update) continue;
        for (int o = 0; o < g->noutputs; o++)
            if (g->outputs[o].bound == g->nodes[i]->args[0].storage)
                return wgt_error(WGT_ERR_USAGE, "%s: output '%s' is bound to a tensor the graph updates in place "
                                 "(%s)", fn, g->outputs[o].name, g->nodes[i]->fn);
    }
    return WGT_OK;
}

/* An intermediate's memory goes back to the pool (or the host heap); a later step or replay
 * that writes it first in parts gets it zeroed again, as a fresh tensor would be. With its
 * values go the index checks they depended on and a failure a check found in them: the next
 * dispatch computes it anew from its own inputs, even where it writes it in parts. */
static void release_intermediate(wgt_graph *g, wgt_storage *x) {
    if (!wgt_storage_is_intermediate(x) || is_output(x, g)) return;
    wgt_backend *be = g->ctx->backend;
    if (x->buffer) be->buffer_destroy(be, x->buffer);
    x->buffer = NULL;
    free(x->host);
    x->host = NULL;
    x->device_valid = x->host_valid = 0;
    wgt_index_checks_forget(x);
    wgt_storage_clear_failure(x);
}

static int staged_output(const graph_value *v) { return v->bound_tensor->offset != 0 || v->in_parts; }

/* Records dst = src for a contiguous view dst at any offset, as a write of src's elements into
 * dst's whole storage seen as a row, at the view's offset (write_box takes its destination
 * whole; it merges the words that f16 at an odd offset shares with its neighbours). */
static wgt_status copy_into_view(const char *fn, wgt_context *ctx, wgt_tensor *dst, wgt_tensor *src) {
    int64_t n = wgt_numel(dst->ndim, dst->shape), one = 1, all, start = dst->offset;
    if (n == 0) return WGT_OK;
    all = (int64_t)(dst->storage->nbytes / wgt_dtype_size(dst->dtype));
    wgt_operand d, s;
    wgt_operand_view(dst, 1, &all, &one, &d);
    d.offset = 0;
    wgt_operand_view(src, 1, &n, &one, &s);
    return wgt_record_write_box(ctx, fn, &d, &start, &s);
}

wgt_status wgt_graph_dispatch(wgt_graph *g, int n_inputs, const wgt_binding *inputs, int n_outputs,
                              const wgt_binding *outputs) {
    static const char fn[] = "wgt_graph_dispatch";
    if (!g) return wgt_error_if_clear(WGT_ERR_INVALID_ARGUMENT, "%s: graph is NULL", fn);
    wgt_context *ctx = g->ctx;
    wgt_status st = wgt_check_context(fn, ctx);
    if (st != WGT_OK ||
        (st = bind(fn, g, "input", g->inputs, g->ninputs, &g->input_names, n_inputs, inputs, 0)) != WGT_OK ||
        (st = bind(fn, g, "output", g->outputs, g->noutputs, &g->output_names, n_outputs, outputs, 1)) != WGT_OK ||
        (st = bound_apart(fn, g)) != WGT_OK || (st = outputs_not_updated(fn, g)) != WGT_OK ||
        (st = outputs_not_constants(fn, g)) != WGT_OK)
        return st;
    /* Strided inputs are copied to contiguous ones first: the graph reads placeholders whole. */
    wgt_tensor *copies[64] = {0}, *staged[64] = {0};
    int ncopies = 0, nstaged = 0;
    for (int i = 0; i < g->ninputs; i++) {
        wgt_tensor *t = g->inputs[i].bound_tensor;
        if (wgt_is_contiguous(t->ndim, t->shape, t->strides) && !(g->inputs[i].bound_whole && t->offset != 0))
            continue;
        if (ncopies == 64) {
            st = wgt_error(WGT_ERR_LIMIT, "%s: more than 64 strided inputs", fn);
            goto done;
        }
        wgt_tensor *c = copies[ncopies++] = wgt_contiguous(t);
        if (!c) {
            st = wgt_last_status();
            goto done;
        }
        g->inputs[i].bound = c->storage;
        g->inputs[i].shift = 0;
    }
    for (int i = 0; i < g->nhooks && st == WGT_OK; i++) st = g->hooks[i].prepare(g->hooks[i].arg);
    /* Recorded work on the bound tensors and the graph's constants runs before the graph, and
     * work that reads what the graph updates in place reads it before the update. */
    for (int i = 0; i < g->nnodes && st == WGT_OK; i++)
        if (g->nodes[i]->update) st = wgt_flush_for(g->nodes[i]->args[0].storage, 1);
    for (int i = 0; i < g->ninputs && st == WGT_OK; i++) st = wgt_flush_for(g->inputs[i].bound, 0);
    for (int i = 0; i < g->noutputs && st == WGT_OK; i++) st = wgt_flush_for(g->outputs[i].bound, 1);
    for (int i = 0; i < g->nstorages && st == WGT_OK; i++)
        if (!g->storages[i]->symbolic) st = wgt_flush_for(g->storages[i], 0);
    /* Kernels write their outputs from element 0 on, and an output written in parts starts as
     * zeros: such outputs bound to a view at an offset into its storage, or written in parts,
     * get a fresh tensor for the run, copied into the caller's tensor afterwards. */
    for (int o = 0; o < g->noutputs && st == WGT_OK; o++) {
        wgt_tensor *t = g->outputs[o].bound_tensor;
        if (!staged_output(&g->outputs[o])) continue;
        if (nstaged == 64) {
            st = wgt_error(WGT_ERR_LIMIT, "%s: more than 64 outputs are views at an offset", fn);
            break;
        }
        wgt_tensor *fresh = staged[nstaged++] = wgt_tensor_new(ctx, fn, t->dtype, t->ndim, t->shape, WGT_USAGE_DEFAULT);
        if (!fresh) {
            st = wgt_last_status();
            break;
        }
        g->outputs[o].bound = fresh->storage;
        g->outputs[o].shift = 0;
    }
    if (st != WGT_OK) goto done;
    ctx->refs++;
    wgt_index_checks_new_run(ctx);
    /* Each intermediate starts the run holding nothing: its last step of the previous run
     * released it, unless that step's list of last uses could not grow. */
    for (int i = 0; g->plan.lost_last_uses && i < g->nstorages; i++) release_intermediate(g, g->storages[i]);
    for (int s = 0; s < g->plan.nsteps && st == WGT_OK; s++) {
        const wgt_step *step = &g->plan.steps[s];
        st = wgt_step_run(ctx, step, resolve, g);
        if (st != WGT_OK) break;
        ctx->counters.ops_run += (uint64_t)step->members;
        if (step->fused) ctx->counters.ops_fused += (uint64_t)step->members;
        ctx->counters.launches++;
        /* Intermediates return their memory after their last step; the next replay takes
         * it again from the pool. */
        for (int k = 0; k < step->nlast; k++) release_intermediate(g, step->last_uses[k]);
    }
    for (int o = 0, k = 0; o < g->noutputs && st == WGT_OK && nstaged; o++)
        if (staged_output(&g->outputs[o])) st = copy_into_view(fn, ctx, g->outputs[o].bound_tensor, staged[k++]);
    if (st == WGT_OK && nstaged) st = wgt_flush(ctx);
    /* A failed run leaves intermediates as they are; the next dispatch starts them afresh. */
    if (st != WGT_OK)
        for (int i = 0; i < g->nstorages; i++) release_intermediate(g, g->storages[i]);
    wgt_context_unref(ctx);
done:
    for (int i = 0; i < ncopies; i++) wgt_release(copies[i]);
    for (int i = 0; i < nstaged; i++) wgt_release(staged[i]);
    for (int i = 0; i < g->ninputs; i++) g->inputs[i].bound = NULL;
    for (int i = 0; i < g->noutputs; i++) g->outputs[i].bound = NULL;
    return st;
}
