/*
 * Asynchronous reads: t.numpy_async() starts a wgt_read into a fresh NumPy array and returns
 * a Read object; done() polls without blocking, result() waits (GIL released) and returns the
 * array. Several reads started before the first wait share one submission, so reading many
 * tensors overlaps their transfers. The Read holds the tensor and the array until it is freed;
 * an unfinished request is abandoned then and the array is not written after.
 */
#include "wgtpy.h"

typedef struct {
    PyObject_HEAD
    wgt_read *r;
    TensorObject *t;
    PyObject *dst;
    Py_buffer view;
    int finished;
} ReadObject;

static PyTypeObject *Read_type;

static void read_dealloc(ReadObject *self) {
    PyTypeObject *tp = Py_TYPE(self);
    if (self->r) {
        WGTPY_LOCK(self->t->ctx);
        wgt_read_release(self->r);
        WGTPY_UNLOCK(self->t->ctx);
    }
    if (self->dst) PyBuffer_Release(&self->view);
    Py_XDECREF(self->dst);
    Py_XDECREF(self->t);
    tp->tp_free(self);
    Py_DECREF(tp);
}

static PyObject *read_done(ReadObject *self, PyObject *unused) {
    if (!self->finished) {
        int done = 0;
        wgt_status st;
        WGTPY_CALL_NOGIL(self->t->ctx, st = wgt_read_poll(self->r, &done)); /* the CPU backend computes here */
        if (st != WGT_OK) return wgtpy_raise("Read.done", 1);
        self->finished = done;
    }
    return PyBool_FromLong(self->finished);
}

static PyObject *read_result(ReadObject *self, PyObject *unused) {
    if (!self->finished) {
        wgt_status st;
        WGTPY_LOCK(self->t->ctx);
        Py_BEGIN_ALLOW_THREADS
        st = wgt_read_wait(self->r);
        Py_END_ALLOW_THREADS
        WGTPY_UNLOCK(self->t->ctx);
        if (st != WGT_OK) return wgtpy_raise("Read.result", 1);
        self->finished = 1;
    }
    return Py_NewRef(self->dst);
}

static PyMethodDef read_methods[] = {
    {"done", (PyCFunction)read_done, METH_NOARGS, "Whether the data has arrived (never blocks)."},
    {"result", (PyCFunction)read_result, METH_NOARGS, "Waits for the data and returns the NumPy array."},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot read_slots[] = {
    {Py_tp_dealloc, read_dealloc},
    {Py_tp_methods, read_methods},
    {Py_tp_doc, "A read of a tensor into a NumPy array under way (Tensor.numpy_async)."},
    {0, NULL},
};

static PyType_Spec read_spec = {"wgtensor.Read", sizeof(ReadObject), 0, Py_TPFLAGS_DEFAULT, read_slots};

/* _read_begin(tensor, dst): dst is a writable C-contiguous array of the tensor's byte size. */
static PyObject *py_read_begin(PyObject *m, PyObject *args) {
    PyObject *t, *dst;
    if (!PyArg_ParseTuple(args, "O!O:_read_begin", wgtpy_Tensor, &t, &dst)) return NULL;
    ReadObject *self = PyObject_New(ReadObject, Read_type);
    if (!self) return NULL;
    self->r = NULL;
    self->t = (TensorObject *)Py_NewRef(t);
    self->dst = NULL;
    self->finished = 0;
    if (PyObject_GetBuffer(dst, &self->view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    self->dst = Py_NewRef(dst);
    size_t n = wgt_tensor_nbytes(self->t->t);
    if ((size_t)self->view.len != n) {
        Py_DECREF(self);
        return PyErr_Format(PyExc_ValueError, "_read_begin: the array has %zd bytes, the tensor %zu", self->view.len, n);
    }
    /* The CPU backend runs the pending work here; WebGPU may wait for room to submit it. */
    WGTPY_CALL_NOGIL(self->t->ctx, self->r = wgt_read_begin(self->t->t, self->view.buf, n));
    if (!self->r) {
        Py_DECREF(self);
        return wgtpy_raise("numpy_async", 1);
    }
    return (PyObject *)self;
}

PyMethodDef wgtpy_read_methods[] = {
    {"_read_begin", py_read_begin, METH_VARARGS, "_read_begin(tensor, dst): starts an asynchronous read into dst."},
    {NULL, NULL, 0, NULL},
};

int wgtpy_read_init(PyObject *module) {
    Read_type = (PyTypeObject *)PyType_FromSpec(&read_spec);
    if (!Read_type) return -1;
    return PyModule_AddObjectRef(module, "Read", (PyObject *)Read_type);
}
