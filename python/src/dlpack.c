/*
 * DLPack export for CPU-resident data: Tensor.__dlpack__() hands out the storage's host copy
 * (wgt_tensor_data of a contiguous tensor; a non-contiguous view is first made contiguous) as
 * a "dltensor" capsule, without a copy, kept valid by a reference to the tensor that the
 * capsule's deleter drops. The structs are declared here from the DLPack specification
 * (dlpack.h, the unversioned ABI every consumer accepts), as the project declares what it
 * calls rather than vendoring headers. Consumers must treat the memory as read-only: on WebGPU
 * a write to the host copy is not seen by the device.
 */
#include <stdlib.h>
#include <string.h>

#include "wgtpy.h"

typedef struct {
    int32_t device_type; /* kDLCPU = 1 */
    int32_t device_id;
} dl_device;

typedef struct {
    uint8_t code; /* kDLInt 0, kDLUInt 1, kDLFloat 2, kDLBfloat 4, kDLBool 6 */
    uint8_t bits;
    uint16_t lanes;
} dl_dtype;

typedef struct {
    void *data;
    dl_device device;
    int32_t ndim;
    dl_dtype dtype;
    int64_t *shape;
    int64_t *strides;
    uint64_t byte_offset;
} dl_tensor;

typedef struct dl_managed {
    dl_tensor dl_tensor;
    void *manager_ctx;
    void (*deleter)(struct dl_managed *self);
} dl_managed;

typedef struct {
    dl_managed managed;
    PyObject *owner; /* the TensorObject whose storage `data` points into */
    int64_t shape[WGT_MAX_DIMS], strides[WGT_MAX_DIMS];
} export_block;

static void deleter(dl_managed *m) {
    export_block *b = (export_block *)m;
    /* Consumers may call this from any thread, with or without the GIL. */
    PyGILState_STATE g = PyGILState_Ensure();
    Py_XDECREF(b->owner);
    PyGILState_Release(g);
    free(b);
}

static void capsule_destructor(PyObject *capsule) {
    /* A capsule nobody consumed still owns the tensor; a consumed one is renamed. */
    if (!PyCapsule_IsValid(capsule, "dltensor")) return;
    dl_managed *m = PyCapsule_GetPointer(capsule, "dltensor");
    if (m && m->deleter) m->deleter(m);
}

/* DLPack's type code of d. */
static uint8_t dl_code(wgt_dtype d) {
    switch (d) {
    case WGT_I64: case WGT_I32: case WGT_I16: case WGT_I8: return 0;
    case WGT_U64: case WGT_U32: case WGT_U16: case WGT_U8: return 1;
    case WGT_BF16: return 4;
    case WGT_BOOL: return 6;
    default: return 2;
    }
}

static PyObject *tensor_dlpack(PyObject *self, PyObject *args, PyObject *kw) {
    static char *names[] = {"stream", "max_version", "dl_device", "copy", NULL};
    PyObject *stream = Py_None, *max_version = Py_None, *device = Py_None, *copy = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|$OOOO:__dlpack__", names, &stream, &max_version, &device, &copy))
        return NULL;
    if (stream != Py_None) return PyErr_Format(PyExc_BufferError, "__dlpack__: the data is on the CPU; stream must be None");
    TensorObject *t = (TensorObject *)self;
    if (wgt_dtype_block_elements(wgt_tensor_dtype(t->t)) > 1)
        return PyErr_Format(PyExc_BufferError, "__dlpack__: a %s tensor has no DLPack type; use wgtensor.dequantize(t)",
                            wgt_dtype_name(wgt_tensor_dtype(t->t)));
    PyObject *owner;
    if (wgt_tensor_is_contiguous(t->t)) {
        owner = Py_NewRef(self);
    } else {
        WGTPY_LOCK(t->ctx);
        wgt_tensor *c = wgt_contiguous(t->t);
        WGTPY_UNLOCK(t->ctx);
        if (!(owner = wgtpy_wrap(c, t->ctx, "__dlpack__", 0))) return NULL;
    }
    TensorObject *o = (TensorObject *)owner;
    const void *data;
    WGTPY_LOCK(o->ctx);
    Py_BEGIN_ALLOW_THREADS
    data = wgt_tensor_data(o->t);
    Py_END_ALLOW_THREADS
    WGTPY_UNLOCK(o->ctx);
    if (!data) {
        Py_DECREF(owner);
        return wgtpy_raise("__dlpack__", 0);
    }
    export_block *b = calloc(1, sizeof *b);
    if (!b) {
        Py_DECREF(owner);
        return PyErr_NoMemory();
    }
    wgt_dtype d = wgt_tensor_dtype(o->t);
    int ndim = wgt_tensor_ndim(o->t);
    const int64_t *shape = wgt_tensor_shape(o->t);
    int64_t stride = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        b->shape[i] = shape[i];
        b->strides[i] = stride; /* DLPack strides count elements */
        stride *= shape[i];
    }
    b->owner = owner;
    b->managed.dl_tensor = (dl_tensor){(void *)data, {1, 0}, ndim,
                                       {dl_code(d), (uint8_t)(8 * wgt_dtype_size(d)), 1},
                                       b->shape, b->strides, 0};
    b->managed.manager_ctx = b;
    b->managed.deleter = deleter;
    PyObject *capsule = PyCapsule_New(&b->managed, "dltensor", capsule_destructor);
    if (!capsule) deleter(&b->managed);
    return capsule;
}

static PyObject *tensor_dlpack_device(PyObject *self, PyObject *unused) { return Py_BuildValue("(ii)", 1, 0); }

int wgtpy_dlpack_init(PyObject *module) {
    static PyMethodDef defs[] = {
        {"__dlpack__", (PyCFunction)(void (*)(void))tensor_dlpack, METH_VARARGS | METH_KEYWORDS,
         "A DLPack capsule of the host copy (no copy for a contiguous tensor); read-only for consumers."},
        {"__dlpack_device__", (PyCFunction)tensor_dlpack_device, METH_NOARGS, "(kDLCPU, 0): the data is exported on the host."},
    };
    for (size_t i = 0; i < sizeof defs / sizeof defs[0]; i++) {
        PyObject *descr = PyDescr_NewMethod(wgtpy_Tensor, &defs[i]);
        int bad = !descr || PyObject_SetAttrString((PyObject *)wgtpy_Tensor, defs[i].ml_name, descr) < 0;
        Py_XDECREF(descr);
        if (bad) return -1;
    }
    return 0;
}
