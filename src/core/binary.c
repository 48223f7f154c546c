/*
 * Binary ops, comparisons, logical ops, where and the tensor-with-scalar forms: validate
 * operands, broadcast them to a common shape, create the output and hand the backend
 * operands it can run on directly (strided and broadcast inputs are read in place, never
 * copied first). wgt_contiguous lives here too, as the one-input copy through the backend.
 */
#include <stdio.h>

#include "node.h"
#include "core/dtype_table.h"

/* How an op constrains its operands' types and what type it gives. */
typedef enum {
    KIND_ARITH,   /* a and b share a type; the result has it */
    KIND_FLOAT,   /* as ARITH, floating types only */
    KIND_COMPARE, /* a and b share a type; the result is bool */
    KIND_LOGICAL, /* any types, may differ (nonzero is true); the result is bool */
    KIND_INT      /* as ARITH, integer types only (bitwise ops) */
} op_kind;

/* Each op's name, kind and entry point (for running it again on promoted or widened
 * operands): one table, so an op added without its entry is a visible gap here. */
static const struct {
    const char *name;
    op_kind kind;
    wgt_tensor *(*entry)(wgt_tensor *, wgt_tensor *);
} binary_ops[WGT_BINARY_COUNT] = {
    [WGT_BINARY_ADD] = {"wgt_add", KIND_ARITH, wgt_add},
    [WGT_BINARY_SUB] = {"wgt_sub", KIND_ARITH, wgt_sub},
    [WGT_BINARY_MUL] = {"wgt_mul", KIND_ARITH, wgt_mul},
    [WGT_BINARY_DIV] = {"wgt_div", KIND_ARITH, wgt_div},
    [WGT_BINARY_POW] = {"wgt_pow", KIND_ARITH, wgt_pow},
    [WGT_BINARY_MAXIMUM] = {"wgt_maximum", KIND_ARITH, wgt_maximum},
    [WGT_BINARY_MINIMUM] = {"wgt_minimum", KIND_ARITH, wgt_minimum},
    [WGT_BINARY_MOD] = {"wgt_mod", KIND_ARITH, wgt_mod},
    [WGT_BINARY_ATAN2] = {"wgt_atan2", KIND_FLOAT, wgt_atan2},
    [WGT_BINARY_EQ] = {"wgt_eq", KIND_COMPARE, wgt_eq},
    [WGT_BINARY_NE] = {"wgt_ne", KIND_COMPARE, wgt_ne},
    [WGT_BINARY_LT] = {"wgt_lt", KIND_COMPARE, wgt_lt},
    [WGT_BINARY_LE] = {"wgt_le", KIND_COMPARE, wgt_le},
    [WGT_BINARY_GT] = {"wgt_gt", KIND_COMPARE, wgt_gt},
    [WGT_BINARY_GE] = {"wgt_ge", KIND_COMPARE, wgt_ge},
    [WGT_BINARY_LOGICAL_AND] = {"wgt_logical_and", KIND_LOGICAL, wgt_logical_and},
    [WGT_BINARY_LOGICAL_OR] = {"wgt_logical_or", KIND_LOGICAL, wgt_logical_or},
    [WGT_BINARY_LOGADDEXP] = {"wgt_logaddexp", KIND_FLOAT, wgt_logaddexp},
    [WGT_BINARY_HYPOT] = {"wgt_hypot", KIND_FLOAT, wgt_hypot},
    [WGT_BINARY_COPYSIGN] = {"wgt_copysign", KIND_FLOAT, wgt_copysign},
    [WGT_BINARY_NEXTAFTER] = {"wgt_nextafter", KIND_FLOAT, wgt_nextafter},
    [WGT_BINARY_BITWISE_AND] = {"wgt_bitwise_and", KIND_INT, wgt_bitwise_and},
    [WGT_BINARY_BITWISE_OR] = {"wgt_bitwise_or", KIND_INT, wgt_bitwise_or},
    [WGT_BINARY_BITWISE_XOR] = {"wgt_bitwise_xor", KIND_INT, wgt_bitwise_xor},
    [WGT_BINARY_LEFT_SHIFT] = {"wgt_bitwise_left_shift", KIND_INT, wgt_bitwise_left_shift},
    [WGT_BINARY_RIGHT_SHIFT] = {"wgt_bitwise_right_shift", KIND_INT, wgt_bitwise_right_shift},
    [WGT_BINARY_FLOOR_DIVIDE] = {"wgt_floor_divide", KIND_ARITH, wgt_floor_divide},
    [WGT_BINARY_LOGICAL_XOR] = {"wgt_logical_xor", KIND_LOGICAL, wgt_logical_xor},
};

/* New references to a and b cast to their common type; 0 (nothing held) on failure. */
static int cast_pair(wgt_tensor *a, wgt_tensor *b, wgt_dtype common, wgt_tensor **pa, wgt_tensor **pb) {
    *pa = a->dtype == common ? wgt_retain(a) : wgt_cast(a, common);
    *pb = !*pa ? NULL : b->dtype == common ? wgt_retain(b) : wgt_cast(b, common);
    if (*pb) return 1;
    wgt_release(*pa);
    return 0;
}

/* op on a and b cast to their common type (both checked, of different types). */
static wgt_tensor *promoted(wgt_binary_op op, wgt_tensor *a, wgt_tensor *b, wgt_dtype common) {
    wgt_tensor *pa, *pb;
    if (!cast_pair(a, b, common, &pa, &pb)) return NULL;
    wgt_tensor *out = binary_ops[op].entry(pa, pb);
    wgt_release(pa);
    wgt_release(pb);
    return out;
}

/* The common type of a and b by the array API's promotion, or an error naming both. */
static int common_type(const char *fn, wgt_dtype a, wgt_dtype b, wgt_dtype *out) {
    const char *why;
    if (wgt_dtype_promote(a, b, out, &why)) {
        if (!wgt_dtype_is_64bit(*out) || wgt_takes_int64(fn)) return 1;
        wgt_error(WGT_ERR_DTYPE, "%s: %s with %s promotes to %s, which this function does not take (docs/ops.md lists "
                  "the functions of the 64-bit integer types); cast both operands first", fn, wgt_dtype_name(a),
                  wgt_dtype_name(b), wgt_dtype_name(*out));
        return 0;
    }
    wgt_error(WGT_ERR_DTYPE, "%s: operand types differ (a is %s, b is %s) and do not promote: %s; cast one first", fn,
              wgt_dtype_name(a), wgt_dtype_name(b), why);
    return 0;
}

/* fn is the public name for messages: the *_scalar forms pass their own. */
static wgt_tensor *run_binary(const char *fn, wgt_binary_op op, wgt_tensor *a, wgt_tensor *b) {
    op_kind kind = binary_ops[op].kind;
    if (wgt_check_tensor(fn, "a", a) != WGT_OK || wgt_check_tensor(fn, "b", b) != WGT_OK ||
        wgt_check_same_context(fn, a, b) != WGT_OK)
        return NULL;
    wgt_dtype common = a->dtype;
    if (kind != KIND_LOGICAL && a->dtype != b->dtype && !common_type(fn, a->dtype, b->dtype, &common)) return NULL;
    /* Operands of two types are checked again once promoted. */
    if (kind == KIND_FLOAT && a->dtype == b->dtype && a->dtype != WGT_F32 && a->dtype != WGT_F16) {
        wgt_error(WGT_ERR_DTYPE, "%s: takes floating types (f32, f16), not %s", fn, wgt_dtype_name(a->dtype));
        return NULL;
    }
    /* bool takes the bitwise and, or and xor (as the array API asks), never the shifts. */
    int bitwise_logic = op == WGT_BINARY_BITWISE_AND || op == WGT_BINARY_BITWISE_OR || op == WGT_BINARY_BITWISE_XOR;
    if (kind == KIND_INT && a->dtype == b->dtype && !wgt_dtype_is_integer(a->dtype) && !wgt_dtype_is_64bit(a->dtype) &&
        !(a->dtype == WGT_BOOL && bitwise_logic)) {
        wgt_error(WGT_ERR_DTYPE, "%s: takes integer types (i32, u32, i64, u64, i16, u16, i8, u8%s), not %s", fn,
                  bitwise_logic ? ", bool" : "", wgt_dtype_name(a->dtype));
        return NULL;
    }
    /* Arithmetic on the narrow types: the integers only (bool and bf16 take none). */
    if (kind == KIND_ARITH && a->dtype == b->dtype && wgt_dtype_is_narrow(a->dtype) && !wgt_dtype_is_integer(a->dtype)) {
        wgt_error(WGT_ERR_DTYPE, "%s: takes no %s operands (the array API leaves this arithmetic undefined); cast first",
                  fn, wgt_dtype_name(a->dtype));
        return NULL;
    }
    int ndim;
    int64_t shape[WGT_MAX_DIMS], sa[WGT_MAX_DIMS], sb[WGT_MAX_DIMS];
    if (wgt_broadcast_shapes(fn, a->ndim, a->shape, b->ndim, b->shape, &ndim, shape) != WGT_OK) return NULL;
    if (kind != KIND_LOGICAL && a->dtype != b->dtype) return promoted(op, a, b, common);
    int predicate = kind == KIND_COMPARE || kind == KIND_LOGICAL;
    if (wgt_dtype_is_narrow(a->dtype) || wgt_dtype_is_narrow(b->dtype)) { /* computed wide (narrow.c) */
        wgt_tensor *wide = wgt_narrow_binary(a, b, binary_ops[op].entry);
        /* Predicates give bool already; bitwise ops on bool give 0 or 1, so the cast back is exact. */
        return predicate ? wide : wgt_narrow_cast_to(wide, a->dtype);
    }
    wgt_context *ctx = a->storage->ctx;
    /* The kernels give predicates as u32 0/1, cast to bool below. */
    wgt_dtype out_dtype = predicate ? WGT_U32 : a->dtype;
    wgt_tensor *out = wgt_tensor_new(ctx, fn, out_dtype, ndim, shape, WGT_USAGE_DEFAULT);
    if (!out) return NULL;
    if (wgt_tensor_numel(out) == 0) return predicate ? wgt_narrow_cast_to(out, WGT_BOOL) : out;
    if (wgt_check_kernel_size(fn, out) != WGT_OK) goto fail;
    wgt_broadcast_strides(a, ndim, shape, sa);
    wgt_broadcast_strides(b, ndim, shape, sb);
    wgt_operand oa, ob, oo;
    if (wgt_view_operand(a, ndim, shape, sa, &oa) != WGT_OK || wgt_view_operand(b, ndim, shape, sb, &ob) != WGT_OK ||
        wgt_output_operand(out, &oo) != WGT_OK)
        goto fail;
    if (wgt_record_binary(ctx, fn, op, &oo, &oa, &ob) != WGT_OK) goto fail;
    return predicate ? wgt_narrow_cast_to(out, WGT_BOOL) : out;
fail:
    wgt_release(out);
    return NULL;
}

#define BINARY(name, op) \
    wgt_tensor *wgt_##name(wgt_tensor *a, wgt_tensor *b) { return run_binary("wgt_" #name, op, a, b); }
BINARY(add, WGT_BINARY_ADD)
BINARY(sub, WGT_BINARY_SUB)
BINARY(mul, WGT_BINARY_MUL)
BINARY(div, WGT_BINARY_DIV)
BINARY(pow, WGT_BINARY_POW)
BINARY(maximum, WGT_BINARY_MAXIMUM)
BINARY(minimum, WGT_BINARY_MINIMUM)
BINARY(mod, WGT_BINARY_MOD)
BINARY(atan2, WGT_BINARY_ATAN2)
BINARY(eq, WGT_BINARY_EQ)
BINARY(ne, WGT_BINARY_NE)
BINARY(lt, WGT_BINARY_LT)
BINARY(le, WGT_BINARY_LE)
BINARY(gt, WGT_BINARY_GT)
BINARY(ge, WGT_BINARY_GE)
BINARY(logical_and, WGT_BINARY_LOGICAL_AND)
BINARY(logical_or, WGT_BINARY_LOGICAL_OR)
BINARY(logaddexp, WGT_BINARY_LOGADDEXP)
BINARY(hypot, WGT_BINARY_HYPOT)
BINARY(copysign, WGT_BINARY_COPYSIGN)
BINARY(nextafter, WGT_BINARY_NEXTAFTER)
BINARY(bitwise_and, WGT_BINARY_BITWISE_AND)
BINARY(bitwise_or, WGT_BINARY_BITWISE_OR)
BINARY(bitwise_xor, WGT_BINARY_BITWISE_XOR)
BINARY(bitwise_left_shift, WGT_BINARY_LEFT_SHIFT)
BINARY(bitwise_right_shift, WGT_BINARY_RIGHT_SHIFT)
BINARY(floor_divide, WGT_BINARY_FLOOR_DIVIDE)
BINARY(logical_xor, WGT_BINARY_LOGICAL_XOR)
#undef BINARY

wgt_tensor *wgt_scalar(wgt_context *ctx, wgt_dtype dtype, double value) {
    /* Checked here so a bad argument is reported under this function's name. */
    if (wgt_check_context("wgt_scalar", ctx) != WGT_OK || wgt_check_dtype("wgt_scalar", dtype) != WGT_OK ||
        wgt_check_scalar("wgt_scalar", "value", dtype, value) != WGT_OK)
        return NULL;
    return wgt_full(ctx, dtype, 0, NULL, value);
}

/* The scalar is a rank-0 tensor of a's type (refused where the type cannot hold it), so
 * broadcasting does the rest; it is released before returning (the output never refers to
 * it). */
static wgt_tensor *run_scalar(const char *fn, wgt_binary_op op, wgt_tensor *a, double s) {
    if (wgt_check_tensor(fn, "a", a) != WGT_OK || wgt_check_scalar(fn, "s", a->dtype, s) != WGT_OK) return NULL;
    wgt_tensor *b = wgt_scalar(a->storage->ctx, a->dtype, s);
    if (!b) return NULL;
    wgt_tensor *out = run_binary(fn, op, a, b);
    wgt_release(b);
    return out;
}

#define SCALAR(name, op) \
    wgt_tensor *wgt_##name##_scalar(wgt_tensor *a, double s) { return run_scalar("wgt_" #name "_scalar", op, a, s); }
SCALAR(add, WGT_BINARY_ADD)
SCALAR(sub, WGT_BINARY_SUB)
SCALAR(mul, WGT_BINARY_MUL)
SCALAR(div, WGT_BINARY_DIV)
SCALAR(pow, WGT_BINARY_POW)
SCALAR(maximum, WGT_BINARY_MAXIMUM)
SCALAR(minimum, WGT_BINARY_MINIMUM)
#undef SCALAR

/* NumPy's rule over three shapes at once, so a mismatch names all three. */
static wgt_status broadcast3(const char *fn, wgt_tensor *const t[3], int *nout, int64_t *out) {
    int n = 0;
    for (int k = 0; k < 3; k++)
        if (t[k]->ndim > n) n = t[k]->ndim;
    for (int i = 0; i < n; i++) {
        int64_t d = 1;
        for (int k = 0; k < 3; k++) {
            int ik = t[k]->ndim - n + i;
            int64_t dk = ik >= 0 ? t[k]->shape[ik] : 1;
            if (dk == 1 || dk == d) continue;
            if (d != 1) {
                char s[3][256];
                for (int j = 0; j < 3; j++) wgt_format_shape(s[j], sizeof s[j], t[j]->ndim, t[j]->shape);
                return wgt_error(WGT_ERR_SHAPE,
                                 "%s: shapes %s (cond), %s (a) and %s (b) do not broadcast (dimension %d: %lld vs %lld)",
                                 fn, s[0], s[1], s[2], i, (long long)d, (long long)dk);
            }
            d = dk;
        }
        out[i] = d;
    }
    *nout = n;
    return WGT_OK;
}

wgt_tensor *wgt_where(wgt_tensor *cond, wgt_tensor *a, wgt_tensor *b) {
    static const char fn[] = "wgt_where";
    if (wgt_check_tensor(fn, "cond", cond) != WGT_OK || wgt_check_tensor(fn, "a", a) != WGT_OK ||
        wgt_check_tensor(fn, "b", b) != WGT_OK || wgt_check_same_context(fn, cond, a) != WGT_OK ||
        wgt_check_same_context(fn, a, b) != WGT_OK)
        return NULL;
    wgt_dtype common = a->dtype;
    if (a->dtype != b->dtype && !common_type(fn, a->dtype, b->dtype, &common)) return NULL;
    wgt_tensor *const ts[3] = {cond, a, b};
    int ndim = 0;
    int64_t shape[WGT_MAX_DIMS], strides[3][WGT_MAX_DIMS];
    if (broadcast3(fn, ts, &ndim, shape) != WGT_OK) return NULL;
    if (a->dtype != b->dtype) { /* a and b promoted, then where again */
        wgt_tensor *pa, *pb;
        if (!cast_pair(a, b, common, &pa, &pb)) return NULL;
        wgt_tensor *out = wgt_where(cond, pa, pb);
        wgt_release(pa);
        wgt_release(pb);
        return out;
    }
    if (wgt_dtype_is_64bit(cond->dtype)) { /* its truth as bool (exact: int64.c), then as a bool condition */
        wgt_tensor *truth = wgt_cast(cond, WGT_BOOL), *out = truth ? wgt_where(truth, a, b) : NULL;
        wgt_release(truth);
        return out;
    }
    /* The backends read a bool condition as it is; other narrow operands are widened. */
    if ((wgt_dtype_is_narrow(cond->dtype) && cond->dtype != WGT_BOOL) || wgt_dtype_is_narrow(a->dtype))
        return wgt_narrow_where(cond, a, b);
    wgt_context *ctx = a->storage->ctx;
    wgt_tensor *out = wgt_tensor_new(ctx, fn, a->dtype, ndim, shape, WGT_USAGE_DEFAULT);
    if (!out) return NULL;
    if (wgt_tensor_numel(out) == 0) return out;
    if (wgt_check_kernel_size(fn, out) != WGT_OK) goto fail;
    wgt_operand ops[3], oo;
    for (int k = 0; k < 3; k++) {
        wgt_broadcast_strides(ts[k], ndim, shape, strides[k]);
        if (wgt_view_operand(ts[k], ndim, shape, strides[k], &ops[k]) != WGT_OK) goto fail;
    }
    if (wgt_output_operand(out, &oo) != WGT_OK ||
        wgt_record_where(ctx, fn, &oo, &ops[0], &ops[1], &ops[2]) != WGT_OK)
        goto fail;
    return out;
fail:
    wgt_release(out);
    return NULL;
}

wgt_tensor *wgt_contiguous(wgt_tensor *t) {
    static const char fn[] = "wgt_contiguous";
    if (wgt_check_tensor(fn, "tensor", t) != WGT_OK) return NULL;
    wgt_context *ctx = t->storage->ctx;
    wgt_tensor *out = wgt_tensor_new(ctx, fn, t->dtype, t->ndim, t->shape, t->usage);
    if (!out) return NULL;
    if (wgt_tensor_numel(out) == 0) return out;
    wgt_operand src, dst;
    if (wgt_check_kernel_size(fn, out) != WGT_OK || wgt_view_operand(t, t->ndim, t->shape, t->strides, &src) != WGT_OK ||
        wgt_output_operand(out, &dst) != WGT_OK || wgt_record_copy(ctx, fn, &dst, &src) != WGT_OK) {
        wgt_release(out);
        return NULL;
    }
    return out;
}
