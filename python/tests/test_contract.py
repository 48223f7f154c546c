"""Contractions (einsum, tensordot, vecdot, outer, wgtensor.linalg) and the logic and
logsumexp reductions against NumPy (float64 references), on both backends."""
import numpy as np
import pytest

import wgtensor as wt

RNG = np.random.default_rng(7)


def f32(*shape):
    return RNG.uniform(-1, 1, size=shape).astype(np.float32)


def close(t, ref, terms=1):
    # f32 sums of `terms` products of values below 1: within (terms + 4) 2^-24 each, absolutely
    np.testing.assert_allclose(t.numpy().astype(np.float64), np.asarray(ref, np.float64), rtol=0,
                               atol=(terms + 4) * 2.0 ** -24 * 4)


EINSUM = [
    ("ij,jk->ik", [(5, 7), (7, 3)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]), ("ii->i", [(4, 4)]),
    ("ii", [(5, 5)]), ("ij->ji", [(3, 5)]), ("ij,jk", [(2, 3), (3, 4)]), ("i,j->ij", [(3,), (4,)]),
    ("ijk,jl,lk->i", [(2, 3, 4), (3, 5), (5, 4)]), ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),
    ("ba", [(3, 2)]), ("ij,ij->", [(0, 3), (0, 3)]),
]


@pytest.mark.parametrize("subs,shapes", EINSUM)
def test_einsum_against_numpy(ctx, subs, shapes):
    xs = [f32(*s) for s in shapes]
    got = wt.einsum(subs, *[wt.asarray(x) for x in xs])
    ref = np.einsum(subs, *[x.astype(np.float64) for x in xs])
    assert got.shape == ref.shape
    close(got, ref, terms=64)


def test_einsum_errors_name_the_subscript(ctx):
    a = wt.asarray(f32(2, 3))
    with pytest.raises(Exception, match="subscript 'i' has length 2 in operand 0 but 3"):
        wt.einsum("ij,ik->jk", a, wt.asarray(f32(3, 4)))
    with pytest.raises(Exception, match="'2'"):
        wt.einsum("i2->i", a)
    with pytest.raises(TypeError):
        wt.einsum("ij")


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"])
def test_integer_contractions_wrap_as_numpy(ctx, dtype):
    info = np.iinfo(dtype)

    def ints(*shape):
        return RNG.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)

    def T(x):
        return wt.asarray(x, dtype=getattr(wt, dtype))

    for subs, shapes in EINSUM:
        xs = [ints(*s) for s in shapes]
        got, ref = wt.einsum(subs, *[T(x) for x in xs]), np.einsum(subs, *xs)
        assert got.numpy().dtype == ref.dtype and got.shape == ref.shape, subs
        np.testing.assert_array_equal(got.numpy(), ref, err_msg=subs)
    u, v = ints(7), ints(3)
    got = wt.linalg.outer(T(u), T(v)).numpy()
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got, np.outer(u, v))


def test_tensordot_vecdot_outer(ctx):
    a, b = f32(3, 4, 5), f32(4, 5, 2)
    close(wt.tensordot(wt.asarray(a), wt.asarray(b)), np.tensordot(a.astype(np.float64), b), terms=20)
    close(wt.tensordot(a, b, axes=1 - 1), np.tensordot(a.astype(np.float64), b, axes=0))
    c = f32(5, 4, 2)
    close(wt.tensordot(wt.asarray(a), c, axes=([1, 2], [1, 0])),
          np.tensordot(a.astype(np.float64), c, axes=([1, 2], [1, 0])), terms=20)
    x, y = f32(3, 1, 5), f32(4, 5)
    close(wt.vecdot(wt.asarray(x), y), np.sum(x.astype(np.float64) * y, axis=-1), terms=5)
    p, q = f32(6, 3), f32(6, 1)
    close(wt.linalg.vecdot(wt.asarray(p), q, axis=0), np.sum(p.astype(np.float64) * q, axis=0), terms=6)
    u, v = f32(7), f32(3)
    close(wt.linalg.outer(wt.asarray(u), v), np.outer(u.astype(np.float64), v))
    close(wt.linalg.tensordot(wt.asarray(a), b, axes=2), np.tensordot(a.astype(np.float64), b, axes=2), terms=20)
    with pytest.raises(Exception, match="has length"):
        wt.tensordot(wt.asarray(a), c, axes=([0], [0]))


@pytest.mark.parametrize("axis", [None, 0, 1, (0, 2), -1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_logic_reductions_against_numpy(ctx, axis, keepdims):
    x = RNG.integers(-1, 2, size=(3, 4, 5)).astype(np.float32)
    x[0, 0, 0] = np.nan
    t = wt.asarray(x)
    for name, ref in (("any", np.any), ("all", np.all), ("count_nonzero", np.count_nonzero)):
        got = getattr(wt, name)(t, axis=axis, keepdims=keepdims).numpy()
        want = np.asarray(ref(x, axis=axis, keepdims=keepdims))
        assert got.shape == want.shape, name
        np.testing.assert_array_equal(got.astype(np.int64), want.astype(np.int64), err_msg=name)
    assert t.any(axis=axis).dtype == wt.bool and t.all(axis=axis).dtype == wt.bool  # masks, as comparisons give


def test_logsumexp_against_numpy(ctx):
    x = RNG.uniform(-3, 3, size=(4, 5, 3)).astype(np.float32) * np.float32(40)  # exp overflows f32 unshifted
    for axis in (None, 1, (0, 2)):
        for keepdims in (False, True):
            x64 = x.astype(np.float64)
            m = np.max(x64, axis=axis, keepdims=True)
            ref = np.log(np.sum(np.exp(x64 - m), axis=axis, keepdims=True)) + m
            if not keepdims:
                ref = np.squeeze(ref, axis=axis) if axis is not None else ref.reshape(())
            got = wt.logsumexp(wt.asarray(x), axis=axis, keepdims=keepdims)
            np.testing.assert_allclose(got.numpy(), ref, rtol=4e-7 * 8, atol=1e-6)
    rows = np.array([[-np.inf, -np.inf], [1, np.inf]], np.float32)
    np.testing.assert_array_equal(wt.logsumexp(wt.asarray(rows), axis=1).numpy(), [-np.inf, np.inf])


def spd(n, batch):
    m = RNG.uniform(-1, 1, size=(batch, n, n))
    return (m @ np.swapaxes(m, -1, -2) / n + np.eye(n)).astype(np.float32)


def test_linalg_factorizations_against_numpy(ctx):
    a = (RNG.uniform(-1, 1, size=(3, 5, 5)) + 5 * np.eye(5)).astype(np.float32)
    b = f32(3, 5, 2)
    a64 = a.astype(np.float64)
    np.testing.assert_allclose(wt.linalg.inv(a).numpy(), np.linalg.inv(a64), rtol=2 ** -23, atol=1e-9)
    np.testing.assert_allclose(wt.linalg.det(a).numpy(), np.linalg.det(a64), rtol=2 ** -23)
    np.testing.assert_allclose(wt.linalg.solve(a, b).numpy(), np.linalg.solve(a64, b), rtol=2 ** -23, atol=1e-9)
    s = spd(4, 2)
    low = np.linalg.cholesky(s.astype(np.float64))
    np.testing.assert_allclose(wt.linalg.cholesky(s).numpy(), low, rtol=2 ** -23, atol=1e-9)
    np.testing.assert_allclose(wt.linalg.cholesky(s, upper=True).numpy(), np.swapaxes(low, -1, -2), rtol=2 ** -23,
                               atol=1e-9)
    with pytest.raises(Exception, match="singular"):
        wt.linalg.inv(np.zeros((2, 2), np.float32))
    with pytest.raises(Exception, match="not positive definite"):
        wt.linalg.cholesky(np.array([[1, 2], [2, 1]], np.float32))


def vector_norm_ref(x, axis, keepdims, ord):
    """The array API's vector_norm in float64 (NumPy 1's norm takes two axes for a matrix norm)."""
    a = np.abs(x)
    if ord == np.inf:
        return np.max(a, axis=axis, keepdims=keepdims)
    if ord == -np.inf:
        return np.min(a, axis=axis, keepdims=keepdims)
    if ord == 0:
        return np.sum(a != 0, axis=axis, keepdims=keepdims).astype(np.float64)
    return np.sum(a ** ord, axis=axis, keepdims=keepdims) ** (1 / ord)


@pytest.mark.parametrize("ord", [2, 1, np.inf, -np.inf, 0, 3, 0.5])
def test_vector_norm_against_numpy(ctx, ord):
    x = f32(3, 4, 5) * np.float32(1e20)  # squares overflow f32 unless scaled (the float64 reference's do not)
    for axis in (None, 1, (0, 2)):
        for keepdims in (False, True):
            ref = vector_norm_ref(x.astype(np.float64), axis, keepdims, ord)
            got = wt.linalg.vector_norm(wt.asarray(x), axis=axis, keepdims=keepdims, ord=ord).numpy()
            rtol = 2e-6 if ord in (1, 2, np.inf, -np.inf, 0) else 4e-5  # pow on the GPU: exp2(y log2 x)
            np.testing.assert_allclose(got, ref, rtol=rtol)


@pytest.mark.parametrize("ord", ["fro", 1, -1, np.inf, -np.inf, 2, -2, "nuc"])
def test_matrix_norm_against_numpy(ctx, ord):
    x = f32(2, 3, 5)
    ref = np.linalg.norm(x.astype(np.float64), ord=ord, axis=(-2, -1))
    np.testing.assert_allclose(wt.linalg.matrix_norm(wt.asarray(x), ord=ord).numpy(), ref, rtol=2e-6)
    np.testing.assert_allclose(wt.linalg.norm(x[0], ord=ord).numpy(), np.linalg.norm(x[0].astype(np.float64), ord=ord),
                               rtol=2e-6)
