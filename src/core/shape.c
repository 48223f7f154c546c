/*
 * Shapes, strides and broadcasting. Every shape that enters the library passes
 * wgt_check_shape, which rejects bad ranks, negative dimensions and element counts that
 * overflow, so later arithmetic on shapes cannot overflow.
 */
#include <stdio.h>
#include <string.h>

#include "api_names.h"
#include "tensor.h"

void wgt_format_shape(char *buf, size_t size, int ndim, const int64_t *shape) {
    size_t used = 0;
    used += (size_t)snprintf(buf, size, "[");
    for (int i = 0; i < ndim && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, i ? ", %lld" : "%lld", (long long)shape[i]);
    if (used < size) snprintf(buf + used, size - used, "]");
}

wgt_status wgt_check_shape(const char *fn, int ndim, const int64_t *shape, int64_t *numel_out) {
    if (ndim < 0 || ndim > WGT_MAX_DIMS)
        return wgt_error(WGT_ERR_SHAPE, "%s: rank %d is out of range (0..%d)", fn, ndim, WGT_MAX_DIMS);
    if (ndim > 0 && !shape) return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: shape is NULL for rank %d", fn, ndim);
    int64_t numel = 1;
    int overflow = 0;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0) {
            char s[256];
            wgt_format_shape(s, sizeof s, ndim, shape);
            return wgt_error(WGT_ERR_SHAPE, "%s: dimension %d of shape %s is negative (%lld)", fn, i, s,
                             (long long)shape[i]);
        }
        if (shape[i] != 0 && numel > INT64_MAX / shape[i]) overflow = 1;
        else numel *= shape[i];
    }
    /* A zero anywhere makes the count 0 whatever the rest: that is not an overflow. */
    for (int i = 0; i < ndim; i++)
        if (shape[i] == 0) { overflow = 0; numel = 0; }
    if (overflow || numel > INT64_MAX / 8) { /* byte counts (up to 8 bytes an element) must fit too */
        char s[256];
        wgt_format_shape(s, sizeof s, ndim, shape);
        return wgt_error(WGT_ERR_SHAPE, "%s: the %s count of shape %s overflows 64 bits", fn,
                         overflow ? "element" : "byte", s);
    }
    if (numel_out) *numel_out = numel;
    return WGT_OK;
}

int64_t wgt_numel(int ndim, const int64_t *shape) {
    for (int i = 0; i < ndim; i++)
        if (shape[i] == 0) return 0; /* before multiplying: the other dimensions may overflow */
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) n *= shape[i];
    return n;
}

/* Unsigned arithmetic: an empty tensor's other dimensions may multiply past 64 bits, and its
 * strides never address anything, so wrapping there is harmless where signed overflow is not. */
void wgt_contiguous_strides(int ndim, const int64_t *shape, int64_t *strides) {
    uint64_t s = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        strides[i] = (int64_t)s;
        if (i > 0) s *= shape[i] > 0 ? (uint64_t)shape[i] : 1;
    }
}

/* An empty tensor counts as contiguous, whatever its strides. Its zero may come after
 * dimensions whose product passes 64 bits, so it is looked for first; a non-empty tensor's
 * partial products stay within its element count. */
int wgt_is_contiguous(int ndim, const int64_t *shape, const int64_t *strides) {
    for (int i = 0; i < ndim; i++)
        if (shape[i] == 0) return 1;
    int64_t expect = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        if (shape[i] != 1 && strides[i] != expect) return 0;
        expect *= shape[i];
    }
    return 1;
}

int wgt_layout_covers(int ndim, const int64_t *shape, const int64_t *strides, int64_t offset, wgt_dtype dtype,
                      size_t nbytes) {
    return offset == 0 && wgt_is_contiguous(ndim, shape, strides) &&
           wgt_dtype_bytes(dtype, wgt_numel(ndim, shape)) == nbytes;
}

wgt_status wgt_broadcast_shapes(const char *fn, int na, const int64_t *sa, int nb, const int64_t *sb,
                                int *nout, int64_t *out) {
    int n = na > nb ? na : nb;
    for (int i = 0; i < n; i++) {
        int ia = na - n + i, ib = nb - n + i;
        int64_t da = ia >= 0 ? sa[ia] : 1, db = ib >= 0 ? sb[ib] : 1;
        if (da != db && da != 1 && db != 1) {
            char s1[256], s2[256];
            wgt_format_shape(s1, sizeof s1, na, sa);
            wgt_format_shape(s2, sizeof s2, nb, sb);
            return wgt_error(WGT_ERR_SHAPE,
                             "%s: shapes %s and %s do not broadcast (dimension %d: %lld vs %lld)", fn, s1,
                             s2, i, (long long)da, (long long)db);
        }
        out[i] = da == 1 ? db : da;
    }
    *nout = n;
    return WGT_OK;
}

void wgt_broadcast_strides(const wgt_tensor *t, int ndim, const int64_t *shape, int64_t *strides) {
    for (int i = 0; i < ndim; i++) {
        int it = t->ndim - ndim + i;
        strides[i] = (it < 0 || (t->shape[it] == 1 && shape[i] != 1)) ? 0 : t->strides[it];
    }
}

int wgt_normalize_axis(const char *fn, int axis, int ndim, int *out) {
    int a = axis < 0 ? axis + ndim : axis;
    if (a < 0 || a >= ndim) {
        wgt_error(WGT_ERR_SHAPE, "%s: axis %d is out of range for rank %d", fn, axis, ndim);
        return 0;
    }
    *out = a;
    return 1;
}

int wgt_view_extent(int ndim, const int64_t *shape, const int64_t *strides, int64_t offset,
                    int64_t *lo, int64_t *hi) {
    int64_t l = offset, h = offset;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] == 0) return 0;
        int64_t span = (shape[i] - 1) * strides[i];
        if (span < 0) l += span;
        else h += span;
    }
    *lo = l;
    *hi = h;
    return 1;
}

/* Two distinct index tuples reach the same element when the dimensions, sorted by stride,
 * do not nest: each stride must exceed the span of all smaller ones. */
int wgt_view_overlaps_itself(int ndim, const int64_t *shape, const int64_t *strides) {
    int64_t st[WGT_MAX_DIMS], sh[WGT_MAX_DIMS];
    int n = 0;
    for (int i = 0; i < ndim; i++) /* empty: addresses nothing, and its strides may have wrapped */
        if (shape[i] == 0) return 0;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] == 1) continue;
        st[n] = strides[i] < 0 ? -strides[i] : strides[i];
        sh[n++] = shape[i];
    }
    for (int i = 1; i < n; i++) /* insertion sort by stride */
        for (int j = i; j > 0 && st[j] < st[j - 1]; j--) {
            int64_t t = st[j]; st[j] = st[j - 1]; st[j - 1] = t;
            t = sh[j]; sh[j] = sh[j - 1]; sh[j - 1] = t;
        }
    int64_t span = 0; /* largest offset reachable with the dimensions so far */
    for (int i = 0; i < n; i++) {
        if (st[i] <= span) return 1;
        span += st[i] * (sh[i] - 1);
    }
    return 0;
}
