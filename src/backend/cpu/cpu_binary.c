/*
 * Binary, comparison and logical kernels of the CPU backend. This backend is the oracle the
 * WebGPU kernels are tested against, so each op spells out the semantics the header promises:
 *   - integer arithmetic is done in unsigned types so overflow wraps as on the GPU instead
 *     of being undefined; division truncates and a zero divisor gives 0;
 *   - mod is floored (the result takes the divisor's sign, as numpy.mod): integer mod by
 *     zero gives 0, float mod by zero gives NaN;
 *   - integer pow wraps; a negative exponent gives 0 except for bases 1 and -1;
 *   - float ops follow C (powf, atan2f); maximum and minimum propagate NaN;
 *   - comparisons and logical ops read every type exactly as a double and give u32 0/1;
 *   - floor_divide is NumPy's: floor for integers (a zero divisor gives 0), npy_divmod's
 *     quotient for floats; shifts by a count outside [0, 32) give 0 (left) or the sign
 *     fill (right); nextafter on f16 steps in f16 (the one op not computed in f32).
 * f16 is computed in f32 and rounded once.
 *
 * Runs whose output is dense and whose inputs are dense or one repeated value (a scalar, or
 * a row broadcast along a matrix seen one row at a time) go through loops per op and type
 * (cpu_loops.h) for f32, i32 and u32 and for comparisons of two inputs of one type; every
 * other run takes the general loop, which reads each element through its strides. Both
 * evaluate the same expression, so a result never depends on the layout.
 */
#include <math.h>
#include <string.h>

#include "cpu_kernels.h"
#include "cpu_loops.h"
#include "cpu_walk.h"

/* numpy's npy_divmod quotient: (a - fmod(a, b)) / b is exact up to one rounding, then
 * moved down a step where the remainder was moved to the divisor's side, and rounded to a
 * whole number (floor, corrected when the division rounded just below one). */
static float floor_divide_f32(float a, float b) {
    if (b == 0) return a / b;
    float mod = fmodf(a, b);
    float div = (a - mod) / b;
    if (mod != 0 && (b < 0) != (mod < 0)) div -= 1.0f;
    if (div == 0) return copysignf(0.0f, a / b);
    float fl = floorf(div);
    return div - fl > 0.5f ? fl + 1.0f : fl;
}

/* numpy's npy_logaddexp: the larger plus log1p(e^-|x - y|), so nothing overflows; equal
 * arguments (infinities included) give x + ln 2 rather than inf - inf. */
static float logaddexp_f32(float x, float y) {
    if (x == y) return x + 0.693147180559945309f;
    float d = x - y;
    if (d > 0) return x + log1pf(expf(-d));
    if (d <= 0) return y + log1pf(expf(d));
    return d; /* NaN */
}

/* nextafter on f16 bits: the next f16 from x toward y (f32 steps would round back to x). */
static uint16_t nextafter_f16(uint16_t x, uint16_t y) {
    float fx = wgt_cpu_f16_to_f32(x), fy = wgt_cpu_f16_to_f32(y);
    if (isnan(fx) || isnan(fy)) return (uint16_t)0x7e00u;
    if (fx == fy) return y;
    if (fx == 0) return (uint16_t)((y & 0x8000u) | 1u);
    return (uint16_t)((fx < fy) == !(x & 0x8000u) ? x + 1 : x - 1);
}

/* Inlined everywhere so the per-op loops below compile to the one operation, not a switch. */
static inline __attribute__((always_inline)) float f32_op(wgt_binary_op op, float x, float y) {
    switch (op) {
    case WGT_BINARY_ADD: return x + y;
    case WGT_BINARY_SUB: return x - y;
    case WGT_BINARY_MUL: return x * y;
    case WGT_BINARY_DIV: return x / y;
    case WGT_BINARY_POW: return powf(x, y);
    case WGT_BINARY_ATAN2: return atan2f(x, y);
    case WGT_BINARY_LOGADDEXP: return logaddexp_f32(x, y);
    case WGT_BINARY_HYPOT: return hypotf(x, y);
    case WGT_BINARY_COPYSIGN: return copysignf(x, y);
    case WGT_BINARY_NEXTAFTER: return nextafterf(x, y);
    case WGT_BINARY_FLOOR_DIVIDE: return floor_divide_f32(x, y);
    /* NumPy's form: the first NaN wins, and an ordered pair picks by comparison. */
    case WGT_BINARY_MAXIMUM: return (x >= y || isnan(x)) ? x : y;
    case WGT_BINARY_MINIMUM: return (x <= y || isnan(x)) ? x : y;
    case WGT_BINARY_MOD: {
        /* numpy's npy_divmod: fmod is exact; moving it to the divisor's side rounds once. */
        if (y == 0) return NAN;
        float m = fmodf(x, y);
        if (m == 0) return copysignf(0.0f, y);
        return (m < 0) != (y < 0) ? m + y : m;
    }
    default: return 0;
    }
}

/* x ** y by repeated squaring in 32 bits; the multiplications wrap. */
static uint32_t u32_pow(uint32_t x, uint32_t y) {
    uint32_t r = 1;
    for (; y; y >>= 1, x *= x)
        if (y & 1) r *= x;
    return r;
}

static inline __attribute__((always_inline)) uint32_t u32_op(wgt_binary_op op, uint32_t x, uint32_t y) {
    switch (op) {
    case WGT_BINARY_ADD: return x + y;
    case WGT_BINARY_SUB: return x - y;
    case WGT_BINARY_MUL: return x * y;
    case WGT_BINARY_DIV: return y == 0 ? 0 : x / y;
    case WGT_BINARY_POW: return u32_pow(x, y);
    case WGT_BINARY_MAXIMUM: return x > y ? x : y;
    case WGT_BINARY_MINIMUM: return x < y ? x : y;
    case WGT_BINARY_MOD: return y == 0 ? 0 : x % y;
    case WGT_BINARY_FLOOR_DIVIDE: return y == 0 ? 0 : x / y;
    case WGT_BINARY_BITWISE_AND: return x & y;
    case WGT_BINARY_BITWISE_OR: return x | y;
    case WGT_BINARY_BITWISE_XOR: return x ^ y;
    case WGT_BINARY_LEFT_SHIFT: return y < 32 ? x << y : 0;
    case WGT_BINARY_RIGHT_SHIFT: return y < 32 ? x >> y : 0;
    default: return 0;
    }
}

static inline __attribute__((always_inline)) int32_t i32_op(wgt_binary_op op, int32_t x, int32_t y) {
    switch (op) {
    case WGT_BINARY_DIV:
        if (y == 0) return 0;
        if (x == INT32_MIN && y == -1) return INT32_MIN; /* wraps, as two's complement does */
        return x / y;
    case WGT_BINARY_MOD: {
        if (y == 0 || y == -1) return 0; /* INT32_MIN % -1 would trap in C */
        int32_t m = x % y;
        return m != 0 && (m < 0) != (y < 0) ? m + y : m;
    }
    case WGT_BINARY_FLOOR_DIVIDE: {
        if (y == 0) return 0;
        if (x == INT32_MIN && y == -1) return INT32_MIN;
        int32_t q = x / y;
        return q * y != x && (x < 0) != (y < 0) ? q - 1 : q;
    }
    /* Counts outside [0, 32) (negative ones too) shift everything out. */
    case WGT_BINARY_RIGHT_SHIFT: return (uint32_t)y < 32 ? x >> y : x < 0 ? -1 : 0;
    case WGT_BINARY_LEFT_SHIFT: return (uint32_t)y < 32 ? (int32_t)((uint32_t)x << y) : 0;
    case WGT_BINARY_POW:
        if (y < 0) return x == 1 ? 1 : x == -1 ? ((y & 1) ? -1 : 1) : 0;
        break;
    case WGT_BINARY_MAXIMUM: return x > y ? x : y;
    case WGT_BINARY_MINIMUM: return x < y ? x : y;
    default: break;
    }
    uint32_t r = u32_op(op, (uint32_t)x, (uint32_t)y);
    int32_t out;
    memcpy(&out, &r, sizeof out);
    return out;
}

/* Every element type is exact as a double, so comparisons and truth tests need one path. */
static inline double load_f64(const wgt_operand *t, int64_t i) {
    switch (t->dtype) {
    case WGT_F32: return ((const float *)t->host)[i];
    case WGT_F16: return wgt_cpu_f16_to_f32(((const uint16_t *)t->host)[i]);
    case WGT_I32: return ((const int32_t *)t->host)[i];
    case WGT_U32: return ((const uint32_t *)t->host)[i];
    default: break; /* block types never reach a kernel: the core refuses them */
    }
    return 0;
}

/* NaN compares false except for ne, as C's operators already do. */
static uint32_t predicate(wgt_binary_op op, double x, double y) {
    switch (op) {
    case WGT_BINARY_EQ: return x == y;
    case WGT_BINARY_NE: return x != y;
    case WGT_BINARY_LT: return x < y;
    case WGT_BINARY_LE: return x <= y;
    case WGT_BINARY_GT: return x > y;
    case WGT_BINARY_GE: return x >= y;
    /* Nonzero is true; NaN != 0 holds, so NaN is true as in NumPy. */
    case WGT_BINARY_LOGICAL_AND: return x != 0 && y != 0;
    case WGT_BINARY_LOGICAL_OR: return x != 0 || y != 0;
    case WGT_BINARY_LOGICAL_XOR: return (x != 0) != (y != 0);
    default: return 0;
    }
}

/* ---- loops per op for dense runs ---- */

#define ARITHMETIC_MAPS(prefix, T, FN)                                        \
    WGT_CPU_DEFINE_MAP2(prefix##_add, T, T, FN(WGT_BINARY_ADD, x, y))         \
    WGT_CPU_DEFINE_MAP2(prefix##_sub, T, T, FN(WGT_BINARY_SUB, x, y))         \
    WGT_CPU_DEFINE_MAP2(prefix##_mul, T, T, FN(WGT_BINARY_MUL, x, y))         \
    WGT_CPU_DEFINE_MAP2(prefix##_div, T, T, FN(WGT_BINARY_DIV, x, y))         \
    WGT_CPU_DEFINE_MAP2(prefix##_pow, T, T, FN(WGT_BINARY_POW, x, y))         \
    WGT_CPU_DEFINE_MAP2(prefix##_maximum, T, T, FN(WGT_BINARY_MAXIMUM, x, y)) \
    WGT_CPU_DEFINE_MAP2(prefix##_minimum, T, T, FN(WGT_BINARY_MINIMUM, x, y)) \
    WGT_CPU_DEFINE_MAP2(prefix##_mod, T, T, FN(WGT_BINARY_MOD, x, y))
#define ARITHMETIC_TABLE(prefix)                                                                               \
    [WGT_BINARY_ADD] = prefix##_add, [WGT_BINARY_SUB] = prefix##_sub, [WGT_BINARY_MUL] = prefix##_mul,         \
    [WGT_BINARY_DIV] = prefix##_div, [WGT_BINARY_POW] = prefix##_pow, [WGT_BINARY_MAXIMUM] = prefix##_maximum, \
    [WGT_BINARY_MINIMUM] = prefix##_minimum, [WGT_BINARY_MOD] = prefix##_mod

/* Comparisons and logic in the inputs' own type: every value converts exactly to double, so
 * this is the double comparison predicate() makes. */
#define PREDICATE_MAPS(prefix, T)                                    \
    WGT_CPU_DEFINE_MAP2(prefix##_eq, uint32_t, T, x == y)            \
    WGT_CPU_DEFINE_MAP2(prefix##_ne, uint32_t, T, x != y)            \
    WGT_CPU_DEFINE_MAP2(prefix##_lt, uint32_t, T, x < y)             \
    WGT_CPU_DEFINE_MAP2(prefix##_le, uint32_t, T, x <= y)            \
    WGT_CPU_DEFINE_MAP2(prefix##_gt, uint32_t, T, x > y)             \
    WGT_CPU_DEFINE_MAP2(prefix##_ge, uint32_t, T, x >= y)            \
    WGT_CPU_DEFINE_MAP2(prefix##_and, uint32_t, T, x != 0 && y != 0) \
    WGT_CPU_DEFINE_MAP2(prefix##_or, uint32_t, T, x != 0 || y != 0)  \
    WGT_CPU_DEFINE_MAP2(prefix##_xor, uint32_t, T, (x != 0) != (y != 0))
#define PREDICATE_TABLE(prefix)                                                                  \
    [WGT_BINARY_EQ] = prefix##_eq, [WGT_BINARY_NE] = prefix##_ne, [WGT_BINARY_LT] = prefix##_lt, \
    [WGT_BINARY_LE] = prefix##_le, [WGT_BINARY_GT] = prefix##_gt, [WGT_BINARY_GE] = prefix##_ge, \
    [WGT_BINARY_LOGICAL_AND] = prefix##_and, [WGT_BINARY_LOGICAL_OR] = prefix##_or,               \
    [WGT_BINARY_LOGICAL_XOR] = prefix##_xor

ARITHMETIC_MAPS(f32_map, float, f32_op)
WGT_CPU_DEFINE_MAP2(f32_map_atan2, float, float, f32_op(WGT_BINARY_ATAN2, x, y))
ARITHMETIC_MAPS(i32_map, int32_t, i32_op)
ARITHMETIC_MAPS(u32_map, uint32_t, u32_op)
PREDICATE_MAPS(f32p, float)
PREDICATE_MAPS(i32p, int32_t)
PREDICATE_MAPS(u32p, uint32_t)

static const wgt_cpu_map2_fn f32_maps[WGT_BINARY_COUNT] = {
    ARITHMETIC_TABLE(f32_map), [WGT_BINARY_ATAN2] = f32_map_atan2, PREDICATE_TABLE(f32p)};
static const wgt_cpu_map2_fn i32_maps[WGT_BINARY_COUNT] = {ARITHMETIC_TABLE(i32_map), PREDICATE_TABLE(i32p)};
static const wgt_cpu_map2_fn u32_maps[WGT_BINARY_COUNT] = {ARITHMETIC_TABLE(u32_map), PREDICATE_TABLE(u32p)};

/* The dense loop for op on these operands, or NULL (f16, logic on two types). */
static wgt_cpu_map2_fn dense_loop(wgt_binary_op op, const wgt_operand *a, const wgt_operand *b) {
    if (a->dtype != b->dtype || (unsigned)op >= WGT_BINARY_COUNT) return NULL;
    switch (a->dtype) {
    case WGT_F32: return f32_maps[op];
    case WGT_I32: return i32_maps[op];
    case WGT_U32: return u32_maps[op];
    default: return NULL;
    }
}

/* Elementwise cost in walk units (cpu_walk.h): libm calls, integer division and f16
 * conversions take several times a plain add. */
static double binary_cost(wgt_binary_op op, wgt_dtype in) {
    int slow_op = op == WGT_BINARY_POW || op == WGT_BINARY_ATAN2 || op == WGT_BINARY_MOD || op == WGT_BINARY_LOGADDEXP ||
                  op == WGT_BINARY_HYPOT || op == WGT_BINARY_FLOOR_DIVIDE ||
                  (op == WGT_BINARY_DIV && in != WGT_F32 && in != WGT_F16);
    return (slow_op ? 8.0 : 1.0) + (in == WGT_F16 ? 4.0 : 0.0);
}

typedef struct {
    wgt_binary_op op;
    const wgt_operand *out, *a, *b;
    wgt_cpu_map2_fn dense;
} binary_job;

/* Any run, element by element through the strides. */
static void general_binary_run(const binary_job *j, const int64_t *base, const int64_t *step, int64_t len) {
    wgt_binary_op op = j->op;
    const wgt_operand *out = j->out, *a = j->a, *b = j->b;
    int64_t o = base[0], x = base[1], y = base[2];
    const int64_t *is = step;
    if (wgt_binary_gives_u32(op)) { /* comparisons and logic: u32 out, any input type */
        uint32_t *po = out->host;
        for (int64_t i = 0; i < len; i++)
            po[o + i * is[0]] = predicate(op, load_f64(a, x + i * is[1]), load_f64(b, y + i * is[2]));
        return;
    }
    switch (out->dtype) {
    case WGT_F32: {
        float *po = out->host;
        const float *pa = a->host, *pb = b->host;
        for (int64_t i = 0; i < len; i++) po[o + i * is[0]] = f32_op(op, pa[x + i * is[1]], pb[y + i * is[2]]);
        break;
    }
    case WGT_F16: {
        uint16_t *po = out->host;
        const uint16_t *pa = a->host, *pb = b->host;
        if (op == WGT_BINARY_NEXTAFTER) {
            for (int64_t i = 0; i < len; i++) po[o + i * is[0]] = nextafter_f16(pa[x + i * is[1]], pb[y + i * is[2]]);
            break;
        }
        for (int64_t i = 0; i < len; i++)
            po[o + i * is[0]] =
                wgt_f32_to_f16(f32_op(op, wgt_cpu_f16_to_f32(pa[x + i * is[1]]),
                                      wgt_cpu_f16_to_f32(pb[y + i * is[2]])));
        break;
    }
    case WGT_I32: {
        int32_t *po = out->host;
        const int32_t *pa = a->host, *pb = b->host;
        for (int64_t i = 0; i < len; i++) po[o + i * is[0]] = i32_op(op, pa[x + i * is[1]], pb[y + i * is[2]]);
        break;
    }
    case WGT_U32: {
        uint32_t *po = out->host;
        const uint32_t *pa = a->host, *pb = b->host;
        for (int64_t i = 0; i < len; i++) po[o + i * is[0]] = u32_op(op, pa[x + i * is[1]], pb[y + i * is[2]]);
        break;
    }
    default: break; /* block types never reach a kernel: the core refuses them */
    }
}

static void binary_run(void *arg, const int64_t *base, const int64_t *step, int64_t len, int slot) {
    (void)slot;
    const binary_job *j = arg;
    /* Dense output; each input dense or one value, not both one value. */
    if (j->dense && step[0] == 1 && (uint64_t)step[1] <= 1 && (uint64_t)step[2] <= 1 && (step[1] | step[2])) {
        wgt_cpu_pair_mode mode = step[1] && step[2] ? WGT_CPU_DENSE_DENSE
                                 : step[1]          ? WGT_CPU_DENSE_SCALAR
                                                    : WGT_CPU_SCALAR_DENSE;
        /* Every type with a dense loop has 4-byte elements. */
        j->dense(mode, (uint32_t *)j->out->host + base[0], (const uint32_t *)j->a->host + base[1],
                 (const uint32_t *)j->b->host + base[2], len);
        return;
    }
    general_binary_run(j, base, step, len);
}

wgt_status wgt_cpu_binary(wgt_backend *be, wgt_binary_op op, const wgt_operand *out, const wgt_operand *a,
                          const wgt_operand *b) {
    wgt_cpu_advise_output(out);
    if (wgt_dtype_size(a->dtype) == 8) return wgt_cpu_binary64(op, out, a, b);
    binary_job job = {op, out, a, b, dense_loop(op, a, b)};
    const wgt_operand *ops[3] = {out, a, b};
    wgt_cpu_walk w;
    wgt_cpu_walk_init(&w, out->ndim, out->shape, 3, ops);
    wgt_cpu_walk_run(be, &w, binary_cost(op, a->dtype), binary_run, &job);
    return WGT_OK;
}
