/*
 * Scans other than cumsum (reduce.c): running product, maximum and minimum along one axis,
 * and the positions the running maxima and minima came from. Like cumsum, the backend gets
 * the input view as it is (any strides) and a contiguous output of its shape; each row along
 * the axis is scanned in order, so the results do not depend on the layout.
 */
#include "node.h"
#include "core/dtype_table.h"

static wgt_tensor *scan(const char *fn, wgt_scan_op op, wgt_tensor *a, int axis) {
    int ax;
    if (wgt_check_tensor(fn, "a", a) != WGT_OK || !wgt_normalize_axis(fn, axis, a->ndim, &ax)) return NULL;
    if (wgt_dtype_is_narrow(a->dtype)) {
        /* Scanned widened (core/narrow.c): the product in the type cumsum sums in (i32 or u32,
         * wrapping there), the running maxima and minima and their positions in i32 or f32,
         * the maxima and minima cast back (exactly). bf16 and bool take no product. */
        wgt_dtype wide = op == WGT_SCAN_PROD ? wgt_narrow_sum_type(a->dtype) : wgt_narrow_wide_type(a->dtype);
        if (wgt_dtype_is_narrow(wide) || (op == WGT_SCAN_PROD && a->dtype == WGT_BOOL)) {
            wgt_error(WGT_ERR_DTYPE, "%s: a is %s, which takes no arithmetic; cast it first", fn,
                      wgt_dtype_name(a->dtype));
            return NULL;
        }
        wgt_tensor *w = wgt_cast(a, wide), *r = w ? scan(fn, op, w, axis) : NULL;
        wgt_release(w);
        return op == WGT_SCAN_MAX || op == WGT_SCAN_MIN ? wgt_narrow_cast_to(r, a->dtype) : r;
    }
    if (a->dtype != WGT_F32 && a->dtype != WGT_F16 && a->dtype != WGT_I32 && a->dtype != WGT_U32) {
        wgt_error(WGT_ERR_DTYPE, "%s: a is %s; scans take f32, f16, i32 or u32", fn, wgt_dtype_name(a->dtype));
        return NULL;
    }
    wgt_context *ctx = a->storage->ctx;
    wgt_dtype dt = op == WGT_SCAN_ARGMAX || op == WGT_SCAN_ARGMIN ? WGT_I32 : a->dtype;
    wgt_tensor *out = wgt_tensor_new(ctx, fn, dt, a->ndim, a->shape, WGT_USAGE_DEFAULT);
    if (!out || wgt_tensor_numel(out) == 0) return out;
    wgt_operand in_op, out_op;
    if (wgt_check_kernel_size(fn, out) != WGT_OK || wgt_view_operand(a, a->ndim, a->shape, a->strides, &in_op) != WGT_OK ||
        wgt_output_operand(out, &out_op) != WGT_OK || wgt_record_scan(ctx, fn, op, &out_op, &in_op, ax) != WGT_OK) {
        wgt_release(out);
        return NULL;
    }
    return out;
}

wgt_tensor *wgt_cumprod(wgt_tensor *a, int axis) { return scan("wgt_cumprod", WGT_SCAN_PROD, a, axis); }
wgt_tensor *wgt_cummax(wgt_tensor *a, int axis) { return scan("wgt_cummax", WGT_SCAN_MAX, a, axis); }
wgt_tensor *wgt_cummin(wgt_tensor *a, int axis) { return scan("wgt_cummin", WGT_SCAN_MIN, a, axis); }
wgt_tensor *wgt_cumargmax(wgt_tensor *a, int axis) { return scan("wgt_cumargmax", WGT_SCAN_ARGMAX, a, axis); }
wgt_tensor *wgt_cumargmin(wgt_tensor *a, int axis) { return scan("wgt_cumargmin", WGT_SCAN_ARGMIN, a, axis); }
