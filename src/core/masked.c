/*
 * masked_fill and masked_select. A mask is a bool tensor, or one of any type (nonzero is true), that
 * broadcasts to a's shape. masked_fill is a where with a scalar of a's type (the value
 * checked as the scalar ops check theirs). masked_select's length depends on the mask's
 * values, so it reads the mask (waiting for whatever computes it) and gathers the selected
 * entries of a's flattened view by their row-major positions.
 */
#include <stdlib.h>
#include <string.h>

#include "indexing.h"
#include "masked.h"
#include "core/dtype_table.h"

static wgt_status check_mask(const char *fn, wgt_tensor *a, wgt_tensor *mask) {
    wgt_status st;
    if ((st = wgt_check_tensor(fn, "a", a)) != WGT_OK || (st = wgt_check_tensor(fn, "mask", mask)) != WGT_OK ||
        (st = wgt_check_same_context(fn, a, mask)) != WGT_OK)
        return st;
    int fits = mask->ndim <= a->ndim;
    for (int d = 0; fits && d < mask->ndim; d++) {
        int64_t m = mask->shape[mask->ndim - 1 - d];
        fits = m == 1 || m == a->shape[a->ndim - 1 - d];
    }
    if (!fits) {
        char sa[256], sm[256];
        wgt_format_shape(sa, sizeof sa, a->ndim, a->shape);
        wgt_format_shape(sm, sizeof sm, mask->ndim, mask->shape);
        return wgt_error(WGT_ERR_SHAPE, "%s: the mask of shape %s does not broadcast to a's shape %s", fn, sm, sa);
    }
    return WGT_OK;
}

wgt_tensor *wgt_masked_fill(wgt_tensor *a, wgt_tensor *mask, double value) {
    static const char fn[] = "wgt_masked_fill";
    if (check_mask(fn, a, mask) != WGT_OK || wgt_check_scalar(fn, "value", a->dtype, value) != WGT_OK) return NULL;
    wgt_tensor *v = wgt_scalar(a->storage->ctx, a->dtype, value);
    wgt_tensor *out = v ? wgt_where(mask, v, a) : NULL;
    wgt_release(v);
    return out;
}

wgt_tensor *wgt_masked_positions(const char *fn, wgt_tensor *a, wgt_tensor *mask) {
    wgt_context *ctx = a->storage->ctx;
    int64_t n = wgt_numel(a->ndim, a->shape);
    if (n > INT32_MAX) {
        wgt_error(WGT_ERR_LIMIT, "%s: %lld elements are beyond the 2^31 - 1 supported", fn, (long long)n);
        return NULL;
    }
    /* The mask as bool in a's shape, read to the host. */
    wgt_tensor *ne = mask->dtype == WGT_BOOL ? wgt_retain(mask) : wgt_cast(mask, WGT_BOOL);
    wgt_tensor *full = ne ? wgt_broadcast_to(ne, a->ndim, a->shape) : NULL, *flat = NULL;
    uint8_t *bits = malloc((size_t)(n ? n : 1) * sizeof *bits);
    int32_t *pos = malloc((size_t)(n ? n : 1) * sizeof *pos);
    int64_t count = 0, all = n;
    wgt_tensor *out = NULL;
    if (!bits || !pos) {
        wgt_error(WGT_ERR_OUT_OF_MEMORY, "%s: out of host memory for a mask of %lld elements", fn, (long long)n);
    } else if (full && (flat = wgt_reshape(full, 1, &all)) &&
               (n == 0 || wgt_tensor_read(flat, bits, (size_t)n * sizeof *bits) == WGT_OK)) {
        for (int64_t i = 0; i < n; i++)
            if (bits[i]) pos[count++] = (int32_t)i;
        out = wgt_tensor_from_data(ctx, WGT_I32, 1, &count, pos, sizeof *pos * (size_t)count, WGT_USAGE_DEFAULT);
    }
    free(bits);
    free(pos);
    wgt_tensor *tmp[] = {ne, full, flat};
    for (size_t k = 0; k < sizeof tmp / sizeof *tmp; k++) wgt_release(tmp[k]);
    return out;
}

wgt_tensor *wgt_masked_select(wgt_tensor *a, wgt_tensor *mask) {
    static const char fn[] = "wgt_masked_select";
    if (check_mask(fn, a, mask) != WGT_OK) return NULL;
    wgt_tensor *pos = wgt_masked_positions(fn, a, mask);
    int64_t all = -1;
    wgt_tensor *flat = pos ? wgt_reshape(a, 1, &all) : NULL;
    wgt_tensor *out = flat ? wgt_take_along(fn, flat, 0, pos) : NULL;
    wgt_release(pos);
    wgt_release(flat);
    return out;
}
