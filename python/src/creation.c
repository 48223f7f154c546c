/*
 * Creation functions over the C API's: zeros, ones, full, empty, arange and the seeded
 * random tensors. Each takes dtype= (default float32) and ctx= (default: the current default
 * context). The rest (linspace, eye, *_like, asarray of lists) is in the pure-Python layer.
 */
#include "wgtpy.h"

typedef enum { FILL_ZEROS, FILL_ONES, FILL_FULL, FILL_EMPTY } fill_kind;

static PyObject *fill(PyObject *args, PyObject *kw, fill_kind kind, const char *fn) {
    static char *names_full[] = {"shape", "fill_value", "dtype", "ctx", "device", NULL};
    static char *names[] = {"shape", "dtype", "ctx", "device", NULL};
    PyObject *shape_obj, *dtype_obj = Py_None, *ctx_obj = Py_None, *device_obj = Py_None;
    double value = 0;
    int ok = kind == FILL_FULL ? PyArg_ParseTupleAndKeywords(args, kw, "Od|OO$O", names_full, &shape_obj, &value,
                                                             &dtype_obj, &ctx_obj, &device_obj)
                               : PyArg_ParseTupleAndKeywords(args, kw, "O|OO$O", names, &shape_obj, &dtype_obj,
                                                             &ctx_obj, &device_obj);
    if (!ok) return NULL;
    /* device= is the array API's name for the context (a tensor's .device is its Context). */
    if (device_obj != Py_None) {
        if (ctx_obj != Py_None && ctx_obj != device_obj) {
            PyErr_Format(PyExc_ValueError, "%s: ctx and device name two different contexts", fn);
            return NULL;
        }
        ctx_obj = device_obj;
    }
    int64_t shape[WGT_MAX_DIMS];
    int ndim = wgtpy_shape_arg(shape_obj, shape, fn);
    if (ndim < 0) return NULL;
    wgt_dtype d = WGT_F32;
    if (dtype_obj != Py_None && wgtpy_dtype_from_obj(dtype_obj, &d) < 0) return NULL;
    CtxObject *ctx = wgtpy_context_arg(ctx_obj);
    if (!ctx) return NULL;
    wgt_tensor *t = NULL;
    WGTPY_LOCK(ctx);
    switch (kind) {
    case FILL_ZEROS: t = wgt_zeros(ctx->ctx, d, ndim, shape); break;
    case FILL_ONES: t = wgt_ones(ctx->ctx, d, ndim, shape); break;
    case FILL_FULL: t = wgt_full(ctx->ctx, d, ndim, shape, value); break;
    case FILL_EMPTY: t = wgt_tensor_create(ctx->ctx, d, ndim, shape, WGT_USAGE_DEFAULT); break;
    }
    WGTPY_UNLOCK(ctx);
    PyObject *r = wgtpy_wrap(t, ctx, fn, 0);
    Py_DECREF(ctx);
    return r;
}

static PyObject *py_zeros(PyObject *m, PyObject *a, PyObject *k) { return fill(a, k, FILL_ZEROS, "zeros"); }
static PyObject *py_ones(PyObject *m, PyObject *a, PyObject *k) { return fill(a, k, FILL_ONES, "ones"); }
static PyObject *py_full(PyObject *m, PyObject *a, PyObject *k) { return fill(a, k, FILL_FULL, "full"); }
static PyObject *py_empty(PyObject *m, PyObject *a, PyObject *k) { return fill(a, k, FILL_EMPTY, "empty"); }

/* _arange(start, stop, step, dtype, ctx): the Python layer resolves NumPy's argument forms. */
static PyObject *py_arange(PyObject *m, PyObject *args) {
    double start, stop, step;
    PyObject *dtype_obj, *ctx_obj;
    if (!PyArg_ParseTuple(args, "dddOO:_arange", &start, &stop, &step, &dtype_obj, &ctx_obj)) return NULL;
    wgt_dtype d;
    if (wgtpy_dtype_from_obj(dtype_obj, &d) < 0) return NULL;
    CtxObject *ctx = wgtpy_context_arg(ctx_obj);
    if (!ctx) return NULL;
    WGTPY_LOCK(ctx);
    wgt_tensor *t = wgt_arange(ctx->ctx, d, start, stop, step);
    WGTPY_UNLOCK(ctx);
    PyObject *r = wgtpy_wrap(t, ctx, "arange", 0);
    Py_DECREF(ctx);
    return r;
}

/* _random(kind, shape, a, b, seed, dtype, ctx): kind 'uniform' (a=low, b=high), 'normal'
 * (a=mean, b=stddev) or 'bits' (the generator's raw u32 words; a, b and dtype unused). */
static PyObject *py_random(PyObject *m, PyObject *args) {
    const char *kind;
    PyObject *shape_obj, *dtype_obj, *ctx_obj;
    double a, b;
    unsigned long long seed;
    if (!PyArg_ParseTuple(args, "sOddKOO:_random", &kind, &shape_obj, &a, &b, &seed, &dtype_obj, &ctx_obj)) return NULL;
    int64_t shape[WGT_MAX_DIMS];
    int ndim = wgtpy_shape_arg(shape_obj, shape, "random");
    if (ndim < 0) return NULL;
    wgt_dtype d;
    if (wgtpy_dtype_from_obj(dtype_obj, &d) < 0) return NULL;
    CtxObject *ctx = wgtpy_context_arg(ctx_obj);
    if (!ctx) return NULL;
    int normal = kind[0] == 'n', bits = kind[0] == 'b';
    WGTPY_LOCK(ctx);
    wgt_tensor *t = bits     ? wgt_rand_bits(ctx->ctx, ndim, shape, seed)
                    : normal ? wgt_rand_normal(ctx->ctx, d, ndim, shape, a, b, seed)
                             : wgt_rand_uniform(ctx->ctx, d, ndim, shape, a, b, seed);
    WGTPY_UNLOCK(ctx);
    PyObject *r = wgtpy_wrap(t, ctx, bits ? "random.bits" : normal ? "random.normal" : "random.uniform", 0);
    Py_DECREF(ctx);
    return r;
}

#define KW (METH_VARARGS | METH_KEYWORDS)
#define FN(f) (PyCFunction)(void (*)(void))(f)
PyMethodDef wgtpy_creation_methods[] = {
    {"zeros", FN(py_zeros), KW, "zeros(shape, dtype=float32, ctx=None)"},
    {"ones", FN(py_ones), KW, "ones(shape, dtype=float32, ctx=None)"},
    {"full", FN(py_full), KW, "full(shape, fill_value, dtype=float32, ctx=None): the value must be one of the type's"},
    {"empty", FN(py_empty), KW, "empty(shape, dtype=float32, ctx=None, *, device=None) (zero-filled, as the C API's tensors are)"},
    {"_arange", FN(py_arange), METH_VARARGS, "_arange(start, stop, step, dtype, ctx)"},
    {"_random", FN(py_random), METH_VARARGS, "_random(kind, shape, a, b, seed, dtype, ctx)"},
    {NULL, NULL, 0, NULL},
};
