/*
 * Python data to tensors. Anything with the buffer protocol (NumPy arrays of any layout,
 * memoryviews) is read through PyObject_GetBuffer with strides and copied once, element by
 * element with the type conversion, straight into the new tensor's storage: no temporary
 * array (a C-contiguous array of the target type is written to the device directly). Values
 * the target type cannot hold are errors naming the value and its index (float64 that would
 * round to infinity in float32, an int64 past int32's range, a fraction for an integer type),
 * as the C API's scalar rules are. Nested lists and Python scalars go
 * through numpy.asarray in the pure-Python layer first.
 *
 * Also here: Python scalars as operands of a tensor op, shapes and axes from Python values.
 */
#include <math.h>
#include <string.h>

#include "wgtpy.h"

PyObject *wgtpy_asarray_fn;

typedef enum { K_FLOAT, K_INT, K_UINT, K_BOOL } src_kind;

typedef struct {
    src_kind kind;
    int size; /* bytes */
} src_type;

static int parse_format(const char *fmt, Py_ssize_t itemsize, src_type *out) {
    if (!fmt) fmt = "B";
    if (*fmt == '<' || *fmt == '=' || *fmt == '@') fmt++;
    else if (*fmt == '>' || *fmt == '!') return -1; /* big-endian data: NumPy's .astype('<...') first */
    if (fmt[0] == '\0' || fmt[1] != '\0') return -1;
    switch (fmt[0]) {
    case 'e': case 'f': case 'd': out->kind = K_FLOAT; break;
    case 'b': case 'h': case 'i': case 'l': case 'q': case 'n': out->kind = K_INT; break;
    case 'B': case 'H': case 'I': case 'L': case 'Q': case 'N': out->kind = K_UINT; break;
    case '?': out->kind = K_BOOL; break;
    default: return -1;
    }
    out->size = (int)itemsize;
    if (out->kind == K_FLOAT ? (itemsize != 2 && itemsize != 4 && itemsize != 8)
                             : (itemsize != 1 && itemsize != 2 && itemsize != 4 && itemsize != 8))
        return -1;
    return 0;
}

/* The type a source becomes without dtype=: float64 -> float32, wider or narrower integers
 * -> int32 / uint32 (checked per value), bool -> bool (as comparisons give). */
static wgt_dtype default_dtype(src_type s) {
    if (s.kind == K_FLOAT) return s.size == 2 ? WGT_F16 : WGT_F32;
    if (s.kind == K_BOOL) return WGT_BOOL;
    return s.kind == K_INT ? WGT_I32 : WGT_U32;
}

/* One source element, as a double for floats and an exact integer for the rest. */
typedef struct {
    int is_float;
    double f;
    int64_t i;  /* signed sources */
    uint64_t u; /* unsigned sources (is_unsigned) */
    int is_unsigned;
} value;

static uint16_t load_u16(const char *p) { uint16_t v; memcpy(&v, p, 2); return v; }

static value load(const char *p, src_type s) {
    value v = {0};
    switch (s.kind) {
    case K_FLOAT:
        v.is_float = 1;
        if (s.size == 2) v.f = wgt_f16_to_f32(load_u16(p));
        else if (s.size == 4) { float f; memcpy(&f, p, 4); v.f = f; }
        else memcpy(&v.f, p, 8);
        break;
    case K_INT:
        if (s.size == 1) v.i = *(const int8_t *)p;
        else if (s.size == 2) { int16_t x; memcpy(&x, p, 2); v.i = x; }
        else if (s.size == 4) { int32_t x; memcpy(&x, p, 4); v.i = x; }
        else memcpy(&v.i, p, 8);
        break;
    case K_UINT:
    case K_BOOL:
        v.is_unsigned = 1;
        if (s.size == 1) v.u = *(const uint8_t *)p;
        else if (s.size == 2) v.u = load_u16(p);
        else if (s.size == 4) { uint32_t x; memcpy(&x, p, 4); v.u = x; }
        else memcpy(&v.u, p, 8);
        break;
    }
    return v;
}

typedef enum { OK = 0, BAD_RANGE, BAD_FRACTION } verdict;

/* The range of an integer type (bool: 0 and 1). */
static void int_range(wgt_dtype d, int64_t *lo, int64_t *hi) {
    switch (d) {
    case WGT_I32: *lo = INT32_MIN, *hi = INT32_MAX; break;
    case WGT_I16: *lo = INT16_MIN, *hi = INT16_MAX; break;
    case WGT_I8: *lo = INT8_MIN, *hi = INT8_MAX; break;
    case WGT_U16: *lo = 0, *hi = UINT16_MAX; break;
    case WGT_U8: *lo = 0, *hi = UINT8_MAX; break;
    case WGT_BOOL: *lo = 0, *hi = 1; break;
    case WGT_I64: *lo = INT64_MIN, *hi = INT64_MAX; break;
    default: *lo = 0, *hi = (int64_t)UINT32_MAX; break;
    }
}

/* u64 takes every value 0 to 2^64 - 1, beyond int64_t: its own checks. */
static verdict store_u64(char *dst, value v) {
    uint64_t x;
    if (v.is_float) {
        if (!isfinite(v.f) || v.f != floor(v.f)) return BAD_FRACTION;
        if (v.f < 0 || v.f >= 18446744073709551616.0) return BAD_RANGE;
        x = (uint64_t)v.f;
    } else if (v.is_unsigned) {
        x = v.u;
    } else {
        if (v.i < 0) return BAD_RANGE;
        x = (uint64_t)v.i;
    }
    memcpy(dst, &x, 8);
    return OK;
}

static verdict store(char *dst, wgt_dtype d, value v) {
    if (d == WGT_U64) return store_u64(dst, v);
    if (d == WGT_F32 || d == WGT_F16 || d == WGT_BF16) {
        double x = v.is_float ? v.f : v.is_unsigned ? (double)v.u : (double)v.i;
        float f = (float)x;
        if (isinf(f) && isfinite(x)) return BAD_RANGE;
        if (d == WGT_F32) memcpy(dst, &f, 4);
        else {
            uint16_t h = d == WGT_F16 ? wgt_f32_to_f16(f) : wgt_f32_to_bf16(f);
            if ((h & 0x7fff) == (d == WGT_F16 ? 0x7c00 : 0x7f80) && isfinite(f)) return BAD_RANGE;
            memcpy(dst, &h, 2);
        }
        return OK;
    }
    int64_t lo, hi, x;
    int_range(d, &lo, &hi);
    if (v.is_float) {
        if (!isfinite(v.f) || v.f != floor(v.f)) return BAD_FRACTION;
        /* (double)INT64_MAX is 2^63, one past the range: i64 compares below it. */
        if (v.f < (double)lo || (d == WGT_I64 ? v.f >= 9223372036854775808.0 : v.f > (double)hi)) return BAD_RANGE;
        x = (int64_t)v.f;
    } else if (v.is_unsigned) {
        if (v.u > (uint64_t)hi) return BAD_RANGE;
        x = (int64_t)v.u;
    } else {
        if (v.i < lo || v.i > hi) return BAD_RANGE;
        x = v.i;
    }
    switch (wgt_dtype_size(d)) {
    case 1: *(uint8_t *)dst = (uint8_t)x; break;
    case 2: { uint16_t y = (uint16_t)x; memcpy(dst, &y, 2); break; }
    case 8: memcpy(dst, &x, 8); break;
    default: { uint32_t y = (uint32_t)x; memcpy(dst, &y, 4); break; }
    }
    return OK;
}

typedef struct {
    verdict why;
    Py_ssize_t index[WGT_MAX_DIMS];
    value bad;
} convert_error;

/* Copies view into dst (row-major, dtype d), converting each element. Runs without the GIL. */
static void convert(const Py_buffer *view, src_type s, char *dst, wgt_dtype d, convert_error *err) {
    int ndim = view->ndim;
    size_t out_item = wgt_dtype_size(d);
    Py_ssize_t idx[WGT_MAX_DIMS] = {0}, n = 1;
    for (int i = 0; i < ndim; i++) n *= view->shape[i];
    if (n == 0) return;
    Py_ssize_t inner = ndim ? view->shape[ndim - 1] : 1, inner_stride = ndim ? view->strides[ndim - 1] : 0;
    int same = default_dtype(s) == d && (size_t)s.size == out_item && !(s.kind == K_BOOL);
    for (Py_ssize_t row = 0; row < n / inner; row++) {
        const char *p = view->buf;
        for (int i = 0; i < ndim - 1; i++) p += idx[i] * view->strides[i];
        if (same && inner_stride == (Py_ssize_t)out_item) {
            memcpy(dst, p, (size_t)inner * out_item);
            dst += (size_t)inner * out_item;
        } else {
            for (Py_ssize_t j = 0; j < inner; j++, p += inner_stride, dst += out_item) {
                if (same) {
                    memcpy(dst, p, out_item);
                    continue;
                }
                value v = load(p, s);
                verdict why = store(dst, d, v);
                if (why != OK) {
                    err->why = why;
                    err->bad = v;
                    memcpy(err->index, idx, sizeof idx);
                    if (ndim) err->index[ndim - 1] = j;
                    return;
                }
            }
        }
        for (int i = ndim - 2; i >= 0; i--) { /* next row: an odometer over the outer dims */
            if (++idx[i] < view->shape[i]) break;
            idx[i] = 0;
        }
    }
}

static PyObject *value_obj(value v) {
    if (v.is_float) return PyFloat_FromDouble(v.f);
    return v.is_unsigned ? PyLong_FromUnsignedLongLong(v.u) : PyLong_FromLongLong(v.i);
}

static void raise_convert_error(const convert_error *e, int ndim, wgt_dtype d) {
    PyObject *index = PyTuple_New(ndim), *val = value_obj(e->bad);
    for (int i = 0; index && i < ndim; i++) PyTuple_SET_ITEM(index, i, PyLong_FromSsize_t(e->index[i]));
    if (index && val)
        PyErr_Format(e->why == BAD_FRACTION ? PyExc_TypeError : PyExc_ValueError,
                     "asarray: value %R at index %R %s %s", val, index,
                     e->why == BAD_FRACTION ? "is not a whole number, as" : "is outside the range of",
                     wgt_dtype_name(d));
    Py_XDECREF(index);
    Py_XDECREF(val);
}

/* _from_buffer(obj, dtype=None, ctx=None) */
PyObject *wgtpy_from_buffer(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    static const char *const names[] = {"obj", "dtype", "ctx"};
    PyObject *vals[3] = {NULL, Py_None, Py_None};
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    if (nargs < 1 || nargs > 3) return PyErr_Format(PyExc_TypeError, "_from_buffer takes 1 to 3 arguments");
    for (Py_ssize_t i = 0; i < nargs; i++) vals[i] = args[i];
    for (Py_ssize_t k = 0; k < nkw; k++) {
        const char *kn = PyUnicode_AsUTF8(PyTuple_GET_ITEM(kwnames, k));
        int found = 0;
        for (int i = 1; kn && i < 3; i++)
            if (!strcmp(kn, names[i])) vals[i] = args[nargs + k], found = 1;
        if (!found) return PyErr_Format(PyExc_TypeError, "_from_buffer: unexpected keyword %R", PyTuple_GET_ITEM(kwnames, k));
    }
    Py_buffer view;
    if (PyObject_GetBuffer(vals[0], &view, PyBUF_RECORDS_RO) < 0) return NULL;
    PyObject *result = NULL;
    CtxObject *ctx = NULL;
    src_type s;
    wgt_dtype d;
    if (view.ndim > WGT_MAX_DIMS) {
        PyErr_Format(PyExc_ValueError, "asarray: %d dimensions, wgtensor takes at most %d", view.ndim, WGT_MAX_DIMS);
        goto done;
    }
    if (parse_format(view.format, view.itemsize, &s) < 0) {
        PyErr_Format(PyExc_TypeError, "asarray: element format '%s' (%zd bytes) is not a number type wgtensor converts",
                     view.format ? view.format : "B", view.itemsize);
        goto done;
    }
    if (vals[1] == Py_None) d = default_dtype(s);
    else if (wgtpy_dtype_from_obj(vals[1], &d) < 0) goto done;
    if (wgt_dtype_block_elements(d) > 1) {
        PyErr_Format(PyExc_TypeError, "asarray: %s is a block type; make a float tensor and wgtensor.quantize it",
                     wgt_dtype_name(d));
        goto done;
    }
    if (!(ctx = wgtpy_context_arg(vals[2]))) goto done;
    int64_t shape[WGT_MAX_DIMS];
    for (int i = 0; i < view.ndim; i++) shape[i] = view.shape[i];
    int direct = PyBuffer_IsContiguous(&view, 'C') && default_dtype(s) == d && (size_t)s.size == wgt_dtype_size(d) &&
                 s.kind != K_BOOL;
    convert_error err = {OK};
    wgt_tensor *t = NULL;
    WGTPY_LOCK(ctx);
    Py_BEGIN_ALLOW_THREADS /* the source is held by the buffer view; the copy needs no Python */
    if (direct) {
        /* create + write rather than wgt_tensor_from_data: on WebGPU the write goes straight to
         * the device buffer, where from_data fills a host copy first and uploads it later. */
        t = wgt_tensor_create(ctx->ctx, d, view.ndim, shape, WGT_USAGE_DEFAULT);
        if (t && view.len && wgt_tensor_write(t, view.buf, (size_t)view.len) != WGT_OK) wgt_release(t), t = NULL;
    } else if ((t = wgt_tensor_create(ctx->ctx, d, view.ndim, shape, WGT_USAGE_DEFAULT)) != NULL) {
        char *dst = wgt_tensor_nbytes(t) ? wgt_tensor_data_mut(t) : NULL;
        if (dst) convert(&view, s, dst, d, &err);
        else if (wgt_tensor_nbytes(t)) wgt_release(t), t = NULL;
        if (t && err.why != OK) wgt_release(t), t = NULL;
    }
    Py_END_ALLOW_THREADS
    WGTPY_UNLOCK(ctx);
    if (err.why != OK) raise_convert_error(&err, view.ndim, d);
    else result = wgtpy_wrap(t, ctx, "asarray", 0);
done:
    Py_XDECREF(ctx);
    PyBuffer_Release(&view);
    return result;
}

/* ---- operands, shapes, axes ---------------------------------------------------------------- */

static int is_int_dtype(wgt_dtype d) { return d == WGT_I32 || d == WGT_U32; }

TensorObject *wgtpy_operand(PyObject *o, TensorObject *like) {
    if (WGTPY_IS_TENSOR(o)) return (TensorObject *)Py_NewRef(o);
    wgt_dtype d = wgt_tensor_dtype(like->t);
    wgt_tensor *t = NULL;
    if (PyLong_Check(o)) {
        /* NumPy 2: a Python int takes the tensor's type; one the type cannot hold is an error. */
        if (d == WGT_I64 || d == WGT_U64) { /* every bit kept: no double holds all of them */
            int overflow = 0;
            uint64_t bits;
            if (d == WGT_I64) {
                long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
                bits = (uint64_t)v;
            } else {
                unsigned long long v = PyLong_AsUnsignedLongLong(o);
                overflow = v == (unsigned long long)-1 && PyErr_Occurred() ? (PyErr_Clear(), 1) : 0;
                bits = v;
            }
            if (PyErr_Occurred()) return NULL;
            if (overflow) {
                PyErr_Format(PyExc_OverflowError, "Python integer %R out of bounds for %s", o, wgt_dtype_name(d));
                return NULL;
            }
            WGTPY_LOCK(like->ctx);
            t = wgt_tensor_from_data(like->ctx->ctx, d, 0, NULL, &bits, sizeof bits, WGT_USAGE_DEFAULT);
            WGTPY_UNLOCK(like->ctx);
        } else if (is_int_dtype(d)) {
            int overflow = 0;
            long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
            if (v == -1 && PyErr_Occurred()) return NULL;
            if (overflow || (d == WGT_I32 ? (v < INT32_MIN || v > INT32_MAX) : (v < 0 || v > (long long)UINT32_MAX))) {
                PyErr_Format(PyExc_OverflowError, "Python integer %R out of bounds for %s", o, wgt_dtype_name(d));
                return NULL;
            }
            WGTPY_LOCK(like->ctx);
            t = wgt_scalar(like->ctx->ctx, d, (double)v);
            WGTPY_UNLOCK(like->ctx);
        } else {
            double v = PyLong_AsDouble(o);
            if (v == -1.0 && PyErr_Occurred()) return NULL;
            WGTPY_LOCK(like->ctx);
            t = wgt_scalar(like->ctx->ctx, d, v);
            WGTPY_UNLOCK(like->ctx);
        }
    } else if (PyFloat_Check(o)) {
        /* A Python float with an integer tensor promotes (NumPy 2 gives float64; float32 here). */
        double v = PyFloat_AS_DOUBLE(o);
        WGTPY_LOCK(like->ctx);
        t = wgt_scalar(like->ctx->ctx, is_int_dtype(d) ? WGT_F32 : d, v);
        WGTPY_UNLOCK(like->ctx);
    } else {
        if (!wgtpy_asarray_fn) {
            PyErr_SetString(PyExc_RuntimeError, "wgtensor: the Python layer did not register asarray");
            return NULL;
        }
        PyObject *kw = Py_BuildValue("{sO}", "ctx", (PyObject *)like->ctx), *args = PyTuple_Pack(1, o);
        PyObject *r = kw && args ? PyObject_Call(wgtpy_asarray_fn, args, kw) : NULL;
        Py_XDECREF(kw);
        Py_XDECREF(args);
        if (r && !WGTPY_IS_TENSOR(r)) {
            PyErr_Format(PyExc_TypeError, "wgtensor: asarray gave %.100s, not a Tensor", Py_TYPE(r)->tp_name);
            Py_CLEAR(r);
        }
        return (TensorObject *)r;
    }
    return (TensorObject *)wgtpy_wrap(t, like->ctx, "scalar operand", 0);
}

TensorObject *wgtpy_wide_index(PyObject *o, TensorObject *like) {
    if (WGTPY_IS_TENSOR(o) || !PyObject_CheckBuffer(o)) return NULL;
    Py_buffer view;
    if (PyObject_GetBuffer(o, &view, PyBUF_RECORDS_RO) < 0) {
        PyErr_Clear(); /* not an array we read: the usual conversion says what is wrong */
        return NULL;
    }
    src_type s;
    int wide = parse_format(view.format, view.itemsize, &s) == 0 && (s.kind == K_INT || s.kind == K_UINT) && s.size == 8;
    PyBuffer_Release(&view);
    if (!wide) return NULL;
    PyObject *dt = wgtpy_dtype_obj(s.kind == K_INT ? WGT_I64 : WGT_U64);
    if (!dt) return NULL;
    PyObject *args[3] = {o, dt, like ? (PyObject *)like->ctx : Py_None};
    PyObject *r = wgtpy_from_buffer(NULL, args, 3, NULL);
    Py_DECREF(dt);
    return (TensorObject *)r;
}

/* An integer from an int-like object: floats (NaN included) and None are TypeErrors. */
static int int64_arg(PyObject *o, int64_t *out, const char *fn, const char *what) {
    if (PyFloat_Check(o) || !PyIndex_Check(o)) {
        PyErr_Format(PyExc_TypeError, "%s: %s must be integers, not %.100s", fn, what, Py_TYPE(o)->tp_name);
        return -1;
    }
    PyObject *i = PyNumber_Index(o);
    if (!i) return -1;
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(i, &overflow);
    Py_DECREF(i);
    if (v == -1 && PyErr_Occurred()) return -1;
    if (overflow) {
        PyErr_Format(PyExc_ValueError, "%s: %s value %R does not fit 64 bits", fn, what, o);
        return -1;
    }
    *out = v;
    return 0;
}

int wgtpy_shape_arg(PyObject *o, int64_t *shape, const char *fn) {
    if (!PySequence_Check(o) || PyUnicode_Check(o) || WGTPY_IS_TENSOR(o))
        return int64_arg(o, &shape[0], fn, "shape") < 0 ? -1 : 1;
    PyObject *seq = PySequence_Fast(o, "shape must be an int or a sequence of ints");
    if (!seq) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n > WGT_MAX_DIMS) {
        Py_DECREF(seq);
        PyErr_Format(PyExc_ValueError, "%s: %zd dimensions, wgtensor takes at most %d", fn, n, WGT_MAX_DIMS);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        if (int64_arg(PySequence_Fast_GET_ITEM(seq, i), &shape[i], fn, "shape") < 0) {
            Py_DECREF(seq);
            return -1;
        }
    Py_DECREF(seq);
    return (int)n;
}

int wgtpy_axes_arg(PyObject *o, int *axes, const char *fn) {
    if (o == NULL || o == Py_None) return 0;
    int64_t v[WGT_MAX_DIMS];
    int n = wgtpy_shape_arg(o, v, fn);
    for (int i = 0; i < n; i++) {
        if (v[i] < -WGT_MAX_DIMS - 1 || v[i] > WGT_MAX_DIMS) {
            PyErr_Format(PyExc_ValueError, "%s: axis %lld is out of range", fn, (long long)v[i]);
            return -1;
        }
        axes[i] = (int)v[i];
    }
    return n;
}

PyMethodDef wgtpy_convert_methods[] = {
    {"_from_buffer", (PyCFunction)(void (*)(void))wgtpy_from_buffer, METH_FASTCALL | METH_KEYWORDS,
     "_from_buffer(obj, dtype=None, ctx=None): a tensor from an object with the buffer protocol (one copy)."},
    {NULL, NULL, 0, NULL},
};
