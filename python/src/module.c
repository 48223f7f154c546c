/*
 * The extension module wgtensor._core: creates the types, the exceptions and the op
 * functions, and takes what the pure-Python layer registers (dtype objects, asarray, the
 * default context). Module-level helpers without a better home live here: eval, version.
 */
#include "wgtpy.h"

/* _register(dtypes, dtype_parser, asarray, default_context): dtypes is a 14-tuple of the
 * float32, float16, int32, uint32, q8_0, q4_0, bool, int8, uint8, int16, uint16, bfloat16,
 * int64 and uint64 objects, in the order of wgt_dtype's values. */
static PyObject *py_register(PyObject *m, PyObject *args) {
    PyObject *dtypes, *parser, *asarray, *dflt;
    if (!PyArg_ParseTuple(args, "O!OOO:_register", &PyTuple_Type, &dtypes, &parser, &asarray, &dflt)) return NULL;
    if (PyTuple_GET_SIZE(dtypes) != WGTPY_NDTYPES)
        return PyErr_Format(PyExc_ValueError, "_register: %d dtypes expected", WGTPY_NDTYPES);
    for (int d = WGT_F32; d <= WGTPY_NDTYPES; d++) Py_XSETREF(wgtpy_dtypes[d], Py_NewRef(PyTuple_GET_ITEM(dtypes, d - 1)));
    Py_XSETREF(wgtpy_dtype_parser, Py_NewRef(parser));
    Py_XSETREF(wgtpy_asarray_fn, Py_NewRef(asarray));
    Py_XSETREF(wgtpy_default_ctx_fn, Py_NewRef(dflt));
    Py_RETURN_NONE;
}

/* eval(*tensors): one wgt_eval per context, in order of first appearance. */
static PyObject *py_eval(PyObject *m, PyObject *const *args, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; i++)
        if (!WGTPY_IS_TENSOR(args[i]))
            return PyErr_Format(PyExc_TypeError, "eval: argument %zd is %.100s, not a Tensor", i, Py_TYPE(args[i])->tp_name);
    wgt_tensor **ts = PyMem_Malloc(sizeof *ts * (size_t)(n ? n : 1));
    if (!ts) return PyErr_NoMemory();
    PyObject *result = Py_None;
    for (Py_ssize_t i = 0; i < n && result; i++) {
        CtxObject *ctx = ((TensorObject *)args[i])->ctx;
        int first = 1, k = 0;
        for (Py_ssize_t j = 0; j < i; j++) first &= ((TensorObject *)args[j])->ctx != ctx;
        if (!first) continue;
        for (Py_ssize_t j = i; j < n; j++)
            if (((TensorObject *)args[j])->ctx == ctx) ts[k++] = ((TensorObject *)args[j])->t;
        wgt_status st;
        WGTPY_LOCK(ctx);
        Py_BEGIN_ALLOW_THREADS
        st = wgt_eval(k, ts);
        Py_END_ALLOW_THREADS
        WGTPY_UNLOCK(ctx);
        if (st != WGT_OK) result = wgtpy_raise("eval", 0);
    }
    PyMem_Free(ts);
    return Py_XNewRef(result);
}

static PyObject *py_version(PyObject *m, PyObject *unused) { return PyUnicode_FromString(wgt_version()); }

static PyMethodDef module_methods[] = {
    {"_register", py_register, METH_VARARGS, NULL},
    {"eval", (PyCFunction)(void (*)(void))py_eval, METH_FASTCALL,
     "eval(*tensors): runs the pending work the tensors need and submits it, without waiting."},
    {"library_version", py_version, METH_NOARGS, "The C library's version (wgt_version)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "wgtensor._core", "The C core of wgtensor: tensors, contexts and ops.", -1, module_methods,
};

int wgtpy_add_functions(PyObject *m, PyMethodDef *defs) {
    PyObject *name = PyModule_GetNameObject(m);
    if (!name) return -1;
    for (PyMethodDef *d = defs; d->ml_name; d++) {
        PyObject *f = PyCFunction_NewEx(d, NULL, name);
        if (!f || PyModule_AddObject(m, d->ml_name, f) < 0) {
            Py_XDECREF(f);
            Py_DECREF(name);
            return -1;
        }
    }
    Py_DECREF(name);
    return 0;
}

PyMODINIT_FUNC PyInit__core(void) {
    PyObject *m = PyModule_Create(&module_def);
    if (!m) return NULL;
    if (wgtpy_errors_init(m) < 0 || wgtpy_context_init(m) < 0 || wgtpy_tensor_init(m) < 0 ||
        wgtpy_add_functions(m, wgtpy_creation_methods) < 0 || wgtpy_add_functions(m, wgtpy_context_methods) < 0 ||
        wgtpy_add_functions(m, wgtpy_convert_methods) < 0 || wgtpy_add_functions(m, wgtpy_read_methods) < 0 ||
        wgtpy_add_functions(m, wgtpy_graph_methods) < 0 || wgtpy_read_init(m) < 0 || wgtpy_graph_init(m) < 0 ||
        wgtpy_dlpack_init(m) < 0 || wgtpy_kernel_init(m) < 0 ||
        wgtpy_autograd_init(m) < 0 || wgtpy_quant_init(m) < 0 || wgtpy_ops_init(m) < 0 ||
        PyModule_AddIntConstant(m, "MAX_DIMS", WGT_MAX_DIMS) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
