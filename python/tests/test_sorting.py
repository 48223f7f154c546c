"""Searching and sorting against NumPy on both backends: sort and argsort (stable, both
directions, along each axis of a view, with NaN, infinities and signed zeros), topk,
searchsorted (both sides, with a sorter), the unique family, nonzero and argwhere."""
import math

import numpy as np
import pytest

import wgtensor as wt

RNG = np.random.default_rng(3)
POOL = np.array([0.0, -0.0, 1.5, -1.5, np.inf, -np.inf, np.nan, 2.0, 2.0, -7.0], np.float32)


def pooled(shape, dtype=np.float32):
    if dtype == np.float32:
        return RNG.choice(POOL, size=shape)
    return RNG.integers(-3 if dtype == np.int32 else 0, 4, size=shape).astype(dtype)


def descending_order(row):
    """Stable descending positions: NaN first (it counts above +inf), ties in position order."""
    key = [(0, 0.0) if isinstance(v, float) and math.isnan(v) else (1, -float(v)) for v in row.tolist()]
    return sorted(range(len(row)), key=lambda i: key[i])


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint32])
@pytest.mark.parametrize("axis", [0, -1])
def test_sort_and_argsort_against_numpy(ctx, dtype, axis):
    a = pooled((9, 23), dtype)
    t = wt.asarray(a.T.copy(), ctx=ctx).T  # a transposed view
    want = np.argsort(a, axis=axis, kind="stable")
    np.testing.assert_array_equal(wt.argsort(t, axis=axis).numpy(), want)
    got = wt.sort(t, axis=axis).numpy()
    np.testing.assert_array_equal(got, np.sort(a, axis=axis, kind="stable"))
    assert np.array_equal(np.signbit(got), np.signbit(np.take_along_axis(a, want, axis=axis)))
    moved = np.moveaxis(a, axis, -1)
    down = np.moveaxis(np.array([descending_order(r) for r in moved.reshape(-1, moved.shape[-1])]).reshape(moved.shape),
                       -1, axis)
    np.testing.assert_array_equal(wt.argsort(t, axis=axis, descending=True, stable=True).numpy(), down)
    np.testing.assert_array_equal(wt.sort(t, axis=axis, descending=True).numpy(), np.take_along_axis(a, down, axis=axis))
    assert wt.argsort(t).dtype == wt.int32


def test_topk_against_numpy(ctx):
    a = RNG.integers(0, 40, size=(6, 200)).astype(np.float32)  # many ties
    values, indices = wt.topk(wt.asarray(a, ctx=ctx), 7)
    want = np.array([descending_order(r)[:7] for r in a])
    np.testing.assert_array_equal(indices.numpy(), want)
    np.testing.assert_array_equal(values.numpy(), np.take_along_axis(a, want, axis=1))
    small = wt.topk(wt.asarray(a, ctx=ctx), 3, axis=0, largest=False)
    np.testing.assert_array_equal(small.indices.numpy(), np.argsort(a, axis=0, kind="stable")[:3])
    with pytest.raises(ValueError, match="k is 201"):
        wt.topk(wt.asarray(a, ctx=ctx), 201)
    with pytest.raises(TypeError, match="float16|q8_0|sorting takes"):
        wt.sort(wt.quantize(wt.asarray(np.ones((1, 32), np.float32), ctx=ctx), wt.q8_0))


@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_against_numpy(ctx, side):
    s = np.sort(RNG.integers(-5, 5, size=31)).astype(np.int32)
    v = RNG.integers(-7, 7, size=(4, 5)).astype(np.int32)
    got = wt.searchsorted(wt.asarray(s, ctx=ctx), wt.asarray(v, ctx=ctx), side=side)
    np.testing.assert_array_equal(got.numpy(), np.searchsorted(s, v, side=side))
    perm = RNG.permutation(31).astype(np.int32)
    shuffled = np.empty_like(s)
    shuffled[perm] = s
    got = wt.searchsorted(wt.asarray(shuffled, ctx=ctx), wt.asarray(v, ctx=ctx), side=side,
                          sorter=wt.asarray(perm, ctx=ctx))
    np.testing.assert_array_equal(got.numpy(), np.searchsorted(shuffled, v, side=side, sorter=perm))


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_unique_family_against_numpy(ctx, dtype):
    a = pooled((5, 7), dtype)
    t = wt.asarray(a, ctx=ctx)
    v, idx, inv, cnt = np.unique(a, return_index=True, return_inverse=True, return_counts=True, equal_nan=False)
    r = wt.unique_all(t)
    np.testing.assert_array_equal(r.values.numpy(), v)
    np.testing.assert_array_equal(r.indices.numpy(), idx)
    np.testing.assert_array_equal(r.inverse_indices.numpy(), inv.reshape(a.shape))
    np.testing.assert_array_equal(r.counts.numpy(), cnt)
    np.testing.assert_array_equal(wt.unique_values(t).numpy(), v)
    np.testing.assert_array_equal(wt.unique_counts(t).counts.numpy(), cnt)
    np.testing.assert_array_equal(wt.unique_inverse(t).inverse_indices.numpy(), inv.reshape(a.shape))


def test_nonzero_and_argwhere_against_numpy(ctx):
    a = pooled((4, 6))
    t = wt.asarray(a, ctx=ctx)
    for got, want in zip(wt.nonzero(t), np.nonzero(a)):
        np.testing.assert_array_equal(got.numpy(), want)
    assert len(wt.nonzero(t)) == 2
    np.testing.assert_array_equal(wt.argwhere(t).numpy(), np.argwhere(a))


@pytest.mark.parametrize("np_type", [np.int8, np.uint8, np.int16, np.uint16, np.bool_])
def test_sort_narrow_types_against_numpy(ctx, np_type):
    a = RNG.integers(0, 2 if np_type is np.bool_ else 120, size=(3, 3000)).astype(np_type)  # ties; radix rows
    if np_type in (np.int8, np.int16):
        a = (a.astype(np.int16) - 60).astype(np_type)
    t = wt.asarray(a, ctx=ctx)
    order = np.argsort(a, axis=1, kind="stable")
    np.testing.assert_array_equal(wt.argsort(t, axis=1, stable=True).numpy(), order)
    np.testing.assert_array_equal(wt.sort(t, axis=1).numpy(), np.sort(a, axis=1))
    small = wt.topk(t, 5, axis=1, largest=False)
    np.testing.assert_array_equal(small.indices.numpy(), order[:, :5])


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int16", "uint16", "bfloat16"])
def test_unique_nonzero_argwhere_of_narrow_types_against_numpy(ctx, dtype):
    a = RNG.integers(-2, 3, size=(5, 6))  # zeros and ties; exact in every one of the types
    if dtype == "bool":
        a = a > 0
    elif dtype.startswith("uint"):
        a = a + 2
    ref = a.astype(np.float32 if dtype == "bfloat16" else a.dtype).T
    t = wt.asarray(a, dtype=dtype, ctx=ctx).T  # a view
    v, idx, inv, cnt = np.unique(ref, return_index=True, return_inverse=True, return_counts=True)
    r = wt.unique_all(t)
    assert r.values.dtype == t.dtype
    np.testing.assert_array_equal(r.values.numpy().astype(ref.dtype), v)
    np.testing.assert_array_equal(r.indices.numpy(), idx)
    np.testing.assert_array_equal(r.inverse_indices.numpy(), inv.reshape(ref.shape))
    np.testing.assert_array_equal(r.counts.numpy(), cnt)
    for got, want in zip(wt.nonzero(t), np.nonzero(ref)):
        np.testing.assert_array_equal(got.numpy(), want)
    np.testing.assert_array_equal(wt.argwhere(t).numpy(), np.argwhere(ref))
    # The pattern nonzero(x > 0): comparisons give bool.
    for got, want in zip(wt.nonzero(t > 0), np.nonzero(ref > 0)):
        np.testing.assert_array_equal(got.numpy(), want)
