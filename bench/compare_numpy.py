#!/usr/bin/env python3
"""Runs `wgtensor bench` workloads in NumPy and prints them beside wgtensor's CPU backend.

Usage: python3 bench/compare_numpy.py WGTENSOR_JSON [--json OUT] [--plot OUT.png]

WGTENSOR_JSON is what `wgtensor bench --device cpu --json FILE` wrote on the same machine
(`--quick` sizes suit a small machine). Each row's workload is rebuilt here in NumPy with the
same shapes and dtype and timed as wgtensor timed its row on the CPU (the wall clock over
back-to-back batches after a warm-up; see bench_common.time_like_wgtensor). NumPy runs the
composed workloads (softmax, the norms, attention) the way a NumPy user writes them, with
temporaries. The ratio is NumPy time / wgtensor time: above 1, wgtensor is faster.

Debian's NumPy is python3-numpy (and python3-matplotlib for --plot); where `python3` is
another interpreter, run it as /usr/bin/python3.
"""
import json
import sys

from bench_common import attention_dims, parse_size, plot_ratios, print_read_bound, read_args, time_like_wgtensor


def workload(np, name, size):
    """A zero-argument function running the workload in NumPy, or None if unknown."""
    rng = np.random.default_rng(0)
    f = np.float32
    dims = parse_size(size)
    if name == "matvec_f16":  # w [n, k] @ v [k], f16 in and out, as wgtensor's row
        n, k = dims
        w = (rng.random((n, k), dtype=f) * 2 - 1).astype(np.float16)
        v = (rng.random(k, dtype=f) * 2 - 1).astype(np.float16)
        return lambda: w @ v
    if name.startswith(("gemm", "matvec")):
        b, m, k, n = dims if len(dims) == 4 else [1] + dims
        batch = (b,) if b > 1 else ()  # one product as a NumPy user writes it: 2-D, straight to BLAS
        a = rng.random(batch + (m, k), dtype=f) * 2 - 1
        w = rng.random(batch + (k, n), dtype=f) * 2 - 1
        return lambda: np.matmul(a, w)
    if name.startswith("attention"):
        h, lq, lk, d = attention_dims(dims)
        q = rng.standard_normal((h, lq, d), dtype=f)
        k, v = (rng.standard_normal((h, lk, d), dtype=f) for _ in range(2))
        scale = f(1 / np.sqrt(d))
        # The causal row (lq = lk): query i sees keys j <= i.
        masked = np.triu(np.ones((lq, lk), dtype=bool), 1) if name == "attention_causal" else None

        def attention():
            w = (q @ k.transpose(0, 2, 1)) * scale
            if masked is not None:
                w[:, masked] = -np.inf
            w = np.exp(w - w.max(-1, keepdims=True))
            return (w / w.sum(-1, keepdims=True)) @ v
        return attention
    rows, cols = dims
    x = rng.standard_normal((rows, cols), dtype=f)
    if name == "copy_f32":
        return lambda: np.negative(x)
    if name == "add_f32":
        y = rng.standard_normal((rows, cols), dtype=f)
        return lambda: x + y
    if name == "add_broadcast_f32":
        y = rng.standard_normal(cols, dtype=f)
        return lambda: x + y
    if name == "sum_all_f32":
        return lambda: x.sum()
    if name == "sum_rows_f32":
        return lambda: x.sum(axis=1)
    if name == "softmax_rows":
        def softmax():
            e = np.exp(x - x.max(-1, keepdims=True))
            return e / e.sum(-1, keepdims=True)
        return softmax
    if name == "layer_norm_rows":
        return lambda: (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + f(1e-5))
    if name == "rms_norm_rows":
        return lambda: x / np.sqrt((x * x).mean(-1, keepdims=True) + f(1e-5))
    return None


def main(argv):
    args = read_args(argv, __doc__)
    if args is None:
        return 2
    ours, out_json, plot = args
    try:
        import numpy as np
    except ImportError:
        print(f"NumPy is not importable by {sys.executable} (on Debian: apt install python3-numpy, "
              "then run this with /usr/bin/python3)")
        return 1
    if ours.get("backend") != "cpu":
        print(f"note: these wgtensor rows ran on {ours['device']}, not the CPU backend "
              "(`wgtensor bench --device cpu` gives the CPU rows)")
    print(f"wgtensor on {ours['device']} ({ours.get('timing', 'wall-clock')}) against NumPy {np.__version__}; "
          "ratio: NumPy / wgtensor, above 1 wgtensor is faster")
    print(f"{'workload':22} {'size':18} {'wgtensor ms':>12} {'numpy ms':>10} {'ratio':>7}")
    rows = []
    for r in ours["rows"]:
        fn = workload(np, r["name"], r["size"])
        if fn is None:
            continue
        t = time_like_wgtensor(fn)
        ratio = t / r["ms"] if r["ms"] > 0 else 0.0
        rows.append({"name": r["name"], "size": r["size"], "wgtensor_ms": r["ms"], "numpy_ms": t, "ratio": ratio,
                     "ok": r["ok"], "gbyte": r["gbyte"], "gbyte_read": r.get("gbyte_read", 0)})
        print(f"{r['name']:22} {r['size']:18} {r['ms']:12.3f} {t:10.3f} {ratio:7.2f}"
              f"{'' if r['ok'] else '  (wgtensor check FAILED)'}")
        del fn
    print_read_bound(rows, "numpy", "NumPy")
    if out_json:
        json.dump({"device": ours["device"], "numpy": np.__version__, "rows": rows}, open(out_json, "w"), indent=1)
    if plot:
        plot_ratios(rows, plot, "NumPy time / wgtensor time (1 = parity)", f"wgtensor vs NumPy on {ours['device']}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
