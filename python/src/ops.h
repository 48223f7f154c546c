/* Shared by the op table (ops.c), its callers (op_callers.c) and the operators (operators.c). */
#ifndef WGTPY_OPS_H
#define WGTPY_OPS_H

#include "wgtpy.h"

typedef wgt_tensor *(*wgtpy_binary_fn)(wgt_tensor *, wgt_tensor *);

enum { BIN_TRUE_DIVIDE = 1 }; /* integer operands become float32 first (NumPy's true division) */

/* Both operands as tensors of one context and one type (see operators.c for the rules). */
int wgtpy_operands(PyObject *x, PyObject *y, TensorObject **a, TensorObject **b, const char *fn);
int wgtpy_promote(TensorObject **a, TensorObject **b, const char *fn);
PyObject *wgtpy_binary(wgtpy_binary_fn fn, PyObject *x, PyObject *y, const char *name, int flags);

/* How an op's Python arguments map onto its C function. */
typedef enum {
    SIG_UNARY,       /* f(a) */
    SIG_BINARY,      /* f(a, b) with NumPy's operand rules */
    SIG_TRUE_DIVIDE, /* f(a, b), integers made float32 first */
    SIG_SCALAR,      /* f(a, s: float) */
    SIG_UNARY_F,     /* f(a, param=def) */
    SIG_CLIP,        /* f(a, a_min, a_max, *, min, max): the array API's names too; None for no bound */
    SIG_REDUCE,      /* f(a, axis=None, keepdims=False) */
    SIG_REDUCE_DDOF, /* f(a, axis=None, ddof=0, keepdims=False, *, correction): correction is ddof */
    SIG_ARG,         /* f(a, axis=None, keepdims=False), None: over the flattened tensor */
    SIG_AXIS,        /* f(a, axis=def) */
    SIG_AXIS_FLAT,   /* f(a, axis=None), None: over the flattened tensor */
    SIG_CAST,        /* f(a, dtype, *, copy=True, device=None) (array_api_callers.c) */
    SIG_SWAP,        /* f(a, axis1, axis2) */
    SIG_DIAG,        /* f(a, k=0) */
    SIG_SHAPE,       /* f(a, shape) or a.f(*shape) */
    SIG_PERMUTE,     /* f(a, axes=None), None reverses */
    SIG_FLIP,        /* f(a, axis=None), None: every axis */
    SIG_SLICE,       /* f(a, axis, start, stop, step=1) */
    SIG_AS_STRIDED,  /* f(a, shape, strides, offset=0), strides in elements */
    SIG_JOIN,        /* f(tensors, axis=0): concat, stack; concat's None flattens each first */
    SIG_SPLIT,       /* f(a, sizes, axis=0) */
    SIG_PAD,         /* f(a, before, after, value=0) */
    SIG_WHERE,       /* f(cond, a, b) */
    SIG_LINEAR,      /* f(x, w, bias=None) */
    SIG_LAYER_NORM,  /* f(a, weight=None, bias=None, eps=def) */
    SIG_RMS_NORM,    /* f(a, weight=None, eps=def) */
    SIG_GATHER,      /* f(table, indices) */
    SIG_TAKE,        /* f(a, indices, axis=0) */
    SIG_SCATTER,     /* f(base, axis, index, src, mode="replace") */
    SIG_INDEX_ADD,   /* f(a, axis, indices, src) */
    SIG_MOVEAXIS,    /* f(a, source, destination): ints or sequences of them */
    SIG_ROLL,        /* f(a, shift, axis=None): ints or sequences; None: the flattened tensor */
    SIG_REPEAT,      /* f(a, repeats, axis=None): an int or one per entry; None: the flattened tensor */
    SIG_DIAGONAL,    /* f(a, offset=0, axis1=0, axis2=1) */
    SIG_MASKED_FILL, /* f(a, mask, value) */
    SIG_MASKED_SELECT, /* f(a, mask) */
    SIG_SET_ROWS,    /* f(dst, indices, rows) -> None, dst written in place */
    SIG_ONE_HOT,     /* f(indices, classes, dtype=float32) */
    SIG_ROPE,        /* f(x, positions=None, base=def) */
    SIG_ATTENTION,   /* f(q, k, v, causal=False, scale=0) */
    SIG_ATTENTION_PREFIX, /* f(q, k, v, count, scale=0) */
    SIG_CONV1D,      /* the convolutions and pooling (nn.c): torch.nn.functional's arguments */
    SIG_CONV2D,
    SIG_CONV_TRANSPOSE2D,
    SIG_MAX_POOL2D,
    SIG_AVG_POOL2D,
    SIG_ADAPTIVE_AVG_POOL2D,
    SIG_DROPOUT,     /* the layers of nn_layers.c: torch.nn.functional's arguments */
    SIG_BATCH_NORM,
    SIG_GROUP_NORM,
    SIG_INTERPOLATE,
    SIG_TENSORDOT,   /* f(a, b, axes=2), axes an int or two sequences of axes */
    SIG_VECDOT,      /* f(x1, x2, axis=-1) */
    SIG_EINSUM,      /* f(subscripts, *operands) */
    SIG_UPPER,       /* f(a, upper=False) */
    SIG_VNORM,       /* f(x, axis=None, keepdims=False, ord=2) */
    SIG_MNORM,       /* f(x, keepdims=False, ord="fro") */
    SIG_SORT,        /* f(a, axis=-1, descending=False) */
    SIG_TOPK,        /* f(a, k, axis=-1, largest=True) -> (values, indices) */
    SIG_SEARCH,      /* f(a, values, right=False) */
    SIG_UNIQUE,      /* f(a) -> (values, indices, inverse, counts) */
    SIG_NONZERO,     /* f(a) -> one tensor per dimension */
    SIG_REDUCE_DTYPE, /* f(a, axis=None, keepdims=False, *, dtype=None): a converted to dtype first */
    SIG_RESHAPE,     /* f(a, shape, *, copy=None) or a.f(*shape) (array_api_callers.c) */
    SIG_VIEWS,       /* f(tensors, flag=0) -> list: broadcast_arrays, meshgrid (flag: indexing 'ij') */
    SIG_LINALG_MULTI, /* f(a, flag=False) -> the decomposition's tensors (qr, slogdet, svd, eigh) */
} sig_kind;

typedef struct op_entry {
    const char *name;   /* the module function */
    const char *method; /* the Tensor method, or NULL */
    const char *c_name; /* the C function it calls: the binding test checks the header against these */
    void (*fn)(void);
    sig_kind sig;
    double def;         /* the default of a SIG_UNARY_F, SIG_AXIS or norm parameter */
    const char *param;  /* the name of a SIG_UNARY_F parameter */
} op_entry;

/* sort_callers.c: the sorting ops with several results, as tuples; a tuple of the n tensors in t
 * (NULL entries become None), which it takes over */
PyObject *wgtpy_tuple_of(const op_entry *e, TensorObject *a, int n, wgt_tensor **t);
PyObject *wgtpy_topk(const op_entry *e, TensorObject *a, int64_t k, int axis, int largest);
PyObject *wgtpy_unique(const op_entry *e, TensorObject *a);
PyObject *wgtpy_nonzero(const op_entry *e, TensorObject *a);

/* array_api_callers.c: the array API's keywords that take more than one C call */
PyObject *wgtpy_moveaxis(const op_entry *e, TensorObject *a, PyObject *source, PyObject *destination);
wgt_tensor *wgtpy_concat_flat(wgt_tensor *const *hs, int n);
PyObject *wgtpy_astype(const op_entry *e, TensorObject *a, PyObject *dtype_obj, PyObject *copy_obj, PyObject *device);
PyObject *wgtpy_reshape(const op_entry *e, TensorObject *a, PyObject *shape_obj, PyObject *copy_obj);
PyObject *wgtpy_views(const op_entry *e, PyObject *tensors, PyObject *flag);
/* linalg_callers.c: the decompositions with several results, as tuples; flag: qr's complete,
 * svd's full_matrices */
PyObject *wgtpy_linalg_multi(const op_entry *e, TensorObject *a, int flag);

PyObject *wgtpy_call_op(const op_entry *e, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);
/* op_signatures.c: a generic kind's argument names, their count, how many may come by
 * position, how many are required, and the defaults of the rest (into v; NULL: required). */
const char *const *wgtpy_sig_names(sig_kind sig);
int wgtpy_sig_count(sig_kind sig);
int wgtpy_sig_positional(sig_kind sig);
int wgtpy_sig_required(sig_kind sig);
void wgtpy_sig_defaults(sig_kind sig, PyObject **v);

/* nn.c: the callers of the convolution and pooling kinds (wgtpy_nn_sig), which
 * wgtpy_call_op hands its parsed arguments to; names and defaults come from wgtpy_nn_names. */
#define WGTPY_NN_MAXARGS 8
int wgtpy_nn_sig(sig_kind sig);
const char *const *wgtpy_nn_names(sig_kind sig, int *n, int *nreq);
PyObject *wgtpy_nn_call(const op_entry *e, PyObject **v);
/* nn_layers.c: the same for dropout, batch_norm, group_norm and interpolate (nn.c hands them on). */
int wgtpy_layers_sig(sig_kind sig);
const char *const *wgtpy_layers_names(sig_kind sig, int *n, int *nreq);
PyObject *wgtpy_layers_call(const op_entry *e, PyObject **v);
/* op_callers.c's argument helpers, for nn.c. */
TensorObject *wgtpy_first_tensor(PyObject *o, const char *fn);
int wgtpy_other_tensor(PyObject *o, TensorObject *a, TensorObject **out, int optional, const char *fn);
int wgtpy_int_arg(PyObject *o, long long *out, long long lo, long long hi, const char *fn, const char *what);

#endif
