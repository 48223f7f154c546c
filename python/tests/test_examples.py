"""The Python examples: examples/digits.py, run with few epochs (the loss falls on both
backends, they agree, and the classifier beats 90% on the held-out digits), and
examples/user_kernel.py (a WGSL kernel of the user's, checked against NumPy)."""
import importlib.util
import os

import pytest

import numpy as np

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples")


def load(name):
    spec = importlib.util.spec_from_file_location(name + "_example", os.path.join(EXAMPLES, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_digits_example_trains_on_both_backends(capsys):
    pytest.importorskip("sklearn.datasets", reason="the digits come from python3-sklearn")
    digits = load("digits")
    (dev_loss, _, dev_acc), (cpu_loss, _, cpu_acc) = digits.main(["--epochs", "3"])
    out = capsys.readouterr().out
    assert "test accuracy" in out and len(dev_loss) == len(cpu_loss) == 3
    for losses in (dev_loss, cpu_loss):
        assert losses[0] > losses[1] > losses[2], losses
    assert dev_loss == pytest.approx(cpu_loss, rel=1e-3)
    assert dev_acc > 0.9 and cpu_acc > 0.9, (dev_acc, cpu_acc)


@pytest.mark.parametrize("backend", ["webgpu", "cpu"])
def test_user_kernel_example_matches_numpy(backend, capsys):
    from conftest import make_context

    make_context(backend)  # fails (or skips where allowed) without WebGPU, as the other tests
    example = load("user_kernel")
    ok, y, z = example.main(backend)
    assert ok and backend + ": hard_swish" in capsys.readouterr().out
    x = np.arange(-5.0, 5.0, 0.01, dtype=np.float32)[:1000].astype(np.float64)
    for got, v in ((y, x), (z, x * 0.5)):
        np.testing.assert_allclose(got, v * np.clip(v + 3, 0, 6) / 6, rtol=1e-6, atol=1e-6)
