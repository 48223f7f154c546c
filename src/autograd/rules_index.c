/*
 * Gradient rules of the indexing ops. Gathering is differentiated by a scatter-add: the
 * gradient entries that picked an input entry are summed into it by the scatter-add kernel
 * (wgt_index_add, wgt_scatter's add mode: exact sums of repeats, f32). Scattering is
 * differentiated by gathering: src's gradient is g at the positions src went to, base's is
 * g (add) or g with the overwritten positions zeroed (replace). Under replace only the
 * write that wins (the last of repeated positions) reaches the output, so only it gets a
 * gradient: the winners are found by scattering each position's own number and reading
 * back which one stayed. The indices themselves get no gradient.
 */
#include <string.h>

#include "autograd.h"
#include "core/indexing.h"

static wgt_status bw_gather_rows(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    gin[0] = wgt_ag_scatter_rows(ar, g, n->saved[0], n->in[0].shape[0], n->in[0].ndim, n->in[0].shape);
    return WGT_OK;
}

wgt_tensor *wgt_ag_rule_gather_rows(wgt_tensor *out, wgt_tensor *table, wgt_tensor *indices) {
    WGT_AG_BEGIN(n, "wgt_gather_rows", out, bw_gather_rows, table, NULL)
    wgt_ag_save(n, 0, indices);
    return wgt_ag_attach(out, n);
}

/* take and index_select: g [a[:ax], indices..., a[ax+1:]] goes back along ax. */
static wgt_status bw_take(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    int ax = n->iv[0], k = n->saved[0]->ndim, nd = n->in[0].ndim;
    int64_t m = wgt_tensor_numel(n->saved[0]), shape[WGT_MAX_DIMS];
    for (int d = 0; d < nd; d++) shape[d] = d < ax ? g->shape[d] : d == ax ? m : g->shape[d + k - 1];
    wgt_tensor *flat = K(wgt_reshape(n->saved[0], 1, &m));
    gin[0] = wgt_ag_scatter_axis(ar, K(wgt_reshape(g, nd, shape)), ax, flat, n->in[0].shape[ax]);
    return WGT_OK;
}

wgt_tensor *wgt_ag_rule_index_select(wgt_tensor *out, wgt_tensor *a, int axis, wgt_tensor *indices) {
    WGT_AG_BEGIN(n, "wgt_index_select", out, bw_take, a, NULL)
    n->iv[0] = axis < 0 ? axis + a->ndim : axis;
    wgt_ag_save(n, 0, indices);
    return wgt_ag_attach(out, n);
}

/* The indices take and take_along_axis used: negative ones counted from the end. */
static void save_wrapped(wgt_ag_node *n, const char *fn, wgt_tensor *indices, int64_t bound) {
    wgt_tensor *wrapped = wgt_wrap_negative_indices(fn, indices, bound);
    wgt_ag_save(n, 0, wrapped);
    wgt_release(wrapped);
}

wgt_tensor *wgt_ag_rule_take(wgt_tensor *out, wgt_tensor *a, wgt_tensor *indices, int axis) {
    WGT_AG_BEGIN(n, "wgt_take", out, bw_take, a, NULL)
    n->iv[0] = axis < 0 ? axis + a->ndim : axis;
    save_wrapped(n, "wgt_take", indices, a->shape[n->iv[0]]);
    return wgt_ag_attach(out, n);
}

/* g (f32 or not) scattered-added into zeros of shape: the adjoint of take_along_axis. */
static wgt_tensor *scatter_add_into_zeros(wgt_ag_arena *ar, wgt_tensor *g, int ax, wgt_tensor *idx, int ndim,
                                          const int64_t *shape) {
    wgt_tensor *g32 = g->dtype == WGT_F32 ? g : K(wgt_cast(g, WGT_F32));
    wgt_tensor *z = K(wgt_zeros(g->storage->ctx, WGT_F32, ndim, shape));
    wgt_tensor *r = z && g32 ? K(wgt_scatter(z, ax, idx, g32, WGT_SCATTER_ADD)) : NULL;
    return r && g->dtype != WGT_F32 ? K(wgt_cast(r, g->dtype)) : r;
}

static wgt_status bw_take_along_axis(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    int ax = n->iv[0];
    /* a broadcast against the indices: its gradient is summed back to a's shape. */
    int64_t shape[WGT_MAX_DIMS];
    memcpy(shape, g->shape, sizeof shape);
    shape[ax] = n->in[0].shape[ax];
    wgt_tensor *idx = K(wgt_broadcast_to(n->saved[0], g->ndim, g->shape));
    gin[0] = idx ? wgt_ag_sum_to(ar, scatter_add_into_zeros(ar, g, ax, idx, g->ndim, shape), &n->in[0]) : NULL;
    return WGT_OK;
}

wgt_tensor *wgt_ag_rule_take_along_axis(wgt_tensor *out, wgt_tensor *a, wgt_tensor *indices, int axis) {
    WGT_AG_BEGIN(n, "wgt_take_along_axis", out, bw_take_along_axis, a, NULL)
    n->iv[0] = axis < 0 ? axis + a->ndim : axis;
    save_wrapped(n, "wgt_take_along_axis", indices, a->shape[n->iv[0]]);
    return wgt_ag_attach(out, n);
}

/* g cut to the index's extent in every dimension but ax. */
static wgt_tensor *cut_to(wgt_ag_arena *ar, wgt_tensor *g, int ax, const wgt_tensor *index) {
    for (int d = 0; g && d < g->ndim; d++)
        if (d != ax && g->shape[d] != index->shape[d]) g = K(wgt_slice(g, d, 0, index->shape[d], 1));
    return g;
}

/* 1 where position p of index is the write that stays under replace (the last to name its
 * target), else 0; of dtype, index's shape. */
static wgt_tensor *winners(wgt_ag_arena *ar, const wgt_ag_edge *base, int ax, wgt_tensor *index, wgt_dtype dtype) {
    wgt_context *ctx = index->storage->ctx;
    int64_t m = wgt_tensor_numel(index);
    wgt_tensor *own = K(wgt_reshape(K(wgt_arange(ctx, WGT_I32, 0, (double)m, 1)), index->ndim, index->shape));
    wgt_tensor *none = K(wgt_full(ctx, WGT_I32, base->ndim, base->shape, -1));
    wgt_tensor *stayed = own && none ? K(wgt_scatter(none, ax, index, own, WGT_SCATTER_REPLACE)) : NULL;
    wgt_tensor *back = stayed ? K(wgt_take_along_axis(cut_to(ar, stayed, ax, index), index, ax)) : NULL;
    return back ? K(wgt_cast(K(wgt_eq(back, own)), dtype)) : NULL;
}

static wgt_status bw_scatter(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    int ax = n->iv[0], replace = n->iv[1] == WGT_SCATTER_REPLACE;
    wgt_tensor *index = n->saved[0];
    if (n->in[0].meta) {
        if (!replace) {
            gin[0] = g;
        } else { /* the overwritten positions did not reach the output */
            wgt_tensor *zero = K(wgt_zeros(g->storage->ctx, g->dtype, 0, NULL));
            gin[0] = zero ? K(wgt_scatter(g, ax, index, zero, WGT_SCATTER_REPLACE)) : NULL;
        }
    }
    if (n->in[1].meta) {
        wgt_tensor *cut = cut_to(ar, g, ax, index);
        wgt_tensor *at = cut ? K(wgt_take_along_axis(cut, index, ax)) : NULL;
        if (at && replace) at = K(wgt_mul(at, winners(ar, &n->in[0], ax, index, g->dtype)));
        gin[1] = wgt_ag_sum_to(ar, at, &n->in[1]);
    }
    return WGT_OK;
}

wgt_tensor *wgt_ag_rule_scatter(wgt_tensor *out, wgt_tensor *base, int axis, wgt_tensor *index, wgt_tensor *src,
                                wgt_scatter_mode mode) {
    WGT_AG_BEGIN(n, "wgt_scatter", out, bw_scatter, base, src)
    n->iv[0] = axis < 0 ? axis + base->ndim : axis;
    n->iv[1] = (int)mode;
    wgt_ag_save(n, 0, index);
    return wgt_ag_attach(out, n);
}

static wgt_status bw_index_add(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    gin[0] = g;
    gin[1] = n->in[1].meta ? K(wgt_take(g, n->saved[0], n->iv[0])) : NULL;
    return WGT_OK;
}

wgt_tensor *wgt_ag_rule_index_add(wgt_tensor *out, wgt_tensor *a, int axis, wgt_tensor *indices, wgt_tensor *src) {
    WGT_AG_BEGIN(n, "wgt_index_add", out, bw_index_add, a, src)
    n->iv[0] = axis < 0 ? axis + a->ndim : axis;
    wgt_ag_save(n, 0, indices);
    return wgt_ag_attach(out, n);
}

/* Sorting is a gather along the axis at the positions argsort gives (sort), or at the indices
 * top-k returns (its values): each element's gradient goes back where it came from. sort does
 * not keep its permutation, so the backward pass sorts again (stably, as the forward did: equal
 * elements take each other's places, which changes nothing, since they are equal). */
static wgt_status bw_sorted(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    if (n->in[0].ndim == 0) { /* one element: it stays where it is */
        gin[0] = g;
        return WGT_OK;
    }
    int ax = n->iv[0];
    wgt_tensor *idx = n->iv[1] >= 0 ? K(wgt_argsort(n->saved[0], ax, n->iv[1])) : n->saved[0];
    gin[0] = idx ? scatter_add_into_zeros(ar, g, ax, idx, n->in[0].ndim, n->in[0].shape) : NULL;
    return WGT_OK;
}

wgt_tensor *wgt_ag_rule_sort(wgt_tensor *out, wgt_tensor *a, int axis, int descending) {
    WGT_AG_BEGIN(n, "wgt_sort", out, bw_sorted, a)
    n->iv[0] = axis < 0 ? axis + a->ndim : axis;
    n->iv[1] = descending != 0;
    wgt_ag_save(n, 0, a);
    return wgt_ag_attach(out, n);
}

wgt_tensor *wgt_ag_topk_rule(wgt_tensor *values, wgt_tensor *indices, wgt_tensor *a, int axis) {
    WGT_AG_BEGIN(n, "wgt_topk", values, bw_sorted, a)
    n->iv[0] = axis < 0 ? axis + a->ndim : axis;
    n->iv[1] = -1; /* the indices are saved */
    wgt_ag_save(n, 0, indices);
    return wgt_ag_attach(values, n);
}
