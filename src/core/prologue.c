/*
 * Prologues: an rms_norm whose result only quantized matrix products read (a transformer's
 * norm before its projections) runs inside each of them: the backend normalizes x as the
 * product reads it (backend.h's matmul_quantized norm), and the norm's own launch goes. A
 * decoding step is bound by its launches, one norm before the attention's products and one
 * before the MLP's in every layer.
 *
 * The planner (scheduler.c) asks wgt_prologues_find which norms to fold after liveness and the
 * epilogues (a product that runs inside its add keeps its norm), and, once every other fold is
 * decided, wgt_prologues_keep drops those whose input another fold would write. Each product
 * then runs the node wgt_prologue_node makes: the product reading the norm's input, with the
 * norm's weight and eps. The norm itself runs nowhere; its node lives until the last of its
 * products has run, as the storages the products now read are its operands.
 *
 * Moving the norm's reads to the products is sound because nothing runs between them: every
 * node from the norm to its last product is one of those products or dropped, and the products
 * write only their own fresh results.
 */
#include <stdlib.h>
#include <string.h>

#include "node.h"

#define PROLOGUE_READERS 8 /* products one norm may feed: bounds the planning cost */

/* The norm's input as the product's 2-D x [M, K] (offset and strides), when its leading axes
 * merge into one row axis. */
static int rows_view(const wgt_operand *in, int64_t M, int64_t K, wgt_operand *x) {
    int last = in->ndim - 1;
    int64_t row = 0, span = 0; /* the merged row stride, and the extent of the axes merged so far */
    for (int d = last - 1; d >= 0; d--) {
        if (in->shape[d] == 1) continue;
        if (row && in->strides[d] != span) return 0;
        if (!row) row = in->strides[d];
        span = in->strides[d] * in->shape[d];
    }
    *x = *in;
    x->ndim = 2;
    x->shape[0] = M, x->shape[1] = K;
    x->strides[1] = last >= 0 ? in->strides[last] : 1;
    x->strides[0] = row ? row : K * x->strides[1];
    return 1;
}

/* op is M rows of K from its storage's start, row-major. */
static int dense_rows(const wgt_operand *op, int64_t M, int64_t K) {
    return op->offset == 0 && op->shape[op->ndim - 1] == K && op->strides[op->ndim - 1] == 1 &&
           wgt_numel(op->ndim, op->shape) == M * K && wgt_is_contiguous(op->ndim, op->shape, op->strides);
}

/* Whether norm node r may fold into product p, which reads r's result as its x. */
static int product_takes(const wgt_node *r, const wgt_node *p, const int *epi, int pi) {
    const wgt_operand *x = &p->args[1], *res = &r->args[0];
    if (p->kind != WGT_NODE_MATMUL_QUANTIZED || p->nargs != 3 || epi[pi] != WGT_EPILOGUE_NONE || x->storage != res->storage)
        return 0;
    int64_t M = x->shape[0], K = x->shape[1];
    /* x read whole and in order: [M, K] rows from the result's start. */
    if (x->offset != 0 || x->strides[1] != 1 || (M > 1 && x->strides[0] != K)) return 0;
    return x->dtype == WGT_F32 && dense_rows(res, M, K);
}

/* The products of norm node i (into readers, *count of them), or 0 when it cannot fold. */
static int find_readers(wgt_node *const *nodes, int n, const char *live, const int *epi, int i, int *readers,
                        int *count) {
    const wgt_node *r = nodes[i];
    wgt_storage *s = r->args[0].storage;
    if (r->kind != WGT_NODE_ROWS || r->op != WGT_ROWS_RMS_NORM || r->nargs < 2 || r->nwrites != 1 || r->partial ||
        r->index_bound || (r->nargs > 3 && r->args[3].storage) || !s || s->needed || s->writers != 1 ||
        s->readers < 1 || s->readers > PROLOGUE_READERS)
        return 0;
    const wgt_operand *in = &r->args[1], *g = r->nargs > 2 && r->args[2].storage ? &r->args[2] : NULL;
    if (in->dtype != WGT_F32 || r->args[0].dtype != WGT_F32 || (g && (g->dtype != WGT_F32 || g->ndim != 1)))
        return 0;
    /* Every live node after the norm up to its last reader is one of its products. */
    *count = 0;
    for (int q = i + 1; q < n && *count < s->readers; q++) {
        if (!live[q]) continue;
        if (!product_takes(r, nodes[q], epi, q) || wgt_node_writes(nodes[q], in->storage) ||
            (g && wgt_node_writes(nodes[q], g->storage)))
            return 0;
        readers[(*count)++] = q;
    }
    return *count == s->readers;
}

void wgt_prologues_find(wgt_node *const *nodes, int n, const char *live, const int *epi, int *pro) {
    for (int i = 0; i < n; i++) pro[i] = WGT_PROLOGUE_NONE;
    int readers[PROLOGUE_READERS], count;
    for (int i = 0; i < n; i++) {
        if (!live[i] || !find_readers(nodes, n, live, epi, i, readers, &count)) continue;
        const wgt_operand *x = &nodes[readers[0]]->args[1];
        wgt_operand view;
        if (!rows_view(&nodes[i]->args[1], x->shape[0], x->shape[1], &view)) continue;
        pro[i] = WGT_PROLOGUE_FOLDED;
        for (int k = 0; k < count; k++) pro[readers[k]] = i;
    }
}

void wgt_prologues_keep(wgt_node *const *nodes, int n, const int *stored_in, int *pro) {
    for (int i = 0; i < n; i++) {
        if (pro[i] != WGT_PROLOGUE_FOLDED) continue;
        const wgt_node *r = nodes[i];
        const wgt_storage *in = r->args[1].storage, *g = r->nargs > 2 ? r->args[2].storage : NULL;
        int kept = 1;
        for (int u = 0; u < n && kept; u++)
            if (stored_in[u] >= 0 &&
                (wgt_node_writes(nodes[stored_in[u]], in) || (g && wgt_node_writes(nodes[stored_in[u]], g))))
                kept = 0;
        if (kept) continue;
        pro[i] = WGT_PROLOGUE_NONE;
        for (int q = i + 1; q < n; q++)
            if (pro[q] == i) pro[q] = WGT_PROLOGUE_NONE;
    }
}

wgt_node *wgt_prologue_node(const wgt_node *prod, const wgt_node *norm) {
    int nargs = 5;
    wgt_node *e = malloc(sizeof *e + sizeof(wgt_operand) * (nargs > WGT_NODE_MAX_ARGS ? nargs : WGT_NODE_MAX_ARGS));
    if (!e) return NULL;
    memcpy(e, prod, sizeof *e + sizeof(wgt_operand) * 3);
    e->nargs = nargs;
    const wgt_operand *x = &prod->args[1];
    rows_view(&norm->args[1], x->shape[0], x->shape[1], &e->args[1]); /* checked by wgt_prologues_find */
    memset(&e->args[3], 0, sizeof e->args[3]); /* no addend */
    if (norm->nargs > 2 && norm->args[2].storage) e->args[4] = norm->args[2];
    else memset(&e->args[4], 0, sizeof e->args[4]);
    e->params[0] = norm->params[0];
    return e;
}
