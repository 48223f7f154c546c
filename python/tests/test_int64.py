"""int64 and uint64 against NumPy: creation from arrays and Python ints past 2^53, numpy()
back, casts, views, arithmetic that wraps modulo 2^64, comparisons, sums in 64 bits, DLPack."""
import numpy as np
import pytest

import wgtensor as wt

EDGES = np.array([0, 1, -1, 2**32 - 1, 2**32, -2**32, 2**53 + 1, -(2**53 + 1), 2**62 + 2**38 + 1,
                  np.iinfo(np.int64).max, np.iinfo(np.int64).min, 2**40 + 2**16 + 1], dtype=np.int64)


@pytest.mark.parametrize("d,npt", [(wt.int64, np.int64), (wt.uint64, np.uint64)], ids=["int64", "uint64"])
def test_int64_matches_numpy(ctx, d, npt):
    a = EDGES.astype(npt)
    t = wt.asarray(a, dtype=d)
    assert t.dtype == d and d.numpy == np.dtype(npt) and wt.int64 == np.int64
    np.testing.assert_array_equal(t.numpy(), a)
    np.testing.assert_array_equal(t[::-2].numpy(), a[::-2])
    col, row = t.reshape((-1, 1)), t.reshape((1, -1))
    ac, ar = a.reshape(-1, 1), a.reshape(1, -1)
    with np.errstate(over="ignore"):
        for got, want in [(col + row, ac + ar), (col - row, ac - ar), (col * row, ac * ar),
                          (wt.maximum(col, row), np.maximum(ac, ar)), (col & row, ac & ar), (col ^ row, ac ^ ar),
                          (-t, -a)]:
            np.testing.assert_array_equal(got.numpy(), want)
    np.testing.assert_array_equal((col < row).numpy().astype(bool), ac < ar)
    np.testing.assert_array_equal((col == row).numpy().astype(bool), ac == ar)
    np.testing.assert_array_equal(t.astype(wt.float32).numpy(), a.astype(np.float32))
    np.testing.assert_array_equal(t.astype(wt.int32).numpy(), a.astype(np.int32))
    big = 2**60 + 3  # a Python int no double holds: the scalar keeps every bit
    np.testing.assert_array_equal((t + big).numpy(), a + npt(big))


def test_int64_sums_in_64_bits_and_dlpack(ctx):
    a = np.array([2**31 - 1] * 5 + [-7], dtype=np.int32)
    t = wt.asarray(a)
    s = wt.asarray(np.arange(-3, 9, dtype=np.int64), dtype=wt.int64)
    assert int(s.sum().numpy()) == int(np.arange(-3, 9).sum())
    np.testing.assert_array_equal(wt.asarray(a.astype(np.int64), dtype=wt.int64).sum().numpy(),
                                  a.astype(np.int64).sum())
    np.testing.assert_array_equal(np.from_dlpack(s), np.arange(-3, 9, dtype=np.int64))
    assert np.from_dlpack(s).dtype == np.int64
    assert t.dtype == wt.int32  # a NumPy int32 array stays int32


def test_int64_ranges_and_refusals(ctx):
    with pytest.raises(ValueError, match="outside the range of u64"):
        wt.asarray(np.array([-1], np.int64), dtype=wt.uint64)
    with pytest.raises(OverflowError):
        wt.asarray(np.array([1], np.uint64), dtype=wt.uint64) + (-1)
    u = wt.asarray(np.array([2**64 - 1], np.uint64), dtype=wt.uint64)
    assert int(u.numpy()[0]) == 2**64 - 1
    assert wt.result_type(wt.uint32, wt.int32) == wt.int64
    with pytest.raises(TypeError):
        wt.result_type(wt.uint64, wt.int8)
    assert wt.iinfo(wt.int64).max == 2**63 - 1 and wt.iinfo(wt.uint64).max == 2**64 - 1
    with pytest.raises(TypeError, match="i64"):
        wt.asarray(np.array([1, 2], np.int64), dtype=wt.int64) // 2
