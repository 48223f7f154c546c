/*
 * Indexing: gather_rows, index_select, set_rows, one_hot, triu and tril.
 *
 * Index tensors are i32, u32, i64 or u64 of any layout (the 64-bit ones narrowed to u32 by
 * index_types.c before anything else sees them). An index outside 0..N-1, a negative one
 * included, is WGT_ERR_INVALID_ARGUMENT: the shapes are fine, one value is not; the message
 * names the first such index's position in the index tensor, its value and the bound. Where
 * the values are on the host already they are checked at the call (the library's own look:
 * the caller's usage flags do not apply), which then fails and changes nothing. Values still
 * to be computed (an argmax feeding an embedding) are not waited for: the device checks them
 * when the op runs and the error comes with the next synchronisation (index_checks.c); the
 * kernels meanwhile keep in bounds (a gather gives zero rows, set_rows writes nothing).
 *
 * gather_rows hands the backend 1-D indices (any index tensor flattened: a view when the
 * layout allows, else a copy) and a table of any strides; index_select is a gather of a
 * view with the axis moved first, returned as a view with the axis moved back. set_rows
 * writes through dst's own strides, so dst may be any view that does not address an
 * element twice (a broadcast view is WGT_ERR_USAGE, as in wgt_tensor_write); operands that
 * share dst's storage are copied first so a kernel never reads what it writes. one_hot,
 * triu and tril are compositions of arange, comparisons, cast and where.
 */
#include <stdio.h>
#include <string.h>

#include "indexing.h"
#include "core/dtype_table.h"

/* Drops length-1 dimensions of a row and merges neighbours that chain in both operands'
 * strides, so a contiguous row reaches the kernels as one dimension. Works in place on
 * dimensions 1..ndim-1 (dimension 0 is the row index); returns the new rank. */
static int merge_row_dims(int ndim, int64_t *shape, int64_t *sa, int64_t *sb) {
    int n = 1;
    for (int d = 1; d < ndim; d++) {
        if (shape[d] == 1) continue;
        if (n > 1 && sa[n - 1] == sa[d] * shape[d] && sb[n - 1] == sb[d] * shape[d]) {
            shape[n - 1] *= shape[d];
            sa[n - 1] = sa[d];
            sb[n - 1] = sb[d];
            continue;
        }
        shape[n] = shape[d];
        sa[n] = sa[d];
        sb[n] = sb[d];
        n++;
    }
    return n;
}

/* 1-D view of any index tensor (rank 0 included): a view when the layout allows, else a
 * contiguous copy. */
static wgt_tensor *flat_indices(wgt_tensor *indices) {
    int64_t all = -1;
    return wgt_reshape(indices, 1, &all);
}

/* The gather itself: indices of 32 bits, their values checked at the call unless deferred. */
static wgt_tensor *gather(const char *fn, wgt_tensor *table, wgt_tensor *indices, int deferred) {
    int ondim = indices->ndim + table->ndim - 1;
    int64_t oshape[WGT_MAX_DIMS];
    memcpy(oshape, indices->shape, sizeof(int64_t) * (size_t)indices->ndim);
    for (int d = 1; d < table->ndim; d++) oshape[indices->ndim + d - 1] = table->shape[d];
    wgt_context *ctx = table->storage->ctx;
    int block = wgt_dtype_is_block(table->dtype); /* a quantized table gives f32 rows (docs/quant.md) */
    wgt_tensor *out = wgt_tensor_new(ctx, fn, block ? WGT_F32 : table->dtype, ondim, oshape, WGT_USAGE_DEFAULT);
    if (!out || wgt_tensor_numel(out) == 0) return out;
    wgt_tensor *flat = NULL;
    if (wgt_check_kernel_size(fn, out) != WGT_OK || !(flat = flat_indices(indices))) goto fail;
    /* The kernel sees table [N, row...] and out [n, row...] with the row dims merged. */
    int64_t shape[WGT_MAX_DIMS], ts[WGT_MAX_DIMS], os[WGT_MAX_DIMS];
    memcpy(shape, table->shape, sizeof shape);
    memcpy(ts, table->strides, sizeof ts);
    wgt_contiguous_strides(table->ndim, table->shape, os);
    int rndim = merge_row_dims(table->ndim, shape, ts, os);
    if (block && rndim != 2) {
        char s1[256];
        wgt_format_shape(s1, sizeof s1, table->ndim, table->shape);
        wgt_error(WGT_ERR_SHAPE, "%s: the rows of the %s table %s must be whole runs of blocks (a contiguous row)",
                  fn, wgt_dtype_name(table->dtype), s1);
        goto fail;
    }
    wgt_operand ot, oi, oo;
    if (wgt_view_operand(table, rndim, shape, ts, &ot) != WGT_OK ||
        wgt_view_operand(flat, 1, flat->shape, flat->strides, &oi) != WGT_OK ||
        wgt_output_operand(out, &oo) != WGT_OK)
        goto fail;
    oo.ndim = rndim;
    shape[0] = flat->shape[0];
    wgt_contiguous_strides(rndim, shape, oo.strides);
    memcpy(oo.shape, shape, sizeof oo.shape);
    if ((block ? wgt_record_dequantize(ctx, fn, &oo, &ot, &oi, deferred, indices->ndim, indices->shape)
               : wgt_record_gather_rows(ctx, fn, &oo, &ot, &oi, deferred, indices->ndim, indices->shape)) != WGT_OK)
        goto fail;
    wgt_release(flat);
    return out;
fail:
    wgt_release(flat);
    wgt_release(out);
    return NULL;
}

wgt_tensor *wgt_index_gather(const char *fn, const char *unit, wgt_tensor *table, wgt_tensor *indices, int trusted) {
    int ondim = indices->ndim + table->ndim - 1;
    if (ondim > WGT_MAX_DIMS) {
        char s1[256], s2[256];
        wgt_format_shape(s1, sizeof s1, indices->ndim, indices->shape);
        wgt_format_shape(s2, sizeof s2, table->ndim, table->shape);
        wgt_error(WGT_ERR_SHAPE, "%s: indices %s with table %s give rank %d, more than %d", fn, s1, s2, ondim,
                  WGT_MAX_DIMS);
        return NULL;
    }
    if (wgt_dtype_is_narrow(table->dtype)) {
        /* The gather kernels move unpacked elements: a narrow table is gathered in its exact
         * wide type (core/narrow.c) and the rows cast back. */
        wgt_tensor *wide = wgt_narrow_widen(table);
        wgt_tensor *g = wide ? wgt_index_gather(fn, unit, wide, indices, trusted) : NULL;
        wgt_release(wide);
        return wgt_narrow_cast_to(g, table->dtype);
    }
    if (trusted) return gather(fn, table, indices, 0);
    int deferred;
    wgt_tensor *idx = wgt_index_narrow(fn, indices, table->shape[0], unit), *out = NULL;
    if (idx && wgt_check_index_values(fn, idx, table->shape[0], unit, &deferred) == WGT_OK)
        out = gather(fn, table, idx, deferred);
    wgt_release(idx);
    return out;
}

wgt_tensor *wgt_gather_rows(wgt_tensor *table, wgt_tensor *indices) {
    static const char fn[] = "wgt_gather_rows";
    if (wgt_check_tensor(fn, "table", table) != WGT_OK || wgt_check_index_tensor(fn, "indices", indices) != WGT_OK ||
        wgt_check_same_context(fn, table, indices) != WGT_OK)
        return NULL;
    if (table->ndim < 1) {
        wgt_error(WGT_ERR_SHAPE, "%s: the table has rank 0; it needs rank >= 1 (rows along dimension 0)", fn);
        return NULL;
    }
    return wgt_index_gather(fn, "rows", table, indices, 0);
}

wgt_tensor *wgt_take_along(const char *fn, wgt_tensor *a, int ax, wgt_tensor *indices) {
    /* A view with the axis first makes the selection a row gather. */
    int64_t shape[WGT_MAX_DIMS], strides[WGT_MAX_DIMS];
    shape[0] = a->shape[ax];
    strides[0] = a->strides[ax];
    for (int d = 0, k = 1; d < a->ndim; d++)
        if (d != ax) shape[k] = a->shape[d], strides[k++] = a->strides[d];
    wgt_tensor *moved = wgt_tensor_new_view(a, a->ndim, shape, strides, a->offset);
    if (!moved) return NULL;
    char unit[64];
    snprintf(unit, sizeof unit, "entries along axis %d", ax);
    wgt_tensor *g = wgt_index_gather(fn, unit, moved, indices, 0);
    wgt_release(moved);
    if (!g) return NULL;
    /* g is [indices..., others...]: put the index dimensions where the axis was. */
    int k = indices->ndim, n = 0;
    for (int d = 0; d < ax; d++) shape[n] = g->shape[k + d], strides[n++] = g->strides[k + d];
    for (int d = 0; d < k; d++) shape[n] = g->shape[d], strides[n++] = g->strides[d];
    for (int d = ax + 1; d < a->ndim; d++) shape[n] = g->shape[k + d - 1], strides[n++] = g->strides[k + d - 1];
    wgt_tensor *out = wgt_tensor_new_view(g, n, shape, strides, g->offset);
    wgt_release(g);
    return out;
}

wgt_tensor *wgt_index_select(wgt_tensor *a, int axis, wgt_tensor *indices) {
    static const char fn[] = "wgt_index_select";
    int ax;
    if (wgt_check_tensor(fn, "a", a) != WGT_OK || wgt_check_index_tensor(fn, "indices", indices) != WGT_OK ||
        wgt_check_same_context(fn, a, indices) != WGT_OK || !wgt_normalize_axis(fn, axis, a->ndim, &ax))
        return NULL;
    if (indices->ndim != 1) {
        char s[256];
        wgt_format_shape(s, sizeof s, indices->ndim, indices->shape);
        wgt_error(WGT_ERR_SHAPE, "%s: indices must be 1-D, not of shape %s", fn, s);
        return NULL;
    }
    return wgt_take_along(fn, a, ax, indices);
}

/* set_rows' write, its arguments checked: indices of 32 bits, their values checked at the
 * call unless deferred. */
static wgt_status write_rows(const char *fn, wgt_tensor *dst, wgt_tensor *indices, wgt_tensor *rows, int deferred) {
    wgt_status st;
    if (wgt_numel(rows->ndim, rows->shape) == 0) return WGT_OK;
    if ((st = wgt_check_kernel_size(fn, rows)) != WGT_OK) return st;
    /* A kernel must not read the storage it writes: such operands are copied first. */
    wgt_tensor *src = rows->storage == dst->storage ? wgt_contiguous(rows) : wgt_retain(rows);
    wgt_tensor *idx = indices->storage == dst->storage ? wgt_contiguous(indices) : wgt_retain(indices);
    wgt_context *ctx = dst->storage->ctx;
    st = WGT_OK;
    if (!src || !idx) {
        st = wgt_last_status() != WGT_OK ? wgt_last_status() : WGT_ERR_INTERNAL;
    } else {
        int64_t n = indices->shape[0], shape[WGT_MAX_DIMS], ds[WGT_MAX_DIMS], rs[WGT_MAX_DIMS];
        memcpy(shape, dst->shape, sizeof shape);
        memcpy(ds, dst->strides, sizeof ds);
        memcpy(rs, src->strides, sizeof rs);
        int rndim = merge_row_dims(dst->ndim, shape, ds, rs);
        wgt_operand od, oi, orr;
        if ((st = wgt_view_operand(dst, rndim, shape, ds, &od)) == WGT_OK &&
            (st = wgt_view_operand(idx, 1, idx->shape, idx->strides, &oi)) == WGT_OK) {
            shape[0] = n;
            if ((st = wgt_view_operand(src, rndim, shape, rs, &orr)) == WGT_OK)
                st = wgt_record_set_rows(ctx, fn, &od, &oi, &orr, deferred, 0);
        }
    }
    wgt_release(src);
    wgt_release(idx);
    return st;
}

wgt_status wgt_set_rows(wgt_tensor *dst, wgt_tensor *indices, wgt_tensor *rows) {
    static const char fn[] = "wgt_set_rows";
    wgt_status st;
    if ((st = wgt_check_tensor(fn, "dst", dst)) != WGT_OK ||
        (st = wgt_check_index_tensor(fn, "indices", indices)) != WGT_OK ||
        (st = wgt_check_tensor(fn, "rows", rows)) != WGT_OK ||
        (st = wgt_check_same_context(fn, dst, indices)) != WGT_OK ||
        (st = wgt_check_same_context(fn, dst, rows)) != WGT_OK)
        return st;
    if (!(dst->usage & WGT_USAGE_WRITABLE))
        return wgt_error(WGT_ERR_USAGE, "%s: dst was created without the writable usage", fn);
    if (rows->dtype != dst->dtype)
        return wgt_error(WGT_ERR_DTYPE, "%s: rows are %s but dst is %s; cast them first", fn,
                         wgt_dtype_name(rows->dtype), wgt_dtype_name(dst->dtype));
    char sd[256], si[256], sr[256];
    wgt_format_shape(sd, sizeof sd, dst->ndim, dst->shape);
    wgt_format_shape(si, sizeof si, indices->ndim, indices->shape);
    wgt_format_shape(sr, sizeof sr, rows->ndim, rows->shape);
    if (dst->ndim < 1)
        return wgt_error(WGT_ERR_SHAPE, "%s: dst has rank 0; it needs rank >= 1 (rows along dimension 0)", fn);
    if (indices->ndim != 1) return wgt_error(WGT_ERR_SHAPE, "%s: indices must be 1-D, not of shape %s", fn, si);
    int64_t n = indices->shape[0], want[WGT_MAX_DIMS];
    want[0] = n;
    memcpy(want + 1, dst->shape + 1, sizeof(int64_t) * (size_t)(dst->ndim - 1));
    int same = rows->ndim == dst->ndim;
    for (int d = 0; same && d < dst->ndim; d++) same = rows->shape[d] == want[d];
    if (!same) {
        char sw[256];
        wgt_format_shape(sw, sizeof sw, dst->ndim, want);
        return wgt_error(WGT_ERR_SHAPE,
                         "%s: rows of shape %s do not fit: %lld indices into dst of shape %s need rows of shape %s", fn,
                         sr, (long long)n, sd, sw);
    }
    if (wgt_view_overlaps_itself(dst->ndim, dst->shape, dst->strides))
        return wgt_error(WGT_ERR_USAGE,
                         "%s: dst of shape %s addresses some elements more than once (a broadcast view); "
                         "write the tensor it was made from", fn, sd);
    wgt_tensor *idx = wgt_index_narrow(fn, indices, dst->shape[0], "rows");
    if (!idx) return wgt_last_status();
    int deferred;
    if ((st = wgt_check_index_values(fn, idx, dst->shape[0], "rows", &deferred)) == WGT_OK)
        st = write_rows(fn, dst, idx, rows, deferred);
    wgt_release(idx);
    return st;
}

static wgt_tensor *compose_one_hot(const char *fn, wgt_tensor *indices, int64_t classes, wgt_dtype dtype);

wgt_tensor *wgt_checked_indices(const char *fn, wgt_tensor *indices, int64_t bound) {
    wgt_tensor *flat = flat_indices(indices), *copy = NULL, *out = NULL;
    if (flat) copy = wgt_tensor_new(indices->storage->ctx, fn, indices->dtype, 1, flat->shape, WGT_USAGE_DEFAULT);
    wgt_operand src, dst;
    if (copy && wgt_view_operand(flat, 1, flat->shape, flat->strides, &src) == WGT_OK &&
        wgt_output_operand(copy, &dst) == WGT_OK &&
        wgt_record_copy_checked(indices->storage->ctx, fn, &dst, &src, bound, indices->ndim, indices->shape) == WGT_OK)
        out = wgt_reshape(copy, indices->ndim, indices->shape);
    wgt_release(flat);
    wgt_release(copy);
    return out;
}

wgt_tensor *wgt_one_hot(wgt_tensor *indices, int64_t classes, wgt_dtype dtype) {
    static const char fn[] = "wgt_one_hot";
    if (wgt_check_index_tensor(fn, "indices", indices) != WGT_OK || wgt_check_dtype(fn, dtype) != WGT_OK)
        return NULL;
    if (classes < 1) {
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: classes is %lld; it must be at least 1", fn, (long long)classes);
        return NULL;
    }
    /* The comparison runs in the indices' type, whose range every valid index lies in. */
    if (classes > INT32_MAX) {
        wgt_error(WGT_ERR_LIMIT, "%s: %lld classes are more than the %d supported", fn, (long long)classes, INT32_MAX);
        return NULL;
    }
    if (indices->ndim + 1 > WGT_MAX_DIMS) {
        wgt_error(WGT_ERR_SHAPE, "%s: indices of rank %d give rank %d, more than %d", fn, indices->ndim,
                  indices->ndim + 1, WGT_MAX_DIMS);
        return NULL;
    }
    if (wgt_dtype_size(indices->dtype) == 8) {
        /* Narrowed and checked (on the device: bad values become 0xffffffff, no class). */
        wgt_tensor *narrow = wgt_index_narrow(fn, indices, classes, "classes");
        wgt_tensor *out = narrow ? compose_one_hot(fn, narrow, classes, dtype) : NULL;
        wgt_release(narrow);
        return out;
    }
    int deferred;
    if (wgt_check_index_values(fn, indices, classes, "classes", &deferred) != WGT_OK) return NULL;
    if (deferred) {
        /* Values not on the host yet are checked when they exist, through a checked copy. */
        wgt_tensor *checked = wgt_checked_indices(fn, indices, classes);
        if (!checked) return NULL;
        wgt_tensor *out = compose_one_hot(fn, checked, classes, dtype);
        wgt_release(checked);
        return out;
    }
    return compose_one_hot(fn, indices, classes, dtype);
}

/* indices [..., 1] == arange(classes) broadcasts to [..., classes]; indices already checked. */
static wgt_tensor *compose_one_hot(const char *fn, wgt_tensor *indices, int64_t classes, wgt_dtype dtype) {
    int64_t shape[WGT_MAX_DIMS], strides[WGT_MAX_DIMS];
    memcpy(shape, indices->shape, sizeof shape);
    memcpy(strides, indices->strides, sizeof strides);
    if (wgt_numel(indices->ndim, indices->shape) == 0) { /* no arange(classes) for an empty result */
        shape[indices->ndim] = classes;
        return wgt_tensor_new(indices->storage->ctx, fn, dtype, indices->ndim + 1, shape, WGT_USAGE_DEFAULT);
    }
    shape[indices->ndim] = 1;
    strides[indices->ndim] = 0;
    wgt_tensor *col = wgt_tensor_new_view(indices, indices->ndim + 1, shape, strides, indices->offset);
    wgt_tensor *ar = col ? wgt_arange(indices->storage->ctx, indices->dtype, 0, (double)classes, 1) : NULL;
    wgt_tensor *eq = ar ? wgt_eq(col, ar) : NULL;
    wgt_tensor *out = !eq ? NULL : wgt_cast(eq, dtype);
    wgt_release(col);
    wgt_release(ar);
    wgt_release(eq);
    return out;
}

/* Keeps element (i, j) of the last two dimensions where j - i >= diagonal (upper) or
 * j - i <= diagonal (lower), else 0: a [M, N] mask from two aranges, then where. */
static wgt_tensor *triangle(const char *fn, wgt_tensor *a, int64_t diagonal, int upper) {
    if (wgt_check_tensor(fn, "a", a) != WGT_OK) return NULL;
    if (a->ndim < 2) {
        char s[256];
        wgt_format_shape(s, sizeof s, a->ndim, a->shape);
        wgt_error(WGT_ERR_SHAPE, "%s: needs rank >= 2 (a matrix or a batch of them), not shape %s", fn, s);
        return NULL;
    }
    int64_t m = a->shape[a->ndim - 2], n = a->shape[a->ndim - 1];
    /* Nothing to mask: an empty a may still have huge matrix dimensions ([0, 2^16, 2^16]). */
    if (wgt_numel(a->ndim, a->shape) == 0)
        return wgt_tensor_new(a->storage->ctx, fn, a->dtype, a->ndim, a->shape, WGT_USAGE_DEFAULT);
    if (m > INT32_MAX || n > INT32_MAX) {
        wgt_error(WGT_ERR_LIMIT, "%s: a %lld x %lld matrix is beyond the %d rows or columns supported", fn,
                  (long long)m, (long long)n, INT32_MAX);
        return NULL;
    }
    /* j - i lies in [-(m-1), n-1]; beyond that the mask is constant, so clamping keeps the
     * diagonal exact in i32. */
    if (diagonal < -m) diagonal = -m;
    if (diagonal > n) diagonal = n;
    wgt_context *ctx = a->storage->ctx;
    wgt_tensor *rows = wgt_arange(ctx, WGT_I32, 0, (double)m, 1), *cols = wgt_arange(ctx, WGT_I32, 0, (double)n, 1);
    wgt_tensor *col = NULL, *diff = NULL, *d = NULL, *mask = NULL, *zero = NULL, *out = NULL;
    if (rows && cols) {
        int64_t shape[2] = {m, 1}, strides[2] = {1, 0};
        col = wgt_tensor_new_view(rows, 2, shape, strides, 0); /* i as [M, 1] */
    }
    if (col) diff = wgt_sub(cols, col); /* j - i, [M, N] */
    if (diff) d = wgt_scalar(ctx, WGT_I32, (double)diagonal);
    if (d) mask = upper ? wgt_ge(diff, d) : wgt_le(diff, d);
    if (mask) zero = wgt_zeros(ctx, a->dtype, 0, NULL);
    if (zero) out = wgt_where(mask, a, zero);
    wgt_tensor *all[] = {rows, cols, col, diff, d, mask, zero};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) wgt_release(all[k]);
    return out;
}

wgt_tensor *wgt_triu(wgt_tensor *a, int64_t diagonal) { return triangle("wgt_triu", a, diagonal, 1); }
wgt_tensor *wgt_tril(wgt_tensor *a, int64_t diagonal) { return triangle("wgt_tril", a, diagonal, 0); }
