/*
 * User WGSL kernels: _core.Kernel wraps a wgt_kernel (wgt_kernel_create) with its context;
 * bindings() and workgroup_size describe the shader as the library reflected it, and
 * dispatch() records one dispatch (wgt_kernel_dispatch). wgtensor.kernel (pure-Python layer)
 * maps positional and keyword arguments onto binding names and uploads NumPy arrays.
 *
 * set_cpu(fn) gives the kernel a Python callable as its CPU function (wgt_kernel_set_cpu_fn):
 * the library calls it when a dispatch runs, inside whichever call made the work run, holding
 * the context's lock and perhaps without the GIL; the trampoline takes the GIL and hands fn
 * one memoryview per binding. The library may drop the callable while the context's lock is
 * held, so its last reference is dropped later, by a pending call, where a closure's tensors
 * may take the lock again.
 */
#include "wgtpy.h"

typedef struct {
    PyObject_HEAD
    wgt_kernel *k;
    CtxObject *ctx;
} KernelObject;

static PyObject *kernel_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
    PyObject *ctx_obj;
    const char *wgsl, *entry;
    if (!PyArg_ParseTuple(args, "O!ss:Kernel", wgtpy_Context, &ctx_obj, &wgsl, &entry)) return NULL;
    KernelObject *self = (KernelObject *)type->tp_alloc(type, 0);
    if (!self) return NULL;
    self->ctx = (CtxObject *)Py_NewRef(ctx_obj);
    WGTPY_LOCK(self->ctx);
    Py_BEGIN_ALLOW_THREADS /* the shader compiler runs here */
    self->k = wgt_kernel_create(self->ctx->ctx, wgsl, entry);
    Py_END_ALLOW_THREADS
    WGTPY_UNLOCK(self->ctx);
    if (!self->k) {
        Py_DECREF(self);
        return wgtpy_raise("kernel", 0);
    }
    return (PyObject *)self;
}

static void kernel_dealloc(KernelObject *self) {
    PyTypeObject *tp = Py_TYPE(self);
    if (self->k) {
        WGTPY_LOCK(self->ctx);
        wgt_kernel_release(self->k);
        WGTPY_UNLOCK(self->ctx);
    }
    Py_XDECREF(self->ctx);
    tp->tp_free(self);
    Py_DECREF(tp);
}

/* [{'name', 'type', 'binding', 'read_write', 'uniform', 'element_size', 'component_size'}] */
static PyObject *kernel_bindings(KernelObject *self, PyObject *unused) {
    int n = wgt_kernel_binding_count(self->k);
    PyObject *list = PyList_New(0);
    for (int i = 0; list && i < n; i++) {
        wgt_kernel_binding_info b;
        if (wgt_kernel_binding(self->k, i, &b) != WGT_OK) {
            Py_DECREF(list);
            return wgtpy_raise("kernel.bindings", 0);
        }
        PyObject *d = Py_BuildValue("{sssssIsisisIsI}", "name", b.name, "type", b.type, "binding", b.binding,
                                    "read_write", b.read_write, "uniform", b.uniform, "element_size", b.element_size,
                                    "component_size", b.component_size);
        if (!d || PyList_Append(list, d) < 0) Py_CLEAR(list);
        Py_XDECREF(d);
    }
    return list;
}

static PyObject *kernel_workgroup_size(KernelObject *self, void *unused) {
    uint32_t s[3];
    if (wgt_kernel_workgroup_size(self->k, s) != WGT_OK) return wgtpy_raise("kernel.workgroup_size", 0);
    return Py_BuildValue("(III)", s[0], s[1], s[2]);
}

static PyObject *kernel_groups_for(KernelObject *self, PyObject *arg) {
    long long n = PyLong_AsLongLong(arg);
    if (n == -1 && PyErr_Occurred()) return NULL;
    uint32_t g[3];
    WGTPY_LOCK(self->ctx);
    wgt_status st = wgt_kernel_groups_for(self->k, n, g);
    WGTPY_UNLOCK(self->ctx);
    if (st != WGT_OK) return wgtpy_raise("kernel.groups_for", 0);
    return Py_BuildValue("(III)", g[0], g[1], g[2]);
}

/* dispatch(args, params, groups): args is [(name, tensor or (dtype, shape)), ...], params a
 * bytes-like object or None, groups (x, y, z). Returns the outputs the call created, one per
 * argument (None where the argument was a tensor). */
static PyObject *kernel_dispatch(KernelObject *self, PyObject *args) {
    PyObject *list, *params_obj, *result = NULL, *seq;
    unsigned int gx, gy, gz;
    if (!PyArg_ParseTuple(args, "OO(III):dispatch", &list, &params_obj, &gx, &gy, &gz)) return NULL;
    if (!(seq = PySequence_Fast(list, "kernel arguments must be a list of (name, value) pairs"))) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    wgt_kernel_arg *a = PyMem_Calloc((size_t)(n ? n : 1), sizeof *a);
    wgt_tensor **outs = PyMem_Calloc((size_t)(n ? n : 1), sizeof *outs);
    int64_t(*shapes)[WGT_MAX_DIMS] = PyMem_Calloc((size_t)(n ? n : 1), sizeof *shapes);
    Py_buffer params = {0};
    int have_params = 0;
    if (!a || !outs || !shapes) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *pair = PySequence_Fast_GET_ITEM(seq, i), *name, *v;
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2 || !PyUnicode_Check(name = PyTuple_GET_ITEM(pair, 0))) {
            PyErr_Format(PyExc_TypeError, "kernel: argument %zd is not a (name, value) pair", i);
            goto done;
        }
        if (!(a[i].name = PyUnicode_AsUTF8(name))) goto done;
        v = PyTuple_GET_ITEM(pair, 1);
        if (WGTPY_IS_TENSOR(v)) {
            if (((TensorObject *)v)->ctx != self->ctx) {
                PyErr_Format(PyExc_ValueError, "kernel: %U is a tensor of another context", name);
                goto done;
            }
            a[i].tensor = ((TensorObject *)v)->t;
        } else if (PyTuple_Check(v) && PyTuple_GET_SIZE(v) == 2) { /* (dtype, shape): an output to create */
            int nd = wgtpy_shape_arg(PyTuple_GET_ITEM(v, 1), shapes[i], "kernel");
            if (nd < 0 || wgtpy_dtype_from_obj(PyTuple_GET_ITEM(v, 0), &a[i].dtype) < 0) goto done;
            a[i].ndim = nd;
            a[i].shape = shapes[i];
        } else {
            PyErr_Format(PyExc_TypeError, "kernel: %U must be a tensor or an output (dtype, shape)", name);
            goto done;
        }
    }
    if (params_obj != Py_None) {
        if (PyObject_GetBuffer(params_obj, &params, PyBUF_C_CONTIGUOUS) < 0) goto done;
        have_params = 1;
    }
    wgt_status st;
    WGTPY_LOCK(self->ctx);
    st = wgt_kernel_dispatch(self->k, (int)n, a, have_params ? params.buf : NULL, have_params ? (size_t)params.len : 0,
                             gx, gy, gz, outs);
    WGTPY_UNLOCK(self->ctx);
    if (st != WGT_OK) {
        wgtpy_raise("kernel", 0);
        goto done;
    }
    result = PyList_New(n);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = outs[i] ? wgtpy_wrap(outs[i], self->ctx, "kernel", 0) : Py_NewRef(Py_None);
        outs[i] = NULL;
        if (result && o) PyList_SET_ITEM(result, i, o);
        else Py_XDECREF(o);
        if (!o) Py_CLEAR(result);
    }
done:
    if (have_params) PyBuffer_Release(&params);
    if (outs) {
        WGTPY_LOCK(self->ctx);
        for (Py_ssize_t i = 0; i < n; i++) wgt_release(outs[i]);
        WGTPY_UNLOCK(self->ctx);
    }
    PyMem_Free(a);
    PyMem_Free(outs);
    PyMem_Free(shapes);
    Py_DECREF(seq);
    return result;
}

/* fn([(name, memoryview, dtype, shape, read_write), ...], params bytes or None, grid). */
static int cpu_trampoline(void *user, const wgt_kernel_cpu_call *c) {
    PyGILState_STATE gil = PyGILState_Ensure();
    int failed = 1;
    PyObject *list = PyList_New(c->nbuffers), *params = NULL, *r = NULL;
    for (int i = 0; list && i < c->nbuffers; i++) {
        const wgt_kernel_buffer *b = &c->buffers[i];
        PyObject *shape = PyTuple_New(b->ndim), *mv;
        for (int d = 0; shape && d < b->ndim; d++) {
            PyObject *v = PyLong_FromLongLong(b->shape[d]);
            if (!v) Py_CLEAR(shape);
            else PyTuple_SET_ITEM(shape, d, v);
        }
        /* An empty tensor has no memory to show: a zero-length view of a valid address. */
        static char none;
        mv = shape ? PyMemoryView_FromMemory(b->data ? b->data : &none, (Py_ssize_t)b->nbytes,
                                             b->read_write ? PyBUF_WRITE : PyBUF_READ)
                   : NULL;
        PyObject *dt = (unsigned)b->dtype < sizeof wgtpy_dtypes / sizeof *wgtpy_dtypes ? wgtpy_dtypes[b->dtype] : NULL;
        PyObject *item = mv && dt ? Py_BuildValue("(sOOOi)", b->name, mv, dt, shape, b->read_write) : NULL;
        Py_XDECREF(mv);
        Py_XDECREF(shape);
        if (!item) {
            if (!PyErr_Occurred()) PyErr_Format(PyExc_TypeError, "no Python dtype for wgt_dtype %d", (int)b->dtype);
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, i, item);
    }
    if (list) params = c->params ? PyBytes_FromStringAndSize(c->params, (Py_ssize_t)c->params_size) : Py_NewRef(Py_None);
    if (params)
        r = PyObject_CallFunction((PyObject *)user, "OO(III)", list, params, c->groups[0], c->groups[1], c->groups[2]);
    if (r) {
        failed = 0;
    } else { /* the exception becomes the run's reason */
        PyObject *type, *exc, *tb;
        PyErr_Fetch(&type, &exc, &tb);
        PyErr_NormalizeException(&type, &exc, &tb);
        PyObject *text = exc ? PyObject_Str(exc) : NULL;
        const char *msg = text ? PyUnicode_AsUTF8(text) : NULL;
        snprintf(c->error, c->error_size, "%s: %s", exc ? Py_TYPE(exc)->tp_name : "error", msg ? msg : "");
        PyErr_Clear();
        Py_XDECREF(text);
        Py_XDECREF(type);
        Py_XDECREF(exc);
        Py_XDECREF(tb);
    }
    Py_XDECREF(r);
    Py_XDECREF(params);
    Py_XDECREF(list);
    PyGILState_Release(gil);
    return failed;
}

static int decref_later(void *obj) {
    Py_DECREF((PyObject *)obj);
    return 0;
}

static void cpu_release(void *user) {
    PyGILState_STATE gil = PyGILState_Ensure();
    if (Py_AddPendingCall(decref_later, user) < 0) Py_DECREF((PyObject *)user); /* queue full: now */
    PyGILState_Release(gil);
}

static PyObject *kernel_set_cpu(KernelObject *self, PyObject *fn) {
    if (!PyCallable_Check(fn)) return PyErr_Format(PyExc_TypeError, "kernel: cpu must be callable");
    WGTPY_LOCK(self->ctx);
    wgt_status st = wgt_kernel_set_cpu_fn(self->k, cpu_trampoline, fn, cpu_release);
    WGTPY_UNLOCK(self->ctx);
    if (st != WGT_OK) return wgtpy_raise("kernel.set_cpu", 0);
    Py_INCREF(fn); /* the kernel's now, dropped through cpu_release */
    Py_RETURN_NONE;
}

static PyMethodDef kernel_methods[] = {
    {"set_cpu", (PyCFunction)kernel_set_cpu, METH_O,
     "set_cpu(fn): fn(buffers, params, grid) computes the kernel on the CPU backend (wgt_kernel_set_cpu_fn)."},
    {"bindings", (PyCFunction)kernel_bindings, METH_NOARGS, "The shader's bindings, in source order, as dicts."},
    {"groups_for", (PyCFunction)kernel_groups_for, METH_O, "Workgroups covering n invocations along x."},
    {"dispatch", (PyCFunction)kernel_dispatch, METH_VARARGS,
     "dispatch([(name, tensor or (dtype, shape)), ...], params, (x, y, z)): records one dispatch."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef kernel_getset[] = {
    {"workgroup_size", (getter)kernel_workgroup_size, NULL, "the entry point's @workgroup_size", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot kernel_slots[] = {
    {Py_tp_new, kernel_new},
    {Py_tp_dealloc, kernel_dealloc},
    {Py_tp_methods, kernel_methods},
    {Py_tp_getset, kernel_getset},
    {Py_tp_doc, "Kernel(ctx, wgsl, entry): a compiled user WGSL compute shader (wgt_kernel_create)."},
    {0, NULL},
};

static PyType_Spec kernel_spec = {"wgtensor._core.Kernel", sizeof(KernelObject), 0, Py_TPFLAGS_DEFAULT, kernel_slots};

int wgtpy_kernel_init(PyObject *module) {
    PyObject *type = PyType_FromSpec(&kernel_spec);
    if (!type) return -1;
    int r = PyModule_AddObjectRef(module, "Kernel", type);
    Py_DECREF(type);
    return r;
}
