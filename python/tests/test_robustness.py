"""Bad Python inputs raise, never crash; memory does not grow over many small ops."""
import gc
import resource
import tracemalloc

import numpy as np
import pytest

import wgtensor as wt


class BrokenBuffer:
    """An object whose buffer export fails: memoryview() on it raises (Python 3.12 calls
    __buffer__; before it, NumPy reaches __array__, which fails the same way)."""

    def __buffer__(self, flags):  # Python 3.12's protocol
        raise RuntimeError("broken buffer")

    def __array__(self, dtype=None, copy=None):
        raise RuntimeError("broken __array__")


def released_buffer():
    """A buffer-protocol object (in C) whose export fails: a released memoryview."""
    m = memoryview(b"\0" * 16)
    m.release()
    return m


class Interface:
    """An object with a NumPy array interface that is broken in a given way."""

    def __init__(self, value):
        self.value = value

    @property
    def __array_interface__(self):
        if isinstance(self.value, Exception):
            raise self.value
        return self.value


class ArrayGivesString:
    def __array__(self, dtype=None, copy=None):
        return "not an array"


def interface(shape, typestr="<f4", data=(0, True)):
    return Interface({"shape": shape, "typestr": typestr, "version": 3, "data": data})


class BrokenLen:
    def __len__(self):
        raise RuntimeError("broken len")

    def __getitem__(self, i):
        raise RuntimeError("broken item")


BAD = [
    ("zeros of None", lambda: wt.zeros(None), TypeError),
    ("zeros of a NaN shape", lambda: wt.zeros((float("nan"), 2)), TypeError),
    ("zeros of a float shape", lambda: wt.zeros(2.0), TypeError),
    ("zeros of a negative shape", lambda: wt.zeros((-1, 2)), ValueError),
    ("zeros of a huge shape", lambda: wt.zeros((2**70,)), ValueError),
    ("zeros of 9 dimensions", lambda: wt.zeros((1,) * 9), ValueError),
    ("zeros with a bad dtype", lambda: wt.zeros(2, dtype="float64"), TypeError),
    ("zeros with a bad dtype object", lambda: wt.zeros(2, dtype=object()), TypeError),
    ("zeros with a bad ctx", lambda: wt.zeros(2, ctx="cpu"), TypeError),
    ("asarray of None", lambda: wt.asarray(None), TypeError),
    ("asarray of a string", lambda: wt.asarray("abc"), TypeError),
    ("asarray of strings", lambda: wt.asarray(["a", "b"]), TypeError),
    ("asarray of objects", lambda: wt.asarray([object()]), TypeError),
    ("asarray of a huge int", lambda: wt.asarray(2**100), ValueError),
    ("asarray of huge ints in a list", lambda: wt.asarray([1, 2**100]), (TypeError, OverflowError, ValueError)),
    ("asarray of complex", lambda: wt.asarray(np.array([1j])), TypeError),
    ("asarray of 9 dimensions", lambda: wt.asarray(np.zeros((1,) * 9)), ValueError),
    ("asarray of a broken buffer", lambda: wt.asarray(BrokenBuffer()), RuntimeError),
    ("asarray of a released buffer", lambda: wt.asarray(released_buffer()), ValueError),
    ("add of a released buffer", lambda: wt.ones(2) + released_buffer(), ValueError),
    ("asarray of a raising array interface", lambda: wt.asarray(Interface(RuntimeError("x"))), RuntimeError),
    ("asarray of an array interface not a dict", lambda: wt.asarray(Interface(5)), ValueError),
    ("asarray of an array interface of a bad type", lambda: wt.asarray(interface((2,), "<zz")), TypeError),
    ("asarray of an array interface at address 0", lambda: wt.asarray(interface((4,))), ValueError),
    ("asarray of an array interface of 2**62 elements", lambda: wt.asarray(interface((2**62,), data=(8, True))),
     ValueError),
    ("asarray of an __array__ giving a string", lambda: wt.asarray(ArrayGivesString()), ValueError),
    ("asarray of a structured array", lambda: wt.asarray(np.zeros(3, dtype=[("a", "i4"), ("b", "f4")])), TypeError),
    ("asarray of datetimes", lambda: wt.asarray(np.array(["2020-01-01"], dtype="datetime64[D]")), TypeError),
    ("asarray of a broken sequence", lambda: wt.asarray(BrokenLen()), TypeError),
    ("add of None", lambda: wt.ones(2) + None, TypeError),
    ("add of a string", lambda: wt.ones(2) + "x", TypeError),
    ("add of a huge int", lambda: wt.arange(2) + 2**100, OverflowError),
    ("add of a broken buffer", lambda: wt.add(wt.ones(2), BrokenBuffer()), RuntimeError),
    ("sum over a bad axis type", lambda: wt.ones(2).sum(axis="x"), TypeError),
    ("sum over a huge axis", lambda: wt.ones(2).sum(axis=2**70), ValueError),
    ("sum over a float axis", lambda: wt.ones(2).sum(axis=0.5), TypeError),
    ("reshape to None", lambda: wt.ones(4).reshape(None), TypeError),
    ("reshape to NaN", lambda: wt.ones(4).reshape(float("nan")), TypeError),
    ("reshape with a broken sequence", lambda: wt.ones(4).reshape(BrokenLen()), RuntimeError),
    ("transpose with too few axes", lambda: wt.ones((2, 2)).transpose((0,)), ValueError),
    ("astype None", lambda: wt.ones(2).astype(None), TypeError),
    ("unknown keyword", lambda: wt.sum(wt.ones(2), axes=0), TypeError),
    ("too many arguments", lambda: wt.exp(wt.ones(2), 1, 2), TypeError),
    ("missing argument", lambda: wt.add(wt.ones(2)), TypeError),
    ("concat of nothing", lambda: wt.concat([]), ValueError),
    ("concat of a non-sequence", lambda: wt.concat(3), TypeError),
    ("concat with None inside", lambda: wt.concat([wt.ones(2), None]), TypeError),
    ("split with bad sizes", lambda: wt._core._split_sizes(wt.ones(4), [1, None]), TypeError),
    ("as_strided outside the storage", lambda: wt.as_strided(wt.ones(4), (4,), (2,)), ValueError),
    ("slice with a None bound", lambda: wt.slice(wt.ones(4), 0, None, 2), TypeError),
    ("one_hot with huge classes", lambda: wt.one_hot(wt.asarray([0]), 2**70), ValueError),
    ("leaky_relu with a string slope", lambda: wt.leaky_relu(wt.ones(2), "x"), TypeError),
    ("random with a negative seed", lambda: wt.random.uniform(size=(2,), seed=-1), ValueError),
    ("Context with a huge timeout", lambda: wt.Context(backend="cpu", timeout_ms=2**40), (ValueError, OverflowError)),
    ("pow with a modulus", lambda: pow(wt.ones(2), 2, 3), TypeError),
    ("len of a 0-d tensor", lambda: len(wt.asarray(1.0)), TypeError),
    ("eval of a non-tensor", lambda: wt.eval(wt.ones(1), 3), TypeError),
    ("float of a vector", lambda: float(wt.ones(3)), ValueError),
    ("index with a float tensor", lambda: [0, 1][wt.asarray(1.0)], TypeError),
]


@pytest.mark.parametrize("what, call, exc", BAD, ids=[b[0] for b in BAD])
def test_bad_input_raises(ctx, what, call, exc):
    with pytest.raises(exc):
        call()


def test_memory_does_not_grow_over_many_small_ops(ctx):
    a, b = wt.ones(8), wt.full(8, 2.0)

    def run(n):
        for i in range(n):
            c = (a + b) * 0.5
            c.eval()  # each pair runs (fused into one launch where the backend fuses)
            del c
            if i % 1000 == 999:
                ctx.sync()
        (a + b).numpy()
        ctx.sync()

    n = 50_000  # 100k ops, each run on the device
    run(1000)  # warm up: caches, pools, the first allocations
    gc.collect()
    tracemalloc.start()
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    stats0 = ctx.stats()
    snap0 = tracemalloc.take_snapshot()
    run(n)
    gc.collect()
    snap1 = tracemalloc.take_snapshot()
    growth = sum(s.size_diff for s in snap1.compare_to(snap0, "filename"))
    tracemalloc.stop()
    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    stats1 = ctx.stats()
    assert stats1["ops_run"] - stats0["ops_run"] >= 2 * n, "the ops did not run"
    assert growth < 64 * 1024, "Python allocations grew by %d bytes over %d ops" % (growth, 2 * n)
    assert rss1 - rss0 < 32 * 1024, "peak RSS grew by %d KiB over %d ops" % (rss1 - rss0, 2 * n)
    assert stats1["device_bytes_in_use"] <= stats0["device_bytes_in_use"]
