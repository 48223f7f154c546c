/*
 * wgt_clip: a limited to tensor bounds, as numpy.clip and the array API's clip. It is
 * minimum(maximum(a, lo), hi), recorded as those two elementwise nodes so the scheduler fuses
 * them with their neighbours; that order is what gives NumPy's answers at the edges (a NaN
 * anywhere propagates, lo > hi gives hi); the types are theirs (the narrow integers computed
 * in i32, the 64-bit ones as they are). The checks are made here first so a bad argument is
 * reported under this function's name.
 */
#include "node.h"

static wgt_status check_bound(const char *fn, const char *name, const wgt_tensor *a, const wgt_tensor *bound) {
    if (!bound) return WGT_OK;
    if (wgt_check_tensor(fn, name, bound) != WGT_OK || wgt_check_same_context(fn, a, bound) != WGT_OK) return wgt_last_status();
    if (bound->dtype != a->dtype)
        return wgt_error(WGT_ERR_DTYPE, "%s: %s is %s but a is %s; cast it first", fn, name,
                         wgt_dtype_name(bound->dtype), wgt_dtype_name(a->dtype));
    return WGT_OK;
}

wgt_tensor *wgt_clip(wgt_tensor *a, wgt_tensor *lo, wgt_tensor *hi) {
    static const char fn[] = "wgt_clip";
    if (wgt_check_tensor(fn, "a", a) != WGT_OK || check_bound(fn, "lo", a, lo) != WGT_OK ||
        check_bound(fn, "hi", a, hi) != WGT_OK)
        return NULL;
    if (a->dtype == WGT_BOOL || a->dtype == WGT_BF16) { /* maximum and minimum refuse them too */
        wgt_error(WGT_ERR_DTYPE, "%s: a is %s, which takes no arithmetic; cast it first", fn, wgt_dtype_name(a->dtype));
        return NULL;
    }
    /* All three shapes must broadcast together, checked once so the message names them all. */
    int ndim = a->ndim;
    int64_t shape[WGT_MAX_DIMS], both[WGT_MAX_DIMS];
    for (int d = 0; d < ndim; d++) shape[d] = a->shape[d];
    const wgt_tensor *const bounds[2] = {lo, hi};
    for (int k = 0; k < 2; k++) {
        if (!bounds[k]) continue;
        if (wgt_broadcast_shapes(fn, ndim, shape, bounds[k]->ndim, bounds[k]->shape, &ndim, both) != WGT_OK) return NULL;
        for (int d = 0; d < ndim; d++) shape[d] = both[d];
    }
    if (!lo && !hi) return wgt_contiguous(a);
    wgt_tensor *low = lo ? wgt_maximum(a, lo) : wgt_retain(a);
    if (!low || !hi) return low;
    wgt_tensor *out = wgt_minimum(low, hi);
    wgt_release(low);
    return out;
}
