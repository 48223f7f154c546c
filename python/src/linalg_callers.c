/*
 * The callers of the decompositions that hand back several tensors (qr, slogdet, svd, eigh):
 * one C call with the context locked, a tuple of the results; on failure the C call hands back
 * nothing and its error becomes the exception. wgtensor/linalg.py names the tuples' members as
 * the array API does (QRResult, SlogdetResult, SVDResult, EighResult).
 */
#include "ops.h"

PyObject *wgtpy_linalg_multi(const op_entry *e, TensorObject *a, int flag) {
    wgt_tensor *t[3] = {NULL, NULL, NULL};
    wgt_status st;
    int n = 2;
    WGTPY_LOCK(a->ctx);
    if (e->fn == (void (*)(void))wgt_linalg_qr) {
        st = wgt_linalg_qr(a->t, flag, &t[0], &t[1]);
    } else if (e->fn == (void (*)(void))wgt_linalg_slogdet) {
        st = wgt_linalg_slogdet(a->t, &t[0], &t[1]);
    } else if (e->fn == (void (*)(void))wgt_linalg_svd) {
        st = wgt_linalg_svd(a->t, flag, &t[0], &t[1], &t[2]);
        n = 3;
    } else {
        st = wgt_linalg_eigh(a->t, &t[0], &t[1]);
    }
    WGTPY_UNLOCK(a->ctx);
    return st != WGT_OK ? wgtpy_raise(e->name, 0) : wgtpy_tuple_of(e, a, n, t);
}
