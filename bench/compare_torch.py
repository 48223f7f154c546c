#!/usr/bin/env python3
"""Runs wgtensor's benchmark workloads in PyTorch and prints wgtensor/PyTorch ratios.

Usage: python3 bench/compare_torch.py WGTENSOR_JSON [--json OUT] [--plot OUT.png]

WGTENSOR_JSON is what `wgtensor bench --json FILE` wrote (same machine, same run). Each
workload is rebuilt here with the same shapes, warmed up, and timed as the median of
repeats with torch.cuda.synchronize() around it (TF32 off, so f32 GEMM is real f32).
The ratio column is PyTorch time / wgtensor time: 1.0 means parity, above 1 faster.
"""
import json
import statistics
import sys
import time


def parse_size(size):
    return [int(x) for x in size.replace("h", "").split("x" if "x" in size else " ")]


def workload(torch, name, size, dev):
    """A zero-argument function running the workload in PyTorch, or None if unknown."""
    f = torch.float32
    dims = parse_size(size)
    if name.startswith(("gemm", "matvec")):
        if len(dims) == 4:
            b, m, k, n = dims
        else:
            (m, k, n), b = dims, 1
        a = torch.rand(b, m, k, device=dev, dtype=f) * 2 - 1
        w = torch.rand(b, k, n, device=dev, dtype=f) * 2 - 1
        return lambda: torch.matmul(a, w)
    if name == "attention_causal":
        h, s, d = dims
        q, k, v = (torch.randn(h, s, d, device=dev, dtype=f) for _ in range(3))
        sdpa = torch.nn.functional.scaled_dot_product_attention
        return lambda: sdpa(q, k, v, is_causal=True)
    rows, cols = dims
    x = torch.randn(rows, cols, device=dev, dtype=f)
    if name == "add_f32":
        y = torch.randn(rows, cols, device=dev, dtype=f)
        return lambda: x + y
    if name == "add_broadcast_f32":
        y = torch.randn(cols, device=dev, dtype=f)
        return lambda: x + y
    if name == "sum_all_f32":
        return lambda: x.sum()
    if name == "sum_rows_f32":
        return lambda: x.sum(dim=1)
    if name == "softmax_rows":
        return lambda: torch.softmax(x, dim=-1)
    if name == "layer_norm_rows":
        return lambda: torch.nn.functional.layer_norm(x, (cols,), eps=1e-5)
    if name == "rms_norm_rows":
        return lambda: x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5)
    return None


def time_ms(torch, fn, repeats=10):
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    ours = json.load(open(argv[1]))
    out_json = argv[argv.index("--json") + 1] if "--json" in argv else None
    plot = argv[argv.index("--plot") + 1] if "--plot" in argv else None
    try:
        import torch
    except ImportError:
        print("PyTorch is not importable here: nothing to compare")
        return 0
    if not torch.cuda.is_available():
        print("PyTorch sees no CUDA device: nothing to compare")
        return 0
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = "cuda"
    print(f"wgtensor on {ours['device']} against PyTorch {torch.__version__} on {torch.cuda.get_device_name()}")
    print(f"{'workload':22} {'size':18} {'wgtensor ms':>12} {'torch ms':>10} {'ratio':>7}")
    rows = []
    for r in ours["rows"]:
        fn = workload(torch, r["name"], r["size"], dev)
        if fn is None:
            continue
        t = time_ms(torch, fn)
        ratio = t / r["ms"] if r["ms"] > 0 else 0.0
        rows.append({"name": r["name"], "size": r["size"], "wgtensor_ms": r["ms"], "torch_ms": t, "ratio": ratio})
        print(f"{r['name']:22} {r['size']:18} {r['ms']:12.3f} {t:10.3f} {ratio:7.2f}")
        del fn
        torch.cuda.empty_cache()
    if out_json:
        json.dump({"device": ours["device"], "torch": torch.__version__, "rows": rows}, open(out_json, "w"), indent=1)
    if plot:
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            print("matplotlib is not importable: no plot")
            return 0
        fig, ax = plt.subplots(figsize=(9, 4))
        ax.barh([r["name"] for r in rows], [r["ratio"] for r in rows])
        ax.axvline(1.0, color="black", linewidth=0.8)
        ax.set_xlabel("PyTorch time / wgtensor time (1 = parity)")
        ax.set_title(f"wgtensor vs PyTorch on {ours['device']}")
        fig.tight_layout()
        fig.savefig(plot, dpi=120)
        print(f"plot written to {plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
