/*
 * Vector and matrix norms (the array API's vector_norm and matrix_norm), composed from abs,
 * the reductions and elementwise ops, so both backends run them with no kernels of their own.
 * A p-norm with p > 0 is scaled by the largest magnitude first, m (sum (|x| / m)^p)^(1/p), so
 * that squares of values past 1e19 do not overflow f32 and those below 1e-19 do not vanish:
 * the result is within a few ulp wherever it is representable. f16 is computed in f32 and
 * rounded once. Matrix norms 2, -2 and nuc come from the singular values (wgt_linalg_svdvals,
 * by LAPACK on the host), so those three are eager.
 */
#include <math.h>
#include <string.h>

#include "node.h"
#include "reduce_axes.h"

/* Releases every tensor of list and returns keep. */
static wgt_tensor *drop(wgt_tensor *keep, int n, wgt_tensor **list) {
    for (int i = 0; i < n; i++) wgt_release(list[i]);
    return keep;
}

/* |a| in f32 (a's own type is checked by the caller). */
static wgt_tensor *abs_f32(wgt_tensor *a) {
    wgt_tensor *x = a->dtype == WGT_F32 ? wgt_retain(a) : wgt_cast(a, WGT_F32);
    wgt_tensor *r = x ? wgt_abs(x) : NULL;
    wgt_release(x);
    return r;
}

/* The p-norm (0 < p < inf, p != 1) of x = |a| >= 0 over the axes listed, keepdims kept. */
static wgt_tensor *scaled_pnorm(wgt_tensor *x, double p, int n, const int *axes, int keepdims, int nd,
                                const int64_t *out_shape) {
    wgt_context *ctx = x->storage->ctx;
    /* Scale by the largest magnitude m, or by 1 where m is 0 (all zeros) or infinite. */
    wgt_tensor *t[11] = {0};
    wgt_tensor *m = t[0] = wgt_max(x, n, axes, 1);
    wgt_tensor *one = t[1] = wgt_scalar(ctx, WGT_F32, 1), *zero = t[2] = wgt_scalar(ctx, WGT_F32, 0);
    wgt_tensor *inf = t[3] = m ? wgt_isinf(m) : NULL, *is0 = t[4] = m && zero ? wgt_eq(m, zero) : NULL;
    wgt_tensor *bad = t[5] = inf && is0 ? wgt_logical_or(is0, inf) : NULL;
    wgt_tensor *s = t[6] = bad && one ? wgt_where(bad, one, m) : NULL;
    wgt_tensor *q = t[7] = s ? wgt_div(x, s) : NULL;
    wgt_tensor *qp = t[8] = q ? (p == 2 ? wgt_square(q) : wgt_pow_scalar(q, p)) : NULL;
    wgt_tensor *sum = t[9] = qp ? wgt_sum(qp, n, axes, 1) : NULL;
    wgt_tensor *root = t[10] = sum ? (p == 2 ? wgt_sqrt(sum) : wgt_pow_scalar(sum, 1 / p)) : NULL;
    return wgt_reduce_f32_finish(drop(root && s ? wgt_mul(root, s) : NULL, 11, t), keepdims, nd, out_shape, WGT_F32);
}

/* The norm of a over the axes flagged in reduced[] (validated), as wgt_linalg_vector_norm. */
static wgt_tensor *vector_norm(const char *fn, wgt_tensor *a, double ord, const int *reduced, int keepdims) {
    int axes[WGT_MAX_DIMS], n = 0, nd = 0, empty = 0;
    int64_t out_shape[WGT_MAX_DIMS];
    for (int d = 0; d < a->ndim; d++) {
        if (reduced[d]) axes[n++] = d, empty |= a->shape[d] == 0;
        if (!reduced[d]) out_shape[nd++] = a->shape[d];
        else if (keepdims) out_shape[nd++] = 1;
    }
    if (empty && (isinf(ord) || ord < 0)) {
        char s[256];
        wgt_format_shape(s, sizeof s, a->ndim, a->shape);
        wgt_error(WGT_ERR_SHAPE, "%s: the %g-norm of zero elements (shape %s) is undefined", fn, ord, s);
        return NULL;
    }
    wgt_tensor *x = abs_f32(a), *r = NULL;
    if (!x) return NULL;
    if (empty) {
        r = wgt_full(a->storage->ctx, WGT_F32, nd, out_shape, 0);
    } else if (ord == INFINITY) {
        r = wgt_max(x, n, axes, keepdims);
    } else if (ord == -INFINITY) {
        r = wgt_min(x, n, axes, keepdims);
    } else if (ord == 0) { /* the count of nonzeros, as a float */
        wgt_tensor *t[3];
        wgt_tensor *zero = t[0] = wgt_scalar(a->storage->ctx, WGT_F32, 0), *nz = t[1] = zero ? wgt_ne(x, zero) : NULL;
        wgt_tensor *f = t[2] = nz ? wgt_cast(nz, WGT_F32) : NULL;
        r = drop(f ? wgt_sum(f, n, axes, keepdims) : NULL, 3, t);
    } else if (ord == 1) {
        r = wgt_sum(x, n, axes, keepdims);
    } else if (ord > 0) {
        r = scaled_pnorm(x, ord, n, axes, keepdims, nd, out_shape);
    } else { /* negative p: (sum |x|^p)^(1/p); a zero makes it 0, as in NumPy */
        wgt_tensor *t[2];
        wgt_tensor *pw = t[0] = wgt_pow_scalar(x, ord), *sm = t[1] = pw ? wgt_sum(pw, n, axes, keepdims) : NULL;
        r = drop(sm ? wgt_pow_scalar(sm, 1 / ord) : NULL, 2, t);
    }
    wgt_release(x);
    return wgt_reduce_f32_finish(r, 1, 0, NULL, a->dtype);
}

static wgt_status check_float(const char *fn, const wgt_tensor *a) {
    if (wgt_check_tensor(fn, "a", a) != WGT_OK) return wgt_last_status();
    if (a->dtype != WGT_F32 && a->dtype != WGT_F16)
        return wgt_error(WGT_ERR_DTYPE, "%s: takes floating types (f32, f16), not %s", fn, wgt_dtype_name(a->dtype));
    return WGT_OK;
}

wgt_tensor *wgt_linalg_vector_norm(wgt_tensor *a, double ord, int naxes, const int *axes, int keepdims) {
    static const char fn[] = "wgt_linalg_vector_norm";
    int reduced[WGT_MAX_DIMS];
    if (check_float(fn, a) != WGT_OK || !wgt_reduce_mark_axes(fn, a, naxes, axes, reduced)) return NULL;
    if (isnan(ord)) {
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: ord is NaN", fn);
        return NULL;
    }
    return vector_norm(fn, a, ord, reduced, keepdims);
}

/* ord "2", "-2", "nuc": the largest, smallest or summed singular values (host LAPACK, in f32). */
static wgt_tensor *spectral_norm(const char *fn, wgt_tensor *a, const char *ord, int keepdims, const char *s) {
    int nuc = ord[0] == 'n', last = a->ndim - 2; /* the singular values' axis */
    if (!nuc && (a->shape[a->ndim - 1] == 0 || a->shape[a->ndim - 2] == 0)) {
        wgt_error(WGT_ERR_SHAPE, "%s: the %s-norm of an empty matrix (shape %s) is undefined", fn, ord, s);
        return NULL;
    }
    wgt_tensor *x = a->dtype == WGT_F32 ? wgt_retain(a) : wgt_cast(a, WGT_F32);
    wgt_tensor *sv = x ? wgt_linalg_svdvals(x) : NULL, *r = NULL;
    if (sv) r = nuc ? wgt_sum(sv, 1, &last, 1) : ord[0] == '-' ? wgt_min(sv, 1, &last, 1) : wgt_max(sv, 1, &last, 1);
    wgt_release(x);
    wgt_release(sv);
    /* r is [..., 1]: seen as [..., 1, 1] when kept, else [...]. */
    int64_t shape[WGT_MAX_DIMS];
    memcpy(shape, a->shape, sizeof(int64_t) * (size_t)last);
    shape[last] = shape[last + 1] = 1;
    wgt_tensor *v = r ? wgt_reshape(r, keepdims ? a->ndim : last, shape) : NULL;
    wgt_release(r);
    return wgt_reduce_f32_finish(v, 1, 0, NULL, a->dtype);
}

wgt_tensor *wgt_linalg_matrix_norm(wgt_tensor *a, const char *ord, int keepdims) {
    static const char fn[] = "wgt_linalg_matrix_norm";
    if (check_float(fn, a) != WGT_OK) return NULL;
    char s[256];
    wgt_format_shape(s, sizeof s, a->ndim, a->shape);
    if (a->ndim < 2) {
        wgt_error(WGT_ERR_SHAPE, "%s: a must be a (batch of) matrices [..., m, n], not %s", fn, s);
        return NULL;
    }
    if (!ord) ord = "fro";
    int reduced[WGT_MAX_DIMS] = {0};
    reduced[a->ndim - 2] = reduced[a->ndim - 1] = 1;
    if (!strcmp(ord, "fro")) return vector_norm(fn, a, 2, reduced, keepdims);
    if (!strcmp(ord, "2") || !strcmp(ord, "-2") || !strcmp(ord, "nuc")) return spectral_norm(fn, a, ord, keepdims, s);
    /* 1, -1: the largest / smallest column sum of |a|; inf, -inf: row sums. */
    int cols = !strcmp(ord, "1") || !strcmp(ord, "-1"), rows = !strcmp(ord, "inf") || !strcmp(ord, "-inf");
    if (!cols && !rows) {
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: ord \"%s\" is none of \"fro\", \"nuc\", \"1\", \"-1\", \"2\", \"-2\", \"inf\", \"-inf\"",
                  fn, ord);
        return NULL;
    }
    if (a->shape[a->ndim - 1] == 0 || a->shape[a->ndim - 2] == 0) {
        wgt_error(WGT_ERR_SHAPE, "%s: the %s-norm of an empty matrix (shape %s) is undefined", fn, ord, s);
        return NULL;
    }
    int sum_axis = cols ? a->ndim - 2 : a->ndim - 1, ext_axis = cols ? a->ndim - 1 : a->ndim - 2;
    wgt_tensor *x = abs_f32(a), *sums = x ? wgt_sum(x, 1, &sum_axis, 1) : NULL, *r = NULL;
    if (sums) r = ord[0] == '-' ? wgt_min(sums, 1, &ext_axis, 1) : wgt_max(sums, 1, &ext_axis, 1);
    wgt_release(x);
    wgt_release(sums);
    return wgt_reduce_f32_finish(r, keepdims, a->ndim - 2, a->shape, a->dtype);
}
