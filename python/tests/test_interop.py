"""Asynchronous reads, compiled graphs, DLPack and the array-API namespace."""
import gc
import sys

import numpy as np
import pytest

import wgtensor as wt


def test_numpy_async_reads_overlap_and_give_the_values(ctx):
    t = wt.asarray(np.arange(12, dtype=np.float32).reshape(3, 4))
    reads = [(t * k).numpy_async() for k in range(4)]
    for k, r in enumerate(reads):
        out = r.result()
        assert out.flags.writeable and out.shape == (3, 4)
        np.testing.assert_array_equal(out, np.arange(12).reshape(3, 4) * k)
        assert r.done() and r.result() is out
    r = (t + 1).numpy_async()
    del r  # abandoned before it finished: released, nothing written after
    gc.collect()


def test_numpy_async_reports_a_bad_index_as_index_error(ctx):
    bad = wt.gather_rows(wt.ones((2, 2)), wt.argmax(wt.asarray([0.0, 5.0])) + 1)
    with pytest.raises(IndexError, match="out of range"):
        bad.numpy_async().result()


def test_compile_traces_once_and_dispatches(ctx):
    w = wt.random.normal(size=(4, 3), seed=2)
    calls = []

    @wt.compile
    def f(x, b):
        calls.append(1)
        return wt.relu(x @ w + b), x.sum(axis=1)

    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    y, s = f(wt.asarray(x), wt.ones(3))
    np.testing.assert_allclose(y.numpy(), np.maximum(x @ w.numpy() + 1, 0), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(s.numpy(), x.sum(axis=1))
    y2, _ = f(wt.asarray(-x), wt.zeros(3))
    np.testing.assert_allclose(y2.numpy(), np.maximum(-x @ w.numpy(), 0), rtol=1e-5, atol=1e-5)
    assert len(calls) == 1  # one trace for one signature
    f(wt.ones((5, 4)), wt.zeros(3))
    assert len(calls) == 2 and f.launches(wt.ones((5, 4)), wt.zeros(3)) >= 1
    with pytest.raises(ValueError):  # reading a placeholder while tracing
        wt.compile(lambda a: a * float(a.sum()))(wt.ones(2))
    with pytest.raises(TypeError, match="must return a tensor"):
        wt.compile(lambda a: 3)(wt.ones(2))


def test_dlpack_exports_the_host_copy_without_a_copy(ctx):
    t = wt.asarray(np.arange(12, dtype=np.float32).reshape(3, 4))
    a = np.from_dlpack(t)
    assert t.__dlpack_device__() == (1, 0)
    np.testing.assert_array_equal(a, t.numpy())
    assert a.__array_interface__["data"][0] == t.numpy().__array_interface__["data"][0]
    np.testing.assert_array_equal(np.from_dlpack(t.T), np.arange(12).reshape(3, 4).T)  # a copy
    for d in (wt.float16, wt.int32, wt.uint32):
        x = wt.arange(5).astype(d)
        assert np.from_dlpack(x).dtype == d.numpy
    del t
    gc.collect()
    np.testing.assert_array_equal(a, np.arange(12).reshape(3, 4))  # the capsule kept the tensor
    u = wt.from_dlpack(np.arange(6.0).reshape(2, 3))
    assert u.dtype == wt.float32 and u.tolist() == [[0, 1, 2], [3, 4, 5]]


def test_array_namespace_is_the_module(ctx):
    t = wt.ones(3)
    xp = t.__array_namespace__()
    assert xp is wt
    assert xp.sum(xp.asarray([1.0, 2.0])).item() == 3.0
    m = np.array([[1, 0], [1, 1]], np.int32)
    assert xp.all(m, axis=1).tolist() == np.all(m, axis=1).tolist() and xp.any(m).item() == 1
    assert xp.all(m).item() == 0 and xp.any(np.zeros(3, np.int32)).item() == 0
    assert xp.isfinite([1.0, np.inf, np.nan]).tolist() == [1, 0, 0]
    assert xp.matrix_transpose(xp.ones((2, 3, 4))).shape == (2, 4, 3)
    assert xp.bitwise_invert(xp.asarray([0, 5])).tolist() == [-1, -6]


def test_tensor_objects_release_their_type_and_context():
    c = wt.Context(backend="cpu")
    wt.zeros(2, ctx=c).ndim  # warm up: caches that keep a reference once
    t0, c0 = sys.getrefcount(wt.Tensor), sys.getrefcount(c)
    for _ in range(1000):
        x = wt.zeros(2, ctx=c)
        del x
    t1, c1 = sys.getrefcount(wt.Tensor), sys.getrefcount(c)  # outside assert: pytest's rewriting holds refs
    assert t1 == t0 and c1 == c0


def test_numpy_ufuncs_on_tensors(ctx):
    t = wt.asarray([1.0, 2.0, 4.0])
    r = np.arange(3, dtype=np.float32) + t  # the ndarray on the left gives a tensor
    assert isinstance(r, wt.Tensor) and r.tolist() == [1, 3, 6]
    e = np.exp(t)
    assert isinstance(e, wt.Tensor)
    np.testing.assert_allclose(e.numpy(), np.exp([1.0, 2.0, 4.0]), rtol=2e-6)
    c = np.cbrt(t)  # no wgtensor op: NumPy computes it on the values
    assert isinstance(c, np.ndarray)
    np.testing.assert_allclose(c, np.cbrt([1.0, 2.0, 4.0]), rtol=1e-6)
    assert np.add.reduce(t) == 7.0
    assert t.__array__(copy=False).tolist() == [1, 2, 4]
    with pytest.raises(ValueError, match="without a copy"):
        wt.ones((2, 2)).T.__array__(copy=False)
