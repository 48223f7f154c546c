/*
 * Unary ops, logical_not and casts on WebGPU, as expressions for the shared elementwise
 * runner. WGSL leaves much of what the header promises to the implementation: NaN and
 * infinity handling of the builtins, exp overflow, f16 packing beyond f16's range, the
 * rounding of integer to float conversion, and it has no erf, expm1 or log1p at all. So
 * the WGSL below spells each of those out (bit tests for NaN, explicit IEEE results at
 * the ends of each domain, series where a builtin formula would cancel), and the CPU
 * backend and this file agree on every special value.
 *
 * Each op is an expression over x with {{P0}} and {{P1}} standing for its parameters' words
 * (bits of the compute type), and the helper pieces it calls: the op's own kernel reads the
 * words from params.scalar_bits, a fused kernel from its own slots (fused.c), so both run the
 * same text.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype_table.h"
#include "webgpu_internal.h"

/* Helper functions of the float ops and casts, one piece per function family, each naming
 * the pieces it calls. */
static const wgt_wgsl_piece signed_specials = {
    "fn is_neg_inf(v: f32) -> bool { return bitcast<u32>(v) == 0xff800000u; }\n"
    "fn signed_inf(v: f32) -> f32 { return bitcast<f32>((bitcast<u32>(v) & 0x80000000u) | 0x7f800000u); }\n"
    "fn signed_zero(v: f32) -> f32 { return bitcast<f32>(bitcast<u32>(v) & 0x80000000u); }\n",
    {NULL}};
/* pack2x16float leaves values beyond f16's range indeterminate: send them to +-inf as
 * round-to-nearest-even does (65520 is the first value that rounds up to infinity). */
static const wgt_wgsl_piece f16_range = {
    "fn f16_range(v: f32) -> f32 { return select(v, signed_inf(v), abs(v) >= 65520.0); }\n", {&signed_specials}};
/* exp with IEEE ends: beyond ln(FLT_MAX) infinity, below the smallest subnormal 0. */
static const wgt_wgsl_piece exp_ieee = {
    "fn exp_ieee(v: f32) -> f32 {\n"
    "  if (v > 88.7228317) { return wgt_inf(); }\n"
    "  if (v < -103.972084) { return 0.0; }\n"
    "  return exp(v);\n"
    "}\n",
    {&wgt_wgsl_float_bits}};
/* Below |v| = 0.5 exp(v) - 1 would cancel: Taylor series to v^8 (error < 2e-8 relative). */
static const wgt_wgsl_piece expm1_f = {
    "fn expm1_f(v: f32) -> f32 {\n"
    "  if (abs(v) < 0.5) {\n"
    "    return v * (1.0 + v * (0.5 + v * (0.16666667 + v * (0.041666668 + v * (0.008333334 + v * (0.0013888889\n"
    "           + v * (0.0001984127 + v * 0.0000248016)))))));\n"
    "  }\n"
    "  return exp_ieee(v) - 1.0;\n"
    "}\n",
    {&exp_ieee}};
/* Below |v| = 0.25 log(1 + v) would lose v's low bits: log1p(v) = 2 atanh(s) with
 * s = v / (2 + v), |s| < 1/7, as an odd series to s^9 (error < 1e-9 relative). */
static const wgt_wgsl_piece log1p_f = {
    "fn log1p_f(v: f32) -> f32 {\n"
    "  if (abs(v) < 0.25) {\n"
    "    let s = v / (2.0 + v);\n"
    "    let s2 = s * s;\n"
    "    return 2.0 * s * (1.0 + s2 * (0.33333334 + s2 * (0.2 + s2 * (0.14285715 + s2 * 0.11111111))));\n"
    "  }\n"
    "  return log(1.0 + v);\n"
    "}\n",
    {NULL}};
/* erfc(z) for z >= 0 with relative error below 1.2e-7 everywhere (Numerical Recipes'
 * Chebyshev fit), so the tails of erf and gelu keep their accuracy. */
static const wgt_wgsl_piece erfc_pos = {
    "fn erfc_pos(z: f32) -> f32 {\n"
    "  let t = 1.0 / (1.0 + 0.5 * z);\n"
    "  let p = -1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806\n"
    "          + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))));\n"
    "  return t * exp_ieee(p - z * z);\n"
    "}\n",
    {&exp_ieee}};
/* exp only ever sees -|v|, so neither end overflows. */
static const wgt_wgsl_piece sigmoid_f = {
    "fn sigmoid_f(v: f32) -> f32 {\n"
    "  let z = exp_ieee(-abs(v));\n"
    "  return select(z, 1.0, v >= 0.0) / (1.0 + z);\n"
    "}\n",
    {&exp_ieee}};
static const wgt_wgsl_piece u_sqrt = {
    "fn u_sqrt(x: f32) -> f32 {\n"
    "  if (x < 0.0) { return wgt_nan(); }\n"
    "  if (x == 0.0 || wgt_is_inf(x)) { return x; }\n"
    "  return sqrt(x);\n"
    "}\n",
    {&wgt_wgsl_float_bits}};
static const wgt_wgsl_piece u_rsqrt = {
    "fn u_rsqrt(x: f32) -> f32 {\n"
    "  if (x < 0.0) { return wgt_nan(); }\n"
    "  if (x == 0.0) { return signed_inf(x); }\n"
    "  if (wgt_is_inf(x)) { return 0.0; }\n"
    "  return inverseSqrt(x);\n"
    "}\n",
    {&wgt_wgsl_float_bits, &signed_specials}};
static const wgt_wgsl_piece u_reciprocal = {
    "fn u_reciprocal(x: f32) -> f32 {\n"
    "  if (x == 0.0) { return signed_inf(x); }\n"
    "  if (wgt_is_inf(x)) { return signed_zero(x); }\n"
    "  return 1.0 / x;\n"
    "}\n",
    {&wgt_wgsl_float_bits, &signed_specials}};
/* Near 1, log(x) = log1p(x - 1) with x - 1 exact: the builtin is only held to an
 * absolute error there, which is a large relative one. A subnormal x is scaled by 2^24
 * first (the builtin misreads it: log(1e-40) gave -88.02, not -92.10). */
static const wgt_wgsl_piece u_log = {
    "fn u_log(x: f32) -> f32 {\n"
    "  if (wgt_is_subnormal(x)) {\n"
    "    if (wgt_sign_bit(x)) { return wgt_nan(); }\n"
    "    return log(wgt_subnormal_scaled(x)) - 16.635532333;\n" /* 24 ln 2 */
    "  }\n"
    "  if (x < 0.0) { return wgt_nan(); }\n"
    "  if (x == 0.0) { return -wgt_inf(); }\n"
    "  if (wgt_is_inf(x)) { return x; }\n"
    "  if (abs(x - 1.0) < 0.25) { return log1p_f(x - 1.0); }\n"
    "  return log(x);\n"
    "}\n",
    {&wgt_wgsl_float_bits, &log1p_f, &wgt_wgsl_subnormal}};
static const wgt_wgsl_piece u_log1p = {
    "fn u_log1p(x: f32) -> f32 {\n"
    "  if (x < -1.0) { return wgt_nan(); }\n"
    "  if (x == -1.0) { return -wgt_inf(); }\n"
    "  if (wgt_is_inf(x)) { return x; }\n"
    "  return log1p_f(x);\n"
    "}\n",
    {&wgt_wgsl_float_bits, &log1p_f}};
/* The builtin's (e^2x - 1) / (e^2x + 1) overflows to NaN and cancels near 0: a Taylor
 * series to x^11 below 0.3, else 1 - 2 / (e^2|x| + 1) with |x| capped where tanh is
 * already 1 in f32. */
static const wgt_wgsl_piece u_tanh = {
    "fn u_tanh(x: f32) -> f32 {\n"
    "  let a = abs(x);\n"
    "  if (a < 0.3) {\n"
    "    let s = x * x;\n"
    "    return x * (1.0 + s * (-0.33333334 + s * (0.13333334 + s * (-0.053968254 + s * (0.021869488\n"
    "           + s * -0.008863236)))));\n"
    "  }\n"
    "  let r = 1.0 - 2.0 / (exp(2.0 * min(a, 20.0)) + 1.0);\n"
    "  return select(r, -r, x < 0.0);\n"
    "}\n",
    {NULL}};
/* At -inf, gelu, gelu_tanh and silu would compute -inf * 0; they give the limit, -0. */
static const wgt_wgsl_piece u_gelu = {
    "fn u_gelu(x: f32) -> f32 {\n"
    "  if (is_neg_inf(x)) { return signed_zero(x); }\n"
    "  let e = erfc_pos(abs(x) * 0.70710678);\n" /* 0.5 x erfc(-x / sqrt 2): no cancellation for x < 0 */
    "  return 0.5 * x * select(2.0 - e, e, x < 0.0);\n"
    "}\n",
    {&signed_specials, &erfc_pos}};
/* 0.5 (1 + tanh(u)) = sigmoid(2u), with 2u = x (2 sqrt(2/pi) + 2 sqrt(2/pi) 0.044715 x^2). */
static const wgt_wgsl_piece u_gelu_tanh = {
    "fn u_gelu_tanh(x: f32) -> f32 {\n"
    "  if (is_neg_inf(x)) { return signed_zero(x); }\n"
    "  return x * sigmoid_f(x * (1.5957691 + 0.071354816 * x * x));\n"
    "}\n",
    {&signed_specials, &sigmoid_f}};
static const wgt_wgsl_piece u_silu = {
    "fn u_silu(x: f32) -> f32 {\n"
    "  if (is_neg_inf(x)) { return signed_zero(x); }\n"
    "  return x * sigmoid_f(x);\n"
    "}\n",
    {&signed_specials, &sigmoid_f}};
static const wgt_wgsl_piece u_erf = {
    "fn u_erf(x: f32) -> f32 {\n"
    "  let a = abs(x);\n"
    "  if (a < 0.5) {\n" /* Maclaurin series to x^13 (error < 2e-8 relative) */
    "    let s = x * x;\n"
    "    return x * (1.1283791671 + s * (-0.37612638903 + s * (0.11283791671 + s * (-0.02686617064\n"
    "           + s * (0.00522397762 + s * (-0.00085483270 + s * 0.00012055332))))));\n"
    "  }\n"
    "  let r = 1.0 - erfc_pos(a);\n"
    "  return select(r, -r, x < 0.0);\n"
    "}\n",
    {&erfc_pos}};
static const wgt_wgsl_piece softplus_helpers = {NULL, {&log1p_f, &exp_ieee}};

/* An op's expression over x and the piece holding the functions it calls. {{P0}} and {{P1}}
 * stand for the u32 words of its two parameters, filled in by wgt_wgpu_unary_expr. */
typedef struct {
    const char *expr;
    const wgt_wgsl_piece *helpers;
} op_text;

/* The float ops; NaN inputs are passed through by wgt_wgpu_unary_expr. */
static const op_text float_ops[WGT_UNARY_COUNT] = {
    [WGT_UNARY_NEG] = {"-x", NULL},
    [WGT_UNARY_ABS] = {"abs(x)", NULL},
    [WGT_UNARY_SIGN] = {"select(select(x, -1.0, x < 0.0), 1.0, x > 0.0)", NULL}, /* keeps +-0 */
    [WGT_UNARY_SQUARE] = {"x * x", NULL},
    [WGT_UNARY_SQRT] = {"u_sqrt(x)", &u_sqrt},
    [WGT_UNARY_RSQRT] = {"u_rsqrt(x)", &u_rsqrt},
    [WGT_UNARY_RECIPROCAL] = {"u_reciprocal(x)", &u_reciprocal},
    [WGT_UNARY_EXP] = {"exp_ieee(x)", &exp_ieee},
    [WGT_UNARY_EXPM1] = {"expm1_f(x)", &expm1_f},
    [WGT_UNARY_LOG] = {"u_log(x)", &u_log},
    [WGT_UNARY_LOG1P] = {"u_log1p(x)", &u_log1p},
    [WGT_UNARY_SIN] = {"wgt_sin(x)", &wgt_wgsl_sin_cos}, /* trig.c */
    [WGT_UNARY_COS] = {"wgt_cos(x)", &wgt_wgsl_sin_cos},
    [WGT_UNARY_TANH] = {"u_tanh(x)", &u_tanh},
    [WGT_UNARY_SIGMOID] = {"sigmoid_f(x)", &sigmoid_f},
    /* Zeros pass through the activations unchanged (no 0 * slope). */
    [WGT_UNARY_RELU] = {"select(x, 0.0, x < 0.0)", NULL},
    [WGT_UNARY_LEAKY_RELU] = {"select(x, x * bitcast<f32>({{P0}}), x < 0.0)", NULL},
    [WGT_UNARY_ELU] = {"select(x, bitcast<f32>({{P0}}) * expm1_f(x), x < 0.0)", &expm1_f},
    [WGT_UNARY_GELU] = {"u_gelu(x)", &u_gelu},
    [WGT_UNARY_GELU_TANH] = {"u_gelu_tanh(x)", &u_gelu_tanh},
    [WGT_UNARY_SILU] = {"u_silu(x)", &u_silu},
    [WGT_UNARY_SOFTPLUS] = {"max(x, 0.0) + log1p_f(exp_ieee(-abs(x)))", &softplus_helpers},
    [WGT_UNARY_FLOOR] = {"floor(x)", NULL},
    [WGT_UNARY_CEIL] = {"ceil(x)", NULL},
    [WGT_UNARY_ROUND] = {"round(x)", NULL}, /* WGSL's round is half to even */
    [WGT_UNARY_ERF] = {"u_erf(x)", &u_erf},
    [WGT_UNARY_ISNAN] = {"select(0u, 1u, wgt_is_nan(x))", &wgt_wgsl_float_bits},
    [WGT_UNARY_ISINF] = {"select(0u, 1u, wgt_is_inf(x))", &wgt_wgsl_float_bits},
    [WGT_UNARY_CLAMP] = {"select(select(x, bitcast<f32>({{P0}}), x < bitcast<f32>({{P0}})), "
                         "bitcast<f32>({{P1}}), x > bitcast<f32>({{P1}}))",
                         NULL},
    [WGT_UNARY_LOGICAL_NOT] = {"select(0u, 1u, x == 0.0)", NULL}, /* NaN is nonzero */
};

/* i32 ops (NULL: not defined on integers): WGSL's integer negation and multiplication
 * wrap, as the header wants. */
static const char *const i32_ops[WGT_UNARY_COUNT] = {
    [WGT_UNARY_NEG] = "-x",
    [WGT_UNARY_ABS] = "select(x, -x, x < 0i)",
    [WGT_UNARY_SIGN] = "select(select(0i, -1i, x < 0i), 1i, x > 0i)",
    [WGT_UNARY_SQUARE] = "x * x",
    [WGT_UNARY_RELU] = "select(x, 0i, x < 0i)",
    [WGT_UNARY_FLOOR] = "x",
    [WGT_UNARY_CEIL] = "x",
    [WGT_UNARY_ROUND] = "x",
    [WGT_UNARY_ISNAN] = "0u",
    [WGT_UNARY_ISINF] = "0u",
    [WGT_UNARY_CLAMP] = "select(select(x, bitcast<i32>({{P0}}), x < bitcast<i32>({{P0}})), bitcast<i32>({{P1}}), "
                        "x > bitcast<i32>({{P1}}))",
    [WGT_UNARY_LOGICAL_NOT] = "select(0u, 1u, x == 0i)",
};

static const char *const u32_ops[WGT_UNARY_COUNT] = {
    [WGT_UNARY_NEG] = "0u - x",
    [WGT_UNARY_ABS] = "x",
    [WGT_UNARY_SIGN] = "select(0u, 1u, x > 0u)",
    [WGT_UNARY_SQUARE] = "x * x",
    [WGT_UNARY_RELU] = "x",
    [WGT_UNARY_FLOOR] = "x",
    [WGT_UNARY_CEIL] = "x",
    [WGT_UNARY_ROUND] = "x",
    [WGT_UNARY_ISNAN] = "0u",
    [WGT_UNARY_ISINF] = "0u",
    [WGT_UNARY_CLAMP] = "select(select(x, {{P0}}, x < {{P0}}), {{P1}}, x > {{P1}})",
    [WGT_UNARY_LOGICAL_NOT] = "select(0u, 1u, x == 0u)",
};

static int is_float(wgt_dtype d) { return d == WGT_F32 || d == WGT_F16; }
static int is_dtype(wgt_dtype d) { return is_float(d) || d == WGT_I32 || d == WGT_U32; }

/* Casts with a narrow type on either side (dtype_table.h). Values compute in i32, u32 or
 * f32 (elementwise.c), so the cast is the one between those compute types followed by the
 * narrowing the rules ask for: saturation from floats, the low bits between integers (the
 * store keeps them), "nonzero" to bool. */
static wgt_dtype compute_proxy(wgt_dtype d) {
    const char *t = wgt_wgpu_compute_type(d);
    return !strcmp(t, "i32") ? WGT_I32 : !strcmp(t, "u32") ? WGT_U32 : d == WGT_F16 ? WGT_F16 : WGT_F32;
}

static wgt_status narrow_cast_expr(wgt_dtype in, wgt_dtype out, char *expr, size_t size, wgt_wgsl_pieces *helpers) {
    /* To a 4-byte type or f16: the existing cast from the value's compute type. */
    if (!wgt_dtype_is_narrow(out)) return wgt_wgpu_cast_expr(compute_proxy(in), out, expr, size, helpers);
    const wgt_dtype_info *ii = wgt_dtype_info_of(in), *oi = wgt_dtype_info_of(out);
    int from_float = ii->kind == WGT_KIND_FLOAT;
    const char *ct = wgt_wgpu_compute_type(out);
    int n;
    if (in == out) {
        n = snprintf(expr, size, "x");
    } else if (oi->kind == WGT_KIND_BOOL) {
        /* NaN is true, -0 false; a float is tested on its bits, since a GPU may compare a
         * subnormal as zero (NVIDIA does: 1e-40 cast to false there). */
        n = snprintf(expr, size, from_float ? "select(0u, 1u, (bitcast<u32>(x) << 1u) != 0u)" : "select(0u, 1u, x != %s(0))",
                     wgt_wgpu_compute_type(in));
    } else if (oi->kind == WGT_KIND_FLOAT) {
        /* Integers to f32 in two exact halves whose sum rounds once (as the 4-byte casts);
         * the store rounds f32 to bf16; f16 goes through f16_range. */
        const char *e = from_float ? "x"
                        : !strcmp(wgt_wgpu_compute_type(in), "i32") ? "f32(x & bitcast<i32>(0xffff0000u)) + f32(x & 0xffffi)"
                                                                     : "f32(x & 0xffff0000u) + f32(x & 0xffffu)";
        n = snprintf(expr, size, out == WGT_F16 ? "f16_range(%s)" : "%s", e);
        if (out == WGT_F16) wgt_wgsl_pieces_add(helpers, &f16_range);
    } else if (from_float) { /* truncate, saturate, NaN to 0; the bounds are exact in f32 */
        n = snprintf(expr, size, "select(%s(clamp(trunc(x), %.1f, %.1f)), %s(0), wgt_is_nan(x))", ct, oi->min, oi->max, ct);
    } else { /* integer to integer: the low bits, sign-extended for a signed result */
        unsigned bits = 8u * (unsigned)oi->size;
        if (!strcmp(ct, "i32"))
            n = snprintf(expr, size, "extractBits(bitcast<i32>(x), 0u, %uu)", bits);
        else if (bits < 32)
            n = snprintf(expr, size, "(bitcast<u32>(x) & 0x%xu)", (1u << bits) - 1u);
        else
            n = snprintf(expr, size, "bitcast<u32>(x)");
    }
    if (n < 0 || (size_t)n >= size) return wgt_error(WGT_ERR_INTERNAL, "cast: no room for its expression");
    if (from_float) wgt_wgsl_pieces_add(helpers, &wgt_wgsl_float_bits);
    return WGT_OK;
}

/* The op's expression on values of type d before wrapping, or NULL; *helpers its pieces. */
static const char *base_expr(wgt_unary_op op, wgt_dtype d, const wgt_wgsl_piece **helpers) {
    *helpers = NULL;
    if ((unsigned)op >= WGT_UNARY_COUNT) return NULL;
    if (op > WGT_UNARY_LOGICAL_NOT) return wgt_wgpu_math2_unary(op, d, helpers); /* math2.c */
    switch (d) {
    case WGT_F32: case WGT_F16: *helpers = float_ops[op].helpers; return float_ops[op].expr;
    case WGT_I32: return i32_ops[op];
    case WGT_U32: return u32_ops[op];
    default: break; /* block types never reach a kernel: the core refuses them */
    }
    return NULL;
}

/* The first part of each pipeline's cache key; the runner appends the types. */
static const char *const op_keys[WGT_UNARY_COUNT] = {
    "neg", "abs", "sign", "square", "sqrt", "rsqrt", "reciprocal", "exp", "expm1", "log",
    "log1p", "sin", "cos", "tanh", "sigmoid", "relu", "leaky_relu", "elu", "gelu", "gelu_tanh",
    "silu", "softplus", "floor", "ceil", "round", "erf", "isnan", "isinf", "clamp", "logical_not",
    "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "log2", "log10", "exp2", "trunc",
    "signbit", "isfinite", "bitwise_not"};

static uint32_t f32_bits(double v) {
    float f = (float)v;
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

void wgt_wgpu_unary_param_bits(wgt_dtype in, const double *params, uint32_t bits[2]) {
    for (int i = 0; i < 2; i++) {
        if (is_float(in)) bits[i] = f32_bits(params[i]);
        else if (in == WGT_I32) bits[i] = (uint32_t)(int32_t)params[i]; /* clamp bounds, already i32 values (core/unary.c) */
        else bits[i] = (uint32_t)params[i];
    }
}

int wgt_wgpu_unary_reads_params(wgt_unary_op op, wgt_dtype in) {
    const wgt_wgsl_piece *pieces;
    const char *e = base_expr(op, in, &pieces);
    return e && strstr(e, "{{P") != NULL;
}

wgt_status wgt_wgpu_unary_expr(wgt_unary_op op, wgt_dtype in, wgt_dtype out, const char *const params[2], char *expr,
                               size_t size, wgt_wgsl_pieces *helpers) {
    if ((unsigned)op >= WGT_UNARY_COUNT) return wgt_error(WGT_ERR_INTERNAL, "unknown unary op %d", (int)op);
    const wgt_wgsl_piece *pieces;
    const char *base = base_expr(op, in, &pieces);
    if (!base)
        return wgt_error(WGT_ERR_INTERNAL, "unary op %s has no %s kernel", op_keys[op], wgt_dtype_name(in));
    int u32_out = wgt_unary_gives_u32(op);
    if (out != (u32_out ? WGT_U32 : in))
        return wgt_error(WGT_ERR_INTERNAL, "unary op %s on %s gives %s, not %s", op_keys[op], wgt_dtype_name(in),
                         wgt_dtype_name(u32_out ? WGT_U32 : in), wgt_dtype_name(out));
    char wrapped[1024];
    if (is_float(in) && out != WGT_U32 && op != WGT_UNARY_NEG && op != WGT_UNARY_ABS) {
        /* Every float op gives back a NaN input unchanged; neg and abs already do, on the bits. */
        const char *fmt = out == WGT_F16 ? "f16_range(select(%s, x, wgt_is_nan(x)))" : "select(%s, x, wgt_is_nan(x))";
        snprintf(wrapped, sizeof wrapped, fmt, base);
    } else {
        snprintf(wrapped, sizeof wrapped, out == WGT_F16 ? "f16_range(%s)" : "%s", base);
    }
    if (is_float(in)) {
        wgt_wgsl_pieces_add(helpers, &wgt_wgsl_float_bits);
    }
    wgt_wgsl_pieces_add(helpers, pieces);
    if (out == WGT_F16) wgt_wgsl_pieces_add(helpers, &f16_range);
    const char *pairs[] = {"P0", params[0], "P1", params[1], NULL};
    char *filled = wgt_wgsl_expand(wrapped, pairs);
    int fits = filled && strlen(filled) < size;
    if (fits) memcpy(expr, filled, strlen(filled) + 1);
    free(filled);
    return fits ? WGT_OK : wgt_error(WGT_ERR_INTERNAL, "unary op %s: no room for its expression", op_keys[op]);
}

wgt_status wgt_wgpu_unary(wgt_backend *be, wgt_unary_op op, const wgt_operand *out, const wgt_operand *a,
                          const double *params) {
    if (wgt_dtype_size(a->dtype) == 8) return wgt_wgpu_unary64(be, op, out, a);
    static const char *const words[2] = {"params.scalar_bits.x", "params.scalar_bits.y"};
    char expr[1024];
    wgt_wgsl_pieces helpers = {0};
    wgt_status st = wgt_wgpu_unary_expr(op, a->dtype, out->dtype, words, expr, sizeof expr, &helpers);
    if (st != WGT_OK) return st;
    uint32_t bits[4] = {0, 0, 0, 0};
    wgt_wgpu_unary_param_bits(a->dtype, params, bits);
    wgt_wgpu_elementwise_spec spec = {op_keys[op], expr, 1, {a->dtype, 0, 0}, out->dtype};
    const wgt_operand *in[1] = {a};
    return wgt_wgpu_elementwise_with(be, &spec, &helpers, out, in, bits);
}

wgt_status wgt_wgpu_cast_expr(wgt_dtype in, wgt_dtype out, char *expr, size_t size, wgt_wgsl_pieces *helpers) {
    if (wgt_dtype_is_narrow(in) || wgt_dtype_is_narrow(out)) return narrow_cast_expr(in, out, expr, size, helpers);
    if (!is_dtype(in) || !is_dtype(out))
        return wgt_error(WGT_ERR_INTERNAL, "cast from type %d to type %d", (int)in, (int)out);
    int from_float = is_float(in);
    const char *e;
    if (in == out) {
        e = "x"; /* only fused kernels ask: the ops' own same-type cast is a copy */
    } else if (is_float(out)) {
        /* Integers convert in two exact halves whose sum rounds once, to nearest even:
         * WGSL lets f32(i32) round either way. f16 then rounds that f32 once more. */
        e = from_float ? "x"
            : in == WGT_I32 ? "f32(x & bitcast<i32>(0xffff0000u)) + f32(x & 0xffffi)"
                            : "f32(x & 0xffff0000u) + f32(x & 0xffffu)";
    /* WGSL's float to integer conversion saturates, but its NaN result is up to the
     * implementation: every case is spelled out. */
    } else if (out == WGT_I32) {
        e = from_float ? "select(select(select(i32(x), 2147483647i, x >= 2147483648.0), bitcast<i32>(0x80000000u), "
                         "x < -2147483648.0), 0i, wgt_is_nan(x))"
                       : "bitcast<i32>(x)";
    } else {
        e = from_float ? "select(select(u32(x), 4294967295u, x >= 4294967296.0), 0u, x < 0.0 || wgt_is_nan(x))"
                       : "bitcast<u32>(x)";
    }
    int n = snprintf(expr, size, out == WGT_F16 && in != out ? "f16_range(%s)" : "%s", e);
    if (n < 0 || (size_t)n >= size) return wgt_error(WGT_ERR_INTERNAL, "cast: no room for its expression");
    if (from_float) wgt_wgsl_pieces_add(helpers, &wgt_wgsl_float_bits);
    if (out == WGT_F16 && in != out) wgt_wgsl_pieces_add(helpers, &f16_range);
    return WGT_OK;
}

wgt_status wgt_wgpu_cast(wgt_backend *be, const wgt_operand *out, const wgt_operand *a) {
    if (wgt_dtype_is_64bit(out->dtype) || wgt_dtype_is_64bit(a->dtype)) return wgt_wgpu_cast64(be, out, a);
    char expr[256];
    wgt_wgsl_pieces helpers = {0};
    wgt_status st = wgt_wgpu_cast_expr(a->dtype, out->dtype, expr, sizeof expr, &helpers);
    if (st != WGT_OK) return st;
    wgt_wgpu_elementwise_spec spec = {"cast", expr, 1, {a->dtype, 0, 0}, out->dtype};
    const wgt_operand *in[1] = {a};
    return wgt_wgpu_elementwise_with(be, &spec, &helpers, out, in, NULL);
}
