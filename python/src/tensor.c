/*
 * wgtensor.Tensor: one wgt_tensor handle and the Context object it belongs to. Properties
 * come straight from the handle; the buffer protocol hands NumPy (or memoryview) the values:
 * a zero-copy read-only view of the storage's host copy when the tensor is contiguous, kept
 * valid by a reference to the tensor (the host copy of a storage is freed only with the
 * storage, and wgt_tensor_destroy is not bound), else one row-major copy. The type is a heap
 * type left mutable so the pure-Python layer can add repr, iteration and the like.
 */
#include <string.h>

#include "wgtpy.h"

PyTypeObject *wgtpy_Tensor;
PyObject *wgtpy_dtypes[WGTPY_NDTYPES + 1];
PyObject *wgtpy_dtype_parser;

PyObject *wgtpy_wrap(wgt_tensor *t, CtxObject *ctx, const char *fn, int index_errors) {
    if (!t) return wgtpy_raise(fn, index_errors);
    TensorObject *self = PyObject_GC_New(TensorObject, wgtpy_Tensor);
    if (!self) {
        WGTPY_LOCK(ctx);
        wgt_release(t);
        WGTPY_UNLOCK(ctx);
        return NULL;
    }
    self->t = t;
    Py_INCREF(ctx);
    self->ctx = ctx;
    self->exports = 0;
    self->weakrefs = NULL;
    PyObject_GC_Track(self); /* (PyObject_GC_New took the instance's reference to its heap type) */
    return (PyObject *)self;
}

static void tensor_dealloc(TensorObject *self) {
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    if (self->weakrefs) PyObject_ClearWeakRefs((PyObject *)self);
    if (self->t) {
        WGTPY_LOCK(self->ctx);
        wgt_release(self->t);
        WGTPY_UNLOCK(self->ctx);
        self->t = NULL;
    }
    Py_CLEAR(self->ctx);
    PyObject_GC_Del(self);
    Py_DECREF(tp);
}

static int tensor_traverse(TensorObject *self, visitproc visit, void *arg) {
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(self->ctx);
    return 0;
}

static PyObject *tensor_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
    PyErr_SetString(PyExc_TypeError, "wgtensor.Tensor cannot be created directly: use wgtensor.asarray, zeros, ...");
    return NULL;
}

TensorObject *wgtpy_tensor_arg(PyObject *o, const char *fn) {
    if (WGTPY_IS_TENSOR(o)) return (TensorObject *)o;
    PyErr_Format(PyExc_TypeError, "%s: %.100s is not a wgtensor.Tensor", fn, Py_TYPE(o)->tp_name);
    return NULL;
}

/* ---- dtypes --------------------------------------------------------------------------- */

PyObject *wgtpy_dtype_obj(wgt_dtype d) {
    PyObject *o = (d >= WGT_F32 && (int)d <= WGTPY_NDTYPES) ? wgtpy_dtypes[d] : NULL;
    if (!o) return PyErr_Format(PyExc_RuntimeError, "wgtensor: dtype %d has no Python object", (int)d);
    Py_INCREF(o);
    return o;
}

int wgtpy_dtype_from_obj(PyObject *o, wgt_dtype *out) {
    for (int d = WGT_F32; d <= WGTPY_NDTYPES; d++)
        if (o == wgtpy_dtypes[d]) return *out = (wgt_dtype)d, 0;
    if (!wgtpy_dtype_parser) {
        PyErr_SetString(PyExc_RuntimeError, "wgtensor: the Python layer did not register its dtypes");
        return -1;
    }
    /* Strings, NumPy dtypes and scalar types go through the Python layer's parser. */
    PyObject *d = PyObject_CallOneArg(wgtpy_dtype_parser, o);
    if (!d) return -1;
    for (int k = WGT_F32; k <= WGTPY_NDTYPES; k++)
        if (d == wgtpy_dtypes[k]) {
            Py_DECREF(d);
            return *out = (wgt_dtype)k, 0;
        }
    Py_DECREF(d);
    PyErr_Format(PyExc_TypeError, "wgtensor: %R is not a wgtensor dtype", o);
    return -1;
}

/* ---- properties ------------------------------------------------------------------------ */

static PyObject *int64_tuple(int n, const int64_t *v, int64_t scale) {
    PyObject *t = PyTuple_New(n);
    for (int i = 0; t && i < n; i++) {
        PyObject *x = PyLong_FromLongLong((long long)(v[i] * scale));
        if (!x) {
            Py_CLEAR(t);
            break;
        }
        PyTuple_SET_ITEM(t, i, x);
    }
    return t;
}

static PyObject *get_shape(TensorObject *s, void *u) {
    return int64_tuple(wgt_tensor_ndim(s->t), wgt_tensor_shape(s->t), 1);
}
static PyObject *get_strides(TensorObject *s, void *u) {
    return int64_tuple(wgt_tensor_ndim(s->t), wgt_tensor_strides(s->t),
                       (int64_t)wgt_dtype_size(wgt_tensor_dtype(s->t)));
}
static PyObject *get_ndim(TensorObject *s, void *u) { return PyLong_FromLong(wgt_tensor_ndim(s->t)); }
static PyObject *get_size(TensorObject *s, void *u) { return PyLong_FromLongLong(wgt_tensor_numel(s->t)); }
static PyObject *get_nbytes(TensorObject *s, void *u) { return PyLong_FromSize_t(wgt_tensor_nbytes(s->t)); }
static PyObject *get_itemsize(TensorObject *s, void *u) {
    return PyLong_FromSize_t(wgt_dtype_size(wgt_tensor_dtype(s->t)));
}
static PyObject *get_dtype(TensorObject *s, void *u) { return wgtpy_dtype_obj(wgt_tensor_dtype(s->t)); }
static PyObject *get_ctx(TensorObject *s, void *u) { return Py_NewRef(s->ctx); }
static PyObject *get_offset(TensorObject *s, void *u) { return PyLong_FromLongLong(wgt_tensor_offset(s->t)); }
static PyObject *get_contiguous(TensorObject *s, void *u) { return PyBool_FromLong(wgt_tensor_is_contiguous(s->t)); }

static PyGetSetDef tensor_getset[] = {
    {"shape", (getter)get_shape, NULL, "the dimensions, a tuple", NULL},
    {"strides", (getter)get_strides, NULL, "bytes between neighbours along each dimension, as NumPy's", NULL},
    {"ndim", (getter)get_ndim, NULL, "number of dimensions", NULL},
    {"size", (getter)get_size, NULL, "number of elements", NULL},
    {"nbytes", (getter)get_nbytes, NULL, "size * itemsize", NULL},
    {"itemsize", (getter)get_itemsize, NULL, "bytes per element", NULL},
    {"dtype", (getter)get_dtype, NULL, "wgtensor.float32, float16, int32 or uint32", NULL},
    {"device", (getter)get_ctx, NULL, "the Context holding the tensor", NULL},
    {"ctx", (getter)get_ctx, NULL, "the Context holding the tensor", NULL},
    {"offset", (getter)get_offset, NULL, "the first element's index into the storage", NULL},
    {"is_contiguous", (getter)get_contiguous, NULL, "row-major with no gaps", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static Py_ssize_t tensor_len(TensorObject *s) {
    if (wgt_tensor_ndim(s->t) == 0) {
        PyErr_SetString(PyExc_TypeError, "len() of a 0-d tensor");
        return -1;
    }
    return (Py_ssize_t)wgt_tensor_shape(s->t)[0];
}

/* ---- the buffer protocol ---------------------------------------------------------------- */

typedef struct {
    void *copy; /* PyMem block of a row-major copy, or NULL for a view of the host copy */
    Py_ssize_t shape[WGT_MAX_DIMS], strides[WGT_MAX_DIMS];
} buffer_info;

static const char *format_of(wgt_dtype d) {
    switch (d) {
    case WGT_F32: return "f";
    case WGT_F16: return "e";
    case WGT_I32: return "i";
    case WGT_U32: return "I";
    case WGT_I16: return "h";
    case WGT_U16: return "H";
    case WGT_I8: return "b";
    case WGT_BOOL: return "?";
    case WGT_I64: return "q";
    case WGT_U64: return "Q";
    default: break; /* u8; blocks and bf16 have no element format: tensor_getbuffer refuses them */
    }
    return "B";
}

static int tensor_getbuffer(TensorObject *self, Py_buffer *view, int flags) {
    if (flags & PyBUF_WRITABLE) {
        /* NumPy asks for a writable buffer first and takes a read-only one after this. */
        PyErr_SetString(PyExc_BufferError, "wgtensor.Tensor: the buffer is read-only (np.array(t) makes a writable copy)");
        return -1;
    }
    wgt_tensor *t = self->t;
    if (wgt_dtype_block_elements(wgt_tensor_dtype(t)) > 1) {
        /* ggml's blocks are not elements NumPy could index: say how to get values. */
        PyErr_Format(PyExc_TypeError, "wgtensor.Tensor: a %s tensor has no element buffer; use "
                     "wgtensor.dequantize(t) for its values (or t.tobytes() for its blocks)",
                     wgt_dtype_name(wgt_tensor_dtype(t)));
        return -1;
    }
    if (wgt_tensor_dtype(t) == WGT_BF16) { /* NumPy has no bfloat16 */
        PyErr_SetString(PyExc_TypeError, "wgtensor.Tensor: a bfloat16 tensor has no NumPy buffer; t.numpy() and "
                        "np.asarray(t) convert it to float32");
        return -1;
    }
    int ndim = wgt_tensor_ndim(t);
    size_t item = wgt_dtype_size(wgt_tensor_dtype(t)), nbytes = wgt_tensor_nbytes(t);
    buffer_info *info = PyMem_Calloc(1, sizeof *info);
    if (!info) {
        PyErr_NoMemory();
        return -1;
    }
    const void *data = NULL;
    wgt_status st = WGT_OK;
    int contiguous = wgt_tensor_is_contiguous(t);
    if (!contiguous && !(info->copy = PyMem_Malloc(nbytes ? nbytes : 1))) {
        PyMem_Free(info);
        PyErr_NoMemory();
        return -1;
    }
    WGTPY_LOCK(self->ctx);
    Py_BEGIN_ALLOW_THREADS /* both may wait for the device */
    if (contiguous) data = wgt_tensor_data(t);
    else st = wgt_tensor_read(t, info->copy, nbytes);
    Py_END_ALLOW_THREADS
    WGTPY_UNLOCK(self->ctx);
    if (contiguous ? data == NULL : st != WGT_OK) {
        PyMem_Free(info->copy);
        PyMem_Free(info);
        wgtpy_raise("Tensor buffer", 0);
        return -1;
    }
    const int64_t *shape = wgt_tensor_shape(t);
    Py_ssize_t stride = (Py_ssize_t)item;
    for (int i = ndim - 1; i >= 0; i--) {
        info->shape[i] = (Py_ssize_t)shape[i];
        info->strides[i] = stride;
        stride *= (Py_ssize_t)shape[i];
    }
    view->buf = contiguous ? (void *)data : info->copy;
    view->obj = Py_NewRef(self);
    view->len = (Py_ssize_t)nbytes;
    view->readonly = 1;
    view->itemsize = (Py_ssize_t)item;
    view->format = (flags & PyBUF_FORMAT) ? (char *)format_of(wgt_tensor_dtype(t)) : NULL;
    view->ndim = ndim;
    view->shape = (flags & PyBUF_ND) ? info->shape : NULL;
    view->strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? info->strides : NULL;
    view->suboffsets = NULL;
    view->internal = info;
    self->exports++;
    return 0;
}

static void tensor_releasebuffer(TensorObject *self, Py_buffer *view) {
    buffer_info *info = view->internal;
    if (info) {
        PyMem_Free(info->copy);
        PyMem_Free(info);
    }
    self->exports--;
}

/* ---- methods ------------------------------------------------------------------------------ */

static PyObject *tensor_eval(TensorObject *self, PyObject *unused) {
    wgt_status st;
    WGTPY_LOCK(self->ctx);
    Py_BEGIN_ALLOW_THREADS
    st = wgt_eval(1, &self->t);
    Py_END_ALLOW_THREADS
    WGTPY_UNLOCK(self->ctx);
    if (st != WGT_OK) return wgtpy_raise("Tensor.eval", 0);
    return Py_NewRef(self);
}

/* The row-major bytes, one copy (the pickling and tobytes path). */
static PyObject *tensor_tobytes(TensorObject *self, PyObject *unused) {
    size_t n = wgt_tensor_nbytes(self->t);
    PyObject *b = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)n);
    if (!b) return NULL;
    wgt_status st;
    char *dst = PyBytes_AS_STRING(b);
    WGTPY_LOCK(self->ctx);
    Py_BEGIN_ALLOW_THREADS
    st = wgt_tensor_read(self->t, dst, n);
    Py_END_ALLOW_THREADS
    WGTPY_UNLOCK(self->ctx);
    if (st != WGT_OK) {
        Py_DECREF(b);
        return wgtpy_raise("Tensor.tobytes", 0);
    }
    return b;
}

static PyMethodDef tensor_methods[] = {
    {"eval", (PyCFunction)tensor_eval, METH_NOARGS, "Runs the pending work this tensor needs (no wait); returns it."},
    {"tobytes", (PyCFunction)tensor_tobytes, METH_NOARGS, "The elements' bytes, row-major (one copy)."},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef tensor_members[] = {
    {"__weaklistoffset__", T_PYSSIZET, offsetof(TensorObject, weakrefs), READONLY, NULL},
    {NULL, 0, 0, 0, NULL},
};

int wgtpy_tensor_init(PyObject *module) {
    PyType_Slot slots[] = {
        {Py_tp_new, tensor_new},
        {Py_tp_dealloc, tensor_dealloc},
        {Py_tp_traverse, tensor_traverse},
        {Py_tp_getset, tensor_getset},
        {Py_tp_methods, tensor_methods},
        {Py_tp_members, tensor_members},
        {Py_tp_richcompare, wgtpy_richcompare},
        {Py_bf_getbuffer, tensor_getbuffer},
        {Py_bf_releasebuffer, tensor_releasebuffer},
        {Py_mp_length, tensor_len},
        {Py_sq_length, tensor_len},
        {Py_nb_add, wgtpy_number_methods.nb_add},
        {Py_nb_subtract, wgtpy_number_methods.nb_subtract},
        {Py_nb_multiply, wgtpy_number_methods.nb_multiply},
        {Py_nb_true_divide, wgtpy_number_methods.nb_true_divide},
        {Py_nb_floor_divide, wgtpy_number_methods.nb_floor_divide},
        {Py_nb_remainder, wgtpy_number_methods.nb_remainder},
        {Py_nb_power, wgtpy_number_methods.nb_power},
        {Py_nb_matrix_multiply, wgtpy_number_methods.nb_matrix_multiply},
        {Py_nb_negative, wgtpy_number_methods.nb_negative},
        {Py_nb_positive, wgtpy_number_methods.nb_positive},
        {Py_nb_absolute, wgtpy_number_methods.nb_absolute},
        {Py_nb_invert, wgtpy_number_methods.nb_invert},
        {Py_nb_and, wgtpy_number_methods.nb_and},
        {Py_nb_or, wgtpy_number_methods.nb_or},
        {Py_nb_xor, wgtpy_number_methods.nb_xor},
        {Py_nb_lshift, wgtpy_number_methods.nb_lshift},
        {Py_nb_rshift, wgtpy_number_methods.nb_rshift},
        {Py_tp_doc, "An n-dimensional array on a wgtensor Context (made by asarray, zeros, ops, ...)."},
        {0, NULL},
    };
    PyType_Spec spec = {"wgtensor.Tensor", sizeof(TensorObject), 0,
                        Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC, slots};
    wgtpy_Tensor = (PyTypeObject *)PyType_FromSpec(&spec);
    if (!wgtpy_Tensor) return -1;
    return PyModule_AddObjectRef(module, "Tensor", (PyObject *)wgtpy_Tensor);
}
