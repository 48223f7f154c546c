/*
 * Views: new shapes, strides and offsets over the same storage, made without copying.
 * wgt_reshape and wgt_contiguous copy only when no view can express the result.
 */
#include <string.h>

#include "api_names.h"
#include "tensor.h"

wgt_tensor *wgt_as_strided(wgt_tensor *t, int ndim, const int64_t *shape, const int64_t *strides, int64_t offset) {
    static const char fn[] = "wgt_as_strided";
    if (wgt_check_tensor(fn, "tensor", t) != WGT_OK || wgt_check_shape(fn, ndim, shape, NULL) != WGT_OK) return NULL;
    if (ndim > 0 && !strides) {
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: strides is NULL for rank %d", fn, ndim);
        return NULL;
    }
    int64_t lo, hi, limit = (int64_t)(t->storage->nbytes / wgt_dtype_block_bytes(t->dtype)) *
                            wgt_dtype_block_elements(t->dtype);
    for (int i = 0; i < ndim; i++) {
        /* Bound each term so the extent arithmetic below cannot overflow. |stride| is taken
         * unsigned: INT64_MIN has no positive int64_t counterpart. */
        uint64_t mag = strides[i] < 0 ? 0 - (uint64_t)strides[i] : (uint64_t)strides[i];
        if (shape[i] > 1 && (strides[i] > limit || strides[i] < -limit ||
                             (mag && (uint64_t)(shape[i] - 1) > (uint64_t)limit / mag))) {
            wgt_error(WGT_ERR_SHAPE, "%s: stride %lld of dimension %d reaches outside the storage of %lld elements",
                      fn, (long long)strides[i], i, (long long)limit);
            return NULL;
        }
    }
    /* The offset is checked first: the extent adds every span to it, and each span is bounded
     * by the storage only, so a huge offset would overflow the sum. An empty view addresses
     * nothing, but its offset still places wgt_tensor_data's pointer: at most one past the end. */
    int empty = wgt_numel(ndim, shape) == 0;
    if (offset < 0 || offset > limit ||
        (!empty && (offset == limit || (wgt_view_extent(ndim, shape, strides, offset, &lo, &hi) &&
                                        (lo < 0 || hi >= limit))))) {
        char s[256];
        wgt_format_shape(s, sizeof s, ndim, shape);
        wgt_error(WGT_ERR_SHAPE, "%s: view of shape %s at offset %lld reaches outside the storage of %lld elements",
                  fn, s, (long long)offset, (long long)limit);
        return NULL;
    }
    if (wgt_check_block_view(fn, t->dtype, ndim, shape, strides, offset) != WGT_OK) return NULL;
    return wgt_tensor_new_view(t, ndim, shape, strides, offset);
}

wgt_tensor *wgt_transpose(wgt_tensor *t, int axis0, int axis1) {
    static const char fn[] = "wgt_transpose";
    int a, b;
    if (wgt_check_tensor(fn, "tensor", t) != WGT_OK || !wgt_normalize_axis(fn, axis0, t->ndim, &a) ||
        !wgt_normalize_axis(fn, axis1, t->ndim, &b))
        return NULL;
    int64_t shape[WGT_MAX_DIMS], strides[WGT_MAX_DIMS];
    memcpy(shape, t->shape, sizeof shape);
    memcpy(strides, t->strides, sizeof strides);
    shape[a] = t->shape[b];
    shape[b] = t->shape[a];
    strides[a] = t->strides[b];
    strides[b] = t->strides[a];
    return wgt_tensor_new_view(t, t->ndim, shape, strides, t->offset);
}

wgt_tensor *wgt_slice(wgt_tensor *t, int axis, int64_t start, int64_t stop, int64_t step) {
    static const char fn[] = "wgt_slice";
    int ax;
    if (wgt_check_tensor(fn, "tensor", t) != WGT_OK || !wgt_normalize_axis(fn, axis, t->ndim, &ax)) return NULL;
    if (step == 0) {
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: step is 0", fn);
        return NULL;
    }
    /* Python's slice rules: negative indices count from the end, out-of-range ones clamp. */
    int64_t n = t->shape[ax];
    if (start < 0) start += n;
    if (stop < 0) stop += n;
    /* Counts in unsigned arithmetic: steps near INT64_MIN or INT64_MAX must not overflow. */
    int64_t count;
    uint64_t ustep = step > 0 ? (uint64_t)step : (uint64_t)0 - (uint64_t)step;
    if (step > 0) {
        start = start < 0 ? 0 : start > n ? n : start;
        stop = stop < 0 ? 0 : stop > n ? n : stop;
        count = stop > start ? (int64_t)(1 + (uint64_t)(stop - start - 1) / ustep) : 0;
    } else {
        start = start < -1 ? -1 : start > n - 1 ? n - 1 : start;
        stop = stop < -1 ? -1 : stop > n - 1 ? n - 1 : stop;
        count = start > stop ? (int64_t)(1 + (uint64_t)(start - stop - 1) / ustep) : 0;
    }
    int64_t shape[WGT_MAX_DIMS], strides[WGT_MAX_DIMS];
    memcpy(shape, t->shape, sizeof shape);
    memcpy(strides, t->strides, sizeof strides);
    shape[ax] = count;
    /* With two or more elements |step| < n, so the product stays inside the storage's range.
     * An empty result addresses nothing and keeps stride and offset: an empty tensor's strides
     * may be huge (wgt_contiguous_strides wraps them), and multiplying them could overflow. */
    int empty = wgt_numel(t->ndim, shape) == 0;
    strides[ax] = count > 1 && !empty ? t->strides[ax] * step : t->strides[ax];
    int64_t offset = t->offset + (count > 0 && !empty ? start * t->strides[ax] : 0);
    if (wgt_check_block_view(fn, t->dtype, t->ndim, shape, strides, offset) != WGT_OK) return NULL;
    return wgt_tensor_new_view(t, t->ndim, shape, strides, offset);
}

wgt_tensor *wgt_broadcast_to(wgt_tensor *t, int ndim, const int64_t *shape) {
    static const char fn[] = "wgt_broadcast_to";
    if (wgt_check_tensor(fn, "tensor", t) != WGT_OK || wgt_check_shape(fn, ndim, shape, NULL) != WGT_OK) return NULL;
    int ok = ndim >= t->ndim;
    for (int i = 0; ok && i < t->ndim; i++) {
        int64_t have = t->shape[i], want = shape[ndim - t->ndim + i];
        ok = have == want || have == 1;
    }
    if (!ok) {
        char s1[256], s2[256];
        wgt_format_shape(s1, sizeof s1, t->ndim, t->shape);
        wgt_format_shape(s2, sizeof s2, ndim, shape);
        wgt_error(WGT_ERR_SHAPE, "%s: shape %s cannot broadcast to %s", fn, s1, s2);
        return NULL;
    }
    int64_t strides[WGT_MAX_DIMS];
    wgt_broadcast_strides(t, ndim, shape, strides);
    return wgt_tensor_new_view(t, ndim, shape, strides, t->offset);
}

/* Strides for viewing t with a new shape without a copy, when t's layout allows it: each
 * run of merged old dimensions must be contiguous in memory. Returns 0 when a copy is needed. */
static int reshape_strides(const wgt_tensor *t, int ndim, const int64_t *shape, int64_t *strides) {
    int oi = 0, ni = 0;
    while (oi < t->ndim || ni < ndim) {
        if (ni < ndim && shape[ni] == 1) { strides[ni++] = 0; continue; }
        if (oi < t->ndim && t->shape[oi] == 1) { oi++; continue; }
        if (oi >= t->ndim || ni >= ndim) return 0;
        int64_t op = t->shape[oi], np = shape[ni];
        int o0 = oi, n0 = ni;
        while (op != np) {
            if (op < np) op *= t->shape[++oi];
            else np *= shape[++ni];
        }
        int prev = -1; /* the merged old dims (size-1 ones aside) must chain */
        for (int k = o0; k <= oi; k++) {
            if (t->shape[k] == 1) continue;
            if (prev >= 0 && t->strides[prev] != t->strides[k] * t->shape[k]) return 0;
            prev = k;
        }
        int64_t s = t->strides[prev];
        for (int k = ni; k >= n0; k--) {
            strides[k] = s;
            s *= shape[k];
        }
        oi++;
        ni++;
    }
    return 1;
}

/* view_only: a layout that needs a copy is WGT_ERR_SHAPE instead. */
static wgt_tensor *reshape(const char *fn, wgt_tensor *t, int ndim, const int64_t *shape_in, int view_only) {
    if (wgt_check_tensor(fn, "tensor", t) != WGT_OK) return NULL;
    if (ndim < 0 || ndim > WGT_MAX_DIMS || (ndim > 0 && !shape_in)) {
        wgt_check_shape(fn, ndim, shape_in, NULL);
        return NULL;
    }
    int64_t shape[WGT_MAX_DIMS], known = 1, numel = wgt_numel(t->ndim, t->shape);
    int infer = -1;
    for (int i = 0; i < ndim; i++) {
        shape[i] = shape_in[i];
        if (shape[i] == -1 && infer < 0) { infer = i; continue; }
        if (shape[i] < 0) {
            wgt_error(WGT_ERR_SHAPE, "%s: dimension %d is %lld; only one -1 is allowed", fn, i, (long long)shape[i]);
            return NULL;
        }
        if (shape[i] != 0 && known > INT64_MAX / shape[i]) known = -1;
        else if (known >= 0) known *= shape[i];
    }
    if (infer >= 0) shape[infer] = known > 0 && numel % known == 0 ? numel / known : -1;
    int64_t got;
    if (wgt_check_shape(fn, ndim, shape, &got) != WGT_OK || got != numel) {
        char s1[256], s2[256];
        wgt_format_shape(s1, sizeof s1, t->ndim, t->shape);
        wgt_format_shape(s2, sizeof s2, ndim, shape_in);
        wgt_error(WGT_ERR_SHAPE, "%s: cannot reshape %s (%lld elements) to %s", fn, s1, (long long)numel, s2);
        return NULL;
    }
    int64_t strides[WGT_MAX_DIMS];
    if (numel == 0) wgt_contiguous_strides(ndim, shape, strides);
    if (numel == 0 || reshape_strides(t, ndim, shape, strides)) {
        if (wgt_check_block_view(fn, t->dtype, ndim, shape, strides, t->offset) != WGT_OK) return NULL;
        return wgt_tensor_new_view(t, ndim, shape, strides, t->offset);
    }
    if (view_only) {
        char s1[256], s2[256];
        wgt_format_shape(s1, sizeof s1, t->ndim, t->shape);
        wgt_format_shape(s2, sizeof s2, ndim, shape);
        wgt_error(WGT_ERR_SHAPE, "%s: %s with these strides cannot be seen as %s without a copy", fn, s1, s2);
        return NULL;
    }
    wgt_tensor *c = wgt_contiguous(t);
    if (!c) return NULL;
    wgt_contiguous_strides(ndim, shape, strides);
    wgt_tensor *v = wgt_tensor_new_view(c, ndim, shape, strides, 0);
    wgt_release(c);
    return v;
}

wgt_tensor *wgt_reshape(wgt_tensor *t, int ndim, const int64_t *shape) { return reshape("wgt_reshape", t, ndim, shape, 0); }
wgt_tensor *wgt_reshape_view(wgt_tensor *t, int ndim, const int64_t *shape) {
    return reshape("wgt_reshape_view", t, ndim, shape, 1);
}
