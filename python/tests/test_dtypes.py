"""The narrow types against NumPy: creation, numpy(), casts, views and shape ops, comparisons
and where; bfloat16 through float32; the array API's result_type, can_cast, finfo, iinfo and
isdtype."""
import numpy as np
import pytest

import wgtensor as wt

NARROW = [(wt.bool, np.bool_), (wt.int8, np.int8), (wt.uint8, np.uint8), (wt.int16, np.int16),
          (wt.uint16, np.uint16)]


def sample(npt, shape=(5, 7)):
    n = int(np.prod(shape))
    if npt is np.bool_:
        return (np.arange(n) % 3 == 0).reshape(shape)
    info = np.iinfo(npt)
    return (np.arange(n, dtype=np.int64) * 9973 % (int(info.max) - int(info.min) + 1) + int(info.min)).astype(npt).reshape(shape)


@pytest.mark.parametrize("d,npt", NARROW, ids=lambda x: str(x))
def test_narrow_types_match_numpy(ctx, d, npt):
    a = sample(npt)
    t = wt.asarray(a, dtype=d)
    assert t.dtype == d and d.numpy == np.dtype(npt)
    np.testing.assert_array_equal(t.numpy(), a)
    np.testing.assert_array_equal(t.T.numpy(), a.T)
    np.testing.assert_array_equal(wt.concat([t, t[:, ::-1]], axis=1).numpy(), np.concatenate([a, a[:, ::-1]], 1))
    np.testing.assert_array_equal(wt.stack([t.T, t.T]).numpy(), np.stack([a.T, a.T]))
    np.testing.assert_array_equal(t[1::2, ::3].numpy(), a[1::2, ::3])
    for to, tonp in NARROW + [(wt.int32, np.int32), (wt.uint32, np.uint32), (wt.float32, np.float32)]:
        if npt is np.bool_ or tonp is np.bool_ or np.issubdtype(tonp, np.integer) or tonp is np.float32:
            np.testing.assert_array_equal(t.astype(to).numpy(), a.astype(tonp), err_msg="%s to %s" % (d, to))
    if npt is not np.bool_:
        b = a[::-1]
        np.testing.assert_array_equal(wt.asarray(a < b, dtype=wt.uint32).numpy(), (t < wt.asarray(b, dtype=d)).numpy())
        c = wt.asarray(a % 2 == 0, dtype=wt.bool)
        w = wt.where(c, t, wt.asarray(b, dtype=d))
        assert w.dtype == d
        np.testing.assert_array_equal(w.numpy(), np.where(a % 2 == 0, a, b))


def bf16_round(x):
    """float32 to bfloat16 and back, nearest even on the bits (as ml_dtypes and PyTorch do)."""
    b = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    r = ((b + 0x7fff + ((b >> 16) & 1)) >> 16 << 16).astype(np.uint32)
    return r.view(np.float32)


def test_bfloat16_through_float32(ctx):
    x = np.array([0.0, -0.0, 1.0, 1.00390625, 1.01171875, 3.0e38, -np.inf, 1e-40, -2.5e-3], np.float32)
    t = wt.asarray(x, dtype=wt.bfloat16)
    assert t.dtype == wt.bfloat16 and t.dtype.itemsize == 2
    got = t.numpy()
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, bf16_round(x))
    assert got[3] == 1.0 and got[4] == 1.015625 and np.signbit(got[1])  # ties to even
    np.testing.assert_array_equal(t.T.astype(wt.float32).numpy(), got)
    with pytest.raises(ValueError):
        wt.asarray([3.4e38], dtype=wt.bfloat16)  # rounds to infinity: refused, as float16 past 65504


def test_narrow_ops_refused_with_op_and_type(ctx):
    t = wt.asarray([1, 2], dtype=wt.int8)
    with pytest.raises(Exception, match="wgt_sqrt: a is i8"):
        wt.sqrt(t)
    with pytest.raises(TypeError, match="bfloat16"):
        memoryview(wt.asarray([1.0], dtype=wt.bfloat16))


PAIRS = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64, np.float16,
         np.float32]


@pytest.mark.parametrize("x", PAIRS)
@pytest.mark.parametrize("y", PAIRS)
def test_result_type_follows_the_array_api(x, y):
    kx, ky = np.dtype(x).kind, np.dtype(y).kind
    ints = {"i", "u"}
    defined = kx == ky or (kx in ints and ky in ints)
    wanted = np.result_type(x, y)
    if defined and not (kx in ints and wanted.kind == "f"):  # NumPy's float64 for uint64 with a signed type
        assert wt.result_type(x, y) == wanted
        assert wt.can_cast(x, y) == (wanted == np.dtype(y))
    else:
        with pytest.raises(TypeError):
            wt.result_type(x, y)
        assert not wt.can_cast(x, y) or x == y


def test_bfloat16_promotion_and_info():
    assert wt.result_type(wt.bfloat16, wt.bfloat16) == wt.bfloat16
    assert wt.result_type(wt.bfloat16, wt.float16) == wt.float32
    assert wt.result_type(wt.bfloat16, wt.float32) == wt.float32
    f = wt.finfo(wt.bfloat16)
    assert (f.bits, f.eps, f.smallest_normal) == (16, 2.0 ** -7, 2.0 ** -126)
    assert f.max == float(np.frombuffer(np.uint32(0x7f7f0000).tobytes(), np.float32)[0])
    for d in (wt.float16, wt.float32):
        assert wt.finfo(d).eps == np.finfo(d.numpy).eps and wt.finfo(d).max == np.finfo(d.numpy).max
    for d in (wt.int8, wt.uint8, wt.int16, wt.uint16, wt.int32, wt.uint32):
        i = wt.iinfo(d)
        assert (i.bits, i.min, i.max) == (np.iinfo(d.numpy).bits, np.iinfo(d.numpy).min, np.iinfo(d.numpy).max)
    with pytest.raises(TypeError):
        wt.iinfo(wt.float32)
    assert wt.isdtype(wt.uint8, "integral") and wt.isdtype(wt.bfloat16, "real floating")
    assert not wt.isdtype(wt.bool, "numeric") and wt.isdtype(wt.int16, ("bool", "signed integer"))
    assert wt.isdtype(wt.int8, wt.int8) and not wt.isdtype(wt.int8, wt.uint8)
