"""Creation: asarray/array from NumPy (any layout), scalars and lists, with dtype conversion
and its errors; zeros, ones, full, empty, arange, linspace, eye, *_like and seeded random."""
import numpy as np
import pytest

import wgtensor as wt

LAYOUTS = {
    "contiguous": lambda a: a,
    "transposed": lambda a: a.T,
    "reversed": lambda a: a[::-1, ::-2],
    "fortran": lambda a: np.asfortranarray(a),
    "broadcast": lambda a: np.broadcast_to(a[:1], a.shape),
}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("src", [np.float64, np.float32, np.float16, np.int64, np.int32, np.int16, np.uint8,
                                 np.uint32, np.bool_])
def test_asarray_of_numpy_any_layout(ctx, layout, src):
    a = LAYOUTS[layout]((np.arange(24).reshape(4, 6) % 5).astype(src))
    t = wt.asarray(a)
    expect = {"f": np.float32, "i": np.int32, "u": np.uint32, "b": np.bool_}[np.dtype(src).kind]
    if src == np.float16:
        expect = np.float16
    assert t.dtype == expect and t.shape == a.shape
    np.testing.assert_array_equal(t.numpy(), a.astype(expect))


def test_asarray_conversions_to_a_given_dtype(ctx):
    np.testing.assert_array_equal(wt.asarray([1, 2, 3], dtype="float16").numpy(), np.array([1, 2, 3], np.float16))
    np.testing.assert_array_equal(wt.asarray(np.array([1.0, -2.0]), dtype=wt.int32).numpy(), [1, -2])
    x = np.array([0.1, 1e-3, 3.14159265358979], np.float64)
    np.testing.assert_array_equal(wt.asarray(x).numpy(), x.astype(np.float32))  # rounded once
    np.testing.assert_array_equal(wt.asarray(x, dtype="f16").numpy(), x.astype(np.float16))


def test_asarray_refuses_values_the_type_cannot_hold(ctx):
    with pytest.raises(ValueError, match=r"value 3000000000 at index \(1,\) is outside the range of i32"):
        wt.asarray(np.array([1, 3_000_000_000], np.int64))
    with pytest.raises(ValueError, match=r"-1 at index \(0, 1\)"):
        wt.asarray(np.array([[0, -1]]), dtype=wt.uint32)
    with pytest.raises(TypeError, match="not a whole number"):
        wt.asarray([0.5], dtype=wt.int32)
    with pytest.raises(ValueError, match="outside the range of f32"):
        wt.asarray(np.array([1e300]))
    with pytest.raises(ValueError, match="outside the range of f16"):
        wt.asarray([70000.0], dtype=wt.float16)
    with pytest.raises(ValueError, match="outside the range of int32"):
        wt.asarray(2**40)
    # A value past float32's range on purpose is still infinity.
    assert wt.asarray(np.array([np.inf, -np.inf, np.nan])).numpy()[0] == np.inf


def test_asarray_of_scalars_and_lists(ctx):
    assert wt.asarray(3).dtype == wt.int32 and wt.asarray(3).shape == ()
    assert wt.asarray(2.5).dtype == wt.float32 and wt.asarray(True).dtype == wt.bool
    t = wt.asarray([[1, 2], [3, 4]])
    assert t.dtype == wt.int32 and t.tolist() == [[1, 2], [3, 4]]
    assert wt.asarray([[1.5, 2], [3, 4]]).dtype == wt.float32
    assert wt.asarray([]).shape == (0,)
    with pytest.raises(ValueError):
        wt.asarray([[1, 2], [3]])


def test_asarray_of_a_tensor_and_array_copies(ctx):
    t = wt.arange(4)
    assert wt.asarray(t) is t
    assert wt.asarray(t, dtype="float32").dtype == wt.float32
    c = wt.array(t)
    assert c is not t and c.tolist() == t.tolist()
    be = np.arange(4, dtype=">f4")
    np.testing.assert_array_equal(wt.asarray(be).numpy(), [0, 1, 2, 3])


def test_filled_tensors(ctx):
    np.testing.assert_array_equal(wt.zeros((2, 3)).numpy(), np.zeros((2, 3), np.float32))
    np.testing.assert_array_equal(wt.ones(4, dtype="int32").numpy(), np.ones(4, np.int32))
    np.testing.assert_array_equal(wt.full((2,), 7, dtype=wt.uint32).numpy(), [7, 7])
    assert wt.empty((3, 0)).shape == (3, 0)
    x = wt.asarray(np.ones((2, 2), np.float16))
    for like, value in ((wt.zeros_like, 0), (wt.ones_like, 1), (lambda t: wt.full_like(t, 5), 5)):
        r = like(x)
        assert r.dtype == wt.float16 and r.shape == (2, 2) and (r.numpy() == value).all()
    assert wt.empty_like(x, dtype=wt.int32).dtype == wt.int32
    with pytest.raises(TypeError):
        wt.full((2,), 2.5, dtype=wt.int32)


def test_arange_linspace_eye(ctx):
    assert wt.arange(5).dtype == wt.int32 and wt.arange(5).tolist() == list(range(5))
    np.testing.assert_array_equal(wt.arange(1, 2, 0.25).numpy(), np.arange(1, 2, 0.25, dtype=np.float32))
    np.testing.assert_array_equal(wt.arange(10, 0, -3).numpy(), np.arange(10, 0, -3))
    np.testing.assert_array_equal(wt.linspace(0, 1, 7).numpy(), np.linspace(0, 1, 7).astype(np.float32))
    np.testing.assert_array_equal(wt.eye(3, 4, k=1).numpy(), np.eye(3, 4, k=1, dtype=np.float32))


@pytest.mark.parametrize("dtype", [wt.float32, wt.float16, wt.int32, wt.uint8, wt.bool])
def test_eye_every_diagonal_and_shape(ctx, dtype):
    # eye is made on the device; every diagonal of tall, wide, square and empty matrices,
    # including those past the matrix (all zeros), against NumPy.
    for n, m in [(1, 1), (3, 4), (5, 2), (7, 7), (0, 3), (4, 0), (33, 65)]:
        for k in sorted({-n - 1, -n, -n + 1, -1, 0, 1, m - 1, m, m + 5}):
            got = wt.eye(n, m, k=k, dtype=dtype)
            assert got.dtype == dtype and got.shape == (n, m)
            np.testing.assert_array_equal(got.numpy(), np.eye(n, m, k=k, dtype=dtype.numpy))
    np.testing.assert_array_equal(wt.eye(np.int64(4), dtype=dtype).numpy(), np.eye(4, dtype=dtype.numpy))


def test_eye_errors_name_the_values(ctx):
    with pytest.raises(ValueError, match=r"N=-1, M=3"):
        wt.eye(-1, 3)
    with pytest.raises(TypeError):
        wt.eye(2.5)
    with pytest.raises(TypeError):
        wt.eye(3, k=1.0)


def test_random_is_seeded_and_in_range(ctx):
    u = wt.random.uniform(-2, 3, size=(1000,), seed=5).numpy()
    assert u.min() >= -2 and u.max() < 3 and abs(u.mean() - 0.5) < 0.2
    np.testing.assert_array_equal(u, wt.random.uniform(-2, 3, size=(1000,), seed=5).numpy())
    assert not np.array_equal(u, wt.random.uniform(-2, 3, size=(1000,), seed=6).numpy())
    n = wt.random.normal(1.0, 2.0, size=(4000,), seed=1).numpy()
    assert abs(n.mean() - 1.0) < 0.15 and abs(n.std() - 2.0) < 0.15
    wt.random.seed(11)
    a = wt.random.rand(3, 2).numpy()
    wt.random.seed(11)
    np.testing.assert_array_equal(a, wt.random.rand(3, 2).numpy())


def test_random_is_the_same_on_both_backends():
    from conftest import make_context
    a = wt.random.normal(size=(64,), seed=3, ctx=make_context("cpu")).numpy()
    b = wt.random.normal(size=(64,), seed=3, ctx=make_context("webgpu")).numpy()
    np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


def test_device_keyword_names_the_context_and_copy_rules():
    cpu = wt.Context(backend="cpu", quiet=True)
    for t in (wt.zeros((2, 3), device=cpu), wt.ones((2,), device=cpu), wt.empty((1,), device=cpu),
              wt.full((2,), 1.5, device=cpu), wt.arange(5, device=cpu), wt.linspace(0, 1, 3, device=cpu),
              wt.eye(3, device=cpu), wt.asarray([1, 2], device=cpu)):
        assert t.device is cpu
    base = wt.asarray(np.arange(6, dtype=np.float32).reshape(2, 3), ctx=cpu)
    for like in (wt.zeros_like(base, device=cpu), wt.ones_like(base, device=cpu), wt.empty_like(base, device=cpu),
                 wt.full_like(base, 2.0, device=cpu)):
        assert like.device is cpu and like.shape == (2, 3)
    other = wt.Context(backend="cpu", quiet=True)
    with pytest.raises(ValueError, match="two different contexts"):
        wt.zeros((2,), ctx=cpu, device=other)
    with pytest.raises(ValueError, match="two different contexts"):
        wt.asarray([1.0], ctx=cpu, device=other)
    assert wt.asarray(base, copy=False) is base
    copied = wt.asarray(base, copy=True)
    assert copied is not base and np.array_equal(copied.numpy(), base.numpy())
    with pytest.raises(ValueError, match="copy=False"):
        wt.asarray(np.zeros(3, np.float32), copy=False)
    with pytest.raises(ValueError, match="copy=False"):
        wt.asarray(base, dtype=wt.int32, copy=False)


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("src", [np.float32, np.float64, np.int64])
def test_asarray_copies_once_without_temporaries(ctx, layout, src):
    """asarray writes a NumPy array of any layout straight into the storage, converting on
    the way: neither NumPy nor Python allocates a temporary of the array's size (tracemalloc
    sees NumPy's data allocations)."""
    import tracemalloc

    a = LAYOUTS[layout](np.ones((1024, 1024), src))
    tracemalloc.start()
    try:
        t = wt.asarray(a)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < a.nbytes // 16, "asarray of %s %s allocated %d bytes on the way" % (layout, np.dtype(src), peak)
    np.testing.assert_array_equal(t.numpy(), a.astype(np.float32 if src != np.int64 else np.int32))
