/*
 * Autograd, optimizers and tensor files (docs/autograd.md) for the Python layer
 * (wgtensor/_autograd.py): thin private functions, one C call each, plus the requires_grad
 * and grad attributes of Tensor. An optimizer is a capsule that owns a reference to its
 * context, so the context outlives the optimizer whatever order Python frees them in.
 */
#include <stdlib.h>

#include "wgtpy.h"

/* The tensors of a sequence into a PyMem array (borrowed); *ctx is the first one's context. */
static wgt_tensor **tensor_list(PyObject *seq, int *n, CtxObject **ctx, const char *fn) {
    PyObject *fast = PySequence_Fast(seq, "a sequence of tensors is expected");
    if (!fast) return NULL;
    Py_ssize_t len = PySequence_Fast_GET_SIZE(fast);
    if (len == 0 || len > 1 << 20) {
        Py_DECREF(fast);
        PyErr_Format(PyExc_ValueError, "%s: %zd tensors, expected 1 to %d", fn, len, 1 << 20);
        return NULL;
    }
    wgt_tensor **ts = PyMem_Malloc(sizeof *ts * (size_t)len);
    if (!ts) {
        Py_DECREF(fast);
        PyErr_NoMemory();
        return NULL;
    }
    for (Py_ssize_t i = 0; i < len; i++) {
        TensorObject *t = wgtpy_tensor_arg(PySequence_Fast_GET_ITEM(fast, i), fn);
        if (!t) {
            PyMem_Free(ts);
            Py_DECREF(fast);
            return NULL;
        }
        ts[i] = t->t;
        if (i == 0) *ctx = t->ctx;
    }
    Py_DECREF(fast); /* the caller's sequence keeps the tensors alive */
    *n = (int)len;
    return ts;
}

static PyObject *status_result(wgt_status st, const char *fn) {
    if (st != WGT_OK) return wgtpy_raise(fn, 0);
    Py_RETURN_NONE;
}

/* ---- Tensor attributes ------------------------------------------------------------------- */

static PyObject *get_requires_grad(TensorObject *s, void *u) { return PyBool_FromLong(wgt_tensor_requires_grad(s->t)); }
static int set_requires_grad(TensorObject *s, PyObject *v, void *u) {
    if (!v) {
        PyErr_SetString(PyExc_AttributeError, "Tensor.requires_grad cannot be deleted");
        return -1;
    }
    int on = PyObject_IsTrue(v);
    if (on < 0) return -1;
    WGTPY_LOCK(s->ctx);
    wgt_status st = wgt_requires_grad(s->t, on);
    WGTPY_UNLOCK(s->ctx);
    return st == WGT_OK ? 0 : (wgtpy_raise("Tensor.requires_grad", 0), -1);
}
static PyObject *get_grad(TensorObject *s, void *u) {
    WGTPY_LOCK(s->ctx);
    wgt_clear_error(); /* NULL means "no gradient" unless the call left an error */
    wgt_tensor *g = wgt_grad(s->t);
    wgt_status st = wgt_last_status();
    WGTPY_UNLOCK(s->ctx);
    if (!g && st != WGT_OK) return wgtpy_raise("Tensor.grad", 0);
    if (!g) Py_RETURN_NONE;
    return wgtpy_wrap(g, s->ctx, "Tensor.grad", 0);
}

static PyGetSetDef grad_getset[] = {
    {"requires_grad", (getter)get_requires_grad, (setter)set_requires_grad,
     "whether gradients flow into this tensor; setting it marks (or unmarks) a leaf", NULL},
    {"grad", (getter)get_grad, NULL, "the accumulated gradient of a leaf, or None", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

/* ---- autograd functions ------------------------------------------------------------------ */

/* _backward(loss, grad_or_None) */
static PyObject *py_backward(PyObject *m, PyObject *args) {
    PyObject *lo, *go;
    if (!PyArg_ParseTuple(args, "OO:backward", &lo, &go)) return NULL;
    TensorObject *loss = wgtpy_tensor_arg(lo, "backward"), *grad = NULL;
    if (!loss) return NULL;
    if (go != Py_None && !(grad = wgtpy_operand(go, loss))) return NULL;
    wgt_status st;
    WGTPY_LOCK(loss->ctx);
    Py_BEGIN_ALLOW_THREADS
    st = wgt_backward(loss->t, grad ? grad->t : NULL);
    Py_END_ALLOW_THREADS
    WGTPY_UNLOCK(loss->ctx);
    Py_XDECREF(grad);
    return status_result(st, "backward");
}

static PyObject *py_zero_grad(PyObject *m, PyObject *o) {
    TensorObject *t = wgtpy_tensor_arg(o, "zero_grad");
    if (!t) return NULL;
    WGTPY_LOCK(t->ctx);
    wgt_status st = wgt_zero_grad(t->t);
    WGTPY_UNLOCK(t->ctx);
    return status_result(st, "zero_grad");
}

static PyObject *py_no_grad_begin(PyObject *m, PyObject *u) {
    wgt_no_grad_begin();
    Py_RETURN_NONE;
}
static PyObject *py_no_grad_end(PyObject *m, PyObject *u) { return status_result(wgt_no_grad_end(), "no_grad"); }

static PyObject *py_detach(PyObject *m, PyObject *o) {
    TensorObject *t = wgtpy_tensor_arg(o, "detach");
    if (!t) return NULL;
    WGTPY_LOCK(t->ctx);
    wgt_tensor *d = wgt_detach(t->t);
    WGTPY_UNLOCK(t->ctx);
    return wgtpy_wrap(d, t->ctx, "detach", 0);
}

/* _cross_entropy(logits, targets): targets may be anything asarray takes (on logits' context). */
static PyObject *py_cross_entropy(PyObject *m, PyObject *args) {
    PyObject *lo, *to;
    if (!PyArg_ParseTuple(args, "OO:cross_entropy", &lo, &to)) return NULL;
    TensorObject *logits = wgtpy_tensor_arg(lo, "cross_entropy");
    if (!logits) return NULL;
    TensorObject *targets = wgtpy_wide_index(to, logits); /* NumPy int64 targets keep 64 bits */
    if (!targets && !PyErr_Occurred()) targets = wgtpy_operand(to, logits);
    if (!targets) return NULL;
    WGTPY_LOCK(logits->ctx);
    wgt_tensor *r = wgt_cross_entropy(logits->t, targets->t);
    WGTPY_UNLOCK(logits->ctx);
    Py_DECREF(targets);
    return wgtpy_wrap(r, logits->ctx, "cross_entropy", 0);
}

/* ---- optimizers -------------------------------------------------------------------------- */

static const char OPT_NAME[] = "wgtensor.optimizer";

static void optimizer_free(PyObject *cap) {
    wgt_optimizer *o = PyCapsule_GetPointer(cap, OPT_NAME);
    CtxObject *ctx = PyCapsule_GetContext(cap);
    WGTPY_LOCK(ctx);
    wgt_optimizer_release(o);
    WGTPY_UNLOCK(ctx);
    Py_DECREF(ctx);
}

/* _optimizer(kind, params, lr, a, b, c, weight_decay): kind 0 SGD (a momentum), 1 AdamW (a, b, c
 * = beta1, beta2, eps). */
static PyObject *py_optimizer(PyObject *m, PyObject *args) {
    int kind;
    PyObject *params;
    double lr, a, b, c, wd;
    if (!PyArg_ParseTuple(args, "iOddddd:optimizer", &kind, &params, &lr, &a, &b, &c, &wd)) return NULL;
    const char *fn = kind ? "AdamW" : "SGD";
    int n;
    CtxObject *ctx = NULL;
    wgt_tensor **ts = tensor_list(params, &n, &ctx, fn);
    if (!ts) return NULL;
    WGTPY_LOCK(ctx);
    wgt_optimizer *o = kind ? wgt_adamw(n, ts, lr, a, b, c, wd) : wgt_sgd(n, ts, lr, a, wd);
    WGTPY_UNLOCK(ctx);
    PyMem_Free(ts);
    if (!o) return wgtpy_raise(fn, 0);
    PyObject *cap = PyCapsule_New(o, OPT_NAME, NULL);
    if (!cap) {
        WGTPY_LOCK(ctx);
        wgt_optimizer_release(o);
        WGTPY_UNLOCK(ctx);
        return NULL;
    }
    PyCapsule_SetContext(cap, Py_NewRef(ctx));
    PyCapsule_SetDestructor(cap, optimizer_free);
    return cap;
}

/* _optimizer_call(cap, what, lr): what 0 step, 1 zero_grad, 2 set lr, 3 get lr. */
static PyObject *py_optimizer_call(PyObject *m, PyObject *args) {
    PyObject *cap;
    int what;
    double lr = 0;
    if (!PyArg_ParseTuple(args, "Oi|d:optimizer", &cap, &what, &lr)) return NULL;
    wgt_optimizer *o = PyCapsule_GetPointer(cap, OPT_NAME);
    if (!o) return NULL;
    CtxObject *ctx = PyCapsule_GetContext(cap);
    wgt_status st = WGT_OK;
    double got = 0;
    WGTPY_LOCK(ctx);
    Py_BEGIN_ALLOW_THREADS
    if (what == 0) st = wgt_optimizer_step(o);
    else if (what == 1) st = wgt_optimizer_zero_grad(o);
    else if (what == 2) st = wgt_optimizer_set_lr(o, lr);
    else got = wgt_optimizer_lr(o);
    Py_END_ALLOW_THREADS
    WGTPY_UNLOCK(ctx);
    if (what == 3) return PyFloat_FromDouble(got);
    return status_result(st, what == 0 ? "step" : what == 1 ? "zero_grad" : "lr");
}

static PyObject *py_lr_warmup_cosine(PyObject *m, PyObject *args) {
    long long step, warmup, total;
    double peak, min_lr;
    if (!PyArg_ParseTuple(args, "LLLdd:lr_warmup_cosine", &step, &warmup, &total, &peak, &min_lr)) return NULL;
    return PyFloat_FromDouble(wgt_lr_warmup_cosine(step, warmup, total, peak, min_lr));
}

/* _clip_grad_norm(params, max_norm) -> the norm before clipping */
static PyObject *py_clip_grad_norm(PyObject *m, PyObject *args) {
    PyObject *params;
    double max_norm, norm = 0;
    if (!PyArg_ParseTuple(args, "Od:clip_grad_norm", &params, &max_norm)) return NULL;
    int n;
    CtxObject *ctx = NULL;
    wgt_tensor **ts = tensor_list(params, &n, &ctx, "clip_grad_norm");
    if (!ts) return NULL;
    wgt_status st;
    WGTPY_LOCK(ctx);
    Py_BEGIN_ALLOW_THREADS
    st = wgt_clip_grad_norm(n, ts, max_norm, &norm);
    Py_END_ALLOW_THREADS
    WGTPY_UNLOCK(ctx);
    PyMem_Free(ts);
    if (st != WGT_OK) return wgtpy_raise("clip_grad_norm", 0);
    return PyFloat_FromDouble(norm);
}

/* ---- tensor files -------------------------------------------------------------------------- */

static PyObject *py_save_npy(PyObject *m, PyObject *args) {
    PyObject *to;
    const char *path;
    if (!PyArg_ParseTuple(args, "Os:save", &to, &path)) return NULL;
    TensorObject *t = wgtpy_tensor_arg(to, "save");
    if (!t) return NULL;
    wgt_status st;
    WGTPY_LOCK(t->ctx);
    Py_BEGIN_ALLOW_THREADS
    st = wgt_save_npy(t->t, path);
    Py_END_ALLOW_THREADS
    WGTPY_UNLOCK(t->ctx);
    return status_result(st, "save");
}

/* _load(path, name_or_None, ctx): .npy when name is None, else one safetensors tensor. */
static PyObject *py_load(PyObject *m, PyObject *args) {
    const char *path, *name;
    PyObject *co;
    if (!PyArg_ParseTuple(args, "szO:load", &path, &name, &co)) return NULL;
    CtxObject *ctx = wgtpy_context_arg(co);
    if (!ctx) return NULL;
    wgt_tensor *t;
    WGTPY_LOCK(ctx);
    Py_BEGIN_ALLOW_THREADS
    t = name ? wgt_load_safetensors(ctx->ctx, path, name, WGT_USAGE_DEFAULT) : wgt_load_npy(ctx->ctx, path, WGT_USAGE_DEFAULT);
    Py_END_ALLOW_THREADS
    WGTPY_UNLOCK(ctx);
    PyObject *r = wgtpy_wrap(t, ctx, "load", 0);
    Py_DECREF(ctx);
    return r;
}

/* _save_safetensors(path, names, tensors) */
static PyObject *py_save_safetensors(PyObject *m, PyObject *args) {
    const char *path;
    PyObject *names, *tensors;
    if (!PyArg_ParseTuple(args, "sO!O:save", &path, &PyTuple_Type, &names, &tensors)) return NULL;
    int n;
    CtxObject *ctx = NULL;
    wgt_tensor **ts = tensor_list(tensors, &n, &ctx, "save");
    if (!ts) return NULL;
    const char **ns = PyMem_Malloc(sizeof *ns * (size_t)n);
    if (!ns || PyTuple_GET_SIZE(names) != n) {
        PyMem_Free(ts);
        PyMem_Free(ns);
        return ns ? PyErr_Format(PyExc_ValueError, "save: %zd names for %d tensors", PyTuple_GET_SIZE(names), n)
                  : PyErr_NoMemory();
    }
    for (int i = 0; i < n; i++)
        if (!(ns[i] = PyUnicode_AsUTF8(PyTuple_GET_ITEM(names, i)))) {
            PyMem_Free(ts);
            PyMem_Free(ns);
            return NULL;
        }
    wgt_status st;
    WGTPY_LOCK(ctx);
    Py_BEGIN_ALLOW_THREADS
    st = wgt_save_safetensors(path, n, ns, ts);
    Py_END_ALLOW_THREADS
    WGTPY_UNLOCK(ctx);
    PyMem_Free(ts);
    PyMem_Free(ns);
    return status_result(st, "save");
}

static PyObject *py_safetensors_names(PyObject *m, PyObject *args) {
    const char *path;
    if (!PyArg_ParseTuple(args, "s:load", &path)) return NULL;
    char *names = wgt_safetensors_names(path);
    if (!names) return wgtpy_raise("load", 0);
    PyObject *s = PyUnicode_FromString(names);
    free(names);
    return s;
}

static PyMethodDef autograd_methods[] = {
    {"_backward", py_backward, METH_VARARGS, NULL},
    {"_zero_grad", py_zero_grad, METH_O, NULL},
    {"_no_grad_begin", py_no_grad_begin, METH_NOARGS, NULL},
    {"_no_grad_end", py_no_grad_end, METH_NOARGS, NULL},
    {"_detach", py_detach, METH_O, NULL},
    {"_cross_entropy", py_cross_entropy, METH_VARARGS, NULL},
    {"_optimizer", py_optimizer, METH_VARARGS, NULL},
    {"_optimizer_call", py_optimizer_call, METH_VARARGS, NULL},
    {"_lr_warmup_cosine", py_lr_warmup_cosine, METH_VARARGS, NULL},
    {"_clip_grad_norm", py_clip_grad_norm, METH_VARARGS, NULL},
    {"_save_npy", py_save_npy, METH_VARARGS, NULL},
    {"_load", py_load, METH_VARARGS, NULL},
    {"_save_safetensors", py_save_safetensors, METH_VARARGS, NULL},
    {"_safetensors_names", py_safetensors_names, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

int wgtpy_autograd_init(PyObject *module) {
    for (PyGetSetDef *g = grad_getset; g->name; g++) {
        PyObject *d = PyDescr_NewGetSet(wgtpy_Tensor, g);
        if (!d || PyObject_SetAttrString((PyObject *)wgtpy_Tensor, g->name, d) < 0) {
            Py_XDECREF(d);
            return -1;
        }
        Py_DECREF(d);
    }
    return wgtpy_add_functions(module, autograd_methods);
}
