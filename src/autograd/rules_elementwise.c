/*
 * Gradient rules of the elementwise ops: binary ops (the gradient of a broadcast operand is
 * summed back to its shape), their scalar forms, where and cast. Each backward function
 * records ordinary elementwise ops, which the scheduler fuses into few kernels.
 */
#include <math.h>

#include "autograd.h"

#define A(n) ((n)->saved[0])
#define B(n) ((n)->saved[1])
#define Y(n) ((n)->saved[2])

/* ---- binary ---- */

static wgt_status give2(wgt_ag_node *n, wgt_ag_arena *ar, wgt_tensor *ga, wgt_tensor *gb, wgt_tensor **gin) {
    if (NEED(n, 0)) gin[0] = wgt_ag_sum_to(ar, ga, &n->in[0]);
    if (NEED(n, 1)) gin[1] = wgt_ag_sum_to(ar, gb, &n->in[1]);
    return WGT_OK;
}

static wgt_status bw_add(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    return give2(n, ar, g, g, gin);
}
static wgt_status bw_sub(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    return give2(n, ar, g, NEED(n, 1) ? K(wgt_neg(g)) : NULL, gin);
}
static wgt_status bw_mul(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    return give2(n, ar, NEED(n, 0) ? K(wgt_mul(g, B(n))) : NULL, NEED(n, 1) ? K(wgt_mul(g, A(n))) : NULL, gin);
}
/* d(a/b)/da = 1/b, d(a/b)/db = -(a/b)/b. */
static wgt_status bw_div(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    wgt_tensor *ga = K(wgt_div(g, B(n)));
    return give2(n, ar, ga, NEED(n, 1) ? K(wgt_neg(K(wgt_mul(ga, Y(n))))) : NULL, gin);
}
/* d(a^b)/da = b a^(b-1); d(a^b)/db = a^b ln a, taken as 0 where a is 0 (its limit for b > 0). */
static wgt_status bw_pow(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    wgt_tensor *ga = NULL, *gb = NULL;
    if (NEED(n, 0)) ga = K(wgt_mul(K(wgt_mul(g, B(n))), K(wgt_pow(A(n), K(wgt_sub_scalar(B(n), 1.0))))));
    if (NEED(n, 1)) {
        wgt_tensor *zero = K(wgt_eq(A(n), wgt_ag_scalar_like(ar, A(n), 0.0)));
        wgt_tensor *safe = K(wgt_where(zero, wgt_ag_scalar_like(ar, A(n), 1.0), A(n)));
        gb = K(wgt_mul(K(wgt_mul(g, Y(n))), K(wgt_log(safe))));
    }
    return give2(n, ar, ga, gb, gin);
}
/* The larger (smaller) operand takes the gradient; ties share it equally, as in PyTorch. */
static wgt_tensor *pick(wgt_ag_arena *ar, wgt_tensor *g, wgt_tensor *mine, wgt_tensor *other, int larger) {
    wgt_tensor *win = wgt_ag_mask(ar, K(larger ? wgt_gt(mine, other) : wgt_lt(mine, other)), g->dtype);
    wgt_tensor *tie = wgt_ag_mask(ar, K(wgt_eq(mine, other)), g->dtype);
    return K(wgt_mul(g, K(wgt_add(win, K(wgt_mul_scalar(tie, 0.5))))));
}
static wgt_status bw_maximum(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    return give2(n, ar, NEED(n, 0) ? pick(ar, g, A(n), B(n), 1) : NULL, NEED(n, 1) ? pick(ar, g, B(n), A(n), 1) : NULL,
                 gin);
}
static wgt_status bw_minimum(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    return give2(n, ar, NEED(n, 0) ? pick(ar, g, A(n), B(n), 0) : NULL, NEED(n, 1) ? pick(ar, g, B(n), A(n), 0) : NULL,
                 gin);
}
/* mod(a, b) = a - floor(a / b) b. */
static wgt_status bw_mod(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    wgt_tensor *gb = NEED(n, 1) ? K(wgt_neg(K(wgt_mul(g, K(wgt_floor(K(wgt_div(A(n), B(n))))))))) : NULL;
    return give2(n, ar, g, gb, gin);
}
/* atan2(a, b): d/da = b / (a^2 + b^2), d/db = -a / (a^2 + b^2). */
static wgt_status bw_atan2(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    wgt_tensor *r = K(wgt_div(g, K(wgt_add(K(wgt_square(A(n))), K(wgt_square(B(n)))))));
    return give2(n, ar, NEED(n, 0) ? K(wgt_mul(r, B(n))) : NULL, NEED(n, 1) ? K(wgt_neg(K(wgt_mul(r, A(n))))) : NULL,
                 gin);
}

/* saves: which of a, b and the result the backward reads. */
enum { SAVE_A = 1, SAVE_B = 2, SAVE_Y = 4 };
static wgt_tensor *binary(const char *fn, wgt_tensor *out, wgt_tensor *a, wgt_tensor *b, wgt_ag_backward_fn bw,
                          unsigned saves) {
    WGT_AG_BEGIN(n, fn, out, bw, a, b)
    if (saves & SAVE_A) wgt_ag_save(n, 0, a);
    if (saves & SAVE_B) wgt_ag_save(n, 1, b);
    if (saves & SAVE_Y) wgt_ag_save(n, 2, out);
    return wgt_ag_attach(out, n);
}

wgt_tensor *wgt_ag_rule_add(wgt_tensor *out, wgt_tensor *a, wgt_tensor *b) { return binary("wgt_add", out, a, b, bw_add, 0); }
wgt_tensor *wgt_ag_rule_sub(wgt_tensor *out, wgt_tensor *a, wgt_tensor *b) { return binary("wgt_sub", out, a, b, bw_sub, 0); }
wgt_tensor *wgt_ag_rule_mul(wgt_tensor *out, wgt_tensor *a, wgt_tensor *b) {
    return binary("wgt_mul", out, a, b, bw_mul, SAVE_A | SAVE_B);
}
wgt_tensor *wgt_ag_rule_div(wgt_tensor *out, wgt_tensor *a, wgt_tensor *b) {
    return binary("wgt_div", out, a, b, bw_div, SAVE_B | SAVE_Y);
}
wgt_tensor *wgt_ag_rule_pow(wgt_tensor *out, wgt_tensor *a, wgt_tensor *b) {
    return binary("wgt_pow", out, a, b, bw_pow, SAVE_A | SAVE_B | SAVE_Y);
}
wgt_tensor *wgt_ag_rule_maximum(wgt_tensor *out, wgt_tensor *a, wgt_tensor *b) {
    return binary("wgt_maximum", out, a, b, bw_maximum, SAVE_A | SAVE_B);
}
wgt_tensor *wgt_ag_rule_minimum(wgt_tensor *out, wgt_tensor *a, wgt_tensor *b) {
    return binary("wgt_minimum", out, a, b, bw_minimum, SAVE_A | SAVE_B);
}
wgt_tensor *wgt_ag_rule_mod(wgt_tensor *out, wgt_tensor *a, wgt_tensor *b) {
    return binary("wgt_mod", out, a, b, bw_mod, SAVE_A | SAVE_B);
}
wgt_tensor *wgt_ag_rule_atan2(wgt_tensor *out, wgt_tensor *a, wgt_tensor *b) {
    return binary("wgt_atan2", out, a, b, bw_atan2, SAVE_A | SAVE_B);
}

/* ---- where ---- */

static wgt_status bw_where(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    wgt_tensor *zero = wgt_ag_scalar_like(ar, g, 0.0), *c = n->saved[0];
    if (NEED(n, 1)) gin[1] = wgt_ag_sum_to(ar, K(wgt_where(c, g, zero)), &n->in[1]);
    if (NEED(n, 2)) gin[2] = wgt_ag_sum_to(ar, K(wgt_where(c, zero, g)), &n->in[2]);
    return WGT_OK;
}

wgt_tensor *wgt_ag_rule_where(wgt_tensor *out, wgt_tensor *cond, wgt_tensor *a, wgt_tensor *b) {
    /* No gradient flows into the condition: it only selects. */
    WGT_AG_BEGIN(n, "wgt_where", out, bw_where, NULL, a, b)
    wgt_ag_save(n, 0, cond);
    return wgt_ag_attach(out, n);
}

/* ---- scalar forms: the scalar is a constant ---- */

static wgt_status bw_scale(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    gin[0] = n->p[0] == 1.0 ? g : K(wgt_mul_scalar(g, n->p[0]));
    return WGT_OK;
}
static wgt_status bw_pow_scalar(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    double s = n->p[0];
    gin[0] = K(wgt_mul(g, K(wgt_mul_scalar(K(wgt_pow_scalar(A(n), s - 1.0)), s))));
    return WGT_OK;
}
static wgt_status bw_extreme_scalar(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    gin[0] = pick(ar, g, A(n), wgt_ag_scalar_like(ar, A(n), n->p[0]), n->iv[0]);
    return WGT_OK;
}

static wgt_tensor *scalar_rule(const char *fn, wgt_tensor *out, wgt_tensor *a, double factor, double s,
                               wgt_ag_backward_fn bw, int larger) {
    WGT_AG_BEGIN(n, fn, out, bw, a)
    n->p[0] = bw == bw_scale ? factor : s;
    n->iv[0] = larger;
    if (bw != bw_scale) wgt_ag_save(n, 0, a);
    return wgt_ag_attach(out, n);
}

wgt_tensor *wgt_ag_rule_add_scalar(wgt_tensor *out, wgt_tensor *a, double s) {
    return scalar_rule("wgt_add_scalar", out, a, 1.0, s, bw_scale, 0);
}
wgt_tensor *wgt_ag_rule_sub_scalar(wgt_tensor *out, wgt_tensor *a, double s) {
    return scalar_rule("wgt_sub_scalar", out, a, 1.0, s, bw_scale, 0);
}
wgt_tensor *wgt_ag_rule_mul_scalar(wgt_tensor *out, wgt_tensor *a, double s) {
    return scalar_rule("wgt_mul_scalar", out, a, s, s, bw_scale, 0);
}
wgt_tensor *wgt_ag_rule_div_scalar(wgt_tensor *out, wgt_tensor *a, double s) {
    return scalar_rule("wgt_div_scalar", out, a, 1.0 / s, s, bw_scale, 0);
}
wgt_tensor *wgt_ag_rule_pow_scalar(wgt_tensor *out, wgt_tensor *a, double s) {
    return scalar_rule("wgt_pow_scalar", out, a, 0, s, bw_pow_scalar, 0);
}
wgt_tensor *wgt_ag_rule_maximum_scalar(wgt_tensor *out, wgt_tensor *a, double s) {
    return scalar_rule("wgt_maximum_scalar", out, a, 0, s, bw_extreme_scalar, 1);
}
wgt_tensor *wgt_ag_rule_minimum_scalar(wgt_tensor *out, wgt_tensor *a, double s) {
    return scalar_rule("wgt_minimum_scalar", out, a, 0, s, bw_extreme_scalar, 0);
}

/* ---- cast: the gradient goes back in the input's type ---- */

static wgt_status bw_cast(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    gin[0] = K(wgt_cast(g, n->in[0].dtype));
    return WGT_OK;
}

static int is_float(wgt_dtype d) { return d == WGT_F32 || d == WGT_F16; }

wgt_tensor *wgt_ag_rule_cast(wgt_tensor *out, wgt_tensor *a, wgt_dtype dtype) {
    /* To an integer type nothing differentiable is left; from one (an integer that a tracked op
     * computed: argmax, a comparison), the pass stops at that op with its message. */
    WGT_AG_BEGIN(n, "wgt_cast", out, is_float(dtype) ? bw_cast : NULL, a)
    if (!is_float(dtype)) n->why = "its result is an integer type";
    return wgt_ag_attach(out, n);
}
