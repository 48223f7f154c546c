/*
 * Unary ops, logical_not and casts on WebGPU, as expressions for the shared elementwise
 * runner. WGSL leaves much of what the header promises to the implementation: NaN and
 * infinity handling of the builtins, exp overflow, f16 packing beyond f16's range, the
 * rounding of integer to float conversion, and it has no erf, expm1 or log1p at all. So
 * the WGSL below spells each of those out (bit tests for NaN, explicit IEEE results at
 * the ends of each domain, series where a builtin formula would cancel), and the CPU
 * backend and this file agree on every special value.
 *
 * params.scalar_bits carries x: the first op parameter, y: the second (as bits of the
 * compute type), z: a quiet NaN and w: +infinity, since WGSL has no literal for either.
 */
#include <stdio.h>
#include <string.h>

#include "webgpu_internal.h"

/* Helper functions for the float ops and casts: every such kernel gets the whole set (WGSL
 * allows unused functions), so one string serves all of them. */
static const char float_helpers[] =
    "fn nan_f32() -> f32 { return bitcast<f32>(params.scalar_bits.z); }\n"
    "fn inf_f32() -> f32 { return bitcast<f32>(params.scalar_bits.w); }\n"
    /* Bit tests, because a compiler may assume floats are never NaN and fold x != x. */
    "fn is_nan(v: f32) -> bool { return (bitcast<u32>(v) & 0x7fffffffu) > 0x7f800000u; }\n"
    "fn is_inf(v: f32) -> bool { return (bitcast<u32>(v) & 0x7fffffffu) == 0x7f800000u; }\n"
    /* GPU sin and cos are only accurate near [-pi, pi] (WGSL promises nothing outside), so
     * arguments are reduced first: x - k*2pi with 2pi split in two (Cody-Waite), the first
     * part exact in few bits so k*C1 is exact for |k| < 2^12. */
    "fn reduce_angle(v: f32) -> f32 {\n"
    "    let k = round(v * 0.15915494309189535);\n"
    "    return (v - k * 6.28125) - k * 0.0019353071795864769;\n"
    "}\n"
    "fn is_neg_inf(v: f32) -> bool { return bitcast<u32>(v) == 0xff800000u; }\n"
    "fn signed_inf(v: f32) -> f32 { return bitcast<f32>((bitcast<u32>(v) & 0x80000000u) | 0x7f800000u); }\n"
    "fn signed_zero(v: f32) -> f32 { return bitcast<f32>(bitcast<u32>(v) & 0x80000000u); }\n"
    /* pack2x16float leaves values beyond f16's range indeterminate: send them to +-inf as
     * round-to-nearest-even does (65520 is the first value that rounds up to infinity). */
    "fn f16_range(v: f32) -> f32 { return select(v, signed_inf(v), abs(v) >= 65520.0); }\n"
    /* exp with IEEE ends: beyond ln(FLT_MAX) infinity, below the smallest subnormal 0. */
    "fn exp_ieee(v: f32) -> f32 {\n"
    "  if (v > 88.7228317) { return inf_f32(); }\n"
    "  if (v < -103.972084) { return 0.0; }\n"
    "  return exp(v);\n"
    "}\n"
    /* Below |v| = 0.5 exp(v) - 1 would cancel: Taylor series to v^8 (error < 2e-8 relative). */
    "fn expm1_f(v: f32) -> f32 {\n"
    "  if (abs(v) < 0.5) {\n"
    "    return v * (1.0 + v * (0.5 + v * (0.16666667 + v * (0.041666668 + v * (0.008333334 + v * (0.0013888889\n"
    "           + v * (0.0001984127 + v * 0.0000248016)))))));\n"
    "  }\n"
    "  return exp_ieee(v) - 1.0;\n"
    "}\n"
    /* Below |v| = 0.25 log(1 + v) would lose v's low bits: log1p(v) = 2 atanh(s) with
     * s = v / (2 + v), |s| < 1/7, as an odd series to s^9 (error < 1e-9 relative). */
    "fn log1p_f(v: f32) -> f32 {\n"
    "  if (abs(v) < 0.25) {\n"
    "    let s = v / (2.0 + v);\n"
    "    let s2 = s * s;\n"
    "    return 2.0 * s * (1.0 + s2 * (0.33333334 + s2 * (0.2 + s2 * (0.14285715 + s2 * 0.11111111))));\n"
    "  }\n"
    "  return log(1.0 + v);\n"
    "}\n"
    /* erfc(z) for z >= 0 with relative error below 1.2e-7 everywhere (Numerical Recipes'
     * Chebyshev fit), so the tails of erf and gelu keep their accuracy. */
    "fn erfc_pos(z: f32) -> f32 {\n"
    "  let t = 1.0 / (1.0 + 0.5 * z);\n"
    "  let p = -1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806\n"
    "          + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))));\n"
    "  return t * exp_ieee(p - z * z);\n"
    "}\n"
    /* exp only ever sees -|v|, so neither end overflows. */
    "fn sigmoid_f(v: f32) -> f32 {\n"
    "  let z = exp_ieee(-abs(v));\n"
    "  return select(z, 1.0, v >= 0.0) / (1.0 + z);\n"
    "}\n"
    "fn u_sqrt(x: f32) -> f32 {\n"
    "  if (x < 0.0) { return nan_f32(); }\n"
    "  if (x == 0.0 || is_inf(x)) { return x; }\n"
    "  return sqrt(x);\n"
    "}\n"
    "fn u_rsqrt(x: f32) -> f32 {\n"
    "  if (x < 0.0) { return nan_f32(); }\n"
    "  if (x == 0.0) { return signed_inf(x); }\n"
    "  if (is_inf(x)) { return 0.0; }\n"
    "  return inverseSqrt(x);\n"
    "}\n"
    "fn u_reciprocal(x: f32) -> f32 {\n"
    "  if (x == 0.0) { return signed_inf(x); }\n"
    "  if (is_inf(x)) { return signed_zero(x); }\n"
    "  return 1.0 / x;\n"
    "}\n"
    /* Near 1, log(x) = log1p(x - 1) with x - 1 exact: the builtin is only held to an
     * absolute error there, which is a large relative one. */
    "fn u_log(x: f32) -> f32 {\n"
    "  if (x < 0.0) { return nan_f32(); }\n"
    "  if (x == 0.0) { return -inf_f32(); }\n"
    "  if (is_inf(x)) { return x; }\n"
    "  if (abs(x - 1.0) < 0.25) { return log1p_f(x - 1.0); }\n"
    "  return log(x);\n"
    "}\n"
    "fn u_log1p(x: f32) -> f32 {\n"
    "  if (x < -1.0) { return nan_f32(); }\n"
    "  if (x == -1.0) { return -inf_f32(); }\n"
    "  if (is_inf(x)) { return x; }\n"
    "  return log1p_f(x);\n"
    "}\n"
    /* The builtin's (e^2x - 1) / (e^2x + 1) overflows to NaN and cancels near 0: a Taylor
     * series to x^11 below 0.3, else 1 - 2 / (e^2|x| + 1) with |x| capped where tanh is
     * already 1 in f32. */
    "fn u_tanh(x: f32) -> f32 {\n"
    "  let a = abs(x);\n"
    "  if (a < 0.3) {\n"
    "    let s = x * x;\n"
    "    return x * (1.0 + s * (-0.33333334 + s * (0.13333334 + s * (-0.053968254 + s * (0.021869488\n"
    "           + s * -0.008863236)))));\n"
    "  }\n"
    "  let r = 1.0 - 2.0 / (exp(2.0 * min(a, 20.0)) + 1.0);\n"
    "  return select(r, -r, x < 0.0);\n"
    "}\n"
    /* At -inf, gelu, gelu_tanh and silu would compute -inf * 0; they give the limit, -0. */
    "fn u_gelu(x: f32) -> f32 {\n"
    "  if (is_neg_inf(x)) { return signed_zero(x); }\n"
    "  let e = erfc_pos(abs(x) * 0.70710678);\n" /* 0.5 x erfc(-x / sqrt 2): no cancellation for x < 0 */
    "  return 0.5 * x * select(2.0 - e, e, x < 0.0);\n"
    "}\n"
    /* 0.5 (1 + tanh(u)) = sigmoid(2u), with 2u = x (2 sqrt(2/pi) + 2 sqrt(2/pi) 0.044715 x^2). */
    "fn u_gelu_tanh(x: f32) -> f32 {\n"
    "  if (is_neg_inf(x)) { return signed_zero(x); }\n"
    "  return x * sigmoid_f(x * (1.5957691 + 0.071354816 * x * x));\n"
    "}\n"
    "fn u_silu(x: f32) -> f32 {\n"
    "  if (is_neg_inf(x)) { return signed_zero(x); }\n"
    "  return x * sigmoid_f(x);\n"
    "}\n"
    "fn u_erf(x: f32) -> f32 {\n"
    "  let a = abs(x);\n"
    "  if (a < 0.5) {\n" /* Maclaurin series to x^13 (error < 2e-8 relative) */
    "    let s = x * x;\n"
    "    return x * (1.1283791671 + s * (-0.37612638903 + s * (0.11283791671 + s * (-0.02686617064\n"
    "           + s * (0.00522397762 + s * (-0.00085483270 + s * 0.00012055332))))));\n"
    "  }\n"
    "  let r = 1.0 - erfc_pos(a);\n"
    "  return select(r, -r, x < 0.0);\n"
    "}\n";

/* The float ops as expressions over x; NaN inputs are passed through by the caller. */
static const char *float_expr(wgt_unary_op op) {
    switch (op) {
    case WGT_UNARY_NEG: return "-x";
    case WGT_UNARY_ABS: return "abs(x)";
    case WGT_UNARY_SIGN: return "select(select(x, -1.0, x < 0.0), 1.0, x > 0.0)"; /* keeps +-0 */
    case WGT_UNARY_SQUARE: return "x * x";
    case WGT_UNARY_SQRT: return "u_sqrt(x)";
    case WGT_UNARY_RSQRT: return "u_rsqrt(x)";
    case WGT_UNARY_RECIPROCAL: return "u_reciprocal(x)";
    case WGT_UNARY_EXP: return "exp_ieee(x)";
    case WGT_UNARY_EXPM1: return "expm1_f(x)";
    case WGT_UNARY_LOG: return "u_log(x)";
    case WGT_UNARY_LOG1P: return "u_log1p(x)";
    case WGT_UNARY_SIN: return "select(sin(reduce_angle(x)), nan_f32(), is_inf(x))";
    case WGT_UNARY_COS: return "select(cos(reduce_angle(x)), nan_f32(), is_inf(x))";
    case WGT_UNARY_TANH: return "u_tanh(x)";
    case WGT_UNARY_SIGMOID: return "sigmoid_f(x)";
    /* Zeros pass through the activations unchanged (no 0 * slope). */
    case WGT_UNARY_RELU: return "select(x, 0.0, x < 0.0)";
    case WGT_UNARY_LEAKY_RELU: return "select(x, x * bitcast<f32>(params.scalar_bits.x), x < 0.0)";
    case WGT_UNARY_ELU: return "select(x, bitcast<f32>(params.scalar_bits.x) * expm1_f(x), x < 0.0)";
    case WGT_UNARY_GELU: return "u_gelu(x)";
    case WGT_UNARY_GELU_TANH: return "u_gelu_tanh(x)";
    case WGT_UNARY_SILU: return "u_silu(x)";
    case WGT_UNARY_SOFTPLUS: return "max(x, 0.0) + log1p_f(exp_ieee(-abs(x)))";
    case WGT_UNARY_FLOOR: return "floor(x)";
    case WGT_UNARY_CEIL: return "ceil(x)";
    case WGT_UNARY_ROUND: return "round(x)"; /* WGSL's round is half to even */
    case WGT_UNARY_ERF: return "u_erf(x)";
    case WGT_UNARY_ISNAN: return "select(0u, 1u, is_nan(x))";
    case WGT_UNARY_ISINF: return "select(0u, 1u, is_inf(x))";
    case WGT_UNARY_CLAMP:
        return "select(select(x, bitcast<f32>(params.scalar_bits.x), x < bitcast<f32>(params.scalar_bits.x)), "
               "bitcast<f32>(params.scalar_bits.y), x > bitcast<f32>(params.scalar_bits.y))";
    case WGT_UNARY_LOGICAL_NOT: return "select(0u, 1u, x == 0.0)"; /* NaN is nonzero */
    default: return NULL;
    }
}

/* i32 ops: WGSL's integer negation and multiplication wrap, as the header wants. */
static const char *i32_expr(wgt_unary_op op) {
    switch (op) {
    case WGT_UNARY_NEG: return "-x";
    case WGT_UNARY_ABS: return "select(x, -x, x < 0i)";
    case WGT_UNARY_SIGN: return "select(select(0i, -1i, x < 0i), 1i, x > 0i)";
    case WGT_UNARY_SQUARE: return "x * x";
    case WGT_UNARY_RELU: return "select(x, 0i, x < 0i)";
    case WGT_UNARY_FLOOR: case WGT_UNARY_CEIL: case WGT_UNARY_ROUND: return "x";
    case WGT_UNARY_ISNAN: case WGT_UNARY_ISINF: return "0u";
    case WGT_UNARY_CLAMP:
        return "select(select(x, bitcast<i32>(params.scalar_bits.x), x < bitcast<i32>(params.scalar_bits.x)), "
               "bitcast<i32>(params.scalar_bits.y), x > bitcast<i32>(params.scalar_bits.y))";
    case WGT_UNARY_LOGICAL_NOT: return "select(0u, 1u, x == 0i)";
    default: return NULL;
    }
}

static const char *u32_expr(wgt_unary_op op) {
    switch (op) {
    case WGT_UNARY_NEG: return "0u - x";
    case WGT_UNARY_SIGN: return "select(0u, 1u, x > 0u)";
    case WGT_UNARY_SQUARE: return "x * x";
    case WGT_UNARY_ABS: case WGT_UNARY_RELU: case WGT_UNARY_FLOOR: case WGT_UNARY_CEIL: case WGT_UNARY_ROUND: return "x";
    case WGT_UNARY_ISNAN: case WGT_UNARY_ISINF: return "0u";
    case WGT_UNARY_CLAMP:
        return "select(select(x, params.scalar_bits.x, x < params.scalar_bits.x), params.scalar_bits.y, "
               "x > params.scalar_bits.y)";
    case WGT_UNARY_LOGICAL_NOT: return "select(0u, 1u, x == 0u)";
    default: return NULL;
    }
}

/* The first part of each pipeline's cache key; the runner appends the types. */
static const char *const op_keys[WGT_UNARY_COUNT] = {
    "neg", "abs", "sign", "square", "sqrt", "rsqrt", "reciprocal", "exp", "expm1", "log",
    "log1p", "sin", "cos", "tanh", "sigmoid", "relu", "leaky_relu", "elu", "gelu", "gelu_tanh",
    "silu", "softplus", "floor", "ceil", "round", "erf", "isnan", "isinf", "clamp", "logical_not"};

static uint32_t f32_bits(double v) {
    float f = (float)v;
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static void special_bits(uint32_t bits[4]) {
    bits[2] = 0x7fc00000u; /* quiet NaN */
    bits[3] = 0x7f800000u; /* +infinity */
}

wgt_status wgt_wgpu_unary(wgt_backend *be, wgt_unary_op op, const wgt_operand *out, const wgt_operand *a,
                          const double *params) {
    if ((unsigned)op >= WGT_UNARY_COUNT) return wgt_error(WGT_ERR_INTERNAL, "unknown unary op %d", (int)op);
    int is_float = a->dtype == WGT_F32 || a->dtype == WGT_F16;
    const char *expr = is_float ? float_expr(op) : a->dtype == WGT_I32 ? i32_expr(op) : u32_expr(op);
    if (!expr)
        return wgt_error(WGT_ERR_INTERNAL, "unary op %s has no %s kernel", op_keys[op], wgt_dtype_name(a->dtype));
    uint32_t bits[4] = {0, 0, 0, 0};
    special_bits(bits);
    if (is_float) {
        bits[0] = f32_bits(params[0]);
        bits[1] = f32_bits(params[1]);
    } else if (a->dtype == WGT_I32) { /* clamp bounds, already i32 values (core/unary.c) */
        bits[0] = (uint32_t)(int32_t)params[0];
        bits[1] = (uint32_t)(int32_t)params[1];
    } else {
        bits[0] = (uint32_t)params[0];
        bits[1] = (uint32_t)params[1];
    }
    char wrapped[512];
    if (is_float && out->dtype != WGT_U32 && op != WGT_UNARY_NEG && op != WGT_UNARY_ABS) {
        /* Every float op gives back a NaN input unchanged; neg and abs already do, on the bits. */
        const char *fmt = out->dtype == WGT_F16 ? "f16_range(select(%s, x, is_nan(x)))" : "select(%s, x, is_nan(x))";
        snprintf(wrapped, sizeof wrapped, fmt, expr);
        expr = wrapped;
    } else if (out->dtype == WGT_F16) {
        snprintf(wrapped, sizeof wrapped, "f16_range(%s)", expr);
        expr = wrapped;
    }
    wgt_wgpu_elementwise_spec spec = {op_keys[op], expr, 1, {a->dtype, 0, 0}, out->dtype};
    const wgt_operand *in[1] = {a};
    return wgt_wgpu_elementwise_with(be, &spec, is_float ? float_helpers : NULL, out, in, bits);
}

wgt_status wgt_wgpu_cast(wgt_backend *be, const wgt_operand *out, const wgt_operand *a) {
    int from_float = a->dtype == WGT_F32 || a->dtype == WGT_F16;
    const char *expr;
    switch (out->dtype) {
    case WGT_F32:
    case WGT_F16:
        /* Integers convert in two exact halves whose sum rounds once, to nearest even:
         * WGSL lets f32(i32) round either way. f16 then rounds that f32 once more. */
        expr = from_float ? "x"
               : a->dtype == WGT_I32 ? "f32(x & bitcast<i32>(0xffff0000u)) + f32(x & 0xffffi)"
                                     : "f32(x & 0xffff0000u) + f32(x & 0xffffu)";
        break;
    /* WGSL's float to integer conversion saturates, but its NaN result is up to the
     * implementation: every case is spelled out. */
    case WGT_I32:
        expr = from_float ? "select(select(select(i32(x), 2147483647i, x >= 2147483648.0), bitcast<i32>(0x80000000u), "
                            "x < -2147483648.0), 0i, is_nan(x))"
                          : "bitcast<i32>(x)";
        break;
    case WGT_U32:
        expr = from_float ? "select(select(u32(x), 4294967295u, x >= 4294967296.0), 0u, x < 0.0 || is_nan(x))"
                          : "bitcast<u32>(x)";
        break;
    default: return wgt_error(WGT_ERR_INTERNAL, "cast to unknown type %d", (int)out->dtype);
    }
    char wrapped[256];
    if (out->dtype == WGT_F16) {
        snprintf(wrapped, sizeof wrapped, "f16_range(%s)", expr);
        expr = wrapped;
    }
    uint32_t bits[4] = {0, 0, 0, 0};
    special_bits(bits);
    wgt_wgpu_elementwise_spec spec = {"cast", expr, 1, {a->dtype, 0, 0}, out->dtype};
    const wgt_operand *in[1] = {a};
    int needs_helpers = from_float || out->dtype == WGT_F16;
    return wgt_wgpu_elementwise_with(be, &spec, needs_helpers ? float_helpers : NULL, out, in, bits);
}
