/*
 * Array manipulation of the array API beyond the basic views: moveaxis and diagonal are
 * views; roll (two slices joined), tile (a broadcast view copied into shape), repeat (a take
 * of host-made positions), diag and trace are built from other ops, so both backends run
 * them with the kernels those ops use. Each checks its own arguments first, so messages name
 * it and the caller's values, never an op it is made of.
 */
#include <stdlib.h>
#include <string.h>

#include "indexing.h"
#include "manip.h"

wgt_tensor *wgt_moveaxis(wgt_tensor *a, int source, int destination) {
    static const char fn[] = "wgt_moveaxis";
    int src, dst, perm[WGT_MAX_DIMS];
    if (wgt_check_tensor(fn, "a", a) != WGT_OK || !wgt_normalize_axis(fn, source, a->ndim, &src) ||
        !wgt_normalize_axis(fn, destination, a->ndim, &dst))
        return NULL;
    wgt_moveaxis_perm(a->ndim, src, dst, perm);
    return wgt_permute(a, perm);
}

void wgt_moveaxis_perm(int ndim, int src, int dst, int *perm) {
    for (int d = 0, k = 0; d < ndim; d++) {
        if (d == dst) continue;
        if (k == src) k++;
        perm[d] = k++;
    }
    perm[dst] = src;
}

/* a rolled by shift along ax: the last shift entries come first. */
static wgt_tensor *roll_axis(wgt_tensor *a, int ax, int64_t shift) {
    int64_t n = a->shape[ax], s = n ? ((shift % n) + n) % n : 0;
    if (s == 0) return wgt_retain(a);
    wgt_tensor *parts[2] = {wgt_slice(a, ax, n - s, n, 1), wgt_slice(a, ax, 0, n - s, 1)};
    wgt_tensor *out = parts[0] && parts[1] ? wgt_concat(parts, 2, ax) : NULL;
    wgt_release(parts[0]);
    wgt_release(parts[1]);
    return out;
}

wgt_tensor *wgt_roll(wgt_tensor *a, int count, const int64_t *shifts, const int *axes) {
    static const char fn[] = "wgt_roll";
    if (wgt_check_tensor(fn, "a", a) != WGT_OK) return NULL;
    if (count < 1 || !shifts || (!axes && count != 1)) {
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: %d shifts%s; give at least one, and one alone without axes", fn,
                  count, shifts ? "" : " (shifts is NULL)");
        return NULL;
    }
    int ax[WGT_MAX_DIMS * 4];
    if (count > (int)(sizeof ax / sizeof *ax)) {
        wgt_error(WGT_ERR_LIMIT, "%s: %d shifts are more than the %d supported", fn, count, (int)(sizeof ax / sizeof *ax));
        return NULL;
    }
    for (int i = 0; axes && i < count; i++)
        if (!wgt_normalize_axis(fn, axes[i], a->ndim, &ax[i])) return NULL;
    if (!axes) { /* the flattened tensor, rolled, in a's shape */
        int64_t all = -1;
        wgt_tensor *flat = wgt_reshape(a, 1, &all), *r = flat ? roll_axis(flat, 0, shifts[0]) : NULL;
        wgt_tensor *out = r ? wgt_reshape(r, a->ndim, a->shape) : NULL;
        wgt_release(flat);
        wgt_release(r);
        return out;
    }
    wgt_tensor *out = wgt_retain(a);
    for (int i = 0; out && i < count; i++) {
        wgt_tensor *next = roll_axis(out, ax[i], shifts[i]);
        wgt_release(out);
        out = next;
    }
    return out;
}

int32_t *wgt_repeat_positions(int count, const int64_t *repeats, int64_t len, int64_t *total) {
    int64_t t = 0;
    for (int64_t i = 0; i < len; i++) t += repeats[count == 1 ? 0 : i];
    int32_t *pos = malloc((size_t)(t ? t : 1) * sizeof *pos);
    for (int64_t i = 0, k = 0; pos && i < len; i++)
        for (int64_t r = 0; r < repeats[count == 1 ? 0 : i]; r++) pos[k++] = (int32_t)i;
    *total = t;
    return pos;
}

wgt_tensor *wgt_repeat(wgt_tensor *a, int count, const int64_t *repeats, int axis) {
    static const char fn[] = "wgt_repeat";
    int ax;
    if (wgt_check_tensor(fn, "a", a) != WGT_OK || !wgt_normalize_axis(fn, axis, a->ndim, &ax)) return NULL;
    int64_t len = a->shape[ax];
    if (!repeats || (count != 1 && count != len)) {
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: %d repeats for %lld entries along axis %d; give one, or one per entry",
                  fn, count, (long long)len, ax);
        return NULL;
    }
    for (int i = 0; i < count; i++)
        if (repeats[i] < 0) {
            wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: repeats[%d] is %lld; repeats cannot be negative", fn, i,
                      (long long)repeats[i]);
            return NULL;
        }
    int64_t total = 0;
    for (int64_t i = 0; i < len && total <= INT32_MAX; i++) total += repeats[count == 1 ? 0 : i];
    if (total > INT32_MAX || len > INT32_MAX) {
        wgt_error(WGT_ERR_LIMIT, "%s: %lld entries along axis %d are beyond the 2^31 - 1 supported", fn,
                  (long long)total, ax);
        return NULL;
    }
    int32_t *pos = wgt_repeat_positions(count, repeats, len, &total);
    if (!pos) {
        wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory for %lld positions", fn, (long long)total);
        return NULL;
    }
    wgt_tensor *idx = wgt_tensor_from_data(a->storage->ctx, WGT_I32, 1, &total, pos, sizeof *pos * (size_t)total,
                                           WGT_USAGE_DEFAULT);
    free(pos);
    wgt_tensor *out = idx ? wgt_take_along(fn, a, ax, idx) : NULL;
    wgt_release(idx);
    return out;
}

int wgt_tile_layout(int ndim, const int64_t *shape, int nreps, const int64_t *reps, int64_t *view_shape,
                    int *rep_axes, int *nrep_axes, int64_t *out_shape) {
    int d = ndim > nreps ? ndim : nreps, n = 0;
    *nrep_axes = 0;
    for (int i = 0; i < d; i++) {
        int64_t s = i - (d - ndim) >= 0 ? shape[i - (d - ndim)] : 1, r = i - (d - nreps) >= 0 ? reps[i - (d - nreps)] : 1;
        out_shape[i] = s * r;
        if (r != 1) {
            if (n == WGT_MAX_DIMS) return -1;
            rep_axes[(*nrep_axes)++] = n;
            view_shape[n++] = r;
        }
        if (n == WGT_MAX_DIMS) return -1;
        view_shape[n++] = s;
    }
    return n;
}

wgt_tensor *wgt_tile(wgt_tensor *a, int nreps, const int64_t *reps) {
    static const char fn[] = "wgt_tile";
    if (wgt_check_tensor(fn, "a", a) != WGT_OK) return NULL;
    if (nreps < 0 || (nreps > 0 && !reps) || nreps > WGT_MAX_DIMS) {
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: %d repetitions; give 0 to %d", fn, nreps, WGT_MAX_DIMS);
        return NULL;
    }
    for (int i = 0; i < nreps; i++)
        if (reps[i] < 0) {
            wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: reps[%d] is %lld; repetitions cannot be negative", fn, i,
                      (long long)reps[i]);
            return NULL;
        }
    int64_t vshape[WGT_MAX_DIMS], oshape[WGT_MAX_DIMS];
    int rep_axes[WGT_MAX_DIMS], nrep;
    int vn = wgt_tile_layout(a->ndim, a->shape, nreps, reps, vshape, rep_axes, &nrep, oshape);
    int d = a->ndim > nreps ? a->ndim : nreps;
    if (vn < 0) {
        wgt_error(WGT_ERR_LIMIT, "%s: rank %d with repeated axes needs more than the %d dimensions supported", fn, d,
                  WGT_MAX_DIMS);
        return NULL;
    }
    /* a seen with a stride-0 dimension before each repeated one, then copied into shape. */
    int64_t src_shape[WGT_MAX_DIMS];
    memcpy(src_shape, vshape, sizeof src_shape);
    for (int i = 0; i < nrep; i++) src_shape[rep_axes[i]] = 1;
    wgt_tensor *v = wgt_reshape(a, vn, src_shape), *b = v ? wgt_broadcast_to(v, vn, vshape) : NULL;
    wgt_tensor *out = b ? wgt_reshape(b, d, oshape) : NULL;
    wgt_release(v);
    wgt_release(b);
    return out;
}

int wgt_diagonal_layout(const char *fn, const wgt_tensor *a, int64_t offset, int axis1, int axis2, int *ax1, int *ax2,
                        int64_t *len, int64_t *start) {
    if (!wgt_normalize_axis(fn, axis1, a->ndim, ax1) || !wgt_normalize_axis(fn, axis2, a->ndim, ax2)) return 0;
    if (*ax1 == *ax2) {
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: axis1 and axis2 are both %d; they must differ", fn, *ax1);
        return 0;
    }
    int64_t n1 = a->shape[*ax1], n2 = a->shape[*ax2];
    int64_t i0 = offset < 0 ? -offset : 0, j0 = offset > 0 ? offset : 0;
    int64_t l1 = n1 - i0, l2 = n2 - j0, l = l1 < l2 ? l1 : l2;
    *len = l > 0 ? l : 0;
    *start = *len ? i0 * a->strides[*ax1] + j0 * a->strides[*ax2] : 0;
    return 1;
}

/* Checks a diagonal's arguments (a of rank >= 2, two distinct axes) for fn; as
 * wgt_diagonal_layout. */
static int diagonal_args(const char *fn, wgt_tensor *a, int64_t offset, int axis1, int axis2, int *ax1, int *ax2,
                         int64_t *len, int64_t *start) {
    if (wgt_check_tensor(fn, "a", a) != WGT_OK) return 0;
    if (a->ndim < 2) {
        wgt_error(WGT_ERR_SHAPE, "%s: a has rank %d; a diagonal needs rank >= 2", fn, a->ndim);
        return 0;
    }
    return wgt_diagonal_layout(fn, a, offset, axis1, axis2, ax1, ax2, len, start);
}

wgt_tensor *wgt_diagonal(wgt_tensor *a, int64_t offset, int axis1, int axis2) {
    int ax1, ax2;
    int64_t len, start;
    if (!diagonal_args("wgt_diagonal", a, offset, axis1, axis2, &ax1, &ax2, &len, &start)) return NULL;
    int64_t shape[WGT_MAX_DIMS], strides[WGT_MAX_DIMS];
    int n = 0;
    for (int d = 0; d < a->ndim; d++)
        if (d != ax1 && d != ax2) shape[n] = a->shape[d], strides[n++] = a->strides[d];
    shape[n] = len;
    strides[n++] = a->strides[ax1] + a->strides[ax2];
    return wgt_tensor_new_view(a, n, shape, strides, a->offset + start);
}

wgt_tensor *wgt_trace(wgt_tensor *a, int64_t offset, int axis1, int axis2) {
    int ax1, ax2;
    int64_t len, start;
    if (!diagonal_args("wgt_trace", a, offset, axis1, axis2, &ax1, &ax2, &len, &start)) return NULL;
    wgt_tensor *d = wgt_diagonal(a, offset, axis1, axis2);
    int last = -1;
    wgt_tensor *out = d ? wgt_sum(d, 1, &last, 0) : NULL;
    wgt_release(d);
    return out;
}

int64_t *wgt_diagonal_positions(int ndim, const int64_t *shape, int ax1, int ax2, int64_t offset, int64_t *count) {
    int64_t cs[WGT_MAX_DIMS], oshape[WGT_MAX_DIMS], i0 = offset < 0 ? -offset : 0, j0 = offset > 0 ? offset : 0;
    wgt_contiguous_strides(ndim, shape, cs);
    int64_t l1 = shape[ax1] - i0, l2 = shape[ax2] - j0, len = l1 < l2 ? l1 : l2;
    if (len < 0) len = 0;
    int n = 0;
    for (int d = 0; d < ndim; d++)
        if (d != ax1 && d != ax2) oshape[n++] = shape[d];
    oshape[n++] = len;
    int64_t m = wgt_numel(n, oshape), at[WGT_MAX_DIMS] = {0};
    int64_t *pos = malloc((size_t)(m ? m : 1) * sizeof *pos);
    for (int64_t i = 0; pos && i < m; i++) {
        int64_t p = (i0 + at[n - 1]) * cs[ax1] + (j0 + at[n - 1]) * cs[ax2];
        for (int d = 0, k = 0; d < ndim; d++)
            if (d != ax1 && d != ax2) p += at[k++] * cs[d];
        pos[i] = p;
        for (int d = n - 1; d >= 0 && ++at[d] == oshape[d]; d--) at[d] = 0;
    }
    *count = m;
    return pos;
}

wgt_tensor *wgt_diag(wgt_tensor *a, int64_t k) {
    static const char fn[] = "wgt_diag";
    if (wgt_check_tensor(fn, "a", a) != WGT_OK) return NULL;
    if (a->ndim == 2) return wgt_diagonal(a, k, 0, 1);
    if (a->ndim != 1) {
        wgt_error(WGT_ERR_SHAPE, "%s: a has rank %d; it takes a vector (giving a matrix) or a matrix", fn, a->ndim);
        return NULL;
    }
    int64_t n = a->shape[0], size = n + (k < 0 ? -k : k);
    if (size > 46340) { /* size^2 positions in i32 */
        wgt_error(WGT_ERR_LIMIT, "%s: a %lld x %lld matrix is beyond the 46340 x 46340 supported", fn,
                  (long long)size, (long long)size);
        return NULL;
    }
    int64_t shape[2] = {size, size}, flat = size * size, count;
    int64_t *pos = wgt_diagonal_positions(2, shape, 0, 1, k, &count);
    int32_t *p32 = pos ? malloc((size_t)(count ? count : 1) * sizeof *p32) : NULL;
    for (int64_t i = 0; p32 && i < count; i++) p32[i] = (int32_t)pos[i];
    free(pos);
    if (!p32) {
        wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory", fn);
        return NULL;
    }
    wgt_context *ctx = a->storage->ctx;
    wgt_tensor *idx = wgt_tensor_from_data(ctx, WGT_I32, 1, &count, p32, sizeof *p32 * (size_t)count, WGT_USAGE_DEFAULT);
    free(p32);
    wgt_tensor *z = idx ? wgt_zeros(ctx, a->dtype, 1, &flat) : NULL;
    wgt_tensor *s = z ? wgt_scatter(z, 0, idx, a, WGT_SCATTER_REPLACE) : NULL;
    wgt_tensor *out = s ? wgt_reshape(s, 2, shape) : NULL;
    wgt_release(idx);
    wgt_release(z);
    wgt_release(s);
    return out;
}
