/*
 * The narrow types (bool, i8, u8, i16, u16, bf16) in the ops that compute on values rather
 * than move them: comparisons, logic and where take them by widening each narrow operand to
 * the type that holds all its values exactly (i32 for the integers and bool, f32 for bf16),
 * running the op there and, for where, casting the result back. The answers are those of
 * the narrow type itself; the backends then need only the casts and the moves of these types.
 */
#include "node.h"
#include "core/dtype_table.h"

wgt_dtype wgt_narrow_wide_type(wgt_dtype dtype) {
    if (!wgt_dtype_is_narrow(dtype)) return dtype;
    return dtype == WGT_BF16 ? WGT_F32 : WGT_I32;
}

wgt_tensor *wgt_narrow_widen(wgt_tensor *t) {
    if (!wgt_dtype_is_narrow(t->dtype)) return wgt_retain(t);
    return wgt_cast(t, wgt_narrow_wide_type(t->dtype));
}

wgt_tensor *wgt_narrow_binary(wgt_tensor *a, wgt_tensor *b, wgt_tensor *(*op)(wgt_tensor *, wgt_tensor *)) {
    wgt_tensor *wa = wgt_narrow_widen(a), *wb = wa ? wgt_narrow_widen(b) : NULL;
    wgt_tensor *out = wa && wb ? op(wa, wb) : NULL;
    wgt_release(wa);
    wgt_release(wb);
    return out;
}

wgt_tensor *wgt_narrow_where(wgt_tensor *cond, wgt_tensor *a, wgt_tensor *b) {
    wgt_tensor *wc = wgt_narrow_widen(cond), *wa = wc ? wgt_narrow_widen(a) : NULL;
    wgt_tensor *wb = wa ? wgt_narrow_widen(b) : NULL;
    wgt_tensor *wide = wb ? wgt_where(wc, wa, wb) : NULL;
    /* The values all came from a's type, so the cast back is exact. */
    wgt_tensor *out = wide && wide->dtype != a->dtype ? wgt_cast(wide, a->dtype) : (wide ? wgt_retain(wide) : NULL);
    wgt_release(wc);
    wgt_release(wa);
    wgt_release(wb);
    wgt_release(wide);
    return out;
}
