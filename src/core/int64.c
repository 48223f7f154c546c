/*
 * The 64-bit integer types (i64, u64) in the core: which public functions take them, and
 * the casts the backends do not run directly. The backends implement casts between i64/u64
 * and f32, i32, u32, i64, u64 only (on WebGPU these are kernels on word pairs); every other
 * pair goes through one of those types, chosen so the result is what a direct cast gives
 * under docs/ops.md's rules: the narrow integers and bool reach i64 exactly through i32, f16
 * and bf16 exactly through f32; i64 to i8..u16 keeps the low bits through i32's low bits;
 * i64 to bool is "nonzero" through f32 (no nonzero integer converts to 0.0); i64 to f16 and
 * bf16 round twice through f32, as i32 to bf16 does.
 */
#include <string.h>

#include "node.h"
#include "core/dtype_table.h"

/* Storage, data movement, views and copies, casts, the shape ops that move elements, where
 * and the index ops that gather rows (what moves elements without arithmetic); sums and
 * products; the elementwise ops with 64-bit kernels (add, sub, mul, maximum, minimum, the
 * comparisons, bitwise and/or/xor/not, neg, abs); matmul and the contractions built on it.
 * Everything else refuses i64 and u64 at its argument check. */
static const char *const int64_functions[] = {
    "wgt_tensor_create", "wgt_tensor_from_data", "wgt_zeros", "wgt_ones", "wgt_full", "wgt_arange", "wgt_scalar",
    "wgt_tensor_read", "wgt_tensor_write", "wgt_tensor_data", "wgt_tensor_data_mut", "wgt_tensor_export_buffer",
    "wgt_read_begin", "wgt_eval", "wgt_graph_input", "wgt_graph_dispatch", "wgt_as_strided", "wgt_slice", "wgt_reshape", "wgt_squeeze", "wgt_unsqueeze",
    "wgt_split", "wgt_permute", "wgt_transpose", "wgt_expand", "wgt_broadcast_to", "wgt_flip", "wgt_contiguous",
    "wgt_detach", "wgt_cast", "wgt_concat", "wgt_stack", "wgt_pad", "wgt_where", "wgt_save_npy", "wgt_load_npy",
    "wgt_save_safetensors", "wgt_load_safetensors", "wgt_gather_rows", "wgt_index_select", "wgt_take", "wgt_sum",
    "wgt_prod", "wgt_cumsum", "wgt_sum_dtype", "wgt_prod_dtype", "wgt_cumsum_dtype", "wgt_add", "wgt_sub", "wgt_mul",
    "wgt_maximum", "wgt_minimum", "wgt_add_scalar", "wgt_sub_scalar", "wgt_mul_scalar", "wgt_maximum_scalar",
    "wgt_minimum_scalar", "wgt_eq", "wgt_ne", "wgt_lt", "wgt_le", "wgt_gt", "wgt_ge", "wgt_bitwise_and",
    "wgt_bitwise_or", "wgt_bitwise_xor", "wgt_neg", "wgt_abs", "wgt_bitwise_not",
    /* Built from the moves, where and the gathers above (core/manip.c, indexing.c, scatter.c). */
    "wgt_moveaxis", "wgt_roll", "wgt_tile", "wgt_diagonal", "wgt_tril", "wgt_triu", "wgt_repeat",
    "wgt_take_along_axis", "wgt_masked_select", "wgt_clip",
    /* Products with 64-bit kernels (core/linalg.c, contract.c). */
    "wgt_matmul", "wgt_tensordot", "wgt_vecdot", "wgt_outer", "wgt_einsum",
};

int wgt_takes_int64(const char *fn) {
    for (size_t i = 0; i < sizeof int64_functions / sizeof int64_functions[0]; i++)
        if (strcmp(fn, int64_functions[i]) == 0) return 1;
    return 0;
}

wgt_status wgt_int64_refused(const char *fn, const char *what, wgt_dtype dtype) {
    return wgt_error(WGT_ERR_DTYPE, "%s: %s is %s, which this function does not take (docs/ops.md lists the functions "
                     "of the 64-bit integer types; wgt_cast to another type first)", fn, what, wgt_dtype_name(dtype));
}

/* The types a backend casts to and from i64 and u64 directly. */
static int direct(wgt_dtype d) {
    return d == WGT_F32 || d == WGT_I32 || d == WGT_U32 || d == WGT_I64 || d == WGT_U64;
}

wgt_dtype wgt_int64_cast_via(wgt_dtype from, wgt_dtype to) {
    if (!wgt_dtype_is_64bit(from) && !wgt_dtype_is_64bit(to)) return to;
    if (direct(from) && direct(to)) return to;
    wgt_dtype other = wgt_dtype_is_64bit(from) ? to : from;
    /* Floats and bool meet the 64-bit types in f32, the narrow integers in i32. */
    if (wgt_dtype_is_float(other) || (other == WGT_BOOL && wgt_dtype_is_64bit(from))) return WGT_F32;
    return WGT_I32;
}

/* The shared check of the *_dtype reductions: a new reference to a in the type to reduce,
 * or NULL (error set). dtype must be i64 or u64 for an integer a, or a's own type. */
static wgt_tensor *reduce_input(const char *fn, wgt_tensor *a, wgt_dtype dtype) {
    if (wgt_check_tensor(fn, "a", a) != WGT_OK || wgt_check_dtype(fn, dtype) != WGT_OK) return NULL;
    if (dtype == a->dtype) return wgt_retain(a);
    if (wgt_dtype_is_64bit(dtype) && wgt_dtype_is_integer(a->dtype)) return wgt_cast(a, dtype);
    wgt_error(WGT_ERR_DTYPE, "%s: dtype %s for a of %s: takes i64 or u64 for an integer a, or a's own type", fn,
              wgt_dtype_name(dtype), wgt_dtype_name(a->dtype));
    return NULL;
}

wgt_tensor *wgt_sum_dtype(wgt_tensor *a, int naxes, const int *axes, int keepdims, wgt_dtype dtype) {
    wgt_tensor *x = reduce_input("wgt_sum_dtype", a, dtype), *out = x ? wgt_sum(x, naxes, axes, keepdims) : NULL;
    wgt_release(x);
    return out;
}

wgt_tensor *wgt_prod_dtype(wgt_tensor *a, int naxes, const int *axes, int keepdims, wgt_dtype dtype) {
    wgt_tensor *x = reduce_input("wgt_prod_dtype", a, dtype), *out = x ? wgt_prod(x, naxes, axes, keepdims) : NULL;
    wgt_release(x);
    return out;
}

wgt_tensor *wgt_cumsum_dtype(wgt_tensor *a, int axis, wgt_dtype dtype) {
    wgt_tensor *x = reduce_input("wgt_cumsum_dtype", a, dtype), *out = x ? wgt_cumsum(x, axis) : NULL;
    wgt_release(x);
    return out;
}
