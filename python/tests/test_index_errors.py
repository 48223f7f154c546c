"""An index out of range is an IndexError wherever it surfaces, on both backends: at the op
when its values are on the host, and at the read or sync that reports a check made on the
device (indices computed by pending work, or written straight to the device buffer); other
invalid arguments at a read stay ValueError."""
import numpy as np
import pytest

import wgtensor as wt


def pending_bad_indices(ctx):
    """take() with indices [4, 3] that an argmax still has to compute: checked on the device."""
    table = wt.asarray(np.arange(12, dtype=np.float32).reshape(4, 3), ctx=ctx)
    x = wt.asarray(np.array([[0, 9, 1], [5, 0, 0]], np.float32), ctx=ctx)
    return wt.take(table, wt.argmax(x, axis=1) + 3, axis=0)


def test_late_index_error_at_read(ctx):
    g = pending_bad_indices(ctx)
    with pytest.raises(IndexError, match="index 4 at position \\[0\\] of indices is out of range"):
        g.numpy()
    with pytest.raises(IndexError):  # the result stays failed
        (g * 2).numpy()


def test_late_index_error_at_async_read_and_sync(ctx):
    with pytest.raises(IndexError, match="of indices is out of range"):
        pending_bad_indices(ctx).numpy_async().result()
    g = pending_bad_indices(ctx)  # kept: work whose result nobody can read is dropped
    with pytest.raises(IndexError, match="of indices is out of range"):
        ctx.sync()
    del g


def test_immediate_index_error_and_other_errors(ctx):
    table = wt.asarray(np.zeros((4, 3), np.float32), ctx=ctx)
    idx = wt.asarray(np.array([1, 2], np.int32), ctx=ctx)
    idx.numpy()  # its values are on the host now: checked at the call
    bad = idx + 5
    bad.numpy()
    with pytest.raises(IndexError, match="of indices is out of range"):
        wt.take(table, bad, axis=0)
    with pytest.raises(ValueError) as e:  # not an index: a shape that does not fit
        wt.reshape(table, (5, 5))
    assert not isinstance(e.value, IndexError)
