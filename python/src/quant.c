/*
 * Quantized block types, KV-cache appends and GGUF files (docs/quant.md) for the Python layer
 * (wgtensor/_quant.py). A GGUF reader is a capsule closed when freed; it belongs to no context
 * (only load touches one). Writing is one call: the Python layer has already chosen each
 * metadata value's GGUF type, so this file only packs values into the library's layout.
 */
#include <stdint.h>
#include <string.h>

#include "wgtpy.h"

/* _quantize(a, dtype) and _dequantize(q, dtype) */
static PyObject *convert(PyObject *args, int quantize) {
    const char *fn = quantize ? "quantize" : "dequantize";
    PyObject *to, *dobj;
    wgt_dtype d;
    if (!PyArg_ParseTuple(args, "OO", &to, &dobj)) return NULL;
    TensorObject *t = wgtpy_tensor_arg(to, fn);
    if (!t || wgtpy_dtype_from_obj(dobj, &d) < 0) return NULL;
    WGTPY_LOCK(t->ctx);
    wgt_tensor *r = quantize ? wgt_quantize(t->t, d) : wgt_dequantize(t->t, d);
    WGTPY_UNLOCK(t->ctx);
    return wgtpy_wrap(r, t->ctx, fn, 0);
}
static PyObject *py_quantize(PyObject *m, PyObject *args) { return convert(args, 1); }
static PyObject *py_dequantize(PyObject *m, PyObject *args) { return convert(args, 0); }

/* _matmul_quantized(x, w): x may be anything asarray takes (on w's context). */
static PyObject *py_matmul_quantized(PyObject *m, PyObject *args) {
    PyObject *xo, *wo;
    if (!PyArg_ParseTuple(args, "OO", &xo, &wo)) return NULL;
    TensorObject *w = wgtpy_tensor_arg(wo, "matmul_quantized");
    if (!w) return NULL;
    TensorObject *x = wgtpy_operand(xo, w);
    if (!x) return NULL;
    WGTPY_LOCK(w->ctx);
    wgt_tensor *r = wgt_matmul_quantized(x->t, w->t);
    WGTPY_UNLOCK(w->ctx);
    Py_DECREF(x);
    return wgtpy_wrap(r, w->ctx, "matmul_quantized", 0);
}

/* _kv_cache_append(cache, x, pos) */
static PyObject *py_kv_cache_append(PyObject *m, PyObject *args) {
    PyObject *co, *xo;
    long long pos;
    if (!PyArg_ParseTuple(args, "OOL", &co, &xo, &pos)) return NULL;
    TensorObject *cache = wgtpy_tensor_arg(co, "kv_cache_append");
    if (!cache) return NULL;
    TensorObject *x = wgtpy_operand(xo, cache);
    if (!x) return NULL;
    WGTPY_LOCK(cache->ctx);
    wgt_status st = wgt_kv_cache_append(cache->t, x->t, pos);
    WGTPY_UNLOCK(cache->ctx);
    Py_DECREF(x);
    if (st != WGT_OK) return wgtpy_raise("kv_cache_append", 0);
    Py_RETURN_NONE;
}

/* _dtype_block(code) -> (elements per block, bytes per block) */
static PyObject *py_dtype_block(PyObject *m, PyObject *args) {
    int d;
    if (!PyArg_ParseTuple(args, "i", &d)) return NULL;
    return Py_BuildValue("(Ln)", (long long)wgt_dtype_block_elements((wgt_dtype)d),
                         (Py_ssize_t)wgt_dtype_block_bytes((wgt_dtype)d));
}

/* ---- reading GGUF ------------------------------------------------------------------------- */

static const char GGUF_NAME[] = "wgtensor.gguf";

static void gguf_free(PyObject *cap) { wgt_gguf_close(PyCapsule_GetPointer(cap, GGUF_NAME)); }

static PyObject *py_gguf_open(PyObject *m, PyObject *args) {
    const char *path;
    if (!PyArg_ParseTuple(args, "s", &path)) return NULL;
    wgt_gguf *g;
    Py_BEGIN_ALLOW_THREADS
    g = wgt_gguf_open(path);
    Py_END_ALLOW_THREADS
    if (!g) return wgtpy_raise("gguf.open", 0);
    PyObject *cap = PyCapsule_New(g, GGUF_NAME, gguf_free);
    if (!cap) wgt_gguf_close(g);
    return cap;
}

/* One value of type ty at p (host layout). */
static PyObject *gguf_value(wgt_gguf_type ty, const char *p) {
    switch (ty) {
    case WGT_GGUF_UINT8: return PyLong_FromUnsignedLong(*(const uint8_t *)p);
    case WGT_GGUF_INT8: return PyLong_FromLong(*(const int8_t *)p);
    case WGT_GGUF_UINT16: { uint16_t v; memcpy(&v, p, 2); return PyLong_FromUnsignedLong(v); }
    case WGT_GGUF_INT16: { int16_t v; memcpy(&v, p, 2); return PyLong_FromLong(v); }
    case WGT_GGUF_UINT32: { uint32_t v; memcpy(&v, p, 4); return PyLong_FromUnsignedLong(v); }
    case WGT_GGUF_INT32: { int32_t v; memcpy(&v, p, 4); return PyLong_FromLong(v); }
    case WGT_GGUF_UINT64: { uint64_t v; memcpy(&v, p, 8); return PyLong_FromUnsignedLongLong(v); }
    case WGT_GGUF_INT64: { int64_t v; memcpy(&v, p, 8); return PyLong_FromLongLong(v); }
    case WGT_GGUF_FLOAT32: { float v; memcpy(&v, p, 4); return PyFloat_FromDouble(v); }
    case WGT_GGUF_FLOAT64: { double v; memcpy(&v, p, 8); return PyFloat_FromDouble(v); }
    case WGT_GGUF_BOOL: return PyBool_FromLong(*p != 0);
    case WGT_GGUF_STRING: {
        const wgt_gguf_string *s = (const wgt_gguf_string *)p;
        return PyUnicode_DecodeUTF8(s->data, (Py_ssize_t)s->len, "replace");
    }
    case WGT_GGUF_ARRAY: break;
    }
    return PyErr_Format(PyExc_ValueError, "gguf: metadata type %d has no Python value", (int)ty);
}

static size_t gguf_value_size(wgt_gguf_type ty) {
    switch (ty) {
    case WGT_GGUF_UINT8: case WGT_GGUF_INT8: case WGT_GGUF_BOOL: return 1;
    case WGT_GGUF_UINT16: case WGT_GGUF_INT16: return 2;
    case WGT_GGUF_UINT32: case WGT_GGUF_INT32: case WGT_GGUF_FLOAT32: return 4;
    case WGT_GGUF_UINT64: case WGT_GGUF_INT64: case WGT_GGUF_FLOAT64: return 8;
    case WGT_GGUF_STRING: return sizeof(wgt_gguf_string);
    case WGT_GGUF_ARRAY: break;
    }
    return 0;
}

/* A metadata entry as a Python value: a scalar, or a list for an array. */
static PyObject *gguf_kv_value(const wgt_gguf_kv *kv) {
    if (kv->type != WGT_GGUF_ARRAY) return gguf_value(kv->type, kv->data);
    size_t size = gguf_value_size(kv->elem_type);
    if (!size) return PyErr_Format(PyExc_ValueError, "gguf: %s: arrays of type %d are not read", kv->key, (int)kv->elem_type);
    PyObject *list = PyList_New((Py_ssize_t)kv->count);
    for (uint64_t i = 0; list && i < kv->count; i++) {
        PyObject *v = gguf_value(kv->elem_type, (const char *)kv->data + i * size);
        if (!v) Py_CLEAR(list);
        else PyList_SET_ITEM(list, (Py_ssize_t)i, v);
    }
    return list;
}

/* _gguf_info(cap) -> (version, {key: value}, [(name, shape, dtype or None, ggml_type, offset, nbytes)]) */
static PyObject *py_gguf_info(PyObject *m, PyObject *args) {
    PyObject *cap;
    if (!PyArg_ParseTuple(args, "O", &cap)) return NULL;
    wgt_gguf *g = PyCapsule_GetPointer(cap, GGUF_NAME);
    if (!g) return NULL;
    PyObject *meta = PyDict_New(), *tensors = PyList_New(0), *result = NULL;
    if (!meta || !tensors) goto done;
    for (int64_t i = 0; i < wgt_gguf_kv_count(g); i++) {
        const wgt_gguf_kv *kv = wgt_gguf_kv_at(g, i);
        PyObject *v = gguf_kv_value(kv);
        int bad = !v || PyDict_SetItemString(meta, kv->key, v) < 0;
        Py_XDECREF(v);
        if (bad) goto done;
    }
    for (int64_t i = 0; i < wgt_gguf_tensor_count(g); i++) {
        const wgt_gguf_tensor_info *ti = wgt_gguf_tensor_at(g, i);
        PyObject *shape = PyTuple_New(ti->ndim);
        for (int k = 0; shape && k < ti->ndim; k++) {
            PyObject *x = PyLong_FromLongLong(ti->shape[k]);
            if (!x) Py_CLEAR(shape);
            else PyTuple_SET_ITEM(shape, k, x);
        }
        PyObject *d = !shape ? NULL : ti->dtype ? wgtpy_dtype_obj(ti->dtype) : Py_NewRef(Py_None);
        PyObject *row = d ? Py_BuildValue("(sOOIKK)", ti->name, shape, d, (unsigned)ti->ggml_type,
                                          (unsigned long long)ti->offset, (unsigned long long)ti->nbytes) : NULL;
        Py_XDECREF(shape);
        Py_XDECREF(d);
        int bad = !row || PyList_Append(tensors, row) < 0;
        Py_XDECREF(row);
        if (bad) goto done;
    }
    result = Py_BuildValue("(IOO)", (unsigned)wgt_gguf_version(g), meta, tensors);
done:
    Py_XDECREF(meta);
    Py_XDECREF(tensors);
    return result;
}

/* _gguf_load(cap, name, ctx) */
static PyObject *py_gguf_load(PyObject *m, PyObject *args) {
    PyObject *cap, *co;
    const char *name;
    if (!PyArg_ParseTuple(args, "OsO", &cap, &name, &co)) return NULL;
    wgt_gguf *g = PyCapsule_GetPointer(cap, GGUF_NAME);
    if (!g) return NULL;
    CtxObject *ctx = wgtpy_context_arg(co);
    if (!ctx) return NULL;
    wgt_tensor *t;
    WGTPY_LOCK(ctx);
    Py_BEGIN_ALLOW_THREADS
    t = wgt_gguf_load(g, ctx->ctx, name, WGT_USAGE_DEFAULT);
    Py_END_ALLOW_THREADS
    WGTPY_UNLOCK(ctx);
    PyObject *r = wgtpy_wrap(t, ctx, "gguf.load", 0);
    Py_DECREF(ctx);
    return r;
}

/* ---- writing GGUF ------------------------------------------------------------------------- */

/* Packs values (a tuple of Python values, already checked by the Python layer to suit elem)
 * into a PyMem block in the library's host layout; strings point into the str objects. */
static void *pack_values(PyObject *values, wgt_gguf_type elem, const char *key) {
    Py_ssize_t n = PyTuple_GET_SIZE(values);
    size_t size = gguf_value_size(elem);
    if (!size) {
        PyErr_Format(PyExc_ValueError, "gguf.write: %s: type %d cannot be written", key, (int)elem);
        return NULL;
    }
    char *buf = PyMem_Calloc((size_t)(n ? n : 1), size);
    if (!buf) return PyErr_NoMemory(), NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *v = PyTuple_GET_ITEM(values, i);
        char *p = buf + (size_t)i * size;
        if (elem == WGT_GGUF_STRING) {
            Py_ssize_t len;
            const char *s = PyUnicode_AsUTF8AndSize(v, &len);
            if (!s) goto fail;
            wgt_gguf_string str = {(uint64_t)len, s};
            memcpy(p, &str, sizeof str);
        } else if (elem == WGT_GGUF_FLOAT32 || elem == WGT_GGUF_FLOAT64) {
            double x = PyFloat_AsDouble(v);
            if (x == -1 && PyErr_Occurred()) goto fail;
            float f = (float)x;
            if (elem == WGT_GGUF_FLOAT32) memcpy(p, &f, 4);
            else memcpy(p, &x, 8);
        } else {
            /* Integers (and bools): the Python layer checked the range; copy the low bytes. */
            int over = 0;
            long long x = PyLong_AsLongLongAndOverflow(v, &over);
            unsigned long long u = over > 0 ? PyLong_AsUnsignedLongLong(v) : (unsigned long long)x;
            if (PyErr_Occurred()) goto fail;
            if (over < 0) {
                PyErr_Format(PyExc_OverflowError, "gguf.write: %s: %R does not fit", key, v);
                goto fail;
            }
            uint8_t b[8];
            for (int k = 0; k < 8; k++) b[k] = (uint8_t)(u >> (8 * k)); /* little-endian host */
            memcpy(p, b, size);
        }
    }
    return buf;
fail:
    PyMem_Free(buf);
    return NULL;
}

/* _gguf_write(path, [(key, type, elem_type, values)], names tuple, tensors tuple, alignment) */
static PyObject *py_gguf_write(PyObject *m, PyObject *args) {
    const char *path;
    PyObject *meta, *names, *tensors;
    unsigned alignment;
    if (!PyArg_ParseTuple(args, "sO!O!O!I", &path, &PyList_Type, &meta, &PyTuple_Type, &names, &PyTuple_Type, &tensors,
                          &alignment))
        return NULL;
    if (PyTuple_GET_SIZE(names) != PyTuple_GET_SIZE(tensors))
        return PyErr_Format(PyExc_ValueError, "gguf.write: %zd names for %zd tensors", PyTuple_GET_SIZE(names),
                            PyTuple_GET_SIZE(tensors));
    wgt_gguf_writer *w = wgt_gguf_writer_create();
    if (!w) return wgtpy_raise("gguf.write", 0);
    PyObject *result = NULL;
    CtxObject *ctx = NULL;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(meta); i++) {
        const char *key;
        int type, elem;
        PyObject *values;
        if (!PyArg_ParseTuple(PyList_GET_ITEM(meta, i), "siiO!", &key, &type, &elem, &PyTuple_Type, &values)) goto done;
        void *data = pack_values(values, (wgt_gguf_type)elem, key);
        if (!data) goto done;
        wgt_gguf_kv kv = {key, (wgt_gguf_type)type, (wgt_gguf_type)elem, (uint64_t)PyTuple_GET_SIZE(values), data};
        wgt_status st = wgt_gguf_writer_set(w, &kv); /* the writer copies the values */
        PyMem_Free(data);
        if (st != WGT_OK) {
            wgtpy_raise("gguf.write", 0);
            goto done;
        }
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(tensors); i++) {
        TensorObject *t = wgtpy_tensor_arg(PyTuple_GET_ITEM(tensors, i), "gguf.write");
        const char *name = t ? PyUnicode_AsUTF8(PyTuple_GET_ITEM(names, i)) : NULL;
        if (!name) goto done;
        if (!ctx) ctx = t->ctx;
        WGTPY_LOCK(t->ctx);
        wgt_status st = wgt_gguf_writer_add_tensor(w, name, t->t);
        WGTPY_UNLOCK(t->ctx);
        if (st != WGT_OK) {
            wgtpy_raise("gguf.write", 0);
            goto done;
        }
    }
    wgt_status st;
    if (ctx) WGTPY_LOCK(ctx); /* saving reads the tensors (one context: the writer's tensors share it) */
    Py_BEGIN_ALLOW_THREADS
    st = wgt_gguf_writer_save(w, path, alignment);
    Py_END_ALLOW_THREADS
    if (ctx) WGTPY_UNLOCK(ctx);
    if (st != WGT_OK) wgtpy_raise("gguf.write", 0);
    else result = Py_NewRef(Py_None);
done:
    if (ctx) WGTPY_LOCK(ctx);
    wgt_gguf_writer_release(w); /* drops the writer's tensor references */
    if (ctx) WGTPY_UNLOCK(ctx);
    return result;
}

static PyMethodDef quant_methods[] = {
    {"_quantize", py_quantize, METH_VARARGS, NULL},
    {"_dequantize", py_dequantize, METH_VARARGS, NULL},
    {"_matmul_quantized", py_matmul_quantized, METH_VARARGS, NULL},
    {"_kv_cache_append", py_kv_cache_append, METH_VARARGS, NULL},
    {"_dtype_block", py_dtype_block, METH_VARARGS, NULL},
    {"_gguf_open", py_gguf_open, METH_VARARGS, NULL},
    {"_gguf_info", py_gguf_info, METH_VARARGS, NULL},
    {"_gguf_load", py_gguf_load, METH_VARARGS, NULL},
    {"_gguf_write", py_gguf_write, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

int wgtpy_quant_init(PyObject *module) { return wgtpy_add_functions(module, quant_methods); }
