/*
 * The callers of the decompositions that hand back several tensors (qr, slogdet, svd, eigh):
 * one C call with the context locked and the GIL released, a tuple of the results; on failure
 * the C call hands back nothing and its error becomes the exception. wgtensor/linalg.py names
 * the tuples' members as the array API does (QRResult, SlogdetResult, SVDResult, EighResult).
 */
#include "ops.h"

/* The one C call, run without the GIL: eager, it reads a back and factorizes it on the host. */
static wgt_status factorize(const op_entry *e, wgt_tensor *a, int flag, wgt_tensor **t, int *n) {
    *n = 2;
    if (e->fn == (void (*)(void))wgt_linalg_qr) return wgt_linalg_qr(a, flag, &t[0], &t[1]);
    if (e->fn == (void (*)(void))wgt_linalg_slogdet) return wgt_linalg_slogdet(a, &t[0], &t[1]);
    if (e->fn == (void (*)(void))wgt_linalg_svd) return *n = 3, wgt_linalg_svd(a, flag, &t[0], &t[1], &t[2]);
    return wgt_linalg_eigh(a, &t[0], &t[1]);
}

PyObject *wgtpy_linalg_multi(const op_entry *e, TensorObject *a, int flag) {
    wgt_tensor *t[3] = {NULL, NULL, NULL};
    wgt_status st;
    int n;
    WGTPY_CALL_NOGIL(a->ctx, st = factorize(e, a->t, flag, t, &n));
    return st != WGT_OK ? wgtpy_raise(e->name, 0) : wgtpy_tuple_of(e, a, n, t);
}
