/*
 * The lazy graph: every op records a node instead of calling the backend. A node names the
 * backend entry it will call, its operands (views of storages, which it keeps alive) and its
 * constants. Nodes of ordinary tensors wait in the context's pending list until a result is
 * needed; nodes computed from graph inputs are symbolic and belong to the storage they write,
 * until wgt_graph_build copies them into a compiled graph.
 *
 * The scheduler (scheduler.c) turns a list of nodes into a plan: nodes whose results nobody
 * can read are dropped, chains of elementwise nodes become fused kernels, and each step says
 * which storages it touches last so their memory returns to the pool at once.
 */
#ifndef WGT_CORE_NODE_H
#define WGT_CORE_NODE_H

#include "api_names.h" /* first: the library's sources use the record-level names */
#include "tensor.h"

typedef enum wgt_node_kind {
    WGT_NODE_COPY,
    WGT_NODE_BINARY,
    WGT_NODE_UNARY,
    WGT_NODE_CAST,
    WGT_NODE_WHERE,
    WGT_NODE_REDUCE,
    WGT_NODE_CUMSUM,
    WGT_NODE_SCAN, /* op: wgt_scan_op; axis */
    WGT_NODE_MATMUL,
    WGT_NODE_ROWS,
    WGT_NODE_WRITE_BOX,
    WGT_NODE_PAD,
    WGT_NODE_GATHER_ROWS,
    WGT_NODE_SET_ROWS,
    WGT_NODE_ATTENTION,
    WGT_NODE_QUANTIZE,
    WGT_NODE_DEQUANTIZE,
    WGT_NODE_MATMUL_QUANTIZED,
    WGT_NODE_CONV,
    WGT_NODE_SORT,         /* values and indices (both written), then the input; op: descending */
    WGT_NODE_SEARCHSORTED, /* op: right */
    WGT_NODE_RANDOM,       /* op: wgt_random_kind; params a, b, c; box: seed, count; bits: low */
    WGT_NODE_USER_KERNEL, /* a caller's WGSL kernel (user_kernel.c): several bindings, several written */
    WGT_NODE_INDEX_NARROW, /* i64/u64 indices to u32 (index_narrow.c); bits: the bound */
    WGT_NODE_ROPE,         /* out, x, positions (or none), freqs: the backend's rope */
    WGT_NODE_KIND_COUNT
} wgt_node_kind;

#define WGT_NODE_MAX_ARGS 4 /* the library's own ops; a node always has room for this many */
/* A user kernel's bindings: more than any op of ours, so a node's operands are allocated with it. */
#define WGT_NODE_MAX_BINDINGS 32

struct wgt_user_call; /* a user kernel's dispatch (user_kernel.c) */

typedef struct wgt_node {
    wgt_node_kind kind;
    int op;    /* binary, unary, reduce or rows op */
    int nargs;   /* args[0..nwrites-1] are written; the rest are read. An absent optional operand has storage NULL. */
    int nwrites; /* 1, except for a user kernel writing several bindings */
    int partial;        /* writes only part of what it writes (write_box, set_rows, user kernels): it also reads it */
    double params[2];   /* unary params, reduce param, rows eps, attention scale */
    int axis;           /* reduce: reduced trailing dims; cumsum: axis; attention: causal;
                           a node with index_bound: the rank of the caller's index tensor */
    int64_t box[WGT_MAX_DIMS]; /* write_box start, pad widths before; conv's eight params; a node with index_bound:
                                  the caller's index shape (messages name positions in it) */
    uint64_t bits;      /* pad value; index_narrow's bound */
    /* Index operand (arg index) whose values must lie in [0, index_bound) (-1: a bound of 0,
     * every index fails; 0: not checked), checked on the device when the node runs
     * (index_checks.c), for indices whose values were not on the host when the op was
     * recorded or that a graph's node reads at each dispatch. */
    int index_arg;
    int64_t index_bound;
    const char *fn; /* the public function that recorded it, for messages */
    uint64_t seq;   /* record order */
    int symbolic;
    int update; /* an in-place update of a tensor with data by a graph (graph_updates.c): holds args[0] too */
    /* Pending list (ordinary nodes), or the prior writer of args[0] (a symbolic partial write
     * builds on it; owned). */
    struct wgt_node *next;
    struct wgt_node *prior;
    int refs; /* symbolic nodes: held by the storage they write and by later partial writers */
    uint64_t walk; /* the last graph walk that reached it (ctx->walks) */
    /* Scratch of the waiting updates' collector (graph_updates.c): its walk, the references
     * to the node it found, and whether something outside the updates needs the node. */
    uint64_t update_walk;
    int update_count, update_live;
    struct wgt_user_call *user; /* WGT_NODE_USER_KERNEL: the kernel, its bindings and params (owned) */
    wgt_operand args[];         /* nargs of them, room for at least WGT_NODE_MAX_ARGS */
} wgt_node;

/* ---- recording (lazy.c) ---- */
/* Operand for t viewed with the given shape and strides: a view, nothing is synced. */
void wgt_operand_view(wgt_tensor *t, int ndim, const int64_t *shape, const int64_t *strides, wgt_operand *op);
/* Operand for the whole of a fresh output tensor. */
void wgt_operand_whole(wgt_tensor *t, wgt_operand *op);
/* A node with kind, op and fn set (nargs up to WGT_NODE_MAX_BINDINGS, one written), and
 * args[0..nargs-1] filled by the helpers above; the remaining fields start zeroed. Returns
 * NULL (out of host memory, status set). */
wgt_node *wgt_node_new(wgt_node_kind kind, int op, const char *fn, int nargs);
/* Takes the node: appends it to the context's pending work, or makes it symbolic when an
 * operand comes from a graph input. Fails (and frees the node) for misuse such as a partial
 * write of a tensor with data by a symbolic node. */
wgt_status wgt_record(wgt_context *ctx, wgt_node *n);
void wgt_node_release(wgt_node *n);

/* Operand preparation for the recording functions below: views only, nothing is synced. */
wgt_status wgt_view_operand(wgt_tensor *t, int ndim, const int64_t *shape, const int64_t *strides, wgt_operand *op);
wgt_status wgt_output_operand(wgt_tensor *t, wgt_operand *op);
/* ---- one recording function per backend entry (record.c); fn names the public op ---- */
wgt_status wgt_record_copy(wgt_context *ctx, const char *fn, const wgt_operand *dst, const wgt_operand *src);
/* A copy of 1-D indices whose values are checked against [0, bound) when it runs (as
 * gather's deferred indices are), for ops that have no check of their own; ndim and shape are
 * the caller's index shape, for messages. */
wgt_status wgt_record_copy_checked(wgt_context *ctx, const char *fn, const wgt_operand *dst, const wgt_operand *src,
                                   int64_t bound, int ndim, const int64_t *shape);
/* dst (u32, 1-D) = src (1-D i64 or u64) where a value lies in [0, bound) (bound below
 * 2^32), else 0xffffffff (out of range for the kernels that take dst); checked as gather's
 * indices are (deferred: always; ndim and shape are the caller's index shape). */
wgt_status wgt_record_index_narrow(wgt_context *ctx, const char *fn, const wgt_operand *dst, const wgt_operand *src,
                                   int64_t bound, int deferred, int ndim, const int64_t *shape);
wgt_status wgt_record_binary(wgt_context *ctx, const char *fn, wgt_binary_op op, const wgt_operand *out,
                             const wgt_operand *a, const wgt_operand *b);
wgt_status wgt_record_unary(wgt_context *ctx, const char *fn, wgt_unary_op op, const wgt_operand *out,
                            const wgt_operand *a, const double *params);
wgt_status wgt_record_cast(wgt_context *ctx, const char *fn, const wgt_operand *out, const wgt_operand *a);
wgt_status wgt_record_where(wgt_context *ctx, const char *fn, const wgt_operand *out, const wgt_operand *cond,
                            const wgt_operand *a, const wgt_operand *b);
wgt_status wgt_record_reduce(wgt_context *ctx, const char *fn, wgt_reduce_op op, const wgt_operand *out,
                             const wgt_operand *in, int reduce_ndim, double param);
wgt_status wgt_record_cumsum(wgt_context *ctx, const char *fn, const wgt_operand *out, const wgt_operand *in,
                             int axis);
wgt_status wgt_record_scan(wgt_context *ctx, const char *fn, wgt_scan_op op, const wgt_operand *out,
                           const wgt_operand *in, int axis);
wgt_status wgt_record_matmul(wgt_context *ctx, const char *fn, const wgt_operand *out, const wgt_operand *a,
                             const wgt_operand *b);
wgt_status wgt_record_rows(wgt_context *ctx, const char *fn, wgt_rows_op op, const wgt_operand *out,
                           const wgt_operand *in, const wgt_operand *weight, const wgt_operand *bias, double eps);
wgt_status wgt_record_write_box(wgt_context *ctx, const char *fn, const wgt_operand *dst, const int64_t *box_start,
                                const wgt_operand *src);
wgt_status wgt_record_pad(wgt_context *ctx, const char *fn, const wgt_operand *out, const wgt_operand *in,
                          const int64_t *before, uint64_t value_bits);
/* deferred: the caller could not check the indices on the host; they are checked when the
 * node runs (graph nodes always are). ndim and shape: the caller's index shape. */
wgt_status wgt_record_gather_rows(wgt_context *ctx, const char *fn, const wgt_operand *out, const wgt_operand *table,
                                  const wgt_operand *indices, int deferred, int ndim, const int64_t *shape);
/* add 0: set_rows (the last of repeated indices wins); 1: scatter_add_rows (f32 rows, the
 * backend's layout rules). */
wgt_status wgt_record_set_rows(wgt_context *ctx, const char *fn, const wgt_operand *dst, const wgt_operand *indices,
                               const wgt_operand *rows, int deferred, int add);
wgt_status wgt_record_attention(wgt_context *ctx, const char *fn, const wgt_operand *out, const wgt_operand *q,
                                const wgt_operand *k, const wgt_operand *v, const wgt_operand *count, int causal,
                                double scale);
/* The backend's one-kernel rope (backend.h); positions may be NULL. */
wgt_status wgt_record_rope(wgt_context *ctx, const char *fn, const wgt_operand *out, const wgt_operand *x,
                           const wgt_operand *positions, const wgt_operand *freqs);
/* Block types (src/quant/): indices may be NULL (every row in order); deferred and the
 * index shape as for gather_rows. */
wgt_status wgt_record_quantize(wgt_context *ctx, const char *fn, const wgt_operand *out, const wgt_operand *in);
wgt_status wgt_record_dequantize(wgt_context *ctx, const char *fn, const wgt_operand *out, const wgt_operand *table,
                                 const wgt_operand *indices, int deferred, int ndim, const int64_t *shape);
wgt_status wgt_record_matmul_quantized(wgt_context *ctx, const char *fn, const wgt_operand *out, const wgt_operand *x,
                                       const wgt_operand *w, int int8);

/* params: the backend conv entry's eight (stride, padding, dilation, input dilation). */
wgt_status wgt_record_conv(wgt_context *ctx, const char *fn, const wgt_operand *out, const wgt_operand *x,
                           const wgt_operand *w, const int64_t *params);
/* Sorting (sort.c): the first values->shape[last] elements of each sorted row of in (its
 * last dimension), both outputs written by one node. */
wgt_status wgt_record_sort(wgt_context *ctx, const char *fn, const wgt_operand *values, const wgt_operand *indices,
                           const wgt_operand *in, int descending);
/* The first k (k < 0: all) elements of each sorted row along axis of a, and their positions:
 * both results of one sort, in a's axis order (sort.c). On failure both are NULL. */
wgt_status wgt_sort_along(const char *fn, wgt_tensor *a, int axis, int descending, int64_t k, wgt_tensor **values,
                          wgt_tensor **indices);
wgt_status wgt_record_searchsorted(wgt_context *ctx, const char *fn, const wgt_operand *out, const wgt_operand *sorted,
                                   const wgt_operand *values, int right);

/* Counter-based random values into out (random.c): backend.h's random entry; key NULL or a
 * u32 operand of two elements whose words replace p's seed when the node runs. */
wgt_status wgt_record_random(wgt_context *ctx, const char *fn, const wgt_operand *out, const wgt_operand *key,
                             const wgt_random_params *p);
/* Uniform f32 draws in [0, 1) of the given shape whose seed is the u32 tensor key [2] (low
 * word first), read when the draws run: wgt_rand_uniform(f32, shape, 0, 1, seed) as values. */
wgt_tensor *wgt_rand_unit_keyed(const char *fn, wgt_tensor *key, int ndim, const int64_t *shape);

/* A user kernel's dispatch goes with its node (user_kernel.c). */
void wgt_user_call_free(struct wgt_user_call *call);
wgt_status wgt_user_call_run(wgt_backend *be, const struct wgt_user_call *call, const wgt_operand *args, int nargs);

/* ---- device-side index checks (index_checks.c) ---- */
/* A slot of the context's check record for node n, as the operand the backend's index_check
 * writes, and the slot's taint bit. When the ring of slots starts over, or the slots not yet
 * finished would span 64 while a read is in flight, reads are finished first (a wait):
 * storages they find failed fail their later readers. real and offset: n's index
 * operand as resolved for this run (real NULL: never shared). *shared set: an earlier node of
 * the run checked the same values for the same message; n takes its slot's bit and runs no
 * check of its own (record untouched). */
wgt_status wgt_index_checks_take(wgt_context *ctx, const wgt_node *n, const wgt_storage *real, int64_t offset,
                                 wgt_operand *record, uint64_t *bit, int *shared);
/* The backend's index_check into record (a slot take gave) was recorded: only such slots'
 * words are read as verdicts (a step can fail between taking its slot and checking). */
void wgt_index_checks_ran(wgt_context *ctx, const wgt_operand *record);
/* A run of steps begins (a flush, a graph's dispatch): no earlier check is shared into it. */
void wgt_index_checks_new_run(wgt_context *ctx);
/* s was just written by a step whose value depends on the checks in mask (the taint of what
 * it read, and its own slot's bit); a whole write forgets what s held before. */
void wgt_index_checks_written(wgt_storage *s, uint64_t mask, int whole);
/* s goes away, or its contents are replaced from the host: its taint goes with it. */
void wgt_index_checks_forget(wgt_storage *s);
/* A synchronisation is about to report s's failure: where a run found it (failed_in_run), the
 * record is read first, as the synchronisation would have read it to find the failure. */
wgt_status wgt_index_checks_settle(wgt_storage *s);
/* Whether checks have run that the record has not been read for. */
int wgt_index_checks_unread(const wgt_context *ctx);
/* A synchronisation reads the record: begin records a copy of the slots taken since the last
 * begin with the current batch (before the read or wait that follows, which then carries it:
 * no extra round trip); finish waits for every read begun (at once when its batch has
 * completed) and marks failed every storage that depends on a failed check. finish returns the
 * first failure found when report is set (WGT_OK otherwise), or a failure to read the record.
 * mark, taken after a begin, names the reads begun so far; finish_through finishes only those,
 * not reads begun later (an asynchronous read's own, not the next step's). */
wgt_status wgt_index_checks_begin(wgt_context *ctx);
uint64_t wgt_index_checks_mark(const wgt_context *ctx);
wgt_status wgt_index_checks_finish(wgt_context *ctx, int report);
wgt_status wgt_index_checks_finish_through(wgt_context *ctx, uint64_t mark, int report);
/* begin and finish at once. */
wgt_status wgt_index_checks_read(wgt_context *ctx, int report);
/* Frees the record: the context goes. */
void wgt_index_checks_free(wgt_context *ctx);
/* The message for index v at flat position pos of indices of the given shape, bound and unit:
 * shared by the checks at the call and those on the device. is_unsigned: v's bits are a u64. */
wgt_status wgt_index_error(const char *fn, int64_t v, int is_unsigned, int ndim, const int64_t *shape, int64_t pos,
                           int64_t bound, const char *unit);

/* Runs everything pending on the context (in record order, planned and fused). */
wgt_status wgt_flush(wgt_context *ctx);
/* Runs pending work if s has pending writers, or pending readers too when for_write. */
wgt_status wgt_flush_for(wgt_storage *s, int for_write);
/* Drops pending work without running it (context release, a failed device); the storages it
 * was to write are marked failed with why and message. */
void wgt_drop_pending(wgt_context *ctx, wgt_status why, const char *message);

/* ---- in-place updates by compiled graphs (graph_updates.c) ---- */
/* Before each dispatch of the graph that took it, prepare(arg) runs (an optimizer writes its
 * learning rate and bias corrections); release(arg) when the graph or the context goes. */
typedef struct wgt_graph_hook {
    wgt_status (*prepare)(void *arg);
    void (*release)(void *arg);
    void *arg;
} wgt_graph_hook;
/* Records dst = src, where src is computed from graph inputs and dst is a whole contiguous
 * tensor with data of src's type and shape: the update waits in the context for the next
 * wgt_graph_build, whose every dispatch then writes dst in place; dst stays a tensor with
 * data. */
wgt_status wgt_record_graph_update(wgt_context *ctx, const char *fn, wgt_tensor *dst, wgt_tensor *src);
/* Takes n (seq set), a partial write (set_rows) of values computed from graph inputs into a
 * storage with data, as such an update: every dispatch of the next build runs it at its place
 * in the record order. On failure n is freed. */
wgt_status wgt_graph_update_in_place(wgt_context *ctx, wgt_node *n);
/* Drops the waiting updates whose writes nothing outside them could ever see (graph_updates.c
 * says how): called when a storage such an update writes, or one that kept another alive, loses
 * a reference. */
void wgt_graph_updates_collect(wgt_context *ctx);
/* The waiting updates leave the context (a build holds them now): releases the context's
 * references. */
void wgt_graph_updates_taken(wgt_context *ctx);
/* A graph value holding t's contents as they are when a dispatch runs (an op over tensors
 * with data alone runs once, when recorded). NULL when out of memory. */
wgt_tensor *wgt_graph_read(const char *fn, wgt_tensor *t);
/* Adds a hook for the graph that takes the waiting updates; on failure release(arg) has run. */
wgt_status wgt_graph_hook_add(wgt_context *ctx, const char *fn, wgt_graph_hook hook);
/* Drops the waiting updates and hooks (the context is released). */
void wgt_graph_updates_drop(wgt_context *ctx);

/* ---- planning (scheduler.c) and running (step_run.c) ---- */
typedef struct wgt_step {
    wgt_node *node;          /* one node, or NULL for a fused kernel */
    int owns_node;           /* node is an epilogue's or a prologue's, freed with the plan */
    wgt_fused_kernel *fused; /* operands' storage fields name the storages */
    int members;             /* nodes the step stands for */
    /* Storages this step reads or writes for the last time in the plan (may be released to the
     * pool afterwards by a graph). */
    wgt_storage **last_uses;
    int nlast;
} wgt_step;

/* Whether node n writes storage s (any of its written operands). */
int wgt_node_writes(const wgt_node *n, const wgt_storage *s);

/* Epilogues (epilogue.c): epi[i] for each of n nodes: the product an add folds in, or NONE,
 * or FOLDED for a product that runs inside its add's step. Reads the storages' readers,
 * needed and producer_index marks of the plan being built. */
#define WGT_EPILOGUE_NONE (-1)
#define WGT_EPILOGUE_FOLDED (-2)
void wgt_epilogues_find(wgt_node *const *nodes, int n, const char *live, int *epi);
/* The node the pair's step runs: the product writing the add's output with the add's other
 * operand as its addend (args[3]); malloc'd, freed with the plan; NULL when out of memory. */
wgt_node *wgt_epilogue_node(const wgt_node *prod, const wgt_node *add);

/* Prologues (prologue.c): pro[i] for each of n nodes: the rms_norm a quantized product takes
 * in, or NONE, or FOLDED for a norm that runs inside its products. find reads the plan's
 * storage marks and epi; keep, called once the other folds are decided (stored_in: scheduler.c's
 * updates stored by other kernels), undoes the folds whose norm input such a kernel writes. */
#define WGT_PROLOGUE_NONE (-1)
#define WGT_PROLOGUE_FOLDED (-2)
void wgt_prologues_find(wgt_node *const *nodes, int n, const char *live, const int *epi, int *pro);
void wgt_prologues_keep(wgt_node *const *nodes, int n, const int *stored_in, int *pro);
/* The node a product's step runs: the product reading the norm's input as x [M, K] (args[1]),
 * no addend (args[3] empty), the norm's weight as args[4] (storage NULL: none) and its eps as
 * params[0]; a quantized product node with 5 operands always has a norm. malloc'd, freed with
 * the plan; NULL when out of memory. */
wgt_node *wgt_prologue_node(const wgt_node *prod, const wgt_node *norm);

typedef struct wgt_plan {
    wgt_step *steps;
    int nsteps;
    int *node_step; /* per planned node: the step that runs it, or -1 when dropped */
    int skipped; /* nodes dropped: nobody could read what they write */
    int fused;   /* nodes that run inside fused kernels */
    int lost_last_uses; /* a step's list of last uses could not grow: some storages are not in one */
} wgt_plan;

/* needed(s, arg): whether storage s must hold its final value after the list runs (a tensor
 * or a graph output holds it). */
typedef int (*wgt_needed_fn)(wgt_storage *s, void *arg);
/* foldable(s, arg): whether a one-element storage whose value is on the host may be baked
 * into a fused kernel as a constant (nothing can change it before the plan runs). */
wgt_status wgt_plan_build(wgt_context *ctx, wgt_node *const *nodes, int n, wgt_needed_fn needed, void *arg,
                          int allow_fusion, wgt_needed_fn foldable, wgt_plan *out);
void wgt_plan_free(wgt_plan *p);

/* Where a step's storages really are: a compiled graph maps its inputs and outputs to the
 * caller's storages (shifted by an element offset); eager runs use the storages themselves. */
typedef wgt_storage *(*wgt_resolve_fn)(wgt_storage *s, int64_t *offset_shift, void *arg);
wgt_status wgt_step_run(wgt_context *ctx, const wgt_step *step, wgt_resolve_fn resolve, void *arg);

#endif
