"""Searching and sorting with the Python array API's signatures (docs/ops.md): sort, argsort,
top-k, searchsorted, the unique family, nonzero and argwhere. Sorts are stable whatever
`stable` says (the array API allows it); indices are int32. unique_* and nonzero wait for
their input: the sizes of their results are computed on the host."""
from collections import namedtuple as _namedtuple

from . import _core

UniqueAllResult = _namedtuple("UniqueAllResult", ["values", "indices", "inverse_indices", "counts"])
UniqueCountsResult = _namedtuple("UniqueCountsResult", ["values", "counts"])
UniqueInverseResult = _namedtuple("UniqueInverseResult", ["values", "inverse_indices"])
TopkResult = _namedtuple("TopkResult", ["values", "indices"])


def sort(x, /, *, axis=-1, descending=False, stable=True):
    """x sorted along axis; NaN sorts above +inf, -0.0 equals 0.0; equal elements keep their order."""
    return _core._sort(x, axis, descending)


def argsort(x, /, *, axis=-1, descending=False, stable=True):
    """The int32 positions that sort x along axis (stable in both directions)."""
    return _core._argsort(x, axis, descending)


def topk(x, k, /, axis=-1, largest=True, sorted=True):
    """The k largest (or smallest) elements along axis and their int32 indices, largest first;
    equal elements in index order (torch.topk's signature)."""
    return TopkResult(*_core._topk(x, k, axis, largest))


def searchsorted(x1, x2, /, *, side="left", sorter=None):
    """For each element of x2, the int32 position in the 1-D ascending x1 (or x1[sorter]) that
    keeps the order: before equal elements (side "left") or after them ("right")."""
    if side not in ("left", "right"):
        raise ValueError("searchsorted: side must be 'left' or 'right', not %r" % (side,))
    if sorter is not None:
        x1 = _core.take(x1, sorter)
    return _core._searchsorted(x1, x2, side == "right")


def unique_all(x, /):
    """The distinct elements of x (flattened, ascending; each NaN distinct, -0.0 equal to 0.0),
    the flat index of each one's first occurrence, the inverse (x's shape) and the counts."""
    return UniqueAllResult(*_core._unique(x))


def unique_counts(x, /):
    v, _, _, c = _core._unique(x)
    return UniqueCountsResult(v, c)


def unique_inverse(x, /):
    v, _, inv, _ = _core._unique(x)
    return UniqueInverseResult(v, inv)


def unique_values(x, /):
    return _core._unique(x)[0]


def nonzero(x, /):
    """A tuple of int32 index arrays, one per dimension, of x's nonzero elements (NaN is nonzero)."""
    return _core._nonzero(x)


argwhere = _core.argwhere
