/*
 * The linear-algebra ops composed from others, so that both backends run them lazily with no
 * kernels of their own: matrix_power (repeated squaring with matmul; a negative power through
 * the host inverse) and cross (3-vectors, from slices, products and differences).
 */
#include <stdlib.h>
#include <string.h>

#include "node.h"

/* The identity [..., n, n] at a's shape and type. */
static wgt_tensor *identity_like(const char *fn, wgt_tensor *a) {
    int64_t n = a->shape[a->ndim - 1];
    float *f = calloc((size_t)(n > 0 ? n * n : 1), sizeof(float));
    if (!f) return wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory for a %lld x %lld identity", fn, (long long)n, (long long)n), NULL;
    for (int64_t i = 0; i < n; i++) f[i * n + i] = 1;
    int64_t sq[2] = {n, n};
    wgt_tensor *e = wgt_tensor_from_data(a->storage->ctx, WGT_F32, 2, sq, f, sizeof(float) * (size_t)(n * n), WGT_USAGE_DEFAULT);
    free(f);
    wgt_tensor *c = e && a->dtype != WGT_F32 ? wgt_cast(e, a->dtype) : e ? wgt_retain(e) : NULL;
    wgt_tensor *b = c ? wgt_broadcast_to(c, a->ndim, a->shape) : NULL;
    wgt_tensor *out = b ? wgt_contiguous(b) : NULL;
    wgt_release(e);
    wgt_release(c);
    wgt_release(b);
    return out;
}

wgt_tensor *wgt_linalg_matrix_power(wgt_tensor *a, int64_t n) {
    static const char fn[] = "wgt_linalg_matrix_power";
    if (wgt_check_tensor(fn, "a", a) != WGT_OK) return NULL;
    char s[256];
    wgt_format_shape(s, sizeof s, a->ndim, a->shape);
    if (a->dtype != WGT_F32 && a->dtype != WGT_F16) {
        wgt_error(WGT_ERR_DTYPE, "%s: takes floating types (f32, f16), not %s", fn, wgt_dtype_name(a->dtype));
        return NULL;
    }
    if (a->ndim < 2 || a->shape[a->ndim - 1] != a->shape[a->ndim - 2]) {
        wgt_error(WGT_ERR_SHAPE, "%s: a must be a (batch of) square matrices [..., n, n], not %s", fn, s);
        return NULL;
    }
    if (n == 0) return identity_like(fn, a);
    /* a^-k = (a^-1)^k; the inverse is the host's, and fails naming a singular matrix. */
    wgt_tensor *base = n < 0 ? wgt_linalg_inv(a) : wgt_retain(a), *acc = NULL;
    uint64_t k = n < 0 ? (uint64_t)0 - (uint64_t)n : (uint64_t)n;
    while (base) {
        if (k & 1) {
            wgt_tensor *next = acc ? wgt_matmul(acc, base) : wgt_contiguous(base);
            wgt_release(acc);
            if (!(acc = next)) break;
        }
        if (!(k >>= 1)) break;
        wgt_tensor *sq = wgt_matmul(base, base);
        wgt_release(base);
        base = sq;
    }
    if (!base) {
        wgt_release(acc);
        acc = NULL;
    }
    wgt_release(base);
    return acc;
}

/* Component i (0..2) of t along axis, kept as a length-1 dimension. */
static wgt_tensor *component(wgt_tensor *t, int axis, int i) { return wgt_slice(t, axis, i, i + 1, 1); }

/* x[i] y[j] - x[j] y[i] over the components of a and b (broadcast views). */
static wgt_tensor *minor(wgt_tensor *a, wgt_tensor *b, int axis, int i, int j) {
    wgt_tensor *t[6];
    t[0] = component(a, axis, i), t[1] = component(b, axis, j), t[2] = component(a, axis, j), t[3] = component(b, axis, i);
    t[4] = t[0] && t[1] ? wgt_mul(t[0], t[1]) : NULL;
    t[5] = t[2] && t[3] ? wgt_mul(t[2], t[3]) : NULL;
    wgt_tensor *r = t[4] && t[5] ? wgt_sub(t[4], t[5]) : NULL;
    for (int k = 0; k < 6; k++) wgt_release(t[k]);
    return r;
}

wgt_tensor *wgt_linalg_cross(wgt_tensor *a, wgt_tensor *b, int axis) {
    static const char fn[] = "wgt_linalg_cross";
    if (wgt_check_tensor(fn, "a", a) != WGT_OK || wgt_check_tensor(fn, "b", b) != WGT_OK ||
        wgt_check_same_context(fn, a, b) != WGT_OK)
        return NULL;
    char sa[256], sb[256];
    wgt_format_shape(sa, sizeof sa, a->ndim, a->shape);
    wgt_format_shape(sb, sizeof sb, b->ndim, b->shape);
    int nmin = a->ndim < b->ndim ? a->ndim : b->ndim;
    /* The standard counts axis from the end, where both operands have it; a non-negative axis
     * is the same dimension of both only when their ranks agree. */
    if (axis < -nmin || axis >= nmin || (axis >= 0 && a->ndim != b->ndim)) {
        wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: axis %d is out of range for a %s and b %s (from %d to -1%s)", fn, axis, sa,
                  sb, -nmin, a->ndim == b->ndim && nmin ? ", or up to ndim - 1" : "");
        return NULL;
    }
    int from_end = axis < 0 ? axis : axis - a->ndim;
    if (a->shape[a->ndim + from_end] != 3 || b->shape[b->ndim + from_end] != 3) {
        wgt_error(WGT_ERR_SHAPE, "%s: a %s and b %s must both have length 3 along axis %d", fn, sa, sb, axis);
        return NULL;
    }
    int nd;
    int64_t shape[WGT_MAX_DIMS];
    if (wgt_broadcast_shapes(fn, a->ndim, a->shape, b->ndim, b->shape, &nd, shape) != WGT_OK) return NULL;
    int ax = nd + from_end;
    wgt_tensor *ab = wgt_broadcast_to(a, nd, shape), *bb = ab ? wgt_broadcast_to(b, nd, shape) : NULL;
    wgt_tensor *c[3] = {0};
    for (int i = 0; bb && i < 3; i++)
        if (!(c[i] = minor(ab, bb, ax, (i + 1) % 3, (i + 2) % 3))) break;
    wgt_tensor *out = c[2] ? wgt_concat(c, 3, ax) : NULL;
    for (int i = 0; i < 3; i++) wgt_release(c[i]);
    wgt_release(ab);
    wgt_release(bb);
    return out;
}
