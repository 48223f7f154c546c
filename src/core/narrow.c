/*
 * The narrow types (bool, i8, u8, i16, u16, bf16) in the ops that compute on values rather
 * than move them. Each narrow operand is widened to the type that holds all its values
 * exactly (i32 for the integers and bool, f32 for bf16), the op runs there, and the result
 * comes back: predicates (comparisons, logic, isnan...) as bool, where as a's type, and
 * arithmetic on the narrow integers cast back to their type. i32 arithmetic wraps modulo
 * 2^32 and the cast to a narrower integer keeps the low bits, so the narrow result wraps
 * exactly as NumPy's does. The backends then need only the casts and the moves of these
 * types. Which type a sum of each type gives is decided here too, in one place.
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

wgt_tensor *wgt_narrow_cast_to(wgt_tensor *t, wgt_dtype dtype) {
    if (!t || t->dtype == dtype) return t;
    wgt_tensor *out = wgt_cast(t, dtype);
    wgt_release(t);
    return out;
}

wgt_tensor *wgt_narrow_binary(wgt_tensor *a, wgt_tensor *b, wgt_tensor *(*op)(wgt_tensor *, wgt_tensor *)) {
    wgt_tensor *wa = wgt_narrow_widen(a), *wb = wa ? wgt_narrow_widen(b) : NULL;
    wgt_tensor *out = wa && wb ? op(wa, wb) : NULL;
    wgt_release(wa);
    wgt_release(wb);
    return out;
}

wgt_tensor *wgt_narrow_where(wgt_tensor *cond, wgt_tensor *a, wgt_tensor *b) {
    wgt_tensor *wc = cond->dtype == WGT_BOOL ? wgt_retain(cond) : wgt_narrow_widen(cond);
    wgt_tensor *wa = wc ? wgt_narrow_widen(a) : NULL;
    wgt_tensor *wb = wa ? wgt_narrow_widen(b) : NULL;
    /* The values all came from a's type, so the cast back is exact. */
    wgt_tensor *out = wgt_narrow_cast_to(wb ? wgt_where(wc, wa, wb) : NULL, a->dtype);
    wgt_release(wc);
    wgt_release(wa);
    wgt_release(wb);
    return out;
}

/* sum, prod and cumsum of a signed narrow integer or bool give i32 and of an unsigned one u32
 * (the array API asks for the default integer type, which would be i64: there is none yet);
 * the other types keep theirs. */
wgt_dtype wgt_narrow_sum_type(wgt_dtype dtype) {
    switch (dtype) {
    case WGT_BOOL: case WGT_I8: case WGT_I16: return WGT_I32;
    case WGT_U8: case WGT_U16: return WGT_U32;
    default: return dtype;
    }
}
