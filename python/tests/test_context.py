"""Contexts: the default context, `with` blocks (thread-local), devices(), stats, and the
errors of the library as Python exceptions (one of each family at least)."""
import threading

import numpy as np
import pytest

import wgtensor as wt
from conftest import make_context


def test_default_context_is_made_once_and_with_overrides_it_thread_locally():
    d = wt.get_default_context()
    assert d is wt.get_default_context() and d.backend in ("cpu", "webgpu")
    cpu = make_context("cpu")
    seen = {}
    with cpu:
        assert wt.zeros(2).ctx is cpu
        t = threading.Thread(target=lambda: seen.setdefault("other", wt.get_default_context()))
        t.start()
        t.join()
    assert seen["other"] is d  # the block is this thread's only
    assert wt.get_default_context() is d


def test_backend_selection_and_errors():
    assert wt.Context(backend="cpu").backend == "cpu"
    with pytest.raises(ValueError, match="backend must be"):
        wt.Context(backend="cuda")
    with pytest.raises(wt.UnavailableError, match="cannot load the webgpu library"):
        wt.Context(backend="webgpu", library="/nonexistent/libwebgpu.so")
    with pytest.raises(wt.UnavailableError) as e:
        wt.Context(backend="webgpu", adapter="no such adapter name")
    assert e.value.status == "backend unavailable"  # wgt_status_name


def test_devices_lists_adapters():
    make_context("webgpu")
    lines = wt.devices()
    assert lines[0].startswith("library: ") and any(l.startswith("[0]") for l in lines)


def test_stats_sync_trim_describe(ctx):
    a = wt.ones((64,)) * 3
    a.eval()
    ctx.sync()
    s = ctx.stats()
    assert s["ops_run"] >= 1 and set(s) >= {"device_bytes_in_use", "launches", "submits"}
    ctx.trim()
    assert "backend" in ctx.describe().lower()


def test_errors_map_to_python_exceptions(ctx):
    a = wt.zeros((2, 3))
    with pytest.raises(ValueError, match="do not broadcast"):  # shapes
        a + wt.zeros(4)
    with pytest.raises(TypeError, match="wgt_sqrt"):  # dtypes
        wt.sqrt(wt.arange(3))
    with pytest.raises(IndexError, match="out of range"):  # indices
        wt.take(a, wt.asarray([0, 5]), axis=1)
    with pytest.raises(ValueError):  # arguments
        wt.sum(a, axis=7)
    with pytest.raises(ValueError, match="two contexts"):
        a + wt.zeros((2, 3), ctx=make_context("cpu" if ctx.backend == "webgpu" else "webgpu"))


def test_out_of_memory_becomes_memory_error():
    make_context("webgpu")
    small = wt.Context(backend="webgpu", max_device_bytes=1 << 20, quiet=True)
    with pytest.raises(MemoryError, match="budget|memory"):
        (wt.ones((1 << 20,), ctx=small) + 1).numpy()


def test_device_loss_becomes_device_lost_error():
    c = wt.Context(backend="webgpu", quiet=True) if make_context("webgpu") else None
    t = wt.ones(8, ctx=c) + 1
    c.simulate_device_loss()
    with pytest.raises(wt.DeviceLostError, match="lost"):
        (t * 2).numpy()
    with pytest.raises(wt.DeviceLostError):
        c.check()


def test_timeout_becomes_timeout_error():
    make_context("webgpu")
    try:
        c = wt.Context(backend="webgpu", timeout_ms=1, quiet=True)
    except TimeoutError as e:  # starting the device passed 1 ms itself
        pytest.skip("creating a device passed the 1 ms bound: %s" % e)
    a = wt.random.uniform(-1, 1, size=(1024, 1024), seed=7, ctx=c)
    # More work each time until the device cannot finish it in 1 ms (one product on lavapipe,
    # up to 256 on a fast GPU), as tests/test_timeouts.c does.
    with pytest.raises(TimeoutError, match="1 ms"):
        for k in (1, 4, 16, 64, 256):
            held = [a @ a for _ in range(k)]
            wt.eval(*held)
            c.sync()


def test_two_threads_with_their_own_contexts():
    make_context("webgpu")
    results, errors = {}, []

    def work(backend):
        try:
            c = wt.Context(backend=backend, quiet=True)
            x = wt.asarray(np.arange(256, dtype=np.float32).reshape(16, 16), ctx=c)
            for _ in range(20):
                x = (x @ x.T) / 1000.0
            results[backend] = x.numpy().copy()
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    ts = [threading.Thread(target=work, args=(b,)) for b in ("cpu", "webgpu")]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors
    np.testing.assert_allclose(results["cpu"], results["webgpu"], rtol=1e-4)


def test_one_context_shared_by_threads_is_serialised():
    c = make_context("webgpu")
    x = wt.asarray(np.ones((64, 64), np.float32), ctx=c)
    errors = []

    def work():
        try:
            for _ in range(30):
                y = (x @ x) * 0.5
                assert y.numpy()[0, 0] == 32.0
        except Exception as e:  # pragma: no cover
            errors.append(e)

    ts = [threading.Thread(target=work) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors
