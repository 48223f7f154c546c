"""wgtensor.linalg: the array API's linear-algebra extension, as far as the C library has it.
The contractions run on the library's planned matmul (docs/ops.md, Contractions); inv, solve,
det and cholesky factorize f32 batches in double on the host through LAPACK (docs/ops.md,
Dense factorizations); the norms are composed from reductions. qr, slogdet and the matrix
norms that need singular values (2, -2, nuc) are not in the C library yet."""

import math as _math

from . import _core

matmul, tensordot, vecdot, outer = _core.matmul, _core.tensordot, _core.vecdot, _core.outer
inv, solve, det, cholesky = _core._linalg_inv, _core._linalg_solve, _core._linalg_det, _core._linalg_cholesky


def matrix_transpose(x):
    return _core.swapaxes(x, -1, -2)


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    return _core._linalg_vector_norm(x, axis, keepdims, ord)


def _matrix_ord(ord):
    if isinstance(ord, str):
        return ord
    if _math.isinf(ord):
        return "inf" if ord > 0 else "-inf"
    return str(int(ord)) if float(ord).is_integer() else str(ord)


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    return _core._linalg_matrix_norm(x, keepdims, _matrix_ord(ord))


def norm(x, ord=None, axis=None, keepdims=False):
    """numpy.linalg.norm: a vector norm, or a matrix norm over two axes (axis a pair, or a 2-D x
    with ord given)."""
    from . import asarray  # the package's, which this module is imported by

    x = asarray(x)
    pair = axis if isinstance(axis, (tuple, list)) and len(axis) == 2 else None
    if pair is None and axis is None and ord is not None and x.ndim == 2:
        pair = (0, 1)
    if pair is None:
        return vector_norm(x, axis=axis, keepdims=keepdims, ord=2 if ord is None else ord)
    nd = x.ndim
    a0, a1 = pair[0] % nd, pair[1] % nd
    rest = [d for d in range(nd) if d not in (a0, a1)]
    r = matrix_norm(_core.transpose(x, rest + [a0, a1]), keepdims=keepdims, ord="fro" if ord is None else ord)
    if keepdims:  # the kept axes go back where they were
        inv_perm = [0] * nd
        for i, d in enumerate(rest + [a0, a1]):
            inv_perm[d] = i
        r = _core.transpose(r, inv_perm)
    return r
