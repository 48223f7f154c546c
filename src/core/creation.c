/*
 * Tensor creation: from host data, constant fills, ranges and seeded random values.
 * Values are produced on the host, where they are identical for every backend, and move to
 * the device when a kernel first needs them.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_names.h"
#include "tensor.h"
#include "core/dtype_table.h"

wgt_tensor *wgt_tensor_create(wgt_context *ctx, wgt_dtype dtype, int ndim, const int64_t *shape,
                              unsigned usage) {
    return wgt_tensor_new(ctx, "wgt_tensor_create", dtype, ndim, shape, usage);
}

wgt_tensor *wgt_zeros(wgt_context *ctx, wgt_dtype dtype, int ndim, const int64_t *shape) {
    return wgt_tensor_new(ctx, "wgt_zeros", dtype, ndim, shape, WGT_USAGE_DEFAULT);
}

wgt_tensor *wgt_tensor_from_data(wgt_context *ctx, wgt_dtype dtype, int ndim, const int64_t *shape,
                                 const void *data, size_t nbytes, unsigned usage) {
    static const char fn[] = "wgt_tensor_from_data";
    /* The byte count and data are checked before the tensor takes memory (on the CPU at once). */
    int64_t numel;
    if (wgt_check_context(fn, ctx) != WGT_OK || wgt_check_dtype(fn, dtype) != WGT_OK ||
        wgt_check_shape(fn, ndim, shape, &numel) != WGT_OK)
        return NULL;
    if (wgt_check_block_view(fn, dtype, ndim, shape, NULL, 0) != WGT_OK) return NULL;
    size_t want = wgt_dtype_bytes(dtype, numel);
    if (nbytes != want) {
        wgt_error(WGT_ERR_USAGE, "%s: byte count %zu does not match %lld %s elements (%zu bytes)", fn, nbytes,
                  (long long)numel, wgt_dtype_name(dtype), want);
        return NULL;
    }
    if (want && !data) {
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: data is NULL for %zu bytes", fn, want);
        return NULL;
    }
    /* A bool is the byte 0 or 1: any other byte would compare unequal to true. */
    for (size_t i = 0; dtype == WGT_BOOL && i < want; i++)
        if (((const uint8_t *)data)[i] > 1) {
            wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: bool element %zu is the byte %u, not 0 or 1", fn, i,
                      ((const uint8_t *)data)[i]);
            return NULL;
        }
    wgt_tensor *t = wgt_tensor_new(ctx, fn, dtype, ndim, shape, usage);
    if (!t) return NULL;
    wgt_storage *s = t->storage;
    if (wgt_storage_sync_host(s) != WGT_OK) {
        wgt_release(t);
        return NULL;
    }
    if (want) memcpy(s->host, data, want);
    s->device_valid = 0;
    return t;
}

/* Stores a double as one element of dtype. Integer conversion saturates and maps NaN to 0,
 * so no input is undefined behaviour; bool stores whether v is nonzero (NaN is). */
void wgt_store_value(wgt_dtype dtype, void *dst, double v) {
    const wgt_dtype_info *info = wgt_dtype_info_of(dtype);
    if (info->kind == WGT_KIND_BOOL) {
        *(uint8_t *)dst = v != 0;
        return;
    }
    if (dtype == WGT_I64 || dtype == WGT_U64) { /* max is one past the largest value (dtype_table.h) */
        double c = isnan(v) ? 0 : trunc(v);
        if (dtype == WGT_I64) *(int64_t *)dst = c <= info->min ? INT64_MIN : c >= info->max ? INT64_MAX : (int64_t)c;
        else *(uint64_t *)dst = c <= 0 ? 0 : c >= info->max ? UINT64_MAX : (uint64_t)c;
        return;
    }
    if (info->kind == WGT_KIND_INT || info->kind == WGT_KIND_UINT) {
        double c = isnan(v) ? 0 : v <= info->min ? info->min : v >= info->max ? info->max : trunc(v);
        switch (dtype) {
        case WGT_I32: *(int32_t *)dst = (int32_t)c; break;
        case WGT_U32: *(uint32_t *)dst = (uint32_t)c; break;
        case WGT_I16: *(int16_t *)dst = (int16_t)c; break;
        case WGT_U16: *(uint16_t *)dst = (uint16_t)c; break;
        case WGT_I8: *(int8_t *)dst = (int8_t)c; break;
        default: *(uint8_t *)dst = (uint8_t)c; break;
        }
        return;
    }
    switch (dtype) {
    case WGT_F32: *(float *)dst = (float)v; break;
    case WGT_F16: *(uint16_t *)dst = wgt_f32_to_f16((float)v); break;
    case WGT_BF16: *(uint16_t *)dst = wgt_f32_to_bf16((float)v); break;
    default: break; /* block types hold no lone elements: callers refuse them */
    }
}

/* v as a message should show it: whole numbers in full (2147483648, not 2.14748e+09), others
 * in the shortest %g form that reads back as v (0.1, not 0.10000000000000001). */
static void format_value(char *buf, size_t n, double v) {
    if (v == floor(v) && fabs(v) < 1e17) {
        snprintf(buf, n, "%.0f", v);
        return;
    }
    for (int p = 1; p <= 17; p++) {
        snprintf(buf, n, "%.*g", p, v);
        if (strtod(buf, NULL) == v || isnan(v)) return;
    }
}

/* Whole-number types, bool included (its values are 0 and 1). */
static int is_integer(wgt_dtype dtype) {
    return wgt_dtype_is_integer(dtype) || wgt_dtype_info_of(dtype)->kind == WGT_KIND_BOOL;
}

/* For integer types: v must be a whole number (see wgt_check_scalar). */
static wgt_status check_whole(const char *fn, const char *what, wgt_dtype dtype, double v) {
    if (!is_integer(dtype) || (isfinite(v) && v == floor(v))) return WGT_OK;
    char shown[32];
    format_value(shown, sizeof shown, v);
    return wgt_error(WGT_ERR_DTYPE, "%s: %s = %s is not a whole number, so %s cannot hold it; cast to f32 first", fn,
                     what, shown, wgt_dtype_name(dtype));
}

/* A scalar given as a double meets a tensor as a Python scalar meets an array in NumPy 2: it
 * takes the tensor's type, and it must be a value of that type. Integer types take whole
 * numbers inside their range (NumPy raises OverflowError past it: INVALID_ARGUMENT here); a
 * fraction, NaN or an infinity would make NumPy promote to a float type, which a typed call
 * cannot do, so it is a type error naming the value (converted, 0.5 would become 0 and a
 * division by it a division by zero). Float types round to nearest, but a finite value past
 * the type's range is refused rather than made infinite, which would change what the op
 * computes (f16 0.001 * 1e6 is 1000 computed in f32, not inf); infinities pass as given. */
wgt_status wgt_check_scalar(const char *fn, const char *what, wgt_dtype dtype, double v) {
    wgt_status st = check_whole(fn, what, dtype, v);
    if (st != WGT_OK) return st;
    char shown[32];
    format_value(shown, sizeof shown, v);
    if (is_integer(dtype)) {
        double lo = wgt_dtype_info_of(dtype)->min, hi = wgt_dtype_info_of(dtype)->max;
        if (!wgt_dtype_in_range(dtype, v))
            return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: %s = %s is out of range for %s (%.0f to %s%.0f)", fn, what,
                             shown, wgt_dtype_name(dtype), lo, wgt_dtype_is_64bit(dtype) ? "below " : "", hi);
    } else if (wgt_dtype_is_float(dtype) && isfinite(v)) {
        /* The least magnitude that rounds to infinity; the second test catches a value just
         * below it that the store's rounding through f32 carries to it. */
        double limit = dtype == WGT_F16 ? 65520.0 : dtype == WGT_BF16 ? 0x1.ffp127 : 0x1.ffffffp127;
        uint32_t stored = (uint32_t)wgt_value_bits(dtype, v);
        int rounds_to_inf = dtype == WGT_F16    ? isinf(wgt_f16_to_f32((uint16_t)stored))
                            : dtype == WGT_BF16 ? isinf(wgt_bf16_to_f32((uint16_t)stored))
                                                : 0;
        if (fabs(v) >= limit || rounds_to_inf)
            return wgt_error(WGT_ERR_INVALID_ARGUMENT,
                             "%s: %s = %s overflows %s (largest finite %s); pass an infinity if one is meant", fn,
                             what, shown, wgt_dtype_name(dtype),
                             dtype == WGT_F16 ? "65504" : dtype == WGT_BF16 ? "3.38953139e+38" : "3.40282347e+38");
    }
    return WGT_OK;
}

uint64_t wgt_value_bits(wgt_dtype dtype, double v) {
    /* Through a buffer of the element's own size, so the bits land in the low end. */
    switch (wgt_dtype_size(dtype)) {
    case 1: {
        uint8_t b = 0;
        wgt_store_value(dtype, &b, v);
        return b;
    }
    case 2: {
        uint16_t h = 0;
        wgt_store_value(dtype, &h, v);
        return h;
    }
    case 8: {
        uint64_t bits = 0;
        wgt_store_value(dtype, &bits, v);
        return bits;
    }
    default: {
        uint32_t bits = 0;
        wgt_store_value(dtype, &bits, v);
        return bits;
    }
    }
}

/* Creates a tensor and fills its host copy with gen(i) for each element. */
static wgt_tensor *generate(wgt_context *ctx, const char *fn, wgt_dtype dtype, int ndim, const int64_t *shape,
                            double (*gen)(void *state, int64_t i), void *state) {
    wgt_tensor *t = wgt_tensor_new(ctx, fn, dtype, ndim, shape, WGT_USAGE_DEFAULT);
    if (!t) return NULL;
    wgt_storage *s = t->storage;
    if (wgt_storage_sync_host(s) != WGT_OK) {
        wgt_release(t);
        return NULL;
    }
    size_t es = wgt_dtype_size(dtype);
    int64_t n = wgt_tensor_numel(t);
    for (int64_t i = 0; i < n; i++) wgt_store_value(dtype, (char *)s->host + (size_t)i * es, gen(state, i));
    s->device_valid = 0;
    return t;
}

static double gen_constant(void *state, int64_t i) {
    (void)i;
    return *(double *)state;
}

wgt_tensor *wgt_full(wgt_context *ctx, wgt_dtype dtype, int ndim, const int64_t *shape, double value) {
    static const char fn[] = "wgt_full";
    if (wgt_check_context(fn, ctx) != WGT_OK || wgt_check_dtype(fn, dtype) != WGT_OK ||
        wgt_check_scalar(fn, "value", dtype, value) != WGT_OK)
        return NULL;
    return generate(ctx, fn, dtype, ndim, shape, gen_constant, &value);
}

wgt_tensor *wgt_ones(wgt_context *ctx, wgt_dtype dtype, int ndim, const int64_t *shape) {
    double one = 1.0;
    return generate(ctx, "wgt_ones", dtype, ndim, shape, gen_constant, &one);
}

typedef struct { double start, step; } range_state;
static double gen_range(void *state, int64_t i) {
    range_state *r = state;
    return r->start + (double)i * r->step;
}

/* i64 and u64 ranges in integer arithmetic: past 2^53 start + i step in doubles would round.
 * start and step are whole and every value is in range (checked), so the wrapping sum of
 * their bits is the exact value. */
static wgt_tensor *range64(wgt_context *ctx, const char *fn, wgt_dtype dtype, const int64_t *shape, double start,
                           double step) {
    wgt_tensor *t = wgt_tensor_new(ctx, fn, dtype, 1, shape, WGT_USAGE_DEFAULT);
    if (!t) return NULL;
    if (wgt_storage_sync_host(t->storage) != WGT_OK) {
        wgt_release(t);
        return NULL;
    }
    /* |step| < 2^64 here (two values of the type differ by less); negative steps wrap. */
    uint64_t first = wgt_value_bits(dtype, start), delta = step < 0 ? 0 - (uint64_t)(-step) : (uint64_t)step;
    uint64_t *out = t->storage->host;
    for (int64_t i = 0; i < shape[0]; i++) out[i] = first + (uint64_t)i * delta;
    t->storage->device_valid = 0;
    return t;
}

wgt_tensor *wgt_arange(wgt_context *ctx, wgt_dtype dtype, double start, double stop, double step) {
    static const char fn[] = "wgt_arange";
    if (!isfinite(start) || !isfinite(stop) || !isfinite(step) || step == 0) {
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: start %g, stop %g and step %g must be finite and step nonzero", fn,
                  start, stop, step);
        return NULL;
    }
    double count = ceil((stop - start) / step);
    if (count < 0) count = 0;
    if (count > 9.0e18) {
        wgt_error(WGT_ERR_SHAPE, "%s: %g elements are too many", fn, count);
        return NULL;
    }
    /* Every value must be one of the type's (the range is arithmetic: the first and last
     * bound it, and whole start and step make every value whole; a step of -1 is fine for
     * u32). An empty range has no value to check. */
    if (count > 0 && (wgt_check_scalar(fn, "start", dtype, start) != WGT_OK ||
                      check_whole(fn, "step", dtype, step) != WGT_OK ||
                      wgt_check_scalar(fn, "the last value", dtype, start + (count - 1) * step) != WGT_OK))
        return NULL;
    int64_t shape[1] = {(int64_t)count};
    range_state r = {start, step};
    if (wgt_dtype_is_64bit(dtype)) return range64(ctx, fn, dtype, shape, start, step);
    return generate(ctx, fn, dtype, 1, shape, gen_range, &r);
}

/* Counter-based generator: element i's value depends only on (seed, i), so results do not
 * depend on the order of generation and can later move into a kernel unchanged. */
static uint64_t mix64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static double unit_uniform(uint64_t seed, uint64_t counter) { /* in (0, 1) */
    uint64_t bits = mix64(seed ^ mix64(counter));
    return ((double)(bits >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

typedef struct { uint64_t seed; double a, b; int floor_it; } random_state;

static double gen_uniform(void *state, int64_t i) {
    random_state *r = state;
    double v = r->a + (r->b - r->a) * unit_uniform(r->seed, (uint64_t)i);
    return r->floor_it ? floor(v) : v;
}

static double gen_normal(void *state, int64_t i) { /* Box-Muller on two draws per element */
    random_state *r = state;
    double u1 = unit_uniform(r->seed, 2 * (uint64_t)i), u2 = unit_uniform(r->seed, 2 * (uint64_t)i + 1);
    double v = r->a + r->b * sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
    return r->floor_it ? floor(v) : v;
}

/* Whether draws from [lo, hi] (lo == hi: the value lo) can fall outside dtype's values,
 * which storing would clamp (integers) or make infinite (floats) without a word: then an
 * error naming the bounds. Integers take floor() of a draw, so for i32 [-2^31, 2^31) is the
 * whole type. */
static int draws_outside(wgt_dtype dtype, double lo, double hi, const char *fn, const char *what) {
    int integer = is_integer(dtype);
    double tmin, tend; /* integers: [tmin, tend), floats: [tmin, tend] */
    switch (dtype) {
    case WGT_I32: tmin = -2147483648.0, tend = 2147483648.0; break;
    case WGT_U32: tmin = 0, tend = 4294967296.0; break;
    case WGT_F16: tmin = -65504, tend = 65504; break;
    case WGT_F32: tmin = -FLT_MAX, tend = FLT_MAX; break;
    default: return 0; /* an unknown type is reported when the tensor is made */
    }
    if (lo >= tmin && hi <= tend && (!integer || lo < tend)) return 0;
    char l[32], h[32], a[32], b[32];
    format_value(l, sizeof l, lo);
    format_value(h, sizeof h, hi);
    format_value(a, sizeof a, tmin);
    format_value(b, sizeof b, integer ? tend - 1 : tend);
    if (lo == hi)
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: %s = %s lies outside %s (%s to %s)", fn, what, l,
                  wgt_dtype_name(dtype), a, b);
    else
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: %s = [%s, %s) reaches outside %s (%s to %s)", fn, what, l, h,
                  wgt_dtype_name(dtype), a, b);
    return 1;
}

wgt_tensor *wgt_rand_uniform(wgt_context *ctx, wgt_dtype dtype, int ndim, const int64_t *shape, double low,
                             double high, uint64_t seed) {
    if (!isfinite(low) || !isfinite(high) || low > high) {
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "wgt_rand_uniform: bounds [%g, %g) must be finite with low <= high", low,
                  high);
        return NULL;
    }
    if (draws_outside(dtype, low, high, "wgt_rand_uniform", "[low, high)")) return NULL;
    random_state r = {seed, low, high, is_integer(dtype)};
    return generate(ctx, "wgt_rand_uniform", dtype, ndim, shape, gen_uniform, &r);
}

wgt_tensor *wgt_rand_normal(wgt_context *ctx, wgt_dtype dtype, int ndim, const int64_t *shape, double mean,
                            double stddev, uint64_t seed) {
    if (!isfinite(mean) || !isfinite(stddev) || stddev < 0) {
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "wgt_rand_normal: mean %g and stddev %g must be finite, stddev >= 0", mean,
                  stddev);
        return NULL;
    }
    if (draws_outside(dtype, mean, mean, "wgt_rand_normal", "mean")) return NULL;
    random_state r = {seed, mean, stddev, is_integer(dtype)};
    return generate(ctx, "wgt_rand_normal", dtype, ndim, shape, gen_normal, &r);
}
