/*
 * The backward pass: orders the metas the loss depends on (inputs before results), then walks
 * them from the loss back, handing each node the gradient summed from its results' nodes and
 * adding what it returns into its inputs' sums; leaves add theirs into their gradient. Every
 * step records ordinary lazy ops, so nothing runs until a gradient is read (or a graph built
 * from it is dispatched), and the scheduler fuses and frees the backward like the forward.
 */
#include <stdlib.h>
#include <string.h>

#include "autograd.h"

static uint64_t visits; /* each pass marks what it reached with a new number (atomically: passes may run on several threads) */

typedef struct {
    wgt_ag_meta **v;
    size_t n, cap;
} meta_list;

static int push(meta_list *l, wgt_ag_meta *m) {
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        wgt_ag_meta **g = realloc(l->v, cap * sizeof *g);
        if (!g) return 0;
        l->v = g, l->cap = cap;
    }
    l->v[l->n++] = m;
    return 1;
}

/* Post-order of the metas reachable from root (inputs before the results computed from them),
 * without recursion: each stack frame holds a meta and the next of its inputs to visit. */
typedef struct {
    wgt_ag_meta *m;
    int next;
} frame;

static wgt_status order(wgt_ag_meta *root, uint64_t mark, meta_list *out) {
    frame *stack = NULL;
    size_t n = 0, cap = 0;
    wgt_status st = WGT_OK;
    root->visit = mark;
    for (wgt_ag_meta *add = root;;) {
        if (add) {
            if (n == cap) {
                size_t grown = cap ? cap * 2 : 64;
                frame *g = realloc(stack, grown * sizeof *g);
                if (!g) goto oom;
                stack = g, cap = grown;
            }
            stack[n++] = (frame){add, 0};
            add = NULL;
        }
        if (!n) break;
        frame *f = &stack[n - 1];
        wgt_ag_node *node = f->m->node;
        /* A node without a gradient is not descended: the pass fails when it reaches it. */
        int nin = node && node->backward ? node->nin : 0;
        while (f->next < nin && !add) {
            wgt_ag_meta *in = node->in[f->next++].meta;
            if (in && in->visit != mark) {
                in->visit = mark;
                add = in;
            }
        }
        if (add) continue;
        if (!push(out, f->m)) goto oom;
        n--;
    }
    goto done;
oom:
    st = wgt_error(WGT_ERR_OUT_OF_MEMORY, "wgt_backward: out of host memory for ordering the gradient record");
done:
    free(stack);
    return st;
}

/* Adds g (taken) into *sum. */
static wgt_status accumulate(wgt_tensor **sum, wgt_tensor *g) {
    if (!*sum) {
        *sum = g;
        return WGT_OK;
    }
    wgt_tensor *s = wgt_add(*sum, g);
    wgt_release(g);
    if (!s) return wgt_last_status();
    wgt_release(*sum);
    *sum = s;
    return WGT_OK;
}

static int same_shape(const wgt_tensor *t, int ndim, const int64_t *shape) {
    if (t->ndim != ndim) return 0;
    for (int i = 0; i < ndim; i++)
        if (t->shape[i] != shape[i]) return 0;
    return 1;
}

/* Runs node's rule on g and adds what it returns into its inputs' sums. */
static wgt_status step(wgt_ag_node *node, wgt_tensor *g) {
    static const char fn[] = "wgt_backward";
    if (!node->backward)
        return wgt_error(WGT_ERR_USAGE,
                         "%s: no gradient flows through %s%s%s, which lies on a path from the loss to a leaf "
                         "(wgt_detach its argument where that path is meant as a constant)",
                         fn, node->fn, node->why ? ": " : "", node->why ? node->why : "");
    wgt_tensor *stack_gin[8], **gin = node->nin <= 8 ? stack_gin : calloc((size_t)node->nin, sizeof *gin);
    if (!gin) return wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory", fn);
    memset(gin, 0, sizeof *gin * (size_t)node->nin);
    wgt_ag_arena ar = {0};
    wgt_status st = node->backward(node, g, gin, &ar);
    if (st == WGT_OK) st = wgt_ag_done(node, gin, &ar);
    for (int i = 0; i < node->nin; i++) gin[i] = st == WGT_OK && node->in[i].meta ? wgt_retain(gin[i]) : NULL;
    wgt_ag_arena_free(&ar);
    for (int i = 0; i < node->nin; i++) {
        wgt_ag_edge *e = &node->in[i];
        if (st == WGT_OK && e->meta && gin[i]) {
            if (!same_shape(gin[i], e->ndim, e->shape) || gin[i]->dtype != e->dtype) {
                char want[256], got[256];
                wgt_format_shape(want, sizeof want, e->ndim, e->shape);
                wgt_format_shape(got, sizeof got, gin[i]->ndim, gin[i]->shape);
                st = wgt_error(WGT_ERR_INTERNAL, "%s: the gradient rule of %s gave input %d a %s gradient of shape %s; "
                               "the input is %s %s", fn, node->fn, i, wgt_dtype_name(gin[i]->dtype), got,
                               wgt_dtype_name(e->dtype), want);
            } else {
                st = accumulate(&e->meta->acc, gin[i]);
                gin[i] = NULL;
            }
        }
        wgt_release(gin[i]);
    }
    if (gin != stack_gin) free(gin);
    return st;
}

wgt_status wgt_backward(wgt_tensor *loss, wgt_tensor *grad) {
    static const char fn[] = "wgt_backward";
    if (wgt_check_tensor(fn, "loss", loss) != WGT_OK) return wgt_last_status();
    if (grad && (wgt_check_tensor(fn, "grad", grad) != WGT_OK || wgt_check_same_context(fn, loss, grad) != WGT_OK))
        return wgt_last_status();
    if (!wgt_ag_needs(loss))
        return wgt_error(WGT_ERR_USAGE,
                         "%s: loss needs no gradient: it was not computed (outside wgt_no_grad_begin) from a tensor "
                         "marked with wgt_requires_grad", fn);
    wgt_tensor *seed;
    if (grad) {
        if (!same_shape(grad, loss->ndim, loss->shape) || grad->dtype != loss->dtype) {
            char a[256], b[256];
            wgt_format_shape(a, sizeof a, grad->ndim, grad->shape);
            wgt_format_shape(b, sizeof b, loss->ndim, loss->shape);
            return wgt_error(WGT_ERR_SHAPE, "%s: grad is %s %s; it must match loss, %s %s", fn,
                             wgt_dtype_name(grad->dtype), a, wgt_dtype_name(loss->dtype), b);
        }
        seed = wgt_retain(grad);
    } else {
        if (wgt_tensor_numel(loss) != 1) {
            char b[256];
            wgt_format_shape(b, sizeof b, loss->ndim, loss->shape);
            return wgt_error(WGT_ERR_SHAPE, "%s: loss has shape %s; without grad it must have one element", fn, b);
        }
        seed = wgt_full(loss->storage->ctx, loss->dtype, loss->ndim, loss->shape, 1.0);
    }
    if (!seed) return wgt_last_status();
    meta_list list = {0};
    wgt_status st = order(loss->ag, __atomic_add_fetch(&visits, 1, __ATOMIC_RELAXED), &list);
    if (st == WGT_OK) loss->ag->acc = seed;
    else wgt_release(seed);
    /* Results come after their inputs in the list: from the end, every sum is complete. */
    for (size_t i = list.n; i-- > 0;) {
        wgt_ag_meta *m = list.v[i];
        wgt_tensor *g = m->acc;
        m->acc = NULL;
        if (st != WGT_OK || !g) {
            wgt_release(g);
            continue;
        }
        if (m->node) st = step(m->node, g);
        if (st == WGT_OK && m->requires_grad) {
            st = accumulate(&m->grad, g);
            g = NULL;
        }
        wgt_release(g);
    }
    free(list.v);
    return st;
}
