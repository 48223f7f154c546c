"""The array API's keywords on the op table's functions, on both backends, against NumPy:
clip's min/max (scalars or tensors), concat(axis=None), moveaxis with sequences, reshape(copy=),
astype(copy=, device=), sum/prod(dtype=) and std/var(correction=)."""
import numpy as np
import pytest

import wgtensor as wt

RNG = np.random.default_rng(11)


def test_clip_min_max_keywords(ctx):
    a = RNG.uniform(-5, 5, size=(4, 6)).astype(np.float32)
    t = wt.asarray(a, ctx=ctx)
    assert np.array_equal(wt.clip(t, min=-1.5).numpy(), np.clip(a, -1.5, None))
    assert np.array_equal(wt.clip(t, max=2).numpy(), np.clip(a, None, 2))
    lo = RNG.uniform(-3, 0, size=(1, 6)).astype(np.float32)
    assert np.array_equal(wt.clip(t, min=wt.asarray(lo, ctx=ctx), max=1.0).numpy(), np.clip(a, lo, 1.0))
    assert np.array_equal(t.clip(min=-1, max=1).numpy(), np.clip(a, -1, 1))
    with pytest.raises(TypeError):
        wt.clip(t, -1, min=-2)
    with pytest.raises(TypeError):
        wt.clip(t, -1, 1, 2)  # min and max are keyword-only past a_min and a_max


def test_concat_axis_none_flattens(ctx):
    a, b = RNG.random((3, 4)).astype(np.float32), RNG.random((2, 5)).astype(np.float32)
    r = wt.concat([wt.asarray(a, ctx=ctx), wt.asarray(b, ctx=ctx).T], axis=None)
    assert np.array_equal(r.numpy(), np.concatenate([a, b.T], axis=None))
    with pytest.raises(TypeError):
        wt.stack([wt.asarray(a, ctx=ctx)], axis=None)


def test_moveaxis_sequences(ctx):
    a = RNG.random((2, 3, 4, 5)).astype(np.float32)
    t = wt.asarray(a, ctx=ctx)
    for src, dst in (((0, 1), (2, 0)), ((3, 0), (0, 3)), ([-1], [1]), ((0, 1, 2, 3), (3, 2, 1, 0))):
        assert np.array_equal(wt.moveaxis(t, src, dst).numpy(), np.moveaxis(a, src, dst)), (src, dst)
    with pytest.raises(ValueError):
        wt.moveaxis(t, (0, 0), (1, 2))
    with pytest.raises(ValueError):
        wt.moveaxis(t, (0, 1), (1,))
    with pytest.raises(ValueError):
        wt.moveaxis(t, (0, 4), (1, 2))


def test_reshape_copy(ctx):
    a = RNG.random((4, 6)).astype(np.float32)
    t = wt.asarray(a, ctx=ctx)
    v = wt.reshape(t, (6, 4), copy=False)  # a view of the contiguous tensor
    c = wt.reshape(t, (6, 4), copy=True)
    t[0, 0] = 100.0
    assert v.numpy()[0, 0] == 100.0 and c.numpy()[0, 0] == a[0, 0]
    tt = t.T
    with pytest.raises(ValueError, match="without a copy"):
        wt.reshape(tt, (24,), copy=False)
    assert np.array_equal(wt.reshape(tt, (24,), copy=None).numpy(), wt.asarray(tt).numpy().reshape(24))
    assert np.array_equal(t.reshape(3, 8).numpy(), t.numpy().reshape(3, 8))


def test_astype_copy_and_device(ctx):
    a = RNG.uniform(-9, 9, size=(3, 5)).astype(np.float32)
    t = wt.asarray(a, ctx=ctx)
    assert wt.astype(t, wt.float32, copy=False) is t
    c = wt.astype(t, wt.float32)  # copy=True: a new tensor, even of the same type
    t[0, 0] = 50.0
    assert c is not t and c.numpy()[0, 0] == a[0, 0]
    assert np.array_equal(wt.astype(t, wt.int32, copy=False).numpy(), t.numpy().astype(np.int32))
    other = wt.Context("cpu")
    m = wt.astype(t, wt.float16, device=other)
    assert m.ctx is other and np.array_equal(m.numpy(), t.numpy().astype(np.float16))
    assert wt.astype(t, wt.float32, copy=False, device=ctx) is t


def test_sum_prod_dtype_and_correction(ctx):
    i = RNG.integers(-1000, 1000, size=(5, 7)).astype(np.int32)
    t = wt.asarray(i, ctx=ctx)
    s = wt.sum(t, axis=1, dtype=wt.float32)
    assert s.dtype == wt.float32 and np.allclose(s.numpy(), i.sum(axis=1), rtol=1e-6)
    p = wt.prod(wt.asarray(np.array([[1, 2, 3], [4, 5, 6]], np.int32), ctx=ctx), axis=0, dtype=wt.float32)
    assert p.dtype == wt.float32 and np.array_equal(p.numpy(), [4, 10, 18])
    x = RNG.random((5, 7)).astype(np.float32)
    tx = wt.asarray(x, ctx=ctx)
    for corr in (0, 1, 1.0, 2):
        np.testing.assert_allclose(wt.var(tx, axis=0, correction=corr).numpy(),
                                   np.var(x.astype(np.float64), axis=0, ddof=int(corr)), rtol=1e-5)
        np.testing.assert_allclose(wt.std(tx, correction=corr).numpy(), np.std(x.astype(np.float64), ddof=int(corr)),
                                   rtol=1e-5)
    with pytest.raises(ValueError):
        wt.var(tx, correction=0.5)
    with pytest.raises(TypeError):
        wt.var(tx, ddof=1, correction=1)
