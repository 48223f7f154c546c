/*
 * An optimizer step inside a compiled graph. When the gradients come from graph inputs, the
 * step records each parameter's update as graph work that writes the parameter and its state
 * in place (wgt_record_graph_update), so one wgt_graph_dispatch runs forward, backward and
 * update. What changes between dispatches (the learning rate a schedule sets, and AdamW's
 * step count in the bias corrections) cannot be a constant baked into the graph: it lives in
 * the optimizer's hyper tensor, which a hook rewrites before each dispatch with the values an
 * eager step would use, so N dispatches compute what N eager steps compute.
 */
#include <math.h>
#include <stdlib.h>

#include "optim.h"

/* A private copy of a state tensor (an eager SGD step may have kept the gradient itself). */
static wgt_status own(wgt_tensor **state, wgt_tensor *p) {
    wgt_tensor *t = *state ? wgt_mul_scalar(*state, 1.0)
                           : wgt_zeros(p->storage->ctx, WGT_F32, p->ndim, p->shape);
    if (!t) return wgt_last_status();
    wgt_release(*state);
    *state = t;
    return WGT_OK;
}

wgt_status wgt_optim_graph_inputs(wgt_optimizer *o, int i, wgt_opt_inputs *in, wgt_ag_arena *ar, wgt_tensor **rates) {
    static const char fn[] = "wgt_optimizer_step";
    wgt_tensor *p = o->params[i];
    wgt_status st;
    if (!o->hyper && !(o->hyper = wgt_zeros(p->storage->ctx, WGT_F32, 2, (int64_t[2]){o->n, 3})))
        return wgt_last_status();
    if (!o->in_place[i]) {
        int uses_m = o->kind == OPT_ADAMW || o->momentum, uses_v = o->kind == OPT_ADAMW;
        if ((uses_m && (st = own(&o->m[i], p)) != WGT_OK) || (uses_v && (st = own(&o->v[i], p)) != WGT_OK))
            return st;
        o->in_place[i] = 1;
    }
    /* Everything the update reads changes between dispatches. The rates of all parameters
     * are one read (one launch) per step, not one per parameter. */
    if (!*rates && !(*rates = wgt_graph_read(fn, o->hyper))) return wgt_last_status();
    wgt_tensor *row = *rates;
    in->p = wgt_ag_k(ar, wgt_graph_read(fn, p));
    in->m = o->m[i] ? wgt_ag_k(ar, wgt_graph_read(fn, o->m[i])) : NULL;
    in->v = o->v[i] ? wgt_ag_k(ar, wgt_graph_read(fn, o->v[i])) : NULL;
    if (!in->p || (o->m[i] && !in->m) || (o->v[i] && !in->v)) return wgt_last_status();
    wgt_tensor **out[3] = {&in->lr, &in->inv_c1, &in->inv_c2};
    for (int k = 0; k < 3; k++)
        if (!(*out[k] = wgt_ag_k(ar, wgt_as_strided(row, 0, NULL, NULL, (int64_t)i * 3 + k)))) return wgt_last_status();
    return WGT_OK;
}

typedef struct hook_arg {
    wgt_optimizer *o;
    int n;
    int *which;
} hook_arg;

static wgt_status prepare(void *arg) {
    hook_arg *h = arg;
    wgt_optimizer *o = h->o;
    float *rows = calloc((size_t)o->n * 3, sizeof *rows);
    if (!rows) return wgt_error(WGT_ERR_OUT_OF_MEMORY, "wgt_graph_dispatch: out of host memory");
    for (int k = 0; k < h->n; k++) o->steps[h->which[k]]++;
    for (int i = 0; i < o->n; i++) {
        double t = (double)o->steps[i];
        rows[3 * i] = (float)o->lr;
        /* As an eager step computes them (t is at least 1 for the parameters updated). */
        if (o->kind == OPT_ADAMW && t >= 1) {
            rows[3 * i + 1] = (float)(1 / (1 - pow(o->beta1, t)));
            rows[3 * i + 2] = (float)(1 / (1 - pow(o->beta2, t)));
        }
    }
    wgt_status st = wgt_tensor_write(o->hyper, rows, sizeof *rows * (size_t)o->n * 3);
    free(rows);
    return st;
}

static void release(void *arg) {
    hook_arg *h = arg;
    wgt_optimizer_release(h->o);
    free(h->which);
    free(h);
}

wgt_status wgt_optim_graph_hook(wgt_optimizer *o, int *which, int n) {
    hook_arg *h = malloc(sizeof *h);
    if (!h) {
        free(which);
        return wgt_error(WGT_ERR_OUT_OF_MEMORY, "wgt_optimizer_step: out of host memory");
    }
    *h = (hook_arg){o, n, which};
    o->refs++;
    return wgt_graph_hook_add(o->params[0]->storage->ctx, "wgt_optimizer_step",
                              (wgt_graph_hook){prepare, release, h});
}
