/*
 * The callers of the sorting ops that hand back several tensors (top-k, unique, nonzero): each
 * makes its one C call with the context locked and the GIL released (unique and nonzero wait
 * for their input) and returns a tuple; on failure the C call
 * hands back nothing and the error becomes the exception. The Python layer
 * (wgtensor/_sorting.py) names the tuple's members as the array API does.
 */
#include "ops.h"

PyObject *wgtpy_tuple_of(const op_entry *e, TensorObject *a, int n, wgt_tensor **t) {
    PyObject *out = PyTuple_New(n);
    for (int i = 0; i < n; i++) {
        PyObject *p = t[i] ? wgtpy_wrap(t[i], a->ctx, e->name, 0) : Py_NewRef(Py_None);
        if (out && p) PyTuple_SET_ITEM(out, i, p);
        else Py_XDECREF(p);
        if (!p) Py_CLEAR(out);
    }
    return out;
}

PyObject *wgtpy_topk(const op_entry *e, TensorObject *a, int64_t k, int axis, int largest) {
    wgt_tensor *t[2] = {NULL, NULL};
    wgt_status st;
    WGTPY_CALL_NOGIL(a->ctx, st = wgt_topk(a->t, k, axis, largest, 1, &t[0], &t[1]));
    return st != WGT_OK ? wgtpy_raise(e->name, 0) : wgtpy_tuple_of(e, a, 2, t);
}

PyObject *wgtpy_unique(const op_entry *e, TensorObject *a) {
    wgt_tensor *t[4] = {NULL, NULL, NULL, NULL};
    wgt_status st;
    WGTPY_CALL_NOGIL(a->ctx, st = wgt_unique(a->t, &t[0], &t[1], &t[2], &t[3])); /* waits for a */
    return st != WGT_OK ? wgtpy_raise(e->name, 0) : wgtpy_tuple_of(e, a, 4, t);
}

PyObject *wgtpy_nonzero(const op_entry *e, TensorObject *a) {
    wgt_tensor *t[WGT_MAX_DIMS] = {NULL};
    wgt_status st;
    int n = wgt_tensor_ndim(a->t);
    WGTPY_CALL_NOGIL(a->ctx, st = wgt_nonzero(a->t, t)); /* waits for a */
    return st != WGT_OK ? wgtpy_raise(e->name, 0) : wgtpy_tuple_of(e, a, n, t);
}
