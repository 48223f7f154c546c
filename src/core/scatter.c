/*
 * take, take_along_axis, scatter and index_add: the array API's indexing beyond row gathers,
 * built on the row kernels (gather_rows, set_rows, scatter_add_rows) of indexing.c.
 *
 * take is index_select for indices of any shape. take_along_axis and scatter address single
 * elements: their indices become linear positions into the contiguous tensor they index
 * (the other dimensions' part computed on the host from shapes alone, the axis' part
 * index * stride on the device), which then gather or scatter rows of one element. Indices
 * are checked against the axis length before they become positions, at the call where
 * their values are on the host, else through a checked copy (index_checks.c), so a message
 * names the caller's index, never a position. take and take_along_axis count negative
 * indices from the end, as NumPy and the array API do (wgt_wrap_negative_indices); scatter
 * and index_add, like the row ops, take [0, n) only.
 *
 * Under WGT_SCATTER_REPLACE the last of repeated positions (in row-major order of index)
 * wins, as in wgt_set_rows; under WGT_SCATTER_ADD and in index_add repeated positions sum,
 * f32 only, in more than f32 precision and rounded once (the backends' scatter_add_rows).
 * All of them return new tensors; their operands are never written.
 */
#include <stdlib.h>
#include <string.h>

#include "indexing.h"

#define AXIS_UNIT "entries along the axis"

static wgt_status check_args(const char *fn, wgt_tensor *a, const char *aname, wgt_tensor *indices) {
    wgt_status st;
    if ((st = wgt_check_tensor(fn, aname, a)) != WGT_OK ||
        (st = wgt_check_index_tensor(fn, "indices", indices)) != WGT_OK ||
        (st = wgt_check_same_context(fn, a, indices)) != WGT_OK)
        return st;
    return WGT_OK;
}

wgt_tensor *wgt_take(wgt_tensor *a, wgt_tensor *indices, int axis) {
    static const char fn[] = "wgt_take";
    int ax;
    if (check_args(fn, a, "a", indices) != WGT_OK || !wgt_normalize_axis(fn, axis, a->ndim, &ax)) return NULL;
    wgt_tensor *wrapped = wgt_wrap_negative_indices(fn, indices, a->shape[ax]);
    wgt_tensor *out = wrapped ? wgt_take_along(fn, a, ax, wrapped) : NULL;
    wgt_release(wrapped);
    return out;
}

/* Indices whose values are known to lie in [0, bound): indices itself when checked on the
 * host, else a copy checked on the device; NULL when a value is bad (the error set). */
static wgt_tensor *valid_indices(const char *fn, wgt_tensor *indices, int64_t bound) {
    /* 64-bit indices are narrowed and checked at once (on the host, or by the narrowing node). */
    if (wgt_dtype_size(indices->dtype) == 8) return wgt_index_narrow(fn, indices, bound, AXIS_UNIT);
    int deferred;
    if (wgt_check_index_values(fn, indices, bound, AXIS_UNIT, &deferred) != WGT_OK) return NULL;
    return deferred ? wgt_checked_indices(fn, indices, bound) : wgt_retain(indices);
}

/* Flat i32 positions [numel(idx)] into a contiguous tensor of shape `shape` (rank of idx,
 * idx's dimensions no longer than shape's except along ax): position p goes to p with its
 * ax coordinate replaced by idx[p]. idx holds valid values (valid_indices). */
static wgt_tensor *linear_positions(const char *fn, wgt_tensor *idx, int ax, const int64_t *shape) {
    int ndim = idx->ndim;
    int64_t cs[WGT_MAX_DIMS], m = wgt_numel(ndim, idx->shape);
    wgt_contiguous_strides(ndim, shape, cs);
    if (wgt_numel(ndim, shape) > INT32_MAX) {
        wgt_error(WGT_ERR_LIMIT, "%s: %lld elements are beyond the 2^31 - 1 this op addresses", fn,
                  (long long)wgt_numel(ndim, shape));
        return NULL;
    }
    int32_t *base = malloc((size_t)(m ? m : 1) * sizeof *base);
    if (!base) {
        wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory for %lld positions", fn, (long long)m);
        return NULL;
    }
    int64_t at[WGT_MAX_DIMS] = {0};
    for (int64_t i = 0; i < m; i++) {
        int64_t p = 0;
        for (int d = 0; d < ndim; d++)
            if (d != ax) p += at[d] * cs[d];
        base[i] = (int32_t)p;
        for (int d = ndim - 1; d >= 0 && ++at[d] == idx->shape[d]; d--) at[d] = 0;
    }
    wgt_context *ctx = idx->storage->ctx;
    int64_t flat = m;
    wgt_tensor *b = wgt_tensor_from_data(ctx, WGT_I32, 1, &flat, base, sizeof *base * (size_t)m, WGT_USAGE_DEFAULT);
    free(base);
    wgt_tensor *i32 = idx->dtype == WGT_I32 ? wgt_retain(idx) : wgt_cast(idx, WGT_I32);
    wgt_tensor *flat_idx = i32 ? wgt_reshape(i32, 1, &flat) : NULL;
    wgt_tensor *stride = wgt_scalar(ctx, WGT_I32, (double)cs[ax]);
    wgt_tensor *scaled = flat_idx && stride ? wgt_mul(flat_idx, stride) : NULL;
    wgt_tensor *out = b && scaled ? wgt_add(b, scaled) : NULL;
    wgt_tensor *all[] = {b, i32, flat_idx, stride, scaled};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) wgt_release(all[k]);
    return out;
}

wgt_tensor *wgt_take_along_axis(wgt_tensor *a, wgt_tensor *indices, int axis) {
    static const char fn[] = "wgt_take_along_axis";
    int ax;
    if (check_args(fn, a, "a", indices) != WGT_OK || !wgt_normalize_axis(fn, axis, a->ndim, &ax)) return NULL;
    char sa[256], si[256];
    wgt_format_shape(sa, sizeof sa, a->ndim, a->shape);
    wgt_format_shape(si, sizeof si, indices->ndim, indices->shape);
    if (indices->ndim != a->ndim) {
        wgt_error(WGT_ERR_SHAPE, "%s: indices of shape %s must have a's rank %d (a is %s)", fn, si, a->ndim, sa);
        return NULL;
    }
    /* Other dimensions broadcast; the axis takes the indices' length. */
    int64_t oshape[WGT_MAX_DIMS], tshape[WGT_MAX_DIMS];
    for (int d = 0; d < a->ndim; d++) {
        int64_t x = a->shape[d], y = indices->shape[d];
        if (d != ax && x != y && x != 1 && y != 1) {
            wgt_error(WGT_ERR_SHAPE, "%s: indices of shape %s do not broadcast with a of shape %s in dimension %d",
                      fn, si, sa, d);
            return NULL;
        }
        oshape[d] = d == ax ? y : x == 1 ? y : x;
        tshape[d] = d == ax ? x : oshape[d];
    }
    wgt_tensor *wrapped = wgt_wrap_negative_indices(fn, indices, a->shape[ax]);
    wgt_tensor *idx = wrapped ? valid_indices(fn, wrapped, a->shape[ax]) : NULL;
    wgt_release(wrapped);
    if (!idx) return NULL;
    wgt_context *ctx = a->storage->ctx;
    wgt_tensor *out = NULL, *ib = NULL, *ab = NULL, *table = NULL, *pos = NULL, *g = NULL;
    if (wgt_numel(a->ndim, oshape) == 0) {
        out = wgt_tensor_new(ctx, fn, a->dtype, a->ndim, oshape, WGT_USAGE_DEFAULT);
        goto done;
    }
    int64_t rows[2] = {wgt_numel(a->ndim, tshape), 1};
    if ((ib = wgt_broadcast_to(idx, a->ndim, oshape)) && (ab = wgt_broadcast_to(a, a->ndim, tshape)) &&
        (table = wgt_reshape(ab, 2, rows)) && (pos = linear_positions(fn, ib, ax, tshape)) &&
        (g = wgt_index_gather(fn, AXIS_UNIT, table, pos, 1)))
        out = wgt_reshape(g, a->ndim, oshape);
done:;
    wgt_tensor *all[] = {idx, ib, ab, table, pos, g};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) wgt_release(all[k]);
    return out;
}

/* A new contiguous tensor holding a's values (never a itself: the caller writes it). */
static wgt_tensor *fresh_copy(const char *fn, wgt_tensor *a) {
    wgt_tensor *out = wgt_tensor_new(a->storage->ctx, fn, a->dtype, a->ndim, a->shape, WGT_USAGE_DEFAULT);
    if (!out || wgt_tensor_numel(out) == 0) return out;
    wgt_operand src, dst;
    if (wgt_view_operand(a, a->ndim, a->shape, a->strides, &src) != WGT_OK || wgt_output_operand(out, &dst) != WGT_OK ||
        wgt_record_copy(a->storage->ctx, fn, &dst, &src) != WGT_OK) {
        wgt_release(out);
        return NULL;
    }
    return out;
}

/* dst [N, row...] (contiguous, ours) rows at pos (1-D) = or += rows [n, row...] (made
 * contiguous here); the indices' values are valid or, when deferred, checked by the node. */
static wgt_status scatter_rows(const char *fn, wgt_tensor *dst, wgt_tensor *pos, wgt_tensor *rows, int add,
                               int deferred) {
    wgt_tensor *src = wgt_contiguous(rows);
    if (!src) return wgt_last_status();
    int64_t n = wgt_numel(dst->ndim, dst->shape) / (dst->shape[0] ? dst->shape[0] : 1);
    int64_t dshape[2] = {dst->shape[0], n}, rshape[2] = {src->shape[0], n}, ds[2] = {n, 1}, rs[2] = {n, 1};
    wgt_operand od, oi, orr;
    wgt_status st;
    if ((st = wgt_check_kernel_size(fn, src)) == WGT_OK && (st = wgt_view_operand(dst, 2, dshape, ds, &od)) == WGT_OK &&
        (st = wgt_view_operand(pos, 1, pos->shape, pos->strides, &oi)) == WGT_OK &&
        (st = wgt_view_operand(src, 2, rshape, rs, &orr)) == WGT_OK)
        st = wgt_record_set_rows(dst->storage->ctx, fn, &od, &oi, &orr, deferred, add);
    wgt_release(src);
    return st;
}

wgt_tensor *wgt_scatter(wgt_tensor *base, int axis, wgt_tensor *index, wgt_tensor *src, wgt_scatter_mode mode) {
    static const char fn[] = "wgt_scatter";
    int ax;
    if (check_args(fn, base, "base", index) != WGT_OK || wgt_check_tensor(fn, "src", src) != WGT_OK ||
        wgt_check_same_context(fn, base, src) != WGT_OK || !wgt_normalize_axis(fn, axis, base->ndim, &ax))
        return NULL;
    if (mode != WGT_SCATTER_REPLACE && mode != WGT_SCATTER_ADD) {
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: mode %d is neither WGT_SCATTER_REPLACE nor WGT_SCATTER_ADD", fn,
                  (int)mode);
        return NULL;
    }
    if (src->dtype != base->dtype) {
        wgt_error(WGT_ERR_DTYPE, "%s: src is %s but base is %s; cast it first", fn, wgt_dtype_name(src->dtype),
                  wgt_dtype_name(base->dtype));
        return NULL;
    }
    if (mode == WGT_SCATTER_ADD && base->dtype != WGT_F32) {
        wgt_error(WGT_ERR_DTYPE, "%s: WGT_SCATTER_ADD takes f32, not %s", fn, wgt_dtype_name(base->dtype));
        return NULL;
    }
    char sb[256], si[256], ss[256];
    wgt_format_shape(sb, sizeof sb, base->ndim, base->shape);
    wgt_format_shape(si, sizeof si, index->ndim, index->shape);
    wgt_format_shape(ss, sizeof ss, src->ndim, src->shape);
    int fits = index->ndim == base->ndim;
    for (int d = 0; fits && d < base->ndim; d++) fits = d == ax || index->shape[d] <= base->shape[d];
    if (!fits) {
        wgt_error(WGT_ERR_SHAPE, "%s: index of shape %s must have base's rank and no longer dimensions than base %s "
                  "but along axis %d", fn, si, sb, ax);
        return NULL;
    }
    int bcast = src->ndim <= index->ndim;
    for (int d = 0; bcast && d < src->ndim; d++) {
        int64_t s = src->shape[src->ndim - 1 - d], i = index->shape[index->ndim - 1 - d];
        bcast = s == i || s == 1;
    }
    if (!bcast) {
        wgt_error(WGT_ERR_SHAPE, "%s: src of shape %s does not broadcast to index's shape %s", fn, ss, si);
        return NULL;
    }
    wgt_tensor *idx = valid_indices(fn, index, base->shape[ax]);
    if (!idx) return NULL;
    wgt_tensor *out = fresh_copy(fn, base), *pos = NULL, *sb2 = NULL, *rows = NULL;
    int64_t m = wgt_numel(index->ndim, index->shape), rshape[2] = {m, 1};
    if (out && m > 0) {
        int ok = (pos = linear_positions(fn, idx, ax, base->shape)) && (sb2 = wgt_broadcast_to(src, index->ndim, index->shape)) &&
                 (rows = wgt_reshape(sb2, 2, rshape));
        int64_t all[2] = {wgt_tensor_numel(out), 1};
        wgt_tensor *flat = ok ? wgt_reshape(out, 2, all) : NULL; /* a view: out is contiguous */
        if (!flat || scatter_rows(fn, flat, pos, rows, mode == WGT_SCATTER_ADD, 0) != WGT_OK) {
            wgt_release(out);
            out = NULL;
        }
        wgt_release(flat);
    }
    wgt_tensor *all[] = {idx, pos, sb2, rows};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) wgt_release(all[k]);
    return out;
}

wgt_tensor *wgt_index_add(wgt_tensor *a, int axis, wgt_tensor *indices, wgt_tensor *src) {
    static const char fn[] = "wgt_index_add";
    int ax;
    if (check_args(fn, a, "a", indices) != WGT_OK || wgt_check_tensor(fn, "src", src) != WGT_OK ||
        wgt_check_same_context(fn, a, src) != WGT_OK || !wgt_normalize_axis(fn, axis, a->ndim, &ax))
        return NULL;
    if (a->dtype != WGT_F32 || src->dtype != WGT_F32) {
        wgt_error(WGT_ERR_DTYPE, "%s: a and src must be f32, not %s and %s", fn, wgt_dtype_name(a->dtype),
                  wgt_dtype_name(src->dtype));
        return NULL;
    }
    char sa[256], si[256], ss[256];
    wgt_format_shape(sa, sizeof sa, a->ndim, a->shape);
    wgt_format_shape(si, sizeof si, indices->ndim, indices->shape);
    wgt_format_shape(ss, sizeof ss, src->ndim, src->shape);
    if (indices->ndim != 1) {
        wgt_error(WGT_ERR_SHAPE, "%s: indices must be 1-D, not of shape %s", fn, si);
        return NULL;
    }
    int fits = src->ndim == a->ndim;
    for (int d = 0; fits && d < a->ndim; d++) fits = src->shape[d] == (d == ax ? indices->shape[0] : a->shape[d]);
    if (!fits) {
        wgt_error(WGT_ERR_SHAPE, "%s: src of shape %s does not fit: %lld indices along axis %d of a %s", fn, ss,
                  (long long)indices->shape[0], ax, sa);
        return NULL;
    }
    wgt_tensor *idx = wgt_index_narrow(fn, indices, a->shape[ax], AXIS_UNIT);
    int deferred;
    if (!idx || wgt_check_index_values(fn, idx, a->shape[ax], AXIS_UNIT, &deferred) != WGT_OK) {
        wgt_release(idx);
        return NULL;
    }
    /* Views with the axis first make it a scatter of rows; the result moves it back. */
    int64_t shape[WGT_MAX_DIMS], strides[WGT_MAX_DIMS], sshape[WGT_MAX_DIMS], sstrides[WGT_MAX_DIMS];
    shape[0] = a->shape[ax], strides[0] = a->strides[ax];
    sshape[0] = src->shape[ax], sstrides[0] = src->strides[ax];
    for (int d = 0, k = 1; d < a->ndim; d++)
        if (d != ax) {
            shape[k] = a->shape[d], strides[k] = a->strides[d];
            sshape[k] = src->shape[d], sstrides[k++] = src->strides[d];
        }
    wgt_tensor *am = wgt_tensor_new_view(a, a->ndim, shape, strides, a->offset);
    wgt_tensor *sm = am ? wgt_tensor_new_view(src, src->ndim, sshape, sstrides, src->offset) : NULL;
    /* Recording a compiled graph (src or indices computed from graph inputs), the sums go
     * into a fresh tensor, which every replay starts from zeros, and a is added after: a
     * tensor holding data cannot take a graph's partial write (each replay would add onto
     * the last one's result). There a nonzero a rounds twice; gradients scatter into zeros. */
    int in_graph = src->storage->symbolic || idx->storage->symbolic;
    wgt_tensor *acc = !sm ? NULL
                      : in_graph ? wgt_tensor_new(a->storage->ctx, fn, a->dtype, am->ndim, am->shape, WGT_USAGE_DEFAULT)
                                 : fresh_copy(fn, am);
    wgt_tensor *out = NULL;
    if (acc && (wgt_numel(src->ndim, src->shape) == 0 ||
                scatter_rows(fn, acc, idx, sm, 1, deferred) == WGT_OK)) {
        int64_t cs[WGT_MAX_DIMS];
        wgt_contiguous_strides(a->ndim, shape, cs);
        shape[ax] = a->shape[ax], strides[ax] = cs[0];
        for (int d = 0, k = 1; d < a->ndim; d++)
            if (d != ax) shape[d] = acc->shape[k], strides[d] = cs[k++];
        out = wgt_tensor_new_view(acc, a->ndim, shape, strides, 0);
    }
    if (out && in_graph) {
        wgt_tensor *sum = wgt_add(a, out);
        wgt_release(out);
        out = sum;
    }
    wgt_release(idx);
    wgt_release(am);
    wgt_release(sm);
    wgt_release(acc);
    return out;
}
