/*
 * Unary ops, logical_not and casts: validate the input, create a contiguous output of the
 * same shape and hand the backend the input view as it is (transposed, sliced and
 * broadcast inputs are read in place, never copied first). Which types each op accepts,
 * and what its parameters mean for each type, is decided here once, so the backends only
 * ever see valid combinations with parameters already in the input's value range.
 */
#include <math.h>

#include "node.h"
#include "core/dtype_table.h"
#include "quant/quant.h"

enum {
    ANY_TYPE = 1, /* integers accepted too; the rest take f32 and f16 only */
    GIVES_BOOL = 2, /* a predicate: the result is bool whatever the input type */
    INT_ONLY = 4   /* integer types only (bitwise ops; bool too, as logical_not) */
};

static const struct {
    const char *name;
    unsigned flags;
} unary_ops[WGT_UNARY_COUNT] = {
    [WGT_UNARY_NEG] = {"wgt_neg", ANY_TYPE},
    [WGT_UNARY_ABS] = {"wgt_abs", ANY_TYPE},
    [WGT_UNARY_SIGN] = {"wgt_sign", ANY_TYPE},
    [WGT_UNARY_SQUARE] = {"wgt_square", ANY_TYPE},
    [WGT_UNARY_SQRT] = {"wgt_sqrt", 0},
    [WGT_UNARY_RSQRT] = {"wgt_rsqrt", 0},
    [WGT_UNARY_RECIPROCAL] = {"wgt_reciprocal", 0},
    [WGT_UNARY_EXP] = {"wgt_exp", 0},
    [WGT_UNARY_EXPM1] = {"wgt_expm1", 0},
    [WGT_UNARY_LOG] = {"wgt_log", 0},
    [WGT_UNARY_LOG1P] = {"wgt_log1p", 0},
    [WGT_UNARY_SIN] = {"wgt_sin", 0},
    [WGT_UNARY_COS] = {"wgt_cos", 0},
    [WGT_UNARY_TANH] = {"wgt_tanh", 0},
    [WGT_UNARY_SIGMOID] = {"wgt_sigmoid", 0},
    [WGT_UNARY_RELU] = {"wgt_relu", ANY_TYPE},
    [WGT_UNARY_LEAKY_RELU] = {"wgt_leaky_relu", 0},
    [WGT_UNARY_ELU] = {"wgt_elu", 0},
    [WGT_UNARY_GELU] = {"wgt_gelu", 0},
    [WGT_UNARY_GELU_TANH] = {"wgt_gelu_tanh", 0},
    [WGT_UNARY_SILU] = {"wgt_silu", 0},
    [WGT_UNARY_SOFTPLUS] = {"wgt_softplus", 0},
    [WGT_UNARY_FLOOR] = {"wgt_floor", ANY_TYPE},
    [WGT_UNARY_CEIL] = {"wgt_ceil", ANY_TYPE},
    [WGT_UNARY_ROUND] = {"wgt_round", ANY_TYPE},
    [WGT_UNARY_ERF] = {"wgt_erf", 0},
    [WGT_UNARY_ISNAN] = {"wgt_isnan", ANY_TYPE | GIVES_BOOL},
    [WGT_UNARY_ISINF] = {"wgt_isinf", ANY_TYPE | GIVES_BOOL},
    [WGT_UNARY_CLAMP] = {"wgt_clamp", ANY_TYPE},
    [WGT_UNARY_LOGICAL_NOT] = {"wgt_logical_not", ANY_TYPE | GIVES_BOOL},
    [WGT_UNARY_TAN] = {"wgt_tan", 0},
    [WGT_UNARY_ASIN] = {"wgt_asin", 0},
    [WGT_UNARY_ACOS] = {"wgt_acos", 0},
    [WGT_UNARY_ATAN] = {"wgt_atan", 0},
    [WGT_UNARY_SINH] = {"wgt_sinh", 0},
    [WGT_UNARY_COSH] = {"wgt_cosh", 0},
    [WGT_UNARY_ASINH] = {"wgt_asinh", 0},
    [WGT_UNARY_ACOSH] = {"wgt_acosh", 0},
    [WGT_UNARY_ATANH] = {"wgt_atanh", 0},
    [WGT_UNARY_LOG2] = {"wgt_log2", 0},
    [WGT_UNARY_LOG10] = {"wgt_log10", 0},
    [WGT_UNARY_EXP2] = {"wgt_exp2", 0},
    [WGT_UNARY_TRUNC] = {"wgt_trunc", ANY_TYPE},
    [WGT_UNARY_SIGNBIT] = {"wgt_signbit", GIVES_BOOL}, /* the array API defines it for floats only */
    [WGT_UNARY_ISFINITE] = {"wgt_isfinite", ANY_TYPE | GIVES_BOOL},
    [WGT_UNARY_BITWISE_NOT] = {"wgt_bitwise_not", ANY_TYPE | INT_ONLY},
};

static int is_integer(wgt_dtype d) { return wgt_dtype_is_integer(d) || wgt_dtype_is_64bit(d); }

/* Integer clamp bounds become the nearest values of the type inside [lo, hi] (ceil of lo,
 * floor of hi, saturated), so the result never leaves the range the caller asked for.
 * A range holding no value of the type is an error rather than a silent widening. */
static wgt_status integer_bounds(const char *fn, wgt_dtype dtype, double *lo, double *hi) {
    double tmin = wgt_dtype_info_of(dtype)->min, tmax = wgt_dtype_info_of(dtype)->max;
    double l = fmin(fmax(ceil(*lo), tmin), tmax), h = fmin(fmax(floor(*hi), tmin), tmax);
    if (l > h || ceil(*lo) > tmax || floor(*hi) < tmin)
        return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: no %s value lies in [lo, hi] = [%g, %g]", fn,
                         wgt_dtype_name(dtype), *lo, *hi);
    *lo = l;
    *hi = h;
    return WGT_OK;
}

static wgt_tensor *run_unary(wgt_unary_op op, wgt_tensor *a, double p0, double p1) {
    const char *fn = unary_ops[op].name;
    if (wgt_check_tensor(fn, "a", a) != WGT_OK) return NULL;
    if (a->dtype == WGT_BOOL && op == WGT_UNARY_BITWISE_NOT) op = WGT_UNARY_LOGICAL_NOT; /* the array API's ~ */
    int predicate = unary_ops[op].flags & GIVES_BOOL;
    /* bool and bf16 take the predicates only. */
    if (wgt_dtype_is_narrow(a->dtype) && !is_integer(a->dtype) && !predicate) {
        wgt_error(WGT_ERR_DTYPE, "%s: takes no %s operand; cast first", fn, wgt_dtype_name(a->dtype));
        return NULL;
    }
    if (op == WGT_UNARY_SIGNBIT && wgt_dtype_is_narrow(a->dtype) && a->dtype != WGT_BF16) {
        wgt_error(WGT_ERR_DTYPE, "%s: takes floating types (f32, f16, bf16), not %s", fn, wgt_dtype_name(a->dtype));
        return NULL;
    }
    if (is_integer(a->dtype) && !(unary_ops[op].flags & ANY_TYPE)) {
        wgt_error(WGT_ERR_DTYPE, "%s: takes floating types (f32, f16), not %s; cast first", fn,
                  wgt_dtype_name(a->dtype));
        return NULL;
    }
    if (!is_integer(a->dtype) && (unary_ops[op].flags & INT_ONLY)) {
        wgt_error(WGT_ERR_DTYPE, "%s: takes integer types (i32, u32, i64, u64, i16, u16, i8, u8) and bool, not %s", fn,
                  wgt_dtype_name(a->dtype));
        return NULL;
    }
    if (op == WGT_UNARY_CLAMP) {
        if (isnan(p0) || isnan(p1) || p0 > p1) {
            wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: needs lo <= hi, got lo = %g, hi = %g", fn, p0, p1);
            return NULL;
        }
        if (is_integer(a->dtype) && integer_bounds(fn, a->dtype, &p0, &p1) != WGT_OK) return NULL;
    } else if ((op == WGT_UNARY_LEAKY_RELU || op == WGT_UNARY_ELU) && isnan(p0)) {
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: %s is NaN", fn, op == WGT_UNARY_ELU ? "alpha" : "negative_slope");
        return NULL;
    }
    if (wgt_dtype_is_narrow(a->dtype)) { /* computed wide, the result cast back (narrow.c) */
        wgt_tensor *wide = wgt_narrow_widen(a);
        wgt_tensor *out = wide ? run_unary(op, wide, p0, p1) : NULL;
        wgt_release(wide);
        return predicate ? out : wgt_narrow_cast_to(out, a->dtype);
    }
    wgt_context *ctx = a->storage->ctx;
    /* The kernels give predicates as u32 0/1, cast to bool below. */
    wgt_dtype out_dtype = predicate ? WGT_U32 : a->dtype;
    wgt_tensor *out = wgt_tensor_new(ctx, fn, out_dtype, a->ndim, a->shape, WGT_USAGE_DEFAULT);
    if (!out) return NULL;
    if (wgt_tensor_numel(out) == 0) return predicate ? wgt_narrow_cast_to(out, WGT_BOOL) : out;
    const double params[2] = {p0, p1};
    wgt_operand oa, oo;
    if (wgt_check_kernel_size(fn, out) != WGT_OK || wgt_view_operand(a, a->ndim, a->shape, a->strides, &oa) != WGT_OK ||
        wgt_output_operand(out, &oo) != WGT_OK ||
        wgt_record_unary(ctx, fn, op, &oo, &oa, params) != WGT_OK) {
        wgt_release(out);
        return NULL;
    }
    return predicate ? wgt_narrow_cast_to(out, WGT_BOOL) : out;
}

#define UNARY(name, op) \
    wgt_tensor *wgt_##name(wgt_tensor *a) { return run_unary(op, a, 0, 0); }
UNARY(neg, WGT_UNARY_NEG)
UNARY(abs, WGT_UNARY_ABS)
UNARY(sign, WGT_UNARY_SIGN)
UNARY(square, WGT_UNARY_SQUARE)
UNARY(sqrt, WGT_UNARY_SQRT)
UNARY(rsqrt, WGT_UNARY_RSQRT)
UNARY(reciprocal, WGT_UNARY_RECIPROCAL)
UNARY(exp, WGT_UNARY_EXP)
UNARY(expm1, WGT_UNARY_EXPM1)
UNARY(log, WGT_UNARY_LOG)
UNARY(log1p, WGT_UNARY_LOG1P)
UNARY(sin, WGT_UNARY_SIN)
UNARY(cos, WGT_UNARY_COS)
UNARY(tanh, WGT_UNARY_TANH)
UNARY(sigmoid, WGT_UNARY_SIGMOID)
UNARY(relu, WGT_UNARY_RELU)
UNARY(gelu, WGT_UNARY_GELU)
UNARY(gelu_tanh, WGT_UNARY_GELU_TANH)
UNARY(silu, WGT_UNARY_SILU)
UNARY(softplus, WGT_UNARY_SOFTPLUS)
UNARY(floor, WGT_UNARY_FLOOR)
UNARY(ceil, WGT_UNARY_CEIL)
UNARY(round, WGT_UNARY_ROUND)
UNARY(erf, WGT_UNARY_ERF)
UNARY(isnan, WGT_UNARY_ISNAN)
UNARY(isinf, WGT_UNARY_ISINF)
UNARY(logical_not, WGT_UNARY_LOGICAL_NOT)
UNARY(tan, WGT_UNARY_TAN)
UNARY(asin, WGT_UNARY_ASIN)
UNARY(acos, WGT_UNARY_ACOS)
UNARY(atan, WGT_UNARY_ATAN)
UNARY(sinh, WGT_UNARY_SINH)
UNARY(cosh, WGT_UNARY_COSH)
UNARY(asinh, WGT_UNARY_ASINH)
UNARY(acosh, WGT_UNARY_ACOSH)
UNARY(atanh, WGT_UNARY_ATANH)
UNARY(log2, WGT_UNARY_LOG2)
UNARY(log10, WGT_UNARY_LOG10)
UNARY(exp2, WGT_UNARY_EXP2)
UNARY(trunc, WGT_UNARY_TRUNC)
UNARY(signbit, WGT_UNARY_SIGNBIT)
UNARY(isfinite, WGT_UNARY_ISFINITE)
UNARY(bitwise_not, WGT_UNARY_BITWISE_NOT)
#undef UNARY

wgt_tensor *wgt_leaky_relu(wgt_tensor *a, double negative_slope) {
    return run_unary(WGT_UNARY_LEAKY_RELU, a, negative_slope, 0);
}
wgt_tensor *wgt_elu(wgt_tensor *a, double alpha) { return run_unary(WGT_UNARY_ELU, a, alpha, 0); }
wgt_tensor *wgt_clamp(wgt_tensor *a, double lo, double hi) { return run_unary(WGT_UNARY_CLAMP, a, lo, hi); }

/* A same-type cast is the backend's strided copy: the caller still gets a new contiguous
 * tensor, never a view of a. */
wgt_tensor *wgt_cast(wgt_tensor *a, wgt_dtype dtype) {
    static const char fn[] = "wgt_cast";
    if (wgt_check_tensor(fn, "a", a) != WGT_OK || wgt_check_dtype(fn, dtype) != WGT_OK) return NULL;
    if (wgt_dtype_is_block(dtype)) return wgt_quant_quantize(fn, a, dtype);
    if (wgt_dtype_is_block(a->dtype)) return wgt_quant_dequantize(fn, a, dtype);
    wgt_dtype via = wgt_int64_cast_via(a->dtype, dtype);
    if (via != dtype) { /* a pair with i64 or u64 the backends cast in two steps (int64.c) */
        wgt_tensor *mid = wgt_cast(a, via), *out = mid ? wgt_cast(mid, dtype) : NULL;
        wgt_release(mid);
        return out;
    }
    wgt_context *ctx = a->storage->ctx;
    wgt_tensor *out = wgt_tensor_new(ctx, fn, dtype, a->ndim, a->shape, WGT_USAGE_DEFAULT);
    if (!out) return NULL;
    if (wgt_tensor_numel(out) == 0) return out;
    wgt_operand oa, oo;
    if (wgt_check_kernel_size(fn, out) != WGT_OK || wgt_view_operand(a, a->ndim, a->shape, a->strides, &oa) != WGT_OK ||
        wgt_output_operand(out, &oo) != WGT_OK ||
        (dtype == a->dtype ? wgt_record_copy(ctx, fn, &oo, &oa) : wgt_record_cast(ctx, fn, &oo, &oa)) != WGT_OK) {
        wgt_release(out);
        return NULL;
    }
    return out;
}
