"""meshgrid and broadcast_arrays with NumPy's signatures over the C functions (wgt_meshgrid,
wgt_broadcast_arrays), which give views with the gradients of reshape and broadcast_to."""
from . import _core


def broadcast_arrays(*tensors):
    """NumPy's broadcast_arrays: stride-0 views of the tensors at their common shape."""
    return _core._broadcast_arrays(list(tensors))


def meshgrid(*xs, indexing="xy"):
    """NumPy's meshgrid of 1-D tensors as views: indexing 'xy' (the first two axes swapped,
    as for plotting) or 'ij' (matrix order)."""
    if indexing not in ("xy", "ij"):
        raise ValueError("meshgrid: indexing must be 'xy' or 'ij', not %r" % (indexing,))
    return _core._meshgrid(list(xs), indexing == "ij")
