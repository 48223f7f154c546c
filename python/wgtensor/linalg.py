"""wgtensor.linalg: the array API's linear-algebra extension, as far as the C library has it.
The contractions run on the library's planned matmul (docs/ops.md, Contractions); inv, solve,
det and cholesky factorize f32 batches in double on the host through LAPACK (docs/ops.md,
Dense factorizations). Norms, qr and slogdet are not in the C library yet."""

from . import _core

matmul, tensordot, vecdot, outer = _core.matmul, _core.tensordot, _core.vecdot, _core.outer
inv, solve, det, cholesky = _core._linalg_inv, _core._linalg_solve, _core._linalg_det, _core._linalg_cholesky


def matrix_transpose(x):
    return _core.swapaxes(x, -1, -2)
