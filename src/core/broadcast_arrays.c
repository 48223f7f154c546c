/*
 * wgt_broadcast_arrays and wgt_meshgrid: several views at once, each composed of the public
 * view functions (wgt_reshape, wgt_broadcast_to) on the caller's handles, so each output is
 * an ordinary view with those functions' gradients. They take arrays of tensors, so
 * scripts/gen_api.py writes no entry point for them (SPECIAL): these are the entry points,
 * working on handles, and the records are only looked at to check the arguments.
 */
#include <stdio.h>

#define WGT_API_PROTOTYPES_ONLY /* the public names: calls go through the handle entry points */
#include "api_names.h"
#include "handles.h"
#include "tensor.h"

/* Checks the arguments (messages name tensors[i]); every out entry starts NULL. */
static wgt_status check_args(const char *fn, int count, wgt_tensor *const *tensors, wgt_tensor **out) {
    if (count < 0 || (count > 0 && (!tensors || !out)))
        return wgt_error(WGT_ERR_INVALID_ARGUMENT, "%s: count %d with tensors %s and out %s", fn, count,
                         tensors ? "given" : "NULL", out ? "given" : "NULL");
    for (int i = 0; i < count; i++) out[i] = NULL;
    for (int i = 0; i < count; i++) {
        char name[32];
        snprintf(name, sizeof name, "tensors[%d]", i);
        wgt_status st = wgt_check_tensor(fn, name, wgt_handle_arg(tensors[i]));
        if (st != WGT_OK) return st;
    }
    return WGT_OK;
}

/* On failure, releases the outputs made so far and leaves every entry NULL. */
static wgt_status finish(int count, wgt_tensor **out) {
    for (int i = 0; i < count; i++)
        if (!out[i]) {
            wgt_status st = wgt_last_status();
            for (int j = 0; j < count; j++) {
                wgt_release(out[j]);
                out[j] = NULL;
            }
            return st;
        }
    return WGT_OK;
}

wgt_status wgt_broadcast_arrays(int count, wgt_tensor *const *tensors, wgt_tensor **out) {
    static const char fn[] = "wgt_broadcast_arrays";
    int nd = 0;
    int64_t shape[WGT_MAX_DIMS], prev[WGT_MAX_DIMS];
    wgt_status st = check_args(fn, count, tensors, out);
    for (int i = 0; st == WGT_OK && i < count; i++) {
        const wgt_tensor *t = wgt_handle_arg(tensors[i]);
        for (int d = 0; d < nd; d++) prev[d] = shape[d]; /* the fold must not read what it writes */
        st = wgt_broadcast_shapes(fn, nd, prev, t->ndim, t->shape, &nd, shape);
    }
    if (st != WGT_OK) return st;
    for (int i = 0; i < count; i++) out[i] = wgt_broadcast_to(tensors[i], nd, shape);
    return finish(count, out);
}

wgt_status wgt_meshgrid(int count, wgt_tensor *const *tensors, int indexing_ij, wgt_tensor **out) {
    static const char fn[] = "wgt_meshgrid";
    int64_t len[WGT_MAX_DIMS], grid[WGT_MAX_DIMS];
    wgt_status st = check_args(fn, count, tensors, out);
    if (st != WGT_OK) return st;
    if (count > WGT_MAX_DIMS)
        return wgt_error(WGT_ERR_SHAPE, "%s: %d tensors make a grid of %d dimensions (at most %d)", fn, count, count,
                         WGT_MAX_DIMS);
    for (int i = 0; i < count; i++) {
        const wgt_tensor *t = wgt_handle_arg(tensors[i]);
        if (t->ndim != 1)
            return wgt_error(WGT_ERR_SHAPE, "%s: tensors[%d] has %d dimensions; the inputs must be 1-D", fn, i, t->ndim);
        grid[i] = len[i] = t->shape[0];
    }
    /* 'xy': the first two inputs run along the grid's second and first axes. */
    int swap = !indexing_ij && count >= 2;
    if (swap) grid[0] = len[1], grid[1] = len[0];
    for (int i = 0; i < count; i++) {
        int64_t along[WGT_MAX_DIMS];
        for (int d = 0; d < count; d++) along[d] = 1;
        along[swap && i < 2 ? 1 - i : i] = len[i];
        wgt_tensor *v = wgt_reshape(tensors[i], count, along);
        out[i] = v ? wgt_broadcast_to(v, count, grid) : NULL;
        wgt_release(v);
        if (!out[i]) break;
    }
    return finish(count, out);
}
