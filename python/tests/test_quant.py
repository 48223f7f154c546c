"""Quantized weights from Python: q8_0 / q4_0 round trips within ggml's bounds, products with
a quantized weight, KV-cache appends, GGUF files written and read back, and errors."""
import numpy as np
import pytest

import wgtensor as wt


def rows(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def test_block_dtypes(ctx):
    assert (wt.q8_0.block_size, wt.q8_0.block_bytes) == (32, 34)
    assert (wt.q4_0.block_size, wt.q4_0.block_bytes) == (32, 18)
    assert wt.q8_0 == "q8_0" and wt.q4_0 != wt.q8_0 and wt.q8_0.numpy is None


def ggml_reference(a, dt):
    """ggml's reference quantization (docs/quant.md) in NumPy, dequantized: the f16 scale d of
    each block of 32 and the codes computed with the f32 d, as quantize_row_q*_0_ref does."""
    b = a.reshape(-1, 32)
    if dt == "q8_0":
        d = np.abs(b).max(1, keepdims=True) / np.float32(127)
        inv = np.where(d != 0, np.float32(1) / np.where(d != 0, d, 1), 0).astype(np.float32)
        x = b * inv
        q = np.sign(x) * np.floor(np.abs(x) + np.float32(0.5))  # half away from zero
    else:
        m = np.take_along_axis(b, np.abs(b).argmax(1)[:, None], 1)
        d = m / np.float32(-8)
        inv = np.where(d != 0, np.float32(1) / np.where(d != 0, d, 1), 0).astype(np.float32)
        q = np.minimum(15, np.floor(b * inv + np.float32(8.5))) - 8
    return (q * d.astype(np.float16).astype(np.float32)).reshape(a.shape)


@pytest.mark.parametrize("dt,levels", [("q8_0", 127), ("q4_0", 8)])
def test_round_trip_matches_ggml_reference_and_bounds(ctx, dt, levels):
    a = rows((3, 64))
    a[0, :32] = 0  # an all-zero block has scale 0
    q = wt.quantize(wt.asarray(a), dt)
    assert q.dtype == dt and q.shape == (3, 64) and q.nbytes == 6 * getattr(wt, dt).block_bytes
    back = wt.dequantize(q).numpy()
    assert back.dtype == np.float32
    np.testing.assert_allclose(back, ggml_reference(a, dt), rtol=1e-6, atol=0)
    step = np.abs(a.reshape(3, 2, 32)).max(-1, keepdims=True) / levels  # d of each block
    err = np.abs(back - a).reshape(3, 2, 32)
    # half a step from rounding, plus f16 rounding of the scale times the largest code; q4_0's
    # codes stop at +7, so a value of the other sign than the block's extreme may be a step off
    assert np.all(err <= step * ((0.5 if dt == "q8_0" else 1.0) + levels * 2.0 ** -10) + 1e-7)
    assert not np.array_equal(back, a)


def test_matmul_quantized_equals_dequantized_product(ctx):
    x, w = rows((5, 64), 1), rows((7, 64), 2)
    wq = wt.quantize(wt.asarray(w), wt.q8_0)
    ref = x @ wt.dequantize(wq).numpy().T
    np.testing.assert_allclose(wt.matmul_quantized(wt.asarray(x), wq).numpy(), ref, rtol=1e-5, atol=1e-5)


def test_quantized_numpy_is_an_error_naming_dequantize(ctx):
    q = wt.quantize(wt.asarray(rows((2, 32))), wt.q4_0)
    with pytest.raises(TypeError, match="dequantize"):
        q.numpy()
    with pytest.raises(TypeError, match="dequantize"):
        np.asarray(q)
    assert "q4_0" in repr(q) and len(q.tobytes()) == 36


def test_quantize_errors(ctx):
    with pytest.raises(ValueError):  # K not a multiple of 32: WGT_ERR_SHAPE
        wt.quantize(wt.asarray(rows((2, 33))), wt.q8_0)
    with pytest.raises(TypeError):
        wt.quantize(wt.asarray(np.ones((1, 32), np.int32)), wt.q8_0)
    with pytest.raises(TypeError, match="quantize"):
        wt.asarray(rows((1, 32)), dtype=wt.q8_0)


def test_kv_cache_append(ctx):
    cache = wt.zeros((2, 6, 4))
    x = rows((2, 2, 4))
    wt.kv_cache_append(cache, x, 3)
    want = np.zeros((2, 6, 4), np.float32)
    want[:, 3:5] = x
    np.testing.assert_array_equal(cache.numpy(), want)
    with pytest.raises(ValueError):
        wt.kv_cache_append(cache, x, 5)  # past the end


def test_gguf_round_trip(ctx, tmp_path):
    w = rows((4, 64), 3)
    tensors = {"w.q8": wt.quantize(wt.asarray(w), wt.q8_0), "w.f32": wt.asarray(w),
               "ids": wt.asarray(np.arange(5, dtype=np.int32))}
    meta = {"general.name": "tiny", "ctx": 128, "eps": 0.5, "neg": -3, "flag": True, "u8": np.uint8(7),
            "tokens": ["a", "bc"], "scores": [0.25, -1.5], "types": np.array([1, 2], np.int32)}
    p = tmp_path / "m.gguf"
    wt.gguf.write(p, tensors, meta)
    with wt.gguf.open(p) as f:
        assert f.version == 3
        assert f.metadata == {"general.name": "tiny", "ctx": 128, "eps": 0.5, "neg": -3, "flag": True, "u8": 7,
                              "tokens": ["a", "bc"], "scores": [0.25, -1.5], "types": [1, 2]}
        assert list(f.tensors) == ["w.q8", "w.f32", "ids"]
        assert f.tensors["w.q8"].shape == (4, 64) and f.tensors["w.q8"].dtype == wt.q8_0
        q = f.load("w.q8")
        assert q.tobytes() == tensors["w.q8"].tobytes()
        np.testing.assert_array_equal(f.load("w.f32").numpy(), w)
        np.testing.assert_array_equal(f.load("ids").numpy(), np.arange(5))
        with pytest.raises(ValueError):
            f.load("absent")


def test_gguf_errors(ctx, tmp_path):
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"GGUF\x03\x00\x00\x00" + b"\xff" * 8)
    with pytest.raises(ValueError):
        wt.gguf.open(bad)
    with pytest.raises(FileNotFoundError):
        wt.gguf.open(tmp_path / "missing.gguf")
    with pytest.raises(wt.UnavailableError):  # a directory cannot be read as a file
        wt.gguf.open(tmp_path)
    with pytest.raises(TypeError):
        wt.gguf.write(tmp_path / "x.gguf", {}, {"k": object()})
    with pytest.raises(ValueError):
        wt.gguf.write(tmp_path / "x.gguf", {}, {"k": 1}, alignment=3)
