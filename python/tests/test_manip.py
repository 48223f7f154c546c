"""moveaxis, roll, repeat, tile, diagonal, trace, diag, masked_fill, masked_select,
meshgrid and broadcast_arrays against NumPy, and gradients through two of them."""
import numpy as np
import pytest

import wgtensor as wt

A = (np.arange(60, dtype=np.float32).reshape(3, 4, 5) * 3 % 17 - 8).astype(np.float32)


def test_moveaxis_roll_repeat_tile(ctx):
    t = wt.asarray(A)
    np.testing.assert_array_equal(wt.moveaxis(t, 0, -1).numpy(), np.moveaxis(A, 0, -1))
    for shift, axis in [(2, None), (-3, 1), ((1, -2), (0, 2)), (4, (1, 2))]:
        np.testing.assert_array_equal(wt.roll(t, shift, axis).numpy(), np.roll(A, shift, axis))
    for reps, axis in [(2, None), (3, 1), ([1, 0, 2], 0), ([0] * 5, 2)]:
        np.testing.assert_array_equal(wt.repeat(t, reps, axis=axis).numpy(), np.repeat(A, reps, axis=axis))
    np.testing.assert_array_equal(t.repeat(2, axis=2).numpy(), A.repeat(2, axis=2))
    # Counts and shifts as tensors (read on the host: the result's shape depends on them).
    counts = np.array([3, 0, 1, 2], dtype=np.int64)
    np.testing.assert_array_equal(wt.repeat(t, wt.asarray(counts, dtype=wt.int64), axis=1).numpy(),
                                  np.repeat(A, counts, axis=1))
    np.testing.assert_array_equal(wt.roll(t, wt.asarray(np.array([1, -2], np.int32)), (0, 2)).numpy(),
                                  np.roll(A, (1, -2), (0, 2)))
    with pytest.raises(TypeError, match="repeats is a f32 tensor"):
        wt.repeat(t, wt.asarray(np.ones(4, np.float32)), axis=1)
    with pytest.raises(ValueError, match="rank 2"):
        wt.repeat(t, wt.asarray(np.ones((2, 2), np.int32)), axis=1)
    for reps in [2, (2, 1), (2, 1, 1, 3), (1, 0, 1)]:
        np.testing.assert_array_equal(wt.tile(t, reps).numpy(), np.tile(A, reps))


@pytest.mark.parametrize("offset,axis1,axis2", [(0, 0, 1), (2, 1, 2), (-1, 2, 0), (-9, 0, 2)])
def test_diagonal_trace(ctx, offset, axis1, axis2):
    t = wt.asarray(A)
    np.testing.assert_array_equal(t.diagonal(offset, axis1, axis2).numpy(), A.diagonal(offset, axis1, axis2))
    np.testing.assert_array_equal(wt.trace(t, offset, axis1, axis2).numpy(), np.trace(A, offset, axis1, axis2))


def test_diag(ctx):
    v = np.array([1.5, -2, 3], dtype=np.float32)
    for k in (-2, 0, 1):
        np.testing.assert_array_equal(wt.diag(wt.asarray(v), k).numpy(), np.diag(v, k))
        np.testing.assert_array_equal(wt.diag(wt.asarray(A[0]), k).numpy(), np.diag(A[0], k))


def test_masks(ctx):
    t = wt.asarray(A)
    m = A[0] > 0  # [4, 5], broadcast over the first axis
    np.testing.assert_array_equal(wt.masked_fill(t, wt.asarray(m), -1.5).numpy(), np.where(m, -1.5, A))
    np.testing.assert_array_equal(t.masked_select(t > 2).numpy(), A[A > 2])
    np.testing.assert_array_equal(t.masked_select(wt.asarray(m)).numpy(), A[np.broadcast_to(m, A.shape)])


def test_meshgrid_broadcast_arrays(ctx):
    x, y, z = (np.arange(n, dtype=np.float32) + n for n in (2, 3, 4))
    for indexing in ("xy", "ij"):
        got = wt.meshgrid(wt.asarray(x), wt.asarray(y), wt.asarray(z), indexing=indexing)
        for g, w in zip(got, np.meshgrid(x, y, z, indexing=indexing)):
            np.testing.assert_array_equal(g.numpy(), w)
    a, b = wt.broadcast_arrays(wt.asarray(x.reshape(2, 1)), wt.asarray(z))
    wa, wb = np.broadcast_arrays(x.reshape(2, 1), z)
    np.testing.assert_array_equal(a.numpy(), wa)
    np.testing.assert_array_equal(b.numpy(), wb)


def test_manip_gradients(ctx):
    t = wt.asarray(A[0].copy())
    t.requires_grad = True
    w = np.arange(24, dtype=np.float32).reshape(4, 6)
    loss = (wt.tile(wt.roll(t, 1, 1), (1, 2))[:, :6] * wt.asarray(w)).sum() + wt.trace(t, 1)
    loss.backward()
    # d/dt of sum(tile(roll(t))[:, :6] * w): column j of the roll is column j-1 of t; the
    # tile's first copy covers columns 0..4 and its second copy's column 0 is column 5.
    want = np.zeros((4, 5), dtype=np.float64)
    for j in range(6):
        want[:, (j % 5 - 1) % 5] += w[:, j]
    want[np.arange(4), np.arange(1, 5)] += 1
    np.testing.assert_allclose(t.grad.numpy(), want, rtol=0, atol=0)


MOVES = {
    "roll": (lambda x: wt.roll(x, (1, -2), (0, 1)), lambda a: np.roll(a, (1, -2), (0, 1))),
    "roll flat": (lambda x: wt.roll(x, 5), lambda a: np.roll(a, 5)),
    "tile": (lambda x: wt.tile(x, (2, 1)), lambda a: np.tile(a, (2, 1))),
    "repeat": (lambda x: wt.repeat(x, [1, 0, 2, 1], axis=1), lambda a: np.repeat(a, [1, 0, 2, 1], axis=1)),
    "moveaxis": (lambda x: wt.moveaxis(x, 0, 1), lambda a: np.moveaxis(a, 0, 1)),
    "diagonal": (lambda x: wt.linalg.diagonal(x, offset=1), lambda a: np.diagonal(a, 1)),
    "tril": (lambda x: wt.tril(x, -1), lambda a: np.tril(a, -1)),
    "triu": (lambda x: wt.triu(x), lambda a: np.triu(a)),
    "take": (lambda x: wt.take(x, np.array([3, 0, 3]), axis=1), lambda a: np.take(a, [3, 0, 3], axis=1)),
    "take_along_axis": (lambda x: wt.take_along_axis(x, np.array([[2], [0], [3]]), axis=1),
                        lambda a: np.take_along_axis(a, np.array([[2], [0], [3]]), axis=1)),
    "mask": (lambda x: x[np.array([[1, 0, 1, 1]] * 3, bool)], lambda a: a[np.array([[1, 0, 1, 1]] * 3, bool)]),
    "gather": (lambda x: x[np.array([2, 2, 0])], lambda a: a[[2, 2, 0]]),
}


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int16", "uint16", "int64", "uint64", "bfloat16"])
@pytest.mark.parametrize("op", list(MOVES))
def test_moves_of_every_type_against_numpy(ctx, dtype, op):
    """The element-moving ops on the narrow and 64-bit types, on a transposed view: the values
    move bit for bit and keep their type."""
    src = np.arange(12).reshape(4, 3) * 7 - 30
    if dtype == "bool":
        src = src % 3 == 0
    elif dtype in ("int64", "uint64"):
        src = src * 10**9 + (0 if dtype == "int64" else 40 * 10**9)  # past 2^32: both words move
    elif dtype.startswith("uint"):
        src = src + 30
    ref = src.astype(np.float32 if dtype == "bfloat16" else src.dtype if dtype == "bool" else dtype).T
    t = wt.asarray(src, dtype=dtype).T
    ours, theirs = MOVES[op]
    got = ours(t)
    assert got.dtype == t.dtype
    np.testing.assert_array_equal(got.numpy().astype(ref.dtype), theirs(ref))
