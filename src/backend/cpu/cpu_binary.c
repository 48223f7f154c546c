/*
 * Binary, comparison, logical and where kernels of the CPU backend over strided operands,
 * plus the strided copy. This backend is the oracle the WebGPU kernels are tested against,
 * so each op spells out the semantics the header promises:
 *   - integer arithmetic is done in unsigned types so overflow wraps as on the GPU instead
 *     of being undefined; division truncates and a zero divisor gives 0;
 *   - mod is floored (the result takes the divisor's sign, as numpy.mod): integer mod by
 *     zero gives 0, float mod by zero gives NaN;
 *   - integer pow wraps; a negative exponent gives 0 except for bases 1 and -1;
 *   - float ops follow C (powf, atan2f); maximum and minimum propagate NaN;
 *   - comparisons and logical ops read every type exactly as a double and give u32 0/1.
 * f16 is computed in f32 and rounded once.
 */
#include <math.h>
#include <string.h>

#include "backend/strided_iter.h"
#include "cpu_kernels.h"

static float f32_op(wgt_binary_op op, float x, float y) {
    switch (op) {
    case WGT_BINARY_ADD: return x + y;
    case WGT_BINARY_SUB: return x - y;
    case WGT_BINARY_MUL: return x * y;
    case WGT_BINARY_DIV: return x / y;
    case WGT_BINARY_POW: return powf(x, y);
    case WGT_BINARY_ATAN2: return atan2f(x, y);
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

static uint32_t u32_op(wgt_binary_op op, uint32_t x, uint32_t y) {
    switch (op) {
    case WGT_BINARY_ADD: return x + y;
    case WGT_BINARY_SUB: return x - y;
    case WGT_BINARY_MUL: return x * y;
    case WGT_BINARY_DIV: return y == 0 ? 0 : x / y;
    case WGT_BINARY_POW: return u32_pow(x, y);
    case WGT_BINARY_MAXIMUM: return x > y ? x : y;
    case WGT_BINARY_MINIMUM: return x < y ? x : y;
    case WGT_BINARY_MOD: return y == 0 ? 0 : x % y;
    default: return 0;
    }
}

static int32_t i32_op(wgt_binary_op op, int32_t x, int32_t y) {
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
    case WGT_F16: return wgt_f16_to_f32(((const uint16_t *)t->host)[i]);
    case WGT_I32: return ((const int32_t *)t->host)[i];
    case WGT_U32: return ((const uint32_t *)t->host)[i];
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
    default: return 0;
    }
}

wgt_status wgt_cpu_binary(wgt_backend *be, wgt_binary_op op, const wgt_operand *out, const wgt_operand *a,
                          const wgt_operand *b) {
    (void)be;
    const int64_t *strides[3] = {out->strides, a->strides, b->strides};
    int64_t offsets[3] = {out->offset, a->offset, b->offset};
    int64_t inner, is[3];
    wgt_strided_iter it;
    wgt_strided_iter_init(&it, out->ndim, out->shape, 3, strides, offsets, &inner, is);
    int predicate_op = op >= WGT_BINARY_EQ; /* comparisons and logic: u32 out, any input type */
    do {
        int64_t o = it.base[0], x = it.base[1], y = it.base[2];
        if (predicate_op) {
            uint32_t *po = out->host;
            for (int64_t i = 0; i < inner; i++)
                po[o + i * is[0]] = predicate(op, load_f64(a, x + i * is[1]), load_f64(b, y + i * is[2]));
            continue;
        }
        switch (out->dtype) {
        case WGT_F32: {
            float *po = out->host;
            const float *pa = a->host, *pb = b->host;
            for (int64_t i = 0; i < inner; i++) po[o + i * is[0]] = f32_op(op, pa[x + i * is[1]], pb[y + i * is[2]]);
            break;
        }
        case WGT_F16: {
            uint16_t *po = out->host;
            const uint16_t *pa = a->host, *pb = b->host;
            for (int64_t i = 0; i < inner; i++)
                po[o + i * is[0]] = wgt_f32_to_f16(
                    f32_op(op, wgt_f16_to_f32(pa[x + i * is[1]]), wgt_f16_to_f32(pb[y + i * is[2]])));
            break;
        }
        case WGT_I32: {
            int32_t *po = out->host;
            const int32_t *pa = a->host, *pb = b->host;
            for (int64_t i = 0; i < inner; i++) po[o + i * is[0]] = i32_op(op, pa[x + i * is[1]], pb[y + i * is[2]]);
            break;
        }
        case WGT_U32: {
            uint32_t *po = out->host;
            const uint32_t *pa = a->host, *pb = b->host;
            for (int64_t i = 0; i < inner; i++) po[o + i * is[0]] = u32_op(op, pa[x + i * is[1]], pb[y + i * is[2]]);
            break;
        }
        }
    } while (wgt_strided_iter_next(&it));
    return WGT_OK;
}

/* Elements are moved as bytes, so NaN payloads and signed zeros pass through unchanged. */
wgt_status wgt_cpu_where(wgt_backend *be, const wgt_operand *out, const wgt_operand *cond, const wgt_operand *a,
                         const wgt_operand *b) {
    (void)be;
    size_t es = wgt_dtype_size(out->dtype);
    const int64_t *strides[4] = {out->strides, cond->strides, a->strides, b->strides};
    int64_t offsets[4] = {out->offset, cond->offset, a->offset, b->offset};
    int64_t inner, is[4];
    wgt_strided_iter it;
    wgt_strided_iter_init(&it, out->ndim, out->shape, 4, strides, offsets, &inner, is);
    char *po = out->host;
    const char *pa = a->host, *pb = b->host;
    do {
        for (int64_t i = 0; i < inner; i++) {
            int take_a = load_f64(cond, it.base[1] + i * is[1]) != 0;
            const char *src = take_a ? pa + (size_t)(it.base[2] + i * is[2]) * es : pb + (size_t)(it.base[3] + i * is[3]) * es;
            memcpy(po + (size_t)(it.base[0] + i * is[0]) * es, src, es);
        }
    } while (wgt_strided_iter_next(&it));
    return WGT_OK;
}

wgt_status wgt_cpu_copy(wgt_backend *be, const wgt_operand *dst, const wgt_operand *src) {
    (void)be;
    size_t es = wgt_dtype_size(src->dtype);
    const int64_t *strides[2] = {dst->strides, src->strides};
    int64_t offsets[2] = {dst->offset, src->offset};
    int64_t inner, is[2];
    wgt_strided_iter it;
    wgt_strided_iter_init(&it, dst->ndim, dst->shape, 2, strides, offsets, &inner, is);
    char *d = dst->host;
    const char *s = src->host;
    do {
        for (int64_t i = 0; i < inner; i++)
            memcpy(d + (size_t)(it.base[0] + i * is[0]) * es, s + (size_t)(it.base[1] + i * is[1]) * es, es);
    } while (wgt_strided_iter_next(&it));
    return WGT_OK;
}
