"""examples/digits.py, run with few epochs: the loss falls on both backends, they agree, and
the classifier beats 90% on the held-out digits."""
import importlib.util
import os

import pytest

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "digits.py")


def test_digits_example_trains_on_both_backends(capsys):
    pytest.importorskip("sklearn.datasets", reason="the digits come from python3-sklearn")
    spec = importlib.util.spec_from_file_location("digits_example", EXAMPLE)
    digits = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(digits)
    (dev_loss, _, dev_acc), (cpu_loss, _, cpu_acc) = digits.main(["--epochs", "3"])
    out = capsys.readouterr().out
    assert "test accuracy" in out and len(dev_loss) == len(cpu_loss) == 3
    for losses in (dev_loss, cpu_loss):
        assert losses[0] > losses[1] > losses[2], losses
    assert dev_loss == pytest.approx(cpu_loss, rel=1e-3)
    assert dev_acc > 0.9 and cpu_acc > 0.9, (dev_acc, cpu_acc)
