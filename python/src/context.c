/*
 * wgtensor.Context: one wgt_context, its lock (see wgtpy.h) and its lifetime. Tensors hold a
 * strong reference to their Context object, so the wgt_context is released only after the
 * last of its tensors. The default context and `with` blocks live in the pure-Python layer.
 */
#include <stdlib.h>
#include <string.h>

#include "wgtpy.h"

PyTypeObject *wgtpy_Context;
PyObject *wgtpy_default_ctx_fn;

void wgtpy_lock(CtxObject *c) {
    if (PyThread_acquire_lock(c->lock, NOWAIT_LOCK)) return;
    /* Another thread is inside the library with this context (waiting on the device, GIL
     * released): wait for it without holding the GIL, or it could never come back. */
    Py_BEGIN_ALLOW_THREADS
    PyThread_acquire_lock(c->lock, WAIT_LOCK);
    Py_END_ALLOW_THREADS
}

static int backend_arg(PyObject *o, wgt_backend_kind *out) {
    if (o == NULL || o == Py_None) return *out = WGT_BACKEND_AUTO, 0;
    const char *s = PyUnicode_Check(o) ? PyUnicode_AsUTF8(o) : NULL;
    if (s && !strcmp(s, "auto")) return *out = WGT_BACKEND_AUTO, 0;
    if (s && !strcmp(s, "webgpu")) return *out = WGT_BACKEND_WEBGPU, 0;
    if (s && !strcmp(s, "cpu")) return *out = WGT_BACKEND_CPU, 0;
    PyErr_Format(PyExc_ValueError, "Context: backend must be 'auto', 'webgpu', 'cpu' or None, not %R", o);
    return -1;
}

static PyObject *ctx_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
    static char *names[] = {"backend", "adapter", "library", "timeout_ms", "quiet", "fusion", "max_device_bytes", NULL};
    PyObject *backend = NULL;
    const char *adapter = NULL, *library = NULL;
    unsigned long timeout_ms = 0;
    unsigned long long max_bytes = 0;
    int quiet = 0, fusion = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|OzzkppK:Context", names, &backend, &adapter, &library, &timeout_ms,
                                     &quiet, &fusion, &max_bytes))
        return NULL;
    wgt_context_options o = {0};
    if (backend_arg(backend, &o.backend) < 0) return NULL;
    if (timeout_ms > UINT32_MAX) return PyErr_Format(PyExc_ValueError, "Context: timeout_ms %lu is above 2^32 - 1", timeout_ms);
    o.adapter = adapter;
    o.library_path = library;
    o.wait_timeout_ms = (uint32_t)timeout_ms;
    o.quiet = quiet;
    o.no_fusion = !fusion;
    o.max_device_bytes = max_bytes;
    CtxObject *self = (CtxObject *)type->tp_alloc(type, 0);
    if (!self) return NULL;
    self->lock = PyThread_allocate_lock();
    if (!self->lock) {
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    wgt_context *ctx;
    Py_BEGIN_ALLOW_THREADS /* starting a device can take a while */
    ctx = wgt_context_create(&o);
    Py_END_ALLOW_THREADS
    if (!ctx) {
        Py_DECREF(self);
        return wgtpy_raise("Context", 0);
    }
    self->ctx = ctx;
    return (PyObject *)self;
}

static void ctx_dealloc(CtxObject *self) {
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    if (self->weakrefs) PyObject_ClearWeakRefs((PyObject *)self);
    if (self->ctx) {
        wgt_context *ctx = self->ctx;
        self->ctx = NULL;
        /* Release runs pending work: a wait on the device. No tensor of it is left (each holds
         * this object), so nobody else can be using it. */
        Py_BEGIN_ALLOW_THREADS
        wgt_context_release(ctx);
        Py_END_ALLOW_THREADS
    }
    if (self->lock) PyThread_free_lock(self->lock);
    tp->tp_free(self);
    Py_DECREF(tp);
}

static int ctx_traverse(CtxObject *self, visitproc visit, void *arg) {
    Py_VISIT(Py_TYPE(self));
    return 0;
}

static PyObject *ctx_backend(CtxObject *self, void *unused) {
    return PyUnicode_FromString(wgt_context_backend(self->ctx) == WGT_BACKEND_CPU ? "cpu" : "webgpu");
}

static PyObject *ctx_device_name(CtxObject *self, void *unused) {
    return PyUnicode_FromString(wgt_context_device_name(self->ctx));
}

/* Runs a status-returning call on the context with its lock held and the GIL released. */
static PyObject *ctx_wait_call(CtxObject *self, wgt_status (*fn)(wgt_context *), const char *name) {
    wgt_status st;
    WGTPY_LOCK(self);
    Py_BEGIN_ALLOW_THREADS
    st = fn(self->ctx);
    Py_END_ALLOW_THREADS
    WGTPY_UNLOCK(self);
    if (st != WGT_OK) return wgtpy_raise(name, 0);
    Py_RETURN_NONE;
}

static PyObject *ctx_sync(CtxObject *self, PyObject *unused) { return ctx_wait_call(self, wgt_context_sync, "Context.sync"); }
static PyObject *ctx_trim(CtxObject *self, PyObject *unused) { return ctx_wait_call(self, wgt_context_trim, "Context.trim"); }
static PyObject *ctx_status(CtxObject *self, PyObject *unused) {
    return ctx_wait_call(self, wgt_context_status, "Context.check");
}
static PyObject *ctx_lose(CtxObject *self, PyObject *unused) {
    return ctx_wait_call(self, wgt_context_simulate_device_loss, "Context.simulate_device_loss");
}

static PyObject *ctx_describe(CtxObject *self, PyObject *unused) {
    WGTPY_LOCK(self);
    char *text = wgt_context_describe(self->ctx);
    WGTPY_UNLOCK(self);
    if (!text) return wgtpy_raise("Context.describe", 0);
    PyObject *s = PyUnicode_DecodeUTF8(text, (Py_ssize_t)strlen(text), "replace");
    free(text);
    return s;
}

static PyObject *ctx_stats(CtxObject *self, PyObject *unused) {
    wgt_stats s;
    WGTPY_LOCK(self);
    wgt_status st = wgt_context_stats(self->ctx, &s);
    WGTPY_UNLOCK(self);
    if (st != WGT_OK) return wgtpy_raise("Context.stats", 0);
    return Py_BuildValue("{sKsKsKsKsKsKsKsKsKsKsKsKsKsK}", "device_bytes_in_use", s.device_bytes_in_use,
                         "device_bytes_pooled", s.device_bytes_pooled, "device_bytes_peak", s.device_bytes_peak,
                         "buffers_created", s.buffers_created, "buffers_reused", s.buffers_reused, "ops_run",
                         s.ops_run, "ops_skipped", s.ops_skipped, "ops_fused", s.ops_fused, "launches", s.launches,
                         "dispatches", s.dispatches, "submits", s.submits, "kernels_cached", s.kernels_cached,
                         "bind_groups_created", s.bind_groups_created, "compute_passes", s.compute_passes);
}

static PyMethodDef ctx_methods[] = {
    {"sync", (PyCFunction)ctx_sync, METH_NOARGS, "Runs pending work and waits for the device to finish it."},
    {"trim", (PyCFunction)ctx_trim, METH_NOARGS, "Gives pooled device memory and compiled kernels back."},
    {"check", (PyCFunction)ctx_status, METH_NOARGS, "Raises DeviceLostError once the device was lost."},
    {"describe", (PyCFunction)ctx_describe, METH_NOARGS, "The backend, adapter, limits and features."},
    {"stats", (PyCFunction)ctx_stats, METH_NOARGS, "Memory and counters since creation, as a dict."},
    {"simulate_device_loss", (PyCFunction)ctx_lose, METH_NOARGS, "Test hook: loses the device as a driver would."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef ctx_getset[] = {
    {"backend", (getter)ctx_backend, NULL, "'cpu' or 'webgpu'", NULL},
    {"device_name", (getter)ctx_device_name, NULL, "'cpu' or the adapter's name", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMemberDef ctx_members[] = {
    {"__weaklistoffset__", T_PYSSIZET, offsetof(CtxObject, weakrefs), READONLY, NULL},
    {NULL, 0, 0, 0, NULL},
};

static PyType_Slot ctx_slots[] = {
    {Py_tp_new, ctx_new},
    {Py_tp_dealloc, ctx_dealloc},
    {Py_tp_traverse, ctx_traverse},
    {Py_tp_methods, ctx_methods},
    {Py_tp_getset, ctx_getset},
    {Py_tp_members, ctx_members},
    {Py_tp_doc, "Context(backend=None, adapter=None, library=None, timeout_ms=0, quiet=False, fusion=True, "
                "max_device_bytes=0): a device and the tensors made on it."},
    {0, NULL},
};

static PyType_Spec ctx_spec = {
    "wgtensor._core.Context", sizeof(CtxObject), 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    ctx_slots,
};

CtxObject *wgtpy_default_context(void) {
    if (!wgtpy_default_ctx_fn) {
        PyErr_SetString(PyExc_RuntimeError, "wgtensor: the Python layer did not register its default context");
        return NULL;
    }
    PyObject *c = PyObject_CallNoArgs(wgtpy_default_ctx_fn);
    if (c && !PyObject_TypeCheck(c, wgtpy_Context)) {
        PyErr_Format(PyExc_TypeError, "wgtensor: the default context is %R, not a Context", c);
        Py_CLEAR(c);
    }
    return (CtxObject *)c;
}

CtxObject *wgtpy_context_arg(PyObject *o) {
    if (o == NULL || o == Py_None) return wgtpy_default_context();
    if (!PyObject_TypeCheck(o, wgtpy_Context)) {
        PyErr_Format(PyExc_TypeError, "ctx must be a wgtensor.Context or None, not %.100s", Py_TYPE(o)->tp_name);
        return NULL;
    }
    Py_INCREF(o);
    return (CtxObject *)o;
}

/* devices(library=None): the adapters the webgpu library offers, one string each. */
static PyObject *py_devices(PyObject *m, PyObject *args, PyObject *kw) {
    static char *names[] = {"library", NULL};
    const char *library = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|z:devices", names, &library)) return NULL;
    char *text;
    Py_BEGIN_ALLOW_THREADS
    text = wgt_list_adapters(library);
    Py_END_ALLOW_THREADS
    if (!text) return wgtpy_raise("devices", 0);
    PyObject *s = PyUnicode_DecodeUTF8(text, (Py_ssize_t)strlen(text), "replace");
    free(text);
    if (!s) return NULL;
    PyObject *lines = PyUnicode_Splitlines(s, 0);
    Py_DECREF(s);
    return lines;
}

PyMethodDef wgtpy_context_methods[] = {
    {"devices", (PyCFunction)(void (*)(void))py_devices, METH_VARARGS | METH_KEYWORDS,
     "devices(library=None): every adapter of the webgpu library, one line each (wgt_list_adapters)."},
    {NULL, NULL, 0, NULL},
};

int wgtpy_context_init(PyObject *module) {
    wgtpy_Context = (PyTypeObject *)PyType_FromSpec(&ctx_spec);
    if (!wgtpy_Context) return -1;
    return PyModule_AddObjectRef(module, "Context", (PyObject *)wgtpy_Context);
}
