/*
 * Seeded random tensors, generated on the device by the backends' counter-based generator
 * (Philox4x32-10, src/backend/philox.h): element i depends only on the seed and i, so the CPU
 * and WebGPU give the same values bit for bit (normal draws too: Box-Muller's log, cos and
 * sqrt are written out in f32 arithmetic) and nothing is uploaded from the host. The generator writes f32, i32 or u32; f16 draws are f32 draws cast (rounded once).
 */
#include <float.h>
#include <math.h>

#include "node.h"
#include "core/dtype_table.h"

/* Whether draws from [lo, hi] (lo == hi: the value lo) can fall outside dtype's values,
 * which storing would clamp (integers) or make infinite (floats) without a word: then an
 * error naming the bounds. Integers are the whole numbers k with lo <= k < hi, so for i32
 * [-2^31, 2^31) is the whole type. */
static int draws_outside(wgt_dtype dtype, double lo, double hi, const char *fn, const char *what) {
    int integer = wgt_dtype_is_integer(dtype);
    double tmin, tend; /* integers: [tmin, tend), floats: [tmin, tend] */
    switch (dtype) {
    case WGT_I32: tmin = -2147483648.0, tend = 2147483648.0; break;
    case WGT_U32: tmin = 0, tend = 4294967296.0; break;
    case WGT_F16: tmin = -65504, tend = 65504; break;
    case WGT_F32: tmin = -FLT_MAX, tend = FLT_MAX; break;
    default: return 0; /* other types are refused with the tensor's checks */
    }
    if (lo >= tmin && hi <= tend && (!integer || lo < tend)) return 0;
    char l[32], h[32], a[32], b[32];
    wgt_format_value(l, sizeof l, lo);
    wgt_format_value(h, sizeof h, hi);
    wgt_format_value(a, sizeof a, tmin);
    wgt_format_value(b, sizeof b, integer ? tend - 1 : tend);
    if (lo == hi)
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: %s = %s lies outside %s (%s to %s)", fn, what, l,
                  wgt_dtype_name(dtype), a, b);
    else
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: %s = [%s, %s) reaches outside %s (%s to %s)", fn, what, l, h,
                  wgt_dtype_name(dtype), a, b);
    return 1;
}

/* The tensor of gen_dtype (f32, i32 or u32) the backend fills, cast to dtype when that differs. */
static wgt_tensor *draw(wgt_context *ctx, const char *fn, wgt_dtype dtype, wgt_dtype gen_dtype, int ndim,
                        const int64_t *shape, const wgt_random_params *p, int floor_it, wgt_tensor *key) {
    int64_t numel;
    if (wgt_check_context(fn, ctx) != WGT_OK || wgt_check_dtype(fn, dtype) != WGT_OK ||
        wgt_check_shape(fn, ndim, shape, &numel) != WGT_OK)
        return NULL;
    if (wgt_dtype_is_block(dtype)) {
        wgt_error(WGT_ERR_DTYPE, "%s: %s is a quantized block type; draw f32 and quantize", fn, wgt_dtype_name(dtype));
        return NULL;
    }
    wgt_tensor *t = wgt_tensor_new(ctx, fn, gen_dtype, ndim, shape, WGT_USAGE_DEFAULT);
    if (!t || numel == 0) {
        if (t && dtype != gen_dtype) {
            wgt_release(t);
            return wgt_tensor_new(ctx, fn, dtype, ndim, shape, WGT_USAGE_DEFAULT);
        }
        return t;
    }
    wgt_operand o, k;
    if (key) wgt_operand_view(key, 1, key->shape, key->strides, &k);
    if (wgt_check_kernel_size(fn, t) != WGT_OK || wgt_output_operand(t, &o) != WGT_OK ||
        wgt_record_random(ctx, fn, &o, key ? &k : NULL, p) != WGT_OK) {
        wgt_release(t);
        return NULL;
    }
    if (floor_it) { /* integer types from normal draws: floor, then the cast truncates exactly */
        wgt_tensor *f = wgt_floor(t);
        wgt_release(t);
        t = f;
    }
    if (t && dtype != gen_dtype) {
        wgt_tensor *c = wgt_cast(t, dtype);
        wgt_release(t);
        t = c;
    }
    return t;
}

/* The largest value of the float type dtype below x, as an f32 (every f16 is one). */
static float below_in(wgt_dtype dtype, double x) {
    if (dtype != WGT_F16) {
        float h = (float)x;
        return (double)h >= x ? nextafterf(h, -INFINITY) : h;
    }
    uint16_t b = wgt_f32_to_f16((float)x);
    if ((double)wgt_f16_to_f32(b) < x) return wgt_f16_to_f32(b);
    /* One step down in sign-magnitude bits: from a zero to the least negative subnormal. */
    b = (b & 0x7fffu) == 0 ? 0x8001u : (b & 0x8000u) ? (uint16_t)(b + 1) : (uint16_t)(b - 1);
    return wgt_f16_to_f32(b);
}

wgt_tensor *wgt_rand_uniform(wgt_context *ctx, wgt_dtype dtype, int ndim, const int64_t *shape, double low,
                             double high, uint64_t seed) {
    static const char fn[] = "wgt_rand_uniform";
    if (!isfinite(low) || !isfinite(high) || low > high) {
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: bounds [%g, %g) must be finite with low <= high", fn, low, high);
        return NULL;
    }
    if (draws_outside(dtype, low, high, fn, "[low, high)")) return NULL;
    wgt_random_params p = {WGT_RANDOM_UNIFORM, seed, (float)low, (float)(high - low), (float)low, 0, 0};
    if (wgt_dtype_is_integer(dtype)) {
        /* The whole numbers k with low <= k < high; none (as when low == high): floor(low). */
        double first = ceil(low), count = ceil(high) - first;
        if (count < 1) first = floor(low), count = 1;
        p.kind = WGT_RANDOM_INTEGER;
        p.count = (uint64_t)count;
        /* Only i32 and u32 reach here in range (draws_outside); the narrow integers, whose
         * bounds it does not check, are refused by draw, so their first value is not formed
         * (a negative double converted to an unsigned type is undefined). */
        p.low = dtype == WGT_I32 ? (uint32_t)(int32_t)first : dtype == WGT_U32 ? (uint32_t)first : 0;
        return draw(ctx, fn, dtype, dtype, ndim, shape, &p, 0, NULL);
    }
    if (!isfinite(p.b)) {
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: the width of [%g, %g) overflows f32", fn, low, high);
        return NULL;
    }
    if (low < high) p.c = below_in(dtype, high); /* so rounding never reaches high */
    return draw(ctx, fn, dtype, WGT_F32, ndim, shape, &p, 0, NULL);
}

wgt_tensor *wgt_rand_normal(wgt_context *ctx, wgt_dtype dtype, int ndim, const int64_t *shape, double mean,
                            double stddev, uint64_t seed) {
    static const char fn[] = "wgt_rand_normal";
    if (!isfinite(mean) || !isfinite(stddev) || stddev < 0) {
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: mean %g and stddev %g must be finite, stddev >= 0", fn, mean, stddev);
        return NULL;
    }
    if (draws_outside(dtype, mean, mean, fn, "mean")) return NULL;
    wgt_random_params p = {WGT_RANDOM_NORMAL, seed, (float)mean, (float)stddev, 0, 0, 0};
    return draw(ctx, fn, dtype, WGT_F32, ndim, shape, &p, wgt_dtype_is_integer(dtype), NULL);
}

wgt_tensor *wgt_rand_bits(wgt_context *ctx, int ndim, const int64_t *shape, uint64_t seed) {
    wgt_random_params p = {WGT_RANDOM_BITS, seed, 0, 0, 0, 0, 0};
    return draw(ctx, "wgt_rand_bits", WGT_U32, WGT_U32, ndim, shape, &p, 0, NULL);
}

wgt_tensor *wgt_rand_unit_keyed(const char *fn, wgt_tensor *key, int ndim, const int64_t *shape) {
    if (wgt_check_tensor(fn, "seed", key) != WGT_OK) return NULL;
    if (key->dtype != WGT_U32 || key->ndim != 1 || key->shape[0] != 2) {
        char s[128];
        wgt_format_shape(s, sizeof s, key->ndim, key->shape);
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: seed is %s %s, wanted u32 [2] (the seed's low and high words)", fn,
                  wgt_dtype_name(key->dtype), s);
        return NULL;
    }
    wgt_random_params p = {WGT_RANDOM_UNIFORM, 0, 0, 1, nextafterf(1, 0), 0, 0};
    return draw(key->storage->ctx, fn, WGT_F32, WGT_F32, ndim, shape, &p, 0, key);
}
