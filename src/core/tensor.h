/*
 * Tensors, their shared storage and the context that owns both.
 *
 * Unified memory: a storage may hold a host copy, a device buffer, or both; each side has
 * a valid flag and data moves only when the other side asks (a read syncs to host, a kernel
 * launch syncs to device). Views share one storage and carry shape, strides and an offset.
 */
#ifndef WGT_CORE_TENSOR_H
#define WGT_CORE_TENSOR_H

#include "backend/backend.h"
#include "error.h"
#include "name_index.h"

struct wgt_node;

/* Budgets of pending eager work: recording past either runs what is pending (lazy.c). Nodes
 * bound the host memory recorded work holds and the planning cost of one flush; bytes bound
 * what running the pending outputs at once may take. */
#define WGT_PENDING_MAX_NODES 4096
#define WGT_PENDING_MAX_BYTES ((uint64_t)256 << 20)

struct wgt_context {
    int refs; /* the caller's handle plus one per live storage */
    int released;
    wgt_context *handle; /* the caller's (handles.h): stale once released */
    wgt_backend *backend;
    uint32_t wait_timeout_ms;
    int poison; /* WGT_POISON=1: kernel outputs start as 0xff bytes, so unwritten elements show */
    int fusion; /* elementwise chains run as fused kernels */
    wgt_attention_path attention; /* how wgt_attention runs where the backend has a kernel */
    int quant_int8; /* WGT_QUANT_INT8=1: quantized products take x quantized to q8 (docs/quant.md) */

    /* Work recorded and not yet run, in record order (lazy.c). */
    struct wgt_node *pending_head, *pending_tail;
    int npending;          /* at most WGT_PENDING_MAX_NODES */
    uint64_t pending_bytes; /* output bytes of the pending nodes */
    int flushing;
    uint64_t seq;
    uint64_t walks; /* graph walks so far: each marks what it reached with its number */
    wgt_name_index input_names;       /* live placeholders by name, for unique names */
    /* In-place updates and their hooks waiting for the next wgt_graph_build (graph_updates.c). */
    struct wgt_node **updates;
    int nupdates, updates_cap;
    struct wgt_graph_hook *hooks;
    int nhooks, hooks_cap;
    wgt_stats counters;               /* the core's counters: ops_*, launches */
    struct wgt_index_checks *index_checks; /* device-side index checks (index_checks.c), or NULL */
    uint64_t update_walks; /* the waiting updates' collector's walks so far (graph_updates.c) */
    int updates_frozen;    /* a build is taking the updates, or the collector runs: it must not */
};

typedef struct wgt_storage {
    int refs;
    wgt_context *ctx;
    size_t nbytes;      /* logical size */
    size_t alloc_bytes; /* rounded up to 4 so device copies stay word aligned */
    void *host;
    int host_valid;
    wgt_buffer *buffer;
    int device_valid;
    int destroyed;
    int external; /* the buffer is a caller's (wgt_tensor_from_buffer): a host copy may be stale */
    wgt_dtype block_dtype; /* q8_0 / q4_0 storage, whose buffer holds the device layout
                            * (block_layout.c); else 0 */

    /* Lazy evaluation (lazy.c). */
    int node_refs;       /* references held by pending nodes */
    int update_refs;     /* references held as the destination of in-place updates waiting in the
                          * context for a build (graph_updates.c): losing another reference, it
                          * has the collector look whether anyone could still see their writes */
    int update_watch;    /* the collector found it held from outside the updates: losing a
                          * reference, it has the collector look again */
    uint64_t update_walk; /* the collector's scratch (graph_updates.c), as in wgt_node */
    int update_count, update_live;
    int pending_writers; /* pending nodes that write it */
    int pending_readers; /* pending nodes that read it */
    int symbolic;        /* computed from a graph input: it holds no data outside a graph */
    char *input_name;    /* a graph input's name, type and shape */
    wgt_dtype input_dtype;
    int input_ndim;
    int64_t input_shape[WGT_MAX_DIMS];
    struct wgt_node *producer; /* symbolic: the node that writes it last (a reference) */
    wgt_status failed;   /* the work that was to write it failed: reads report this */
    char *failed_message;
    /* Failed by an index check whose verdict a run had to read before it could go on
     * (index_checks.c): the run carries the failure into what it writes from this storage
     * instead of stopping, as it would have had the verdict come at the next synchronisation. */
    int failed_in_run;
    /* Index checks its value depends on that are not read yet (index_checks.c): one bit per
     * check slot modulo 64; while non-zero it is on the context's list of such storages. */
    uint64_t check_mask;
    struct wgt_storage *check_prev, *check_next;
    /* Scratch for the scheduler, valid during one planning pass. */
    int needed;         /* must hold its value after the planned nodes */
    int live_mark;      /* liveness walk: a later node still needs it */
    int readers;        /* reads by planned nodes that run */
    int writers;        /* planned nodes that run and write it, whole or in part */
    int producer_index; /* the planned node writing it whole, or -1 */
    int last_step;      /* the last plan step touching it */
    int graph_only;     /* held by nothing but one graph being built */
    uint64_t walk;      /* the last graph walk that reached it (ctx->walks) */
    int walk_count;     /* that walk's count of references to it */
} wgt_storage;

/* A graph's intermediate: computed from graph inputs, not an input itself. It holds data only
 * while a dispatch of its graph runs. */
static inline int wgt_storage_is_intermediate(const wgt_storage *s) { return s->symbolic && !s->input_name; }

/* A tensor record. Callers hold handles to it (handles.h), never its address. */
struct wgt_tensor {
    uint32_t handle; /* the caller's handle slot + 1, 0 while the caller holds none */
    int refs;        /* the caller's references (one per handle reference) and the library's */
    wgt_storage *storage;
    wgt_dtype dtype;
    int ndim;
    int64_t shape[WGT_MAX_DIMS];
    int64_t strides[WGT_MAX_DIMS];
    int64_t offset;
    unsigned usage;
    /* Autograd's record of this tensor (src/autograd/): whether it needs a gradient, its
     * gradient, and how it was computed. NULL for tensors no gradient flows through. */
    struct wgt_ag_meta *ag;
};

/* Drops a tensor record's autograd record (src/autograd/tape.c). */
void wgt_ag_meta_release(struct wgt_ag_meta *m);

/* ---- shapes (shape.c) ---- */
wgt_status wgt_check_shape(const char *fn, int ndim, const int64_t *shape, int64_t *numel_out);
int64_t wgt_numel(int ndim, const int64_t *shape);
void wgt_contiguous_strides(int ndim, const int64_t *shape, int64_t *strides);
int wgt_is_contiguous(int ndim, const int64_t *shape, const int64_t *strides);
/* A layout of dtype that addresses every byte of a storage of nbytes: from offset 0,
 * contiguous, as long as the storage (so writing it leaves nothing of the old contents). */
int wgt_layout_covers(int ndim, const int64_t *shape, const int64_t *strides, int64_t offset, wgt_dtype dtype,
                      size_t nbytes);
wgt_status wgt_broadcast_shapes(const char *fn, int na, const int64_t *sa, int nb, const int64_t *sb,
                                int *nout, int64_t *out);
/* Strides of t viewed at a broadcast shape (0 where t's dimension is 1 or missing). */
void wgt_broadcast_strides(const wgt_tensor *t, int ndim, const int64_t *shape, int64_t *strides);
int wgt_normalize_axis(const char *fn, int axis, int ndim, int *out);
void wgt_format_shape(char *buf, size_t size, int ndim, const int64_t *shape);
/* Range of storage elements a view touches: [lo, hi]. False for an empty view. */
int wgt_view_extent(int ndim, const int64_t *shape, const int64_t *strides, int64_t offset,
                    int64_t *lo, int64_t *hi);
int wgt_view_overlaps_itself(int ndim, const int64_t *shape, const int64_t *strides);

/* ---- storage and residency (storage.c) ---- */
wgt_storage *wgt_storage_create(wgt_context *ctx, size_t nbytes);
void wgt_storage_release(wgt_storage *s);
wgt_status wgt_storage_sync_host(wgt_storage *s);
/* Reads bytes [offset, offset + n) (whole words) of the device copy into dst, after the
 * pending work that writes s. Where the host copy is (or can be made) current without a
 * device read, it syncs the host copy instead and sets *whole: the caller reads s->host. */
wgt_status wgt_storage_read_bytes(wgt_storage *s, size_t offset, size_t n, void *dst, int *whole);
wgt_status wgt_storage_sync_device(wgt_storage *s);
/* The storage's device buffer now holds new data written by a kernel. */
void wgt_storage_mark_device_written(wgt_storage *s);
void wgt_storage_destroy_data(wgt_storage *s);
/* Without running pending work first: for the executor, which runs it. */
wgt_status wgt_storage_sync_device_now(wgt_storage *s);
/* Allocation for a storage a kernel is about to write whole (poisoned with WGT_POISON=1). */
wgt_status wgt_storage_prepare_output(wgt_storage *s);
/* s's values are gone or replaced: no failure of the work that computed them stands. */
void wgt_storage_clear_failure(wgt_storage *s);

/* ---- the device layout of block types (block_layout.c) ---- */
/* Bytes of values per block (32 q8_0, 16 q4_0): a block's stride in the first part of the
 * device layout, whose second part holds the blocks' f16 scales. */
size_t wgt_block_values_bytes(wgt_dtype dtype);
void wgt_blocks_split(wgt_dtype dtype, const unsigned char *ggml, unsigned char *device, size_t blocks);
void wgt_blocks_join(wgt_dtype dtype, const unsigned char *device, unsigned char *ggml, size_t blocks);
/* A block storage's whole contents between ggml's layout and its buffer: upload reads nbytes
 * at ggml, download writes alloc_bytes (the tail padding zero). */
wgt_status wgt_blocks_upload(wgt_storage *s, const void *ggml);
wgt_status wgt_blocks_download(wgt_storage *s, void *ggml);

/* ---- block (quantized) types (tensor.c) ---- */
static inline int wgt_dtype_is_block(wgt_dtype dtype) { return dtype == WGT_Q8_0 || dtype == WGT_Q4_0; }
/* Bytes of n elements of dtype (n a multiple of the block for block types). */
static inline size_t wgt_dtype_bytes(wgt_dtype dtype, int64_t n) {
    return (size_t)(n / wgt_dtype_block_elements(dtype)) * wgt_dtype_block_bytes(dtype);
}
/* Whether the public function fn takes block-type tensors (docs/quant.md lists them). */
int wgt_takes_blocks(const char *fn);
/* Narrow operands computed in a wide type (narrow.c): the wide type (i32, or f32 for bf16;
 * other types map to themselves), a new reference to t widened (NULL on failure), t cast to
 * dtype taking t's reference (t itself when of that type; NULL stays NULL), op on both
 * operands widened, and where with the result cast back to a's type. The callers have
 * checked the operands. */
wgt_dtype wgt_narrow_wide_type(wgt_dtype dtype);
wgt_tensor *wgt_narrow_widen(wgt_tensor *t);
wgt_tensor *wgt_narrow_cast_to(wgt_tensor *t, wgt_dtype dtype);
/* The type sum, prod and cumsum give for dtype: i32 for bool, i8 and i16, u32 for u8 and u16
 * (the one place to change when i64 comes), dtype itself for the rest. */
wgt_dtype wgt_narrow_sum_type(wgt_dtype dtype);
wgt_tensor *wgt_narrow_binary(wgt_tensor *a, wgt_tensor *b, wgt_tensor *(*op)(wgt_tensor *, wgt_tensor *));
wgt_tensor *wgt_narrow_where(wgt_tensor *cond, wgt_tensor *a, wgt_tensor *b);
/* i64 and u64 (int64.c): whether the public function fn takes them, the refusal naming fn
 * and the operand, and the type a cast from `from` to `to` goes through first (`to` itself
 * when the backends cast the pair directly). */
int wgt_takes_int64(const char *fn);
wgt_status wgt_int64_refused(const char *fn, const char *what, wgt_dtype dtype);
wgt_dtype wgt_int64_cast_via(wgt_dtype from, wgt_dtype to);
/* Whether the public function fn takes the narrow types (bool, i8, u8, i16, u16, bf16). */
int wgt_takes_narrow(const char *fn);
/* WGT_OK unless dtype is a block type and the view cuts a block (see wgt_dtype_block_elements). */
wgt_status wgt_check_block_view(const char *fn, wgt_dtype dtype, int ndim, const int64_t *shape,
                                const int64_t *strides, int64_t offset);
/* t in whole blocks: the last dimension, the strides and the offset divided by the block's
 * elements, so byte arithmetic uses wgt_dtype_block_bytes per unit (identity for other types). */
void wgt_block_units(const wgt_tensor *t, wgt_tensor *out);

/* The result type of a product of operand types a and b (matmul and the contractions,
 * linalg.c): f32 or f16 of one type, or integers of any types promoted by the array API's
 * table; bool, bf16, a float with another float or an integer is an error naming fn and the
 * operands (name_a, name_b: "a", "operand 2"). */
wgt_status wgt_product_type(const char *fn, const char *name_a, wgt_dtype a, const char *name_b, wgt_dtype b,
                            wgt_dtype *out);

/* x [..., in], w [out, in] and bias [out] (or NULL) of a linear map (linalg.c). */
wgt_status wgt_check_linear_shapes(const char *fn, const wgt_tensor *x, const wgt_tensor *w, const wgt_tensor *bias);

/* ---- tensors (tensor.c) ---- */
/* A new contiguous tensor with fresh storage; contents unspecified until written. */
wgt_tensor *wgt_tensor_new(wgt_context *ctx, const char *fn, wgt_dtype dtype, int ndim,
                           const int64_t *shape, unsigned usage);
wgt_tensor *wgt_tensor_new_view(wgt_tensor *base, int ndim, const int64_t *shape,
                                const int64_t *strides, int64_t offset);
/* Validates a tensor argument: not NULL (keeping an earlier error), a real tensor, storage
 * alive, context usable, and a type fn takes (block, narrow and 64-bit types only where fn
 * is listed for them). name is the parameter's name for the message. */
wgt_status wgt_check_tensor(const char *fn, const char *name, const wgt_tensor *t);
/* wgt_check_tensor without the type check, for operands whose types the caller checks
 * itself (index tensors: i64 and u64 wherever an index is taken, index_narrow.c). */
wgt_status wgt_check_tensor_any_type(const char *fn, const char *name, const wgt_tensor *t);
wgt_status wgt_check_context(const char *fn, wgt_context *ctx);
wgt_status wgt_check_dtype(const char *fn, wgt_dtype dtype);
wgt_status wgt_check_same_context(const char *fn, const wgt_tensor *a, const wgt_tensor *b);
/* Operand for a kernel: makes the storage resident on the backend's side first. */
wgt_status wgt_make_operand(wgt_tensor *t, int ndim, const int64_t *shape, const int64_t *strides,
                            wgt_operand *op);
/* Operand for a freshly created output tensor (no sync needed: the kernel writes it all). */
wgt_status wgt_make_output_operand(wgt_tensor *t, wgt_operand *op);
void wgt_finish_output(wgt_tensor *t);
wgt_status wgt_check_kernel_size(const char *fn, const wgt_tensor *t);

/* ---- values (creation.c) ---- */
/* Stores v as one element of dtype at dst: integers saturate, NaN is 0 (callers that take a
 * caller's value check it with wgt_check_scalar first; the random creators rely on this). */
void wgt_store_value(wgt_dtype dtype, void *dst, double v);
/* The same element's bits in a word (f16 in the low 16 bits, i64 and u64 in all 64): how
 * backends receive constants. */
uint64_t wgt_value_bits(wgt_dtype dtype, double v);
/* v as a message shows it: whole numbers in full, others in the shortest form that reads back. */
void wgt_format_value(char *buf, size_t n, double v);
/* WGT_OK when dtype holds the scalar v (a whole number in range for integers, not a finite
 * value past the range for floats), else the error naming fn, what and v. */
wgt_status wgt_check_scalar(const char *fn, const char *what, wgt_dtype dtype, double v);

#endif
