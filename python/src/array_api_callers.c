/*
 * The callers of the array API's keywords that need more than one C call: moveaxis with
 * sequences of axes (one permutation), concat(axis=None) (each tensor flattened first),
 * astype(copy=, device=), reshape(copy=) and the reductions' dtype= (the input converted
 * first, as NumPy accumulates in dtype). The op table's entries name the C function;
 * these only arrange the calls around it.
 */
#include "ops.h"

/* Calls with a's context locked. */
#define LOCKED(a, stmt)                                                                         \
    do {                                                                                        \
        WGTPY_LOCK((a)->ctx);                                                                   \
        stmt;                                                                                   \
        WGTPY_UNLOCK((a)->ctx);                                                                 \
    } while (0)

/* An axis or a sequence of axes, each normalized into [0, ndim); distinct. */
static int axis_list(PyObject *o, int ndim, int *axes, const char *fn, const char *what) {
    int n;
    if (PyLong_Check(o) || (PyIndex_Check(o) && !PySequence_Check(o))) {
        long long x;
        if (wgtpy_int_arg(o, &x, -(WGT_MAX_DIMS + 1), WGT_MAX_DIMS, fn, what) < 0) return -1;
        axes[0] = (int)x;
        n = 1;
    } else if ((n = wgtpy_axes_arg(o, axes, fn)) < 0) {
        return -1;
    }
    for (int i = 0; i < n; i++) {
        if (axes[i] < -ndim || axes[i] >= ndim) {
            PyErr_Format(PyExc_ValueError, "%s: %s axis %d is out of range for %d dimensions", fn, what, axes[i], ndim);
            return -1;
        }
        axes[i] = (axes[i] + ndim) % ndim;
        for (int j = 0; j < i; j++)
            if (axes[j] == axes[i]) {
                PyErr_Format(PyExc_ValueError, "%s: %s names axis %d twice", fn, what, axes[i]);
                return -1;
            }
    }
    return n;
}

/* NumPy's moveaxis: the moved axes go to their destinations, the others keep their order. */
PyObject *wgtpy_moveaxis(const op_entry *e, TensorObject *a, PyObject *source, PyObject *destination) {
    int nd = wgt_tensor_ndim(a->t), src[WGT_MAX_DIMS], dst[WGT_MAX_DIMS], perm[WGT_MAX_DIMS], ns, nt;
    if ((ns = axis_list(source, nd, src, e->name, "source")) < 0 ||
        (nt = axis_list(destination, nd, dst, e->name, "destination")) < 0)
        return NULL;
    if (ns != nt)
        return PyErr_Format(PyExc_ValueError, "%s: %d source axes for %d destinations", e->name, ns, nt);
    int moved[WGT_MAX_DIMS] = {0}, taken[WGT_MAX_DIMS] = {0};
    for (int i = 0; i < ns; i++) moved[src[i]] = 1, taken[dst[i]] = 1, perm[dst[i]] = src[i];
    for (int d = 0, k = 0; d < nd; d++) { /* the rest fill the free places in order */
        if (taken[d]) continue;
        while (moved[k]) k++;
        perm[d] = k++;
    }
    wgt_tensor *r;
    LOCKED(a, r = wgt_permute(a->t, perm));
    return wgtpy_wrap(r, a->ctx, e->name, 0);
}

/* concat(tensors, axis=None): every tensor flattened, then joined along the one axis. */
wgt_tensor *wgtpy_concat_flat(wgt_tensor *const *hs, int n) {
    wgt_tensor **flat = calloc((size_t)n, sizeof *flat); /* not PyMem_*: runs without the GIL */
    if (!flat) return NULL;
    int64_t all = -1;
    int ok = 1;
    for (int i = 0; i < n && ok; i++) ok = (flat[i] = wgt_reshape(hs[i], 1, &all)) != NULL;
    wgt_tensor *r = ok ? wgt_concat(flat, n, 0) : NULL;
    for (int i = 0; i < n; i++) wgt_release(flat[i]);
    free(flat);
    return r;
}

/* astype(x, dtype, /, *, copy=True, device=None): on device (a context) when given; copy=False
 * hands back x itself when nothing needs converting or moving. */
PyObject *wgtpy_astype(const op_entry *e, TensorObject *a, PyObject *dtype_obj, PyObject *copy_obj,
                       PyObject *device) {
    wgt_dtype dtype;
    int copy = PyObject_IsTrue(copy_obj);
    if (copy < 0 || wgtpy_dtype_from_obj(dtype_obj, &dtype) < 0) return NULL;
    PyObject *moved = NULL;
    if (device != Py_None && device != (PyObject *)a->ctx) { /* a copy on the other context */
        if (!(moved = PyObject_CallMethod((PyObject *)a, "to", "O", device))) return NULL;
        if (!WGTPY_IS_TENSOR(moved)) {
            Py_DECREF(moved);
            return PyErr_Format(PyExc_TypeError, "%s: device must be a Context", e->name);
        }
        a = (TensorObject *)moved;
        copy = 0; /* the move made one */
    }
    PyObject *out;
    if (wgt_tensor_dtype(a->t) == dtype && !copy) {
        out = Py_NewRef((PyObject *)a);
    } else {
        wgt_tensor *r;
        LOCKED(a, r = wgt_tensor_dtype(a->t) == dtype ? wgt_contiguous(a->t) : wgt_cast(a->t, dtype));
        out = wgtpy_wrap(r, a->ctx, e->name, 0);
    }
    Py_XDECREF(moved);
    return out;
}

/* reshape(x, shape, *, copy=None): None a view where the layout allows, else a copy; True
 * always a new tensor; False a view or ValueError. */
PyObject *wgtpy_reshape(const op_entry *e, TensorObject *a, PyObject *shape_obj, PyObject *copy_obj) {
    int64_t shape[WGT_MAX_DIMS];
    int nd = wgtpy_shape_arg(shape_obj, shape, e->name), copy = copy_obj == Py_None ? -1 : PyObject_IsTrue(copy_obj);
    if (nd < 0 || (copy_obj != Py_None && copy < 0)) return NULL;
    wgt_tensor *r;
    if (copy == 1) {
        LOCKED(a, {
            wgt_tensor *c = wgt_contiguous(a->t);
            r = c ? wgt_reshape(c, nd, shape) : NULL;
            wgt_release(c);
        });
    } else {
        LOCKED(a, r = copy == 0 ? wgt_reshape_view(a->t, nd, shape) : wgt_reshape(a->t, nd, shape));
    }
    return wgtpy_wrap(r, a->ctx, e->name, 0);
}

typedef wgt_status (*views_fn)(int, wgt_tensor *const *, int, wgt_tensor **);

/* broadcast_arrays and meshgrid: one C call over the tensors (on the first one's context)
 * giving a list of views. */
static wgt_status broadcast_arrays(int n, wgt_tensor *const *in, int flag, wgt_tensor **out) {
    (void)flag;
    return wgt_broadcast_arrays(n, in, out);
}

PyObject *wgtpy_views(const op_entry *e, PyObject *tensors, PyObject *flag_obj) {
    int flag = flag_obj ? PyObject_IsTrue(flag_obj) : 0;
    PyObject *seq = flag < 0 ? NULL : PySequence_Fast(tensors, "expected a sequence of tensors");
    if (!seq) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    views_fn fn = e->fn == (void (*)(void))wgt_meshgrid ? wgt_meshgrid : broadcast_arrays;
    TensorObject **ts = PyMem_Calloc((size_t)(n ? n : 1), sizeof *ts);
    wgt_tensor **hs = PyMem_Calloc((size_t)(n ? n : 1), sizeof *hs), **outs = PyMem_Calloc((size_t)(n ? n : 1), sizeof *outs);
    PyObject *out = NULL;
    if (!ts || !hs || !outs) {
        PyErr_NoMemory();
        goto done;
    }
    if (n > INT32_MAX) {
        PyErr_Format(PyExc_ValueError, "%s: %zd tensors", e->name, n);
        goto done;
    }
    if (n == 0) {
        out = PyList_New(0);
        goto done;
    }
    if (!(ts[0] = wgtpy_first_tensor(PySequence_Fast_GET_ITEM(seq, 0), e->name))) goto done;
    for (Py_ssize_t i = 1; i < n; i++)
        if (wgtpy_other_tensor(PySequence_Fast_GET_ITEM(seq, i), ts[0], &ts[i], 0, e->name) < 0) goto done;
    for (Py_ssize_t i = 0; i < n; i++) hs[i] = ts[i]->t;
    wgt_status st;
    LOCKED(ts[0], st = fn((int)n, hs, flag, outs));
    if (st != WGT_OK) {
        wgtpy_raise(e->name, 0);
        goto done;
    }
    out = PyList_New(n);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *p = wgtpy_wrap(outs[i], ts[0]->ctx, e->name, 0);
        outs[i] = NULL;
        if (out && p) PyList_SET_ITEM(out, i, p);
        else Py_XDECREF(p);
        if (!p) Py_CLEAR(out);
    }
done:
    for (Py_ssize_t i = 0; ts && i < n; i++) Py_XDECREF(ts[i]);
    for (Py_ssize_t i = 0; outs && i < n; i++) wgt_release(outs[i]);
    PyMem_Free(ts);
    PyMem_Free(hs);
    PyMem_Free(outs);
    Py_DECREF(seq);
    return out;
}
