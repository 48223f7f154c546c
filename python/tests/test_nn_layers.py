"""dropout, batch_norm, group_norm and interpolate (torch.nn.functional's names and
arguments) against float64 NumPy references on both backends, and wgtensor.random on the
device generator: the same values on both backends, integers and raw words."""
import numpy as np
import pytest

import wgtensor as wt

RNG = np.random.default_rng(5)


def test_dropout_mask_is_the_generators(ctx):
    x = RNG.standard_normal((6, 35)).astype(np.float32)
    t = wt.asarray(x, ctx=ctx)
    y = wt.dropout(t, 0.3, seed=9).numpy()
    u = wt.random.uniform(0, 1, (6, 35), seed=9, ctx=ctx).numpy()
    want = np.where(u >= np.float32(0.3), x * np.float32(1 / 0.7), np.float32(0))
    np.testing.assert_array_equal(y, want)
    assert wt.dropout(t, 0.3, training=False, seed=9) is t
    np.testing.assert_array_equal(wt.dropout(t, 1.0).numpy(), np.zeros_like(x))
    with pytest.raises(ValueError, match="p = 1.5"):
        wt.dropout(t, 1.5)
    # A seed tensor (uint32 [2]: low word, high word) gives the mask of the integer seed.
    s = wt.asarray(np.array([9, 0], np.uint32), ctx=ctx)
    np.testing.assert_array_equal(wt.dropout(t, 0.3, seed=s).numpy(), want)


def test_batch_norm_matches_numpy(ctx):
    x = RNG.standard_normal((3, 4, 5, 2)).astype(np.float32)
    m, w, b = (RNG.standard_normal(4).astype(np.float32) for _ in range(3))
    v = RNG.uniform(0.2, 2, 4).astype(np.float32)
    got = wt.batch_norm(wt.asarray(x, ctx=ctx), wt.asarray(m, ctx=ctx), wt.asarray(v, ctx=ctx),
                        weight=wt.asarray(w, ctx=ctx), bias=wt.asarray(b, ctx=ctx), eps=1e-3).numpy()
    c = (slice(None), None, None)
    want = (x.astype(np.float64) - m[c]) / np.sqrt(v[c].astype(np.float64) + 1e-3) * w[c] + b[c]
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=2e-6)
    with pytest.raises(NotImplementedError, match="inference form"):
        wt.batch_norm(wt.asarray(x, ctx=ctx), wt.asarray(m, ctx=ctx), wt.asarray(v, ctx=ctx), training=True)


def test_group_norm_matches_numpy(ctx):
    x = RNG.standard_normal((2, 6, 3, 4)).astype(np.float32)
    w, b = RNG.standard_normal(6).astype(np.float32), RNG.standard_normal(6).astype(np.float32)
    got = wt.group_norm(wt.asarray(x, ctx=ctx), 3, wt.asarray(w, ctx=ctx), wt.asarray(b, ctx=ctx)).numpy()
    g = x.astype(np.float64).reshape(2, 3, -1)
    h = ((g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + 1e-5)).reshape(x.shape)
    want = h * w[:, None, None] + b[:, None, None]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="4 groups do not divide 6"):
        wt.group_norm(wt.asarray(x, ctx=ctx), 4)


def bilinear_ref(x, oh, ow, align):
    """PyTorch's bilinear interpolation written out in float64 (sources in float32 as it does)."""
    n, c, h, w = x.shape

    def src(o, i, out):
        o = np.arange(out, dtype=np.float32)
        if align:
            s = o * np.float32((i - 1) / (out - 1)) if out > 1 else np.zeros(out, np.float32)
        else:
            s = np.maximum((o + np.float32(0.5)) * np.float32(i / out) - np.float32(0.5), 0).astype(np.float32)
        lo = np.minimum(s.astype(np.int64), i - 1)
        hi = lo + (lo < i - 1)
        return lo, hi, (s - lo).astype(np.float64)

    y0, y1, ly = src(None, h, oh)
    x0, x1, lx = src(None, w, ow)
    xd = x.astype(np.float64)
    top = xd[:, :, y0][:, :, :, x0] * (1 - lx) + xd[:, :, y0][:, :, :, x1] * lx
    bot = xd[:, :, y1][:, :, :, x0] * (1 - lx) + xd[:, :, y1][:, :, :, x1] * lx
    return top * (1 - ly)[:, None] + bot * ly[:, None]


@pytest.mark.parametrize("align", [False, True])
def test_interpolate_bilinear_matches_numpy(ctx, align):
    x = RNG.standard_normal((2, 3, 5, 4)).astype(np.float32)
    got = wt.interpolate(wt.asarray(x, ctx=ctx), size=(7, 9), mode="bilinear", align_corners=align).numpy()
    np.testing.assert_allclose(got, bilinear_ref(x, 7, 9, align), rtol=1e-6, atol=1e-6)


def test_interpolate_nearest_and_errors(ctx):
    x = np.arange(12, dtype=np.float32).reshape(1, 1, 3, 4)
    t = wt.asarray(x, ctx=ctx)
    np.testing.assert_array_equal(wt.interpolate(t, scale_factor=2).numpy(), x.repeat(2, 2).repeat(2, 3))
    np.testing.assert_array_equal(wt.interpolate(t, size=(2, 2), mode="nearest-exact").numpy(), x[:, :, [0, 2]][:, :, :, [1, 3]])
    with pytest.raises(ValueError, match="needs 1 spatial"):
        wt.interpolate(t, size=3, mode="linear")
    with pytest.raises(ValueError, match="exactly one"):
        wt.interpolate(t)


def test_random_same_on_both_backends():
    cpu, gpu = wt.Context(backend="cpu", quiet=True), None
    try:
        gpu = wt.Context(backend="webgpu", quiet=True)
    except wt.UnavailableError as e:
        pytest.skip("no WebGPU adapter: %s" % e)
    for draw in (lambda c: wt.random.uniform(-2, 3, (50, 41), seed=3, ctx=c),
                 lambda c: wt.random.integers(-5, 17, (50, 41), seed=4, ctx=c),
                 lambda c: wt.random.bits((50, 41), seed=5, ctx=c)):
        np.testing.assert_array_equal(draw(cpu).numpy(), draw(gpu).numpy())
    k = wt.random.integers(10, size=(20000,), seed=6, ctx=cpu).numpy()
    assert k.dtype == np.int32 and k.min() == 0 and k.max() == 9
    assert np.all(np.abs(np.bincount(k) - 2000) < 5 * np.sqrt(2000 * 0.9))
    assert wt.random.bits((3,), seed=0, ctx=cpu).numpy()[0] == 0x6627E8D5
