/*
 * The op table's callers for convolutions and pooling, with torch.nn.functional's names,
 * order and defaults: kernel_size, stride, padding, dilation, output_padding and output_size
 * are an int (every dimension) or a tuple of one per spatial dimension; a convolution's
 * padding may also be "valid" (0) or "same"; pooling's stride None is the kernel.
 */
#include <string.h>

#include "ops.h"

typedef wgt_tensor *(*conv1d_fn)(wgt_tensor *, wgt_tensor *, wgt_tensor *, int64_t, int64_t, int64_t, int64_t);
typedef wgt_tensor *(*conv2d_fn)(wgt_tensor *, wgt_tensor *, wgt_tensor *, const int64_t *, const int64_t *,
                                 const int64_t *, int64_t);
typedef wgt_tensor *(*conv_t2d_fn)(wgt_tensor *, wgt_tensor *, wgt_tensor *, const int64_t *, const int64_t *,
                                   const int64_t *, const int64_t *, int64_t);

typedef wgt_tensor *(*max_pool_fn)(wgt_tensor *, const int64_t *, const int64_t *, const int64_t *, const int64_t *,
                                   int);
typedef wgt_tensor *(*avg_pool_fn)(wgt_tensor *, const int64_t *, const int64_t *, const int64_t *, int, int);
typedef wgt_tensor *(*adaptive_fn)(wgt_tensor *, int64_t, int64_t);

int wgtpy_nn_sig(sig_kind sig) {
    return sig == SIG_CONV1D || sig == SIG_CONV2D || sig == SIG_CONV_TRANSPOSE2D || sig == SIG_MAX_POOL2D ||
           sig == SIG_AVG_POOL2D || sig == SIG_ADAPTIVE_AVG_POOL2D || wgtpy_layers_sig(sig);
}

const char *const *wgtpy_nn_names(sig_kind sig, int *n, int *nreq) {
    static const char *const conv[] = {"input", "weight", "bias", "stride", "padding", "dilation", "groups"};
    static const char *const conv_t[] = {"input", "weight", "bias", "stride", "padding", "output_padding", "groups",
                                         "dilation"};
    static const char *const max_pool[] = {"input", "kernel_size", "stride", "padding", "dilation", "ceil_mode"};
    static const char *const avg_pool[] = {"input", "kernel_size", "stride", "padding", "ceil_mode", "count_include_pad"};
    static const char *const adaptive[] = {"input", "output_size"};
    if (wgtpy_layers_sig(sig)) return wgtpy_layers_names(sig, n, nreq);
    *nreq = 2;
    if (sig == SIG_MAX_POOL2D || sig == SIG_AVG_POOL2D) {
        *n = 6;
        return sig == SIG_MAX_POOL2D ? max_pool : avg_pool;
    }
    if (sig == SIG_ADAPTIVE_AVG_POOL2D) {
        *n = 2;
        return adaptive;
    }
    if (sig == SIG_CONV_TRANSPOSE2D) {
        *n = 8;
        return conv_t;
    }
    *n = 7;
    return conv;
}

/* An int or a tuple of nd ints into out[0..nd-1] (NULL: def); padding (same_ok) may be
 * "same" or "valid". */
static int sizes_arg(PyObject *o, int nd, int64_t def, int same_ok, int64_t *out, const char *fn, const char *what) {
    long long v;
    for (int i = 0; i < nd; i++) out[i] = def;
    if (!o) return 0;
    if (same_ok && PyUnicode_Check(o)) {
        int same = PyUnicode_CompareWithASCIIString(o, "same") == 0;
        if (!same && PyUnicode_CompareWithASCIIString(o, "valid") != 0) {
            PyErr_Format(PyExc_ValueError, "%s: padding %R must be an int, a tuple, 'same' or 'valid'", fn, o);
            return -1;
        }
        for (int i = 0; i < nd; i++) out[i] = same ? WGT_PADDING_SAME : 0;
        return 0;
    }
    if (PyIndex_Check(o)) {
        if (wgtpy_int_arg(o, &v, INT64_MIN, INT64_MAX, fn, what) < 0) return -1;
        for (int i = 0; i < nd; i++) out[i] = v;
        return 0;
    }
    PyObject *seq = PySequence_Fast(o, "");
    if (!seq || PySequence_Fast_GET_SIZE(seq) != nd) {
        Py_XDECREF(seq);
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "%s: %s must be an int or %d ints, not %R", fn, what, nd, o);
        return -1;
    }
    for (int i = 0; i < nd; i++)
        if (wgtpy_int_arg(PySequence_Fast_GET_ITEM(seq, i), &v, INT64_MIN, INT64_MAX, fn, what) < 0) {
            Py_DECREF(seq);
            return -1;
        }
        else out[i] = v;
    Py_DECREF(seq);
    return 0;
}

/* A flag argument (NULL: def). */
static int flag_arg(PyObject *o, int def) { return o ? PyObject_IsTrue(o) : def; }

static PyObject *pool_call(const op_entry *e, PyObject **v) {
    TensorObject *a = wgtpy_first_tensor(v[0], e->name);
    if (!a) return NULL;
    int64_t kernel[2], stride[2], padding[2], dilation[2];
    wgt_tensor *r = NULL;
    int max = e->sig == SIG_MAX_POOL2D, f1 = flag_arg(v[max ? 5 : 4], 0), f2 = max ? 0 : flag_arg(v[5], 1);
    int stride_given = v[2] && v[2] != Py_None;
    if (f1 < 0 || f2 < 0 || sizes_arg(v[1], 2, 0, 0, kernel, e->name, "kernel_size") < 0 ||
        (stride_given && sizes_arg(v[2], 2, 0, 0, stride, e->name, "stride") < 0) ||
        sizes_arg(v[3], 2, 0, 0, padding, e->name, "padding") < 0 ||
        (max && sizes_arg(v[4], 2, 1, 0, dilation, e->name, "dilation") < 0)) {
        Py_DECREF(a);
        return NULL;
    }
    WGTPY_LOCK(a->ctx);
    if (max)
        r = ((max_pool_fn)e->fn)(a->t, kernel, stride_given ? stride : NULL, padding, dilation, f1);
    else
        r = ((avg_pool_fn)e->fn)(a->t, kernel, stride_given ? stride : NULL, padding, f1, f2);
    WGTPY_UNLOCK(a->ctx);
    PyObject *out = wgtpy_wrap(r, a->ctx, e->name, 0);
    Py_DECREF(a);
    return out;
}

static PyObject *adaptive_call(const op_entry *e, PyObject **v) {
    TensorObject *a = wgtpy_first_tensor(v[0], e->name);
    if (!a) return NULL;
    int64_t size[2];
    wgt_tensor *r = NULL;
    if (sizes_arg(v[1], 2, 0, 0, size, e->name, "output_size") < 0) {
        Py_DECREF(a);
        return NULL;
    }
    WGTPY_LOCK(a->ctx);
    r = ((adaptive_fn)e->fn)(a->t, size[0], size[1]);
    WGTPY_UNLOCK(a->ctx);
    PyObject *out = wgtpy_wrap(r, a->ctx, e->name, 0);
    Py_DECREF(a);
    return out;
}

PyObject *wgtpy_nn_call(const op_entry *e, PyObject **v) {
    if (e->sig == SIG_MAX_POOL2D || e->sig == SIG_AVG_POOL2D) return pool_call(e, v);
    if (e->sig == SIG_ADAPTIVE_AVG_POOL2D) return adaptive_call(e, v);
    if (wgtpy_layers_sig(e->sig)) return wgtpy_layers_call(e, v);
    TensorObject *a = wgtpy_first_tensor(v[0], e->name), *w = NULL, *b = NULL;
    if (!a) return NULL;
    PyObject *out = NULL;
    wgt_tensor *r = NULL;
    int nd = e->sig == SIG_CONV1D ? 1 : 2, t = e->sig == SIG_CONV_TRANSPOSE2D;
    int64_t stride[2], padding[2], dilation[2], out_pad[2];
    long long groups = 1;
    PyObject *groups_arg = v[6], *dil_arg = v[t ? 7 : 5];
    if (wgtpy_other_tensor(v[1], a, &w, 0, e->name) < 0 || wgtpy_other_tensor(v[2] ? v[2] : Py_None, a, &b, 1, e->name) < 0 ||
        sizes_arg(v[3], nd, 1, 0, stride, e->name, "stride") < 0 ||
        sizes_arg(v[4], nd, 0, !t, padding, e->name, "padding") < 0 ||
        sizes_arg(dil_arg, nd, 1, 0, dilation, e->name, "dilation") < 0 ||
        (t && sizes_arg(v[5], nd, 0, 0, out_pad, e->name, "output_padding") < 0) ||
        (groups_arg && wgtpy_int_arg(groups_arg, &groups, INT64_MIN, INT64_MAX, e->name, "groups") < 0))
        goto done;
    WGTPY_LOCK(a->ctx);
    if (e->sig == SIG_CONV1D)
        r = ((conv1d_fn)e->fn)(a->t, w->t, b ? b->t : NULL, stride[0], padding[0], dilation[0], groups);
    else if (e->sig == SIG_CONV2D)
        r = ((conv2d_fn)e->fn)(a->t, w->t, b ? b->t : NULL, stride, padding, dilation, groups);
    else
        r = ((conv_t2d_fn)e->fn)(a->t, w->t, b ? b->t : NULL, stride, padding, out_pad, dilation, groups);
    WGTPY_UNLOCK(a->ctx);
    out = wgtpy_wrap(r, a->ctx, e->name, 0);
done:
    Py_DECREF(a);
    Py_XDECREF(w);
    Py_XDECREF(b);
    return out;
}
