/*
 * Tensor creation: from host data, constant fills and ranges. Values are produced on the
 * host, where they are identical for every backend, and move to the device when a kernel
 * first needs them (random values are made on the device: random.c).
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
void wgt_format_value(char *buf, size_t n, double v) {
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
    wgt_format_value(shown, sizeof shown, v);
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
    wgt_format_value(shown, sizeof shown, v);
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
