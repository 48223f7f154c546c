/*
 * Compiled graphs for wgtensor.compile (pure-Python layer): placeholders (wgt_graph_input)
 * and the Graph object (wgt_graph_build, wgt_graph_dispatch). Names and tensors travel as
 * lists of (name, tensor) pairs; the C API checks every binding and names a wrong one.
 */
#include "wgtpy.h"

typedef struct {
    PyObject_HEAD
    wgt_graph *g;
    CtxObject *ctx;
} GraphObject;

static PyTypeObject *Graph_type;

/* _graph_input(ctx, name, dtype, shape) */
static PyObject *py_graph_input(PyObject *m, PyObject *args) {
    PyObject *ctx_obj, *dtype_obj, *shape_obj;
    const char *name;
    if (!PyArg_ParseTuple(args, "O!sOO:_graph_input", wgtpy_Context, &ctx_obj, &name, &dtype_obj, &shape_obj))
        return NULL;
    wgt_dtype d;
    int64_t shape[WGT_MAX_DIMS];
    int ndim = wgtpy_shape_arg(shape_obj, shape, "compile");
    if (ndim < 0 || wgtpy_dtype_from_obj(dtype_obj, &d) < 0) return NULL;
    CtxObject *ctx = (CtxObject *)ctx_obj;
    WGTPY_LOCK(ctx);
    wgt_tensor *t = wgt_graph_input(ctx->ctx, name, d, ndim, shape);
    WGTPY_UNLOCK(ctx);
    return wgtpy_wrap(t, ctx, "compile", 0);
}

/* Reads [(name, tensor), ...] into bindings; the names stay owned by the list. */
static int bindings(PyObject *list, CtxObject *ctx, wgt_binding **out, Py_ssize_t *n, const char *fn) {
    PyObject *seq = PySequence_Fast(list, "bindings must be a list of (name, tensor) pairs");
    if (!seq) return -1;
    *n = PySequence_Fast_GET_SIZE(seq);
    *out = PyMem_Calloc((size_t)(*n ? *n : 1), sizeof **out);
    if (!*out) {
        Py_DECREF(seq);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < *n; i++) {
        PyObject *pair = PySequence_Fast_GET_ITEM(seq, i), *name, *t;
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2 || !PyUnicode_Check(name = PyTuple_GET_ITEM(pair, 0)) ||
            !WGTPY_IS_TENSOR(t = PyTuple_GET_ITEM(pair, 1))) {
            PyErr_Format(PyExc_TypeError, "%s: binding %zd is not a (name, tensor) pair", fn, i);
            goto fail;
        }
        if (((TensorObject *)t)->ctx != ctx) {
            PyErr_Format(PyExc_ValueError, "%s: binding %U is a tensor of another context", fn, name);
            goto fail;
        }
        if (!((*out)[i].name = PyUnicode_AsUTF8(name))) goto fail;
        (*out)[i].tensor = ((TensorObject *)t)->t;
    }
    Py_DECREF(seq); /* the caller's list keeps the names and tensors alive */
    return 0;
fail:
    PyMem_Free(*out);
    *out = NULL;
    Py_DECREF(seq);
    return -1;
}

static PyObject *graph_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
    PyObject *ctx_obj, *outputs;
    if (!PyArg_ParseTuple(args, "O!O:Graph", wgtpy_Context, &ctx_obj, &outputs)) return NULL;
    CtxObject *ctx = (CtxObject *)ctx_obj;
    wgt_binding *b;
    Py_ssize_t n;
    if (bindings(outputs, ctx, &b, &n, "compile") < 0) return NULL;
    GraphObject *self = (GraphObject *)type->tp_alloc(type, 0);
    if (!self) {
        PyMem_Free(b);
        return NULL;
    }
    self->ctx = (CtxObject *)Py_NewRef(ctx);
    WGTPY_LOCK(ctx);
    self->g = n > INT32_MAX ? NULL : wgt_graph_build(ctx->ctx, (int)n, b);
    WGTPY_UNLOCK(ctx);
    PyMem_Free(b);
    if (!self->g) {
        Py_DECREF(self);
        return wgtpy_raise("compile", 1);
    }
    return (PyObject *)self;
}

static void graph_dealloc(GraphObject *self) {
    PyTypeObject *tp = Py_TYPE(self);
    if (self->g) {
        WGTPY_LOCK(self->ctx);
        wgt_graph_release(self->g);
        WGTPY_UNLOCK(self->ctx);
    }
    Py_XDECREF(self->ctx);
    tp->tp_free(self);
    Py_DECREF(tp);
}

static PyObject *graph_dispatch(GraphObject *self, PyObject *args) {
    PyObject *inputs, *outputs;
    if (!PyArg_ParseTuple(args, "OO:dispatch", &inputs, &outputs)) return NULL;
    wgt_binding *in, *out;
    Py_ssize_t nin, nout;
    if (bindings(inputs, self->ctx, &in, &nin, "compiled call") < 0) return NULL;
    if (bindings(outputs, self->ctx, &out, &nout, "compiled call") < 0) {
        PyMem_Free(in);
        return NULL;
    }
    wgt_status st;
    WGTPY_LOCK(self->ctx);
    Py_BEGIN_ALLOW_THREADS
    st = wgt_graph_dispatch(self->g, (int)nin, in, (int)nout, out);
    Py_END_ALLOW_THREADS
    WGTPY_UNLOCK(self->ctx);
    PyMem_Free(in);
    PyMem_Free(out);
    if (st != WGT_OK) return wgtpy_raise("compiled call", 1);
    Py_RETURN_NONE;
}

static PyObject *graph_launches(GraphObject *self, void *unused) { return PyLong_FromLong(wgt_graph_launches(self->g)); }

static PyMethodDef graph_methods[] = {
    {"dispatch", (PyCFunction)graph_dispatch, METH_VARARGS,
     "dispatch(inputs, outputs): runs the graph with [(name, tensor), ...] bindings."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef graph_getset[] = {
    {"launches", (getter)graph_launches, NULL, "kernel launches per dispatch, after fusion", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot graph_slots[] = {
    {Py_tp_new, graph_new},
    {Py_tp_dealloc, graph_dealloc},
    {Py_tp_methods, graph_methods},
    {Py_tp_getset, graph_getset},
    {Py_tp_doc, "Graph(ctx, [(name, tensor), ...]): a compiled graph of the named outputs (wgt_graph_build)."},
    {0, NULL},
};

static PyType_Spec graph_spec = {"wgtensor._core.Graph", sizeof(GraphObject), 0, Py_TPFLAGS_DEFAULT, graph_slots};

PyMethodDef wgtpy_graph_methods[] = {
    {"_graph_input", py_graph_input, METH_VARARGS, "_graph_input(ctx, name, dtype, shape): a graph placeholder."},
    {NULL, NULL, 0, NULL},
};

int wgtpy_graph_init(PyObject *module) {
    Graph_type = (PyTypeObject *)PyType_FromSpec(&graph_spec);
    if (!Graph_type) return -1;
    return PyModule_AddObjectRef(module, "Graph", (PyObject *)Graph_type);
}
