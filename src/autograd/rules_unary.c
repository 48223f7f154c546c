/*
 * Gradient rules of the unary ops: each multiplies the incoming gradient by the op's
 * derivative, written from the input x or, where cheaper, the result y (both saved as views,
 * so nothing is copied). floor, ceil, round and sign are flat: their gradient is zero, as in
 * PyTorch. isnan and isinf give integers and have none.
 */
#include <math.h>

#include "autograd.h"

#define X(n) ((n)->saved[0])
#define Y(n) ((n)->saved[1])

enum { U_NEG, U_ABS, U_FLAT, U_SQUARE, U_SQRT, U_RSQRT, U_RECIP, U_EXP, U_EXPM1, U_LOG, U_LOG1P, U_SIN, U_COS,
       U_TANH, U_SIGMOID, U_RELU, U_LEAKY, U_ELU, U_GELU, U_GELU_TANH, U_SILU, U_SOFTPLUS, U_ERF, U_CLAMP };

static wgt_tensor *num(wgt_ag_arena *ar, wgt_tensor *like, double v) { return wgt_ag_scalar_like(ar, like, v); }

/* d op / dx at x (result y), as a tensor (NULL where the factor is g itself). */
static wgt_tensor *derivative(wgt_ag_node *n, wgt_ag_arena *ar) {
    wgt_tensor *x = X(n), *y = Y(n);
    wgt_dtype dt = n->in[0].dtype;
    switch (n->iv[0]) {
    case U_ABS: return K(wgt_sign(x));
    case U_FLAT: return num(ar, x, 0.0);
    case U_SQUARE: return K(wgt_mul_scalar(x, 2.0));
    case U_SQRT: return K(wgt_div(num(ar, y, 0.5), y));
    case U_RSQRT: return K(wgt_mul_scalar(K(wgt_mul(y, K(wgt_square(y)))), -0.5));
    case U_RECIP: return K(wgt_neg(K(wgt_square(y))));
    case U_EXP: return y;
    case U_EXPM1: return K(wgt_add_scalar(y, 1.0));
    case U_LOG: return K(wgt_reciprocal(x));
    case U_LOG1P: return K(wgt_reciprocal(K(wgt_add_scalar(x, 1.0))));
    case U_SIN: return K(wgt_cos(x));
    case U_COS: return K(wgt_neg(K(wgt_sin(x))));
    case U_TANH: return K(wgt_sub(num(ar, y, 1.0), K(wgt_square(y))));
    case U_SIGMOID: return K(wgt_mul(y, K(wgt_sub(num(ar, y, 1.0), y))));
    case U_RELU: return wgt_ag_mask(ar, K(wgt_gt(x, num(ar, x, 0.0))), dt);
    case U_LEAKY: /* 1 where x > 0, else the slope */
        return K(wgt_where(K(wgt_gt(x, num(ar, x, 0.0))), num(ar, x, 1.0), num(ar, x, n->p[0])));
    case U_ELU: /* 1 where x > 0, else alpha e^x = y + alpha */
        return K(wgt_where(K(wgt_gt(x, num(ar, x, 0.0))), num(ar, x, 1.0), K(wgt_add_scalar(y, n->p[0]))));
    case U_GELU: { /* Phi(x) + x phi(x) */
        wgt_tensor *cdf = K(wgt_mul_scalar(K(wgt_add_scalar(K(wgt_erf(K(wgt_mul_scalar(x, M_SQRT1_2)))), 1.0)), 0.5));
        wgt_tensor *pdf = K(wgt_mul_scalar(K(wgt_exp(K(wgt_mul_scalar(K(wgt_square(x)), -0.5)))), 0.5 * M_2_SQRTPI * M_SQRT1_2));
        return K(wgt_add(cdf, K(wgt_mul(x, pdf))));
    }
    case U_GELU_TANH: { /* u = c (x + k x^3), t = tanh u: 0.5 (1 + t) + 0.5 x (1 - t^2) c (1 + 3 k x^2) */
        const double c = sqrt(2.0 / M_PI), k = 0.044715;
        wgt_tensor *x2 = K(wgt_square(x));
        wgt_tensor *u = K(wgt_mul_scalar(K(wgt_add(x, K(wgt_mul(x, K(wgt_mul_scalar(x2, k)))))), c));
        wgt_tensor *t = K(wgt_tanh(u));
        wgt_tensor *left = K(wgt_mul_scalar(K(wgt_add_scalar(t, 1.0)), 0.5));
        wgt_tensor *sech2 = K(wgt_sub(num(ar, t, 1.0), K(wgt_square(t))));
        wgt_tensor *du = K(wgt_mul_scalar(K(wgt_add_scalar(K(wgt_mul_scalar(x2, 3.0 * k)), 1.0)), c));
        return K(wgt_add(left, K(wgt_mul(K(wgt_mul_scalar(x, 0.5)), K(wgt_mul(sech2, du))))));
    }
    case U_SILU: { /* s (1 + x (1 - s)) */
        wgt_tensor *s = K(wgt_sigmoid(x));
        return K(wgt_mul(s, K(wgt_add_scalar(K(wgt_mul(x, K(wgt_sub(num(ar, s, 1.0), s)))), 1.0))));
    }
    case U_SOFTPLUS: return K(wgt_sigmoid(x));
    case U_ERF: return K(wgt_mul_scalar(K(wgt_exp(K(wgt_neg(K(wgt_square(x)))))), M_2_SQRTPI));
    case U_CLAMP: { /* 1 inside [lo, hi], bounds included, as in PyTorch */
        wgt_tensor *in = K(wgt_logical_and(K(wgt_ge(x, num(ar, x, n->p[0]))), K(wgt_le(x, num(ar, x, n->p[1])))));
        return wgt_ag_mask(ar, in, dt);
    }
    }
    return NULL;
}

static wgt_status bw_unary(wgt_ag_node *n, wgt_tensor *g, wgt_tensor **gin, wgt_ag_arena *ar) {
    gin[0] = n->iv[0] == U_NEG ? K(wgt_neg(g)) : K(wgt_mul(g, derivative(n, ar)));
    return WGT_OK;
}

static wgt_tensor *unary(const char *fn, int which, wgt_tensor *out, wgt_tensor *a, double p0, double p1) {
    WGT_AG_BEGIN(n, fn, out, bw_unary, a)
    n->iv[0] = which;
    n->p[0] = p0;
    n->p[1] = p1;
    if (which != U_NEG) {
        wgt_ag_save(n, 0, a);
        wgt_ag_save(n, 1, out);
    }
    return wgt_ag_attach(out, n);
}

#define WGT_AG_UNARY_RULE(name, which) \
    wgt_tensor *wgt_ag_rule_##name(wgt_tensor *out, wgt_tensor *a) { return unary("wgt_" #name, which, out, a, 0, 0); }
WGT_AG_UNARY_RULE(neg, U_NEG)
WGT_AG_UNARY_RULE(abs, U_ABS)
WGT_AG_UNARY_RULE(sign, U_FLAT)
WGT_AG_UNARY_RULE(floor, U_FLAT)
WGT_AG_UNARY_RULE(ceil, U_FLAT)
WGT_AG_UNARY_RULE(round, U_FLAT)
WGT_AG_UNARY_RULE(square, U_SQUARE)
WGT_AG_UNARY_RULE(sqrt, U_SQRT)
WGT_AG_UNARY_RULE(rsqrt, U_RSQRT)
WGT_AG_UNARY_RULE(reciprocal, U_RECIP)
WGT_AG_UNARY_RULE(exp, U_EXP)
WGT_AG_UNARY_RULE(expm1, U_EXPM1)
WGT_AG_UNARY_RULE(log, U_LOG)
WGT_AG_UNARY_RULE(log1p, U_LOG1P)
WGT_AG_UNARY_RULE(sin, U_SIN)
WGT_AG_UNARY_RULE(cos, U_COS)
WGT_AG_UNARY_RULE(tanh, U_TANH)
WGT_AG_UNARY_RULE(sigmoid, U_SIGMOID)
WGT_AG_UNARY_RULE(relu, U_RELU)
WGT_AG_UNARY_RULE(gelu, U_GELU)
WGT_AG_UNARY_RULE(gelu_tanh, U_GELU_TANH)
WGT_AG_UNARY_RULE(silu, U_SILU)
WGT_AG_UNARY_RULE(softplus, U_SOFTPLUS)
WGT_AG_UNARY_RULE(erf, U_ERF)
#undef WGT_AG_UNARY_RULE

wgt_tensor *wgt_ag_rule_leaky_relu(wgt_tensor *out, wgt_tensor *a, double negative_slope) {
    return unary("wgt_leaky_relu", U_LEAKY, out, a, negative_slope, 0);
}
wgt_tensor *wgt_ag_rule_elu(wgt_tensor *out, wgt_tensor *a, double alpha) { return unary("wgt_elu", U_ELU, out, a, alpha, 0); }
wgt_tensor *wgt_ag_rule_clamp(wgt_tensor *out, wgt_tensor *a, double lo, double hi) {
    return unary("wgt_clamp", U_CLAMP, out, a, lo, hi);
}
