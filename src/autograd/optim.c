/*
 * Optimizers, the warmup + cosine schedule and gradient clipping. A step records, per
 * parameter, the update as lazy elementwise ops (fused into one kernel per state tensor and
 * parameter on a backend that fuses) and then a copy of the new value into the parameter's own
 * storage, so the caller's handles keep naming the parameters. The state (momentum, moments)
 * is f32 whatever the parameter's type; eager steps replace it by new tensors, until a compiled
 * graph updates it (optim_graph.c), after which it is written in place. Everything runs under
 * no-grad: an update is never differentiated.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "optim.h"

static wgt_optimizer *create(const char *fn, wgt_opt_kind kind, int n, wgt_tensor *const *params) {
    if (n < 1 || !params) {
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: %s", fn, n < 1 ? "no parameters (n < 1)" : "params is NULL");
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "params[%d]", i);
        if (wgt_check_tensor(fn, name, params[i]) != WGT_OK) return NULL;
        wgt_tensor *p = params[i];
        if (!p->ag || !p->ag->requires_grad || p->ag->node) {
            wgt_error(WGT_ERR_USAGE, "%s: params[%d] is not a leaf marked with wgt_requires_grad", fn, i);
            return NULL;
        }
        if (!wgt_is_contiguous(p->ndim, p->shape, p->strides) || p->offset != 0 ||
            wgt_tensor_nbytes(p) != p->storage->nbytes || p->storage->symbolic) {
            wgt_error(WGT_ERR_USAGE, "%s: params[%d] is %s; an optimizer updates whole tensors with data in place", fn,
                      i, p->storage->symbolic ? "a graph input" : "a view of part of a storage");
            return NULL;
        }
        if (!(p->usage & WGT_USAGE_WRITABLE)) {
            wgt_error(WGT_ERR_USAGE, "%s: params[%d] was created without the writable usage", fn, i);
            return NULL;
        }
        for (int j = 0; j < i; j++)
            if (params[j]->storage == p->storage) {
                wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: params[%d] and params[%d] share storage", fn, j, i);
                return NULL;
            }
    }
    wgt_optimizer *o = calloc(1, sizeof *o);
    if (o) {
        o->params = calloc((size_t)n, sizeof *o->params);
        o->m = calloc((size_t)n, sizeof *o->m);
        o->v = calloc((size_t)n, sizeof *o->v);
        o->steps = calloc((size_t)n, sizeof *o->steps);
        o->in_place = calloc((size_t)n, 1);
    }
    if (!o || !o->params || !o->m || !o->v || !o->steps || !o->in_place) {
        if (o) free(o->params), free(o->m), free(o->v), free(o->steps), free(o->in_place);
        free(o);
        wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory", fn);
        return NULL;
    }
    o->refs = 1;
    o->kind = kind;
    o->n = n;
    for (int i = 0; i < n; i++) o->params[i] = wgt_retain(params[i]);
    return o;
}

static int finite_in(double v, double lo, double hi) { return isfinite(v) && v >= lo && v <= hi; }

wgt_optimizer *wgt_sgd(int n, wgt_tensor *const *params, double lr, double momentum, double weight_decay) {
    static const char fn[] = "wgt_sgd";
    if (!finite_in(lr, 0, INFINITY) || !finite_in(momentum, 0, 1) || !finite_in(weight_decay, 0, INFINITY)) {
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: lr %g, momentum %g, weight_decay %g: lr and weight_decay must be finite "
                  "and >= 0, momentum in [0, 1]", fn, lr, momentum, weight_decay);
        return NULL;
    }
    wgt_optimizer *o = create(fn, OPT_SGD, n, params);
    if (o) o->lr = lr, o->momentum = momentum, o->weight_decay = weight_decay;
    return o;
}

wgt_optimizer *wgt_adamw(int n, wgt_tensor *const *params, double lr, double beta1, double beta2, double eps,
                         double weight_decay) {
    static const char fn[] = "wgt_adamw";
    if (!finite_in(lr, 0, INFINITY) || !finite_in(beta1, 0, 1) || beta1 == 1 || !finite_in(beta2, 0, 1) || beta2 == 1 ||
        !finite_in(eps, 0, INFINITY) || !finite_in(weight_decay, 0, INFINITY)) {
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: lr %g, betas %g and %g, eps %g, weight_decay %g: betas must lie in "
                  "[0, 1), the rest be finite and >= 0", fn, lr, beta1, beta2, eps, weight_decay);
        return NULL;
    }
    wgt_optimizer *o = create(fn, OPT_ADAMW, n, params);
    if (o) o->lr = lr, o->beta1 = beta1, o->beta2 = beta2, o->eps = eps, o->weight_decay = weight_decay;
    return o;
}

/* Records p = value (f32, p's shape) into p's own storage: at once, or at each dispatch of the
 * next compiled graph when value is computed from graph inputs. */
static wgt_status assign(const char *fn, wgt_tensor *p, wgt_tensor *value) {
    wgt_tensor *v = value->dtype == p->dtype ? wgt_retain(value) : wgt_cast(value, p->dtype);
    if (!v) return wgt_last_status();
    wgt_status st;
    if (v->storage->symbolic) {
        st = wgt_record_graph_update(p->storage->ctx, fn, p, v);
    } else {
        wgt_operand dst, src;
        wgt_operand_whole(p, &dst);
        wgt_operand_whole(v, &src);
        st = wgt_record_copy(p->storage->ctx, fn, &dst, &src);
    }
    wgt_release(v);
    return st;
}

/* The new state *state, in place where a graph updates it, else by replacing the tensor. */
static wgt_status keep_state(wgt_optimizer *o, int i, wgt_tensor **state, wgt_tensor *next) {
    if (o->in_place[i]) return assign("wgt_optimizer_step", *state, next);
    wgt_release(*state);
    *state = wgt_retain(next);
    return WGT_OK;
}

/* The update of parameter i from gradient g (f32), in the arena. The learning rate and the
 * bias corrections are one-element tensors: constants for an eager step, the optimizer's
 * per-dispatch values inside a graph (optim_graph.c, which also has the parameter and state
 * read afresh at each dispatch), so both run the same arithmetic. */
static wgt_status update(wgt_optimizer *o, int i, wgt_tensor *g, wgt_ag_arena *ar, wgt_tensor **rates) {
    static const char fn[] = "wgt_optimizer_step";
    wgt_tensor *p = o->params[i];
    wgt_opt_inputs in = {p, o->m[i], o->v[i], NULL, NULL, NULL};
    wgt_status st = g->storage->symbolic ? wgt_optim_graph_inputs(o, i, &in, ar, rates) : WGT_OK;
    if (st != WGT_OK) return st;
    if (!g->storage->symbolic) {
        wgt_context *ctx = p->storage->ctx;
        in.lr = K(wgt_scalar(ctx, WGT_F32, o->lr));
        if (o->kind == OPT_ADAMW) {
            double t = (double)++o->steps[i];
            in.inv_c1 = K(wgt_scalar(ctx, WGT_F32, 1 / (1 - pow(o->beta1, t))));
            in.inv_c2 = K(wgt_scalar(ctx, WGT_F32, 1 / (1 - pow(o->beta2, t))));
        }
    }
    wgt_tensor *pf = in.p->dtype == WGT_F32 ? in.p : K(wgt_cast(in.p, WGT_F32));
    wgt_tensor *next_m = NULL, *next_v = NULL, *np = NULL;
    if (o->kind == OPT_SGD) {
        wgt_tensor *d = o->weight_decay ? K(wgt_add(g, K(wgt_mul_scalar(pf, o->weight_decay)))) : g;
        if (o->momentum) d = next_m = in.m ? K(wgt_add(K(wgt_mul_scalar(in.m, o->momentum)), d)) : d;
        np = K(wgt_sub(pf, K(wgt_mul(d, in.lr))));
    } else {
        double b1 = o->beta1, b2 = o->beta2;
        wgt_tensor *gm = K(wgt_mul_scalar(g, 1 - b1)), *gv = K(wgt_mul_scalar(K(wgt_square(g)), 1 - b2));
        next_m = in.m ? K(wgt_add(K(wgt_mul_scalar(in.m, b1)), gm)) : gm;
        next_v = in.v ? K(wgt_add(K(wgt_mul_scalar(in.v, b2)), gv)) : gv;
        wgt_tensor *den = K(wgt_add_scalar(K(wgt_sqrt(K(wgt_mul(next_v, in.inv_c2)))), o->eps));
        wgt_tensor *dir = K(wgt_div(K(wgt_mul(next_m, in.inv_c1)), den));
        if (o->weight_decay) dir = K(wgt_add(dir, K(wgt_mul_scalar(pf, o->weight_decay))));
        np = K(wgt_sub(pf, K(wgt_mul(dir, in.lr))));
    }
    if (!np) return wgt_last_status();
    if (next_m && (st = keep_state(o, i, &o->m[i], next_m)) != WGT_OK) return st;
    if (next_v && (st = keep_state(o, i, &o->v[i], next_v)) != WGT_OK) return st;
    return assign(fn, p, np);
}

wgt_status wgt_optimizer_step(wgt_optimizer *o) {
    if (!o) return wgt_error(WGT_ERR_INVALID_ARGUMENT, "wgt_optimizer_step: optimizer is NULL");
    /* A gradient computed from graph inputs makes the update part of the next compiled graph:
     * those parameters are noted for the hook that sets each dispatch's learning rate and step. */
    int *in_graph = malloc(sizeof *in_graph * (size_t)o->n), ngraph = 0;
    if (!in_graph) return wgt_error(WGT_ERR_OUT_OF_MEMORY, "wgt_optimizer_step: out of host memory");
    wgt_status st = WGT_OK;
    wgt_tensor *rates = NULL; /* the graph's read of the rates, shared by its parameters */
    wgt_no_grad_begin();
    for (int i = 0; i < o->n && st == WGT_OK; i++) {
        wgt_tensor *p = o->params[i], *g = p->ag ? p->ag->grad : NULL;
        if (!g) continue;
        if (g->storage->symbolic) in_graph[ngraph++] = i;
        wgt_ag_arena ar = {0};
        wgt_tensor *gf = g->dtype == WGT_F32 ? g : wgt_ag_k(&ar, wgt_cast(g, WGT_F32));
        st = gf ? update(o, i, gf, &ar, &rates) : wgt_last_status();
        wgt_ag_arena_free(&ar);
    }
    wgt_release(rates);
    wgt_no_grad_end();
    if (st == WGT_OK && ngraph) return wgt_optim_graph_hook(o, in_graph, ngraph); /* takes in_graph */
    free(in_graph);
    return st;
}

wgt_status wgt_optimizer_zero_grad(wgt_optimizer *o) {
    if (!o) return wgt_error(WGT_ERR_INVALID_ARGUMENT, "wgt_optimizer_zero_grad: optimizer is NULL");
    for (int i = 0; i < o->n; i++) wgt_zero_grad(o->params[i]);
    return WGT_OK;
}

wgt_status wgt_optimizer_set_lr(wgt_optimizer *o, double lr) {
    if (!o) return wgt_error(WGT_ERR_INVALID_ARGUMENT, "wgt_optimizer_set_lr: optimizer is NULL");
    if (!finite_in(lr, 0, INFINITY))
        return wgt_error(WGT_ERR_INVALID_ARGUMENT, "wgt_optimizer_set_lr: lr %g must be finite and >= 0", lr);
    o->lr = lr;
    return WGT_OK;
}

double wgt_optimizer_lr(const wgt_optimizer *o) { return o ? o->lr : NAN; }

void wgt_optimizer_release(wgt_optimizer *o) {
    if (!o || --o->refs > 0) return; /* a compiled graph that updates its parameters holds it too */
    for (int i = 0; i < o->n; i++) {
        wgt_release(o->params[i]);
        wgt_release(o->m[i]);
        wgt_release(o->v[i]);
    }
    free(o->params);
    free(o->m);
    free(o->v);
    free(o->steps);
    free(o->in_place);
    wgt_release(o->hyper);
    free(o);
}

double wgt_lr_warmup_cosine(int64_t step, int64_t warmup, int64_t total, double peak, double min_lr) {
    if (step < 0) return 0;
    if (step < warmup) return peak * (double)(step + 1) / (double)warmup;
    if (step >= total || total <= warmup) return min_lr;
    double progress = (double)(step - warmup) / (double)(total - warmup);
    return min_lr + 0.5 * (peak - min_lr) * (1 + cos(M_PI * progress));
}

wgt_status wgt_clip_grad_norm(int n, wgt_tensor *const *params, double max_norm, double *norm_out) {
    static const char fn[] = "wgt_clip_grad_norm";
    if (n < 0 || (n > 0 && !params)) return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: n %d with params NULL", fn, n);
    if (!(max_norm > 0) || !isfinite(max_norm))
        return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: max_norm %g must be finite and positive", fn, max_norm);
    for (int i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "params[%d]", i);
        if (wgt_check_tensor(fn, name, params[i]) != WGT_OK) return wgt_last_status();
    }
    wgt_ag_arena a = {0}, *ar = &a;
    wgt_tensor *total = NULL;
    wgt_no_grad_begin();
    for (int i = 0; i < n; i++) {
        wgt_tensor *g = params[i]->ag ? params[i]->ag->grad : NULL;
        if (!g) continue;
        wgt_tensor *sq = K(wgt_sum(K(wgt_square(g->dtype == WGT_F32 ? g : K(wgt_cast(g, WGT_F32)))), 0, NULL, 0));
        total = total ? K(wgt_add(total, sq)) : sq;
        if (!sq) break;
    }
    wgt_status st = WGT_OK;
    float norm2 = 0;
    if (total) st = wgt_tensor_read(total, &norm2, sizeof norm2);
    else if (wgt_last_status() != WGT_OK && a.n) st = wgt_last_status();
    double norm = sqrt((double)norm2);
    if (norm_out) *norm_out = st == WGT_OK ? norm : NAN;
    /* As PyTorch: scale by max_norm / (norm + 1e-6) when that is below 1. */
    double scale = max_norm / (norm + 1e-6);
    for (int i = 0; st == WGT_OK && scale < 1 && i < n; i++) {
        wgt_ag_meta *m = params[i]->ag;
        if (!m || !m->grad) continue;
        wgt_tensor *scaled = wgt_mul_scalar(m->grad, scale);
        if (!scaled) st = wgt_last_status();
        else wgt_release(m->grad), m->grad = scaled;
    }
    wgt_no_grad_end();
    wgt_ag_arena_free(ar);
    return st;
}
