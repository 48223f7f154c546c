/*
 * Shape ops. permute, squeeze, unsqueeze, expand, flip and split are views: new shapes,
 * strides and offsets over the same storage. concat, stack and pad make new tensors through
 * the backend: concat and stack write each input into its box of a fresh output
 * (write_box), pad gathers its input into a larger output filled with a value (pad).
 * Every argument is validated before anything is created, so a failing call leaves no
 * tensor behind and names the offending axis, index or shape.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "node.h"

static void format_axes(char *buf, size_t size, int n, const int *axes) {
    int64_t wide[WGT_MAX_DIMS];
    int k = n < WGT_MAX_DIMS ? n : WGT_MAX_DIMS;
    for (int i = 0; i < k; i++) wide[i] = axes[i];
    wgt_format_shape(buf, size, k, wide);
}

/* Checks an axes list against rank ndim: each in range (negative counts from the end) and
 * none repeated. seen[d] is set for each listed axis. */
static int normalize_axes(const char *fn, int n, const int *axes, int ndim, int *seen) {
    memset(seen, 0, sizeof(int) * WGT_MAX_DIMS);
    for (int i = 0; i < n; i++) {
        int a = axes[i] < 0 ? axes[i] + ndim : axes[i];
        char s[128];
        if (a < 0 || a >= ndim) {
            format_axes(s, sizeof s, n, axes);
            wgt_error(WGT_ERR_SHAPE, "%s: axis %d (entry %d of axes %s) is out of range for rank %d", fn, axes[i], i, s,
                      ndim);
            return 0;
        }
        if (seen[a]) {
            format_axes(s, sizeof s, n, axes);
            wgt_error(WGT_ERR_SHAPE, "%s: axis %d appears twice in axes %s", fn, a, s);
            return 0;
        }
        seen[a] = 1;
    }
    return 1;
}

wgt_tensor *wgt_permute(wgt_tensor *a, const int *axes) {
    static const char fn[] = "wgt_permute";
    if (wgt_check_tensor(fn, "a", a) != WGT_OK) return NULL;
    if (a->ndim > 0 && !axes) {
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: axes is NULL for rank %d", fn, a->ndim);
        return NULL;
    }
    int seen[WGT_MAX_DIMS];
    /* ndim distinct in-range axes are a permutation: no separate completeness check. */
    if (!normalize_axes(fn, a->ndim, axes, a->ndim, seen)) return NULL;
    int64_t shape[WGT_MAX_DIMS], strides[WGT_MAX_DIMS];
    for (int i = 0; i < a->ndim; i++) {
        int src = axes[i] < 0 ? axes[i] + a->ndim : axes[i];
        shape[i] = a->shape[src];
        strides[i] = a->strides[src];
    }
    return wgt_tensor_new_view(a, a->ndim, shape, strides, a->offset);
}

wgt_tensor *wgt_squeeze(wgt_tensor *a, int axis) {
    static const char fn[] = "wgt_squeeze";
    int ax;
    if (wgt_check_tensor(fn, "a", a) != WGT_OK || !wgt_normalize_axis(fn, axis, a->ndim, &ax)) return NULL;
    if (a->shape[ax] != 1) {
        char s[256];
        wgt_format_shape(s, sizeof s, a->ndim, a->shape);
        wgt_error(WGT_ERR_SHAPE, "%s: axis %d of shape %s has length %lld; only a length-1 axis can be squeezed", fn,
                  axis, s, (long long)a->shape[ax]);
        return NULL;
    }
    int64_t shape[WGT_MAX_DIMS], strides[WGT_MAX_DIMS];
    for (int i = 0, j = 0; i < a->ndim; i++) {
        if (i == ax) continue;
        shape[j] = a->shape[i];
        strides[j++] = a->strides[i];
    }
    if (wgt_check_block_view(fn, a->dtype, a->ndim - 1, shape, strides, a->offset) != WGT_OK) return NULL;
    return wgt_tensor_new_view(a, a->ndim - 1, shape, strides, a->offset);
}

/* The shape and strides of t with a length-1 dimension inserted at ax (0..ndim). The new
 * stride is what a contiguous layout would give, so contiguity is unchanged. It is computed
 * wrapping: an empty tensor's strides may already have wrapped (wgt_contiguous_strides), and
 * they never address anything; a non-empty view's stride times its length stays in range. */
static void insert_unit_dim(const wgt_tensor *t, int ax, int64_t *shape, int64_t *strides) {
    for (int i = 0, j = 0; i <= t->ndim; i++) {
        if (i == ax) {
            shape[i] = 1;
            strides[i] = ax < t->ndim
                             ? (int64_t)((uint64_t)t->strides[ax] * (uint64_t)(t->shape[ax] > 0 ? t->shape[ax] : 1))
                             : 1;
            continue;
        }
        shape[i] = t->shape[j];
        strides[i] = t->strides[j++];
    }
}

/* Axis for inserting a dimension into rank ndim: -(ndim+1)..ndim, and room for it. */
static int insert_axis(const char *fn, int axis, int ndim, int *out) {
    if (ndim >= WGT_MAX_DIMS) {
        wgt_error(WGT_ERR_SHAPE, "%s: rank %d already has the most dimensions a tensor can have (%d)", fn, ndim,
                  WGT_MAX_DIMS);
        return 0;
    }
    int a = axis < 0 ? axis + ndim + 1 : axis;
    if (a < 0 || a > ndim) {
        wgt_error(WGT_ERR_SHAPE, "%s: axis %d is out of range for inserting into rank %d (%d..%d)", fn, axis, ndim,
                  -(ndim + 1), ndim);
        return 0;
    }
    *out = a;
    return 1;
}

wgt_tensor *wgt_unsqueeze(wgt_tensor *a, int axis) {
    static const char fn[] = "wgt_unsqueeze";
    int ax;
    if (wgt_check_tensor(fn, "a", a) != WGT_OK || !insert_axis(fn, axis, a->ndim, &ax)) return NULL;
    int64_t shape[WGT_MAX_DIMS], strides[WGT_MAX_DIMS];
    insert_unit_dim(a, ax, shape, strides);
    if (wgt_check_block_view(fn, a->dtype, a->ndim + 1, shape, strides, a->offset) != WGT_OK) return NULL;
    return wgt_tensor_new_view(a, a->ndim + 1, shape, strides, a->offset);
}

wgt_tensor *wgt_expand(wgt_tensor *a, int ndim, const int64_t *shape_in) {
    static const char fn[] = "wgt_expand";
    if (wgt_check_tensor(fn, "a", a) != WGT_OK) return NULL;
    if (ndim < 0 || ndim > WGT_MAX_DIMS || (ndim > 0 && !shape_in)) {
        wgt_check_shape(fn, ndim, shape_in, NULL);
        return NULL;
    }
    char s1[256], s2[256];
    wgt_format_shape(s1, sizeof s1, a->ndim, a->shape);
    wgt_format_shape(s2, sizeof s2, ndim, shape_in);
    if (ndim < a->ndim) {
        wgt_error(WGT_ERR_SHAPE, "%s: shape %s has fewer dimensions than a's %s", fn, s2, s1);
        return NULL;
    }
    int lead = ndim - a->ndim;
    int64_t shape[WGT_MAX_DIMS];
    for (int i = 0; i < ndim; i++) {
        shape[i] = shape_in[i];
        if (shape[i] == -1 && i >= lead) shape[i] = a->shape[i - lead];
        else if (shape[i] == -1) {
            wgt_error(WGT_ERR_SHAPE, "%s: -1 at dimension %d of %s is a new leading dimension, with none of a's "
                      "to keep", fn, i, s2);
            return NULL;
        } else if (shape[i] < 0) {
            wgt_error(WGT_ERR_SHAPE, "%s: dimension %d of %s is %lld; only -1 (keep) may be negative", fn, i, s2,
                      (long long)shape[i]);
            return NULL;
        }
    }
    if (wgt_check_shape(fn, ndim, shape, NULL) != WGT_OK) return NULL;
    for (int i = 0; i < a->ndim; i++) {
        int64_t have = a->shape[i], want = shape[lead + i];
        if (have != want && have != 1) {
            wgt_format_shape(s2, sizeof s2, ndim, shape);
            wgt_error(WGT_ERR_SHAPE, "%s: shape %s cannot expand to %s (dimension %d: %lld is neither %lld nor 1)", fn,
                      s1, s2, lead + i, (long long)have, (long long)want);
            return NULL;
        }
    }
    int64_t strides[WGT_MAX_DIMS];
    wgt_broadcast_strides(a, ndim, shape, strides);
    return wgt_tensor_new_view(a, ndim, shape, strides, a->offset);
}

/* naxes 0 flips every axis, as naxes 0 means every axis for the reductions. */
wgt_tensor *wgt_flip(wgt_tensor *a, int naxes, const int *axes) {
    static const char fn[] = "wgt_flip";
    if (wgt_check_tensor(fn, "a", a) != WGT_OK) return NULL;
    if (naxes < 0 || naxes > a->ndim) {
        wgt_error(WGT_ERR_SHAPE, "%s: naxes %d is out of range for rank %d (0..%d)", fn, naxes, a->ndim, a->ndim);
        return NULL;
    }
    if (naxes > 0 && !axes) {
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: axes is NULL for naxes %d", fn, naxes);
        return NULL;
    }
    int seen[WGT_MAX_DIMS];
    if (!normalize_axes(fn, naxes, axes, a->ndim, seen)) return NULL;
    int64_t shape[WGT_MAX_DIMS], strides[WGT_MAX_DIMS], offset = a->offset;
    /* An empty view addresses nothing, and its strides may be arbitrary: its offset stays. */
    int empty = wgt_numel(a->ndim, a->shape) == 0;
    for (int i = 0; i < a->ndim; i++) {
        shape[i] = a->shape[i];
        strides[i] = a->strides[i];
        if (naxes == 0 || seen[i]) { /* start at the last element and step back */
            if (!empty) offset += (a->shape[i] - 1) * a->strides[i];
            /* Negated wrapping: a length-1 or empty dimension may carry any stride, INT64_MIN too. */
            strides[i] = (int64_t)(0 - (uint64_t)a->strides[i]);
        }
    }
    return wgt_tensor_new_view(a, a->ndim, shape, strides, offset);
}

wgt_status wgt_split(wgt_tensor *a, int axis, int count, const int64_t *sizes, wgt_tensor **out) {
    static const char fn[] = "wgt_split";
    int ax;
    wgt_status st = wgt_check_tensor(fn, "a", a);
    if (st != WGT_OK) return st;
    if (!wgt_normalize_axis(fn, axis, a->ndim, &ax)) return WGT_ERR_SHAPE;
    if (count < 1) return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: count is %d; at least 1 piece is needed", fn, count);
    if (!sizes || !out)
        return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, !sizes ? "sizes" : "out");
    int64_t len = a->shape[ax], sum = 0;
    for (int k = 0; k < count; k++) {
        if (sizes[k] < 0)
            return wgt_error(WGT_ERR_SHAPE, "%s: sizes[%d] is negative (%lld)", fn, k, (long long)sizes[k]);
        /* Compared before adding, so a long list of huge sizes cannot overflow the sum. */
        if (sizes[k] > len - sum)
            return wgt_error(WGT_ERR_SHAPE, "%s: sizes[0..%d] already exceed the length %lld of axis %d", fn, k,
                             (long long)len, axis);
        sum += sizes[k];
    }
    if (sum != len)
        return wgt_error(WGT_ERR_SHAPE, "%s: the %d sizes sum to %lld, not the length %lld of axis %d", fn, count,
                         (long long)sum, (long long)len, axis);
    /* Built aside and handed over only when all exist: on failure out stays untouched. */
    wgt_tensor **pieces = calloc((size_t)count, sizeof *pieces);
    if (!pieces) return wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory for %d pieces", fn, count);
    int64_t shape[WGT_MAX_DIMS], pos = 0;
    memcpy(shape, a->shape, sizeof shape);
    for (int k = 0; k < count; k++) {
        shape[ax] = sizes[k];
        /* An empty piece addresses nothing: its offset stays (its strides may be arbitrary). */
        int64_t offset = a->offset + (wgt_numel(a->ndim, shape) > 0 ? pos * a->strides[ax] : 0);
        pieces[k] = wgt_check_block_view(fn, a->dtype, a->ndim, shape, a->strides, offset) == WGT_OK
                        ? wgt_tensor_new_view(a, a->ndim, shape, a->strides, offset)
                        : NULL;
        if (!pieces[k]) {
            for (int j = 0; j < k; j++) wgt_release(pieces[j]);
            free(pieces);
            return wgt_last_status();
        }
        pos += sizes[k];
    }
    memcpy(out, pieces, (size_t)count * sizeof *pieces);
    free(pieces);
    return WGT_OK;
}

/* ---- new tensors: concat, stack, pad --------------------------------------------------- */

/* count, the array, each tensor, and one context and dtype for all. */
static wgt_status check_list(const char *fn, wgt_tensor *const *tensors, int count) {
    if (count < 1)
        return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: count is %d; at least 1 tensor is needed", fn, count);
    if (!tensors) return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: tensors is NULL for count %d", fn, count);
    char name[32];
    for (int k = 0; k < count; k++) {
        snprintf(name, sizeof name, "tensors[%d]", k);
        wgt_status st = wgt_check_tensor(fn, name, tensors[k]);
        if (st != WGT_OK) return st;
    }
    const wgt_tensor *t0 = tensors[0];
    for (int k = 1; k < count; k++) {
        const wgt_tensor *t = tensors[k];
        if (t->storage->ctx != t0->storage->ctx)
            return wgt_error(WGT_ERR_CONTEXT_MISMATCH,
                             "%s: tensors[%d] belongs to another context (%s) than tensors[0] (%s)", fn, k,
                             wgt_context_device_name(t->storage->ctx), wgt_context_device_name(t0->storage->ctx));
        if (t->dtype != t0->dtype)
            return wgt_error(WGT_ERR_DTYPE, "%s: tensors[%d] is %s but tensors[0] is %s; cast first", fn, k,
                             wgt_dtype_name(t->dtype), wgt_dtype_name(t0->dtype));
    }
    return WGT_OK;
}

/* tensors[k] must match tensors[0] in rank and in every dimension but `skip` (-1: all). */
static wgt_status check_dims(const char *fn, wgt_tensor *const *tensors, int count, int skip, const char *why) {
    const wgt_tensor *t0 = tensors[0];
    for (int k = 1; k < count; k++) {
        const wgt_tensor *t = tensors[k];
        int bad = t->ndim != t0->ndim ? -2 : -1;
        for (int d = 0; bad == -1 && d < t0->ndim; d++)
            if (d != skip && t->shape[d] != t0->shape[d]) bad = d;
        if (bad == -1) continue;
        char s0[256], sk[256], detail[64] = "ranks differ";
        wgt_format_shape(s0, sizeof s0, t0->ndim, t0->shape);
        wgt_format_shape(sk, sizeof sk, t->ndim, t->shape);
        if (bad >= 0) snprintf(detail, sizeof detail, "dimension %d differs", bad);
        return wgt_error(WGT_ERR_SHAPE, "%s: tensors[%d] has shape %s but tensors[0] has %s (%s; %s)", fn, k, sk, s0,
                         detail, why);
    }
    return WGT_OK;
}

/* The shared body of concat and stack, after validation: a fresh output of out_shape, and
 * each input written into its box along ax. With `stacking`, each input is seen with a
 * length-1 dimension inserted at ax (an unsqueezed view, made as an operand directly). */
static wgt_tensor *write_boxes(const char *fn, wgt_tensor *const *tensors, int count, int ax, int stacking,
                               int out_ndim, const int64_t *out_shape) {
    wgt_context *ctx = tensors[0]->storage->ctx;
    wgt_tensor *out = wgt_tensor_new(ctx, fn, tensors[0]->dtype, out_ndim, out_shape, WGT_USAGE_DEFAULT);
    if (!out) return NULL;
    if (wgt_tensor_numel(out) == 0) return out;
    wgt_operand dst;
    if (wgt_check_kernel_size(fn, out) != WGT_OK || wgt_output_operand(out, &dst) != WGT_OK) goto fail;
    /* Parts computed from graph inputs are written first: once one of them has written into
     * out, out is a graph value and the parts that hold data join it; the other order would
     * make out a tensor with data that graph inputs then write into, which is refused. The
     * boxes do not overlap, so the order of the writes does not change the result. */
    for (int from_inputs = 1; from_inputs >= 0; from_inputs--) {
        int64_t box_start[WGT_MAX_DIMS] = {0};
        for (int k = 0; k < count; k++) {
            wgt_tensor *t = tensors[k];
            int64_t shape[WGT_MAX_DIMS], strides[WGT_MAX_DIMS];
            if (stacking) insert_unit_dim(t, ax, shape, strides);
            else memcpy(shape, t->shape, sizeof shape), memcpy(strides, t->strides, sizeof strides);
            if (wgt_numel(out_ndim, shape) > 0 && (t->storage->symbolic != 0) == from_inputs) {
                wgt_operand src;
                if (wgt_view_operand(t, out_ndim, shape, strides, &src) != WGT_OK ||
                    wgt_record_write_box(ctx, fn, &dst, box_start, &src) != WGT_OK)
                    goto fail;
            }
            box_start[ax] += shape[ax];
        }
    }
    return out;
fail:
    wgt_release(out);
    return NULL;
}

wgt_tensor *wgt_concat(wgt_tensor *const *tensors, int count, int axis) {
    static const char fn[] = "wgt_concat";
    int ax;
    if (check_list(fn, tensors, count) != WGT_OK || !wgt_normalize_axis(fn, axis, tensors[0]->ndim, &ax)) return NULL;
    char why[64];
    snprintf(why, sizeof why, "only the concat axis %d may differ", axis);
    if (check_dims(fn, tensors, count, ax, why) != WGT_OK) return NULL;
    int64_t shape[WGT_MAX_DIMS];
    memcpy(shape, tensors[0]->shape, sizeof shape);
    shape[ax] = 0;
    for (int k = 0; k < count; k++) {
        /* Lengths may be huge when another dimension is 0: the sum must not overflow. */
        if (tensors[k]->shape[ax] > INT64_MAX - shape[ax]) {
            wgt_error(WGT_ERR_SHAPE, "%s: the lengths along axis %d overflow 64 bits at tensors[%d]", fn, axis, k);
            return NULL;
        }
        shape[ax] += tensors[k]->shape[ax];
    }
    return write_boxes(fn, tensors, count, ax, 0, tensors[0]->ndim, shape);
}

wgt_tensor *wgt_stack(wgt_tensor *const *tensors, int count, int axis) {
    static const char fn[] = "wgt_stack";
    int ax;
    if (check_list(fn, tensors, count) != WGT_OK || !insert_axis(fn, axis, tensors[0]->ndim, &ax) ||
        check_dims(fn, tensors, count, -1, "stacked tensors must have equal shapes") != WGT_OK)
        return NULL;
    const wgt_tensor *t0 = tensors[0];
    int64_t shape[WGT_MAX_DIMS];
    for (int i = 0, j = 0; i <= t0->ndim; i++) shape[i] = i == ax ? count : t0->shape[j++];
    return write_boxes(fn, tensors, count, ax, 1, t0->ndim + 1, shape);
}

wgt_tensor *wgt_pad(wgt_tensor *a, const int64_t *before, const int64_t *after, double value) {
    static const char fn[] = "wgt_pad";
    if (wgt_check_tensor(fn, "a", a) != WGT_OK || wgt_check_scalar(fn, "value", a->dtype, value) != WGT_OK)
        return NULL;
    if (a->ndim > 0 && (!before || !after)) {
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: %s is NULL for rank %d", fn, !before ? "before" : "after", a->ndim);
        return NULL;
    }
    int64_t shape[WGT_MAX_DIMS], widths[WGT_MAX_DIMS] = {0}; /* before, or zeros for rank 0 (may be NULL) */
    for (int d = 0; d < a->ndim; d++) {
        if (before[d] < 0 || after[d] < 0) {
            wgt_error(WGT_ERR_SHAPE, "%s: %s[%d] is negative (%lld); pad widths must be >= 0", fn,
                      before[d] < 0 ? "before" : "after", d, (long long)(before[d] < 0 ? before[d] : after[d]));
            return NULL;
        }
        if (before[d] > INT64_MAX - a->shape[d] || after[d] > INT64_MAX - a->shape[d] - before[d]) {
            wgt_error(WGT_ERR_SHAPE, "%s: dimension %d padded by %lld and %lld overflows 64 bits", fn, d,
                      (long long)before[d], (long long)after[d]);
            return NULL;
        }
        shape[d] = before[d] + a->shape[d] + after[d];
        widths[d] = before[d];
    }
    wgt_context *ctx = a->storage->ctx;
    wgt_tensor *out = wgt_tensor_new(ctx, fn, a->dtype, a->ndim, shape, WGT_USAGE_DEFAULT);
    if (!out) return NULL;
    if (wgt_tensor_numel(out) == 0) return out;
    wgt_operand src, dst;
    if (wgt_check_kernel_size(fn, out) != WGT_OK ||
        wgt_view_operand(a, a->ndim, a->shape, a->strides, &src) != WGT_OK || wgt_output_operand(out, &dst) != WGT_OK ||
        wgt_record_pad(ctx, fn, &dst, &src, widths, wgt_value_bits(a->dtype, value)) != WGT_OK) {
        wgt_release(out);
        return NULL;
    }
    return out;
}
