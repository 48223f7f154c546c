/*
 * Contractions over labelled dimensions, planned onto ops that already run on every backend:
 * sums for labels that only one side needs, a permutation and reshape of each side into
 * [batch..., M, K] and [batch..., K, N], one batched matmul, and a reshape of its result back
 * into labelled dimensions. tensordot, vecdot, outer (here) and einsum (einsum.c) are all
 * chains of this one step, so they need no kernels of their own and inherit matmul's
 * precision (f16 accumulates in f32) and its handling of views. Integer operands (of any
 * integer types, promoted by the array API's table) are computed in the backends' type that
 * holds their common type (i32 for the narrow integers: the sums and products wrap and keep
 * the low bits) and the result cast back, as matmul does.
 */
#include "contract.h"
#include "core/dtype_table.h"

#include <stdio.h>
#include <string.h>

wgt_status wgt_contract_check(const char *fn, int n, wgt_tensor *const *t) {
    wgt_dtype common = WGT_F32;
    for (int i = 0; i < n; i++) {
        char name[32], first[48];
        snprintf(name, sizeof name, n == 2 ? (i ? "b" : "a") : "operand %d", i);
        snprintf(first, sizeof first, n == 2 ? "a" : i > 1 ? "the product of operands 0 to %d" : "operand 0", i - 1);
        if (wgt_check_tensor(fn, name, t[i]) != WGT_OK) return wgt_last_status();
        if (i && wgt_check_same_context(fn, t[0], t[i]) != WGT_OK) return wgt_last_status();
        if (wgt_product_type(fn, i ? first : name, i ? common : t[i]->dtype, name, t[i]->dtype, &common) != WGT_OK)
            return wgt_last_status();
    }
    return WGT_OK;
}

wgt_status wgt_contract_widen(int n, wgt_tensor *const *t, wgt_tensor **wide, wgt_dtype *result) {
    wgt_dtype common = t[0]->dtype;
    const char *why;
    for (int i = 1; i < n; i++) wgt_dtype_promote(common, t[i]->dtype, &common, &why); /* checked: they promote */
    *result = common;
    wgt_dtype kernel = wgt_narrow_wide_type(common);
    for (int i = 0; i < n; i++) {
        wide[i] = t[i]->dtype == kernel ? wgt_retain(t[i]) : wgt_cast(t[i], kernel);
        if (wide[i]) continue;
        while (i--) wgt_release(wide[i]);
        return wgt_last_status();
    }
    return WGT_OK;
}

static wgt_labelled fail(wgt_labelled x) {
    wgt_release(x.t);
    return (wgt_labelled){0};
}

static int find(const wgt_labelled *x, int label) {
    for (int d = 0; x->t && d < x->t->ndim; d++)
        if (x->labels[d] == label) return d;
    return -1;
}

wgt_labelled wgt_contract_sum_out(wgt_labelled x, const unsigned char *keep) {
    int axes[WGT_MAX_DIMS], n = 0, left = 0;
    wgt_labelled r = {0};
    for (int d = 0; d < x.t->ndim; d++) {
        if (keep[x.labels[d]])
            r.labels[left++] = x.labels[d];
        else
            axes[n++] = d;
    }
    if (!n) return x;
    r.t = wgt_sum(x.t, n, axes, 0);
    wgt_release(x.t);
    return r;
}

/* Moves x's dimensions into the order of labels (a permutation of its own). */
static wgt_tensor *permuted(wgt_labelled *x, const int *order_labels) {
    int axes[WGT_MAX_DIMS];
    for (int d = 0; d < x->t->ndim; d++) axes[d] = find(x, order_labels[d]);
    return wgt_permute(x->t, axes);
}

/* x reshaped into ng dimensions, dimension i the product of the next counts[i] of x's (1 for
 * a count of 0); x consumed. */
static wgt_tensor *merged(wgt_tensor *x, int ng, const int *counts) {
    if (!x) return NULL;
    int64_t shape[WGT_MAX_DIMS];
    for (int i = 0, d = 0; i < ng; i++) {
        shape[i] = 1;
        for (int j = 0; j < counts[i]; j++) shape[i] *= x->shape[d++];
    }
    wgt_tensor *r = wgt_reshape(x, ng, shape);
    wgt_release(x);
    return r;
}

wgt_labelled wgt_contract_pair(const char *fn, wgt_labelled a, wgt_labelled b, const unsigned char *keep) {
    if (!a.t || !b.t) goto fail_both;
    /* What only one side has and nobody needs is summed out of that side first. */
    unsigned char keep_a[WGT_LABELS], keep_b[WGT_LABELS];
    memcpy(keep_a, keep, WGT_LABELS);
    memcpy(keep_b, keep, WGT_LABELS);
    for (int d = 0; d < b.t->ndim; d++) keep_a[b.labels[d]] = 1;
    for (int d = 0; d < a.t->ndim; d++) keep_b[a.labels[d]] = 1;
    a = wgt_contract_sum_out(a, keep_a);
    b = wgt_contract_sum_out(b, keep_b);
    if (!a.t || !b.t) goto fail_both;

    /* Classify: batch (both, kept), contracted (both, not kept), a's own, b's own. */
    int batch[WGT_MAX_DIMS], con[WGT_MAX_DIMS], own_a[WGT_MAX_DIMS], own_b[WGT_MAX_DIMS];
    int nbatch = 0, ncon = 0, na = 0, nb = 0;
    for (int d = 0; d < a.t->ndim; d++) {
        int l = a.labels[d];
        if (find(&b, l) < 0)
            own_a[na++] = l;
        else if (keep[l])
            batch[nbatch++] = l;
        else
            con[ncon++] = l;
    }
    for (int d = 0; d < b.t->ndim; d++)
        if (find(&a, b.labels[d]) < 0) own_b[nb++] = b.labels[d];
    int out_nd = nbatch + na + nb;
    if (out_nd > WGT_MAX_DIMS) {
        wgt_error(WGT_ERR_LIMIT, "%s: an intermediate result would have %d dimensions, more than the %d a tensor holds",
                  fn, out_nd, WGT_MAX_DIMS);
        goto fail_both;
    }

    /* Shared labels of length 1 on one side stretch to the other's length (a stride-0 view). */
    int64_t len_a[WGT_MAX_DIMS], len_b[WGT_MAX_DIMS];
    memcpy(len_a, a.t->shape, sizeof len_a);
    memcpy(len_b, b.t->shape, sizeof len_b);
    int stretch_a = 0, stretch_b = 0;
    for (int d = 0; d < a.t->ndim; d++) {
        int e = find(&b, a.labels[d]);
        if (e < 0 || len_a[d] == len_b[e]) continue;
        if (len_a[d] == 1)
            len_a[d] = len_b[e], stretch_a = 1;
        else if (len_b[e] == 1)
            len_b[e] = len_a[d], stretch_b = 1;
        else {
            wgt_error(WGT_ERR_SHAPE, "%s: a dimension of length %lld meets one of length %lld", fn,
                      (long long)len_a[d], (long long)len_b[e]);
            goto fail_both;
        }
    }
    if (stretch_a) {
        wgt_tensor *v = wgt_broadcast_to(a.t, a.t->ndim, len_a);
        wgt_release(a.t);
        if (!(a.t = v)) goto fail_both;
    }
    if (stretch_b) {
        wgt_tensor *v = wgt_broadcast_to(b.t, b.t->ndim, len_b);
        wgt_release(b.t);
        if (!(b.t = v)) goto fail_both;
    }

    /* a as [batch..., own_a..., con...] -> [batch..., M, K]; b as [batch..., con..., own_b...]
     * -> [batch..., K, N]. Past the rank a tensor holds, the batch is flattened into one. */
    int order[WGT_MAX_DIMS], k = 0;
    for (int i = 0; i < nbatch; i++) order[k++] = batch[i];
    for (int i = 0; i < na; i++) order[k++] = own_a[i];
    for (int i = 0; i < ncon; i++) order[k++] = con[i];
    wgt_tensor *pa = permuted(&a, order);
    k = nbatch;
    for (int i = 0; i < ncon; i++) order[k++] = con[i];
    for (int i = 0; i < nb; i++) order[k++] = own_b[i];
    wgt_tensor *pb = permuted(&b, order);
    int64_t out_shape[WGT_MAX_DIMS];
    for (int i = 0; i < nbatch + na; i++) out_shape[i] = pa ? pa->shape[i] : 0;
    for (int i = 0; i < nb; i++) out_shape[nbatch + na + i] = pb ? pb->shape[nbatch + ncon + i] : 0;
    wgt_release(a.t);
    wgt_release(b.t);
    a.t = b.t = NULL;
    if (!pa || !pb) {
        wgt_release(pa);
        wgt_release(pb);
        return (wgt_labelled){0};
    }
    /* Each batch label stays a dimension of its own, so matmul broadcasts them without a
     * copy; past the rank a tensor holds, the batch is flattened into one. */
    int ga[WGT_MAX_DIMS], gb[WGT_MAX_DIMS], ng = 0;
    if (nbatch + 2 > WGT_MAX_DIMS)
        ga[ng] = gb[ng] = nbatch, ng++;
    else
        for (; ng < nbatch; ng++) ga[ng] = gb[ng] = 1;
    ga[ng] = na, gb[ng] = ncon;
    ga[ng + 1] = ncon, gb[ng + 1] = nb;
    wgt_tensor *ma = merged(pa, ng + 2, ga), *mb = merged(pb, ng + 2, gb);
    wgt_tensor *prod = ma && mb ? wgt_matmul(ma, mb) : NULL;
    wgt_release(ma);
    wgt_release(mb);
    wgt_labelled r = {0};
    if (!prod) return r;
    r.t = wgt_reshape(prod, out_nd, out_shape);
    wgt_release(prod);
    k = 0;
    for (int i = 0; i < nbatch; i++) r.labels[k++] = batch[i];
    for (int i = 0; i < na; i++) r.labels[k++] = own_a[i];
    for (int i = 0; i < nb; i++) r.labels[k++] = own_b[i];
    return r;
fail_both:
    fail(b);
    return fail(a);
}

wgt_tensor *wgt_contract_finish(wgt_labelled x, int nd, const int *labels) {
    if (!x.t) return NULL;
    int axes[WGT_MAX_DIMS], identity = 1;
    for (int d = 0; d < nd; d++) {
        axes[d] = find(&x, labels[d]);
        identity &= axes[d] == d;
    }
    if (identity) return x.t;
    /* A fresh row-major result, like NumPy's: the permuted view would expose the plan. */
    wgt_tensor *v = wgt_permute(x.t, axes);
    wgt_release(x.t);
    wgt_tensor *r = v ? wgt_contiguous(v) : NULL;
    wgt_release(v);
    return r;
}

static int norm_axis(int axis, int ndim) { return axis < 0 ? axis + ndim : axis; }

wgt_tensor *wgt_contract_run(const char *fn, const wgt_contract_plan *p, wgt_tensor *const *ops) {
    unsigned char keep[WGT_LABELS] = {0};
    for (int k = 0; k < p->nout; k++) keep[p->out[k]] = 1;
    wgt_tensor *wide[2];
    wgt_dtype result;
    if (wgt_contract_widen(p->nops, ops, wide, &result) != WGT_OK) return NULL;
    wgt_labelled x = {wide[0], {0}}, y = {p->nops == 2 ? wide[1] : NULL, {0}};
    memcpy(x.labels, p->labels[0], sizeof x.labels);
    memcpy(y.labels, p->labels[1], sizeof y.labels);
    wgt_labelled r = p->nops == 1 ? wgt_contract_sum_out(x, keep) : wgt_contract_pair(fn, x, y, keep);
    return wgt_narrow_cast_to(wgt_contract_finish(r, p->nout, p->out), result);
}

wgt_status wgt_tensordot_plan(wgt_tensor *a, wgt_tensor *b, int naxes, const int *axes_a, const int *axes_b,
                              wgt_contract_plan *p) {
    static const char fn[] = "wgt_tensordot";
    wgt_tensor *ops[2] = {a, b};
    if (wgt_contract_check(fn, 2, ops) != WGT_OK) return wgt_last_status();
    char sa[256], sb[256];
    wgt_format_shape(sa, sizeof sa, a->ndim, a->shape);
    wgt_format_shape(sb, sizeof sb, b->ndim, b->shape);
    if (naxes < 0 || naxes > a->ndim || naxes > b->ndim)
        return wgt_error(WGT_ERR_SHAPE, "%s: cannot contract %d axes of a %s and b %s", fn, naxes, sa, sb);
    if (!axes_a != !axes_b)
        return wgt_error(WGT_ERR_INVALID_ARGUMENT,
                         "%s: axes_a and axes_b are both given or both NULL (a's last %d with b's first)", fn, naxes);
    /* a's axes are labels 0.., b's WGT_MAX_DIMS.. until contracted with one of a's. */
    *p = (wgt_contract_plan){.nops = 2};
    unsigned char contracted[WGT_MAX_DIMS] = {0};
    for (int d = 0; d < a->ndim; d++) p->labels[0][d] = d;
    for (int d = 0; d < b->ndim; d++) p->labels[1][d] = WGT_MAX_DIMS + d;
    for (int i = 0; i < naxes; i++) {
        int ia = axes_a ? axes_a[i] : a->ndim - naxes + i, ib = axes_b ? axes_b[i] : i;
        int da = norm_axis(ia, a->ndim), db = norm_axis(ib, b->ndim);
        if (da < 0 || da >= a->ndim || db < 0 || db >= b->ndim)
            return wgt_error(WGT_ERR_SHAPE, "%s: axis pair %d (%d, %d) is out of range for a %s and b %s", fn, i, ia, ib,
                             sa, sb);
        if (contracted[da] || p->labels[1][db] < WGT_MAX_DIMS)
            return wgt_error(WGT_ERR_SHAPE, "%s: axis pair %d (%d, %d) repeats an axis already contracted", fn, i, ia, ib);
        if (a->shape[da] != b->shape[db])
            return wgt_error(WGT_ERR_SHAPE, "%s: axis %d of a %s has length %lld but axis %d of b %s has %lld", fn, ia,
                             sa, (long long)a->shape[da], ib, sb, (long long)b->shape[db]);
        contracted[da] = 1;
        p->labels[1][db] = da;
    }
    if (a->ndim + b->ndim - 2 * naxes > WGT_MAX_DIMS)
        return wgt_error(WGT_ERR_SHAPE, "%s: the result of a %s and b %s would have %d dimensions, more than %d", fn, sa,
                         sb, a->ndim + b->ndim - 2 * naxes, WGT_MAX_DIMS);
    for (int d = 0; d < a->ndim; d++) /* [a's free axes..., b's free axes...] */
        if (!contracted[d]) p->out[p->nout++] = d;
    for (int d = 0; d < b->ndim; d++)
        if (p->labels[1][d] >= WGT_MAX_DIMS) p->out[p->nout++] = p->labels[1][d];
    return WGT_OK;
}

wgt_tensor *wgt_tensordot(wgt_tensor *a, wgt_tensor *b, int naxes, const int *axes_a, const int *axes_b) {
    wgt_contract_plan p;
    wgt_tensor *ops[2] = {a, b};
    return wgt_tensordot_plan(a, b, naxes, axes_a, axes_b, &p) == WGT_OK ? wgt_contract_run("wgt_tensordot", &p, ops)
                                                                         : NULL;
}

wgt_status wgt_vecdot_plan(wgt_tensor *a, wgt_tensor *b, int axis, wgt_contract_plan *p) {
    static const char fn[] = "wgt_vecdot";
    wgt_tensor *ops[2] = {a, b};
    if (wgt_contract_check(fn, 2, ops) != WGT_OK) return wgt_last_status();
    int nd;
    int64_t shape[WGT_MAX_DIMS];
    if (wgt_broadcast_shapes(fn, a->ndim, a->shape, b->ndim, b->shape, &nd, shape) != WGT_OK) return wgt_last_status();
    char sa[256], sb[256];
    wgt_format_shape(sa, sizeof sa, a->ndim, a->shape);
    wgt_format_shape(sb, sizeof sb, b->ndim, b->shape);
    int ax = norm_axis(axis, nd);
    if (ax < 0 || ax >= nd || ax < nd - a->ndim || ax < nd - b->ndim)
        return wgt_error(WGT_ERR_SHAPE, "%s: axis %d is not an axis of both a %s and b %s (broadcast together)", fn,
                         axis, sa, sb);
    if (a->shape[ax - (nd - a->ndim)] != b->shape[ax - (nd - b->ndim)])
        return wgt_error(WGT_ERR_SHAPE, "%s: along axis %d a %s has length %lld but b %s has %lld", fn, axis, sa,
                         (long long)a->shape[ax - (nd - a->ndim)], sb, (long long)b->shape[ax - (nd - b->ndim)]);
    /* Labels are positions in the broadcast shape, so the result's order is theirs. Real
     * types only, so the conjugate of a is a itself. */
    *p = (wgt_contract_plan){.nops = 2};
    for (int d = 0; d < a->ndim; d++) p->labels[0][d] = d + nd - a->ndim;
    for (int d = 0; d < b->ndim; d++) p->labels[1][d] = d + nd - b->ndim;
    for (int d = 0; d < nd; d++)
        if (d != ax) p->out[p->nout++] = d;
    return WGT_OK;
}

wgt_tensor *wgt_vecdot(wgt_tensor *a, wgt_tensor *b, int axis) {
    wgt_contract_plan p;
    wgt_tensor *ops[2] = {a, b};
    return wgt_vecdot_plan(a, b, axis, &p) == WGT_OK ? wgt_contract_run("wgt_vecdot", &p, ops) : NULL;
}

wgt_status wgt_outer_plan(wgt_tensor *a, wgt_tensor *b, wgt_contract_plan *p) {
    static const char fn[] = "wgt_outer";
    wgt_tensor *ops[2] = {a, b};
    if (wgt_contract_check(fn, 2, ops) != WGT_OK) return wgt_last_status();
    if (a->ndim != 1 || b->ndim != 1) {
        char sa[256], sb[256];
        wgt_format_shape(sa, sizeof sa, a->ndim, a->shape);
        wgt_format_shape(sb, sizeof sb, b->ndim, b->shape);
        return wgt_error(WGT_ERR_SHAPE, "%s: takes two vectors, but a is %s and b is %s", fn, sa, sb);
    }
    *p = (wgt_contract_plan){.nops = 2, .labels = {{0}, {1}}, .nout = 2, .out = {0, 1}};
    return WGT_OK;
}

wgt_tensor *wgt_outer(wgt_tensor *a, wgt_tensor *b) {
    wgt_contract_plan p;
    wgt_tensor *ops[2] = {a, b};
    return wgt_outer_plan(a, b, &p) == WGT_OK ? wgt_contract_run("wgt_outer", &p, ops) : NULL;
}
