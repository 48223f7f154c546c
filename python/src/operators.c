/*
 * Binary ops with NumPy's rules, and the Python operators of Tensor built on them.
 *
 * Operands: a Tensor, a Python scalar (weak, as in NumPy 2: it takes the tensor's type; an
 * int the type cannot hold is OverflowError; a float with an integer tensor promotes to
 * float32, wgtensor's widest float) or anything asarray takes. Two tensors of different types
 * promote to float32 when either is floating (NumPy would go to float64 for int32 with
 * float32: there is no float64 here); two integer types go to the library as they are, which
 * promotes them by the array API's table (NumPy's for integers: int32 with uint32 gives
 * int64) or refuses the pair with a message (uint64 with a signed type, bool with an
 * integer): a TypeError. Tensors of two contexts are a ValueError found here, before the library
 * is called, because touching a context another thread may be using is a race even when the
 * call would fail.
 */
#include "wgtpy.h"
#include "ops.h"

static int is_float(wgt_dtype d) { return d == WGT_F32 || d == WGT_F16 || d == WGT_BF16; }

/* Replaces *t by its cast to d (no change when it has d). */
static int cast_to(TensorObject **t, wgt_dtype d, const char *fn) {
    if (wgt_tensor_dtype((*t)->t) == d) return 0;
    CtxObject *ctx = (*t)->ctx;
    WGTPY_LOCK(ctx);
    wgt_tensor *c = wgt_cast((*t)->t, d);
    WGTPY_UNLOCK(ctx);
    PyObject *w = wgtpy_wrap(c, ctx, fn, 0);
    if (!w) return -1;
    Py_SETREF(*t, (TensorObject *)w);
    return 0;
}

int wgtpy_promote(TensorObject **a, TensorObject **b, const char *fn) {
    if ((*a)->ctx != (*b)->ctx) {
        PyErr_Format(PyExc_ValueError, "%s: tensors of two contexts (%s and %s); move one with t.to(ctx)", fn,
                     wgt_context_device_name((*a)->ctx->ctx), wgt_context_device_name((*b)->ctx->ctx));
        return -1;
    }
    wgt_dtype da = wgt_tensor_dtype((*a)->t), db = wgt_tensor_dtype((*b)->t);
    if (da == db) return 0;
    if (!is_float(da) && !is_float(db)) return 0; /* the library promotes them by the table, or refuses */
    return cast_to(a, WGT_F32, fn) < 0 || cast_to(b, WGT_F32, fn) < 0 ? -1 : 0;
}

/* Whether o can be an operand at all; others make the operator return NotImplemented. */
static int operand_like(PyObject *o) {
    return WGTPY_IS_TENSOR(o) || PyLong_Check(o) || PyFloat_Check(o) || PyList_Check(o) || PyTuple_Check(o) ||
           PyObject_CheckBuffer(o) || PyObject_HasAttrString(o, "__array_interface__");
}

/* Both operands as tensors of one context and one type; x or y must be... anything: when
 * neither is a tensor the first is made one on the default context. */
int wgtpy_operands(PyObject *x, PyObject *y, TensorObject **a, TensorObject **b, const char *fn) {
    *a = *b = NULL;
    if (WGTPY_IS_TENSOR(x)) {
        *a = (TensorObject *)Py_NewRef(x);
        *b = wgtpy_operand(y, *a);
    } else if (WGTPY_IS_TENSOR(y)) {
        *b = (TensorObject *)Py_NewRef(y);
        *a = wgtpy_operand(x, *b);
    } else {
        PyObject *ta = wgtpy_asarray_fn ? PyObject_CallOneArg(wgtpy_asarray_fn, x) : NULL;
        if (ta && !WGTPY_IS_TENSOR(ta)) Py_CLEAR(ta);
        if (!ta && !PyErr_Occurred()) PyErr_Format(PyExc_TypeError, "%s: cannot make a tensor of %R", fn, x);
        *a = (TensorObject *)ta;
        if (ta) *b = wgtpy_operand(y, *a);
    }
    if (!*a || !*b || wgtpy_promote(a, b, fn) < 0) {
        Py_CLEAR(*a);
        Py_CLEAR(*b);
        return -1;
    }
    return 0;
}

PyObject *wgtpy_binary(wgtpy_binary_fn fn, PyObject *x, PyObject *y, const char *name, int flags) {
    TensorObject *a, *b;
    if (wgtpy_operands(x, y, &a, &b, name) < 0) return NULL;
    if ((flags & BIN_TRUE_DIVIDE) && !is_float(wgt_tensor_dtype(a->t)) &&
        (cast_to(&a, WGT_F32, name) < 0 || cast_to(&b, WGT_F32, name) < 0)) {
        Py_DECREF(a);
        Py_DECREF(b);
        return NULL;
    }
    CtxObject *ctx = a->ctx;
    WGTPY_LOCK(ctx);
    wgt_tensor *r = fn(a->t, b->t);
    WGTPY_UNLOCK(ctx);
    PyObject *out = wgtpy_wrap(r, ctx, name, 0);
    Py_DECREF(a);
    Py_DECREF(b);
    return out;
}

#define BINOP(pyname, cfn, label, flags)                                                        \
    static PyObject *pyname(PyObject *x, PyObject *y) {                                        \
        if (!operand_like(x) || !operand_like(y)) Py_RETURN_NOTIMPLEMENTED;                   \
        return wgtpy_binary(cfn, x, y, label, flags);                                          \
    }
BINOP(op_add, wgt_add, "+", 0)
BINOP(op_sub, wgt_sub, "-", 0)
BINOP(op_mul, wgt_mul, "*", 0)
BINOP(op_truediv, wgt_div, "/", BIN_TRUE_DIVIDE)
BINOP(op_floordiv, wgt_floor_divide, "//", 0)
BINOP(op_mod, wgt_mod, "%", 0)
BINOP(op_matmul, wgt_matmul, "@", 0)
BINOP(op_and, wgt_bitwise_and, "&", 0)
BINOP(op_or, wgt_bitwise_or, "|", 0)
BINOP(op_xor, wgt_bitwise_xor, "^", 0)
BINOP(op_lshift, wgt_bitwise_left_shift, "<<", 0)
BINOP(op_rshift, wgt_bitwise_right_shift, ">>", 0)

static PyObject *op_pow(PyObject *x, PyObject *y, PyObject *mod) {
    if (mod != Py_None) {
        PyErr_SetString(PyExc_TypeError, "pow() with a modulus is not supported by wgtensor tensors");
        return NULL;
    }
    if (!operand_like(x) || !operand_like(y)) Py_RETURN_NOTIMPLEMENTED;
    return wgtpy_binary(wgt_pow, x, y, "**", 0);
}

static PyObject *unary_call(wgt_tensor *(*fn)(wgt_tensor *), PyObject *x, const char *name) {
    TensorObject *a = (TensorObject *)x;
    WGTPY_LOCK(a->ctx);
    wgt_tensor *r = fn(a->t);
    WGTPY_UNLOCK(a->ctx);
    return wgtpy_wrap(r, a->ctx, name, 0);
}

static PyObject *op_neg(PyObject *x) { return unary_call(wgt_neg, x, "-"); }
static PyObject *op_abs(PyObject *x) { return unary_call(wgt_abs, x, "abs"); }
static PyObject *op_pos(PyObject *x) { return Py_NewRef(x); }
static PyObject *op_invert(PyObject *x) {
    if (is_float(wgt_tensor_dtype(((TensorObject *)x)->t))) {
        PyErr_Format(PyExc_TypeError, "~: %s tensors have no bitwise invert (integer types only)",
                     wgt_dtype_name(wgt_tensor_dtype(((TensorObject *)x)->t)));
        return NULL;
    }
    return unary_call(wgt_bitwise_not, x, "~");
}

PyNumberMethods wgtpy_number_methods = {
    .nb_add = op_add,
    .nb_subtract = op_sub,
    .nb_multiply = op_mul,
    .nb_true_divide = op_truediv,
    .nb_floor_divide = op_floordiv,
    .nb_remainder = op_mod,
    .nb_power = op_pow,
    .nb_matrix_multiply = op_matmul,
    .nb_negative = op_neg,
    .nb_positive = op_pos,
    .nb_absolute = op_abs,
    .nb_invert = op_invert,
    .nb_and = op_and,
    .nb_or = op_or,
    .nb_xor = op_xor,
    .nb_lshift = op_lshift,
    .nb_rshift = op_rshift,
};

PyObject *wgtpy_richcompare(PyObject *x, PyObject *y, int op) {
    if (!operand_like(x) || !operand_like(y)) Py_RETURN_NOTIMPLEMENTED;
    static wgtpy_binary_fn const fns[] = {[Py_LT] = wgt_lt, [Py_LE] = wgt_le, [Py_EQ] = wgt_eq,
                                          [Py_NE] = wgt_ne, [Py_GT] = wgt_gt, [Py_GE] = wgt_ge};
    static const char *const names[] = {[Py_LT] = "<", [Py_LE] = "<=", [Py_EQ] = "==",
                                        [Py_NE] = "!=", [Py_GT] = ">", [Py_GE] = ">="};
    return wgtpy_binary(fns[op], x, y, names[op], 0);
}

