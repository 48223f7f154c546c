/*
 * The op table's callers for the layers of src/core/nn_layers.c, with torch.nn.functional's
 * names, order and defaults: dropout (its seed= is ours: the mask is a function of it; an
 * int, or a uint32 tensor [2] that a compiled graph may take as an input),
 * batch_norm (the inference form: training=True is refused), group_norm and interpolate
 * (size or scale_factor, an int or float for every spatial dimension or one per dimension;
 * mode "nearest", "nearest-exact", "linear", "bilinear" or "trilinear", the last three
 * needing 1, 2 or 3 spatial dimensions as PyTorch's do).
 */
#include <string.h>

#include "ops.h"

typedef wgt_tensor *(*dropout_fn)(wgt_tensor *, double, uint64_t);
typedef wgt_tensor *(*batch_norm_fn)(wgt_tensor *, wgt_tensor *, wgt_tensor *, wgt_tensor *, wgt_tensor *, double);
typedef wgt_tensor *(*group_norm_fn)(wgt_tensor *, int64_t, wgt_tensor *, wgt_tensor *, double);
typedef wgt_tensor *(*interpolate_fn)(wgt_tensor *, const int64_t *, const double *, wgt_interp_mode, int);

int wgtpy_layers_sig(sig_kind sig) {
    return sig == SIG_DROPOUT || sig == SIG_BATCH_NORM || sig == SIG_GROUP_NORM || sig == SIG_INTERPOLATE;
}

const char *const *wgtpy_layers_names(sig_kind sig, int *n, int *nreq) {
    static const char *const dropout[] = {"input", "p", "training", "seed"};
    static const char *const batch[] = {"input", "running_mean", "running_var", "weight", "bias", "training",
                                        "momentum", "eps"};
    static const char *const group[] = {"input", "num_groups", "weight", "bias", "eps"};
    static const char *const interp[] = {"input", "size", "scale_factor", "mode", "align_corners"};
    switch (sig) {
    case SIG_DROPOUT: *n = 4, *nreq = 1; return dropout;
    case SIG_BATCH_NORM: *n = 8, *nreq = 3; return batch;
    case SIG_GROUP_NORM: *n = 5, *nreq = 2; return group;
    default: *n = 5, *nreq = 1; return interp;
    }
}

static int number_arg(PyObject *o, double def, double *out, const char *fn, const char *what) {
    *out = def;
    if (!o || o == Py_None) return 0;
    if (!PyNumber_Check(o) || PyUnicode_Check(o)) {
        PyErr_Format(PyExc_TypeError, "%s: %s must be a number, not %.100s", fn, what, Py_TYPE(o)->tp_name);
        return -1;
    }
    *out = PyFloat_AsDouble(o);
    return *out == -1.0 && PyErr_Occurred() ? -1 : 0;
}

/* An int/float or a sequence of nd of them (as doubles; ints must be whole for sizes). */
static int per_dim(PyObject *o, int nd, double *out, const char *fn, const char *what) {
    if (PyNumber_Check(o) && !PySequence_Check(o)) {
        double v;
        if (number_arg(o, 0, &v, fn, what) < 0) return -1;
        for (int i = 0; i < nd; i++) out[i] = v;
        return 0;
    }
    PyObject *seq = PySequence_Fast(o, "");
    if (!seq || PySequence_Fast_GET_SIZE(seq) != nd) {
        Py_XDECREF(seq);
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError, "%s: %s must be a number or %d numbers (one per spatial dimension), not %R", fn,
                     what, nd, o);
        return -1;
    }
    for (int i = 0; i < nd; i++)
        if (number_arg(PySequence_Fast_GET_ITEM(seq, i), 0, &out[i], fn, what) < 0) {
            Py_DECREF(seq);
            return -1;
        }
    Py_DECREF(seq);
    return 0;
}

static PyObject *interpolate_call(const op_entry *e, TensorObject *a, PyObject **v) {
    int nd = wgt_tensor_ndim(a->t) - 2;
    if (nd < 1 || nd > 3)
        return PyErr_Format(PyExc_ValueError, "%s: input has rank %d, wanted [N, C, spatial...] with 1 to 3 spatial "
                            "dimensions", e->name, nd + 2);
    const char *mode = "nearest";
    if (v[3] && v[3] != Py_None && !(mode = PyUnicode_AsUTF8(v[3]))) return NULL;
    static const char *const names[] = {"nearest", "nearest-exact", "linear", "bilinear", "trilinear"};
    int m = -1;
    for (int i = 0; i < 5; i++)
        if (!strcmp(mode, names[i])) m = i;
    if (m < 0)
        return PyErr_Format(PyExc_ValueError, "%s: mode %R is not one of 'nearest', 'nearest-exact', 'linear', "
                            "'bilinear', 'trilinear'", e->name, v[3]);
    if (m >= 2 && m - 1 != nd)
        return PyErr_Format(PyExc_ValueError, "%s: mode '%s' needs %d spatial dimensions, input has %d", e->name, mode,
                            m - 1, nd);
    int align = v[4] && v[4] != Py_None ? PyObject_IsTrue(v[4]) : 0;
    if (align < 0) return NULL;
    if (v[4] && v[4] != Py_None && m < 2)
        return PyErr_Format(PyExc_ValueError, "%s: align_corners applies to linear modes only, not '%s'", e->name, mode);
    int has_size = v[1] && v[1] != Py_None, has_scale = v[2] && v[2] != Py_None;
    double vals[3];
    int64_t size[3];
    if (has_size == has_scale)
        return PyErr_Format(PyExc_ValueError, "%s: give exactly one of size and scale_factor", e->name);
    if (per_dim(has_size ? v[1] : v[2], nd, vals, e->name, has_size ? "size" : "scale_factor") < 0) return NULL;
    for (int i = 0; has_size && i < nd; i++) {
        if (vals[i] != (double)(int64_t)vals[i])
            return PyErr_Format(PyExc_TypeError, "%s: size must hold integers, not %g", e->name, vals[i]);
        size[i] = (int64_t)vals[i];
    }
    WGTPY_LOCK(a->ctx);
    wgt_tensor *r = ((interpolate_fn)e->fn)(a->t, has_size ? size : NULL, has_size ? NULL : vals,
                                            m >= 2 ? WGT_INTERP_LINEAR : (wgt_interp_mode)m, align);
    WGTPY_UNLOCK(a->ctx);
    return wgtpy_wrap(r, a->ctx, e->name, 0);
}

PyObject *wgtpy_layers_call(const op_entry *e, PyObject **v) {
    TensorObject *a = wgtpy_first_tensor(v[0], e->name), *t[4] = {NULL, NULL, NULL, NULL};
    if (!a) return NULL;
    PyObject *out = NULL;
    wgt_tensor *r = NULL;
    double p, eps;
    long long seed = 0, groups = 0;
    switch (e->sig) {
    case SIG_DROPOUT: {
        int training = v[2] ? PyObject_IsTrue(v[2]) : 1;
        int tensor_seed = v[3] && PyObject_TypeCheck(v[3], wgtpy_Tensor);
        if (training < 0 || number_arg(v[1], 0.5, &p, e->name, "p") < 0 ||
            (tensor_seed && wgtpy_other_tensor(v[3], a, &t[0], 0, e->name) < 0) ||
            (v[3] && !tensor_seed && wgtpy_int_arg(v[3], &seed, 0, INT64_MAX, e->name, "seed") < 0))
            goto done;
        if (!training) { /* evaluation: the identity, as torch's dropout(training=False) */
            out = (PyObject *)a;
            Py_INCREF(out);
            goto done;
        }
        WGTPY_LOCK(a->ctx);
        /* A seed tensor (uint32 [2]): wgt_dropout_seeded, which a compiled graph can rebind. */
        r = t[0] ? wgt_dropout_seeded(a->t, p, t[0]->t) : ((dropout_fn)e->fn)(a->t, p, (uint64_t)seed);
        break;
    }
    case SIG_BATCH_NORM: {
        int training = v[5] ? PyObject_IsTrue(v[5]) : 0;
        if (training < 0) goto done;
        if (training) {
            PyErr_Format(PyExc_NotImplementedError, "%s: only the inference form (training=False, running statistics)",
                         e->name);
            goto done;
        }
        double momentum;
        if (number_arg(v[6], 0.1, &momentum, e->name, "momentum") < 0 || number_arg(v[7], 1e-5, &eps, e->name, "eps") < 0)
            goto done;
        for (int i = 0; i < 4; i++)
            if (wgtpy_other_tensor(v[i + 1] ? v[i + 1] : Py_None, a, &t[i], i >= 2, e->name) < 0) goto done;
        WGTPY_LOCK(a->ctx);
        r = ((batch_norm_fn)e->fn)(a->t, t[0]->t, t[1]->t, t[2] ? t[2]->t : NULL, t[3] ? t[3]->t : NULL, eps);
        break;
    }
    case SIG_GROUP_NORM:
        if (wgtpy_int_arg(v[1], &groups, INT64_MIN, INT64_MAX, e->name, "num_groups") < 0 ||
            number_arg(v[4], 1e-5, &eps, e->name, "eps") < 0)
            goto done;
        for (int i = 0; i < 2; i++)
            if (wgtpy_other_tensor(v[i + 2] ? v[i + 2] : Py_None, a, &t[i], 1, e->name) < 0) goto done;
        WGTPY_LOCK(a->ctx);
        r = ((group_norm_fn)e->fn)(a->t, groups, t[0] ? t[0]->t : NULL, t[1] ? t[1]->t : NULL, eps);
        break;
    default:
        out = interpolate_call(e, a, v);
        goto done;
    }
    WGTPY_UNLOCK(a->ctx);
    out = wgtpy_wrap(r, a->ctx, e->name, 0);
done:
    Py_DECREF(a);
    for (int i = 0; i < 4; i++) Py_XDECREF(t[i]);
    return out;
}
