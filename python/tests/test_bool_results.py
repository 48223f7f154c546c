"""Predicates give bool tensors (numpy() has dtype bool) and masks work as NumPy's do: ~mask,
mask & mask, t[mask], logical_xor; and int8/uint8/int16/uint16 arithmetic wraps as NumPy's,
with sums of the narrow integers in int32/uint32."""
import numpy as np
import pytest

import wgtensor as wt

FLOATS = np.array([0.0, -0.0, 1.5, -2.0, np.nan, -np.nan, np.inf, -np.inf, 3.0, 1.5], dtype=np.float32)


def test_predicates_give_bool(ctx):
    a = wt.asarray(FLOATS)
    b = wt.asarray(FLOATS[::-1].copy())
    x, y = FLOATS, FLOATS[::-1]
    for got, want in [(a == b, x == y), (a != b, x != y), (a < b, x < y), (a <= b, x <= y), (a > b, x > y),
                      (a >= b, x >= y), (wt.isnan(a), np.isnan(x)), (wt.isinf(a), np.isinf(x)),
                      (wt.isfinite(a), np.isfinite(x)), (wt.signbit(a), np.signbit(x)),
                      (wt.logical_and(a, b), np.logical_and(x, y)), (wt.logical_or(a, b), np.logical_or(x, y)),
                      (wt.logical_xor(a, b), np.logical_xor(x, y)), (wt.logical_not(a), np.logical_not(x))]:
        assert got.dtype == wt.bool
        assert got.numpy().dtype == np.bool_
        np.testing.assert_array_equal(got.numpy(), want)
    anyr, allr = wt.any(a), wt.all(a)
    assert anyr.dtype == wt.bool and allr.dtype == wt.bool
    assert bool(anyr) is True and bool(allr) is False


def test_masks_invert_combine_and_select(ctx):
    v = np.arange(12, dtype=np.float32).reshape(3, 4) - 5
    t = wt.asarray(v)
    m, n = t > 0, t < 4
    np.testing.assert_array_equal((~m).numpy(), ~(v > 0))
    np.testing.assert_array_equal((m & n).numpy(), (v > 0) & (v < 4))
    np.testing.assert_array_equal((m | n).numpy(), (v > 0) | (v < 4))
    np.testing.assert_array_equal((m ^ n).numpy(), (v > 0) ^ (v < 4))
    np.testing.assert_array_equal(t[m & n].numpy(), v[(v > 0) & (v < 4)])
    np.testing.assert_array_equal(wt.where(m, t, 0.0).numpy(), np.where(v > 0, v, 0))
    assert int(wt.sum(m)) == int(np.sum(v > 0))
    # The operators promote a bool with a float tensor to float32, as NumPy does (the C API
    # leaves bool-with-number arithmetic undefined, as the array API does).
    np.testing.assert_array_equal((m * t).numpy(), (v > 0) * v)


@pytest.mark.parametrize("npt", [np.int8, np.uint8, np.int16, np.uint16])
def test_narrow_integer_arithmetic_wraps_as_numpy(ctx, npt):
    info = np.iinfo(npt)
    x = np.array([info.min, info.max, 0, 1, info.min + 1, info.max - 1, 100, 7], dtype=npt)
    y = np.array([-1, 1, 2, 3, info.max, info.min, 3, -7], dtype=np.int64).astype(npt)
    a, b = wt.asarray(x, dtype=npt), wt.asarray(y, dtype=npt)
    with np.errstate(all="ignore"):
        for got, want in [(a + b, x + y), (a - b, x - y), (a * b, x * y), (a // b, x // y), (a % b, x % y),
                          (wt.maximum(a, b), np.maximum(x, y)), (a & b, x & y), (a | b, x | y), (a ^ b, x ^ y),
                          (-a, -x), (wt.abs(a), np.abs(x)), (~a, ~x)]:
            assert got.dtype.numpy == np.dtype(npt)
            np.testing.assert_array_equal(got.numpy(), want)
    s = wt.sum(a)
    want_sum = np.sum(x.astype(np.int64))
    assert s.numpy().dtype == (np.int32 if info.min < 0 else np.uint32)
    assert int(s) == want_sum
    np.testing.assert_array_equal(wt.max(a).numpy(), np.max(x))
