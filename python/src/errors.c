/*
 * The library's statuses as Python exceptions. Each wgt_status maps to one exception type
 * (docs/python.md has the table); the message is wgt_last_error(), which already names the C
 * function and the values. The pending error is cleared once raised, so a later failure
 * never reports an old message.
 */
#include <string.h>

#include "wgtpy.h"

PyObject *wgtpy_DeviceLostError, *wgtpy_UnavailableError, *wgtpy_BackendError;

static PyObject *exception_for(wgt_status st, int index_errors) {
    switch (st) {
    case WGT_ERR_INVALID_ARGUMENT: return index_errors ? PyExc_IndexError : PyExc_ValueError;
    case WGT_ERR_SHAPE:
    case WGT_ERR_USAGE:
    case WGT_ERR_DESTROYED:
    case WGT_ERR_CONTEXT_MISMATCH:
    case WGT_ERR_LIMIT: return PyExc_ValueError;
    case WGT_ERR_DTYPE: return PyExc_TypeError;
    case WGT_ERR_OUT_OF_MEMORY: return PyExc_MemoryError;
    case WGT_ERR_UNAVAILABLE: return wgtpy_UnavailableError;
    case WGT_ERR_DEVICE_LOST: return wgtpy_DeviceLostError;
    case WGT_ERR_TIMEOUT: return PyExc_TimeoutError;
    case WGT_ERR_BACKEND: return wgtpy_BackendError;
    default: return PyExc_RuntimeError; /* WGT_ERR_INTERNAL, and a status this module predates */
    }
}

/* An index outside its range has WGT_ERR_INVALID_ARGUMENT and a message of one form
 * (docs/errors.md), whether the op found it or a check on the device did and the next read,
 * eval or sync reports it (then prefixed): IndexError wherever it surfaces. */
static int is_index_message(const char *msg) { return strstr(msg, " of indices is ") != NULL; }

PyObject *wgtpy_raise(const char *fn, int index_errors) {
    wgt_status st = wgt_last_status();
    const char *msg = wgt_last_error();
    if (st == WGT_OK || !msg[0]) {
        /* A failure without a pending error is a bug in the library or in this module. */
        PyErr_Format(PyExc_RuntimeError, "%s failed without an error message (status %s)", fn,
                     wgt_status_name(st));
    } else {
        PyObject *exc = exception_for(st, index_errors || is_index_message(msg));
        PyObject *value = Py_BuildValue("(s)", msg);
        if (value) {
            PyObject *e = PyObject_Call(exc, value, NULL);
            Py_DECREF(value);
            if (e) {
                /* The status's name travels with the exception for programs that branch on it. */
                PyObject *name = PyUnicode_FromString(wgt_status_name(st));
                if (name && PyObject_SetAttrString(e, "status", name) == 0) PyErr_SetObject(exc, e);
                Py_XDECREF(name);
                Py_DECREF(e);
            }
        }
    }
    wgt_clear_error();
    return NULL;
}

int wgtpy_errors_init(PyObject *module) {
    wgtpy_DeviceLostError = PyErr_NewExceptionWithDoc(
        "wgtensor.DeviceLostError", "The GPU device was lost; create a new Context.", PyExc_RuntimeError, NULL);
    wgtpy_UnavailableError = PyErr_NewExceptionWithDoc(
        "wgtensor.UnavailableError", "The backend or its library could not be loaded or started.",
        PyExc_RuntimeError, NULL);
    wgtpy_BackendError = PyErr_NewExceptionWithDoc(
        "wgtensor.BackendError", "The driver or shader compiler reported an error.", PyExc_RuntimeError, NULL);
    if (!wgtpy_DeviceLostError || !wgtpy_UnavailableError || !wgtpy_BackendError) return -1;
    if (PyModule_AddObjectRef(module, "DeviceLostError", wgtpy_DeviceLostError) < 0 ||
        PyModule_AddObjectRef(module, "UnavailableError", wgtpy_UnavailableError) < 0 ||
        PyModule_AddObjectRef(module, "BackendError", wgtpy_BackendError) < 0)
        return -1;
    return 0;
}
