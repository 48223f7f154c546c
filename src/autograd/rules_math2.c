/*
 * Gradient rules of the array API's further elementwise ops: the differentiable unary ones
 * (derivatives from the input x or the result y, saved as views), logaddexp, hypot, copysign
 * and clip. trunc is flat (zero gradient, as floor is); signbit, isfinite, the bitwise ops,
 * nextafter and floor_divide have no rule: a backward pass reaching them names the op.
 */
#include <math.h>

#include "autograd.h"

#define X(n) ((n)->saved[0])
#define Y(n) ((n)->saved[1])

enum { M_TAN, M_ASIN, M_ACOS, M_ATAN, M_SINH, M_COSH, M_ASINH, M_ACOSH, M_ATANH, M_LOG2, M_LOG10, M_EXP2, M_FLAT };

static wgt_tensor *num(wgt_ag_arena *ar, wgt_tensor *like, double v) { return wgt_ag_scalar_like(ar, like, v); }

/* d op / dx at x (result y). */
static wgt_tensor *derivative(wgt_ag_node *n, wgt_ag_arena *ar) {
    wgt_tensor *x = X(n), *y = Y(n);
    switch (n->iv[0]) {
    case M_TAN: return K(wgt_add_scalar(K(wgt_square(y)), 1.0));                     /* 1 + tan^2 */
    case M_ASIN: return K(wgt_rsqrt(K(wgt_sub(num(ar, x, 1.0), K(wgt_square(x))))));  /* 1 / sqrt(1 - x^2) */
    case M_ACOS: return K(wgt_neg(K(wgt_rsqrt(K(wgt_sub(num(ar, x, 1.0), K(wgt_square(x))))))));
    case M_ATAN: return K(wgt_reciprocal(K(wgt_add_scalar(K(wgt_square(x)), 1.0))));
    case M_SINH: return K(wgt_cosh(x));
    case M_COSH: return K(wgt_sinh(x));
    case M_ASINH: return K(wgt_rsqrt(K(wgt_add_scalar(K(wgt_square(x)), 1.0))));
    case M_ACOSH: return K(wgt_rsqrt(K(wgt_sub_scalar(K(wgt_square(x)), 1.0))));
    case M_ATANH: return K(wgt_reciprocal(K(wgt_sub(num(ar, x, 1.0), K(wgt_square(x))))));
    case M_LOG2: return K(wgt_reciprocal(K(wgt_mul_scalar(x, M_LN2))));
    case M_LOG10: return K(wgt_reciprocal(K(wgt_mul_scalar(x, M_LN10))));
    case M_EXP2: return K(wgt_mul_scalar(y, M_LN2));
    default: return num(ar, x, 0.0); /* trunc */
    }
}

static wgt_status bw_unary(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    gin[0] = K(wgt_mul(g, derivative(n, ar)));
    return WGT_OK;
}

static wgt_tensor *unary(const char *fn, int which, wgt_tensor *out, wgt_tensor *a) {
    WGT_AG_BEGIN(n, fn, out, bw_unary, a)
    n->iv[0] = which;
    wgt_ag_save(n, 0, a);
    wgt_ag_save(n, 1, out);
    return wgt_ag_attach(out, n);
}

#define WGT_AG_MATH2_RULE(name, which) \
    wgt_tensor *wgt_ag_rule_##name(wgt_tensor *out, wgt_tensor *a) { return unary("wgt_" #name, which, out, a); }
WGT_AG_MATH2_RULE(tan, M_TAN)
WGT_AG_MATH2_RULE(asin, M_ASIN)
WGT_AG_MATH2_RULE(acos, M_ACOS)
WGT_AG_MATH2_RULE(atan, M_ATAN)
WGT_AG_MATH2_RULE(sinh, M_SINH)
WGT_AG_MATH2_RULE(cosh, M_COSH)
WGT_AG_MATH2_RULE(asinh, M_ASINH)
WGT_AG_MATH2_RULE(acosh, M_ACOSH)
WGT_AG_MATH2_RULE(atanh, M_ATANH)
WGT_AG_MATH2_RULE(log2, M_LOG2)
WGT_AG_MATH2_RULE(log10, M_LOG10)
WGT_AG_MATH2_RULE(exp2, M_EXP2)
WGT_AG_MATH2_RULE(trunc, M_FLAT)
#undef WGT_AG_MATH2_RULE

/* ---- binary: a, b and the result saved in slots 0, 1, 2 ---- */

static wgt_status give(wgt_ag_node *n, wgt_ag_arena *ar, wgt_tensor *const *g, wgt_tensor **gin, int count) {
    for (int i = 0; i < count; i++)
        if (NEED(n, i)) gin[i] = wgt_ag_sum_to(ar, g[i], &n->in[i]);
    return WGT_OK;
}

/* d/da log(e^a + e^b) = e^(a - y): the softmax weight of a, never overflowing. */
static wgt_status bw_logaddexp(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    wgt_tensor *gs[2] = {NULL, NULL};
    for (int i = 0; i < 2; i++)
        if (NEED(n, i)) gs[i] = K(wgt_mul(g, K(wgt_exp(K(wgt_sub(n->saved[i], n->saved[2]))))));
    return give(n, ar, gs, gin, 2);
}
/* d/da hypot(a, b) = a / y (0 where y is 0, the subgradient PyTorch takes too). */
static wgt_status bw_hypot(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    wgt_tensor *y = n->saved[2];
    wgt_tensor *safe = K(wgt_where(K(wgt_eq(y, num(ar, y, 0.0))), num(ar, y, 1.0), y));
    wgt_tensor *r = K(wgt_div(g, safe)), *gs[2] = {NULL, NULL};
    for (int i = 0; i < 2; i++)
        if (NEED(n, i)) gs[i] = K(wgt_mul(r, n->saved[i]));
    return give(n, ar, gs, gin, 2);
}
/* copysign(a, b) is a or -a: the gradient to a is +-g, to b 0. */
static wgt_status bw_copysign(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    wgt_tensor *a = n->saved[0], *one = num(ar, a, 1.0);
    wgt_tensor *s = K(wgt_mul(K(wgt_copysign(one, a)), K(wgt_copysign(one, n->saved[1]))));
    wgt_tensor *gs[2] = {K(wgt_mul(g, s)), K(wgt_mul(g, num(ar, a, 0.0)))}; /* zeros of g's shape */
    return give(n, ar, gs, gin, 2);
}

static wgt_tensor *binary(const char *fn, wgt_tensor *out, wgt_tensor *a, wgt_tensor *b, wgt_ag_backward_fn bw) {
    WGT_AG_BEGIN(n, fn, out, bw, a, b)
    wgt_ag_save(n, 0, a);
    wgt_ag_save(n, 1, b);
    wgt_ag_save(n, 2, out);
    return wgt_ag_attach(out, n);
}

wgt_tensor *wgt_ag_rule_logaddexp(wgt_tensor *out, wgt_tensor *a, wgt_tensor *b) {
    return binary("wgt_logaddexp", out, a, b, bw_logaddexp);
}
wgt_tensor *wgt_ag_rule_hypot(wgt_tensor *out, wgt_tensor *a, wgt_tensor *b) {
    return binary("wgt_hypot", out, a, b, bw_hypot);
}
wgt_tensor *wgt_ag_rule_copysign(wgt_tensor *out, wgt_tensor *a, wgt_tensor *b) {
    return binary("wgt_copysign", out, a, b, bw_copysign);
}

/* ---- clip: out = min(max(a, lo), hi) ---- */

/* a takes the gradient inside [lo, hi] (bounds included, as PyTorch's clamp); lo where a is
 * below it and lo <= hi; hi where max(a, lo) is above it. Absent bounds never bind. */
static wgt_status bw_clip(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    wgt_tensor *a = n->saved[0], *lo = n->saved[1], *hi = n->saved[2];
    wgt_dtype dt = g->dtype;
    wgt_tensor *m = lo ? K(wgt_maximum(a, lo)) : a;
    wgt_tensor *inside = hi ? K(wgt_le(m, hi)) : NULL;
    if (lo) inside = inside ? K(wgt_logical_and(inside, K(wgt_ge(a, lo)))) : K(wgt_ge(a, lo));
    wgt_tensor *gs[3] = {K(wgt_mul(g, wgt_ag_mask(ar, inside, dt))), NULL, NULL};
    if (lo && NEED(n, 1)) {
        wgt_tensor *below = K(wgt_lt(a, lo));
        if (hi) below = K(wgt_logical_and(below, K(wgt_le(lo, hi))));
        gs[1] = K(wgt_mul(g, wgt_ag_mask(ar, below, dt)));
    }
    if (hi && NEED(n, 2)) gs[2] = K(wgt_mul(g, wgt_ag_mask(ar, K(wgt_gt(m, hi)), dt)));
    return give(n, ar, gs, gin, 3);
}

wgt_tensor *wgt_ag_rule_clip(wgt_tensor *out, wgt_tensor *a, wgt_tensor *lo, wgt_tensor *hi) {
    WGT_AG_BEGIN(n, "wgt_clip", out, bw_clip, a, lo, hi)
    wgt_ag_save(n, 0, a);
    if (lo) wgt_ag_save(n, 1, lo);
    if (hi) wgt_ag_save(n, 2, hi);
    return wgt_ag_attach(out, n);
}
