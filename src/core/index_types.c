/*
 * The types of index tensors. Every op that takes an index tensor takes i32, u32, i64 and
 * u64 (NumPy's default integer is int64, so its users' index arrays are i64), while the
 * index kernels of both backends read 32-bit indices only. An i64 or u64 index tensor is
 * narrowed here, in one place, to a u32 tensor of the same shape before the op goes on as for
 * u32 indices:
 *
 * - values on the host already (no pending writer) are checked against the op's bound with
 *   the op's own message, naming the 64-bit value (2^32 + 1 is out of range, never 1), and
 *   converted on the host: no kernel runs, and the op then sees host-valid u32 indices, so
 *   it checks them at no cost and needs no check on the device;
 * - values still to be computed (or a compiled graph's inputs) are narrowed by one small
 *   kernel (the backend's index_narrow) that keeps a value in [0, bound) and turns any other
 *   into 0xffffffff, out of range for every kernel reading it; the node checks the 64-bit
 *   values on the device as gather's deferred indices are checked (index_checks.c), so the
 *   error names the caller's value and position at the next synchronisation.
 *
 * Narrowing to u32 rather than i32 keeps every bound below 2^32 in reach; a bound past that
 * (a broadcast view with more rows) is WGT_ERR_LIMIT for 64-bit indices. Converting once here
 * costs a pass over the indices; copying each index kernel for word pairs would cost a kernel
 * variant per op and backend, for ops whose indices are small next to the data they move.
 * An index tensor that is not a graph input is narrowed when the op is recorded, so a compiled
 * graph reads the values it had then (as it does for any index copy the op makes).
 */
#include <stdlib.h>

#include "backend/strided_iter.h"
#include "core/dtype_table.h"
#include "indexing.h"

wgt_status wgt_check_index_tensor(const char *fn, const char *name, const wgt_tensor *indices) {
    wgt_status st = wgt_check_tensor_any_type(fn, name, indices);
    if (st != WGT_OK) return st;
    wgt_dtype d = indices->dtype;
    if (d != WGT_I32 && d != WGT_U32 && d != WGT_I64 && d != WGT_U64)
        return wgt_error(WGT_ERR_DTYPE, "%s: %s must be i32, u32, i64 or u64, not %s", fn, name, wgt_dtype_name(d));
    return WGT_OK;
}

/* Element at of host indices, widened (signed types sign-extend; a u64 keeps its bits). */
static int64_t host_index(const wgt_tensor *indices, int64_t at) {
    const void *p = indices->storage->host;
    switch (indices->dtype) {
    case WGT_I32: return ((const int32_t *)p)[at];
    case WGT_U32: return ((const uint32_t *)p)[at];
    default: return ((const int64_t *)p)[at]; /* i64, u64 (bits) */
    }
}

/* Visits the host indices in row-major order: each value (and its flat position) goes to
 * visit, which returns nonzero to stop. */
typedef int (*index_visit)(void *arg, int64_t v, int64_t flat);

static void for_each_index(const wgt_tensor *indices, index_visit visit, void *arg) {
    const int64_t *strides[1] = {indices->strides};
    int64_t offsets[1] = {indices->offset}, inner, is[1], flat = 0;
    wgt_strided_iter it;
    wgt_strided_iter_init(&it, indices->ndim, indices->shape, 1, strides, offsets, &inner, is);
    do {
        for (int64_t i = 0; i < inner; i++, flat++)
            if (visit(arg, host_index(indices, it.base[0] + i * is[0]), flat)) return;
    } while (wgt_strided_iter_next(&it));
}

typedef struct {
    int64_t bound;
    int is_unsigned;
    int64_t bad, bad_at; /* bad_at -1: none */
} range_scan;

static int find_bad(void *arg, int64_t v, int64_t flat) {
    range_scan *r = arg;
    /* A u64 past 2^63 reads negative here: out of range either way. */
    if (v >= 0 && v < r->bound) return 0;
    r->bad = v;
    r->bad_at = flat;
    return 1;
}

/* The values are on the host and final: no pending writer, not a graph input. */
static int values_on_host(const wgt_tensor *indices) {
    const wgt_storage *s = indices->storage;
    return !s->symbolic && !s->pending_writers && s->host_valid && s->host;
}

wgt_status wgt_check_index_values(const char *fn, wgt_tensor *indices, int64_t bound, const char *unit,
                                  int *deferred) {
    *deferred = 0;
    if (wgt_numel(indices->ndim, indices->shape) == 0) return WGT_OK;
    if (!values_on_host(indices)) {
        *deferred = 1;
        return WGT_OK;
    }
    range_scan r = {bound, indices->dtype == WGT_U64, 0, -1};
    for_each_index(indices, find_bad, &r);
    if (r.bad_at < 0) return WGT_OK;
    return wgt_index_error(fn, r.bad, r.is_unsigned, indices->ndim, indices->shape, r.bad_at, bound, unit);
}

static int store_u32(void *arg, int64_t v, int64_t flat) {
    ((uint32_t *)arg)[flat] = (uint32_t)v;
    return 0;
}

/* Checked host values, converted on the host. */
static wgt_tensor *narrow_on_host(const char *fn, wgt_tensor *indices) {
    int64_t n = wgt_numel(indices->ndim, indices->shape);
    uint32_t *words = malloc((size_t)n * sizeof *words);
    if (!words) {
        wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory for %lld indices", fn, (long long)n);
        return NULL;
    }
    for_each_index(indices, store_u32, words);
    wgt_tensor *out = wgt_tensor_from_data(indices->storage->ctx, WGT_U32, indices->ndim, indices->shape, words,
                                           (size_t)n * sizeof *words, WGT_USAGE_DEFAULT);
    free(words);
    return out;
}

/* Values not on the host: the backend's index_narrow, checked on the device. */
static wgt_tensor *narrow_on_device(const char *fn, wgt_tensor *indices, int64_t bound) {
    int64_t all = -1;
    wgt_tensor *flat = wgt_reshape(indices, 1, &all), *words = NULL, *out = NULL;
    if (flat) words = wgt_tensor_new(indices->storage->ctx, fn, WGT_U32, 1, flat->shape, WGT_USAGE_DEFAULT);
    wgt_operand src, dst;
    if (words && wgt_view_operand(flat, 1, flat->shape, flat->strides, &src) == WGT_OK &&
        wgt_output_operand(words, &dst) == WGT_OK &&
        wgt_record_index_narrow(indices->storage->ctx, fn, &dst, &src, bound, 1, indices->ndim, indices->shape) ==
            WGT_OK)
        out = wgt_reshape(words, indices->ndim, indices->shape);
    wgt_release(flat);
    wgt_release(words);
    return out;
}

wgt_tensor *wgt_index_narrow(const char *fn, wgt_tensor *indices, int64_t bound, const char *unit) {
    if (!wgt_dtype_is_64bit(indices->dtype)) return wgt_retain(indices);
    if (bound > (int64_t)UINT32_MAX) {
        wgt_error(WGT_ERR_LIMIT, "%s: %lld %s are more than the 2^32 - 1 that %s indices reach", fn, (long long)bound,
                  unit, wgt_dtype_name(indices->dtype));
        return NULL;
    }
    if (wgt_numel(indices->ndim, indices->shape) == 0)
        return wgt_tensor_new(indices->storage->ctx, fn, WGT_U32, indices->ndim, indices->shape, WGT_USAGE_DEFAULT);
    int deferred;
    if (wgt_check_index_values(fn, indices, bound, unit, &deferred) != WGT_OK) return NULL;
    return deferred ? narrow_on_device(fn, indices, bound) : narrow_on_host(fn, indices);
}

/* ---- indices counted from the end ---- */

static int find_negative(void *arg, int64_t v, int64_t flat) {
    (void)flat;
    return v < 0 ? (*(int *)arg = 1) : 0;
}

typedef struct {
    int64_t bound;
    void *out; /* int32_t or int64_t values, row-major */
    int wide;
} wrap_store;

static int store_wrapped(void *arg, int64_t v, int64_t flat) {
    wrap_store *w = arg;
    if (v < 0 && v >= -w->bound) v += w->bound;
    if (w->wide) ((int64_t *)w->out)[flat] = v;
    else ((int32_t *)w->out)[flat] = (int32_t)v;
    return 0;
}

wgt_tensor *wgt_wrap_negative_indices(const char *fn, wgt_tensor *indices, int64_t bound) {
    wgt_dtype d = indices->dtype;
    int64_t n = wgt_numel(indices->ndim, indices->shape);
    if (d == WGT_U32 || d == WGT_U64 || n == 0) return wgt_retain(indices);
    wgt_context *ctx = indices->storage->ctx;
    /* An i32 value wrapped by a bound past 2^31 - 1 may not fit i32 any more: i64 then. */
    int wide = d == WGT_I64 || bound > INT32_MAX;
    if (values_on_host(indices)) {
        /* Wrapped on the host, into a new host-valid tensor: the op still checks (and
         * refuses) what is left out of range at the call, naming the value as given. */
        int negative = 0;
        for_each_index(indices, find_negative, &negative);
        if (!negative) return wgt_retain(indices);
        size_t size = (size_t)n * (wide ? sizeof(int64_t) : sizeof(int32_t));
        wrap_store w = {bound, malloc(size), wide};
        if (!w.out) {
            wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory for %lld indices", fn, (long long)n);
            return NULL;
        }
        for_each_index(indices, store_wrapped, &w);
        wgt_tensor *out = wgt_tensor_from_data(ctx, wide ? WGT_I64 : WGT_I32, indices->ndim, indices->shape, w.out,
                                               size, WGT_USAGE_DEFAULT);
        free(w.out);
        return out;
    }
    /* Values still to be computed: where(-bound <= v < 0, v + bound, v), lazily, so they fuse
     * with whatever computes them and a compiled graph wraps each dispatch's values. Values
     * below -bound stay as they are and the device check names them as given. */
    wgt_tensor *v = wide && d == WGT_I32 ? wgt_cast(indices, WGT_I64) : wgt_retain(indices);
    wgt_dtype vd = wide ? WGT_I64 : WGT_I32;
    wgt_tensor *zero = v ? wgt_scalar(ctx, vd, 0) : NULL, *low = v ? wgt_scalar(ctx, vd, -(double)bound) : NULL;
    wgt_tensor *below = zero ? wgt_lt(v, zero) : NULL, *reach = low ? wgt_ge(v, low) : NULL;
    wgt_tensor *wrap = below && reach ? wgt_logical_and(below, reach) : NULL;
    wgt_tensor *shifted = wrap ? wgt_add_scalar(v, (double)bound) : NULL;
    wgt_tensor *out = shifted ? wgt_where(wrap, shifted, v) : NULL;
    wgt_tensor *all[] = {v, zero, low, below, reach, wrap, shifted};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) wgt_release(all[i]);
    return out;
}
