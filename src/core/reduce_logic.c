/*
 * Reductions composed from the kernels every backend has: any, all and count_nonzero reduce
 * the mask a != 0 (max, min, sum), and logsumexp is max-shifted exp-sum-log (over the last
 * axis alone, the backend's row kernel computes the same in one pass). Their empty
 * reductions have identities (false, true, 0, -inf) where max and min have none, so those
 * are answered here, before any kernel, with a filled tensor of the output's shape.
 */
#include <math.h>

#include "node.h"
#include "reduce_axes.h"

/* The output's shape for reduced[] and keepdims; whether a reduced axis is empty. */
static int out_shape_of(const wgt_tensor *a, const int *reduced, int keepdims, int64_t *shape, int *nd) {
    int empty = 0;
    *nd = 0;
    for (int d = 0; d < a->ndim; d++) {
        if (!reduced[d]) shape[(*nd)++] = a->shape[d];
        else if (keepdims) shape[(*nd)++] = 1;
        if (reduced[d] && a->shape[d] == 0) empty = 1;
    }
    return empty;
}

/* The axes flagged in reduced[], listed. */
static int listed(int ndim, const int *reduced, int *axes) {
    int n = 0;
    for (int d = 0; d < ndim; d++)
        if (reduced[d]) axes[n++] = d;
    return n;
}

/* a != 0 as an i32 0/1 mask (NaN counts as nonzero, as in NumPy): the cast to bool is the
 * test, and i32 is a type the reductions take. */
static wgt_tensor *nonzero_mask(wgt_tensor *a) {
    wgt_tensor *b = a->dtype == WGT_BOOL ? wgt_retain(a) : wgt_cast(a, WGT_BOOL);
    return wgt_narrow_cast_to(b, WGT_I32);
}

typedef enum { LOGIC_ANY, LOGIC_ALL, LOGIC_COUNT } logic_op;

static wgt_tensor *logic(const char *fn, logic_op op, wgt_tensor *a, int naxes, const int *axes, int keepdims) {
    int reduced[WGT_MAX_DIMS], nd, list[WGT_MAX_DIMS];
    int64_t shape[WGT_MAX_DIMS];
    if (wgt_check_tensor(fn, "a", a) != WGT_OK || !wgt_reduce_mark_axes(fn, a, naxes, axes, reduced)) return NULL;
    if (wgt_dtype_is_block(a->dtype)) {
        wgt_error(WGT_ERR_DTYPE, "%s: takes f32, f16, i32 or u32, not the block type %s; dequantize first", fn,
                  wgt_dtype_name(a->dtype));
        return NULL;
    }
    wgt_dtype dt = op == LOGIC_COUNT ? WGT_I32 : WGT_BOOL;
    if (out_shape_of(a, reduced, keepdims, shape, &nd))
        return wgt_full(a->storage->ctx, dt, nd, shape, op == LOGIC_ALL ? 1 : 0);
    int n = listed(a->ndim, reduced, list);
    wgt_tensor *m = nonzero_mask(a), *r = NULL;
    if (op == LOGIC_COUNT) { /* counted in i32, as argmax's indices are */
        r = m ? wgt_sum(m, n, list, keepdims) : NULL;
    } else if (m) {
        r = wgt_narrow_cast_to(op == LOGIC_ANY ? wgt_max(m, n, list, keepdims) : wgt_min(m, n, list, keepdims), WGT_BOOL);
    }
    wgt_release(m);
    return r;
}

wgt_tensor *wgt_any(wgt_tensor *a, int naxes, const int *axes, int keepdims) {
    return logic("wgt_any", LOGIC_ANY, a, naxes, axes, keepdims);
}
wgt_tensor *wgt_all(wgt_tensor *a, int naxes, const int *axes, int keepdims) {
    return logic("wgt_all", LOGIC_ALL, a, naxes, axes, keepdims);
}
wgt_tensor *wgt_count_nonzero(wgt_tensor *a, int naxes, const int *axes, int keepdims) {
    return logic("wgt_count_nonzero", LOGIC_COUNT, a, naxes, axes, keepdims);
}

/* log(sum(exp(x - m))) + m with m the maximum, so nothing overflows. An infinite maximum
 * shifts by 0 instead: a row of -inf gives log(0) = -inf (not -inf - -inf = NaN) and a row
 * holding +inf gives +inf. f16 is computed in f32 and rounded once at the end. */
wgt_tensor *wgt_logsumexp(wgt_tensor *a, int naxes, const int *axes, int keepdims) {
    static const char fn[] = "wgt_logsumexp";
    int reduced[WGT_MAX_DIMS], nd, list[WGT_MAX_DIMS];
    int64_t shape[WGT_MAX_DIMS];
    if (wgt_check_tensor(fn, "a", a) != WGT_OK || !wgt_reduce_mark_axes(fn, a, naxes, axes, reduced)) return NULL;
    if (a->dtype != WGT_F32 && a->dtype != WGT_F16) {
        wgt_error(WGT_ERR_DTYPE, "%s: takes floating types (f32, f16), not %s", fn, wgt_dtype_name(a->dtype));
        return NULL;
    }
    wgt_context *ctx = a->storage->ctx;
    if (out_shape_of(a, reduced, keepdims, shape, &nd)) return wgt_full(ctx, a->dtype, nd, shape, -INFINITY);
    int n = listed(a->ndim, reduced, list);
    /* Over the last axis alone: the row kernel, one read of a (cross-entropy's logits). */
    if (n == 1 && list[0] == a->ndim - 1)
        return wgt_reduce_f32_finish(wgt_rows_logsumexp(fn, a), keepdims, nd, shape, a->dtype);
    wgt_tensor *x = a->dtype == WGT_F32 ? wgt_retain(a) : wgt_cast(a, WGT_F32);
    wgt_tensor *m = x ? wgt_max(x, n, list, 1) : NULL;
    wgt_tensor *inf = m ? wgt_isinf(m) : NULL, *zero = wgt_scalar(ctx, WGT_F32, 0);
    wgt_tensor *shift = inf && zero ? wgt_where(inf, zero, m) : NULL;
    wgt_tensor *d = shift ? wgt_sub(x, shift) : NULL, *e = d ? wgt_exp(d) : NULL;
    wgt_tensor *s = e ? wgt_sum(e, n, list, 1) : NULL, *l = s ? wgt_log(s) : NULL;
    wgt_tensor *r = l ? wgt_add(l, shift) : NULL;
    wgt_tensor *tmp[] = {x, m, inf, zero, shift, d, e, s, l};
    for (size_t i = 0; i < sizeof tmp / sizeof tmp[0]; i++) wgt_release(tmp[i]);
    return wgt_reduce_f32_finish(r, keepdims, nd, shape, a->dtype);
}

wgt_tensor *wgt_reduce_f32_finish(wgt_tensor *r, int keepdims, int nd, const int64_t *shape, wgt_dtype dtype) {
    if (r && !keepdims) { /* the kept length-1 axes dropped: a view of the same memory */
        wgt_tensor *v = wgt_reshape(r, nd, shape);
        wgt_release(r);
        r = v;
    }
    if (r && dtype != WGT_F32) {
        wgt_tensor *c = wgt_cast(r, dtype);
        wgt_release(r);
        r = c;
    }
    return r;
}
