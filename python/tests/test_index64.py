"""NumPy's default integer (int64) and uint64 as index arrays: passed straight to the indexing
functions (kept 64-bit, not narrowed to int32 by asarray) or as int64 / uint64 tensors, they
give NumPy's results; an index past int32's range or past 2^32 is the op's IndexError naming
it (ValueError at the read for indices living on the device), never a conversion error and
never wrapped into range."""
import numpy as np
import pytest

import wgtensor as wt

A = (np.arange(60, dtype=np.float32).reshape(3, 4, 5) * 0.5 - 7).astype(np.float32)


def index_forms(idx):
    """The same indices as a NumPy int64 array, an int64 tensor and a uint64 tensor."""
    return [idx.astype(np.int64), wt.asarray(idx, dtype=wt.int64), wt.asarray(idx, dtype=wt.uint64)]


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_take_and_take_along_axis(ctx, axis):
    rng = np.random.default_rng(3)
    idx = rng.integers(0, A.shape[axis], size=(2, 3))
    along = rng.integers(0, A.shape[axis], size=tuple(6 if d == axis % 3 else s for d, s in enumerate(A.shape)))
    for form in index_forms(idx):
        np.testing.assert_array_equal(wt.take(wt.asarray(A), form, axis=axis).numpy(), np.take(A, idx, axis=axis))
    for form in index_forms(along):
        np.testing.assert_array_equal(wt.take_along_axis(wt.asarray(A), form, axis).numpy(),
                                      np.take_along_axis(A, along, axis))


def test_gather_scatter_index_add_set_rows_one_hot(ctx):
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    index = np.array([[1, 0, 3, 1, 2, 3], [1, 2, 0, 0, 2, 3]])
    src = np.arange(12, dtype=np.float32).reshape(2, 6) + 100
    want_add, want_rep = base.astype(np.float64), base.copy()
    for i in range(2):
        for j in range(6):
            want_add[index[i, j], j] += src[i, j]
            want_rep[index[i, j], j] = src[i, j]  # later writes win
    rows = np.array([3, 0, 3, 1])
    want_ia = base.astype(np.float64)
    np.add.at(want_ia, rows, np.ones((4, 6)))
    for f_index, f_rows in zip(index_forms(index), index_forms(rows)):
        t = wt.asarray(base)
        np.testing.assert_array_equal(wt.gather_rows(t, f_rows).numpy(), base[rows])
        np.testing.assert_array_equal(wt.scatter(t, 0, f_index, wt.asarray(src), mode="add").numpy(),
                                      want_add.astype(np.float32))
        np.testing.assert_array_equal(wt.scatter(t, 0, f_index, wt.asarray(src)).numpy(), want_rep)
        np.testing.assert_array_equal(wt.index_add(t, 0, f_rows, wt.asarray(np.ones((4, 6), np.float32))).numpy(),
                                      want_ia.astype(np.float32))
        np.testing.assert_array_equal(wt.one_hot(f_rows, 5).numpy(), np.eye(5, dtype=np.float32)[rows])
        dst = wt.asarray(base)
        wt.set_rows(dst, f_rows[:2], wt.asarray(src[:, :6]))
        want = base.copy()
        want[rows[:2]] = src
        np.testing.assert_array_equal(dst.numpy(), want)


def test_cross_entropy_int64_targets(ctx):
    rng = np.random.default_rng(5)
    logits = rng.standard_normal((6, 4)).astype(np.float32)
    targets = rng.integers(0, 4, size=6)
    want = wt.cross_entropy(wt.asarray(logits), wt.asarray(targets.astype(np.int32))).numpy()
    for form in index_forms(targets):
        assert wt.cross_entropy(wt.asarray(logits), form).numpy() == want
    ref = logits.astype(np.float64) - np.log(np.exp(logits.astype(np.float64)).sum(-1, keepdims=True))
    assert abs(float(want) + ref[np.arange(6), targets].mean()) < 1e-6


def test_getitem_and_setitem_with_int64_keys(ctx):
    i = np.array([2, 0, -1], dtype=np.int64)
    np.testing.assert_array_equal(wt.asarray(A)[i].numpy(), A[i])
    np.testing.assert_array_equal(wt.asarray(A)[:, np.array([3, 1], dtype=np.int64)].numpy(), A[:, [3, 1]])
    key = wt.asarray(np.array([[2, 0], [1, 1]]), dtype=wt.int64)  # a tensor key: checked by the library
    np.testing.assert_array_equal(wt.asarray(A)[key].numpy(), A[np.array([[2, 0], [1, 1]])])
    t = wt.asarray(A)
    t[wt.asarray(np.array([1]), dtype=wt.uint64)] = 5.0
    want = A.copy()
    want[1] = 5.0
    np.testing.assert_array_equal(t.numpy(), want)


@pytest.mark.parametrize("value", [4, 2**31, 2**32 + 1, -5, -2**63])  # take counts -4..-1 from the end
def test_out_of_range_int64_is_an_index_error(ctx, value):
    # On the host the call fails (IndexError); indices on the device fail the read (ValueError).
    bad = (IndexError, ValueError) if ctx.backend == "webgpu" else IndexError
    t = wt.asarray(A)
    idx = np.array([0, value], dtype=np.int64)
    with pytest.raises(bad, match="index %d at position \\[1\\]" % value):
        wt.take(t, idx, axis=1).numpy()
    with pytest.raises(bad, match="index %d at position \\[1\\]" % value):
        wt.take(t, wt.asarray(idx, dtype=wt.int64), axis=1).numpy()
    if value >= 0:
        with pytest.raises(bad, match="index %d at position \\[1\\]" % value):
            wt.take(t, wt.asarray(idx, dtype=wt.uint64), axis=1).numpy()
