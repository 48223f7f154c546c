"""The GIL is released around every wait on the device, the waits inside ops included: an op
that must have its input computed before it returns (unique and nonzero size their outputs on
the host, the linalg factorizations read their input back) lets other Python threads run while it waits."""
import threading
import time

import numpy as np
import pytest

import wgtensor as wt


def pending(c):
    """A [n, n] f32 tensor that is still to be computed: a chain of products whose evaluation
    takes a good part of a second (lavapipe runs each on the CPU; the CPU backend is faster)."""
    n, k = (768, 2) if c.backend == "webgpu" else (1024, 6)
    a = wt.random.uniform(-1, 1, size=(n, n), seed=3, ctx=c) / 16.0
    a.numpy()
    x = a
    for _ in range(k):
        x = x @ a
    return x


WAITING_OPS = {
    "numpy": lambda x: x.numpy(),
    "numpy_async": lambda x: x.numpy_async().result(),
    "nonzero": lambda x: wt.nonzero(x),
    "argwhere": lambda x: wt.argwhere(x),
    "unique_values": lambda x: wt.unique_values(x),
    "masked_select": lambda x: wt.masked_select(x, x > 0),
    "linalg.inv": lambda x: wt.linalg.inv(x),
    "linalg.qr": lambda x: wt.linalg.qr(x),
}


@pytest.mark.parametrize("name", list(WAITING_OPS))
def test_ops_that_wait_release_the_gil(ctx, name):
    c = wt.Context(backend=ctx.backend, quiet=True)  # the worker's own context
    x = pending(c)
    took, errors = [], []

    def work():
        try:
            t0 = time.perf_counter()
            WAITING_OPS[name](x)
            took.append(time.perf_counter() - t0)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    # The main thread runs Python meanwhile and notes the longest time it could not: with the
    # GIL held across the wait, that is the whole wait; released, a few switch intervals.
    th = threading.Thread(target=work)
    last, gap = time.perf_counter(), 0.0
    th.start()
    while th.is_alive():
        now = time.perf_counter()
        gap, last = max(gap, now - last), now
    th.join()
    assert not errors, errors
    assert took[0] > 0.05, "%s took %.3f s: too little work to tell whether it holds the GIL" % (name, took[0])
    assert gap < took[0] / 2, "%s took %.3f s and held the GIL for %.3f s of it" % (name, took[0], gap)
