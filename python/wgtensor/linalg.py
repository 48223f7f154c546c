"""wgtensor.linalg: the array API's linear-algebra extension, as far as the C library has it.
The contractions run on the library's planned matmul (docs/ops.md, Contractions); the
factorizations (inv, solve, cholesky, qr, det) and norms are not in the C library yet."""

from . import _core

matmul, tensordot, vecdot, outer = _core.matmul, _core.tensordot, _core.vecdot, _core.outer


def matrix_transpose(x):
    return _core.swapaxes(x, -1, -2)
