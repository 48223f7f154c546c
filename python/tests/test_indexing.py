"""Indexing against NumPy: basic indices as views, one integer array (gather), boolean masks,
writes through t[key] = value and the in-place operators, which land in shared storage."""
import numpy as np
import pytest

import wgtensor as wt

A = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
KEYS = [
    1, -1, (0, 2), (2, -1, 4), (slice(None, None, -1),), (Ellipsis, 1), (None, 0, slice(1, 3)), (Ellipsis, None),
    (slice(3, None, -2), -1), (slice(-2, None), slice(None, 1, -1)), (slice(5, 9),), (slice(None), [0, 2]),
    ([2, 0, -1],), (1, slice(None, None, -2), [4, 0]), (1, [0, 2]), (slice(None), 1, [0, 4]),
    ([[0, 1], [2, 0]],), (slice(None), slice(None), [[0, 1], [2, 0]]), (np.array([1, 1]), Ellipsis, 0),
]


@pytest.mark.parametrize("key", KEYS, ids=[repr(k) for k in KEYS])
def test_getitem_matches_numpy(ctx, key):
    np.testing.assert_array_equal(wt.asarray(A)[key].numpy(), A[key])


def test_basic_indices_are_views_sharing_storage(ctx):
    t = wt.asarray(A)
    v = t[1, ::-1]
    assert v.shape == (4, 5) and v.strides == A[1, ::-1].strides
    v[0] = -5  # writes the storage t shares
    b = A.copy()
    b[1, -1] = -5
    np.testing.assert_array_equal(t.numpy(), b)


def test_masks_select(ctx):
    t = wt.asarray(A)
    np.testing.assert_array_equal(t[t > 30].numpy(), A[A > 30])
    np.testing.assert_array_equal(t[0][t[0] > 3].numpy(), A[0][A[0] > 3])
    m = A[0, :, 0] > 5
    np.testing.assert_array_equal(t[:, m].numpy(), A[:, m])
    np.testing.assert_array_equal(t[:, m.tolist()].numpy(), A[:, m])
    assert (t > 30).dtype == wt.bool and wt.arange(3).dtype != wt.bool
    # A uint32 tensor that is not a mask gathers.
    np.testing.assert_array_equal(t[wt.asarray([0, 2], dtype=wt.uint32)].numpy(), A[[0, 2]])


def test_setitem_matches_numpy(ctx):
    b, u = A.copy(), wt.asarray(A)
    writes = [
        (0, 1), ((1, slice(None, None, -2)), np.arange(5, dtype=np.float32)), ((2, [0, 3]), 7),
        ((slice(None), slice(None), [1]), 9), ((Ellipsis, -1), np.arange(4, dtype=np.float32)),
        ((1, 2, 3), 0.5), ((slice(None), [2, 0], 1), np.array([[1.0, 2.0]] * 3, np.float32)),
    ]
    for key, value in writes:
        u[key] = value
        b[key] = value
        np.testing.assert_array_equal(u.numpy(), b, err_msg=repr(key))
    u[u > 50] = -1
    b[b > 50] = -1
    np.testing.assert_array_equal(u.numpy(), b)


def test_inplace_operators_write_through_views(ctx):
    b, u = A.copy(), wt.asarray(A)
    v = u[1]
    v += 100
    b[1] += 100
    w = u[:, ::2]
    w *= 2
    b[:, ::2] *= 2
    np.testing.assert_array_equal(u.numpy(), b)
    i = wt.arange(4)
    j = i
    i *= 3
    assert j is i and j.tolist() == [0, 3, 6, 9]
    i //= 2
    i -= 1
    i %= 3
    assert i.tolist() == (((np.arange(4) * 3) // 2 - 1) % 3).tolist()
    f = wt.ones((2, 2))
    f @= wt.eye(2) * 3
    f /= 3
    f **= 2
    assert f.tolist() == [[1, 1], [1, 1]]


def test_indexing_errors(ctx):
    t = wt.asarray(A)
    with pytest.raises(IndexError, match="out of bounds"):
        t[3]
    with pytest.raises(IndexError, match="out of bounds"):
        t[:, [0, 4]]
    with pytest.raises(IndexError, match="too many indices"):
        t[0, 0, 0, 0]
    with pytest.raises(IndexError, match="one integer array"):
        t[[0, 1], [0, 1]]
    with pytest.raises(IndexError, match="single ellipsis"):
        t[..., ...]
    with pytest.raises(IndexError):
        t["a"]
    with pytest.raises(IndexError):
        t[1.5]
    with pytest.raises(IndexError, match="does not match"):
        t[np.ones(4, bool)]
    with pytest.raises(IndexError):  # a device index out of range, checked by the library
        t[wt.asarray([5])].numpy()
    i = wt.arange(4)
    with pytest.raises(TypeError, match="cannot be written back"):
        i += 0.5
    with pytest.raises(ValueError, match="does not fit"):
        x = wt.ones(3)
        x += wt.ones((2, 3))
    with pytest.raises(TypeError, match="cannot write"):
        i[0] = wt.ones(())
    with pytest.raises((TypeError, ValueError)):
        i[0] = 2.5
