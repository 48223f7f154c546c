"""Saving and loading tensors from Python: .npy files that NumPy reads and writes, safetensors
dicts, and malformed files as ValueError."""
import numpy as np
import pytest

import wgtensor as wt


@pytest.mark.parametrize("dt", [np.float32, np.float16, np.int32, np.uint32])
def test_npy_round_trips_with_numpy(ctx, tmp_path, dt):
    a = (np.arange(24).reshape(2, 3, 4) - 7).astype(dt)
    p = tmp_path / "a.npy"
    wt.save(p, wt.asarray(a).transpose((2, 0, 1)))  # a view is written row-major
    got = np.load(p)
    assert got.dtype == a.dtype
    np.testing.assert_array_equal(got, a.transpose(2, 0, 1))
    np.save(tmp_path / "b.npy", np.asfortranarray(a))
    t = wt.load(tmp_path / "b.npy")
    assert t.ctx is ctx and t.dtype == dt
    np.testing.assert_array_equal(t.numpy(), a)


def test_safetensors_round_trip_keeps_names_and_order(ctx, tmp_path):
    tensors = {"w": wt.asarray(np.eye(3, dtype=np.float32)), "b": wt.asarray(np.array([1, 2], np.int32))}
    p = tmp_path / "m.safetensors"
    wt.save(p, tensors)
    back = wt.load(p)
    assert list(back) == ["w", "b"]
    for k in tensors:
        np.testing.assert_array_equal(back[k].numpy(), tensors[k].numpy())


def test_file_errors(ctx, tmp_path):
    bad = tmp_path / "bad.npy"
    bad.write_bytes(b"\x93NUMPY\x01\x00garbage")
    with pytest.raises(ValueError, match="bad.npy"):
        wt.load(bad)
    with pytest.raises(FileNotFoundError):
        wt.load(tmp_path / "missing.npy")
    with pytest.raises(FileNotFoundError):
        wt.load(tmp_path / "missing.safetensors")
    with pytest.raises(ValueError):
        wt.save(tmp_path / "x.npy", {"a": wt.zeros(2)})
    with pytest.raises(TypeError):
        wt.save(tmp_path / "x.npy", np.zeros(2))
