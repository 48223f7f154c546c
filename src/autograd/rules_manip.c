/*
 * Gradient rules of the manipulation and mask ops (src/core/manip.c, masked.c). Each puts
 * the gradient back where the op took its entries: moveaxis moves the axis back, roll rolls
 * it back, tile sums the copies, repeat and masked_select scatter-add it by the positions the
 * op gathered (through the scatter-add kernel, so repeats sum), diagonal, diag and trace
 * scatter-add it onto the diagonal's positions, masked_fill zeroes the filled entries.
 */
#include <stdlib.h>
#include <string.h>

#include "autograd.h"
#include "core/manip.h"
#include "core/masked.h"

wgt_tensor *wgt_ag_rule_moveaxis(wgt_tensor *out, wgt_tensor *a, int source, int destination) {
    int perm[WGT_MAX_DIMS], nd = a ? a->ndim : 0;
    if (!out) return out;
    wgt_moveaxis_perm(nd, source < 0 ? source + nd : source, destination < 0 ? destination + nd : destination, perm);
    return wgt_ag_rule_permute(out, a, perm);
}

static wgt_status bw_roll(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    int count = n->iv[0], axes[WGT_MAX_DIMS];
    int64_t back[WGT_MAX_DIMS];
    for (int i = 0; i < count; i++) back[i] = -n->lv[0][i], axes[i] = n->iv[1 + i];
    gin[0] = K(wgt_roll(g, count, back, n->iv[WGT_MAX_DIMS + 1] ? NULL : axes));
    return WGT_OK;
}

wgt_tensor *wgt_ag_rule_roll(wgt_tensor *out, wgt_tensor *a, int count, const int64_t *shifts, const int *axes) {
    if (count > WGT_MAX_DIMS) /* more shifts than a node keeps: sum repeated axes' shifts first */
        return wgt_ag_untracked("wgt_roll", out, 1, &a);
    WGT_AG_BEGIN(n, "wgt_roll", out, bw_roll, a)
    n->iv[0] = count;
    n->iv[WGT_MAX_DIMS + 1] = axes == NULL;
    for (int i = 0; i < count; i++) n->lv[0][i] = shifts[i], n->iv[1 + i] = axes ? axes[i] : 0;
    return wgt_ag_attach(out, n);
}

static wgt_status bw_repeat(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    int ax = n->iv[0];
    gin[0] = wgt_ag_scatter_axis(ar, g, ax, n->saved[0], n->in[0].shape[ax]);
    return WGT_OK;
}

wgt_tensor *wgt_ag_rule_repeat(wgt_tensor *out, wgt_tensor *a, int count, const int64_t *repeats, int axis) {
    WGT_AG_BEGIN(n, "wgt_repeat", out, bw_repeat, a)
    int ax = axis < 0 ? axis + a->ndim : axis;
    int64_t total;
    int32_t *pos = wgt_repeat_positions(count, repeats, a->shape[ax], &total);
    wgt_tensor *idx = pos ? wgt_tensor_from_data(a->storage->ctx, WGT_I32, 1, &total, pos,
                                                 sizeof *pos * (size_t)total, WGT_USAGE_DEFAULT)
                          : NULL;
    free(pos);
    if (!idx) {
        wgt_ag_node_free(n);
        wgt_release(out);
        return NULL;
    }
    n->iv[0] = ax;
    wgt_ag_save(n, 0, idx);
    wgt_release(idx);
    return wgt_ag_attach(out, n);
}

static wgt_status bw_tile(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    int64_t vshape[WGT_MAX_DIMS], oshape[WGT_MAX_DIMS], reps[WGT_MAX_DIMS];
    int rep_axes[WGT_MAX_DIMS], nrep, nreps = n->iv[0];
    for (int i = 0; i < nreps; i++) reps[i] = n->lv[0][i];
    int vn = wgt_tile_layout(n->in[0].ndim, n->in[0].shape, nreps, reps, vshape, rep_axes, &nrep, oshape);
    wgt_tensor *v = K(wgt_reshape(g, vn, vshape));
    wgt_tensor *s = nrep ? K(wgt_sum(v, nrep, rep_axes, 0)) : v;
    gin[0] = s ? K(wgt_reshape(s, n->in[0].ndim, n->in[0].shape)) : NULL;
    return WGT_OK;
}

wgt_tensor *wgt_ag_rule_tile(wgt_tensor *out, wgt_tensor *a, int nreps, const int64_t *reps) {
    WGT_AG_BEGIN(n, "wgt_tile", out, bw_tile, a)
    n->iv[0] = nreps;
    for (int i = 0; i < nreps; i++) n->lv[0][i] = reps[i];
    return wgt_ag_attach(out, n);
}

/* g [others..., len] (the diagonal's order) scatter-added onto zeros of the input's shape. */
static wgt_tensor *onto_diagonal(wgt_ag_arena *ar, wgt_ag_node *n, wgt_tensor *g, int ax1, int ax2, int64_t offset) {
    const wgt_ag_edge *e = &n->in[0];
    int64_t count, total = wgt_numel(e->ndim, e->shape);
    int64_t *pos = wgt_diagonal_positions(e->ndim, e->shape, ax1, ax2, offset, &count);
    int32_t *p32 = pos ? malloc((size_t)(count ? count : 1) * sizeof *p32) : NULL;
    for (int64_t i = 0; p32 && i < count; i++) p32[i] = (int32_t)pos[i];
    free(pos);
    wgt_tensor *idx = p32 ? K(wgt_tensor_from_data(n->ctx, WGT_I32, 1, &count, p32, sizeof *p32 * (size_t)count,
                                                   WGT_USAGE_DEFAULT))
                          : NULL;
    free(p32);
    if (!idx) return NULL;
    int64_t rows[2] = {count, 1};
    wgt_tensor *r = wgt_ag_scatter_rows(ar, K(wgt_reshape(g, 2, rows)), idx, total, 2, (int64_t[2]){total, 1});
    return r ? K(wgt_reshape(r, e->ndim, e->shape)) : NULL;
}

static wgt_status bw_diagonal(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    gin[0] = onto_diagonal(ar, n, g, n->iv[0], n->iv[1], n->lv[0][0]);
    return WGT_OK;
}

static wgt_tensor *diagonal_node(const char *fn, wgt_tensor *out, wgt_tensor *a, int64_t offset, int axis1,
                                 int axis2, wgt_ag_backward_fn bw) {
    WGT_AG_BEGIN(n, fn, out, bw, a)
    n->iv[0] = axis1 < 0 ? axis1 + a->ndim : axis1;
    n->iv[1] = axis2 < 0 ? axis2 + a->ndim : axis2;
    n->lv[0][0] = offset;
    return wgt_ag_attach(out, n);
}

wgt_tensor *wgt_ag_rule_diagonal(wgt_tensor *out, wgt_tensor *a, int64_t offset, int axis1, int axis2) {
    return diagonal_node("wgt_diagonal", out, a, offset, axis1, axis2, bw_diagonal);
}

static wgt_status bw_trace(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    const wgt_ag_edge *e = &n->in[0];
    int ax1 = n->iv[0], ax2 = n->iv[1];
    int64_t offset = n->lv[0][0], i0 = offset < 0 ? -offset : 0, j0 = offset > 0 ? offset : 0;
    int64_t l1 = e->shape[ax1] - i0, l2 = e->shape[ax2] - j0, len = l1 < l2 ? l1 : l2, shape[WGT_MAX_DIMS];
    int nd = 0;
    for (int d = 0; d < e->ndim; d++)
        if (d != ax1 && d != ax2) shape[nd++] = e->shape[d];
    shape[nd] = len < 0 ? 0 : len;
    wgt_tensor *col = K(wgt_unsqueeze(g, -1)), *b = col ? K(wgt_broadcast_to(col, nd + 1, shape)) : NULL;
    gin[0] = b ? onto_diagonal(ar, n, b, ax1, ax2, offset) : NULL;
    return WGT_OK;
}

wgt_tensor *wgt_ag_rule_trace(wgt_tensor *out, wgt_tensor *a, int64_t offset, int axis1, int axis2) {
    return diagonal_node("wgt_trace", out, a, offset, axis1, axis2, bw_trace);
}

static wgt_status bw_diag_vector(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    gin[0] = K(wgt_contiguous(K(wgt_diagonal(g, n->lv[0][0], 0, 1))));
    return WGT_OK;
}

wgt_tensor *wgt_ag_rule_diag(wgt_tensor *out, wgt_tensor *a, int64_t k) {
    if (out && a->ndim == 2) return diagonal_node("wgt_diag", out, a, k, 0, 1, bw_diagonal);
    WGT_AG_BEGIN(n, "wgt_diag", out, bw_diag_vector, a)
    n->lv[0][0] = k;
    return wgt_ag_attach(out, n);
}

static wgt_status bw_masked_fill(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    wgt_tensor *zero = K(wgt_zeros(n->ctx, g->dtype, 0, NULL));
    gin[0] = zero ? K(wgt_where(n->saved[0], zero, g)) : NULL;
    return WGT_OK;
}

wgt_tensor *wgt_ag_rule_masked_fill(wgt_tensor *out, wgt_tensor *a, wgt_tensor *mask, double value) {
    WGT_AG_BEGIN(n, "wgt_masked_fill", out, bw_masked_fill, a, NULL)
    wgt_ag_save(n, 0, mask);
    return wgt_ag_attach(out, n);
}

static wgt_status bw_masked_select(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    const wgt_ag_edge *e = &n->in[0];
    int64_t total = wgt_numel(e->ndim, e->shape), m = g->shape[0], rows[2] = {m, 1};
    wgt_tensor *r = wgt_ag_scatter_rows(ar, K(wgt_reshape(g, 2, rows)), n->saved[0], total, 2, (int64_t[2]){total, 1});
    gin[0] = r ? K(wgt_reshape(r, e->ndim, e->shape)) : NULL;
    return WGT_OK;
}

wgt_tensor *wgt_ag_rule_masked_select(wgt_tensor *out, wgt_tensor *a, wgt_tensor *mask) {
    WGT_AG_BEGIN(n, "wgt_masked_select", out, bw_masked_select, a, NULL)
    /* The positions again: the mask's values were read by the op, so this waits for nothing. */
    wgt_tensor *pos = wgt_masked_positions("wgt_masked_select", a, mask);
    if (!pos) {
        wgt_ag_node_free(n);
        wgt_release(out);
        return NULL;
    }
    wgt_ag_save(n, 0, pos);
    wgt_release(pos);
    return wgt_ag_attach(out, n);
}
