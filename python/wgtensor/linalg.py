"""wgtensor.linalg: the array API's linear-algebra extension (2024.12), all 23 functions.
The contractions run on the library's planned matmul (docs/ops.md, Contractions); inv, solve,
det, cholesky, qr, slogdet, svd, svdvals, eigh, eigvalsh, pinv and matrix_rank factorize f32
batches in double on the host through LAPACK (docs/ops.md, Dense factorizations), as do the
matrix norms 2, -2 and nuc; the other norms are composed from reductions, and matrix_power and
cross from matmul and elementwise ops."""

import math as _math
from collections import namedtuple as _namedtuple

from . import _core

QRResult = _namedtuple("QRResult", "Q R")
SlogdetResult = _namedtuple("SlogdetResult", "sign logabsdet")
SVDResult = _namedtuple("SVDResult", "U S Vh")
EighResult = _namedtuple("EighResult", "eigenvalues eigenvectors")
svdvals, eigvalsh = _core._linalg_svdvals, _core._linalg_eigvalsh


def qr(x, /, *, mode="reduced"):
    if mode not in ("reduced", "complete"):
        raise ValueError("qr: mode must be 'reduced' or 'complete', not %r" % (mode,))
    return QRResult(*_core._linalg_qr(x, mode == "complete"))


def slogdet(x, /):
    return SlogdetResult(*_core._linalg_slogdet(x))


def svd(x, /, *, full_matrices=True):
    return SVDResult(*_core._linalg_svd(x, bool(full_matrices)))


def eigh(x, /):
    return EighResult(*_core._linalg_eigh(x))


def _rtol(rtol, fn):
    """The C library's rtol: < 0 asks for the standard's default, max(M, N) * eps."""
    if rtol is None:
        return -1.0
    r = float(rtol)
    if not r >= 0:
        raise ValueError("%s: rtol must be a non-negative number, not %r" % (fn, rtol))
    return r


def pinv(x, /, *, rtol=None):
    return _core._linalg_pinv(x, _rtol(rtol, "pinv"))


def matrix_rank(x, /, *, rtol=None):
    return _core._linalg_matrix_rank(x, _rtol(rtol, "matrix_rank"))


def matrix_power(x, n, /):
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError("matrix_power: n must be an integer, not %s" % type(n).__name__)
    return _core._linalg_matrix_power(x, n)


def cross(x1, x2, /, *, axis=-1):
    return _core._linalg_cross(x1, x2, axis)

matmul, tensordot, vecdot, outer = _core.matmul, _core.tensordot, _core.vecdot, _core.outer
inv, solve, det, cholesky = _core._linalg_inv, _core._linalg_solve, _core._linalg_det, _core._linalg_cholesky


def diagonal(x, /, *, offset=0):
    return _core.diagonal(x, offset, -2, -1)


def trace(x, /, *, offset=0, dtype=None):
    r = _core.trace(x, offset, -2, -1)
    return r if dtype is None else _core.astype(r, dtype)


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
