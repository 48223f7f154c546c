"""wgtensor.linalg's decompositions and what is built on them (qr, slogdet, svd, svdvals,
eigh, eigvalsh, pinv, matrix_rank, matrix_power, cross, the 2- and nuclear norms) against
numpy.linalg in float64, on both backends: batches, odd and non-square shapes, strided
(transposed) inputs, empty batches, and the errors. Factors with free signs are checked by
reconstruction and orthonormality; tolerances are f32's rounding of each result, scaled by
the condition number where the result depends on it."""
import numpy as np
import pytest

import wgtensor as wt

RNG = np.random.default_rng(2026)
U = 2.0 ** -24

SHAPES = [(5, 3), (3, 5), (2, 4, 4), (2, 1, 6, 2), (1, 1), (0, 3, 2), (2, 0, 3)]


def matrices(shape, strided):
    """f32 values in [-1, 1] of shape, and the tensor (a transposed view when strided)."""
    x = RNG.uniform(-1, 1, size=shape).astype(np.float32)
    if not strided:
        return x, wt.asarray(x)
    return x, wt.linalg.matrix_transpose(wt.asarray(np.ascontiguousarray(np.swapaxes(x, -1, -2))))


def product_close(got, want, magnitude, k):
    """A product of k rounded f32 factors: within (k + 1) 2^-24 of the magnitudes' product."""
    assert got.shape == want.shape
    bad = np.abs(got - want) > (k + 1) * U * magnitude + 1e-300
    assert not bad.any(), "off by %g where allowed %g" % (np.abs(got - want)[bad].max(), ((k + 1) * U * magnitude)[bad].min())


def orthonormal(q, axis_cols=True):
    qq = np.swapaxes(q, -1, -2) @ q if axis_cols else q @ np.swapaxes(q, -1, -2)
    n = qq.shape[-1]
    mag = np.abs(np.swapaxes(q, -1, -2)) @ np.abs(q) if axis_cols else np.abs(q) @ np.abs(np.swapaxes(q, -1, -2))
    product_close(qq, np.broadcast_to(np.eye(n), qq.shape), mag, 2)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("strided", [False, True])
def test_linalg_qr_against_numpy(ctx, shape, strided):
    x, t = matrices(shape, strided)
    x64 = x.astype(np.float64)
    for mode in ("reduced", "complete"):
        q, r = (v.numpy().astype(np.float64) for v in wt.linalg.qr(t, mode=mode))
        q_ref, r_ref = np.linalg.qr(x64, mode=mode) if x.size else (None, None)
        if q_ref is not None:
            assert q.shape == q_ref.shape and r.shape == r_ref.shape
        assert not np.tril(r, -1).any()
        product_close(q @ r, x64, np.abs(q) @ np.abs(r), 2)
        orthonormal(q)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("strided", [False, True])
def test_linalg_svd_against_numpy(ctx, shape, strided):
    x, t = matrices(shape, strided)
    x64 = x.astype(np.float64)
    s_ref = np.linalg.svd(x64, compute_uv=False) if x.size else np.zeros(shape[:-2] + (min(shape[-2:]),))
    tol = lambda s: U * np.abs(s_ref) + 1e-12 * (np.abs(s_ref).max() if s_ref.size else 0)
    for full in (True, False):
        u, s, vh = (v.numpy().astype(np.float64) for v in wt.linalg.svd(t, full_matrices=full))
        assert s.shape == s_ref.shape and np.all(np.abs(s - s_ref) <= tol(s))
        k = s.shape[-1]
        uk, vk = u[..., :, :k], vh[..., :k, :]
        product_close((uk * s[..., None, :]) @ vk, x64, (np.abs(uk) * s[..., None, :]) @ np.abs(vk), 3)
        orthonormal(u)
        orthonormal(vh, axis_cols=False)
    sv = wt.linalg.svdvals(t).numpy()
    assert np.all(np.abs(sv - s_ref) <= tol(sv))
    if x.size:
        for ord in (2, -2, "nuc"):
            want = np.linalg.norm(x64, ord, axis=(-2, -1))
            got = wt.linalg.matrix_norm(t, ord=ord, keepdims=True).numpy()
            assert got.shape == want.shape + (1, 1)
            np.testing.assert_allclose(got[..., 0, 0], want, rtol=(min(shape[-2:]) + 1) * U, atol=0)


@pytest.mark.parametrize("shape", [(5, 5), (3, 4, 4), (1, 1), (2, 1, 3, 3), (0, 2, 2)])
@pytest.mark.parametrize("strided", [False, True])
def test_linalg_eigh_against_numpy(ctx, shape, strided):
    # Not symmetric: both libraries read the lower triangle only.
    x, t = matrices(shape, strided)
    x64 = x.astype(np.float64)
    w_ref = np.linalg.eigvalsh(x64) if x.size else np.zeros(shape[:-1])
    w, v = (a.numpy().astype(np.float64) for a in wt.linalg.eigh(t))
    tol = U * np.abs(w_ref) + 1e-12 * (np.abs(w_ref).max() if w_ref.size else 0)
    assert w.shape == w_ref.shape and np.all(np.abs(w - w_ref) <= tol)
    sym = np.tril(x64) + np.swapaxes(np.tril(x64, -1), -1, -2)
    product_close((v * w[..., None, :]) @ np.swapaxes(v, -1, -2), sym,
                  (np.abs(v) * np.abs(w[..., None, :])) @ np.abs(np.swapaxes(v, -1, -2)), 3)
    orthonormal(v)
    assert np.all(np.abs(wt.linalg.eigvalsh(t).numpy() - w_ref) <= tol)


def test_linalg_slogdet_against_numpy(ctx):
    for shape, strided in (((3, 5, 5), False), ((7, 7), True), ((2, 1, 3, 3), True), ((0, 3, 3), False)):
        x, t = matrices(shape, strided)
        sign, logabs = wt.linalg.slogdet(t)
        s_ref, l_ref = np.linalg.slogdet(x.astype(np.float64))
        np.testing.assert_array_equal(sign.numpy(), s_ref)
        np.testing.assert_allclose(logabs.numpy(), l_ref, rtol=U, atol=1e-12)
    # det overflows f32 here; slogdet does not. A singular matrix: sign 0, log|det| -inf.
    big = np.array([np.diag([1e20, -1e20, 1e20]), [[1, 2, 3], [2, 4, 6], [0, 1, 1]]], np.float32)
    sign, logabs = wt.linalg.slogdet(big)
    np.testing.assert_array_equal(sign.numpy(), [-1, 0])
    assert logabs.numpy()[1] == -np.inf
    np.testing.assert_allclose(logabs.numpy()[0], 3 * np.log(np.float64(np.float32(1e20))), rtol=U)


def test_linalg_pinv_and_matrix_rank_against_numpy(ctx):
    # Exact integer products of rank 2 (the other singular values vanish in double), and full rank.
    b = RNG.integers(-3, 4, size=(3, 6, 2)).astype(np.float64)
    c = RNG.integers(-3, 4, size=(3, 2, 5)).astype(np.float64)
    low = (b @ c).astype(np.float32)
    for x, strided in ((low, False), (RNG.uniform(-1, 1, (2, 4, 6)).astype(np.float32), True), (np.zeros((0, 3, 2), np.float32), False)):
        t = wt.asarray(x) if not strided else wt.linalg.matrix_transpose(wt.asarray(np.ascontiguousarray(np.swapaxes(x, -1, -2))))
        x64 = x.astype(np.float64)
        m, n = x.shape[-2:]
        rtol = max(m, n) * np.finfo(np.float32).eps
        p = wt.linalg.pinv(t).numpy().astype(np.float64)
        r = wt.linalg.matrix_rank(t).numpy()
        assert p.shape == x.shape[:-2] + (n, m) and r.dtype == np.int32
        if not x.size:
            continue
        p_ref = np.linalg.pinv(x64, rcond=rtol)
        s = np.linalg.svd(x64, compute_uv=False)
        kept = s > rtol * s[..., :1]
        cond = (s[..., 0] / np.where(kept, s, np.inf).min(axis=-1))[..., None, None]
        np.testing.assert_array_less(np.abs(p - p_ref), U * np.abs(p_ref) + 1e-14 * cond * np.abs(p_ref).max() + 1e-300)
        np.testing.assert_array_equal(r, kept.sum(axis=-1))
    np.testing.assert_array_equal(wt.linalg.matrix_rank(low).numpy(), [2, 2, 2])
    # rtol's cut is inclusive: of 4, 2, 1 with rtol 0.5 only 4 stays.
    d = np.diag([4, -2, 1]).astype(np.float32)[::-1]
    np.testing.assert_array_equal(wt.linalg.pinv(d, rtol=0.5).numpy(), np.linalg.pinv(d.astype(np.float64), rcond=0.5))
    assert wt.linalg.matrix_rank(d, rtol=0.5).numpy() == 1
    with pytest.raises(ValueError, match="rtol"):
        wt.linalg.pinv(d, rtol=-1)


@pytest.mark.parametrize("n", [0, 1, 2, 5, -1, -3])
def test_linalg_matrix_power_against_numpy(ctx, n):
    k = 4
    x = ((RNG.uniform(-0.5, 0.5, (2, k, k)) + k * np.eye(k)) / (k + 1)).astype(np.float32)
    t = wt.linalg.matrix_transpose(wt.asarray(np.ascontiguousarray(np.swapaxes(x, -1, -2))))
    base = x.astype(np.float64) if n >= 0 else wt.linalg.inv(x).numpy().astype(np.float64)
    want = np.linalg.matrix_power(base, abs(n))
    mag = np.linalg.matrix_power(np.abs(base), abs(n))
    got = wt.linalg.matrix_power(t, n).numpy()
    assert np.all(np.abs(got - want) <= (abs(n) + 1) * (k + 1) * U * mag)


def test_linalg_cross_against_numpy(ctx):
    for dtype in (np.float32, np.int32):
        a = RNG.integers(-9, 10, (4, 3)).astype(dtype)
        b = RNG.integers(-9, 10, (3,)).astype(dtype)
        np.testing.assert_array_equal(wt.linalg.cross(a, b).numpy(), np.cross(a, b))
        c = RNG.integers(-9, 10, (2, 3, 4)).astype(dtype)
        d = RNG.integers(-9, 10, (3, 4)).astype(dtype)
        got = wt.linalg.cross(c, wt.linalg.matrix_transpose(wt.asarray(np.ascontiguousarray(d.T))), axis=-2)
        np.testing.assert_array_equal(got.numpy(), np.cross(c, d, axis=-2))
    assert wt.linalg.cross(np.zeros((0, 3), np.float32), np.zeros((0, 3), np.float32)).shape == (0, 3)
    with pytest.raises(Exception, match="length 3"):
        wt.linalg.cross(np.zeros(2, np.float32), np.zeros(2, np.float32))


def test_linalg_decomposition_errors(ctx):
    with pytest.raises(Exception, match="square"):
        wt.linalg.slogdet(np.zeros((2, 3), np.float32))
    with pytest.raises(Exception, match="square"):
        wt.linalg.eigh(np.zeros((2, 3), np.float32))
    with pytest.raises(Exception, match="square"):
        wt.linalg.inv(np.zeros((2, 3), np.float32))
    sing = np.array([np.eye(2), [[1, 2], [2, 4]]], np.float32)
    with pytest.raises(Exception, match="matrix 1 of the batch"):
        wt.linalg.inv(sing)
    with pytest.raises(Exception, match="matrix 1 of the batch"):
        wt.linalg.matrix_power(sing, -1)
    bad = np.array([np.eye(2), [[1, 0], [np.nan, 1]]], np.float32)
    with pytest.raises(Exception, match="matrix 1 of the batch"):
        wt.linalg.svd(bad)
    with pytest.raises(Exception, match="matrix 1 of the batch"):
        wt.linalg.eigvalsh(bad)
    # The upper triangle is never read: a NaN there changes nothing, as in NumPy.
    upper_nan = np.array([[2, np.nan], [1, 3]], np.float32)
    np.testing.assert_allclose(wt.linalg.eigvalsh(upper_nan).numpy(), np.linalg.eigvalsh(upper_nan.astype(np.float64)),
                               rtol=U)
    with pytest.raises(ValueError, match="mode"):
        wt.linalg.qr(np.eye(2, dtype=np.float32), mode="r")
    with pytest.raises(TypeError, match="integer"):
        wt.linalg.matrix_power(np.eye(2, dtype=np.float32), 1.5)


def test_linalg_diagonal_and_trace_against_numpy(ctx):
    x = RNG.uniform(-1, 1, (2, 3, 4)).astype(np.float32)
    for offset in (0, 1, -2, 5):
        np.testing.assert_array_equal(wt.linalg.diagonal(x, offset=offset).numpy(), np.diagonal(x, offset, -2, -1))
        np.testing.assert_allclose(wt.linalg.trace(x, offset=offset).numpy(), np.trace(x.astype(np.float64), offset, -2, -1),
                                   rtol=3 * U, atol=3 * U)
    ints = RNG.integers(-9, 10, (3, 3)).astype(np.int32)
    t = wt.linalg.trace(ints, dtype=wt.float32)
    assert t.dtype == wt.float32 and t.numpy() == np.trace(ints)


def test_linalg_extension_complete():
    names = ("cholesky cross det diagonal eigh eigvalsh inv matmul matrix_norm matrix_power matrix_rank matrix_transpose "
             "outer pinv qr slogdet solve svd svdvals tensordot trace vecdot vector_norm").split()
    assert [n for n in names if not hasattr(wt.linalg, n)] == []


def test_linalg_gradients_against_closed_forms(ctx):
    """Gradients through the factorizations reach Python's autograd: d log|det| / dA = A^-T,
    d det / dA = det A^-T, d inv(A).sum() / dA = -A^-T 1 A^-T, and the sum of eigh's
    eigenvalues is the trace, whose gradient is the identity (on the lower triangle read)."""
    a = np.array([[3, 1, 0], [1, -4, 1], [0, 2, 5]], np.float32)
    a64 = a.astype(np.float64)
    inv_t = np.linalg.inv(a64).T
    x = wt.asarray(a).requires_grad_()
    wt.linalg.slogdet(x).logabsdet.backward()
    np.testing.assert_allclose(x.grad.numpy(), inv_t, rtol=4 * U, atol=4 * U)
    x = wt.asarray(a).requires_grad_()
    wt.linalg.det(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), np.linalg.det(a64) * inv_t, rtol=8 * U, atol=8 * U)
    x = wt.asarray(a).requires_grad_()
    wt.linalg.inv(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), -inv_t @ np.ones((3, 3)) @ inv_t, rtol=16 * U, atol=16 * U)
    x = wt.asarray(a).requires_grad_()
    wt.linalg.eigh(x).eigenvalues.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.eye(3), atol=16 * U)
