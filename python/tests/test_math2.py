"""The array API's further elementwise functions against NumPy (float64 references), on both
backends: unary and binary ops on views and with broadcasting and Python scalars, the bitwise
operators on integer tensors, floor division and remainder signs, and clip with tensor bounds."""
import numpy as np
import pytest

import wgtensor as wt

RNG = np.random.default_rng(1)
X = RNG.uniform(-3, 3, size=(4, 6)).astype(np.float32)
UNIT = RNG.uniform(-0.99, 0.99, size=(4, 6)).astype(np.float32)
BIG = (RNG.uniform(1.01, 50, size=(4, 6)) * np.array([1, 1e10, 1e30, 1, 1, 1])).astype(np.float32)
POS = (BIG * np.array([1, 1, 1, 1e-3, 1e-30, 1])).astype(np.float32)

UNARY = {
    "tan": (X, np.tan), "asin": (UNIT, np.arcsin), "acos": (UNIT, np.arccos), "atan": (BIG * np.sign(X), np.arctan),
    "sinh": (X * 20, np.sinh), "cosh": (X * 20, np.cosh), "asinh": (BIG * np.sign(X), np.arcsinh),
    "acosh": (BIG, np.arccosh), "atanh": (UNIT, np.arctanh), "log2": (POS, np.log2), "log10": (POS, np.log10),
    "exp2": (X * 30, np.exp2), "trunc": (X * 3, np.trunc),
}


def ulps(got, ref):
    ref32 = ref.astype(np.float32)
    return np.abs(got.astype(np.float64) - ref) / np.spacing(np.abs(ref32)).astype(np.float64)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_within_a_few_ulp_of_float64_on_a_view(ctx, name):
    x, ref = UNARY[name]
    t = wt.asarray(x.T.copy(), ctx=ctx).T  # a transposed view
    got = getattr(wt, name)(t).numpy()
    assert got.dtype == np.float32
    assert ulps(got, ref(x.astype(np.float64))).max() <= 2.5


def test_numpy_names_are_the_same_functions():
    assert wt.arcsin is wt.asin and wt.arctanh is wt.atanh and wt.left_shift is wt.bitwise_left_shift
    assert wt.remainder is wt.mod and wt.bitwise_not is wt.bitwise_invert


def test_predicates_give_uint32(ctx):
    v = np.array([-0.0, 0.0, -1.5, np.inf, -np.inf, np.nan, 2.0], np.float32)
    assert wt.signbit(wt.asarray(v, ctx=ctx)).tolist() == np.signbit(v).astype(np.uint32).tolist()
    assert wt.isfinite(wt.asarray(v, ctx=ctx)).tolist() == np.isfinite(v).astype(np.uint32).tolist()
    assert wt.isfinite(wt.asarray([1, 2], ctx=ctx)).tolist() == [1, 1]


BINARY = {
    "logaddexp": np.logaddexp, "hypot": np.hypot, "copysign": np.copysign, "nextafter": np.nextafter,
}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_float_binary_broadcast_and_scalars(ctx, name):
    a = (X * np.float32(1e19)).astype(np.float32)  # hypot's squares would overflow
    b = X[:1] * np.float32(-2e19)
    ref = BINARY[name](a, b) if name == "nextafter" else BINARY[name](a.astype(np.float64), b.astype(np.float64))
    got = getattr(wt, name)(wt.asarray(a, ctx=ctx), wt.asarray(b, ctx=ctx)).numpy()
    assert ulps(got, np.asarray(ref, np.float64)).max() <= 2
    # a Python scalar takes the tensor's type, as NumPy 2
    assert np.array_equal(getattr(wt, name)(wt.asarray(a, ctx=ctx), 1.5).numpy(),
                          BINARY[name](a, np.float32(1.5)).astype(np.float32)) or name in ("logaddexp", "hypot")


def test_bitwise_operators_on_int_tensors(ctx):
    a = RNG.integers(-2**31, 2**31, size=(3, 5), dtype=np.int32)
    b = RNG.integers(-2**31, 2**31, size=(3, 5), dtype=np.int32)
    s = np.arange(15, dtype=np.int32).reshape(3, 5) * 2  # counts 0..28
    ta, tb, ts = (wt.asarray(v, ctx=ctx) for v in (a, b, s))
    assert (ta & tb).tolist() == (a & b).tolist() and (ta | tb).tolist() == (a | b).tolist()
    assert (ta ^ tb).tolist() == (a ^ b).tolist() and (~ta).tolist() == (~a).tolist()
    assert (ta << ts).tolist() == (a << s).tolist() and (ta >> ts).tolist() == (a >> s).tolist()
    assert (ta & 255).tolist() == (a & 255).tolist() and (1 << ts).tolist() == (np.int32(1) << s).tolist()
    u = RNG.integers(0, 2**32, size=7, dtype=np.uint32)
    assert (wt.asarray(u, ctx=ctx) >> 3).tolist() == (u >> 3).tolist()
    assert wt.bitwise_xor(wt.asarray(u, ctx=ctx), wt.asarray(u[::-1].copy(), ctx=ctx)).tolist() == (u ^ u[::-1]).tolist()
    # counts of 32 and more shift everything out, as NumPy
    big = np.array([32, 40], np.int32)
    assert (wt.asarray([-8, 8], ctx=ctx) >> wt.asarray(big, ctx=ctx)).tolist() == [-1, 0]
    assert (wt.asarray([-8, 8], ctx=ctx) << wt.asarray(big, ctx=ctx)).tolist() == [0, 0]
    with pytest.raises(Exception, match="integer types"):
        wt.asarray([1.0], ctx=ctx) & wt.asarray([2.0], ctx=ctx)


def test_floor_divide_and_remainder_follow_python_signs(ctx):
    a = np.array([7, -7, 7, -7, 0, -2**31], np.int32)
    b = np.array([2, 2, -2, -2, 3, -1], np.int32)
    ta, tb = wt.asarray(a, ctx=ctx), wt.asarray(b, ctx=ctx)
    with np.errstate(over="ignore"):
        assert (ta // tb).tolist() == (a // b).tolist()
    assert (ta % tb).tolist() == (a % b).tolist() and wt.remainder(ta, tb).tolist() == (a % b).tolist()
    assert (ta // 0).tolist() == [0] * 6  # NumPy too (with a warning)
    f = np.array([7.5, -7.5, 7.5, -7.5, 1e-3, 5.0, -5.0], np.float32)
    g = np.array([2.0, 2.0, -2.0, -2.0, -1.0, np.inf, np.inf], np.float32)
    tf, tg = wt.asarray(f, ctx=ctx), wt.asarray(g, ctx=ctx)
    assert np.array_equal((tf // tg).numpy(), f // g) and np.array_equal((tf % tg).numpy(), np.remainder(f, g))


def test_clip_with_tensor_bounds(ctx):
    x = np.array([[-5, 0.5, np.nan, 3], [1, 2, -1, 9]], np.float32)
    lo = np.array([-1, 1, 0, np.nan], np.float32)
    hi = np.float32(2.5)
    got = wt.clip(wt.asarray(x, ctx=ctx), wt.asarray(lo, ctx=ctx), wt.asarray(hi, ctx=ctx)).numpy()
    assert np.array_equal(got, np.clip(x, lo, hi), equal_nan=True)
    got = wt.clip(wt.asarray(x, ctx=ctx), None, wt.asarray(lo, ctx=ctx)).numpy()
    assert np.array_equal(got, np.minimum(x, lo), equal_nan=True)
    t = wt.asarray(x, ctx=ctx)
    assert np.array_equal(t.clip(wt.asarray(lo, ctx=ctx), 0.5).numpy(), np.clip(x, lo, np.float32(0.5)), equal_nan=True)
    assert np.array_equal(wt.clip(t, -1, 1).numpy(), np.clip(x, -1, 1), equal_nan=True)  # scalars as before


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "uint16", "int64", "uint64"])
def test_clip_of_narrow_and_64bit_integers(ctx, dtype):
    scale = 3 * 10**9 if dtype.endswith("64") else 1  # past 2^32 for the 64-bit types
    base = 60 if dtype.startswith("u") else 0
    x = ((base + np.arange(12).reshape(3, 4) * 37 % 90 - 45) * scale).astype(dtype)
    lo = ((base - 20 + 15 * np.arange(4)) * scale).astype(dtype)
    hi = np.array((base + 25) * scale, dtype)
    got = wt.clip(wt.asarray(x, dtype=dtype, ctx=ctx).T, wt.asarray(lo[:, None], dtype=dtype, ctx=ctx),
                  wt.asarray(hi, dtype=dtype, ctx=ctx))
    assert got.dtype == wt.asarray(x[:1], dtype=dtype, ctx=ctx).dtype
    np.testing.assert_array_equal(got.numpy(), np.clip(x.T, lo[:, None], hi))
