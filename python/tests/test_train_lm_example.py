"""examples/train_lm.py, the Python twin of `wgtensor train-lm`, run for a few seconds on a tiny
configuration: its report has the C tool's lines, the start is the same on the device and the
CPU backend, and training lowers the loss."""
import importlib.util
import os

import pytest

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "train_lm.py")
TEXT = "/usr/share/games/fortunes/wisdom"


def test_train_lm_example_lowers_the_loss(capsys, tmp_path):
    if not os.path.exists(TEXT):
        pytest.skip("the fortunes package is not installed (scripts/setup.sh)")
    spec = importlib.util.spec_from_file_location("train_lm_example", EXAMPLE)
    train_lm = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(train_lm)
    r = train_lm.main(["--seconds", "6", "--text", TEXT, "--layers", "1", "--width", "32", "--heads", "2",
                       "--context", "16", "--batch", "8", "--lr", "1e-2", "--sample", "20", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    for line in ("validation loss at the start:", "unigram baseline", "trained ", "final validation loss",
                 "sample (temperature 0.8):", "result: "):
        assert line in out, out
    assert (tmp_path / "model.safetensors").exists()
    assert r["start"] == pytest.approx(r["start_cpu"], abs=1e-5)
    train = r["train"]
    assert len(train) >= 6, "only %d steps in 6 s" % len(train)
    first, last = sum(train[:3]) / 3, sum(train[-3:]) / 3
    assert last < first - 0.3, (first, last, train)
    assert r["final"] < r["start"] - 0.3, (r["start"], r["final"])


def test_train_lm_example_matches_the_c_model_stream():
    """The weights come from lm_model.c's splitmix64 Box-Muller stream: its first values,
    computed one by one as the C code does, equal the vectorised draw."""
    spec = importlib.util.spec_from_file_location("train_lm_example", EXAMPLE)
    train_lm = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(train_lm)
    import math
    one, many = train_lm.Rng(7), train_lm.Rng(7)
    unit = lambda r: ((r.next() >> 11) + 0.5) / 9007199254740992.0
    expect = []
    for _ in range(5):
        u1 = unit(one)
        u2 = unit(one)
        expect.append(0.02 * math.sqrt(-2 * math.log(u1)) * math.cos(2 * math.pi * u2))
    got = many.normal(5, 0.02)
    assert got.tolist() == pytest.approx(expect, rel=1e-6)
    assert many.state == one.state
