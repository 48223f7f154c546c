"""meshgrid and broadcast_arrays: several outputs, each a view (reshape and broadcast_to),
so they are written here over those ops, whose gradients they inherit."""
from . import _core


def broadcast_arrays(*tensors):
    """NumPy's broadcast_arrays: stride-0 views of the tensors at their common shape."""
    ts = list(tensors)
    shape = ()
    for t in ts:
        shape = _broadcast_shape(shape, tuple(t.shape))
    return [_core.broadcast_to(t, shape) for t in ts]


def _broadcast_shape(a, b):
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    out = []
    for x, y in zip(a, b):
        if x != y and x != 1 and y != 1:
            raise ValueError("broadcast_arrays: shapes %s and %s do not broadcast" % (a, b))
        out.append(y if x == 1 else x)
    return tuple(out)


def meshgrid(*xs, indexing="xy"):
    """NumPy's meshgrid of 1-D tensors as views: indexing 'xy' (the first two axes swapped,
    as for plotting) or 'ij' (matrix order)."""
    if indexing not in ("xy", "ij"):
        raise ValueError("meshgrid: indexing must be 'xy' or 'ij', not %r" % (indexing,))
    for x in xs:
        if x.ndim != 1:
            raise ValueError("meshgrid: the inputs must be 1-D (got shape %s)" % (tuple(x.shape),))
    n = len(xs)
    lengths = [x.shape[0] for x in xs]
    if indexing == "xy" and n >= 2:
        lengths[0], lengths[1] = lengths[1], lengths[0]
    out = []
    for i, x in enumerate(xs):
        at = i if indexing == "ij" or n < 2 or i > 1 else 1 - i
        shape = [1] * n
        shape[at] = x.shape[0]
        out.append(_core.broadcast_to(_core.reshape(x, tuple(shape)), tuple(lengths)))
    return out
