/*
 * The generic callers of the op table: one per signature kind, each turning Python arguments
 * (positional or keyword, names as NumPy's where NumPy has the op) into one C call. Tensor
 * arguments may be anything asarray takes; later operands take the first one's context, and
 * Python scalars its type (operators.c). Indexing ops report a bad index as IndexError.
 */
#include <math.h>
#include <string.h>

#include "ops.h"

#define MAXARGS WGTPY_NN_MAXARGS /* conv_transpose2d's 8; the others take 6 at most */

/* Positional and keyword arguments into vals[0..n-1]; the first nreq are required, later ones
 * keep their default (NULL where the caller tests for "not given"); names from npos on are
 * keyword-only. */
static int parse(const char *fn, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, const char *const *names,
                 int n, int npos, int nreq, PyObject **vals) {
    if (nargs > npos) {
        PyErr_Format(PyExc_TypeError, "%s() takes at most %d positional arguments (%zd given)", fn, npos, nargs);
        return -1;
    }
    for (Py_ssize_t i = 0; i < nargs; i++) vals[i] = args[i];
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t k = 0; k < nkw; k++) {
        PyObject *key = PyTuple_GET_ITEM(kwnames, k);
        int i = 0;
        while (i < n && PyUnicode_CompareWithASCIIString(key, names[i]) != 0) i++;
        if (i == n) {
            PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument %R", fn, key);
            return -1;
        }
        if (i < nargs) {
            PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%s'", fn, names[i]);
            return -1;
        }
        vals[i] = args[nargs + k];
    }
    for (int i = 0; i < nreq; i++)
        if (!vals[i]) {
            PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s'", fn, names[i]);
            return -1;
        }
    return 0;
}

/* The first tensor argument: a tensor as is, anything else through asarray (default context). */
static TensorObject *first_tensor(PyObject *o, const char *fn) {
    if (WGTPY_IS_TENSOR(o)) return (TensorObject *)Py_NewRef(o);
    PyObject *t = wgtpy_asarray_fn ? PyObject_CallOneArg(wgtpy_asarray_fn, o) : NULL;
    if (t && !WGTPY_IS_TENSOR(t)) Py_CLEAR(t);
    if (!t && !PyErr_Occurred()) PyErr_Format(PyExc_TypeError, "%s: cannot make a tensor of %R", fn, o);
    return (TensorObject *)t;
}

/* A later tensor argument on a's context (None allowed where optional). */
static int other_tensor(PyObject *o, TensorObject *a, TensorObject **out, int optional, const char *fn) {
    *out = NULL;
    if (optional && o == Py_None) return 0;
    *out = wgtpy_operand(o, a);
    if (!*out) return -1;
    if ((*out)->ctx != a->ctx) {
        PyErr_Format(PyExc_ValueError, "%s: tensors of two contexts; move one with t.to(ctx)", fn);
        Py_CLEAR(*out);
        return -1;
    }
    return 0;
}

/* An index tensor argument: as other_tensor, and a NumPy int64 or uint64 array keeps its
 * 64 bits (wgtpy_wide_index). */
static int index_tensor(PyObject *o, TensorObject *a, TensorObject **out, int optional, const char *fn) {
    if ((*out = wgtpy_wide_index(o, a)) != NULL) return 0;
    return PyErr_Occurred() ? -1 : other_tensor(o, a, out, optional, fn);
}

static int double_arg(PyObject *o, double *out, const char *fn, const char *what) {
    if (!PyFloat_Check(o) && !PyLong_Check(o) && !PyIndex_Check(o) && !PyNumber_Check(o)) {
        PyErr_Format(PyExc_TypeError, "%s: %s must be a number, not %.100s", fn, what, Py_TYPE(o)->tp_name);
        return -1;
    }
    *out = PyFloat_AsDouble(o);
    return *out == -1.0 && PyErr_Occurred() ? -1 : 0;
}

static int int_arg(PyObject *o, long long *out, long long lo, long long hi, const char *fn, const char *what) {
    if (PyFloat_Check(o) || !PyIndex_Check(o)) {
        PyErr_Format(PyExc_TypeError, "%s: %s must be an integer, not %.100s", fn, what, Py_TYPE(o)->tp_name);
        return -1;
    }
    int overflow = 0;
    PyObject *i = PyNumber_Index(o);
    if (!i) return -1;
    *out = PyLong_AsLongLongAndOverflow(i, &overflow);
    Py_DECREF(i);
    if (*out == -1 && PyErr_Occurred()) return -1;
    if (overflow || *out < lo || *out > hi) {
        PyErr_Format(PyExc_ValueError, "%s: %s %R is out of range [%lld, %lld]", fn, what, o, lo, hi);
        return -1;
    }
    return 0;
}

/* The array API's correction: a whole number >= 0 (an int or a float such as 1.0); the C
 * functions take an int. */
static int correction_arg(PyObject *o, long long *out, const char *fn) {
    if (!PyFloat_Check(o)) return int_arg(o, out, 0, INT32_MAX, fn, "correction");
    double d = PyFloat_AsDouble(o);
    if (!(d >= 0 && d <= INT32_MAX) || d != floor(d)) {
        PyErr_Format(PyExc_ValueError, "%s: correction %R must be a whole number >= 0", fn, o);
        return -1;
    }
    *out = (long long)d;
    return 0;
}

#define AXIS_ARG(o, out) int_arg((o), &(out), -(WGT_MAX_DIMS + 1), WGT_MAX_DIMS, e->name, "axis")

/* a reshaped to one dimension (for NumPy's axis=None of argmax and cumsum). */
static wgt_tensor *flat(wgt_tensor *t) {
    int64_t n = -1;
    return wgt_reshape(t, 1, &n);
}

typedef wgt_tensor *(*unary_fn)(wgt_tensor *);
typedef wgt_tensor *(*unary_d_fn)(wgt_tensor *, double);
typedef wgt_tensor *(*unary_dd_fn)(wgt_tensor *, double, double);
typedef wgt_tensor *(*reduce_fn)(wgt_tensor *, int, const int *, int);
typedef wgt_tensor *(*reduce_c_fn)(wgt_tensor *, int, const int *, int, int);
typedef wgt_tensor *(*arg_fn)(wgt_tensor *, int, int);
typedef wgt_tensor *(*axis_fn)(wgt_tensor *, int);
typedef wgt_tensor *(*shape_fn)(wgt_tensor *, int, const int64_t *);
typedef wgt_tensor *(*diag_fn)(wgt_tensor *, int64_t);
typedef wgt_tensor *(*binary_axis_fn)(wgt_tensor *, wgt_tensor *, int);

/* Calls with a's context locked and the GIL released (any op may wait on the device); the
 * result is wrapped on that context. */
#define RUN(expr) WGTPY_CALL_NOGIL(a->ctx, r = (expr))

static PyObject *run_op(const op_entry *e, PyObject **v);

typedef wgt_tensor *(*join_fn)(wgt_tensor *const *, int, int);

/* An op over a list of n tensors (concat, stack: axis; einsum: subs), all on the first one's
 * context, later ones taking its type where they are Python scalars. flat: concat of the
 * flattened tensors (axis=None). */
static PyObject *run_list(const op_entry *e, PyObject *const *items, Py_ssize_t n, long long axis, int flat,
                          const char *subs) {
    TensorObject **ts = PyMem_Calloc((size_t)n, sizeof *ts);
    wgt_tensor **hs = PyMem_Calloc((size_t)n, sizeof *hs);
    PyObject *out = NULL;
    if (!ts || !hs) {
        PyErr_NoMemory();
        goto done;
    }
    if (!(ts[0] = first_tensor(items[0], e->name))) goto done;
    for (Py_ssize_t i = 1; i < n; i++)
        if (other_tensor(items[i], ts[0], &ts[i], 0, e->name) < 0) goto done;
    for (Py_ssize_t i = 0; i < n; i++) hs[i] = ts[i]->t;
    TensorObject *a = ts[0];
    wgt_tensor *r;
    if (subs)
        RUN(wgt_einsum(subs, (int)n, hs));
    else if (flat)
        RUN(wgtpy_concat_flat(hs, (int)n));
    else
        RUN(((join_fn)e->fn)(hs, (int)n, (int)axis));
    out = wgtpy_wrap(r, a->ctx, e->name, 0);
done:
    for (Py_ssize_t i = 0; ts && i < n; i++) Py_XDECREF(ts[i]);
    PyMem_Free(ts);
    PyMem_Free(hs);
    return out;
}

/* einsum(subscripts, *operands), as NumPy's. */
static PyObject *einsum(const op_entry *e, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    if (kwnames && PyTuple_GET_SIZE(kwnames))
        return PyErr_Format(PyExc_TypeError, "%s() takes no keyword arguments", e->name);
    if (nargs < 2 || nargs - 1 > INT32_MAX || !PyUnicode_Check(args[0]))
        return PyErr_Format(PyExc_TypeError, "%s() takes a subscripts string and at least one operand", e->name);
    const char *subs = PyUnicode_AsUTF8(args[0]);
    return subs ? run_list(e, args + 1, nargs - 1, 0, 0, subs) : NULL;
}

/* tensordot's axes: an int N (a's last N with b's first N) or a pair of axis sequences. */
static int tensordot_axes(PyObject *o, int *axes_a, int *axes_b, int *given, const char *fn) {
    long long n;
    *given = 0;
    if (!o) return 2;
    if (PyLong_Check(o) || PyIndex_Check(o)) return int_arg(o, &n, 0, WGT_MAX_DIMS, fn, "axes") < 0 ? -1 : (int)n;
    PyObject *pair = PySequence_Fast(o, "tensordot: axes must be an int or a pair of axis sequences");
    if (!pair) return -1;
    int count = -1;
    if (PySequence_Fast_GET_SIZE(pair) != 2) {
        PyErr_Format(PyExc_ValueError, "%s: axes must be an int or a pair of axis sequences", fn);
        goto done;
    }
    int na = wgtpy_axes_arg(PySequence_Fast_GET_ITEM(pair, 0), axes_a, fn);
    int nb = na < 0 ? -1 : wgtpy_axes_arg(PySequence_Fast_GET_ITEM(pair, 1), axes_b, fn);
    if (nb < 0) goto done;
    if (na != nb) {
        PyErr_Format(PyExc_ValueError, "%s: axes pairs %d axes of a with %d of b", fn, na, nb);
        goto done;
    }
    *given = 1;
    count = na;
done:
    Py_DECREF(pair);
    return count;
}

PyObject *wgtpy_call_op(const op_entry *e, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    PyObject *v[MAXARGS] = {0};
    const char *unary_f[2] = {"a", e->param};
    if (wgtpy_nn_sig(e->sig)) {
        int n = 0, nreq = 0;
        const char *const *names = wgtpy_nn_names(e->sig, &n, &nreq);
        if (parse(e->name, args, nargs, kwnames, names, n, n, nreq, v) < 0) return NULL;
        return wgtpy_nn_call(e, v);
    }
    const char *const *names = e->sig == SIG_UNARY_F ? unary_f : wgtpy_sig_names(e->sig);
    int n = wgtpy_sig_count(e->sig);
    wgtpy_sig_defaults(e->sig, v);
    PyObject *packed = NULL;
    if (e->sig == SIG_EINSUM) return einsum(e, args, nargs, kwnames);
    /* t.reshape(2, 3) as NumPy allows: positional dimensions become the shape. */
    if ((e->sig == SIG_SHAPE || e->sig == SIG_RESHAPE) && nargs > 2 && !kwnames) {
        packed = PyTuple_New(nargs - 1);
        if (!packed) return NULL;
        for (Py_ssize_t i = 1; i < nargs; i++) PyTuple_SET_ITEM(packed, i - 1, Py_NewRef(args[i]));
        v[0] = args[0], v[1] = packed;
    } else if (parse(e->name, args, nargs, kwnames, names, n, wgtpy_sig_positional(e->sig), wgtpy_sig_required(e->sig), v) < 0) {
        return NULL;
    }
    PyObject *r = run_op(e, v);
    Py_XDECREF(packed);
    return r;
}

static PyObject *join(const op_entry *e, PyObject **v) {
    long long axis = 0;
    int flat = v[1] == Py_None && e->fn == (void (*)(void))wgt_concat;
    if (v[1] && !flat && AXIS_ARG(v[1], axis) < 0) return NULL;
    PyObject *seq = PySequence_Fast(v[0], "concat/stack take a sequence of tensors");
    if (!seq) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n < 1 || n > INT32_MAX) {
        Py_DECREF(seq);
        return PyErr_Format(PyExc_ValueError, "%s: needs at least one tensor", e->name);
    }
    PyObject *out = run_list(e, PySequence_Fast_ITEMS(seq), n, axis, flat, NULL);
    Py_DECREF(seq);
    return out;
}

static PyObject *split(const op_entry *e, TensorObject *a, PyObject **v) {
    long long axis = 0;
    if (v[2] && AXIS_ARG(v[2], axis) < 0) return NULL;
    PyObject *seq = PySequence_Fast(v[1], "split: sizes must be a sequence of ints");
    if (!seq) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    int64_t *sizes = PyMem_Calloc((size_t)(n ? n : 1), sizeof *sizes);
    wgt_tensor **parts = PyMem_Calloc((size_t)(n ? n : 1), sizeof *parts);
    PyObject *out = NULL;
    if (!sizes || !parts) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        long long s;
        if (int_arg(PySequence_Fast_GET_ITEM(seq, i), &s, INT64_MIN, INT64_MAX, e->name, "size") < 0) goto done;
        sizes[i] = s;
    }
    wgt_status st;
    WGTPY_BEGIN_NOGIL(a->ctx)
    st = wgt_split(a->t, (int)axis, (int)n, sizes, parts);
    WGTPY_END_NOGIL(a->ctx)
    if (st != WGT_OK) {
        wgtpy_raise(e->name, 0);
        goto done;
    }
    out = PyList_New(n);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *p = wgtpy_wrap(parts[i], a->ctx, e->name, 0);
        parts[i] = NULL;
        if (out && p) PyList_SET_ITEM(out, i, p);
        else Py_XDECREF(p);
        if (!p) Py_CLEAR(out);
    }
done:
    PyMem_Free(sizes);
    PyMem_Free(parts);
    Py_DECREF(seq);
    return out;
}

/* The values of a 1-d integer tensor as a list of Python ints (read from the device). */
static PyObject *tensor_int_list(PyObject *o, const char *fn, const char *what) {
    wgt_tensor *t = ((TensorObject *)o)->t;
    wgt_dtype d = wgt_tensor_dtype(t);
    int integer = d == WGT_I8 || d == WGT_U8 || d == WGT_I16 || d == WGT_U16 || d == WGT_I32 || d == WGT_U32 ||
                  d == WGT_I64 || d == WGT_U64;
    if (!integer) {
        PyErr_Format(PyExc_TypeError, "%s: %s is a %s tensor; it must have an integer type", fn, what,
                     wgt_dtype_name(d));
        return NULL;
    }
    if (wgt_tensor_ndim(t) != 1) {
        PyErr_Format(PyExc_ValueError, "%s: %s is a tensor of rank %d; it must be 0-d or 1-d", fn, what,
                     wgt_tensor_ndim(t));
        return NULL;
    }
    PyObject *view = PyMemoryView_FromObject(o);
    PyObject *list = view ? PyObject_CallMethod(view, "tolist", NULL) : NULL;
    Py_XDECREF(view);
    return list;
}

/* An int or a sequence of them (a 1-d integer tensor too) as int64 (PyMem; *n of them); NULL
 * with an error set. */
static int64_t *int64_list(PyObject *o, Py_ssize_t *n, const char *fn, const char *what) {
    PyObject *values = NULL;
    if (WGTPY_IS_TENSOR(o) && wgt_tensor_ndim(((TensorObject *)o)->t) != 0) {
        if (!(values = tensor_int_list(o, fn, what))) return NULL;
        o = values;
    }
    int single = !PySequence_Check(o) || PyUnicode_Check(o) || WGTPY_IS_TENSOR(o);
    PyObject *seq = single ? NULL : PySequence_Fast(o, "expected an int or a sequence of ints");
    Py_XDECREF(values); /* seq holds it (or a list made from it) where it was needed */
    if (!single && !seq) return NULL;
    *n = single ? 1 : PySequence_Fast_GET_SIZE(seq);
    int64_t *v = PyMem_Calloc((size_t)(*n ? *n : 1), sizeof *v);
    if (!v) PyErr_NoMemory();
    for (Py_ssize_t i = 0; v && i < *n; i++) {
        long long x;
        if (int_arg(single ? o : PySequence_Fast_GET_ITEM(seq, i), &x, INT64_MIN, INT64_MAX, fn, what) < 0) {
            PyMem_Free(v);
            v = NULL;
        } else {
            v[i] = x;
        }
    }
    Py_XDECREF(seq);
    return v;
}

/* roll and repeat: lists of ints of any length, and axis None for the flattened tensor. */
static PyObject *roll_or_repeat(const op_entry *e, TensorObject *a, PyObject **v) {
    Py_ssize_t n = 0;
    int axes[WGT_MAX_DIMS * 4], naxes = 0;
    int64_t *list = int64_list(v[1], &n, e->name, e->sig == SIG_ROLL ? "shift" : "repeats");
    if (!list) return NULL;
    if (e->sig == SIG_ROLL && v[2] != Py_None) {
        int64_t ax[WGT_MAX_DIMS];
        if ((naxes = wgtpy_shape_arg(v[2], ax, e->name)) < 0) goto fail;
        for (int i = 0; i < naxes; i++) axes[i] = (int)ax[i];
        /* NumPy pairs one shift with every axis. */
        if (n == 1 && naxes > 1) {
            int64_t *wide = PyMem_Realloc(list, (size_t)naxes * sizeof *wide);
            if (!wide) {
                PyErr_NoMemory();
                goto fail;
            }
            list = wide;
            for (int i = 1; i < naxes; i++) list[i] = list[0];
            n = naxes;
        }
    }
    wgt_tensor *r = NULL, *flat = NULL;
    if (e->sig == SIG_ROLL) {
        if (v[2] != Py_None && n != naxes) {
            PyErr_Format(PyExc_ValueError, "%s: %zd shifts for %d axes; give one per axis", e->name, n, naxes);
            goto fail;
        }
        RUN(wgt_roll(a->t, (int)n, list, v[2] == Py_None ? NULL : axes));
    } else {
        long long axis = 0;
        int64_t all = -1;
        if (v[2] != Py_None && AXIS_ARG(v[2], axis) < 0) goto fail;
        WGTPY_BEGIN_NOGIL(a->ctx)
        if (v[2] == Py_None) flat = wgt_reshape(a->t, 1, &all);
        r = v[2] == Py_None && !flat ? NULL : wgt_repeat(flat ? flat : a->t, (int)n, list, (int)axis);
        wgt_release(flat);
        WGTPY_END_NOGIL(a->ctx)
    }
    PyMem_Free(list);
    return wgtpy_wrap(r, a->ctx, e->name, 0);
fail:
    PyMem_Free(list);
    return NULL;
}

static PyObject *run_op(const op_entry *e, PyObject **v) {
    if (e->sig == SIG_JOIN) return join(e, v);
    if (e->sig == SIG_VIEWS) return wgtpy_views(e, v[0], v[1]);
    if (e->sig == SIG_BINARY || e->sig == SIG_TRUE_DIVIDE)
        return wgtpy_binary((wgtpy_binary_fn)e->fn, v[0], v[1], e->name, e->sig == SIG_TRUE_DIVIDE ? BIN_TRUE_DIVIDE : 0);
    /* one_hot's first argument is its indices. */
    TensorObject *a = e->sig == SIG_ONE_HOT ? wgtpy_wide_index(v[0], NULL) : NULL, *b = NULL, *c = NULL;
    if (!a && !PyErr_Occurred()) a = first_tensor(v[0], e->name);
    if (!a) return NULL;
    wgt_tensor *r = NULL;
    PyObject *out = NULL;
    int index_errors = 0, axes[WGT_MAX_DIMS], naxes;
    int64_t shape[WGT_MAX_DIMS], shape2[WGT_MAX_DIMS];
    long long i0 = 0, i1 = 0;
    double d0 = e->def, d1 = 0;
    wgt_dtype dtype;
    switch (e->sig) {
    case SIG_UNARY: RUN(((unary_fn)e->fn)(a->t)); break;
    case SIG_SCALAR:
        if (double_arg(v[1], &d0, e->name, "s") < 0) goto fail;
        RUN(((unary_d_fn)e->fn)(a->t, d0));
        break;
    case SIG_UNARY_F:
        if (v[1] && double_arg(v[1], &d0, e->name, e->param) < 0) goto fail;
        RUN(((unary_d_fn)e->fn)(a->t, d0));
        break;
    case SIG_CLIP: {
        for (int k = 1; k <= 2; k++) /* min and max: the array API's names of a_min and a_max */
            if (v[k + 2]) {
                if (v[k] != Py_None) {
                    PyErr_Format(PyExc_TypeError, "%s() got both %s and %s", e->name, k == 1 ? "a_min" : "a_max",
                                 k == 1 ? "min" : "max");
                    goto fail;
                }
                v[k] = v[k + 2];
            }
        if (WGTPY_IS_TENSOR(v[1]) || WGTPY_IS_TENSOR(v[2])) { /* tensor bounds: wgt_clip, None for no bound */
            TensorObject *lo = v[1] == Py_None ? NULL : wgtpy_operand(v[1], a);
            TensorObject *hi = v[2] == Py_None ? NULL : wgtpy_operand(v[2], a);
            if ((v[1] != Py_None && !lo) || (v[2] != Py_None && !hi)) {
                Py_XDECREF(lo);
                Py_XDECREF(hi);
                goto fail;
            }
            RUN(wgt_clip(a->t, lo ? lo->t : NULL, hi ? hi->t : NULL));
            Py_XDECREF(lo);
            Py_XDECREF(hi);
            break;
        }
        int is_int = wgt_tensor_dtype(a->t) == WGT_I32 || wgt_tensor_dtype(a->t) == WGT_U32;
        double lo = is_int ? (wgt_tensor_dtype(a->t) == WGT_I32 ? (double)INT32_MIN : 0) : -INFINITY;
        double hi = is_int ? (wgt_tensor_dtype(a->t) == WGT_I32 ? (double)INT32_MAX : (double)UINT32_MAX) : INFINITY;
        if ((v[1] != Py_None && double_arg(v[1], &lo, e->name, "a_min") < 0) ||
            (v[2] != Py_None && double_arg(v[2], &hi, e->name, "a_max") < 0))
            goto fail;
        RUN(((unary_dd_fn)e->fn)(a->t, lo, hi));
        break;
    }
    case SIG_REDUCE:
    case SIG_REDUCE_DTYPE:
    case SIG_REDUCE_DDOF: {
        PyObject *keep = e->sig == SIG_REDUCE_DDOF ? v[3] : v[2];
        int k = PyObject_IsTrue(keep);
        if (k < 0 || (naxes = wgtpy_axes_arg(v[1], axes, e->name)) < 0) goto fail;
        if (e->sig == SIG_REDUCE_DDOF) {
            if (v[2] && v[4]) {
                PyErr_Format(PyExc_TypeError, "%s() got both ddof and correction", e->name);
                goto fail;
            }
            if (v[4] && correction_arg(v[4], &i0, e->name) < 0) goto fail;
            if (v[2] && int_arg(v[2], &i0, 0, INT32_MAX, e->name, "ddof") < 0) goto fail;
            RUN(((reduce_c_fn)e->fn)(a->t, naxes, axes, k, (int)i0));
        } else if (e->sig == SIG_REDUCE_DTYPE && v[3] != Py_None) { /* accumulate in dtype, as NumPy */
            if (wgtpy_dtype_from_obj(v[3], &dtype) < 0) goto fail;
            WGTPY_BEGIN_NOGIL(a->ctx)
            wgt_tensor *x = wgt_tensor_dtype(a->t) == dtype ? wgt_retain(a->t) : wgt_cast(a->t, dtype);
            r = x ? ((reduce_fn)e->fn)(x, naxes, axes, k) : NULL;
            wgt_release(x);
            WGTPY_END_NOGIL(a->ctx)
        } else {
            RUN(((reduce_fn)e->fn)(a->t, naxes, axes, k));
        }
        break;
    }
    case SIG_ARG: {
        int k = PyObject_IsTrue(v[2]);
        if (k < 0) goto fail;
        if (v[1] != Py_None) {
            if (AXIS_ARG(v[1], i0) < 0) goto fail;
            RUN(((arg_fn)e->fn)(a->t, (int)i0, k));
            break;
        }
        /* Over the flattened tensor; keepdims keeps every axis with length 1, as NumPy. */
        int nd = wgt_tensor_ndim(a->t);
        for (int i = 0; i < nd; i++) shape[i] = 1;
        WGTPY_BEGIN_NOGIL(a->ctx)
        wgt_tensor *f = flat(a->t), *m = ((arg_fn)e->fn)(f, 0, 0);
        r = k && m ? wgt_reshape(m, nd, shape) : (m ? wgt_retain(m) : NULL);
        wgt_release(f);
        wgt_release(m);
        WGTPY_END_NOGIL(a->ctx)
        break;
    }
    case SIG_AXIS:
        if (v[1] && AXIS_ARG(v[1], i0) < 0) goto fail;
        if (!v[1]) i0 = (long long)e->def;
        RUN(((axis_fn)e->fn)(a->t, (int)i0));
        break;
    case SIG_AXIS_FLAT:
        if (v[1] != Py_None) {
            if (AXIS_ARG(v[1], i0) < 0) goto fail;
            RUN(((axis_fn)e->fn)(a->t, (int)i0));
        } else {
            WGTPY_BEGIN_NOGIL(a->ctx)
            wgt_tensor *f = flat(a->t);
            r = f ? ((axis_fn)e->fn)(f, 0) : NULL;
            wgt_release(f);
            WGTPY_END_NOGIL(a->ctx)
        }
        break;
    case SIG_CAST: out = wgtpy_astype(e, a, v[1], v[2], v[3]); goto done;
    case SIG_RESHAPE: out = wgtpy_reshape(e, a, v[1], v[2]); goto done;
    case SIG_SWAP:
        if (AXIS_ARG(v[1], i0) < 0 || AXIS_ARG(v[2], i1) < 0) goto fail;
        RUN(wgt_transpose(a->t, (int)i0, (int)i1));
        break;
    case SIG_DIAG:
        if (v[1] && int_arg(v[1], &i0, INT64_MIN, INT64_MAX, e->name, "k") < 0) goto fail;
        RUN(((diag_fn)e->fn)(a->t, (int64_t)i0));
        break;
    case SIG_SHAPE:
        if ((naxes = wgtpy_shape_arg(v[1], shape, e->name)) < 0) goto fail;
        RUN(((shape_fn)e->fn)(a->t, naxes, shape));
        break;
    case SIG_PERMUTE: {
        int nd = wgt_tensor_ndim(a->t);
        if (v[1] == Py_None) {
            for (int i = 0; i < nd; i++) axes[i] = nd - 1 - i;
        } else {
            if ((naxes = wgtpy_axes_arg(v[1], axes, e->name)) < 0) goto fail;
            if (naxes != nd) {
                PyErr_Format(PyExc_ValueError, "%s: axes %R do not match a tensor of %d dimensions", e->name, v[1], nd);
                goto fail;
            }
        }
        RUN(wgt_permute(a->t, axes));
        break;
    }
    case SIG_FLIP:
        if ((naxes = wgtpy_axes_arg(v[1], axes, e->name)) < 0) goto fail;
        RUN(wgt_flip(a->t, naxes, axes));
        break;
    case SIG_SLICE: {
        long long start, stop, step = 1;
        if (AXIS_ARG(v[1], i0) < 0 || int_arg(v[2], &start, INT64_MIN, INT64_MAX, e->name, "start") < 0 ||
            int_arg(v[3], &stop, INT64_MIN, INT64_MAX, e->name, "stop") < 0 ||
            (v[4] && int_arg(v[4], &step, INT64_MIN, INT64_MAX, e->name, "step") < 0))
            goto fail;
        RUN(wgt_slice(a->t, (int)i0, start, stop, step));
        break;
    }
    case SIG_AS_STRIDED: {
        int ns;
        if ((naxes = wgtpy_shape_arg(v[1], shape, e->name)) < 0 || (ns = wgtpy_shape_arg(v[2], shape2, e->name)) < 0 ||
            (v[3] && int_arg(v[3], &i0, INT64_MIN, INT64_MAX, e->name, "offset") < 0))
            goto fail;
        if (ns != naxes) {
            PyErr_Format(PyExc_ValueError, "%s: %d strides for %d dimensions", e->name, ns, naxes);
            goto fail;
        }
        RUN(wgt_as_strided(a->t, naxes, shape, shape2, (int64_t)i0));
        break;
    }
    case SIG_SPLIT: out = split(e, a, v); goto done;
    case SIG_ROLL: case SIG_REPEAT: out = roll_or_repeat(e, a, v); goto done;
    case SIG_MOVEAXIS:
        if (PySequence_Check(v[1]) || PySequence_Check(v[2])) { /* several axes: one permutation */
            out = wgtpy_moveaxis(e, a, v[1], v[2]);
            goto done;
        }
        if (AXIS_ARG(v[1], i0) < 0 || AXIS_ARG(v[2], i1) < 0) goto fail;
        RUN(wgt_moveaxis(a->t, (int)i0, (int)i1));
        break;
    case SIG_DIAGONAL: {
        long long ax1 = 0, ax2 = 1;
        if ((v[1] && int_arg(v[1], &i0, INT64_MIN, INT64_MAX, e->name, "offset") < 0) ||
            (v[2] && AXIS_ARG(v[2], ax1) < 0) || (v[3] && AXIS_ARG(v[3], ax2) < 0))
            goto fail;
        /* diagonal and trace: f(a, offset, axis1, axis2) */
        RUN(((wgt_tensor * (*)(wgt_tensor *, int64_t, int, int)) e->fn)(a->t, (int64_t)i0, (int)ax1, (int)ax2));
        break;
    }
    case SIG_MASKED_FILL:
        if (other_tensor(v[1], a, &b, 0, e->name) < 0 || double_arg(v[2], &d1, e->name, "value") < 0) goto fail;
        RUN(wgt_masked_fill(a->t, b->t, d1));
        break;
    case SIG_MASKED_SELECT:
        if (other_tensor(v[1], a, &b, 0, e->name) < 0) goto fail;
        RUN(wgt_masked_select(a->t, b->t));
        break;
    case SIG_PAD: {
        int nb, na, nd = wgt_tensor_ndim(a->t);
        if ((nb = wgtpy_shape_arg(v[1], shape, e->name)) < 0 || (na = wgtpy_shape_arg(v[2], shape2, e->name)) < 0 ||
            (v[3] && double_arg(v[3], &d1, e->name, "value") < 0))
            goto fail;
        if (nb != nd || na != nd) {
            PyErr_Format(PyExc_ValueError, "%s: before and after need %d values each (got %d and %d)", e->name, nd, nb, na);
            goto fail;
        }
        RUN(wgt_pad(a->t, shape, shape2, d1));
        break;
    }
    case SIG_WHERE: {
        /* The condition keeps its own type; x and y meet on a common one. */
        TensorObject *x, *y;
        if (wgtpy_operands(v[1], v[2], &x, &y, e->name) < 0) goto fail;
        if (x->ctx != a->ctx) {
            Py_DECREF(x), Py_DECREF(y);
            PyErr_Format(PyExc_ValueError, "%s: tensors of two contexts; move one with t.to(ctx)", e->name);
            goto fail;
        }
        RUN(wgt_where(a->t, x->t, y->t));
        Py_DECREF(x), Py_DECREF(y);
        break;
    }
    case SIG_LINEAR:
        if (other_tensor(v[1], a, &b, 0, e->name) < 0 || other_tensor(v[2], a, &c, 1, e->name) < 0) goto fail;
        RUN(wgt_linear(a->t, b->t, c ? c->t : NULL));
        break;
    case SIG_LAYER_NORM:
        if (other_tensor(v[1], a, &b, 1, e->name) < 0 || other_tensor(v[2], a, &c, 1, e->name) < 0 ||
            (v[3] && double_arg(v[3], &d0, e->name, "eps") < 0))
            goto fail;
        RUN(wgt_layer_norm(a->t, b ? b->t : NULL, c ? c->t : NULL, d0));
        break;
    case SIG_RMS_NORM:
        if (other_tensor(v[1], a, &b, 1, e->name) < 0 || (v[2] && double_arg(v[2], &d0, e->name, "eps") < 0)) goto fail;
        RUN(wgt_rms_norm(a->t, b ? b->t : NULL, d0));
        break;
    case SIG_GATHER:
        index_errors = 1;
        if (index_tensor(v[1], a, &b, 0, e->name) < 0) goto fail;
        RUN(wgt_gather_rows(a->t, b->t));
        break;
    case SIG_TAKE:
        index_errors = 1;
        if (index_tensor(v[1], a, &b, 0, e->name) < 0 || (v[2] && AXIS_ARG(v[2], i0) < 0)) goto fail;
        /* take and take_along_axis: f(a, indices, axis) */
        RUN(((wgt_tensor * (*)(wgt_tensor *, wgt_tensor *, int)) e->fn)(a->t, b->t, (int)i0));
        break;
    case SIG_SCATTER: {
        wgt_scatter_mode mode = WGT_SCATTER_REPLACE;
        index_errors = 1;
        if (v[4] && v[4] != Py_None) {
            const char *m = PyUnicode_Check(v[4]) ? PyUnicode_AsUTF8(v[4]) : NULL;
            if (m && !strcmp(m, "add")) mode = WGT_SCATTER_ADD;
            else if (!m || strcmp(m, "replace")) {
                PyErr_Format(PyExc_ValueError, "%s: mode must be 'replace' or 'add'", e->name);
                goto fail;
            }
        }
        if (AXIS_ARG(v[1], i0) < 0 || index_tensor(v[2], a, &b, 0, e->name) < 0 ||
            other_tensor(v[3], a, &c, 0, e->name) < 0)
            goto fail;
        RUN(wgt_scatter(a->t, (int)i0, b->t, c->t, mode));
        break;
    }
    case SIG_INDEX_ADD:
        index_errors = 1;
        if (AXIS_ARG(v[1], i0) < 0 || index_tensor(v[2], a, &b, 0, e->name) < 0 ||
            other_tensor(v[3], a, &c, 0, e->name) < 0)
            goto fail;
        RUN(wgt_index_add(a->t, (int)i0, b->t, c->t));
        break;
    case SIG_SET_ROWS: {
        wgt_status st;
        if (index_tensor(v[1], a, &b, 0, e->name) < 0 || other_tensor(v[2], a, &c, 0, e->name) < 0) goto fail;
        WGTPY_BEGIN_NOGIL(a->ctx)
        st = wgt_set_rows(a->t, b->t, c->t);
        WGTPY_END_NOGIL(a->ctx)
        out = st == WGT_OK ? Py_NewRef(Py_None) : wgtpy_raise(e->name, 1);
        goto done;
    }
    case SIG_ONE_HOT:
        index_errors = 1;
        dtype = WGT_F32;
        if (int_arg(v[1], &i0, INT64_MIN, INT64_MAX, e->name, "classes") < 0 ||
            (v[2] && v[2] != Py_None && wgtpy_dtype_from_obj(v[2], &dtype) < 0))
            goto fail;
        RUN(wgt_one_hot(a->t, (int64_t)i0, dtype));
        break;
    case SIG_ROPE:
        if (index_tensor(v[1], a, &b, 1, e->name) < 0 || (v[2] && double_arg(v[2], &d0, e->name, "base") < 0)) goto fail;
        RUN(wgt_rope(a->t, b ? b->t : NULL, d0));
        break;
    case SIG_ATTENTION: {
        int causal = PyObject_IsTrue(v[3]);
        if (causal < 0 || other_tensor(v[1], a, &b, 0, e->name) < 0 || other_tensor(v[2], a, &c, 0, e->name) < 0 ||
            (v[4] && double_arg(v[4], &d1, e->name, "scale") < 0))
            goto fail;
        RUN(wgt_attention(a->t, b->t, c->t, causal, d1));
        break;
    }
    case SIG_ATTENTION_PREFIX: {
        TensorObject *n = NULL;
        if (other_tensor(v[1], a, &b, 0, e->name) < 0 || other_tensor(v[2], a, &c, 0, e->name) < 0 ||
            other_tensor(v[3], a, &n, 0, e->name) < 0 || (v[4] && double_arg(v[4], &d1, e->name, "scale") < 0)) {
            Py_XDECREF(n);
            goto fail;
        }
        RUN(wgt_attention_prefix(a->t, b->t, c->t, n->t, d1));
        Py_DECREF(n);
        break;
    }
    case SIG_TENSORDOT: {
        int given, xb[WGT_MAX_DIMS];
        if (other_tensor(v[1], a, &b, 0, e->name) < 0 || (naxes = tensordot_axes(v[2], axes, xb, &given, e->name)) < 0)
            goto fail;
        RUN(wgt_tensordot(a->t, b->t, naxes, given ? axes : NULL, given ? xb : NULL));
        break;
    }
    case SIG_UPPER: {
        int up = v[1] ? PyObject_IsTrue(v[1]) : 0;
        if (up < 0) goto fail;
        RUN(((axis_fn)e->fn)(a->t, up));
        break;
    }
    case SIG_VNORM: {
        int k = PyObject_IsTrue(v[2]);
        d0 = 2;
        if (k < 0 || (naxes = wgtpy_axes_arg(v[1], axes, e->name)) < 0 || (v[3] && double_arg(v[3], &d0, e->name, "ord") < 0))
            goto fail;
        RUN(wgt_linalg_vector_norm(a->t, d0, naxes, axes, k));
        break;
    }
    case SIG_MNORM: {
        int k = PyObject_IsTrue(v[1]);
        PyObject *o = v[2] && !PyUnicode_Check(v[2]) ? PyObject_Str(v[2]) : (v[2] ? Py_NewRef(v[2]) : NULL);
        const char *ord = o ? PyUnicode_AsUTF8(o) : "fro";
        if (k < 0 || !ord) {
            Py_XDECREF(o);
            goto fail;
        }
        RUN(wgt_linalg_matrix_norm(a->t, ord, k));
        Py_XDECREF(o);
        break;
    }
    case SIG_VECDOT:
        if (other_tensor(v[1], a, &b, 0, e->name) < 0 || (v[2] && AXIS_ARG(v[2], i0) < 0)) goto fail;
        if (!v[2]) i0 = -1;
        RUN(((binary_axis_fn)e->fn)(a->t, b->t, (int)i0)); /* vecdot, linalg cross */
        break;
    case SIG_SORT:
    case SIG_TOPK: {
        int flag = e->sig == SIG_TOPK; /* topk: largest by default; sort: ascending */
        i0 = -1;
        if (e->sig == SIG_TOPK && int_arg(v[1], &i1, 0, INT64_MAX, e->name, "k") < 0) goto fail;
        PyObject *axis_o = v[e->sig == SIG_TOPK ? 2 : 1], *flag_o = v[e->sig == SIG_TOPK ? 3 : 2];
        if ((axis_o && AXIS_ARG(axis_o, i0) < 0) || (flag_o && (flag = PyObject_IsTrue(flag_o)) < 0)) goto fail;
        if (e->sig == SIG_TOPK) {
            out = wgtpy_topk(e, a, (int64_t)i1, (int)i0, flag);
            goto done;
        }
        RUN(((arg_fn)e->fn)(a->t, (int)i0, flag));
        break;
    }
    case SIG_SEARCH: {
        int right = v[2] ? PyObject_IsTrue(v[2]) : 0;
        if (right < 0 || other_tensor(v[1], a, &b, 0, e->name) < 0) goto fail;
        RUN(wgt_searchsorted(a->t, b->t, right));
        break;
    }
    case SIG_UNIQUE: out = wgtpy_unique(e, a); goto done;
    case SIG_NONZERO: out = wgtpy_nonzero(e, a); goto done;
    case SIG_LINALG_MULTI: {
        int flag = v[1] ? PyObject_IsTrue(v[1]) : 0;
        if (flag < 0) goto fail;
        out = wgtpy_linalg_multi(e, a, flag);
        goto done;
    }
    default:
        PyErr_Format(PyExc_RuntimeError, "%s: signature kind %d has no caller", e->name, (int)e->sig);
        goto fail;
    }
    out = wgtpy_wrap(r, a->ctx, e->name, index_errors);
    goto done;
fail:
    out = NULL;
done:
    Py_XDECREF(a);
    Py_XDECREF(b);
    Py_XDECREF(c);
    return out;
}

TensorObject *wgtpy_first_tensor(PyObject *o, const char *fn) { return first_tensor(o, fn); }
int wgtpy_other_tensor(PyObject *o, TensorObject *a, TensorObject **out, int optional, const char *fn) {
    return other_tensor(o, a, out, optional, fn);
}
int wgtpy_int_arg(PyObject *o, long long *out, long long lo, long long hi, const char *fn, const char *what) {
    return int_arg(o, out, lo, hi, fn, what);
}
