/*
 * Unary, logical_not and cast kernels of the CPU backend over strided operands. As the
 * oracle the WebGPU kernels are tested against, each op spells out the header's semantics:
 *   - f32 and f16 compute in float with libm's float functions and round once to the
 *     output type; NaN inputs give NaN outputs;
 *   - integer ops work on the unsigned bits so negation and squaring wrap around
 *     (abs(INT32_MIN) is INT32_MIN) instead of being undefined behaviour;
 *   - casts from floats truncate toward zero, saturate and send NaN to 0; integer to
 *     integer keeps the bits; to f16 goes through f32 and rounds to nearest even.
 * The core has already checked the types and turned integer clamp bounds into values of
 * the input's type, so nothing here can fail.
 */
#include <math.h>
#include <string.h>

#include "backend/strided_iter.h"
#include "cpu_kernels.h"

static inline float load_float(const wgt_operand *t, int64_t i) {
    return t->dtype == WGT_F16 ? wgt_f16_to_f32(((const uint16_t *)t->host)[i]) : ((const float *)t->host)[i];
}

static inline void store_float(const wgt_operand *t, int64_t i, float v) {
    if (t->dtype == WGT_F16) ((uint16_t *)t->host)[i] = wgt_f32_to_f16(v);
    else ((float *)t->host)[i] = v;
}

/* Integers travel as their 32 bits, so i32 and u32 share the loads and stores. */
static inline uint32_t load_bits(const wgt_operand *t, int64_t i) { return ((const uint32_t *)t->host)[i]; }
static inline void store_bits(const wgt_operand *t, int64_t i, uint32_t v) { ((uint32_t *)t->host)[i] = v; }

static inline int32_t as_i32(uint32_t u) {
    int32_t v;
    memcpy(&v, &u, sizeof v);
    return v;
}

/* 1 / (1 + exp(-x)) without overflow: exp only ever sees -|x|. */
static float sigmoidf(float x) {
    float z = expf(-fabsf(x));
    return (x >= 0 ? 1.0f : z) / (1.0f + z);
}

static float float_op(wgt_unary_op op, float x, float p0, float p1) {
    switch (op) {
    case WGT_UNARY_NEG: return -x;
    case WGT_UNARY_ABS: return fabsf(x);
    case WGT_UNARY_SIGN: return x > 0 ? 1.0f : x < 0 ? -1.0f : x; /* keeps ±0 and NaN */
    case WGT_UNARY_SQUARE: return x * x;
    case WGT_UNARY_SQRT: return sqrtf(x);
    case WGT_UNARY_RSQRT: return 1.0f / sqrtf(x);
    case WGT_UNARY_RECIPROCAL: return 1.0f / x;
    case WGT_UNARY_EXP: return expf(x);
    case WGT_UNARY_EXPM1: return expm1f(x);
    case WGT_UNARY_LOG: return logf(x);
    case WGT_UNARY_LOG1P: return log1pf(x);
    case WGT_UNARY_SIN: return sinf(x);
    case WGT_UNARY_COS: return cosf(x);
    case WGT_UNARY_TANH: return tanhf(x);
    case WGT_UNARY_SIGMOID: return sigmoidf(x);
    /* Zeros and NaN pass through the activations unchanged (no 0 * slope, no NaN test). */
    case WGT_UNARY_RELU: return x < 0 ? 0.0f : x;
    case WGT_UNARY_LEAKY_RELU: return x < 0 ? x * p0 : x;
    case WGT_UNARY_ELU: return x < 0 ? p0 * expm1f(x) : x;
    /* At -inf these products would be -inf * 0; the limit, -0, is what they approach. */
    case WGT_UNARY_GELU:
        /* erfc keeps full relative accuracy in the left tail, where 1 + erf cancels. */
        return x == -INFINITY ? -0.0f : 0.5f * x * erfcf(-x * 0.70710678f);
    case WGT_UNARY_GELU_TANH:
        /* 0.5 (1 + tanh(u)) = sigmoid(2u): the same function without the cancellation. */
        return x == -INFINITY ? -0.0f : x * sigmoidf(x * (1.5957691216057308f + 0.0713548162726009f * x * x));
    case WGT_UNARY_SILU: return x == -INFINITY ? -0.0f : x * sigmoidf(x);
    case WGT_UNARY_SOFTPLUS: return isnan(x) ? x : fmaxf(x, 0.0f) + log1pf(expf(-fabsf(x)));
    case WGT_UNARY_FLOOR: return floorf(x);
    case WGT_UNARY_CEIL: return ceilf(x);
    case WGT_UNARY_ROUND: return nearbyintf(x); /* the library never leaves round-to-nearest-even */
    case WGT_UNARY_ERF: return erff(x);
    case WGT_UNARY_CLAMP: return x < p0 ? p0 : x > p1 ? p1 : x;
    default: return x;
    }
}

/* The u32 0/1 predicates, for every input type (integers are never NaN or infinite). */
static uint32_t float_predicate(wgt_unary_op op, float x) {
    switch (op) {
    case WGT_UNARY_ISNAN: return isnan(x) != 0;
    case WGT_UNARY_ISINF: return isinf(x) != 0;
    default: return x == 0; /* logical_not: NaN is nonzero, so it gives 0 */
    }
}

static uint32_t integer_predicate(wgt_unary_op op, uint32_t x) {
    return op == WGT_UNARY_LOGICAL_NOT ? x == 0 : 0;
}

/* i32 ops on the bits; lo and hi are already i32 values. */
static uint32_t i32_op(wgt_unary_op op, uint32_t u, int32_t lo, int32_t hi) {
    int32_t x = as_i32(u);
    switch (op) {
    case WGT_UNARY_NEG: return 0u - u;
    case WGT_UNARY_ABS: return x < 0 ? 0u - u : u;
    case WGT_UNARY_SIGN: return x > 0 ? 1u : x < 0 ? UINT32_MAX : 0u;
    case WGT_UNARY_SQUARE: return u * u;
    case WGT_UNARY_RELU: return x < 0 ? 0u : u;
    case WGT_UNARY_CLAMP: return x < lo ? (uint32_t)lo : x > hi ? (uint32_t)hi : u;
    default: return u; /* floor, ceil, round: integers are already whole */
    }
}

static uint32_t u32_op(wgt_unary_op op, uint32_t x, uint32_t lo, uint32_t hi) {
    switch (op) {
    case WGT_UNARY_NEG: return 0u - x;
    case WGT_UNARY_SIGN: return x != 0;
    case WGT_UNARY_SQUARE: return x * x;
    case WGT_UNARY_CLAMP: return x < lo ? lo : x > hi ? hi : x;
    default: return x; /* abs, relu, floor, ceil, round */
    }
}

wgt_status wgt_cpu_unary(wgt_backend *be, wgt_unary_op op, const wgt_operand *out, const wgt_operand *a,
                         const double *params) {
    (void)be;
    const float f0 = (float)params[0], f1 = (float)params[1];
    /* Integer bounds arrive as exact values of a's type (see core/unary.c). */
    const int32_t ilo = a->dtype == WGT_I32 ? (int32_t)params[0] : 0, ihi = a->dtype == WGT_I32 ? (int32_t)params[1] : 0;
    const uint32_t ulo = a->dtype == WGT_U32 ? (uint32_t)params[0] : 0, uhi = a->dtype == WGT_U32 ? (uint32_t)params[1] : 0;
    const int predicate = op == WGT_UNARY_ISNAN || op == WGT_UNARY_ISINF || op == WGT_UNARY_LOGICAL_NOT;
    const int64_t *strides[2] = {out->strides, a->strides};
    int64_t offsets[2] = {out->offset, a->offset};
    int64_t inner, is[2];
    wgt_strided_iter it;
    wgt_strided_iter_init(&it, out->ndim, out->shape, 2, strides, offsets, &inner, is);
    do {
        for (int64_t i = 0; i < inner; i++) {
            int64_t o = it.base[0] + i * is[0], s = it.base[1] + i * is[1];
            switch (a->dtype) {
            case WGT_F32:
            case WGT_F16: {
                float x = load_float(a, s);
                if (predicate) store_bits(out, o, float_predicate(op, x));
                else store_float(out, o, float_op(op, x, f0, f1));
                break;
            }
            case WGT_I32:
                store_bits(out, o, predicate ? integer_predicate(op, load_bits(a, s)) : i32_op(op, load_bits(a, s), ilo, ihi));
                break;
            case WGT_U32:
                store_bits(out, o, predicate ? integer_predicate(op, load_bits(a, s)) : u32_op(op, load_bits(a, s), ulo, uhi));
                break;
            }
        }
    } while (wgt_strided_iter_next(&it));
    return WGT_OK;
}

/* Float to integer: truncate toward zero, saturate, NaN to 0. The range tests come first
 * so the C conversion only ever sees values it defines. */
static uint32_t float_to_i32_bits(float x) {
    if (isnan(x)) return 0;
    if (x >= 2147483648.0f) return (uint32_t)INT32_MAX;
    if (x < -2147483648.0f) return (uint32_t)INT32_MIN;
    return (uint32_t)(int32_t)x;
}

static uint32_t float_to_u32(float x) {
    if (!(x > -1.0f)) return 0; /* NaN and everything that truncates below 0 */
    if (x >= 4294967296.0f) return UINT32_MAX;
    return (uint32_t)x;
}

wgt_status wgt_cpu_cast(wgt_backend *be, const wgt_operand *out, const wgt_operand *a) {
    (void)be;
    const int out_float = out->dtype == WGT_F32 || out->dtype == WGT_F16;
    const int64_t *strides[2] = {out->strides, a->strides};
    int64_t offsets[2] = {out->offset, a->offset};
    int64_t inner, is[2];
    wgt_strided_iter it;
    wgt_strided_iter_init(&it, out->ndim, out->shape, 2, strides, offsets, &inner, is);
    do {
        for (int64_t i = 0; i < inner; i++) {
            int64_t o = it.base[0] + i * is[0], s = it.base[1] + i * is[1];
            switch (a->dtype) {
            case WGT_F32:
            case WGT_F16: {
                float x = load_float(a, s);
                if (out_float) store_float(out, o, x); /* f16 stores round to nearest even */
                else store_bits(out, o, out->dtype == WGT_I32 ? float_to_i32_bits(x) : float_to_u32(x));
                break;
            }
            case WGT_I32: {
                uint32_t u = load_bits(a, s);
                if (out_float) store_float(out, o, (float)as_i32(u)); /* nearest even, then f16's rounding */
                else store_bits(out, o, u);
                break;
            }
            case WGT_U32: {
                uint32_t u = load_bits(a, s);
                if (out_float) store_float(out, o, (float)u);
                else store_bits(out, o, u);
                break;
            }
            }
        }
    } while (wgt_strided_iter_next(&it));
    return WGT_OK;
}
