"""Indexing (t[key], t[key] = value) and the in-place operators, from the C API's views and
its in-place write, wgt_set_rows.

Basic indices (ints, slices with any step, None, Ellipsis) give views that share storage, as
in NumPy. One integer array (a list, a NumPy array or an integer tensor) gathers along its
axis (wgt_index_select; negative indices from the host are wrapped first). A boolean mask (a
NumPy bool array, a list of bools, or a bool tensor such as a comparison gives) selects the
elements where it is true: its indices are found on the host (reading the mask), then
gathered. Writes go through wgt_set_rows over the first axis of the target view, so they
land in the shared storage; a masked write is where(mask, value, old) written back whole.
"""
import numpy as _np

from . import _core

__all__ = ["getitem", "setitem", "inplace"]


def _is_int(k):
    return isinstance(k, (int, _np.integer)) and not isinstance(k, (bool, _np.bool_))


def _is_mask(k):
    if isinstance(k, _core.Tensor):
        return k.dtype.name == "bool"
    if isinstance(k, _np.ndarray):
        return k.dtype == _np.bool_
    if isinstance(k, (list, tuple)) and k and all(isinstance(x, (bool, _np.bool_)) for x in _np.ravel(k)):
        return True
    return isinstance(k, (bool, _np.bool_))


def _is_array(k):
    return isinstance(k, (_core.Tensor, _np.ndarray, list))


def _normalise(t, key):
    """key as a list of entries with Ellipsis expanded; counts the axes each consumes."""
    if not isinstance(key, tuple):
        key = (key,)
    consumed = 0
    for k in key:
        if k is None or k is Ellipsis:
            continue
        consumed += _np.ndim(k.numpy() if isinstance(k, _core.Tensor) else k) if _is_mask(k) else 1
    if sum(k is Ellipsis for k in key) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if consumed > t.ndim:
        raise IndexError("too many indices for a tensor of %d dimensions: %d" % (t.ndim, consumed))
    out = []
    for k in key:
        if k is Ellipsis:
            out.extend([slice(None)] * (t.ndim - consumed))
        else:
            out.append(k)
    if not any(k is Ellipsis for k in key):
        out.extend([slice(None)] * (t.ndim - consumed))
    return out


def _slice(v, ax, s):
    n = v.shape[ax]
    start, stop, step = s.indices(n)
    if stop < 0:  # only with a negative step, meaning "through index 0"; the C API counts -1 from the end
        stop = -n - 1
    return _core.slice(v, ax, start, stop, step)


def _int_index(v, ax, i):
    n = v.shape[ax]
    i = int(i)
    if not -n <= i < n:
        raise IndexError("index %d is out of bounds for axis %d with size %d" % (i, ax, n))
    i %= n
    return _core._squeeze_axis(_core.slice(v, ax, i, i + 1, 1), ax)


def _host_indices(k, n, ax):
    """An integer index array from the host, wrapped and checked against n."""
    a = _np.asarray(k)
    if a.dtype.kind not in "iu":
        raise IndexError("arrays used as indices must be of integer (or boolean) type, not %s" % a.dtype)
    if a.size and (a.min() < -n or a.max() >= n):
        bad = a[(a < -n) | (a >= n)].flat[0]
        raise IndexError("index %d is out of bounds for axis %d with size %d" % (bad, ax, n))
    return _np.where(a < 0, a + n, a).astype(_np.int32)


def _mask_indices(v, ax, k):
    """The flat indices where mask k is true, over the axes ax.. it covers (host read)."""
    m = k.numpy() if isinstance(k, _core.Tensor) else _np.asarray(k)
    m = m.astype(bool)
    covered = v.shape[ax:ax + m.ndim]
    if m.shape != tuple(covered):
        raise IndexError("boolean index of shape %s does not match the indexed dimensions %s"
                         % (m.shape, tuple(covered)))
    return m, _np.flatnonzero(m).astype(_np.int32)


def _gather(v, ax, k):
    """v with the integer array or mask k applied at axis ax (ax is the array's axis in v: ints
    before it have removed theirs); returns (tensor, axes it adds)."""
    if _is_mask(k):
        m, idx = _mask_indices(v, ax, k)
        if m.ndim != 1:
            merged = v.shape[:ax] + (-1,) + v.shape[ax + m.ndim:]
            v = _core.reshape(v, merged)
        return _core.take(v, _core._from_buffer(idx, None, v.ctx), axis=ax), 1
    if isinstance(k, _core.Tensor):
        idx = k  # on the device: checked by the library (a negative index is an error there)
        shape = k.shape
    else:
        a = _host_indices(k, v.shape[ax], ax)
        shape = a.shape
        idx = _core._from_buffer(a, None, v.ctx)
    flat = _core.reshape(idx, (-1,)) if len(shape) != 1 else idx
    r = _core.take(v, flat, axis=ax)
    if len(shape) != 1:
        r = _core.reshape(r, v.shape[:ax] + tuple(shape) + v.shape[ax + 1:])
    return r, len(shape)


def _basic(t, key):
    """The view for the basic part of key, and the one array entry (axis, index) if any."""
    v, ax, array = t, 0, None
    for k in _normalise(t, key):
        if k is None:
            v = _core.expand_dims(v, ax)
            ax += 1
        elif isinstance(k, slice):
            v = _slice(v, ax, k)
            ax += 1
        elif _is_int(k) or (isinstance(k, _core.Tensor) and k.ndim == 0 and not _is_mask(k)):
            v = _int_index(v, ax, k)
        elif _is_array(k) or _is_mask(k):
            if array is not None:
                raise IndexError("wgtensor indexes with one integer array or mask at a time")
            array = (ax, k)
            ax += _np.ndim(k.numpy() if isinstance(k, _core.Tensor) else k) if _is_mask(k) else 1
        else:
            raise IndexError("only integers, slices, None, ..., integer arrays and boolean masks are valid "
                             "indices, not %s" % type(k).__name__)
    return v, array


def getitem(t, key):
    v, array = _basic(t, key)
    if array is None:
        return v
    ax, k = array
    if _is_mask(k) and isinstance(k, (bool, _np.bool_)):
        raise IndexError("a scalar boolean index is not supported")
    r, added = _gather(v, ax, k)
    # NumPy counts ints as advanced indices too: when they and the array are not side by side
    # (a slice between), the array's dimensions go first.
    keys = _normalise(t, key)
    advanced = [i for i, e in enumerate(keys) if _is_int(e) or e is k or
                (isinstance(e, _core.Tensor) and e.ndim == 0 and not _is_mask(e))]
    if ax and advanced[-1] - advanced[0] + 1 != len(advanced):
        order = list(range(ax, ax + added)) + [i for i in range(r.ndim) if not ax <= i < ax + added]
        r = _core.transpose(r, order)
    return r


def _write_whole(dst, value):
    """Writes value (broadcast to dst's shape, of dst's type) into the view dst, in place."""
    value = _core.broadcast_to(value, dst.shape)
    if dst.ndim == 0:
        dst, value = _core.expand_dims(dst, 0), _core.expand_dims(value, 0)
    rows = _core._from_buffer(_np.arange(dst.shape[0], dtype=_np.int32), None, dst.ctx)
    _core.set_rows(dst, rows, value)


def _value(t, value):
    from . import asarray
    v = asarray(value, ctx=t.ctx) if isinstance(value, _core.Tensor) else None
    if v is None:
        if isinstance(value, (int, float, bool)) and not isinstance(value, _np.ndarray):
            v = _core.full((), value, t.dtype, t.ctx)
        else:
            v = asarray(value, dtype=t.dtype, ctx=t.ctx)
    if v.dtype != t.dtype:
        raise TypeError("cannot write %s values into a %s tensor (cast with astype first)" % (v.dtype, t.dtype))
    return v


def setitem(t, key, value):
    v, array = _basic(t, key)
    val = _value(t, value)
    if array is None:
        _write_whole(v, val)
        return
    ax, k = array
    if _is_mask(k):
        m, _ = _mask_indices(v, ax, k)
        mshape = (1,) * ax + m.shape + (1,) * (v.ndim - ax - m.ndim)
        mask = _core._from_buffer(m.reshape(mshape).astype(_np.uint32), None, v.ctx)
        _write_whole(v, _core.where(mask, _core.broadcast_to(val, v.shape), v))
        return
    # Integer array: rows along its axis, moved to the front of a view of the same storage.
    if isinstance(k, _core.Tensor):
        idx = k
    else:
        idx = _core._from_buffer(_host_indices(k, v.shape[ax], ax), None, v.ctx)
    if idx.ndim != 1:
        raise IndexError("t[indices] = value takes a 1-D integer array (got %d dimensions)" % idx.ndim)
    dst = _core.swapaxes(v, 0, ax) if ax else v
    shape = list(v.shape)
    shape[ax] = idx.shape[0]
    rows = _core.broadcast_to(val, tuple(shape))
    if ax:
        rows = _core.swapaxes(rows, 0, ax)
    _core.set_rows(dst, idx, rows)


def inplace(op, name):
    """The in-place form of a binary operator: computes op(t, other) and writes it into t's
    storage (views included), which must keep t's type and shape, as NumPy requires."""
    def f(self, other):
        r = op(self, other)
        if r is NotImplemented:
            return r
        if r.dtype != self.dtype:
            raise TypeError("%s: the result is %s and cannot be written back into a %s tensor" % (name, r.dtype,
                                                                                                  self.dtype))
        if r.shape != self.shape:
            raise ValueError("%s: a result of shape %s does not fit the tensor's shape %s" % (name, r.shape,
                                                                                              self.shape))
        _write_whole(self, r)
        return self
    f.__name__ = name
    return f
