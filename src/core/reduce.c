/*
 * Reductions (sum, mean, max, min, prod, var, std, argmax, argmin) and cumsum: validate
 * the axes, pick the output type and shape, and hand the backend a view of the input with
 * the reduced axes moved last, so every kernel sees "leading dims = output, trailing dims =
 * reduced" whatever the caller's axes and layout. The view is a permutation of the input's
 * own strides: nothing is copied. Before the hand-off, size-1 dimensions are dropped and
 * neighbouring dimensions that chain in memory are merged, so the common cases (a whole
 * contiguous tensor, rows of a matrix) reach the kernels as one reduced dimension.
 */
#include <math.h>
#include <string.h>

#include "node.h"
#include "reduce_axes.h"
#include "core/dtype_table.h"

static const char *const op_names[WGT_REDUCE_COUNT] = {"sum", "mean", "max", "min", "prod", "var", "argmax", "argmin"};

static int is_integer(wgt_dtype d) { return d == WGT_I32 || d == WGT_U32; }

static wgt_dtype result_dtype(wgt_reduce_op op, wgt_dtype in) {
    if (op == WGT_REDUCE_ARGMAX || op == WGT_REDUCE_ARGMIN) return WGT_I32;
    if ((op == WGT_REDUCE_MEAN || op == WGT_REDUCE_VAR) && is_integer(in)) return WGT_F32;
    return in;
}

/* Appends the dimensions [from, to) of (shape, strides) to the operand, dropping length-1
 * dimensions and merging a dimension into the previous one when their strides chain. */
static void append_merged(int *n, int64_t *shape, int64_t *strides, const int64_t *src_shape,
                          const int64_t *src_strides, const int *order, int from, int to) {
    int first = *n;
    for (int k = from; k < to; k++) {
        int64_t len = src_shape[order[k]], stride = src_strides[order[k]];
        if (len == 1) continue;
        if (*n > first && strides[*n - 1] == stride * len) {
            shape[*n - 1] *= len;
            strides[*n - 1] = stride;
            continue;
        }
        shape[*n] = len;
        strides[*n] = stride;
        (*n)++;
    }
}

/* The shared path of every reduction. reduced[d] marks the axes to reduce; the caller has
 * validated them. param is VAR's correction. */
static wgt_tensor *reduce_axes(const char *fn, wgt_reduce_op op, wgt_tensor *a, const int *reduced, int keepdims,
                               double param) {
    int ndim = a->ndim, out_ndim = 0, keep_n = 0, order[WGT_MAX_DIMS];
    int64_t out_shape[WGT_MAX_DIMS];
    /* Only emptiness matters: an empty tensor's other lengths may multiply past 64 bits. */
    int none_kept = 0, none_reduced = 0;
    for (int d = 0; d < ndim; d++) {
        if (reduced[d]) {
            none_reduced |= a->shape[d] == 0;
            if (keepdims) out_shape[out_ndim++] = 1;
        } else {
            none_kept |= a->shape[d] == 0;
            out_shape[out_ndim++] = a->shape[d];
            order[keep_n++] = d;
        }
    }
    for (int d = 0, k = keep_n; d < ndim; d++)
        if (reduced[d]) order[k++] = d;

    /* The mean and the variance of nothing are NaN (0 / 0, and N - correction <= 0 as for any
     * variance with too few elements), as NumPy, PyTorch and the array API have them. */
    if (none_reduced && !none_kept && (op == WGT_REDUCE_MEAN || op == WGT_REDUCE_VAR))
        return wgt_full(a->storage->ctx, result_dtype(op, a->dtype), out_ndim, out_shape, NAN);
    /* No identity: an empty reduction is an error, unless there is nothing to produce. */
    if (none_reduced && !none_kept && op != WGT_REDUCE_SUM && op != WGT_REDUCE_PROD) {
        int axis = 0;
        while (!(reduced[axis] && a->shape[axis] == 0)) axis++;
        char s[256];
        wgt_format_shape(s, sizeof s, ndim, a->shape);
        wgt_error(WGT_ERR_SHAPE, "%s: cannot reduce zero elements: axis %d of shape %s has length 0 and %s has no identity",
                  fn, axis, s, op_names[op]);
        return NULL;
    }
    wgt_context *ctx = a->storage->ctx;
    wgt_tensor *out = wgt_tensor_new(ctx, fn, result_dtype(op, a->dtype), out_ndim, out_shape, WGT_USAGE_DEFAULT);
    if (!out || none_kept) return out;
    if (wgt_check_kernel_size(fn, out) != WGT_OK || wgt_check_kernel_size(fn, a) != WGT_OK) goto fail;

    /* Leading dims: the kept axes in order (they match the output's layout); trailing: the
     * reduced axes. An empty reduction becomes one dimension of length 0. */
    int n = 0;
    int64_t shape[WGT_MAX_DIMS], strides[WGT_MAX_DIMS], no_strides[WGT_MAX_DIMS] = {0};
    /* An empty input is never read, and its strides may be huge (wgt_contiguous_strides wraps
     * them): the kept dims then get stride 0, so no kernel does arithmetic on them. */
    append_merged(&n, shape, strides, a->shape, none_reduced ? no_strides : a->strides, order, 0, keep_n);
    int kept_dims = n;
    if (none_reduced) {
        shape[n] = 0;
        strides[n++] = 0;
    } else {
        append_merged(&n, shape, strides, a->shape, a->strides, order, keep_n, ndim);
    }
    wgt_operand in_op, out_op;
    if (wgt_view_operand(a, n, shape, strides, &in_op) != WGT_OK || wgt_output_operand(out, &out_op) != WGT_OK)
        goto fail;
    /* The output is contiguous, so the merged kept shape describes it as well. */
    out_op.ndim = kept_dims;
    memcpy(out_op.shape, shape, sizeof(int64_t) * (size_t)kept_dims);
    wgt_contiguous_strides(kept_dims, out_op.shape, out_op.strides);
    if (wgt_record_reduce(ctx, fn, op, &out_op, &in_op, n - kept_dims, param) != WGT_OK) goto fail;
    return out;
fail:
    wgt_release(out);
    return NULL;
}

int wgt_reduce_mark_axes(const char *fn, const wgt_tensor *a, int naxes, const int *axes, int *reduced) {
    memset(reduced, 0, sizeof(int) * WGT_MAX_DIMS);
    if (naxes < 0) {
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: naxes is %d; it must be 0 (all axes) or more", fn, naxes);
        return 0;
    }
    if (naxes > 0 && !axes) {
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: axes is NULL but naxes is %d", fn, naxes);
        return 0;
    }
    if (naxes == 0) {
        for (int d = 0; d < a->ndim; d++) reduced[d] = 1;
        return 1;
    }
    for (int i = 0; i < naxes; i++) {
        int ax;
        if (!wgt_normalize_axis(fn, axes[i], a->ndim, &ax)) return 0;
        if (reduced[ax]) {
            char s[256];
            wgt_format_shape(s, sizeof s, a->ndim, a->shape);
            wgt_error(WGT_ERR_SHAPE, "%s: axis %d appears more than once in the axes list (axes[%d] = %d, shape %s)", fn,
                      ax, i, axes[i], s);
            return 0;
        }
        reduced[ax] = 1;
    }
    return 1;
}

/* The narrow types reduce widened (core/narrow.c): sum and prod in the type
 * wgt_narrow_sum_type names, the others in i32 (max and min then cast back, exactly).
 * bool takes sum only (a count of trues, as count_nonzero), bf16 nothing here. A new
 * reference to the tensor to reduce, or NULL with the error set. */
static wgt_tensor *reduce_input(const char *fn, wgt_reduce_op op, wgt_tensor *a) {
    if (!wgt_dtype_is_narrow(a->dtype)) return wgt_retain(a);
    if (a->dtype == WGT_BF16 || (a->dtype == WGT_BOOL && op != WGT_REDUCE_SUM)) {
        wgt_error(WGT_ERR_DTYPE, "%s: takes no %s operand%s; cast first", fn, wgt_dtype_name(a->dtype),
                  a->dtype == WGT_BOOL ? " (bool takes wgt_sum, which counts the trues)" : "");
        return NULL;
    }
    if (op == WGT_REDUCE_SUM || op == WGT_REDUCE_PROD) return wgt_cast(a, wgt_narrow_sum_type(a->dtype));
    return wgt_narrow_widen(a);
}

/* The reduction of a (checked, axes marked) with the narrow types' widening around it. */
static wgt_tensor *reduce_checked(const char *fn, wgt_reduce_op op, wgt_tensor *a, const int *reduced, int keepdims,
                                  double param) {
    wgt_tensor *in = reduce_input(fn, op, a);
    wgt_tensor *out = in ? reduce_axes(fn, op, in, reduced, keepdims, param) : NULL;
    wgt_release(in);
    if (op == WGT_REDUCE_MAX || op == WGT_REDUCE_MIN) out = wgt_narrow_cast_to(out, a->dtype);
    return out;
}

static wgt_tensor *run_reduce(const char *fn, wgt_reduce_op op, wgt_tensor *a, int naxes, const int *axes,
                              int keepdims, double param) {
    int reduced[WGT_MAX_DIMS];
    if (wgt_check_tensor(fn, "a", a) != WGT_OK || !wgt_reduce_mark_axes(fn, a, naxes, axes, reduced)) return NULL;
    return reduce_checked(fn, op, a, reduced, keepdims, param);
}

wgt_tensor *wgt_sum(wgt_tensor *a, int naxes, const int *axes, int keepdims) {
    return run_reduce("wgt_sum", WGT_REDUCE_SUM, a, naxes, axes, keepdims, 0);
}
wgt_tensor *wgt_mean(wgt_tensor *a, int naxes, const int *axes, int keepdims) {
    return run_reduce("wgt_mean", WGT_REDUCE_MEAN, a, naxes, axes, keepdims, 0);
}
wgt_tensor *wgt_max(wgt_tensor *a, int naxes, const int *axes, int keepdims) {
    return run_reduce("wgt_max", WGT_REDUCE_MAX, a, naxes, axes, keepdims, 0);
}
wgt_tensor *wgt_min(wgt_tensor *a, int naxes, const int *axes, int keepdims) {
    return run_reduce("wgt_min", WGT_REDUCE_MIN, a, naxes, axes, keepdims, 0);
}
wgt_tensor *wgt_prod(wgt_tensor *a, int naxes, const int *axes, int keepdims) {
    return run_reduce("wgt_prod", WGT_REDUCE_PROD, a, naxes, axes, keepdims, 0);
}
wgt_tensor *wgt_var(wgt_tensor *a, int naxes, const int *axes, int keepdims, int correction) {
    return run_reduce("wgt_var", WGT_REDUCE_VAR, a, naxes, axes, keepdims, correction);
}

/* std is sqrt(var): the backend table has no std kernel, so the variance goes through the
 * backend's sqrt (one extra elementwise pass over the small result). */
wgt_tensor *wgt_std(wgt_tensor *a, int naxes, const int *axes, int keepdims, int correction) {
    static const char fn[] = "wgt_std";
    wgt_tensor *v = run_reduce(fn, WGT_REDUCE_VAR, a, naxes, axes, keepdims, correction);
    if (!v || wgt_tensor_numel(v) == 0) return v;
    wgt_backend *be = v->storage->ctx->backend;
    if (!be->unary) {
        wgt_error(WGT_ERR_INTERNAL, "%s: the %s backend has no unary kernels for sqrt", fn, be->name);
        wgt_release(v);
        return NULL;
    }
    static const double no_params[2] = {0, 0};
    wgt_tensor *out = wgt_tensor_new(v->storage->ctx, fn, v->dtype, v->ndim, v->shape, WGT_USAGE_DEFAULT);
    wgt_operand ov, oo;
    if (!out || wgt_view_operand(v, v->ndim, v->shape, v->strides, &ov) != WGT_OK ||
        wgt_output_operand(out, &oo) != WGT_OK || wgt_record_unary(v->storage->ctx, fn, WGT_UNARY_SQRT, &oo, &ov, no_params) != WGT_OK) {
        wgt_release(out);
        out = NULL;
    }
    wgt_release(v);
    return out;
}

static wgt_tensor *run_arg(const char *fn, wgt_reduce_op op, wgt_tensor *a, int axis, int keepdims) {
    int ax, reduced[WGT_MAX_DIMS] = {0};
    if (wgt_check_tensor(fn, "a", a) != WGT_OK || !wgt_normalize_axis(fn, axis, a->ndim, &ax)) return NULL;
    reduced[ax] = 1;
    return reduce_checked(fn, op, a, reduced, keepdims, 0);
}

wgt_tensor *wgt_argmax(wgt_tensor *a, int axis, int keepdims) {
    return run_arg("wgt_argmax", WGT_REDUCE_ARGMAX, a, axis, keepdims);
}
wgt_tensor *wgt_argmin(wgt_tensor *a, int axis, int keepdims) {
    return run_arg("wgt_argmin", WGT_REDUCE_ARGMIN, a, axis, keepdims);
}

wgt_tensor *wgt_cumsum(wgt_tensor *a, int axis) {
    static const char fn[] = "wgt_cumsum";
    int ax;
    if (wgt_check_tensor(fn, "a", a) != WGT_OK || !wgt_normalize_axis(fn, axis, a->ndim, &ax)) return NULL;
    if (wgt_dtype_is_narrow(a->dtype)) { /* summed in the type sum gives, as the array API asks */
        wgt_tensor *in = reduce_input(fn, WGT_REDUCE_SUM, a);
        wgt_tensor *out = in ? wgt_cumsum(in, axis) : NULL;
        wgt_release(in);
        return out;
    }
    wgt_context *ctx = a->storage->ctx;
    wgt_tensor *out = wgt_tensor_new(ctx, fn, a->dtype, a->ndim, a->shape, WGT_USAGE_DEFAULT);
    if (!out || wgt_tensor_numel(out) == 0) return out;
    wgt_operand in_op, out_op;
    if (wgt_check_kernel_size(fn, out) != WGT_OK || wgt_view_operand(a, a->ndim, a->shape, a->strides, &in_op) != WGT_OK ||
        wgt_output_operand(out, &out_op) != WGT_OK || wgt_record_cumsum(ctx, fn, &out_op, &in_op, ax) != WGT_OK) {
        wgt_release(out);
        return NULL;
    }
    return out;
}
