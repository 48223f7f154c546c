/*
 * Gradient rules of the indexing ops. Gathering rows is differentiated by a scatter-add: the
 * gradient rows that picked a table row are summed into it, computed as the product of the
 * one-hot matrix of the indices with the gradient (exact sums, run by the matrix kernels of
 * both backends). The indices themselves get no gradient.
 */
#include "autograd.h"

static wgt_status bw_gather_rows(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    gin[0] = wgt_ag_scatter_rows(ar, g, n->saved[0], n->in[0].shape[0], n->in[0].ndim, n->in[0].shape);
    return WGT_OK;
}

wgt_tensor *wgt_ag_rule_gather_rows(wgt_tensor *out, wgt_tensor *table, wgt_tensor *indices) {
    WGT_AG_BEGIN(n, "wgt_gather_rows", out, bw_gather_rows, table, NULL)
    wgt_ag_save(n, 0, indices);
    return wgt_ag_attach(out, n);
}

static wgt_status bw_index_select(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    int ax = n->iv[0];
    gin[0] = wgt_ag_scatter_axis(ar, g, ax, n->saved[0], n->in[0].shape[ax]);
    return WGT_OK;
}

wgt_tensor *wgt_ag_rule_index_select(wgt_tensor *out, wgt_tensor *a, int axis, wgt_tensor *indices) {
    WGT_AG_BEGIN(n, "wgt_index_select", out, bw_index_select, a, NULL)
    n->iv[0] = axis < 0 ? axis + a->ndim : axis;
    wgt_ag_save(n, 0, indices);
    return wgt_ag_attach(out, n);
}
