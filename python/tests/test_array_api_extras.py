"""Edges of the array API functions written in Python (wgtensor/_array_api.py), beyond the
conformance module's main cases."""
import numpy as np
import pytest

import wgtensor as wt


def test_cumulative_sum_edges():
    a = np.array([1.5, -2.0, 4.0], np.float32)
    assert np.array_equal(wt.cumulative_sum(wt.asarray(a)).numpy(), np.cumsum(a))
    assert np.array_equal(wt.cumulative_sum(wt.asarray(a), include_initial=True).numpy(), [0, 1.5, -0.5, 3.5])
    i = wt.asarray(np.array([[1, 2], [3, 4]], np.int32))
    assert np.array_equal(wt.cumulative_sum(i, axis=-1, dtype=wt.float32).numpy(), [[1, 3], [3, 7]])
    with pytest.raises(ValueError, match="axis is required"):
        wt.cumulative_sum(i)
    with pytest.raises(ValueError, match="out of range"):
        wt.cumulative_sum(i, axis=2)


def test_diff_edges():
    a = np.arange(12, dtype=np.float32).reshape(3, 4) ** 2
    t = wt.asarray(a)
    assert np.array_equal(wt.diff(t, n=0).numpy(), a)
    assert np.array_equal(wt.diff(t, axis=0, n=3).numpy(), np.diff(a, axis=0, n=3))  # empty along axis 0
    assert np.array_equal(wt.diff(t, n=5).numpy(), np.diff(a, n=5))
    app = wt.asarray(a[:, :1])
    assert np.array_equal(wt.diff(t, append=app).numpy(), np.diff(a, append=a[:, :1]))
    with pytest.raises(ValueError, match="n must be at least 0"):
        wt.diff(t, n=-1)


def test_unstack_and_complex_parts():
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    parts = wt.unstack(wt.asarray(a), axis=-1)
    assert len(parts) == 4 and all(np.array_equal(p.numpy(), a[..., k]) for k, p in enumerate(parts))
    t = wt.asarray(a)
    assert wt.conj(t) is t and wt.real(t) is t
    im = wt.imag(wt.asarray(np.ones((2, 2), np.int32)))
    assert im.dtype == wt.int32 and not im.numpy().any()


def test_namespace_info():
    info = wt.__array_namespace_info__()
    assert info.default_device() is wt.get_default_context()
    assert info.default_dtypes()["indexing"] == wt.int32
    assert set(info.dtypes(kind="integral")) == {"int8", "int16", "int32", "uint8", "uint16", "uint32"}
    assert "bool" in info.dtypes() and "float16" in info.dtypes(kind=("real floating",))
    with pytest.raises(ValueError, match="unknown kind"):
        info.dtypes(kind="complex64")
