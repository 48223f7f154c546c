"""take, take_along_axis, scatter and index_add against NumPy (scatter's add mode against
np.add.at in float64, rounded once to float32), functions and Tensor methods, and their
errors (a bad index is an IndexError naming it)."""
import numpy as np
import pytest

import wgtensor as wt

A = (np.arange(60, dtype=np.float32).reshape(3, 4, 5) * 0.5 - 7).astype(np.float32)


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_take_any_index_shape(ctx, axis):
    idx = np.array([[0, 2, 1], [2, 2, 0]], dtype=np.int32)
    got = wt.take(wt.asarray(A), wt.asarray(idx), axis=axis)
    np.testing.assert_array_equal(got.numpy(), np.take(A, idx, axis=axis))
    np.testing.assert_array_equal(wt.asarray(A).take(wt.asarray(idx[0]), axis=axis).numpy(),
                                  np.take(A, idx[0], axis=axis))


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
@pytest.mark.parametrize("kind", ["list", "int32", "int64", "computed"])
def test_take_negative_indices_count_from_the_end(ctx, axis, kind):
    # As in NumPy and the array API: -1 is the last entry along the axis, -n the first.
    n = A.shape[axis]
    idx = np.array([[-1, 0, -n], [n - 1, -2, 1]])
    if kind == "list":
        wi = idx.tolist()
    elif kind == "computed":  # values not on the host when take runs
        wi = wt.asarray(idx.astype(np.int32) + 3) - 3
    else:
        wi = np.asarray(idx, dtype=kind)
    np.testing.assert_array_equal(wt.take(wt.asarray(A), wi, axis=axis).numpy(), np.take(A, idx, axis=axis))
    col = [1] * 3
    col[axis % 3] = 6
    ia = np.resize(idx.reshape(-1), 6).reshape(col)
    wa = wt.asarray(ia.astype(np.int32) + 3) - 3 if kind == "computed" else np.asarray(ia, dtype=np.int64)
    np.testing.assert_array_equal(wt.take_along_axis(wt.asarray(A), wa, axis).numpy(),
                                  np.take_along_axis(A, ia, axis))


@pytest.mark.parametrize("axis,shape", [(1, (3, 6, 5)), (1, (1, 2, 5)), (2, (3, 1, 7)), (0, (2, 4, 1))])
def test_take_along_axis_broadcasts(ctx, axis, shape):
    rng = np.random.default_rng(1)
    idx = rng.integers(0, A.shape[axis], size=shape).astype(np.int32)
    want = np.take_along_axis(A, idx, axis) if all(s == 1 or s == a or d == axis for d, (s, a) in
                                                   enumerate(zip(shape, A.shape))) else None
    got = wt.take_along_axis(wt.asarray(A), wt.asarray(idx), axis)
    np.testing.assert_array_equal(got.numpy(), want)
    np.testing.assert_array_equal(wt.asarray(A).take_along_axis(wt.asarray(idx), axis).numpy(), want)


def test_scatter_replace_and_add(ctx):
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    index = np.array([[1, 0, 3, 1, 2, 3], [1, 2, 0, 0, 2, 3]], dtype=np.int32)
    src = np.arange(12, dtype=np.float32).reshape(2, 6) + 100
    want_add = base.astype(np.float64)
    want_rep = base.copy()
    for i in range(2):
        for j in range(6):
            want_add[index[i, j], j] += src[i, j]
            want_rep[index[i, j], j] = src[i, j]  # later writes win
    t = wt.asarray(base)
    np.testing.assert_array_equal(wt.scatter(t, 0, wt.asarray(index), wt.asarray(src), mode="add").numpy(),
                                  want_add.astype(np.float32))
    np.testing.assert_array_equal(t.scatter(0, wt.asarray(index), wt.asarray(src)).numpy(), want_rep)
    np.testing.assert_array_equal(t.numpy(), base)  # scatter returns a new tensor


def test_index_add_repeats_sum_in_float64(ctx):
    rng = np.random.default_rng(7)
    a = rng.standard_normal((5, 3)).astype(np.float32)
    idx = rng.integers(0, 5, size=4000).astype(np.int32)
    src = (rng.standard_normal((3, 4000)) * np.where(rng.random((3, 4000)) < 0.5, 1e4, 1e-3)).astype(np.float32)
    want = a.astype(np.float64)
    np.add.at(want, idx, src.T.astype(np.float64))
    got = wt.index_add(wt.asarray(a), 0, wt.asarray(idx), wt.asarray(src.T.copy())).numpy()
    assert np.max(np.abs(got.view(np.int32).astype(np.int64) - want.astype(np.float32).view(np.int32))) <= 1
    got1 = wt.asarray(a.T.copy()).index_add(1, wt.asarray(idx), wt.asarray(src)).numpy()
    np.testing.assert_array_equal(got1, got.T)


def test_scatter_errors(ctx):
    # Indices on the host fail at the call (IndexError); on the device the read reports the
    # failed work (ValueError), as for gathers (docs/python.md).
    bad = (IndexError, ValueError) if ctx.backend == "webgpu" else IndexError
    t = wt.asarray(A)
    with pytest.raises(bad, match=r"index -5 .*\(valid: -4\.\.3\)"):
        wt.take(t, wt.asarray(np.array([0, -5], dtype=np.int32)), axis=1).numpy()  # WebGPU: at the read
    with pytest.raises(bad, match="index -1"):  # scatter and index_add take [0, n) only
        wt.index_add(t, 1, wt.asarray(np.array([-1], dtype=np.int32)), wt.asarray(A[:, :1])).numpy()
    with pytest.raises(bad, match="index 5"):
        wt.take_along_axis(t, wt.asarray(np.full((3, 4, 1), 5, dtype=np.int32)), 2).numpy()
    with pytest.raises(ValueError, match="mode"):
        wt.scatter(t, 0, wt.asarray(np.zeros((1, 1, 1), dtype=np.int32)), t, mode="mul")
    with pytest.raises(bad, match="index 4"):
        wt.index_add(t, 1, wt.asarray(np.array([4], dtype=np.int32)), wt.asarray(A[:, :1])).numpy()
