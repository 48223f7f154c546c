/*
 * Sorting and searching: sort, argsort, top-k and searchsorted. Every sort is one backend
 * call, sort_rows, over rows: the core moves the sorted axis last with a permuted view of
 * the input (nothing is copied), asks for the first k elements of each sorted row (k = the
 * row's length for sort and argsort) in contiguous outputs, and hands the results back
 * permuted to the caller's axis order, as softmax does. One node writes both the values and
 * the indices: argsort and top-k get both from one sort.
 */
#include <string.h>

#include "node.h"

static wgt_status check_sortable(const char *fn, const char *name, const wgt_tensor *a) {
    switch (a->dtype) {
    case WGT_F32: case WGT_F16: case WGT_BF16: case WGT_I32: case WGT_U32: case WGT_I16: case WGT_U16: case WGT_I8:
    case WGT_U8: case WGT_BOOL: return WGT_OK;
    default:
        return wgt_error(WGT_ERR_DTYPE, "%s: %s is %s; sorting takes f32, f16, bf16, i32, u32, i16, u16, i8, u8 or bool",
                         fn, name, wgt_dtype_name(a->dtype));
    }
}

/* Output dimension i comes from a's dimension perm[i]: view t back in a's axis order. */
static wgt_tensor *permute_back(wgt_tensor *t, int ndim, const int *perm) {
    int64_t shape[WGT_MAX_DIMS], strides[WGT_MAX_DIMS];
    for (int i = 0; i < ndim; i++) {
        shape[perm[i]] = t->shape[i];
        strides[perm[i]] = t->strides[i];
    }
    wgt_tensor *view = wgt_tensor_new_view(t, ndim, shape, strides, 0);
    wgt_release(t); /* the view holds the storage */
    return view;
}

wgt_status wgt_sort_along(const char *fn, wgt_tensor *a, int axis, int descending, int64_t k, wgt_tensor **values,
                             wgt_tensor **indices) {
    *values = *indices = NULL;
    wgt_status st;
    if ((st = wgt_check_tensor(fn, "a", a)) != WGT_OK || (st = check_sortable(fn, "a", a)) != WGT_OK) return st;
    int ndim = a->ndim > 0 ? a->ndim : 1, ax;
    if (!wgt_normalize_axis(fn, axis, ndim, &ax)) return WGT_ERR_SHAPE;
    int perm[WGT_MAX_DIMS], m = 0;
    int64_t shape[WGT_MAX_DIMS], strides[WGT_MAX_DIMS];
    for (int d = 0; d < ndim; d++)
        if (d != ax) perm[m++] = d;
    perm[m] = ax;
    for (int i = 0; i < ndim; i++) {
        shape[i] = a->ndim > 0 ? a->shape[perm[i]] : 1;
        strides[i] = a->ndim > 0 ? a->strides[perm[i]] : 0;
    }
    int64_t n = shape[ndim - 1];
    if (k > n)
        return wgt_error(WGT_ERR_SHAPE, "%s: k is %lld, more than the length %lld of axis %d", fn, (long long)k,
                         (long long)n, axis);
    if (k < 0) k = n;
    int64_t out_shape[WGT_MAX_DIMS];
    memcpy(out_shape, shape, sizeof out_shape);
    out_shape[ndim - 1] = k;
    wgt_context *ctx = a->storage->ctx;
    int out_ndim = a->ndim > 0 ? ndim : 0;
    wgt_tensor *v = wgt_tensor_new(ctx, fn, a->dtype, out_ndim, out_shape, WGT_USAGE_DEFAULT);
    wgt_tensor *ix = v ? wgt_tensor_new(ctx, fn, WGT_I32, out_ndim, out_shape, WGT_USAGE_DEFAULT) : NULL;
    if (!ix) goto fail;
    if (wgt_tensor_numel(v) > 0) {
        wgt_operand in_op, v_op, i_op;
        if (wgt_check_kernel_size(fn, a) != WGT_OK || wgt_check_kernel_size(fn, v) != WGT_OK ||
            wgt_view_operand(a, ndim, shape, strides, &in_op) != WGT_OK || wgt_output_operand(v, &v_op) != WGT_OK ||
            wgt_output_operand(ix, &i_op) != WGT_OK)
            goto fail;
        /* A rank-0 tensor's outputs are one element: the kernel sees them as [1]. */
        v_op.ndim = i_op.ndim = ndim;
        memcpy(v_op.shape, out_shape, sizeof v_op.shape);
        memcpy(i_op.shape, out_shape, sizeof i_op.shape);
        wgt_contiguous_strides(ndim, out_shape, v_op.strides);
        wgt_contiguous_strides(ndim, out_shape, i_op.strides);
        if (wgt_record_sort(ctx, fn, &v_op, &i_op, &in_op, descending != 0) != WGT_OK) goto fail;
    }
    if (a->ndim > 0 && ax != ndim - 1) {
        v = permute_back(v, ndim, perm);
        ix = v ? permute_back(ix, ndim, perm) : (wgt_release(ix), NULL);
        if (!ix) goto fail;
    }
    *values = v;
    *indices = ix;
    return WGT_OK;
fail:
    st = wgt_last_status();
    wgt_release(v);
    wgt_release(ix);
    return st != WGT_OK ? st : WGT_ERR_INTERNAL;
}

wgt_tensor *wgt_sort(wgt_tensor *a, int axis, int descending) {
    wgt_tensor *v, *ix;
    if (wgt_sort_along("wgt_sort", a, axis, descending, -1, &v, &ix) != WGT_OK) return NULL;
    wgt_release(ix); /* the node still writes it: one kernel gives both */
    return v;
}

wgt_tensor *wgt_argsort(wgt_tensor *a, int axis, int descending) {
    wgt_tensor *v, *ix;
    if (wgt_sort_along("wgt_argsort", a, axis, descending, -1, &v, &ix) != WGT_OK) return NULL;
    wgt_release(v);
    return ix;
}

wgt_status wgt_topk(wgt_tensor *a, int64_t k, int axis, int largest, int sorted, wgt_tensor **values,
                    wgt_tensor **indices) {
    static const char fn[] = "wgt_topk";
    (void)sorted; /* the rows come sorted either way */
    if (!values || !indices)
        return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, !values ? "values" : "indices");
    *values = *indices = NULL;
    if (k < 0) return wgt_error(WGT_ERR_SHAPE, "%s: k is %lld; it cannot be negative", fn, (long long)k);
    return wgt_sort_along(fn, a, axis, largest != 0, k, values, indices);
}

wgt_tensor *wgt_searchsorted(wgt_tensor *sorted_1d, wgt_tensor *values, int right) {
    static const char fn[] = "wgt_searchsorted";
    if (wgt_check_tensor(fn, "sorted_1d", sorted_1d) != WGT_OK || wgt_check_tensor(fn, "values", values) != WGT_OK ||
        wgt_check_same_context(fn, sorted_1d, values) != WGT_OK || check_sortable(fn, "sorted_1d", sorted_1d) != WGT_OK)
        return NULL;
    if (sorted_1d->ndim != 1) {
        char s[256];
        wgt_format_shape(s, sizeof s, sorted_1d->ndim, sorted_1d->shape);
        wgt_error(WGT_ERR_SHAPE, "%s: sorted_1d has shape %s; it must be 1-D", fn, s);
        return NULL;
    }
    if (values->dtype != sorted_1d->dtype) {
        wgt_error(WGT_ERR_DTYPE, "%s: values is %s and sorted_1d %s; they must match", fn, wgt_dtype_name(values->dtype),
                  wgt_dtype_name(sorted_1d->dtype));
        return NULL;
    }
    wgt_context *ctx = values->storage->ctx;
    wgt_tensor *out = wgt_tensor_new(ctx, fn, WGT_I32, values->ndim, values->shape, WGT_USAGE_DEFAULT);
    if (!out || wgt_tensor_numel(out) == 0) return out;
    wgt_operand o, s, v;
    if (wgt_check_kernel_size(fn, sorted_1d) != WGT_OK || wgt_check_kernel_size(fn, values) != WGT_OK ||
        wgt_output_operand(out, &o) != WGT_OK ||
        wgt_view_operand(sorted_1d, 1, sorted_1d->shape, sorted_1d->strides, &s) != WGT_OK ||
        wgt_view_operand(values, values->ndim, values->shape, values->strides, &v) != WGT_OK ||
        wgt_record_searchsorted(ctx, fn, &o, &s, &v, right != 0) != WGT_OK) {
        wgt_release(out);
        return NULL;
    }
    return out;
}
