/*
 * Shared declarations of the extension module wgtensor._core: the Context and Tensor
 * objects, the error mapping, dtype objects and conversions. Each .c file implements one
 * concept (module.c, context.c, tensor.c, errors.c, convert.c, ops.c, ...).
 *
 * Threads: a wgt_context and its tensors must be used by one thread at a time (docs/errors.md),
 * yet waits on the device release the GIL. Every call into the library that touches a
 * context therefore holds that context's lock (WGTPY_LOCK / WGTPY_UNLOCK): uncontended it is
 * one atomic operation; contended, the waiting thread gives up the GIL while it waits. No
 * Python object is released while a lock is held, so a dealloc never re-enters it.
 */
#ifndef WGTPY_H
#define WGTPY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pythread.h>
#include <structmember.h>

#include "wgtensor.h"

typedef struct {
    PyObject_HEAD
    wgt_context *ctx;
    PyThread_type_lock lock;
    PyObject *weakrefs;
} CtxObject;

typedef struct {
    PyObject_HEAD
    wgt_tensor *t;
    CtxObject *ctx;     /* strong: the context outlives its tensors */
    Py_ssize_t exports; /* buffer views handed out over the host copy */
    PyObject *weakrefs;
} TensorObject;

/* Module state kept in globals: the module is single-phase and loaded once per process. */
extern PyTypeObject *wgtpy_Tensor;
extern PyTypeObject *wgtpy_Context;
extern PyObject *wgtpy_DeviceLostError, *wgtpy_UnavailableError, *wgtpy_BackendError;
/* Registered by the pure-Python layer (_core._register): the dtype objects indexed by
 * wgt_dtype, a dtype parser for anything else, asarray, and the default-context getter. */
#define WGTPY_NDTYPES 14 /* wgt_dtype's values 1 .. 14: f32 .. u32, q8_0, q4_0, bool .. bf16, i64, u64 */
extern PyObject *wgtpy_dtypes[WGTPY_NDTYPES + 1]; /* indexed by wgt_dtype */
extern PyObject *wgtpy_dtype_parser, *wgtpy_asarray_fn, *wgtpy_default_ctx_fn;

#define WGTPY_IS_TENSOR(o) PyObject_TypeCheck((o), wgtpy_Tensor)

void wgtpy_lock(CtxObject *c);
static inline void wgtpy_unlock(CtxObject *c) { PyThread_release_lock(c->lock); }
/* Calls into the library that may wait on the device (an eager op reads its input back, an
 * index check reads indices that live on the device, unique and nonzero size their outputs on
 * the host) run between WGTPY_BEGIN_NOGIL and WGTPY_END_NOGIL (one block, as
 * Py_BEGIN_ALLOW_THREADS): c's lock held and the GIL released, so that other Python threads go
 * on meanwhile. Nothing in between may touch Python objects or the Python allocator (PyMem_*). */
#define WGTPY_BEGIN_NOGIL(c)                                                                    \
    {                                                                                           \
        PyThreadState *wgtpy_saved_ = PyEval_SaveThread();                                      \
        PyThread_acquire_lock((c)->lock, WAIT_LOCK);
#define WGTPY_END_NOGIL(c)                                                                      \
        PyThread_release_lock((c)->lock);                                                       \
        PyEval_RestoreThread(wgtpy_saved_);                                                     \
    }
/* One statement so run. */
#define WGTPY_CALL_NOGIL(c, stmt)                                                               \
    do {                                                                                        \
        WGTPY_BEGIN_NOGIL(c)                                                                    \
        stmt;                                                                                   \
        WGTPY_END_NOGIL(c)                                                                      \
    } while (0)
#define WGTPY_LOCK(c) wgtpy_lock(c)
#define WGTPY_UNLOCK(c) wgtpy_unlock(c)

/* errors.c: raises the exception for the library's pending error (status and message) and
 * clears it; returns NULL. `fn` names the Python function when the library left no message.
 * index_errors: WGT_ERR_INVALID_ARGUMENT becomes IndexError (indexing ops). */
PyObject *wgtpy_raise(const char *fn, int index_errors);
int wgtpy_errors_init(PyObject *module);

/* context.c */
int wgtpy_context_init(PyObject *module);
CtxObject *wgtpy_default_context(void); /* new reference or NULL with an exception */
/* ctx from a `ctx=` argument: None gives the default; else a Context. New reference. */
CtxObject *wgtpy_context_arg(PyObject *o);

/* tensor.c: wraps t (stolen) with ctx; t NULL raises the pending error named after fn. */
PyObject *wgtpy_wrap(wgt_tensor *t, CtxObject *ctx, const char *fn, int index_errors);
int wgtpy_tensor_init(PyObject *module);
/* o itself (borrowed) when it is a Tensor, else NULL with a TypeError naming fn. */
TensorObject *wgtpy_tensor_arg(PyObject *o, const char *fn);

/* dtypes: object <-> wgt_dtype. A parse failure raises TypeError. */
int wgtpy_dtype_from_obj(PyObject *o, wgt_dtype *out);
PyObject *wgtpy_dtype_obj(wgt_dtype d); /* new reference */

/* convert.c: Python/NumPy data -> tensor. */
PyObject *wgtpy_from_buffer(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);
/* A tensor operand from a tensor, a Python scalar (taking like's dtype as NumPy 2 does with
 * weak scalars) or anything asarray takes. New reference; NULL with an exception. */
TensorObject *wgtpy_operand(PyObject *o, TensorObject *like);
/* An index operand from an array of 8-byte integers (NumPy's default int64, uint64): an i64
 * or u64 tensor on like's context (like NULL: the default one), keeping every bit where
 * asarray would make it i32, so an index past i32's range is the op's IndexError naming it.
 * NULL without an exception when o is something else (the caller converts it as usual). */
TensorObject *wgtpy_wide_index(PyObject *o, TensorObject *like);
/* Reads a shape (int or sequence of ints) into shape[]; returns ndim or -1 with ValueError. */
int wgtpy_shape_arg(PyObject *o, int64_t *shape, const char *fn);
/* Reads axes (None -> 0 axes, int, or sequence) into axes[]; returns the count or -1. */
int wgtpy_axes_arg(PyObject *o, int *axes, const char *fn);

/* ops.c */
int wgtpy_ops_init(PyObject *module);
/* Operators (+, -, ...) for the Tensor type. */
extern PyNumberMethods wgtpy_number_methods;
PyObject *wgtpy_richcompare(PyObject *a, PyObject *b, int op);

/* Functions the module exports beyond the op table, one list per file. */
extern PyMethodDef wgtpy_creation_methods[];
extern PyMethodDef wgtpy_context_methods[];
extern PyMethodDef wgtpy_convert_methods[];
extern PyMethodDef wgtpy_read_methods[];
extern PyMethodDef wgtpy_graph_methods[];

/* read.c, graph.c, dlpack.c, kernel.c: the types and methods each adds to the module and Tensor. */
int wgtpy_read_init(PyObject *module);
int wgtpy_graph_init(PyObject *module);
int wgtpy_dlpack_init(PyObject *module);
int wgtpy_kernel_init(PyObject *module);
/* autograd.c (gradients, optimizers, tensor files) and quant.c (block types, GGUF). */
int wgtpy_autograd_init(PyObject *module);
int wgtpy_quant_init(PyObject *module);
/* module.c: adds each function of a NULL-terminated list to the module. */
int wgtpy_add_functions(PyObject *module, PyMethodDef *defs);

#endif
