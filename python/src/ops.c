/*
 * The op table: every op of the C API as a module function and, where NumPy has one, a
 * Tensor method. Adding an op is one line: its Python name, its method name (or NULL), the C
 * function and the signature kind whose generic caller (op_callers.c) turns Python arguments
 * into the C call. _core.BOUND maps each C name to its Python name; tests/test_binding.py
 * checks it against include/wgtensor.h.
 */
#include "ops.h"

#define F(fn) #fn, (void (*)(void))fn
#define OP(name, method, fn, sig) {name, method, F(fn), sig, 0, NULL}
#define OPD(name, method, fn, sig, def, param) {name, method, F(fn), sig, def, param}

static const op_entry ops[] = {
    /* elementwise, binary */
    OP("add", NULL, wgt_add, SIG_BINARY),
    OP("sub", NULL, wgt_sub, SIG_BINARY),
    OP("mul", NULL, wgt_mul, SIG_BINARY),
    OP("div", NULL, wgt_div, SIG_TRUE_DIVIDE),
    OP("pow", NULL, wgt_pow, SIG_BINARY),
    OP("maximum", NULL, wgt_maximum, SIG_BINARY),
    OP("minimum", NULL, wgt_minimum, SIG_BINARY),
    OP("mod", NULL, wgt_mod, SIG_BINARY),
    OP("atan2", NULL, wgt_atan2, SIG_BINARY),
    OP("eq", NULL, wgt_eq, SIG_BINARY),
    OP("ne", NULL, wgt_ne, SIG_BINARY),
    OP("lt", NULL, wgt_lt, SIG_BINARY),
    OP("le", NULL, wgt_le, SIG_BINARY),
    OP("gt", NULL, wgt_gt, SIG_BINARY),
    OP("ge", NULL, wgt_ge, SIG_BINARY),
    OP("logical_and", NULL, wgt_logical_and, SIG_BINARY),
    OP("logical_or", NULL, wgt_logical_or, SIG_BINARY),
    OP("logical_xor", NULL, wgt_logical_xor, SIG_BINARY),
    OP("logical_not", NULL, wgt_logical_not, SIG_UNARY),
    OP("where", NULL, wgt_where, SIG_WHERE),
    OP("floor_divide", NULL, wgt_floor_divide, SIG_BINARY),
    OP("logaddexp", NULL, wgt_logaddexp, SIG_BINARY),
    OP("hypot", NULL, wgt_hypot, SIG_BINARY),
    OP("copysign", NULL, wgt_copysign, SIG_BINARY),
    OP("nextafter", NULL, wgt_nextafter, SIG_BINARY),
    OP("bitwise_and", NULL, wgt_bitwise_and, SIG_BINARY),
    OP("bitwise_or", NULL, wgt_bitwise_or, SIG_BINARY),
    OP("bitwise_xor", NULL, wgt_bitwise_xor, SIG_BINARY),
    OP("bitwise_left_shift", NULL, wgt_bitwise_left_shift, SIG_BINARY),
    OP("bitwise_right_shift", NULL, wgt_bitwise_right_shift, SIG_BINARY),
    /* tensor with a scalar (the operators use Python scalars directly; these are the C forms) */
    OP("add_scalar", NULL, wgt_add_scalar, SIG_SCALAR),
    OP("sub_scalar", NULL, wgt_sub_scalar, SIG_SCALAR),
    OP("mul_scalar", NULL, wgt_mul_scalar, SIG_SCALAR),
    OP("div_scalar", NULL, wgt_div_scalar, SIG_SCALAR),
    OP("pow_scalar", NULL, wgt_pow_scalar, SIG_SCALAR),
    OP("maximum_scalar", NULL, wgt_maximum_scalar, SIG_SCALAR),
    OP("minimum_scalar", NULL, wgt_minimum_scalar, SIG_SCALAR),
    /* unary */
    OP("neg", NULL, wgt_neg, SIG_UNARY),
    OP("abs", NULL, wgt_abs, SIG_UNARY),
    OP("sign", NULL, wgt_sign, SIG_UNARY),
    OP("square", NULL, wgt_square, SIG_UNARY),
    OP("sqrt", NULL, wgt_sqrt, SIG_UNARY),
    OP("rsqrt", NULL, wgt_rsqrt, SIG_UNARY),
    OP("reciprocal", NULL, wgt_reciprocal, SIG_UNARY),
    OP("exp", NULL, wgt_exp, SIG_UNARY),
    OP("expm1", NULL, wgt_expm1, SIG_UNARY),
    OP("log", NULL, wgt_log, SIG_UNARY),
    OP("log1p", NULL, wgt_log1p, SIG_UNARY),
    OP("sin", NULL, wgt_sin, SIG_UNARY),
    OP("cos", NULL, wgt_cos, SIG_UNARY),
    OP("tanh", NULL, wgt_tanh, SIG_UNARY),
    OP("sigmoid", NULL, wgt_sigmoid, SIG_UNARY),
    OP("relu", NULL, wgt_relu, SIG_UNARY),
    OPD("leaky_relu", NULL, wgt_leaky_relu, SIG_UNARY_F, 0.01, "negative_slope"),
    OPD("elu", NULL, wgt_elu, SIG_UNARY_F, 1.0, "alpha"),
    OP("gelu", NULL, wgt_gelu, SIG_UNARY),
    OP("gelu_tanh", NULL, wgt_gelu_tanh, SIG_UNARY),
    OP("silu", NULL, wgt_silu, SIG_UNARY),
    OP("softplus", NULL, wgt_softplus, SIG_UNARY),
    OP("floor", NULL, wgt_floor, SIG_UNARY),
    OP("ceil", NULL, wgt_ceil, SIG_UNARY),
    OP("round", "round", wgt_round, SIG_UNARY),
    OP("erf", NULL, wgt_erf, SIG_UNARY),
    OP("isnan", NULL, wgt_isnan, SIG_UNARY),
    OP("isinf", NULL, wgt_isinf, SIG_UNARY),
    OP("tan", NULL, wgt_tan, SIG_UNARY),
    OP("asin", NULL, wgt_asin, SIG_UNARY),
    OP("acos", NULL, wgt_acos, SIG_UNARY),
    OP("atan", NULL, wgt_atan, SIG_UNARY),
    OP("sinh", NULL, wgt_sinh, SIG_UNARY),
    OP("cosh", NULL, wgt_cosh, SIG_UNARY),
    OP("asinh", NULL, wgt_asinh, SIG_UNARY),
    OP("acosh", NULL, wgt_acosh, SIG_UNARY),
    OP("atanh", NULL, wgt_atanh, SIG_UNARY),
    OP("log2", NULL, wgt_log2, SIG_UNARY),
    OP("log10", NULL, wgt_log10, SIG_UNARY),
    OP("exp2", NULL, wgt_exp2, SIG_UNARY),
    OP("trunc", NULL, wgt_trunc, SIG_UNARY),
    OP("signbit", NULL, wgt_signbit, SIG_UNARY),
    OP("isfinite", NULL, wgt_isfinite, SIG_UNARY),
    OP("bitwise_invert", NULL, wgt_bitwise_not, SIG_UNARY), /* ~, bitwise_not and invert too */
    OP("clip", "clip", wgt_clamp, SIG_CLIP),
    OP("astype", "astype", wgt_cast, SIG_CAST),
    /* reductions */
    OP("sum", "sum", wgt_sum, SIG_REDUCE_DTYPE),
    OP("mean", "mean", wgt_mean, SIG_REDUCE),
    OP("max", "max", wgt_max, SIG_REDUCE),
    OP("min", "min", wgt_min, SIG_REDUCE),
    OP("prod", "prod", wgt_prod, SIG_REDUCE_DTYPE),
    OP("var", "var", wgt_var, SIG_REDUCE_DDOF),
    OP("std", "std", wgt_std, SIG_REDUCE_DDOF),
    OP("argmax", "argmax", wgt_argmax, SIG_ARG),
    OP("argmin", "argmin", wgt_argmin, SIG_ARG),
    OP("cumsum", "cumsum", wgt_cumsum, SIG_AXIS_FLAT),
    OP("cumprod", "cumprod", wgt_cumprod, SIG_AXIS_FLAT),
    OP("cummax", NULL, wgt_cummax, SIG_AXIS_FLAT),
    OP("cummin", NULL, wgt_cummin, SIG_AXIS_FLAT),
    OP("cumargmax", NULL, wgt_cumargmax, SIG_AXIS_FLAT),
    OP("cumargmin", NULL, wgt_cumargmin, SIG_AXIS_FLAT),
    OP("any", "any", wgt_any, SIG_REDUCE),
    OP("all", "all", wgt_all, SIG_REDUCE),
    OP("count_nonzero", NULL, wgt_count_nonzero, SIG_REDUCE),
    OP("logsumexp", NULL, wgt_logsumexp, SIG_REDUCE),
    /* linear algebra, rows */
    OP("matmul", NULL, wgt_matmul, SIG_BINARY),
    OP("linear", NULL, wgt_linear, SIG_LINEAR),
    OP("tensordot", NULL, wgt_tensordot, SIG_TENSORDOT),
    OP("vecdot", NULL, wgt_vecdot, SIG_VECDOT),
    OP("outer", NULL, wgt_outer, SIG_BINARY),
    OP("einsum", NULL, wgt_einsum, SIG_EINSUM),
    /* dense factorizations: reached as wgtensor.linalg.inv and so on */
    OP("_linalg_inv", NULL, wgt_linalg_inv, SIG_UNARY),
    OP("_linalg_solve", NULL, wgt_linalg_solve, SIG_BINARY),
    OP("_linalg_det", NULL, wgt_linalg_det, SIG_UNARY),
    OP("_linalg_cholesky", NULL, wgt_linalg_cholesky, SIG_UPPER),
    OP("_linalg_vector_norm", NULL, wgt_linalg_vector_norm, SIG_VNORM),
    OP("_linalg_matrix_norm", NULL, wgt_linalg_matrix_norm, SIG_MNORM),
    /* decompositions and what is built on them: wgtensor.linalg names the tuples' members */
    OP("_linalg_qr", NULL, wgt_linalg_qr, SIG_LINALG_MULTI),
    OP("_linalg_slogdet", NULL, wgt_linalg_slogdet, SIG_LINALG_MULTI),
    OP("_linalg_svd", NULL, wgt_linalg_svd, SIG_LINALG_MULTI),
    OP("_linalg_eigh", NULL, wgt_linalg_eigh, SIG_LINALG_MULTI),
    OP("_linalg_svdvals", NULL, wgt_linalg_svdvals, SIG_UNARY),
    OP("_linalg_eigvalsh", NULL, wgt_linalg_eigvalsh, SIG_UNARY),
    OPD("_linalg_pinv", NULL, wgt_linalg_pinv, SIG_UNARY_F, -1, "rtol"),
    OPD("_linalg_matrix_rank", NULL, wgt_linalg_matrix_rank, SIG_UNARY_F, -1, "rtol"),
    OP("_linalg_matrix_power", NULL, wgt_linalg_matrix_power, SIG_DIAG),
    OP("_linalg_cross", NULL, wgt_linalg_cross, SIG_VECDOT),
    OPD("softmax", NULL, wgt_softmax, SIG_AXIS, -1, "axis"),
    OPD("log_softmax", NULL, wgt_log_softmax, SIG_AXIS, -1, "axis"),
    OPD("layer_norm", NULL, wgt_layer_norm, SIG_LAYER_NORM, 1e-5, "eps"),
    OPD("rms_norm", NULL, wgt_rms_norm, SIG_RMS_NORM, 1e-6, "eps"),
    /* views and shape */
    OP("reshape", "reshape", wgt_reshape, SIG_RESHAPE),
    OP("broadcast_to", NULL, wgt_broadcast_to, SIG_SHAPE),
    OP("expand", "expand", wgt_expand, SIG_SHAPE),
    OP("contiguous", "contiguous", wgt_contiguous, SIG_UNARY),
    OP("swapaxes", "swapaxes", wgt_transpose, SIG_SWAP),
    OP("transpose", "transpose", wgt_permute, SIG_PERMUTE),
    OP("flip", "flip", wgt_flip, SIG_FLIP),
    OP("slice", NULL, wgt_slice, SIG_SLICE),
    OP("as_strided", NULL, wgt_as_strided, SIG_AS_STRIDED),
    OPD("expand_dims", NULL, wgt_unsqueeze, SIG_AXIS, 0, "axis"),
    OPD("_squeeze_axis", NULL, wgt_squeeze, SIG_AXIS, 0, "axis"),
    OP("concat", NULL, wgt_concat, SIG_JOIN),
    OP("stack", NULL, wgt_stack, SIG_JOIN),
    OP("_split_sizes", NULL, wgt_split, SIG_SPLIT),
    OP("_broadcast_arrays", NULL, wgt_broadcast_arrays, SIG_VIEWS), /* wgtensor/_manip.py */
    OP("_meshgrid", NULL, wgt_meshgrid, SIG_VIEWS),
    OP("_pad", NULL, wgt_pad, SIG_PAD),
    /* indexing */
    OP("gather_rows", NULL, wgt_gather_rows, SIG_GATHER),
    OP("take", "take", wgt_take, SIG_TAKE),
    OP("take_along_axis", "take_along_axis", wgt_take_along_axis, SIG_TAKE),
    OP("scatter", "scatter", wgt_scatter, SIG_SCATTER),
    OP("index_add", "index_add", wgt_index_add, SIG_INDEX_ADD),
    OP("moveaxis", NULL, wgt_moveaxis, SIG_MOVEAXIS),
    OP("roll", NULL, wgt_roll, SIG_ROLL),
    OP("repeat", "repeat", wgt_repeat, SIG_REPEAT),
    OP("tile", NULL, wgt_tile, SIG_SHAPE),
    OP("diagonal", "diagonal", wgt_diagonal, SIG_DIAGONAL),
    OP("trace", "trace", wgt_trace, SIG_DIAGONAL),
    OP("diag", NULL, wgt_diag, SIG_DIAG),
    OP("masked_fill", "masked_fill", wgt_masked_fill, SIG_MASKED_FILL),
    OP("masked_select", "masked_select", wgt_masked_select, SIG_MASKED_SELECT),
    OP("set_rows", NULL, wgt_set_rows, SIG_SET_ROWS),
    OP("one_hot", NULL, wgt_one_hot, SIG_ONE_HOT),
    OP("triu", NULL, wgt_triu, SIG_DIAG),
    OP("tril", NULL, wgt_tril, SIG_DIAG),
    /* searching and sorting (the array API's signatures: wgtensor/_sorting.py) */
    OP("_sort", NULL, wgt_sort, SIG_SORT),
    OP("_argsort", NULL, wgt_argsort, SIG_SORT),
    OP("_topk", NULL, wgt_topk, SIG_TOPK),
    OP("_searchsorted", NULL, wgt_searchsorted, SIG_SEARCH),
    OP("_unique", NULL, wgt_unique, SIG_UNIQUE),
    OP("_nonzero", NULL, wgt_nonzero, SIG_NONZERO),
    OP("argwhere", NULL, wgt_argwhere, SIG_UNARY),
    /* transformer pieces */
    OPD("rope", NULL, wgt_rope, SIG_ROPE, 10000.0, "base"),
    OP("attention", NULL, wgt_attention, SIG_ATTENTION),
    OP("attention_prefix", NULL, wgt_attention_prefix, SIG_ATTENTION_PREFIX),
    /* convolutions and pooling (nn.c) */
    OP("conv1d", NULL, wgt_conv1d, SIG_CONV1D),
    OP("conv2d", NULL, wgt_conv2d, SIG_CONV2D),
    OP("conv_transpose2d", NULL, wgt_conv_transpose2d, SIG_CONV_TRANSPOSE2D),
    OP("max_pool2d", NULL, wgt_max_pool2d, SIG_MAX_POOL2D),
    OP("avg_pool2d", NULL, wgt_avg_pool2d, SIG_AVG_POOL2D),
    OP("adaptive_avg_pool2d", NULL, wgt_adaptive_avg_pool2d, SIG_ADAPTIVE_AVG_POOL2D),
    /* layers (nn_layers.c) */
    OP("dropout", NULL, wgt_dropout, SIG_DROPOUT),
    OP("batch_norm", NULL, wgt_batch_norm, SIG_BATCH_NORM),
    OP("group_norm", NULL, wgt_group_norm, SIG_GROUP_NORM),
    OP("interpolate", NULL, wgt_interpolate, SIG_INTERPOLATE),
};

#define NOPS (sizeof ops / sizeof ops[0])

static PyObject *call_entry(PyObject *capsule, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    return wgtpy_call_op(PyCapsule_GetPointer(capsule, NULL), args, nargs, kwnames);
}

static PyMethodDef defs[NOPS];

int wgtpy_ops_init(PyObject *module) {
    PyObject *bound = PyDict_New(), *modname = PyModule_GetNameObject(module);
    if (!bound || !modname) goto fail;
    for (size_t i = 0; i < NOPS; i++) {
        const op_entry *e = &ops[i];
        defs[i] = (PyMethodDef){e->name, (PyCFunction)(void (*)(void))call_entry, METH_FASTCALL | METH_KEYWORDS, NULL};
        PyObject *capsule = PyCapsule_New((void *)e, NULL, NULL);
        PyObject *f = capsule ? PyCFunction_NewEx(&defs[i], capsule, modname) : NULL;
        Py_XDECREF(capsule);
        if (!f || PyModule_AddObjectRef(module, e->name, f) < 0) {
            Py_XDECREF(f);
            goto fail;
        }
        int bad = 0;
        if (e->method) {
            /* instancemethod binds the tensor as the first argument, without a Python frame. */
            PyObject *m = PyInstanceMethod_New(f);
            bad = !m || PyObject_SetAttrString((PyObject *)wgtpy_Tensor, e->method, m) < 0;
            Py_XDECREF(m);
        }
        PyObject *pyname = PyUnicode_FromString(e->name);
        bad = bad || !pyname || PyDict_SetItemString(bound, e->c_name, pyname) < 0;
        Py_XDECREF(pyname);
        Py_DECREF(f);
        if (bad) goto fail;
    }
    Py_DECREF(modname);
    int r = PyModule_AddObjectRef(module, "BOUND", bound);
    Py_DECREF(bound);
    return r;
fail:
    Py_XDECREF(bound);
    Py_XDECREF(modname);
    return -1;
}
