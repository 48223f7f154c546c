/*
 * Autograd's records, beside the core. A tensor record that gradients flow through points at
 * a meta (tensor.h: wgt_tensor.ag): a leaf's meta holds its accumulated gradient; a computed
 * tensor's meta owns the node saying how its op is differentiated. A node refers to the metas
 * of its inputs (never to tensors, so intermediates' storages are not kept alive) and to the
 * values its rule needs, saved as fresh views that carry no meta. Every reference points from
 * a result to what it was computed from, so the record is acyclic, and releasing the last
 * tensor computed from a leaf frees it (iteratively: a chain of any length frees in constant
 * stack depth).
 *
 * The gradient rules (rules_*.c) run inside the public entry points (src/core/api.c calls
 * wgt_ag_rule_NAME with the op's result and arguments); backward.c walks the nodes and calls
 * each node's backward function, which records ordinary ops through the record-level names,
 * so the backward pass records no gradients of its own.
 */
#ifndef WGT_AUTOGRAD_H
#define WGT_AUTOGRAD_H

#include "core/node.h" /* first: the record-level names */
#include "rules.h"

typedef struct wgt_ag_node wgt_ag_node;
typedef struct wgt_ag_meta wgt_ag_meta;

/* The tensors one backward function makes, released together when it returns: rules write
 * expressions over K(...) and never track single references. */
typedef struct wgt_ag_arena {
    wgt_tensor **t;
    int n, cap;
    int failed; /* out of host memory: a tensor could not be kept */
} wgt_ag_arena;
/* Keeps t (NULL stays NULL) to be released with the arena. */
wgt_tensor *wgt_ag_k(wgt_ag_arena *ar, wgt_tensor *t);
void wgt_ag_arena_free(wgt_ag_arena *ar);

/* Sets gin[i] to d loss / d input i (a tensor of the arena, of input i's shape and type, or
 * NULL where input i needs none: its edge has no meta) from g = d loss / d output. */
typedef wgt_status (*wgt_ag_backward_fn)(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar);

typedef struct wgt_ag_edge {
    wgt_ag_meta *meta; /* NULL: no gradient flows into this input */
    wgt_dtype dtype;
    int ndim;
    int64_t shape[WGT_MAX_DIMS];
} wgt_ag_edge;

#define WGT_AG_SAVED 4

struct wgt_ag_node {
    const char *fn;              /* the public op, for messages */
    wgt_ag_backward_fn backward; /* NULL: the op has no gradient */
    const char *why;             /* with backward NULL: why there is none (NULL: the op has none at all) */
    int nin;
    wgt_ag_edge *in;
    wgt_tensor *saved[WGT_AG_SAVED]; /* views without a meta, released with the node */
    wgt_context *ctx;
    wgt_dtype out_dtype;
    int out_ndim;
    int64_t out_shape[WGT_MAX_DIMS];
    /* The op's own arguments, as each rule needs them. */
    double p[4];
    int iv[WGT_MAX_DIMS + 2];
    int64_t lv[2][WGT_MAX_DIMS];
    int failed; /* a save failed (out of host memory) */
};

struct wgt_ag_meta {
    int refs;
    int requires_grad;  /* a leaf that receives gradients */
    wgt_tensor *grad;   /* a leaf's accumulated gradient */
    wgt_ag_node *node;  /* how the tensor was computed; NULL for a leaf */
    /* A backward pass's scratch. */
    wgt_tensor *acc;
    uint64_t visit;
    wgt_ag_meta *next_free;
};

/* Whether gradients flow through t: a leaf marked, or a tracked result. */
int wgt_ag_needs(const wgt_tensor *t);
/* Whether an op on these tensors records a node: outside a no-grad scope, some input needs a
 * gradient. */
int wgt_ag_tracking(int n, wgt_tensor *const *ins);
/* A node for out computed by fn from ins, with edges to those that need gradients; NULL with
 * an error when out of memory. */
wgt_ag_node *wgt_ag_node_new(const char *fn, wgt_tensor *out, int n, wgt_tensor *const *ins, wgt_ag_backward_fn bw);
/* Saves a view of t (no meta) in the node's slot i. */
void wgt_ag_save(wgt_ag_node *n, int i, wgt_tensor *t);
/* Attaches node to out (which has no meta yet); returns out, or NULL with out and node released. */
wgt_tensor *wgt_ag_attach(wgt_tensor *out, wgt_ag_node *n);
void wgt_ag_node_free(wgt_ag_node *n);

/* The usual shape of a rule: returns out untouched unless tracking; else a node to fill. */
#define WGT_AG_BEGIN(node, fn, out, bw, ...)                                                      \
    wgt_tensor *ins_[] = {__VA_ARGS__};                                                           \
    if (!(out) || !wgt_ag_tracking((int)(sizeof ins_ / sizeof ins_[0]), ins_)) return (out);      \
    wgt_ag_node *node = wgt_ag_node_new(fn, out, (int)(sizeof ins_ / sizeof ins_[0]), ins_, bw); \
    if (!node) {                                                                                  \
        wgt_release(out);                                                                         \
        return NULL;                                                                              \
    }

/* ---- helpers for backward functions (grad_util.c); all keep their results in ar ---- */
/* g summed over the dimensions that broadcasting added or stretched, down to the edge's shape,
 * and cast to its type. */
wgt_tensor *wgt_ag_sum_to(wgt_ag_arena *ar, wgt_tensor *g, const wgt_ag_edge *e);
/* A rank-0 tensor of value like t's type and context. */
wgt_tensor *wgt_ag_scalar_like(wgt_ag_arena *ar, wgt_tensor *t, double v);
/* mask (u32 0/1) as a tensor of dtype. */
wgt_tensor *wgt_ag_mask(wgt_ag_arena *ar, wgt_tensor *mask, wgt_dtype dtype);
/* g, the result of reducing a tensor of in_shape over the axes flagged in reduced, seen at
 * in_shape: the reduced axes put back (length 1) and broadcast. */
wgt_tensor *wgt_ag_unreduce(wgt_ag_arena *ar, wgt_tensor *g, int in_ndim, const int64_t *in_shape, const int *reduced,
                            int keepdims);
/* The gradient of table for rows = table[idx] (table's first dimension n): the sum of the
 * rows of g that picked each table row, by the scatter-add kernel (wgt_index_add, in f32).
 * idx any shape; g [idx..., row...]. */
wgt_tensor *wgt_ag_scatter_rows(wgt_ag_arena *ar, wgt_tensor *g, wgt_tensor *idx, int64_t n, int table_ndim,
                                const int64_t *table_shape);
/* g scattered along axis into length len: element k goes to position idx[k] (i32 [m], repeats
 * add up). */
wgt_tensor *wgt_ag_scatter_axis(wgt_ag_arena *ar, wgt_tensor *g, int axis, wgt_tensor *idx, int64_t len);

/* Flags of the axes a reduction over (naxes, axes) of a rank-ndim tensor reduces. */
void wgt_ag_reduced_axes(int ndim, int naxes, const int *axes, int *reduced);

/* A rule's backward sets gin[i] for every input whose edge has a meta; done() reports a NULL
 * among them as the error that made it. */
wgt_status wgt_ag_done(const wgt_ag_node *n, wgt_tensor *const *gin, const wgt_ag_arena *ar);

#define K(x) wgt_ag_k(ar, (x))
#define NEED(n, i) ((n)->in[i].meta != NULL)

#endif
