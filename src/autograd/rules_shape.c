/*
 * Gradient rules of the views and shape ops. A view's gradient puts the incoming gradient back
 * where the view took its elements: transposes and permutations transpose it back, reshapes
 * reshape it, broadcasts sum it, slices pad it with zeros (a stepped slice scatter-adds it),
 * concat and stack slice it apart, pad slices the padding off.
 */
#include <stdlib.h>
#include <string.h>

#include "autograd.h"

/* ---- reshape-like: the gradient takes the input's shape back ---- */

static wgt_status bw_reshape(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    gin[0] = K(wgt_reshape(g, n->in[0].ndim, n->in[0].shape));
    return WGT_OK;
}

static wgt_tensor *reshaped(const char *fn, wgt_tensor *out, wgt_tensor *a) {
    WGT_AG_BEGIN(n, fn, out, bw_reshape, a)
    return wgt_ag_attach(out, n);
}

wgt_tensor *wgt_ag_rule_reshape(wgt_tensor *out, wgt_tensor *t, int ndim, const int64_t *shape) {
    return reshaped("wgt_reshape", out, t);
}
wgt_tensor *wgt_ag_rule_reshape_view(wgt_tensor *out, wgt_tensor *t, int ndim, const int64_t *shape) {
    return reshaped("wgt_reshape_view", out, t);
}
wgt_tensor *wgt_ag_rule_contiguous(wgt_tensor *out, wgt_tensor *t) { return reshaped("wgt_contiguous", out, t); }
wgt_tensor *wgt_ag_rule_squeeze(wgt_tensor *out, wgt_tensor *a, int axis) { return reshaped("wgt_squeeze", out, a); }
wgt_tensor *wgt_ag_rule_unsqueeze(wgt_tensor *out, wgt_tensor *a, int axis) { return reshaped("wgt_unsqueeze", out, a); }

/* ---- broadcasts: summed back ---- */

static wgt_status bw_broadcast(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    gin[0] = wgt_ag_sum_to(ar, g, &n->in[0]);
    return WGT_OK;
}

wgt_tensor *wgt_ag_rule_broadcast_to(wgt_tensor *out, wgt_tensor *t, int ndim, const int64_t *shape) {
    WGT_AG_BEGIN(n, "wgt_broadcast_to", out, bw_broadcast, t)
    return wgt_ag_attach(out, n);
}
wgt_tensor *wgt_ag_rule_expand(wgt_tensor *out, wgt_tensor *a, int ndim, const int64_t *shape) {
    WGT_AG_BEGIN(n, "wgt_expand", out, bw_broadcast, a)
    return wgt_ag_attach(out, n);
}

/* ---- permutations ---- */

static wgt_status bw_permute(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    int inverse[WGT_MAX_DIMS];
    for (int d = 0; d < n->in[0].ndim; d++) inverse[n->iv[d]] = d;
    gin[0] = K(wgt_permute(g, inverse));
    return WGT_OK;
}

wgt_tensor *wgt_ag_rule_permute(wgt_tensor *out, wgt_tensor *a, const int *axes) {
    WGT_AG_BEGIN(n, "wgt_permute", out, bw_permute, a)
    for (int d = 0; d < a->ndim; d++) n->iv[d] = axes[d] < 0 ? axes[d] + a->ndim : axes[d];
    return wgt_ag_attach(out, n);
}

static wgt_status bw_transpose(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    gin[0] = K(wgt_transpose(g, n->iv[0], n->iv[1]));
    return WGT_OK;
}

wgt_tensor *wgt_ag_rule_transpose(wgt_tensor *out, wgt_tensor *t, int axis0, int axis1) {
    WGT_AG_BEGIN(n, "wgt_transpose", out, bw_transpose, t)
    n->iv[0] = axis0, n->iv[1] = axis1;
    return wgt_ag_attach(out, n);
}

static wgt_status bw_flip(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    gin[0] = K(wgt_flip(g, n->iv[WGT_MAX_DIMS], n->iv));
    return WGT_OK;
}

wgt_tensor *wgt_ag_rule_flip(wgt_tensor *out, wgt_tensor *a, int naxes, const int *axes) {
    WGT_AG_BEGIN(n, "wgt_flip", out, bw_flip, a)
    n->iv[WGT_MAX_DIMS] = naxes;
    for (int i = 0; i < naxes; i++) n->iv[i] = axes[i];
    return wgt_ag_attach(out, n);
}

static wgt_status bw_triangle(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    gin[0] = K(n->iv[0] ? wgt_triu(g, n->lv[0][0]) : wgt_tril(g, n->lv[0][0]));
    return WGT_OK;
}

static wgt_tensor *triangle(const char *fn, wgt_tensor *out, wgt_tensor *a, int64_t diagonal, int upper) {
    WGT_AG_BEGIN(n, fn, out, bw_triangle, a)
    n->iv[0] = upper;
    n->lv[0][0] = diagonal;
    return wgt_ag_attach(out, n);
}
wgt_tensor *wgt_ag_rule_triu(wgt_tensor *out, wgt_tensor *a, int64_t diagonal) { return triangle("wgt_triu", out, a, diagonal, 1); }
wgt_tensor *wgt_ag_rule_tril(wgt_tensor *out, wgt_tensor *a, int64_t diagonal) { return triangle("wgt_tril", out, a, diagonal, 0); }

/* ---- slices ---- */

/* g scattered along axis into a tensor of length len there: element k of g goes to position
 * idx[k] (i32 [m]); repeated positions add up, through the scatter-add kernel (f32). */
wgt_tensor *wgt_ag_scatter_axis(wgt_ag_arena *ar, wgt_tensor *g, int axis, wgt_tensor *idx, int64_t len) {
    if (!g || !idx) return NULL;
    int64_t shape[WGT_MAX_DIMS];
    memcpy(shape, g->shape, sizeof shape);
    shape[axis] = len;
    wgt_tensor *g32 = g->dtype == WGT_F32 ? g : K(wgt_cast(g, WGT_F32));
    wgt_tensor *z = K(wgt_zeros(g->storage->ctx, WGT_F32, g->ndim, shape));
    wgt_tensor *r = z && g32 ? K(wgt_index_add(z, axis, idx, g32)) : NULL;
    return r && g->dtype != WGT_F32 ? K(wgt_cast(r, g->dtype)) : r;
}

/* The gradient of a slice along axis of positions start, start + step, ...: zeros elsewhere. */
static wgt_status bw_slice(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    int ax = n->iv[0];
    int64_t start = n->lv[0][0], step = n->lv[0][1], m = g->shape[ax], len = n->in[0].shape[ax];
    if (step == 1 || step == -1 || m <= 1) {
        if (step < 0 && m > 1) g = K(wgt_flip(g, 1, &ax)), start -= m - 1;
        int64_t before[WGT_MAX_DIMS] = {0}, after[WGT_MAX_DIMS] = {0};
        before[ax] = m ? start : 0;
        after[ax] = len - before[ax] - m;
        gin[0] = K(wgt_pad(g, before, after, 0.0));
        return WGT_OK;
    }
    int32_t *pos = malloc(sizeof *pos * (size_t)m);
    if (!pos) return wgt_error(WGT_ERR_OUT_OF_MEMORY, "wgt_backward: out of host memory");
    for (int64_t k = 0; k < m; k++) pos[k] = (int32_t)(start + k * step);
    wgt_tensor *idx = K(wgt_tensor_from_data(n->ctx, WGT_I32, 1, &m, pos, sizeof *pos * (size_t)m, WGT_USAGE_DEFAULT));
    free(pos);
    gin[0] = idx ? wgt_ag_scatter_axis(ar, g, ax, idx, len) : NULL;
    return WGT_OK;
}

/* start is the first position taken (already clamped as wgt_slice clamps it). */
static wgt_tensor *slice_rule(const char *fn, wgt_tensor *out, wgt_tensor *t, int axis, int64_t start, int64_t step) {
    WGT_AG_BEGIN(n, fn, out, bw_slice, t)
    n->iv[0] = axis < 0 ? axis + t->ndim : axis;
    n->lv[0][0] = start;
    n->lv[0][1] = step;
    return wgt_ag_attach(out, n);
}

wgt_tensor *wgt_ag_rule_slice(wgt_tensor *out, wgt_tensor *t, int axis, int64_t start, int64_t stop, int64_t step) {
    if (!out) return NULL;
    int ax = axis < 0 ? axis + t->ndim : axis;
    int64_t len = t->shape[ax]; /* Python's rules, as wgt_slice applies them */
    if (start < 0) start += len;
    start = step > 0 ? (start < 0 ? 0 : start > len ? len : start) : (start < -1 ? -1 : start > len - 1 ? len - 1 : start);
    return slice_rule("wgt_slice", out, t, ax, start, step);
}

wgt_tensor *wgt_ag_split_piece(wgt_tensor *out, wgt_tensor *a, int axis, int64_t start) {
    return slice_rule("wgt_split", out, a, axis, start, 1);
}

/* ---- pad: the padding is cut off ---- */

static wgt_status bw_pad(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    wgt_tensor *r = g;
    for (int d = 0; d < n->in[0].ndim; d++)
        if (n->in[0].shape[d] != g->shape[d]) r = K(wgt_slice(r, d, n->lv[0][d], n->lv[0][d] + n->in[0].shape[d], 1));
    gin[0] = r == g ? K(wgt_contiguous(g)) : r;
    return WGT_OK;
}

wgt_tensor *wgt_ag_rule_pad(wgt_tensor *out, wgt_tensor *a, const int64_t *before, const int64_t *after, double value) {
    WGT_AG_BEGIN(n, "wgt_pad", out, bw_pad, a)
    for (int d = 0; d < a->ndim; d++) n->lv[0][d] = before[d];
    return wgt_ag_attach(out, n);
}

/* ---- concat and stack: the gradient is cut into the inputs' pieces ---- */

static wgt_status bw_join(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    int ax = n->iv[0], stacking = n->iv[1];
    int64_t at = 0;
    for (int i = 0; i < n->nin; i++) {
        int64_t len = stacking ? 1 : n->in[i].shape[ax];
        if (NEED(n, i)) {
            wgt_tensor *piece = K(wgt_slice(g, ax, at, at + len, 1));
            gin[i] = K(wgt_reshape(piece, n->in[i].ndim, n->in[i].shape));
        }
        at += len;
    }
    return WGT_OK;
}

wgt_tensor *wgt_ag_join_rule(const char *fn, wgt_tensor *out, wgt_tensor *const *tensors, int count, int axis,
                             int stacking) {
    if (!out || !wgt_ag_tracking(count, tensors)) return out;
    wgt_ag_node *n = wgt_ag_node_new(fn, out, count, tensors, bw_join);
    if (!n) {
        wgt_release(out);
        return NULL;
    }
    n->iv[0] = axis < 0 ? axis + out->ndim : axis;
    n->iv[1] = stacking;
    return wgt_ag_attach(out, n);
}

/* ---- as_strided: each output element's gradient goes to the input element it views ---- */

static wgt_status bw_as_strided(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    int64_t m = wgt_tensor_numel(g), one[2] = {m, 1}, total = 1;
    for (int d = 0; d < n->in[0].ndim; d++) total *= n->in[0].shape[d];
    int64_t flat[2] = {total, 1};
    wgt_tensor *r = wgt_ag_scatter_rows(ar, K(wgt_reshape(g, 2, one)), n->saved[0], total, 2, flat);
    gin[0] = K(wgt_reshape(r, n->in[0].ndim, n->in[0].shape));
    return WGT_OK;
}

wgt_tensor *wgt_ag_rule_as_strided(wgt_tensor *out, wgt_tensor *t, int ndim, const int64_t *shape,
                                   const int64_t *strides, int64_t offset) {
    WGT_AG_BEGIN(n, "wgt_as_strided", out, bw_as_strided, t)
    /* Positions in the input's row-major order: only where the input is itself row-major, so a
     * storage position names one input element. */
    if (!wgt_is_contiguous(t->ndim, t->shape, t->strides)) {
        n->backward = NULL;
        n->why = "its input is not contiguous (apply wgt_contiguous first)";
        return wgt_ag_attach(out, n);
    }
    int64_t m = wgt_numel(ndim, shape), idx[WGT_MAX_DIMS] = {0};
    int32_t *pos = malloc(sizeof *pos * (size_t)(m ? m : 1));
    if (!pos) {
        wgt_error(WGT_ERR_OUT_OF_MEMORY, "wgt_as_strided: out of host memory for the gradient record");
        wgt_ag_node_free(n);
        wgt_release(out);
        return NULL;
    }
    for (int64_t k = 0; k < m; k++) {
        int64_t p = offset - t->offset;
        for (int d = 0; d < ndim; d++) p += idx[d] * strides[d];
        pos[k] = (int32_t)p;
        for (int d = ndim - 1; d >= 0 && ++idx[d] == shape[d]; d--) idx[d] = 0;
    }
    wgt_tensor *ptensor = wgt_tensor_from_data(n->ctx, WGT_I32, 1, &m, pos, sizeof *pos * (size_t)m, WGT_USAGE_DEFAULT);
    free(pos);
    wgt_ag_save(n, 0, ptensor);
    wgt_release(ptensor);
    return wgt_ag_attach(out, n);
}
