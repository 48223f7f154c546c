/*
 * Gradient checks of the elementwise ops (gradcheck.h): binary ops with broadcasting (the
 * gradient of the smaller operand is summed back) and strided operands, the scalar forms,
 * where, casts and every differentiable unary op, on both backends.
 */
#include "gradcheck.h"

#define V2(a, b) 2, {a, b}
#define F1(name, call) static wgt_tensor *name(wgt_tensor *const *x) { return call; }

F1(f_add, wgt_add(x[0], x[1]))
F1(f_sub, wgt_sub(x[0], x[1]))
F1(f_mul, wgt_mul(x[0], x[1]))
F1(f_div, wgt_div(x[0], x[1]))
F1(f_pow, wgt_pow(x[0], x[1]))
F1(f_maximum, wgt_maximum(x[0], x[1]))
F1(f_minimum, wgt_minimum(x[0], x[1]))
F1(f_mod, wgt_mod(x[0], x[1]))
F1(f_atan2, wgt_atan2(x[0], x[1]))

TEST_BACKENDS(autograd_grad_binary) {
    const gc_case cases[] = {
        {"add broadcast", f_add, 2, {{V2(3, 4), -1, 1, GC_TRANSPOSED}, {V2(1, 4), -1, 1, GC_PLAIN}}},
        {"sub rank-extended", f_sub, 2, {{V2(3, 4), -1, 1, GC_STEPPED}, {1, {4}, -1, 1, GC_PLAIN}}},
        {"mul broadcast both", f_mul, 2, {{V2(3, 1), -1, 1, GC_PLAIN}, {V2(1, 4), -1, 1, GC_PLAIN}}},
        {"div", f_div, 2, {{V2(3, 4), -1, 1, GC_PLAIN}, {V2(3, 4), 0.5, 2, GC_TRANSPOSED}}},
        {"pow", f_pow, 2, {{V2(3, 4), 0.5, 2, GC_PLAIN}, {V2(3, 1), -1.5, 1.5, GC_PLAIN}}},
        {"maximum", f_maximum, 2, {{V2(3, 4), -1, 1, GC_PLAIN}, {V2(3, 4), -1, 1, GC_STEPPED}}},
        {"minimum broadcast", f_minimum, 2, {{V2(3, 4), -1, 1, GC_TRANSPOSED}, {V2(1, 4), -1, 1, GC_PLAIN}}},
        {"mod", f_mod, 2, {{V2(3, 4), 0.1, 0.6, GC_PLAIN}, {V2(3, 4), 0.7, 0.9, GC_PLAIN}}},
        {"atan2", f_atan2, 2, {{V2(3, 4), -1, 1, GC_PLAIN}, {V2(3, 4), 0.2, 1, GC_TRANSPOSED}}},
        {"mul with a constant", f_mul, 2, {{V2(3, 4), -1, 1, GC_PLAIN}, {V2(3, 4), -1, 1, GC_CONST}}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) gradcheck(ctx, &cases[i]);
}

F1(f_add_s, wgt_add_scalar(x[0], 2.5))
F1(f_sub_s, wgt_sub_scalar(x[0], 2.5))
F1(f_mul_s, wgt_mul_scalar(x[0], -1.5))
F1(f_div_s, wgt_div_scalar(x[0], 4.0))
F1(f_pow_s, wgt_pow_scalar(x[0], 2.5))
F1(f_max_s, wgt_maximum_scalar(x[0], 0.0))
F1(f_min_s, wgt_minimum_scalar(x[0], 0.0))
static wgt_tensor *f_where(wgt_tensor *const *x) {
    wgt_tensor *c = wgt_gt(x[0], x[1]);
    wgt_tensor *r = wgt_where(c, x[0], x[2]);
    wgt_release(c);
    return r;
}
static wgt_tensor *f_cast(wgt_tensor *const *x) {
    wgt_tensor *h = wgt_cast(x[0], WGT_F32);
    wgt_tensor *r = wgt_mul(h, h);
    wgt_release(h);
    return r;
}

TEST_BACKENDS(autograd_grad_scalar_where_cast) {
    const gc_case cases[] = {
        {"add_scalar", f_add_s, 1, {{V2(3, 4), -1, 1, GC_TRANSPOSED}}},
        {"sub_scalar", f_sub_s, 1, {{V2(3, 4), -1, 1, GC_PLAIN}}},
        {"mul_scalar", f_mul_s, 1, {{V2(3, 4), -1, 1, GC_STEPPED}}},
        {"div_scalar", f_div_s, 1, {{V2(3, 4), -1, 1, GC_PLAIN}}},
        {"pow_scalar", f_pow_s, 1, {{V2(3, 4), 0.2, 2, GC_PLAIN}}},
        {"maximum_scalar", f_max_s, 1, {{V2(3, 4), -1, 1, GC_PLAIN, 0, 0.05}}},
        {"minimum_scalar", f_min_s, 1, {{V2(3, 4), -1, 1, GC_TRANSPOSED, 0, 0.05}}},
        {"where broadcast", f_where, 3, {{V2(3, 4), -1, 1, GC_PLAIN}, {V2(3, 4), -1, 1, GC_CONST},
                                         {V2(1, 4), -1, 1, GC_PLAIN}}},
        {"cast f16 to f32", f_cast, 1, {{V2(3, 4), -1, 1, GC_PLAIN, WGT_F16}}, 2e-2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) gradcheck(ctx, &cases[i]);
}

F1(f_neg, wgt_neg(x[0]))
F1(f_abs, wgt_abs(x[0]))
F1(f_sign, wgt_sign(x[0]))
F1(f_square, wgt_square(x[0]))
F1(f_sqrt, wgt_sqrt(x[0]))
F1(f_rsqrt, wgt_rsqrt(x[0]))
F1(f_recip, wgt_reciprocal(x[0]))
F1(f_exp, wgt_exp(x[0]))
F1(f_expm1, wgt_expm1(x[0]))
F1(f_log, wgt_log(x[0]))
F1(f_log1p, wgt_log1p(x[0]))
F1(f_sin, wgt_sin(x[0]))
F1(f_cos, wgt_cos(x[0]))
F1(f_tanh, wgt_tanh(x[0]))
F1(f_sigmoid, wgt_sigmoid(x[0]))
F1(f_relu, wgt_relu(x[0]))
F1(f_leaky, wgt_leaky_relu(x[0], 0.1))
F1(f_elu, wgt_elu(x[0], 0.7))
F1(f_gelu, wgt_gelu(x[0]))
F1(f_gelu_tanh, wgt_gelu_tanh(x[0]))
F1(f_silu, wgt_silu(x[0]))
F1(f_softplus, wgt_softplus(x[0]))
F1(f_floor, wgt_floor(x[0]))
F1(f_ceil, wgt_ceil(x[0]))
F1(f_round, wgt_round(x[0]))
F1(f_erf, wgt_erf(x[0]))
F1(f_clamp, wgt_clamp(x[0], -0.5, 0.5))

TEST_BACKENDS(autograd_grad_unary) {
#define U(name, f, lo, hi, away) {name, f, 1, {{V2(3, 4), lo, hi, GC_TRANSPOSED, 0, away}}}
    const gc_case cases[] = {
        U("neg", f_neg, -2, 2, 0), U("abs", f_abs, -2, 2, 0.05), U("sign", f_sign, -2, 2, 0.05),
        U("square", f_square, -2, 2, 0), U("sqrt", f_sqrt, 0.2, 3, 0), U("rsqrt", f_rsqrt, 0.3, 3, 0),
        U("reciprocal", f_recip, 0.3, 3, 0), U("exp", f_exp, -2, 2, 0), U("expm1", f_expm1, -2, 2, 0),
        U("log", f_log, 0.2, 3, 0), U("log1p", f_log1p, -0.5, 2, 0), U("sin", f_sin, -3, 3, 0),
        U("cos", f_cos, -3, 3, 0), U("tanh", f_tanh, -2, 2, 0), U("sigmoid", f_sigmoid, -3, 3, 0),
        U("relu", f_relu, -2, 2, 0.05), U("leaky_relu", f_leaky, -2, 2, 0.05), U("elu", f_elu, -2, 2, 0.05),
        U("gelu", f_gelu, -3, 3, 0), U("gelu_tanh", f_gelu_tanh, -3, 3, 0), U("silu", f_silu, -3, 3, 0),
        U("softplus", f_softplus, -3, 3, 0), U("floor", f_floor, -2, 2, 0.05), U("ceil", f_ceil, -2, 2, 0.05),
        U("round", f_round, -2, 2, 0.05), U("erf", f_erf, -2, 2, 0), U("clamp", f_clamp, -1, 1, 0),
    };
#undef U
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) gradcheck(ctx, &cases[i]);
}
