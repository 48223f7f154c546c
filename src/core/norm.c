/*
 * Row ops: softmax and log_softmax along any axis, layer_norm and rms_norm over the last
 * axis, and logsumexp over the last axis (wgt_logsumexp's and cross-entropy's one pass over
 * the rows). The core validates the arguments and hands the backend one fused row kernel call:
 * an input view whose last dimension is the row and whose leading dimensions (merged where
 * their strides chain) enumerate the rows, plus a fresh contiguous output of the same
 * order. softmax along another axis moves that axis last with a permuted view of the
 * input's own strides (nothing is copied), and the result is the kernel's output permuted
 * back: a view whose values sit at a's indices, which is therefore not contiguous unless
 * the axis was already last (or every other dimension has length 1). wgt_contiguous makes
 * a row-major copy when one is needed.
 */
#include <math.h>
#include <string.h>

#include "node.h"

static const char *const op_names[WGT_ROWS_COUNT] = {"wgt_softmax", "wgt_log_softmax", "wgt_layer_norm",
                                                     "wgt_rms_norm", "wgt_logsumexp"};

static wgt_status check_float(const char *fn, const char *name, const wgt_tensor *t) {
    if (t->dtype == WGT_F32 || t->dtype == WGT_F16) return WGT_OK;
    return wgt_error(WGT_ERR_DTYPE, "%s: takes floating types (f32, f16), not %s (%s)", fn, wgt_dtype_name(t->dtype),
                     name);
}

/* The rows of the view (shape, strides) of rank ndim, as an operand the backends take:
 * leading dimensions with length-1 ones dropped and neighbours merged when their strides
 * chain (a contiguous tensor becomes [rows, D]), then the row dimension unchanged. The
 * output is contiguous in the same order, so the merged leading shape describes it too. */
static void row_layout(int ndim, const int64_t *shape, const int64_t *strides, int *n_out, int64_t *mshape,
                       int64_t *mstrides) {
    int n = 0;
    for (int d = 0; d < ndim - 1; d++) {
        if (shape[d] == 1) continue;
        if (n > 0 && mstrides[n - 1] == strides[d] * shape[d]) {
            mshape[n - 1] *= shape[d];
            mstrides[n - 1] = strides[d];
            continue;
        }
        mshape[n] = shape[d];
        mstrides[n++] = strides[d];
    }
    mshape[n] = shape[ndim - 1];
    mstrides[n++] = strides[ndim - 1];
    *n_out = n;
}

/* Runs the backend's row kernel: out (fresh, contiguous, of the view's shape; logsumexp:
 * f32, with the last dimension 1) = op over the rows of the view (shape, strides) of a;
 * weight and bias may be NULL. */
static wgt_status run_rows(const char *fn, wgt_rows_op op, wgt_tensor *a, int ndim, const int64_t *shape,
                           const int64_t *strides, wgt_tensor *weight, wgt_tensor *bias, double eps, wgt_tensor *out) {
    wgt_backend *be = a->storage->ctx->backend;
    if (!be->rows) return wgt_error(WGT_ERR_INTERNAL, "%s: the %s backend has no row kernels", fn, be->name);
    wgt_status st;
    if ((st = wgt_check_kernel_size(fn, a)) != WGT_OK) return st;
    int n;
    int64_t mshape[WGT_MAX_DIMS], mstrides[WGT_MAX_DIMS];
    row_layout(ndim, shape, strides, &n, mshape, mstrides);
    wgt_operand in_op, out_op, w_op, b_op;
    if ((st = wgt_view_operand(a, n, mshape, mstrides, &in_op)) != WGT_OK) return st;
    if (weight && (st = wgt_view_operand(weight, 1, weight->shape, weight->strides, &w_op)) != WGT_OK) return st;
    if (bias && (st = wgt_view_operand(bias, 1, bias->shape, bias->strides, &b_op)) != WGT_OK) return st;
    if ((st = wgt_output_operand(out, &out_op)) != WGT_OK) return st;
    out_op.ndim = n;
    memcpy(out_op.shape, mshape, sizeof(int64_t) * (size_t)n);
    if (op == WGT_ROWS_LOGSUMEXP) out_op.shape[n - 1] = 1; /* one value per row */
    wgt_contiguous_strides(n, out_op.shape, out_op.strides);
    st = wgt_record_rows(a->storage->ctx, fn, op, &out_op, &in_op, weight ? &w_op : NULL, bias ? &b_op : NULL, eps);

    return st;
}

static wgt_tensor *softmax_axis(wgt_rows_op op, wgt_tensor *a, int axis) {
    const char *fn = op_names[op];
    if (wgt_check_tensor(fn, "a", a) != WGT_OK || check_float(fn, "a", a) != WGT_OK) return NULL;
    /* A rank-0 tensor is one row of one element, along axis 0 or -1 as in PyTorch. */
    int ndim = a->ndim > 0 ? a->ndim : 1, ax;
    if (!wgt_normalize_axis(fn, axis, ndim, &ax)) return NULL;
    /* perm: the other axes in order, then the softmax axis. */
    int perm[WGT_MAX_DIMS], k = 0;
    int64_t shape[WGT_MAX_DIMS], strides[WGT_MAX_DIMS];
    for (int d = 0; d < ndim; d++)
        if (d != ax) perm[k++] = d;
    perm[k] = ax;
    for (int i = 0; i < ndim; i++) {
        shape[i] = a->ndim > 0 ? a->shape[perm[i]] : 1;
        strides[i] = a->ndim > 0 ? a->strides[perm[i]] : 0;
    }
    wgt_context *ctx = a->storage->ctx;
    wgt_tensor *out = wgt_tensor_new(ctx, fn, a->dtype, a->ndim > 0 ? ndim : 0, shape, WGT_USAGE_DEFAULT);
    if (!out) return NULL;
    /* Nothing to compute for zero rows or empty rows; an empty result still has a's shape. */
    if (wgt_tensor_numel(out) > 0 && run_rows(fn, op, a, ndim, shape, strides, NULL, NULL, 0, out) != WGT_OK) {
        wgt_release(out);
        return NULL;
    }
    if (a->ndim == 0 || ax == ndim - 1) return out;
    /* Permute back: dimension perm[i] of the result is dimension i of out. */
    int64_t rshape[WGT_MAX_DIMS], rstrides[WGT_MAX_DIMS];
    for (int i = 0; i < ndim; i++) {
        rshape[perm[i]] = out->shape[i];
        rstrides[perm[i]] = out->strides[i];
    }
    wgt_tensor *view = wgt_tensor_new_view(out, ndim, rshape, rstrides, 0);
    wgt_release(out); /* the view holds the storage */
    return view;
}

wgt_tensor *wgt_rows_logsumexp(const char *fn, wgt_tensor *a) {
    int64_t shape[WGT_MAX_DIMS];
    memcpy(shape, a->shape, sizeof(int64_t) * (size_t)a->ndim);
    shape[a->ndim - 1] = 1;
    wgt_tensor *out = wgt_tensor_new(a->storage->ctx, fn, WGT_F32, a->ndim, shape, WGT_USAGE_DEFAULT);
    if (!out || wgt_tensor_numel(out) == 0) return out;
    if (run_rows(fn, WGT_ROWS_LOGSUMEXP, a, a->ndim, a->shape, a->strides, NULL, NULL, 0, out) != WGT_OK) {
        wgt_release(out);
        return NULL;
    }
    return out;
}

wgt_tensor *wgt_softmax(wgt_tensor *a, int axis) { return softmax_axis(WGT_ROWS_SOFTMAX, a, axis); }
wgt_tensor *wgt_log_softmax(wgt_tensor *a, int axis) { return softmax_axis(WGT_ROWS_LOG_SOFTMAX, a, axis); }

/* weight or bias (NULL: absent) must be a live tensor of a's context and type, of shape
 * [D] with D a's last dimension; any strides (broadcast or sliced views) are fine. */
static wgt_status check_param(const char *fn, const char *name, const wgt_tensor *p, const wgt_tensor *a) {
    if (!p) return WGT_OK;
    wgt_status st;
    if ((st = wgt_check_tensor(fn, name, p)) != WGT_OK || (st = wgt_check_same_context(fn, a, p)) != WGT_OK) return st;
    if (p->dtype != a->dtype)
        return wgt_error(WGT_ERR_DTYPE, "%s: %s is %s but a is %s; they must match", fn, name, wgt_dtype_name(p->dtype),
                         wgt_dtype_name(a->dtype));
    int64_t d = a->shape[a->ndim - 1];
    if (p->ndim != 1 || p->shape[0] != d) {
        char ps[256], as[256];
        wgt_format_shape(ps, sizeof ps, p->ndim, p->shape);
        wgt_format_shape(as, sizeof as, a->ndim, a->shape);
        return wgt_error(WGT_ERR_SHAPE, "%s: %s has shape %s; it must be [%lld], the last dimension of a (shape %s)", fn,
                         name, ps, (long long)d, as);
    }
    return WGT_OK;
}

static wgt_tensor *norm_last(wgt_rows_op op, wgt_tensor *a, wgt_tensor *weight, wgt_tensor *bias, double eps) {
    const char *fn = op_names[op];
    if (wgt_check_tensor(fn, "a", a) != WGT_OK || check_float(fn, "a", a) != WGT_OK) return NULL;
    if (a->ndim == 0) {
        wgt_error(WGT_ERR_SHAPE, "%s: a has rank 0; it needs a last axis to normalise over", fn);
        return NULL;
    }
    if (check_param(fn, "weight", weight, a) != WGT_OK || check_param(fn, "bias", bias, a) != WGT_OK) return NULL;
    if (!isfinite(eps) || eps < 0) {
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: eps is %g; it must be finite and >= 0", fn, eps);
        return NULL;
    }
    wgt_tensor *out = wgt_tensor_new(a->storage->ctx, fn, a->dtype, a->ndim, a->shape, WGT_USAGE_DEFAULT);
    if (!out || wgt_tensor_numel(out) == 0) return out;
    if (run_rows(fn, op, a, a->ndim, a->shape, a->strides, weight, bias, eps, out) != WGT_OK) {
        wgt_release(out);
        return NULL;
    }
    return out;
}

wgt_tensor *wgt_layer_norm(wgt_tensor *a, wgt_tensor *weight, wgt_tensor *bias, double eps) {
    return norm_last(WGT_ROWS_LAYER_NORM, a, weight, bias, eps);
}

wgt_tensor *wgt_rms_norm(wgt_tensor *a, wgt_tensor *weight, double eps) {
    return norm_last(WGT_ROWS_RMS_NORM, a, weight, NULL, eps);
}
