/*
 * The signatures of the op table's generic kinds (op_callers.c): each kind's argument names
 * (NumPy's where NumPy has the op), how many may be given by position and how many are
 * required, and the defaults of the rest.
 */
#include "ops.h"

const char *const *wgtpy_sig_names(sig_kind sig) {
    static const char *const unary[] = {"a"}, *const binary[] = {"a", "b"}, *const scalar[] = {"a", "s"};
    static const char *const clip[] = {"a", "a_min", "a_max", "min", "max"}, *const reduce[] = {"a", "axis", "keepdims"};
    static const char *const ddof[] = {"a", "axis", "ddof", "keepdims", "correction"}, *const axis[] = {"a", "axis"};
    static const char *const cast[] = {"a", "dtype", "copy", "device"}, *const swap[] = {"a", "axis1", "axis2"};
    static const char *const reduce_dtype[] = {"a", "axis", "keepdims", "dtype"}, *const reshape[] = {"a", "shape", "copy"};
    static const char *const views[] = {"tensors", "flag"};
    static const char *const diag[] = {"a", "k"}, *const shape[] = {"a", "shape"}, *const axes[] = {"a", "axes"};
    static const char *const slice[] = {"a", "axis", "start", "stop", "step"};
    static const char *const strided[] = {"a", "shape", "strides", "offset"}, *const join[] = {"tensors", "axis"};
    static const char *const split[] = {"a", "sizes", "axis"}, *const pad[] = {"a", "before", "after", "value"};
    static const char *const where[] = {"condition", "x", "y"}, *const linear[] = {"x", "weight", "bias"};
    static const char *const lnorm[] = {"a", "weight", "bias", "eps"}, *const rnorm[] = {"a", "weight", "eps"};
    static const char *const gather[] = {"table", "indices"}, *const take[] = {"a", "indices", "axis"};
    static const char *const set_rows[] = {"dst", "indices", "rows"};
    static const char *const scatter[] = {"base", "axis", "index", "src", "mode"};
    static const char *const index_add[] = {"a", "axis", "indices", "src"};
    static const char *const moveaxis[] = {"a", "source", "destination"}, *const roll[] = {"a", "shift", "axis"};
    static const char *const repeat[] = {"a", "repeats", "axis"}, *const mask[] = {"a", "mask", "value"};
    static const char *const diagonal[] = {"a", "offset", "axis1", "axis2"};
    static const char *const tdot[] = {"a", "b", "axes"}, *const vdot[] = {"x1", "x2", "axis"};
    static const char *const upper[] = {"a", "upper"}, *const vnorm[] = {"x", "axis", "keepdims", "ord"};
    static const char *const mnorm[] = {"x", "keepdims", "ord"};
    static const char *const one_hot[] = {"indices", "classes", "dtype"}, *const rope[] = {"x", "positions", "base"};
    static const char *const attention[] = {"q", "k", "v", "causal", "scale"};
    static const char *const attention_prefix[] = {"q", "k", "v", "count", "scale"};
    static const char *const sort[] = {"a", "axis", "descending"}, *const topk[] = {"a", "k", "axis", "largest"};
    static const char *const search[] = {"a", "values", "right"}, *const multi[] = {"a", "flag"};
    switch (sig) {
    case SIG_UNARY: return unary;
    case SIG_BINARY: case SIG_TRUE_DIVIDE: return binary;
    case SIG_SCALAR: return scalar;
    case SIG_UNARY_F: return NULL; /* built per entry below */
    case SIG_CLIP: return clip;
    case SIG_REDUCE: case SIG_ARG: return reduce;
    case SIG_REDUCE_DDOF: return ddof;
    case SIG_AXIS: case SIG_AXIS_FLAT: case SIG_FLIP: return axis;
    case SIG_CAST: return cast;
    case SIG_SWAP: return swap;
    case SIG_DIAG: return diag;
    case SIG_SHAPE: return shape;
    case SIG_PERMUTE: return axes;
    case SIG_SLICE: return slice;
    case SIG_AS_STRIDED: return strided;
    case SIG_JOIN: return join;
    case SIG_SPLIT: return split;
    case SIG_PAD: return pad;
    case SIG_WHERE: return where;
    case SIG_LINEAR: return linear;
    case SIG_LAYER_NORM: return lnorm;
    case SIG_RMS_NORM: return rnorm;
    case SIG_GATHER: return gather;
    case SIG_TAKE: return take;
    case SIG_SET_ROWS: return set_rows;
    case SIG_SCATTER: return scatter;
    case SIG_INDEX_ADD: return index_add;
    case SIG_MOVEAXIS: return moveaxis;
    case SIG_ROLL: return roll;
    case SIG_REPEAT: return repeat;
    case SIG_DIAGONAL: return diagonal;
    case SIG_MASKED_FILL: case SIG_MASKED_SELECT: return mask;
    case SIG_ONE_HOT: return one_hot;
    case SIG_ROPE: return rope;
    case SIG_ATTENTION: return attention;
    case SIG_ATTENTION_PREFIX: return attention_prefix;
    case SIG_CONV1D: case SIG_CONV2D: case SIG_CONV_TRANSPOSE2D: case SIG_MAX_POOL2D: case SIG_AVG_POOL2D:
    case SIG_ADAPTIVE_AVG_POOL2D: case SIG_DROPOUT: case SIG_BATCH_NORM: case SIG_GROUP_NORM: case SIG_INTERPOLATE:
        break; /* nn.c, nn_layers.c */
    case SIG_TENSORDOT: return tdot;
    case SIG_VECDOT: return vdot;
    case SIG_EINSUM: return NULL; /* variadic: einsum() parses its own arguments */
    case SIG_UPPER: return upper;
    case SIG_VNORM: return vnorm;
    case SIG_MNORM: return mnorm;
    case SIG_SORT: return sort;
    case SIG_TOPK: return topk;
    case SIG_SEARCH: return search;
    case SIG_UNIQUE: case SIG_NONZERO: return unary;
    case SIG_REDUCE_DTYPE: return reduce_dtype;
    case SIG_RESHAPE: return reshape;
    case SIG_VIEWS: return views;
    case SIG_LINALG_MULTI: return multi;
    }
    return unary;
}

int wgtpy_sig_count(sig_kind sig) {
    switch (sig) {
    case SIG_UNARY: case SIG_UNIQUE: case SIG_NONZERO: return 1;
    case SIG_BINARY: case SIG_TRUE_DIVIDE: case SIG_SCALAR: case SIG_UNARY_F: case SIG_AXIS: case SIG_AXIS_FLAT:
    case SIG_FLIP: case SIG_DIAG: case SIG_SHAPE: case SIG_PERMUTE: case SIG_JOIN: case SIG_GATHER:
    case SIG_MASKED_SELECT:
        return 2;
    case SIG_REDUCE: case SIG_ARG: case SIG_SWAP: case SIG_SPLIT: case SIG_WHERE: case SIG_LINEAR:
    case SIG_RMS_NORM: case SIG_TAKE: case SIG_SET_ROWS: case SIG_ONE_HOT: case SIG_ROPE: case SIG_MOVEAXIS:
    case SIG_ROLL: case SIG_REPEAT: case SIG_MASKED_FILL:
        return 3;
    case SIG_AS_STRIDED: case SIG_PAD: case SIG_LAYER_NORM: case SIG_INDEX_ADD: case SIG_DIAGONAL: case SIG_CAST:
        return 4;
    case SIG_SLICE: case SIG_ATTENTION: case SIG_ATTENTION_PREFIX: case SIG_SCATTER: case SIG_CLIP:
    case SIG_REDUCE_DDOF:
        return 5;
    case SIG_CONV1D: case SIG_CONV2D: case SIG_CONV_TRANSPOSE2D: case SIG_MAX_POOL2D: case SIG_AVG_POOL2D:
    case SIG_ADAPTIVE_AVG_POOL2D: case SIG_DROPOUT: case SIG_BATCH_NORM: case SIG_GROUP_NORM: case SIG_INTERPOLATE:
        break; /* nn.c, nn_layers.c */
    case SIG_TENSORDOT: case SIG_VECDOT: return 3;
    case SIG_EINSUM: return 0;
    case SIG_UPPER: return 2;
    case SIG_VNORM: return 4;
    case SIG_MNORM: return 3;
    case SIG_SORT: case SIG_SEARCH: return 3;
    case SIG_TOPK: return 4;
    case SIG_REDUCE_DTYPE: return 4;
    case SIG_RESHAPE: return 3;
    case SIG_VIEWS: return 2;
    case SIG_LINALG_MULTI: return 2;
    }
    return 1;
}

/* The names that may come positionally: the rest are the array API's keyword-only ones. */
int wgtpy_sig_positional(sig_kind sig) {
    switch (sig) {
    case SIG_CLIP: case SIG_REDUCE_DTYPE: return 3;
    case SIG_REDUCE_DDOF: return 4;
    case SIG_CAST: case SIG_RESHAPE: return 2;
    default: return wgtpy_sig_count(sig);
    }
}

int wgtpy_sig_required(sig_kind sig) {
    switch (sig) {
    case SIG_BINARY: case SIG_TRUE_DIVIDE: case SIG_SCALAR: case SIG_CAST: case SIG_SHAPE: case SIG_RESHAPE: case SIG_SPLIT:
    case SIG_LINEAR: case SIG_GATHER: case SIG_TAKE: case SIG_ONE_HOT: case SIG_ROLL: case SIG_REPEAT:
    case SIG_MASKED_SELECT:
    case SIG_TENSORDOT: case SIG_VECDOT:
    case SIG_TOPK: case SIG_SEARCH:
        return 2;
    case SIG_SWAP: case SIG_AS_STRIDED: case SIG_PAD: case SIG_WHERE: case SIG_SET_ROWS: case SIG_ATTENTION:
    case SIG_MOVEAXIS: case SIG_MASKED_FILL:
        return 3;
    case SIG_SLICE: case SIG_SCATTER: case SIG_INDEX_ADD: case SIG_ATTENTION_PREFIX: return 4;
    default: return 1;
    }
}

/* Defaults of optional arguments (NULL: required). */
void wgtpy_sig_defaults(sig_kind sig, PyObject **v) {
    switch (sig) {
    case SIG_CLIP: v[1] = v[2] = Py_None; break;
    case SIG_REDUCE: case SIG_ARG: v[1] = Py_None, v[2] = Py_False; break;
    case SIG_REDUCE_DTYPE: v[1] = Py_None, v[2] = Py_False, v[3] = Py_None; break;
    case SIG_CAST: v[2] = Py_True, v[3] = Py_None; break;
    case SIG_RESHAPE: v[2] = Py_None; break;
    case SIG_REDUCE_DDOF: v[1] = Py_None, v[3] = Py_False; break;
    case SIG_AXIS_FLAT: case SIG_FLIP: case SIG_PERMUTE: v[1] = Py_None; break;
    case SIG_LINEAR: v[2] = Py_None; break;
    case SIG_LAYER_NORM: v[1] = v[2] = Py_None; break;
    case SIG_RMS_NORM: case SIG_ROPE: v[1] = Py_None; break;
    case SIG_ATTENTION: v[3] = Py_False; break;
    case SIG_ROLL: case SIG_REPEAT: v[2] = Py_None; break;
    case SIG_VNORM: v[1] = Py_None, v[2] = Py_False; break;
    case SIG_MNORM: v[1] = Py_False; break;
    default: break;
    }
}
