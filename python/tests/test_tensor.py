"""The Tensor type: properties, repr, len, iteration, item, tolist and NumPy views and copies."""
import numpy as np
import pytest

import wgtensor as wt


def test_properties_match_numpy(ctx):
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    t = wt.asarray(a)
    assert t.shape == a.shape and t.ndim == 3 and t.size == 24 and len(t) == 2
    assert t.strides == a.strides and t.itemsize == 4 and t.nbytes == a.nbytes
    assert t.dtype == wt.float32 and t.dtype == np.float32 and t.dtype == "float32" and t.dtype != "int32"
    assert t.device is ctx and t.ctx is ctx
    tt = t.T
    assert tt.shape == (4, 3, 2) and tt.strides == a.T.strides
    np.testing.assert_array_equal(tt.numpy(), a.T)


@pytest.mark.parametrize("d, npd", [(wt.float32, np.float32), (wt.float16, np.float16), (wt.int32, np.int32),
                                    (wt.uint32, np.uint32)])
def test_dtypes_round_trip(ctx, d, npd):
    a = (np.arange(12) % 7).astype(npd).reshape(3, 4)
    t = wt.asarray(a, dtype=d)
    assert t.dtype == d and t.dtype == npd and t.dtype == np.dtype(npd)
    out = t.numpy()
    assert out.dtype == npd
    np.testing.assert_array_equal(out, a)


def test_repr_and_str_show_values_and_truncate(ctx):
    t = wt.asarray([[1.5, 2.0], [3.0, 4.0]])
    assert repr(t) == "tensor([[1.5, 2. ],\n        [3. , 4. ]], dtype=float32)"
    assert str(wt.arange(3)) == "[0 1 2]"
    big = repr(wt.arange(100000))
    assert "..." in big and len(big) < 200


def test_len_iter_item_tolist(ctx):
    a = np.arange(6, dtype=np.int32).reshape(3, 2)
    t = wt.asarray(a)
    rows = list(t)
    assert len(rows) == 3 and all(r.shape == (2,) for r in rows)
    np.testing.assert_array_equal(rows[2].numpy(), a[2])
    assert t.tolist() == a.tolist()
    assert wt.asarray(7).item() == 7 and isinstance(wt.asarray(7).item(), int)
    assert wt.asarray([2.5]).item() == 2.5
    assert float(wt.asarray(2.5)) == 2.5 and int(wt.asarray(3)) == 3 and bool(wt.asarray(1))
    with pytest.raises(TypeError):
        len(wt.asarray(1.0))
    with pytest.raises(TypeError):
        iter(wt.asarray(1.0)).__next__()
    with pytest.raises(ValueError):
        t.item()
    with pytest.raises(ValueError):
        bool(t)


def test_numpy_is_a_read_only_zero_copy_view_when_contiguous(ctx):
    t = wt.asarray(np.arange(8, dtype=np.float32))
    v = t.numpy()
    assert not v.flags.writeable
    assert v.base is not None
    w = t.numpy()
    # The same host copy: both views point at the same memory.
    assert v.__array_interface__["data"][0] == w.__array_interface__["data"][0]
    with pytest.raises(ValueError):
        v[0] = 1
    del t  # the view keeps the tensor, and so its storage, alive
    np.testing.assert_array_equal(v, np.arange(8, dtype=np.float32))


def test_numpy_of_a_strided_view_is_one_row_major_copy(ctx):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = wt.asarray(a).T
    v = t.numpy()
    assert v.flags.c_contiguous and not v.flags.writeable
    np.testing.assert_array_equal(v, a.T)
    c = np.array(t)  # np.array copies: writable
    c[0, 0] = 100
    np.testing.assert_array_equal(t.numpy(), a.T)


def test_memoryview_format_and_shape(ctx):
    m = memoryview(wt.asarray(np.zeros((2, 3), np.float16)))
    assert m.format == "e" and m.shape == (2, 3) and m.readonly and m.nbytes == 12
    f = np.frombuffer(wt.zeros(3), dtype=np.float32)
    assert not f.flags.writeable
    with pytest.raises(ValueError):  # the exporter refuses a writable buffer
        f.setflags(write=True)


def test_to_moves_between_contexts():
    from conftest import make_context
    cpu, gpu = make_context("cpu"), make_context("webgpu")
    t = wt.asarray(np.arange(5, dtype=np.float32), ctx=cpu)
    g = t.to(gpu)
    assert g.ctx is gpu and t.to(cpu) is t
    np.testing.assert_array_equal((g * 2).numpy(), np.arange(5) * 2)
    with pytest.raises(ValueError, match="two contexts"):
        t + g


def test_tensor_cannot_be_made_directly():
    with pytest.raises(TypeError):
        wt.Tensor()
