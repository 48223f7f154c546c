/*
 * Tensor creation: from host data, constant fills, ranges and seeded random values.
 * Values are produced on the host, where they are identical for every backend, and move to
 * the device when a kernel first needs them.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "api_names.h"
#include "tensor.h"

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
    size_t want = (size_t)numel * wgt_dtype_size(dtype);
    if (nbytes != want) {
        wgt_error(WGT_ERR_USAGE, "%s: byte count %zu does not match %lld %s elements (%zu bytes)", fn, nbytes,
                  (long long)numel, wgt_dtype_name(dtype), want);
        return NULL;
    }
    if (want && !data) {
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: data is NULL for %zu bytes", fn, want);
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
 * so no input is undefined behaviour. */
void wgt_store_value(wgt_dtype dtype, void *dst, double v) {
    switch (dtype) {
    case WGT_F32: *(float *)dst = (float)v; break;
    case WGT_F16: *(uint16_t *)dst = wgt_f32_to_f16((float)v); break;
    case WGT_I32:
        *(int32_t *)dst = isnan(v) ? 0 : v <= -2147483648.0 ? INT32_MIN : v >= 2147483647.0 ? INT32_MAX : (int32_t)v;
        break;
    case WGT_U32:
        *(uint32_t *)dst = isnan(v) || v <= 0 ? 0 : v >= 4294967295.0 ? UINT32_MAX : (uint32_t)v;
        break;
    }
}

uint32_t wgt_value_bits(wgt_dtype dtype, double v) {
    if (dtype == WGT_F16) {
        uint16_t h;
        wgt_store_value(dtype, &h, v);
        return h;
    }
    uint32_t bits = 0;
    wgt_store_value(dtype, &bits, v);
    return bits;
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
    return generate(ctx, "wgt_full", dtype, ndim, shape, gen_constant, &value);
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
    int64_t shape[1] = {(int64_t)count};
    range_state r = {start, step};
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

wgt_tensor *wgt_rand_uniform(wgt_context *ctx, wgt_dtype dtype, int ndim, const int64_t *shape, double low,
                             double high, uint64_t seed) {
    if (!isfinite(low) || !isfinite(high) || low > high) {
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "wgt_rand_uniform: bounds [%g, %g) must be finite with low <= high", low,
                  high);
        return NULL;
    }
    random_state r = {seed, low, high, dtype == WGT_I32 || dtype == WGT_U32};
    return generate(ctx, "wgt_rand_uniform", dtype, ndim, shape, gen_uniform, &r);
}

wgt_tensor *wgt_rand_normal(wgt_context *ctx, wgt_dtype dtype, int ndim, const int64_t *shape, double mean,
                            double stddev, uint64_t seed) {
    if (!isfinite(mean) || !isfinite(stddev) || stddev < 0) {
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "wgt_rand_normal: mean %g and stddev %g must be finite, stddev >= 0", mean,
                  stddev);
        return NULL;
    }
    random_state r = {seed, mean, stddev, dtype == WGT_I32 || dtype == WGT_U32};
    return generate(ctx, "wgt_rand_normal", dtype, ndim, shape, gen_normal, &r);
}
