/*
 * The tape's records (autograd.h): metas and nodes, their lifetime, and the public calls that
 * mark leaves and read gradients. The no-grad scope is per thread, as errors are.
 */
#include <stdlib.h>
#include <string.h>

#include "autograd.h"

static _Thread_local int no_grad_depth;

static int is_float(wgt_dtype d) { return d == WGT_F32 || d == WGT_F16; }

int wgt_ag_needs(const wgt_tensor *t) { return t && t->refs > 0 && t->ag && (t->ag->requires_grad || t->ag->node); }

int wgt_ag_tracking(int n, wgt_tensor *const *ins) {
    if (no_grad_depth) return 0;
    for (int i = 0; i < n; i++)
        if (wgt_ag_needs(ins[i])) return 1;
    return 0;
}

/* Freeing a meta frees its node, which releases its inputs' metas: for a chain of N ops that
 * would nest N calls deep. As lazy.c does with nodes, the outermost release on the thread
 * frees a queue one meta at a time. */
static _Thread_local wgt_ag_meta *free_queue;
static _Thread_local int freeing;

void wgt_ag_node_free(wgt_ag_node *n) {
    if (!n) return;
    for (int i = 0; i < n->nin; i++)
        if (n->in[i].meta) wgt_ag_meta_release(n->in[i].meta);
    for (int i = 0; i < WGT_AG_SAVED; i++) wgt_release(n->saved[i]);
    free(n->in);
    free(n);
}

static void meta_free(wgt_ag_meta *m) {
    wgt_release(m->grad);
    wgt_release(m->acc);
    wgt_ag_node_free(m->node);
    free(m);
}

void wgt_ag_meta_release(wgt_ag_meta *m) {
    if (!m || --m->refs > 0) return;
    m->next_free = free_queue;
    free_queue = m;
    if (freeing) return;
    freeing = 1;
    while (free_queue) {
        wgt_ag_meta *f = free_queue;
        free_queue = f->next_free;
        meta_free(f);
    }
    freeing = 0;
}

static wgt_ag_meta *meta_new(const char *fn) {
    wgt_ag_meta *m = calloc(1, sizeof *m);
    if (!m) wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory for the gradient record", fn);
    else m->refs = 1;
    return m;
}

wgt_ag_node *wgt_ag_node_new(const char *fn, wgt_tensor *out, int n, wgt_tensor *const *ins, wgt_ag_backward_fn bw) {
    wgt_ag_node *node = calloc(1, sizeof *node);
    wgt_ag_edge *in = calloc((size_t)(n > 0 ? n : 1), sizeof *in);
    if (!node || !in) {
        free(node);
        free(in);
        wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory for the gradient record", fn);
        return NULL;
    }
    node->fn = fn;
    node->backward = bw;
    node->nin = n;
    node->in = in;
    node->ctx = out->storage->ctx;
    node->out_dtype = out->dtype;
    node->out_ndim = out->ndim;
    memcpy(node->out_shape, out->shape, sizeof node->out_shape);
    for (int i = 0; i < n; i++) {
        wgt_tensor *t = ins[i];
        if (!t) continue;
        in[i].dtype = t->dtype;
        in[i].ndim = t->ndim;
        memcpy(in[i].shape, t->shape, sizeof in[i].shape);
        if (wgt_ag_needs(t)) {
            in[i].meta = t->ag;
            t->ag->refs++;
        }
    }
    return node;
}

void wgt_ag_save(wgt_ag_node *n, int i, wgt_tensor *t) {
    if (!t) {
        n->failed = 1;
        return;
    }
    wgt_release(n->saved[i]);
    n->saved[i] = wgt_tensor_new_view(t, t->ndim, t->shape, t->strides, t->offset);
    if (!n->saved[i]) n->failed = 1;
}

wgt_tensor *wgt_ag_attach(wgt_tensor *out, wgt_ag_node *n) {
    wgt_ag_meta *m = n->failed ? NULL : meta_new(n->fn);
    if (!m) {
        if (n->failed) wgt_error_if_clear(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory for the gradient record", n->fn);
        wgt_ag_node_free(n);
        wgt_release(out);
        return NULL;
    }
    m->node = n;
    out->ag = m;
    return out;
}

wgt_tensor *wgt_ag_untracked(const char *fn, wgt_tensor *out, int n, wgt_tensor *const *args) {
    if (!out || !wgt_ag_tracking(n, args)) return out;
    wgt_ag_node *node = wgt_ag_node_new(fn, out, n, args, NULL);
    return node ? wgt_ag_attach(out, node) : (wgt_release(out), NULL);
}

/* ---- the public calls ---- */

wgt_status wgt_requires_grad(wgt_tensor *t, int on) {
    static const char fn[] = "wgt_requires_grad";
    if (wgt_check_tensor(fn, "t", t) != WGT_OK) return wgt_last_status();
    if (t->ag && t->ag->node)
        return wgt_error(WGT_ERR_USAGE,
                         "%s: t was computed by %s from tensors that need gradients; only a leaf (a tensor not "
                         "computed from them, or wgt_detach of one) can be marked",
                         fn, t->ag->node->fn);
    if (!on) {
        if (t->ag) t->ag->requires_grad = 0;
        return WGT_OK;
    }
    if (!is_float(t->dtype))
        return wgt_error(WGT_ERR_DTYPE, "%s: t is %s; only f32 and f16 tensors have gradients", fn,
                         wgt_dtype_name(t->dtype));
    if (!t->ag && !(t->ag = meta_new(fn))) return wgt_last_status();
    t->ag->requires_grad = 1;
    return WGT_OK;
}

int wgt_tensor_requires_grad(const wgt_tensor *t) { return wgt_ag_needs(t); }

wgt_tensor *wgt_grad(wgt_tensor *t) {
    if (wgt_check_tensor("wgt_grad", "t", t) != WGT_OK) return NULL;
    return t->ag && t->ag->grad ? wgt_retain(t->ag->grad) : NULL;
}

wgt_status wgt_zero_grad(wgt_tensor *t) {
    if (wgt_check_tensor("wgt_zero_grad", "t", t) != WGT_OK) return wgt_last_status();
    if (t->ag) {
        wgt_release(t->ag->grad);
        t->ag->grad = NULL;
    }
    return WGT_OK;
}

void wgt_no_grad_begin(void) { no_grad_depth++; }

wgt_status wgt_no_grad_end(void) {
    if (no_grad_depth == 0)
        return wgt_error(WGT_ERR_USAGE, "wgt_no_grad_end: no wgt_no_grad_begin on this thread is open");
    no_grad_depth--;
    return WGT_OK;
}

wgt_tensor *wgt_detach(wgt_tensor *t) {
    if (wgt_check_tensor("wgt_detach", "t", t) != WGT_OK) return NULL;
    return wgt_tensor_new_view(t, t->ndim, t->shape, t->strides, t->offset);
}
