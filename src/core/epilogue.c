/*
 * Epilogues: an add that takes a quantized matrix product's result and nothing else needs
 * that result (a transformer's residual add after its output and down products) runs inside
 * the product, which adds the other operand to each finished sum (backend.h's
 * matmul_quantized addend). On a GPU decoding a token is bound by dispatches, not bytes, so
 * one launch fewer for each such pair matters; the sum is the same f32 add of the same two
 * values, so results do not change.
 *
 * The planner (scheduler.c) asks wgt_epilogues_find which adds to fold after liveness, before
 * elementwise fusion (a folded add joins no group), and puts one step in place of the pair at
 * the add's position, running the node wgt_epilogue_node makes: the product's node writing the
 * add's output, with the addend as its fourth operand.
 */
#include <stdlib.h>
#include <string.h>

#include "node.h"

#define EPILOGUE_WINDOW 512 /* nodes between a product and its add: bounds the planning cost */

/* op is row-major contiguous (size-1 dimensions aside) with numel elements. */
static int contiguous(const wgt_operand *op, int64_t numel) {
    int64_t expect = 1;
    for (int d = op->ndim - 1; d >= 0; d--) {
        if (op->shape[d] != 1 && op->strides[d] != expect) return 0;
        expect *= op->shape[d];
    }
    return expect == numel;
}

static int same_shape(const wgt_operand *a, const wgt_operand *b) {
    if (a->ndim != b->ndim) return 0;
    for (int d = 0; d < a->ndim; d++)
        if (a->shape[d] != b->shape[d]) return 0;
    return 1;
}

/* Whether add node i (reading the product's result at args[k]) may take product p, whose
 * result storage s has no reader but the add. */
static int foldable(wgt_node *const *nodes, const char *live, int p, int i, int k) {
    const wgt_node *prod = nodes[p], *add = nodes[i];
    const wgt_operand *res = &prod->args[0], *out = &add->args[0], *x = &add->args[3 - k];
    int64_t M = res->shape[0], N = res->shape[1];
    if (prod->kind != WGT_NODE_MATMUL_QUANTIZED || prod->nargs != 3 || i - p > EPILOGUE_WINDOW) return 0;
    if (res->dtype != WGT_F32 || out->dtype != WGT_F32 || x->dtype != WGT_F32 || add->args[k].dtype != WGT_F32)
        return 0;
    /* The result read whole and in order, the output written so, the addend at the output's
     * shape (no broadcast) in order at any offset, and in a storage the product does not write. */
    if (res->offset != 0 || !contiguous(res, M * N) || add->args[k].offset != 0 || !contiguous(&add->args[k], M * N) ||
        out->offset != 0 || !contiguous(out, M * N) || !same_shape(x, out) || !same_shape(&add->args[k], out) ||
        !contiguous(x, M * N) || x->storage == out->storage || x->storage == res->storage)
        return 0;
    /* The pair runs at the add: nothing in between may write what the product reads. */
    for (int q = p + 1; q < i; q++) {
        if (!live[q]) continue;
        if (wgt_node_writes(nodes[q], prod->args[1].storage) || wgt_node_writes(nodes[q], prod->args[2].storage))
            return 0;
    }
    return 1;
}

void wgt_epilogues_find(wgt_node *const *nodes, int n, const char *live, int *epi) {
    for (int i = 0; i < n; i++) epi[i] = WGT_EPILOGUE_NONE;
    for (int i = 0; i < n; i++) {
        const wgt_node *add = nodes[i];
        if (!live[i] || add->kind != WGT_NODE_BINARY || add->op != WGT_BINARY_ADD || add->nargs != 3 ||
            add->nwrites != 1 || add->partial || add->index_bound)
            continue;
        for (int k = 1; k <= 2; k++) {
            wgt_storage *s = add->args[k].storage;
            int p = s ? s->producer_index : -1;
            if (p < 0 || p >= i || epi[p] != WGT_EPILOGUE_NONE || s->readers != 1 || s->needed ||
                !foldable(nodes, live, p, i, k))
                continue;
            epi[i] = p;
            epi[p] = WGT_EPILOGUE_FOLDED;
            break;
        }
    }
}

wgt_node *wgt_epilogue_node(const wgt_node *prod, const wgt_node *add) {
    int k = add->args[1].storage == prod->args[0].storage ? 1 : 2;
    wgt_node *e = malloc(sizeof *e + sizeof(wgt_operand) * WGT_NODE_MAX_ARGS);
    if (!e) return NULL;
    memcpy(e, prod, sizeof *e + sizeof(wgt_operand) * 3);
    const wgt_operand *res = &prod->args[0], *x = &add->args[3 - k];
    e->nargs = 4;
    e->args[0] = *res; /* the product's [M, N] layout, in the add's output */
    e->args[0].storage = add->args[0].storage;
    e->args[3] = *res;
    e->args[3].storage = x->storage;
    e->args[3].offset = x->offset;
    /* Rows of N in order (a single row's stride may be anything: the backends want N). */
    e->args[3].strides[0] = res->shape[1];
    e->args[3].strides[1] = 1;
    return e;
}
