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
 *
 * Dense runs of f32, i32 and u32 inputs, and casts between those types, go through one loop
 * per op (cpu_loops.h); f16 and strided runs take the general loop. Both evaluate the same
 * expression, so a result never depends on the layout.
 */
#include <math.h>
#include <string.h>

#include "core/dtype_table.h"
#include "cpu_kernels.h"
#include "cpu_loops.h"
#include "cpu_walk.h"

static inline float load_float(const wgt_operand *t, int64_t i) {
    return t->dtype == WGT_F16 ? wgt_cpu_f16_to_f32(((const uint16_t *)t->host)[i]) : ((const float *)t->host)[i];
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

static inline __attribute__((always_inline)) float float_op(wgt_unary_op op, float x, float p0, float p1) {
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
    case WGT_UNARY_TAN: return tanf(x);
    case WGT_UNARY_ASIN: return asinf(x);
    case WGT_UNARY_ACOS: return acosf(x);
    case WGT_UNARY_ATAN: return atanf(x);
    case WGT_UNARY_SINH: return sinhf(x);
    case WGT_UNARY_COSH: return coshf(x);
    case WGT_UNARY_ASINH: return asinhf(x);
    case WGT_UNARY_ACOSH: return acoshf(x);
    case WGT_UNARY_ATANH: return atanhf(x);
    case WGT_UNARY_LOG2: return log2f(x);
    case WGT_UNARY_LOG10: return log10f(x);
    case WGT_UNARY_EXP2: return exp2f(x);
    case WGT_UNARY_TRUNC: return truncf(x);
    default: return x;
    }
}

/* The u32 0/1 predicates, for every input type (integers are never NaN or infinite). */
static inline __attribute__((always_inline)) uint32_t float_predicate(wgt_unary_op op, float x) {
    switch (op) {
    case WGT_UNARY_ISNAN: return isnan(x) != 0;
    case WGT_UNARY_ISINF: return isinf(x) != 0;
    case WGT_UNARY_ISFINITE: return isfinite(x) != 0;
    case WGT_UNARY_SIGNBIT: return signbit(x) != 0; /* -0 and NaNs with the bit set too */
    default: return x == 0; /* logical_not: NaN is nonzero, so it gives 0 */
    }
}

static inline __attribute__((always_inline)) uint32_t integer_predicate(wgt_unary_op op, uint32_t x) {
    return op == WGT_UNARY_LOGICAL_NOT ? x == 0 : op == WGT_UNARY_ISFINITE;
}

/* i32 ops on the bits; lo and hi are already i32 values. */
static inline __attribute__((always_inline)) uint32_t i32_op(wgt_unary_op op, uint32_t u, int32_t lo, int32_t hi) {
    int32_t x = as_i32(u);
    switch (op) {
    case WGT_UNARY_NEG: return 0u - u;
    case WGT_UNARY_ABS: return x < 0 ? 0u - u : u;
    case WGT_UNARY_SIGN: return x > 0 ? 1u : x < 0 ? UINT32_MAX : 0u;
    case WGT_UNARY_SQUARE: return u * u;
    case WGT_UNARY_RELU: return x < 0 ? 0u : u;
    case WGT_UNARY_CLAMP: return x < lo ? (uint32_t)lo : x > hi ? (uint32_t)hi : u;
    case WGT_UNARY_BITWISE_NOT: return ~u;
    default: return u; /* floor, ceil, round, trunc: integers are already whole */
    }
}

static inline __attribute__((always_inline)) uint32_t u32_op(wgt_unary_op op, uint32_t x, uint32_t lo, uint32_t hi) {
    switch (op) {
    case WGT_UNARY_NEG: return 0u - x;
    case WGT_UNARY_SIGN: return x != 0;
    case WGT_UNARY_SQUARE: return x * x;
    case WGT_UNARY_CLAMP: return x < lo ? lo : x > hi ? hi : x;
    case WGT_UNARY_BITWISE_NOT: return ~x;
    default: return x; /* abs, relu, floor, ceil, round, trunc */
    }
}

/* Float to integer: truncate toward zero, saturate, NaN to 0. The range tests come first
 * so the C conversion only ever sees values it defines. */
static inline __attribute__((always_inline)) uint32_t float_to_i32_bits(float x) {
    if (isnan(x)) return 0;
    if (x >= 2147483648.0f) return (uint32_t)INT32_MAX;
    if (x < -2147483648.0f) return (uint32_t)INT32_MIN;
    return (uint32_t)(int32_t)x;
}

static inline __attribute__((always_inline)) uint32_t float_to_u32(float x) {
    if (!(x > -1.0f)) return 0; /* NaN and everything that truncates below 0 */
    if (x >= 4294967296.0f) return UINT32_MAX;
    return (uint32_t)x;
}

/* ---- loops per op for dense runs ---- */

/* Ops whose float form calls libm's transcendental functions: several times a plain op. */
static int costly(wgt_unary_op op) {
    switch (op) {
    case WGT_UNARY_EXP: case WGT_UNARY_EXPM1: case WGT_UNARY_LOG: case WGT_UNARY_LOG1P: case WGT_UNARY_SIN:
    case WGT_UNARY_COS: case WGT_UNARY_TANH: case WGT_UNARY_SIGMOID: case WGT_UNARY_ELU: case WGT_UNARY_GELU:
    case WGT_UNARY_GELU_TANH: case WGT_UNARY_SILU: case WGT_UNARY_SOFTPLUS: case WGT_UNARY_ERF: case WGT_UNARY_TAN:
    case WGT_UNARY_ASIN: case WGT_UNARY_ACOS: case WGT_UNARY_ATAN: case WGT_UNARY_SINH: case WGT_UNARY_COSH:
    case WGT_UNARY_ASINH: case WGT_UNARY_ACOSH: case WGT_UNARY_ATANH: case WGT_UNARY_LOG2: case WGT_UNARY_LOG10:
    case WGT_UNARY_EXP2:
        return 1;
    default: return 0;
    }
}

#define F32_MAP(name, OP) WGT_CPU_DEFINE_MAP1(f32_##name, float, float, float_op(OP, x, p0, p1))
F32_MAP(neg, WGT_UNARY_NEG)
F32_MAP(abs, WGT_UNARY_ABS)
F32_MAP(sign, WGT_UNARY_SIGN)
F32_MAP(square, WGT_UNARY_SQUARE)
F32_MAP(sqrt, WGT_UNARY_SQRT)
F32_MAP(rsqrt, WGT_UNARY_RSQRT)
F32_MAP(reciprocal, WGT_UNARY_RECIPROCAL)
F32_MAP(exp, WGT_UNARY_EXP)
F32_MAP(expm1, WGT_UNARY_EXPM1)
F32_MAP(log, WGT_UNARY_LOG)
F32_MAP(log1p, WGT_UNARY_LOG1P)
F32_MAP(sin, WGT_UNARY_SIN)
F32_MAP(cos, WGT_UNARY_COS)
F32_MAP(tanh, WGT_UNARY_TANH)
F32_MAP(sigmoid, WGT_UNARY_SIGMOID)
F32_MAP(relu, WGT_UNARY_RELU)
F32_MAP(leaky_relu, WGT_UNARY_LEAKY_RELU)
F32_MAP(elu, WGT_UNARY_ELU)
F32_MAP(gelu, WGT_UNARY_GELU)
F32_MAP(gelu_tanh, WGT_UNARY_GELU_TANH)
F32_MAP(silu, WGT_UNARY_SILU)
F32_MAP(softplus, WGT_UNARY_SOFTPLUS)
F32_MAP(floor, WGT_UNARY_FLOOR)
F32_MAP(ceil, WGT_UNARY_CEIL)
F32_MAP(round, WGT_UNARY_ROUND)
F32_MAP(erf, WGT_UNARY_ERF)
F32_MAP(clamp, WGT_UNARY_CLAMP)
WGT_CPU_DEFINE_MAP1(f32_isnan, uint32_t, float, float_predicate(WGT_UNARY_ISNAN, x))
WGT_CPU_DEFINE_MAP1(f32_isinf, uint32_t, float, float_predicate(WGT_UNARY_ISINF, x))
WGT_CPU_DEFINE_MAP1(f32_not, uint32_t, float, float_predicate(WGT_UNARY_LOGICAL_NOT, x))

static const wgt_cpu_map1_fn f32_maps[WGT_UNARY_COUNT] = {
    [WGT_UNARY_NEG] = f32_neg, [WGT_UNARY_ABS] = f32_abs, [WGT_UNARY_SIGN] = f32_sign,
    [WGT_UNARY_SQUARE] = f32_square, [WGT_UNARY_SQRT] = f32_sqrt, [WGT_UNARY_RSQRT] = f32_rsqrt,
    [WGT_UNARY_RECIPROCAL] = f32_reciprocal, [WGT_UNARY_EXP] = f32_exp, [WGT_UNARY_EXPM1] = f32_expm1,
    [WGT_UNARY_LOG] = f32_log, [WGT_UNARY_LOG1P] = f32_log1p, [WGT_UNARY_SIN] = f32_sin, [WGT_UNARY_COS] = f32_cos,
    [WGT_UNARY_TANH] = f32_tanh, [WGT_UNARY_SIGMOID] = f32_sigmoid, [WGT_UNARY_RELU] = f32_relu,
    [WGT_UNARY_LEAKY_RELU] = f32_leaky_relu, [WGT_UNARY_ELU] = f32_elu, [WGT_UNARY_GELU] = f32_gelu,
    [WGT_UNARY_GELU_TANH] = f32_gelu_tanh, [WGT_UNARY_SILU] = f32_silu, [WGT_UNARY_SOFTPLUS] = f32_softplus,
    [WGT_UNARY_FLOOR] = f32_floor, [WGT_UNARY_CEIL] = f32_ceil, [WGT_UNARY_ROUND] = f32_round,
    [WGT_UNARY_ERF] = f32_erf, [WGT_UNARY_ISNAN] = f32_isnan, [WGT_UNARY_ISINF] = f32_isinf,
    [WGT_UNARY_CLAMP] = f32_clamp, [WGT_UNARY_LOGICAL_NOT] = f32_not,
};

/* Integer ops on the 32 bits; p0 and p1 carry clamp's bounds as bits of the input's type. */
#define INT_MAPS(prefix, FN, CONV)                                                                        \
    WGT_CPU_DEFINE_MAP1(prefix##_neg, uint32_t, uint32_t, FN(WGT_UNARY_NEG, x, CONV(p0), CONV(p1)))       \
    WGT_CPU_DEFINE_MAP1(prefix##_abs, uint32_t, uint32_t, FN(WGT_UNARY_ABS, x, CONV(p0), CONV(p1)))       \
    WGT_CPU_DEFINE_MAP1(prefix##_sign, uint32_t, uint32_t, FN(WGT_UNARY_SIGN, x, CONV(p0), CONV(p1)))     \
    WGT_CPU_DEFINE_MAP1(prefix##_square, uint32_t, uint32_t, FN(WGT_UNARY_SQUARE, x, CONV(p0), CONV(p1))) \
    WGT_CPU_DEFINE_MAP1(prefix##_relu, uint32_t, uint32_t, FN(WGT_UNARY_RELU, x, CONV(p0), CONV(p1)))     \
    WGT_CPU_DEFINE_MAP1(prefix##_clamp, uint32_t, uint32_t, FN(WGT_UNARY_CLAMP, x, CONV(p0), CONV(p1)))   \
    WGT_CPU_DEFINE_MAP1(prefix##_same, uint32_t, uint32_t, x)
#define INT_TABLE(prefix)                                                                                    \
    [WGT_UNARY_NEG] = prefix##_neg, [WGT_UNARY_ABS] = prefix##_abs, [WGT_UNARY_SIGN] = prefix##_sign,        \
    [WGT_UNARY_SQUARE] = prefix##_square, [WGT_UNARY_RELU] = prefix##_relu,                                  \
    [WGT_UNARY_CLAMP] = prefix##_clamp, [WGT_UNARY_FLOOR] = prefix##_same, [WGT_UNARY_CEIL] = prefix##_same, \
    [WGT_UNARY_ROUND] = prefix##_same, [WGT_UNARY_LOGICAL_NOT] = int_not
WGT_CPU_DEFINE_MAP1(int_not, uint32_t, uint32_t, integer_predicate(WGT_UNARY_LOGICAL_NOT, x))
static inline uint32_t as_u32(uint32_t u) { return u; }
INT_MAPS(i32, i32_op, as_i32)
INT_MAPS(u32, u32_op, as_u32)
static const wgt_cpu_map1_fn i32_maps[WGT_UNARY_COUNT] = {INT_TABLE(i32)};
static const wgt_cpu_map1_fn u32_maps[WGT_UNARY_COUNT] = {INT_TABLE(u32)};

typedef struct {
    wgt_unary_op op;
    const wgt_operand *out, *a;
    float f0, f1;       /* float parameters */
    uint32_t lo, hi;    /* integer clamp bounds, as bits of a's type */
    wgt_cpu_map1_fn dense;
} unary_job;

/* Any run, element by element through the strides. */
static void general_unary_run(const unary_job *j, const int64_t *base, const int64_t *step, int64_t len) {
    wgt_unary_op op = j->op;
    const wgt_operand *out = j->out, *a = j->a;
    const int predicate = wgt_unary_gives_u32(op);
    for (int64_t i = 0; i < len; i++) {
        int64_t o = base[0] + i * step[0], s = base[1] + i * step[1];
        switch (a->dtype) {
        case WGT_F32:
        case WGT_F16: {
            float x = load_float(a, s);
            if (predicate) store_bits(out, o, float_predicate(op, x));
            else store_float(out, o, float_op(op, x, j->f0, j->f1));
            break;
        }
        case WGT_I32:
            store_bits(out, o, predicate ? integer_predicate(op, load_bits(a, s))
                                         : i32_op(op, load_bits(a, s), as_i32(j->lo), as_i32(j->hi)));
            break;
        case WGT_U32:
            store_bits(out, o,
                       predicate ? integer_predicate(op, load_bits(a, s)) : u32_op(op, load_bits(a, s), j->lo, j->hi));
            break;
        default: break; /* block types never reach a kernel: the core refuses them */
        }
    }
}

static void unary_run(void *arg, const int64_t *base, const int64_t *step, int64_t len, int slot) {
    (void)slot;
    const unary_job *j = arg;
    if (j->dense && step[0] == 1 && step[1] == 1) {
        /* Every type with a dense loop has 4-byte elements. */
        uint32_t *o = (uint32_t *)j->out->host + base[0];
        const uint32_t *x = (const uint32_t *)j->a->host + base[1];
        if (j->a->dtype == WGT_F32) j->dense(o, x, len, &j->f0, &j->f1);
        else j->dense(o, x, len, &j->lo, &j->hi);
        return;
    }
    general_unary_run(j, base, step, len);
}

wgt_status wgt_cpu_unary(wgt_backend *be, wgt_unary_op op, const wgt_operand *out, const wgt_operand *a,
                         const double *params) {
    wgt_cpu_advise_output(out);
    if (wgt_dtype_size(a->dtype) == 8) return wgt_cpu_unary64(op, out, a);
    unary_job job = {op, out, a, (float)params[0], (float)params[1], 0, 0, NULL};
    /* Integer bounds arrive as exact values of a's type (see core/unary.c). */
    if (a->dtype == WGT_I32) {
        job.lo = (uint32_t)(int32_t)params[0];
        job.hi = (uint32_t)(int32_t)params[1];
    } else if (a->dtype == WGT_U32) {
        job.lo = (uint32_t)params[0];
        job.hi = (uint32_t)params[1];
    }
    if ((unsigned)op < WGT_UNARY_COUNT)
        job.dense = a->dtype == WGT_F32   ? f32_maps[op]
                    : a->dtype == WGT_I32 ? i32_maps[op]
                    : a->dtype == WGT_U32 ? u32_maps[op]
                                          : NULL;
    const wgt_operand *ops[2] = {out, a};
    wgt_cpu_walk w;
    wgt_cpu_walk_init(&w, out->ndim, out->shape, 2, ops);
    double cost = (costly(op) ? 10.0 : 1.0) + (a->dtype == WGT_F16 ? 4.0 : 0.0);
    wgt_cpu_walk_run(be, &w, cost, unary_run, &job);
    return WGT_OK;
}

/* ---- casts ---- */

WGT_CPU_DEFINE_MAP1(cast_f32_i32, uint32_t, float, float_to_i32_bits(x))
WGT_CPU_DEFINE_MAP1(cast_f32_u32, uint32_t, float, float_to_u32(x))
WGT_CPU_DEFINE_MAP1(cast_i32_f32, float, int32_t, (float)x) /* nearest even */
WGT_CPU_DEFINE_MAP1(cast_u32_f32, float, uint32_t, (float)x)
WGT_CPU_DEFINE_MAP1(cast_bits, uint32_t, uint32_t, x) /* integer to integer keeps the bits */

/* The dense loop from in to out, or NULL (f16 on either side). */
static wgt_cpu_map1_fn cast_loop(wgt_dtype in, wgt_dtype out) {
    if (in == WGT_F32)
        return out == WGT_I32 ? cast_f32_i32 : out == WGT_U32 ? cast_f32_u32 : out == WGT_F32 ? cast_bits : NULL;
    if (out == WGT_F32) return in == WGT_I32 ? cast_i32_f32 : in == WGT_U32 ? cast_u32_f32 : NULL;
    return in != WGT_F16 && out != WGT_F16 ? cast_bits : NULL;
}

typedef struct {
    const wgt_operand *out, *a;
    wgt_cpu_map1_fn dense;
} cast_job;

static void general_cast_run(const cast_job *j, const int64_t *base, const int64_t *step, int64_t len) {
    const wgt_operand *out = j->out, *a = j->a;
    const int out_float = out->dtype == WGT_F32 || out->dtype == WGT_F16;
    for (int64_t i = 0; i < len; i++) {
        int64_t o = base[0] + i * step[0], s = base[1] + i * step[1];
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
        default: break; /* block types never reach a kernel: the core refuses them */
        }
    }
}

static void cast_run(void *arg, const int64_t *base, const int64_t *step, int64_t len, int slot) {
    (void)slot;
    const cast_job *j = arg;
    static const uint32_t unused = 0;
    if (j->dense && step[0] == 1 && step[1] == 1)
        j->dense((uint32_t *)j->out->host + base[0], (const uint32_t *)j->a->host + base[1], len, &unused, &unused);
    else general_cast_run(j, base, step, len);
}

wgt_status wgt_cpu_cast(wgt_backend *be, const wgt_operand *out, const wgt_operand *a) {
    if (wgt_dtype_is_narrow(out->dtype) || wgt_dtype_is_narrow(a->dtype) || wgt_dtype_is_64bit(out->dtype) ||
        wgt_dtype_is_64bit(a->dtype))
        return wgt_cpu_cast_narrow(be, out, a);
    wgt_cpu_advise_output(out);
    cast_job job = {out, a, cast_loop(a->dtype, out->dtype)};
    const wgt_operand *ops[2] = {out, a};
    wgt_cpu_walk w;
    wgt_cpu_walk_init(&w, out->ndim, out->shape, 2, ops);
    wgt_cpu_walk_run(be, &w, a->dtype == WGT_F16 || out->dtype == WGT_F16 ? 5.0 : 1.0, cast_run, &job);
    return WGT_OK;
}
