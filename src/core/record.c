/*
 * One recording function per backend entry, with the entry's own arguments: an op file
 * prepares operands exactly as a backend wants them (wgt_view_operand, wgt_output_operand)
 * and records the call instead of making it. The node keeps the operands' storages alive
 * until it runs.
 */
#include <string.h>

#include "node.h"

wgt_status wgt_view_operand(wgt_tensor *t, int ndim, const int64_t *shape, const int64_t *strides, wgt_operand *op) {
    wgt_operand_view(t, ndim, shape, strides, op);
    return WGT_OK;
}

wgt_status wgt_output_operand(wgt_tensor *t, wgt_operand *op) {
    wgt_operand_whole(t, op);
    return WGT_OK;
}

/* A node with the given operands (NULL for an absent optional one). */
static wgt_status record(wgt_context *ctx, wgt_node_kind kind, int op, const char *fn, int nargs,
                         const wgt_operand *const *args, wgt_node **out) {
    wgt_node *n = wgt_node_new(kind, op, fn, nargs);
    if (!n) return wgt_last_status();
    for (int i = 0; i < nargs; i++)
        if (args[i]) n->args[i] = *args[i];
    *out = n;
    return WGT_OK;
}

/* Indices are checked when the node runs (on the device: index_checks.c) where the caller's
 * op could not check them on the host (deferred), and wherever their values may differ by
 * then from those checked: any indices a graph's node reads (the node runs at each dispatch
 * of the graph, and the caller may write the index tensor in between). An ordinary node's
 * host-checked indices cannot change before it runs: a write to them runs the recorded work
 * first. shape (ndim dims) is the caller's index shape, for the message. */
static void check_later(wgt_node *n, int index_arg, int64_t bound, int deferred, int ndim, const int64_t *shape) {
    int in_graph = 0;
    for (int i = 0; i < n->nargs; i++) in_graph |= n->args[i].storage && n->args[i].storage->symbolic;
    if ((deferred || in_graph) && n->args[index_arg].storage) {
        n->index_arg = index_arg;
        n->index_bound = bound > 0 ? bound : -1; /* -1: nothing to pick, any index fails */
        n->axis = ndim;
        memcpy(n->box, shape, sizeof(int64_t) * (size_t)ndim);
    }
}

#define RECORD(kind, op, nargs, ...)                                                   \
    wgt_node *n = NULL;                                                                \
    const wgt_operand *args[] = {__VA_ARGS__};                                         \
    wgt_status st = record(ctx, kind, op, fn, nargs, args, &n);                        \
    if (st != WGT_OK) return st;

wgt_status wgt_record_copy(wgt_context *ctx, const char *fn, const wgt_operand *dst, const wgt_operand *src) {
    RECORD(WGT_NODE_COPY, 0, 2, dst, src)
    return wgt_record(ctx, n);
}

wgt_status wgt_record_binary(wgt_context *ctx, const char *fn, wgt_binary_op op, const wgt_operand *out,
                             const wgt_operand *a, const wgt_operand *b) {
    RECORD(WGT_NODE_BINARY, op, 3, out, a, b)
    return wgt_record(ctx, n);
}

wgt_status wgt_record_unary(wgt_context *ctx, const char *fn, wgt_unary_op op, const wgt_operand *out,
                            const wgt_operand *a, const double *params) {
    RECORD(WGT_NODE_UNARY, op, 2, out, a)
    n->params[0] = params[0];
    n->params[1] = params[1];
    return wgt_record(ctx, n);
}

wgt_status wgt_record_cast(wgt_context *ctx, const char *fn, const wgt_operand *out, const wgt_operand *a) {
    RECORD(WGT_NODE_CAST, 0, 2, out, a)
    return wgt_record(ctx, n);
}

wgt_status wgt_record_where(wgt_context *ctx, const char *fn, const wgt_operand *out, const wgt_operand *cond,
                            const wgt_operand *a, const wgt_operand *b) {
    RECORD(WGT_NODE_WHERE, 0, 4, out, cond, a, b)
    return wgt_record(ctx, n);
}

wgt_status wgt_record_reduce(wgt_context *ctx, const char *fn, wgt_reduce_op op, const wgt_operand *out,
                             const wgt_operand *in, int reduce_ndim, double param) {
    RECORD(WGT_NODE_REDUCE, op, 2, out, in)
    n->axis = reduce_ndim;
    n->params[0] = param;
    return wgt_record(ctx, n);
}

wgt_status wgt_record_cumsum(wgt_context *ctx, const char *fn, const wgt_operand *out, const wgt_operand *in,
                             int axis) {
    RECORD(WGT_NODE_CUMSUM, 0, 2, out, in)
    n->axis = axis;
    return wgt_record(ctx, n);
}

wgt_status wgt_record_scan(wgt_context *ctx, const char *fn, wgt_scan_op op, const wgt_operand *out,
                           const wgt_operand *in, int axis) {
    RECORD(WGT_NODE_SCAN, op, 2, out, in)
    n->axis = axis;
    return wgt_record(ctx, n);
}

wgt_status wgt_record_sort(wgt_context *ctx, const char *fn, const wgt_operand *values, const wgt_operand *indices,
                           const wgt_operand *in, int descending) {
    RECORD(WGT_NODE_SORT, descending, 3, values, indices, in)
    n->nwrites = 2;
    return wgt_record(ctx, n);
}

wgt_status wgt_record_searchsorted(wgt_context *ctx, const char *fn, const wgt_operand *out, const wgt_operand *sorted,
                                   const wgt_operand *values, int right) {
    RECORD(WGT_NODE_SEARCHSORTED, right, 3, out, sorted, values)
    return wgt_record(ctx, n);
}

wgt_status wgt_record_matmul(wgt_context *ctx, const char *fn, const wgt_operand *out, const wgt_operand *a,
                             const wgt_operand *b) {
    RECORD(WGT_NODE_MATMUL, 0, 3, out, a, b)
    return wgt_record(ctx, n);
}

wgt_status wgt_record_rows(wgt_context *ctx, const char *fn, wgt_rows_op op, const wgt_operand *out,
                           const wgt_operand *in, const wgt_operand *weight, const wgt_operand *bias, double eps) {
    RECORD(WGT_NODE_ROWS, op, 4, out, in, weight, bias)
    n->params[0] = eps;
    return wgt_record(ctx, n);
}

wgt_status wgt_record_write_box(wgt_context *ctx, const char *fn, const wgt_operand *dst, const int64_t *box_start,
                                const wgt_operand *src) {
    RECORD(WGT_NODE_WRITE_BOX, 0, 2, dst, src)
    n->partial = 1;
    memcpy(n->box, box_start, sizeof(int64_t) * (size_t)dst->ndim);
    return wgt_record(ctx, n);
}

wgt_status wgt_record_pad(wgt_context *ctx, const char *fn, const wgt_operand *out, const wgt_operand *in,
                          const int64_t *before, uint64_t value_bits) {
    RECORD(WGT_NODE_PAD, 0, 2, out, in)
    memcpy(n->box, before, sizeof(int64_t) * (size_t)out->ndim);
    n->bits = value_bits;
    return wgt_record(ctx, n);
}

wgt_status wgt_record_copy_checked(wgt_context *ctx, const char *fn, const wgt_operand *dst, const wgt_operand *src,
                                   int64_t bound, int ndim, const int64_t *shape) {
    RECORD(WGT_NODE_COPY, 0, 2, dst, src)
    check_later(n, 1, bound, 1, ndim, shape);
    return wgt_record(ctx, n);
}

wgt_status wgt_record_index_narrow(wgt_context *ctx, const char *fn, const wgt_operand *dst, const wgt_operand *src,
                                   int64_t bound, int deferred, int ndim, const int64_t *shape) {
    RECORD(WGT_NODE_INDEX_NARROW, 0, 2, dst, src)
    n->bits = (uint64_t)bound;
    check_later(n, 1, bound, deferred, ndim, shape);
    return wgt_record(ctx, n);
}

wgt_status wgt_record_gather_rows(wgt_context *ctx, const char *fn, const wgt_operand *out, const wgt_operand *table,
                                  const wgt_operand *indices, int deferred, int ndim, const int64_t *shape) {
    RECORD(WGT_NODE_GATHER_ROWS, 0, 3, out, table, indices)
    check_later(n, 2, table->shape[0], deferred, ndim, shape);
    return wgt_record(ctx, n);
}

wgt_status wgt_record_set_rows(wgt_context *ctx, const char *fn, const wgt_operand *dst, const wgt_operand *indices,
                               const wgt_operand *rows, int deferred, int add) {
    RECORD(WGT_NODE_SET_ROWS, add, 3, dst, indices, rows)
    n->partial = 1;
    check_later(n, 1, dst->shape[0], deferred, 1, indices->shape);
    return wgt_record(ctx, n);
}

wgt_status wgt_record_attention(wgt_context *ctx, const char *fn, const wgt_operand *out, const wgt_operand *q,
                                const wgt_operand *k, const wgt_operand *v, const wgt_operand *count, int causal,
                                double scale) {
    RECORD(WGT_NODE_ATTENTION, 0, 5, out, q, k, v, count)
    n->axis = causal;
    n->params[0] = scale;
    return wgt_record(ctx, n);
}

wgt_status wgt_record_rope(wgt_context *ctx, const char *fn, const wgt_operand *out, const wgt_operand *x,
                           const wgt_operand *positions, const wgt_operand *freqs) {
    RECORD(WGT_NODE_ROPE, 0, 4, out, x, positions, freqs)
    return wgt_record(ctx, n);
}

wgt_status wgt_record_quantize(wgt_context *ctx, const char *fn, const wgt_operand *out, const wgt_operand *in) {
    RECORD(WGT_NODE_QUANTIZE, 0, 2, out, in)
    return wgt_record(ctx, n);
}

wgt_status wgt_record_dequantize(wgt_context *ctx, const char *fn, const wgt_operand *out, const wgt_operand *table,
                                 const wgt_operand *indices, int deferred, int ndim, const int64_t *shape) {
    RECORD(WGT_NODE_DEQUANTIZE, 0, 3, out, table, indices)
    if (indices) check_later(n, 2, table->shape[0], deferred, ndim, shape);
    return wgt_record(ctx, n);
}

wgt_status wgt_record_matmul_quantized(wgt_context *ctx, const char *fn, const wgt_operand *out, const wgt_operand *x,
                                       const wgt_operand *w, int int8) {
    RECORD(WGT_NODE_MATMUL_QUANTIZED, int8, 3, out, x, w)
    return wgt_record(ctx, n);
}

wgt_status wgt_record_conv(wgt_context *ctx, const char *fn, const wgt_operand *out, const wgt_operand *x,
                           const wgt_operand *w, const int64_t *params) {
    RECORD(WGT_NODE_CONV, 0, 3, out, x, w)
    memcpy(n->box, params, sizeof(int64_t) * 8);
    return wgt_record(ctx, n);
}

wgt_status wgt_record_random(wgt_context *ctx, const char *fn, const wgt_operand *out, const wgt_operand *key,
                             const wgt_random_params *p) {
    RECORD(WGT_NODE_RANDOM, (int)p->kind, 2, out, key)
    n->params[0] = p->a;
    n->params[1] = p->b;
    n->box[0] = (int64_t)p->seed;
    n->box[1] = (int64_t)p->count;
    memcpy(&n->box[2], &p->c, sizeof p->c); /* the float's bits, in a field that starts zeroed */
    n->bits = p->low;
    return wgt_record(ctx, n);
}
