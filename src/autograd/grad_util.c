/*
 * Helpers the gradient rules share: the arena of a backward function's tensors, reducing a
 * broadcast gradient back to an input's shape, putting reduced axes back, masks as numbers,
 * and the scatter-add behind gather's gradient (wgt_index_add).
 */
#include <stdlib.h>
#include <string.h>

#include "autograd.h"

wgt_tensor *wgt_ag_k(wgt_ag_arena *ar, wgt_tensor *t) {
    if (!t) return NULL;
    if (ar->n == ar->cap) {
        int cap = ar->cap ? ar->cap * 2 : 32;
        wgt_tensor **g = realloc(ar->t, (size_t)cap * sizeof *g);
        if (!g) {
            wgt_release(t);
            ar->failed = 1;
            wgt_error(WGT_ERR_OUT_OF_MEMORY, "wgt_backward: out of host memory");
            return NULL;
        }
        ar->t = g, ar->cap = cap;
    }
    ar->t[ar->n++] = t;
    return t;
}

void wgt_ag_arena_free(wgt_ag_arena *ar) {
    for (int i = ar->n; i-- > 0;) wgt_release(ar->t[i]);
    free(ar->t);
    memset(ar, 0, sizeof *ar);
}

wgt_status wgt_ag_done(const wgt_ag_node *n, wgt_tensor *const *gin, const wgt_ag_arena *ar) {
    for (int i = 0; i < n->nin; i++)
        if (n->in[i].meta && !gin[i]) {
            wgt_status st = wgt_last_status();
            return st != WGT_OK ? st : wgt_error(WGT_ERR_INTERNAL, "wgt_backward: the rule of %s gave input %d no "
                                                 "gradient", n->fn, i);
        }
    return WGT_OK;
}

wgt_tensor *wgt_ag_sum_to(wgt_ag_arena *ar, wgt_tensor *g, const wgt_ag_edge *e) {
    if (!g) return NULL;
    int lead = g->ndim - e->ndim, axes[WGT_MAX_DIMS], n = 0;
    for (int d = 0; d < g->ndim; d++)
        if (d < lead || (e->shape[d - lead] == 1 && g->shape[d] != 1)) axes[n++] = d;
    if (n) g = K(wgt_reshape(K(wgt_sum(g, n, axes, 1)), e->ndim, e->shape));
    if (g && g->dtype != e->dtype) g = K(wgt_cast(g, e->dtype));
    return g;
}

wgt_tensor *wgt_ag_scalar_like(wgt_ag_arena *ar, wgt_tensor *t, double v) {
    return t ? K(wgt_scalar(t->storage->ctx, t->dtype, v)) : NULL;
}

wgt_tensor *wgt_ag_mask(wgt_ag_arena *ar, wgt_tensor *mask, wgt_dtype dtype) { return K(wgt_cast(mask, dtype)); }

void wgt_ag_reduced_axes(int ndim, int naxes, const int *axes, int *reduced) {
    for (int d = 0; d < ndim; d++) reduced[d] = naxes == 0;
    for (int i = 0; i < naxes; i++) reduced[axes[i] < 0 ? axes[i] + ndim : axes[i]] = 1;
}

wgt_tensor *wgt_ag_unreduce(wgt_ag_arena *ar, wgt_tensor *g, int in_ndim, const int64_t *in_shape, const int *reduced,
                            int keepdims) {
    int64_t kept[WGT_MAX_DIMS];
    for (int d = 0; d < in_ndim; d++) kept[d] = reduced[d] ? 1 : in_shape[d];
    if (!keepdims) g = K(wgt_reshape(g, in_ndim, kept));
    return K(wgt_broadcast_to(g, in_ndim, in_shape));
}

wgt_tensor *wgt_ag_scatter_rows(wgt_ag_arena *ar, wgt_tensor *g, wgt_tensor *idx, int64_t n, int table_ndim,
                                const int64_t *table_shape) {
    if (!g || !idx) return NULL;
    int64_t m = wgt_tensor_numel(idx), row = 1;
    for (int d = 1; d < table_ndim; d++) row *= table_shape[d];
    int64_t flat[1] = {m}, g2[2] = {m, row}, z2[2] = {n, row};
    wgt_tensor *gm = K(wgt_reshape(g, 2, g2));
    if (gm && gm->dtype != WGT_F32) gm = K(wgt_cast(gm, WGT_F32)); /* the scatter-add sums f32 */
    wgt_tensor *z = K(wgt_zeros(g->storage->ctx, WGT_F32, 2, z2));
    wgt_tensor *r = z && gm ? K(wgt_index_add(z, 0, K(wgt_reshape(idx, 1, flat)), gm)) : NULL;
    if (r && g->dtype != WGT_F32) r = K(wgt_cast(r, g->dtype));
    return r ? K(wgt_reshape(r, table_ndim, table_shape)) : NULL;
}
