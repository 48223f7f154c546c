/*
 * The optimizer's record, shared by the eager step (optim.c) and the step recorded into a
 * compiled graph (optim_graph.c).
 */
#ifndef WGT_AUTOGRAD_OPTIM_H
#define WGT_AUTOGRAD_OPTIM_H

#include "autograd.h"

typedef enum { OPT_SGD, OPT_ADAMW } wgt_opt_kind;

struct wgt_optimizer {
    int refs; /* the caller's, and one per compiled graph (or graph being recorded) it updates in */
    wgt_opt_kind kind;
    int n;
    wgt_tensor **params;
    wgt_tensor **m, **v;     /* per parameter, NULL until its first update */
    int64_t *steps;          /* per parameter: the updates it had (a step without its gradient skips it) */
    unsigned char *in_place; /* per parameter: a graph updates its state, so eager steps write it in place too */
    /* [n, 3] f32, per parameter the learning rate and 1 / (1 - beta^t) for both betas of its
     * next update, written before each dispatch of a graph that updates (NULL before one). */
    wgt_tensor *hyper;
    double lr, beta1, beta2, eps, momentum, weight_decay;
};

/* What an update reads: the parameter and its state (NULL: none yet), and the per-step
 * values as one-element tensors. */
typedef struct wgt_opt_inputs {
    wgt_tensor *p, *m, *v;
    wgt_tensor *lr, *inv_c1, *inv_c2;
} wgt_opt_inputs;

/* For an update of parameter i recorded into a graph: makes its state tensors the
 * optimizer's own, updated in place (zeros before the first update), and gives the
 * parameter, the state and its row of hyper as graph values read at each dispatch (tensors
 * of the arena). hyper is read once per step for all its parameters: *rates holds that read
 * (made by the first call of the step when NULL; the caller releases it). */
wgt_status wgt_optim_graph_inputs(wgt_optimizer *o, int i, wgt_opt_inputs *in, wgt_ag_arena *ar, wgt_tensor **rates);
/* Registers the hook that, before each dispatch of the graph taking the updates of the
 * parameters which[0..n-1], counts their step and writes hyper. Takes which (malloc'd). */
wgt_status wgt_optim_graph_hook(wgt_optimizer *o, int *which, int n);

#endif
