"""cumprod, cummax, cummin and their positions (cumargmax, cumargmin) against NumPy, on both
backends: float64 products, exact maxima and minima (np.maximum.accumulate), positions as
torch.cummax gives them (the latest of equal values), along each axis and flattened, and the
array API's cumulative_prod with dtype and include_initial."""
import numpy as np
import pytest

import wgtensor as wt

RNG = np.random.default_rng(3)


def positions(a, axis, larger):
    """The index along axis of each running maximum (minimum): the latest among equals."""
    a = np.moveaxis(a, axis, -1)
    out = np.zeros(a.shape, np.int32)
    for idx in np.ndindex(a.shape[:-1]):
        best, at = None, 0
        for j, v in enumerate(a[idx]):
            if best is None or (v >= best if larger else v <= best):
                best, at = v, j
            out[idx + (j,)] = at
    return np.moveaxis(out, -1, axis)


def test_cumprod_against_numpy(ctx):
    a = RNG.uniform(0.5, 1.5, size=(3, 5, 4)).astype(np.float32)
    a[1, 2, :] = 0
    t = wt.asarray(a, ctx=ctx)
    for axis in (0, 1, -1):
        np.testing.assert_allclose(wt.cumprod(t, axis).numpy(), np.cumprod(a.astype(np.float64), axis), rtol=1e-6)
    np.testing.assert_allclose(t.cumprod().numpy(), np.cumprod(a.astype(np.float64)), rtol=1e-5)
    i = np.array([[3, -2, 1], [0, 5, 7]], np.int32)
    assert np.array_equal(wt.cumprod(wt.asarray(i, ctx=ctx), 1).numpy(), np.cumprod(i, 1))


def test_cummax_cummin_and_positions(ctx):
    a = RNG.integers(-3, 4, size=(4, 7)).astype(np.float32)  # many ties
    t = wt.asarray(a, ctx=ctx)
    for axis in (0, 1):
        assert np.array_equal(wt.cummax(t, axis).numpy(), np.maximum.accumulate(a, axis))
        assert np.array_equal(wt.cummin(t, axis).numpy(), np.minimum.accumulate(a, axis))
        assert np.array_equal(wt.cumargmax(t, axis).numpy(), positions(a, axis, True))
        assert np.array_equal(wt.cumargmin(t, axis).numpy(), positions(a, axis, False))
    assert np.array_equal(wt.cummax(t).numpy(), np.maximum.accumulate(a.ravel()))


def test_cumulative_prod(ctx):
    a = RNG.uniform(0.5, 1.5, size=(4, 6)).astype(np.float32)
    t = wt.asarray(a, ctx=ctx)
    r = wt.cumulative_prod(t, axis=0, include_initial=True)
    np.testing.assert_allclose(r.numpy(), np.concatenate([np.ones((1, 6)), np.cumprod(a.astype(np.float64), 0)]),
                               rtol=1e-6)
    i = np.array([1, 2, 3, 4], np.int32)
    r = wt.cumulative_prod(wt.asarray(i, ctx=ctx), dtype=wt.float32)
    assert r.dtype == wt.float32 and np.array_equal(r.numpy(), np.cumprod(i).astype(np.float32))


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "uint16", "bool", "bfloat16"])
def test_scans_of_narrow_types_against_numpy(ctx, dtype):
    """The narrow types scan widened: maxima and minima keep the type, positions are int32, and
    the narrow integers' running product is int32 or uint32 (as cumulative_sum's), wrapping there."""
    a = RNG.integers(0 if dtype.startswith("u") or dtype == "bool" else -9, 10, size=(5, 4))
    a = (a % 2 == 0) if dtype == "bool" else a
    ref = a.astype(np.float32 if dtype == "bfloat16" else a.dtype if dtype == "bool" else dtype)
    t = wt.asarray(a, dtype=dtype, ctx=ctx).T
    ref = ref.T
    for axis in (0, 1):
        got = wt.cummax(t, axis)
        assert got.dtype == t.dtype
        assert np.array_equal(got.numpy().astype(ref.dtype), np.maximum.accumulate(ref, axis))
        assert np.array_equal(wt.cummin(t, axis).numpy().astype(ref.dtype), np.minimum.accumulate(ref, axis))
        assert np.array_equal(wt.cumargmax(t, axis).numpy(), positions(ref, axis, True))
        assert np.array_equal(wt.cumargmin(t, axis).numpy(), positions(ref, axis, False))
        if dtype in ("bool", "bfloat16"):
            with pytest.raises(TypeError, match="takes no arithmetic"):
                wt.cumprod(t, axis)
            continue
        wide = np.uint32 if dtype.startswith("u") else np.int32
        p = wt.cumprod(t, axis)
        assert p.dtype == wt.asarray(np.zeros(1, wide)).dtype
        assert np.array_equal(p.numpy(), np.cumprod(ref.astype(wide), axis, dtype=wide))
