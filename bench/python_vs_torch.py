"""The Python package beside PyTorch eager, in one run on one machine:

- per-op overhead of a small elementwise op: `c = a + b` on 1024 float32 elements, many ops
  back to back and one sync (wgtensor records each op lazily and skips those whose result
  nobody holds; PyTorch launches each), us/op; and `c = c + b` in a chain, every result
  used (wgtensor fuses it);
- asarray of a 256 MiB float32 NumPy array onto the device (wgtensor.asarray, evaluated and
  synced) against torch.from_numpy(a).cuda(), GB/s;
- reading 256 MiB back (t.numpy() of a tensor that lives on the device) against
  x.cpu().numpy(), GB/s;
- one larger workload: a 4-layer MLP forward, batch 4096, width 4096 (matmul, bias, relu), ms.

Usage: PYTHONPATH=build/python python3 bench/python_vs_torch.py [--json OUT]
Each figure is the median of several repetitions; prints a table and, with --json, the rows.
"""
import json
import statistics
import sys
import time

import numpy as np

import wgtensor as wt

try:
    import torch
except ImportError:  # the wgtensor column alone
    torch = None


def median_time(fn, reps=7):
    fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main():
    ctx = wt.get_default_context()
    cuda = torch is not None and torch.cuda.is_available()
    sync_t = torch.cuda.synchronize if cuda else (lambda: None)
    dev = "cuda" if cuda else "cpu"
    rows = []

    def row(name, unit, ours, theirs):
        rows.append({"row": name, "unit": unit, "wgtensor": ours, "torch": theirs})

    n_ops = 10000
    a, b = wt.ones(1024), wt.ones(1024)

    def ours_ops():
        for _ in range(n_ops):
            c = a + b
        c.eval()
        ctx.sync()

    ta = tb = None
    if torch is not None:
        ta, tb = torch.ones(1024, device=dev), torch.ones(1024, device=dev)

    def torch_ops():
        for _ in range(n_ops):
            c = ta + tb
        sync_t()

    row("a + b, 1024 f32, per op", "us", median_time(ours_ops) / n_ops * 1e6,
        median_time(torch_ops) / n_ops * 1e6 if torch is not None else None)

    # The same op in a chain, every result used: wgtensor fuses the chain into few kernels.
    def ours_chain():
        c = a
        for _ in range(n_ops):
            c = c + b
        c.eval()
        ctx.sync()

    def torch_chain():
        c = ta
        for _ in range(n_ops):
            c = c + tb
        sync_t()

    row("c = c + b chain, per op", "us", median_time(ours_chain) / n_ops * 1e6,
        median_time(torch_chain) / n_ops * 1e6 if torch is not None else None)

    host = np.random.default_rng(0).random(64 << 20, dtype=np.float32)  # 256 MiB
    gb = host.nbytes / 1e9

    def ours_up():
        t = wt.asarray(host)
        t.eval()
        ctx.sync()

    def torch_up():
        torch.from_numpy(host).to(dev)
        sync_t()

    row("asarray 256 MiB", "GB/s", gb / median_time(ours_up), gb / median_time(torch_up) if torch else None)

    on_device = wt.asarray(host) * 1  # computed on the device: its host copy is stale
    on_device.eval()
    ctx.sync()

    def ours_down():
        # A fresh result each time, so every read downloads (the first read makes the host
        # copy current and later ones would be free).
        t = on_device + 0
        t.eval()
        ctx.sync()
        t0 = time.perf_counter()
        t.numpy()
        return time.perf_counter() - t0

    x = torch.from_numpy(host).to(dev) if torch is not None else None
    down = statistics.median(ours_down() for _ in range(7))
    row("numpy() 256 MiB", "GB/s", gb / down, gb / median_time(lambda: x.cpu().numpy()) if torch else None)

    batch, width, layers = 4096, 4096, 4
    ws = [wt.random.normal(0, 0.02, size=(width, width), seed=i) for i in range(layers)]
    bs = [wt.zeros(width) for _ in range(layers)]
    xin = wt.random.normal(size=(batch, width), seed=99)

    def ours_mlp():
        h = xin
        for w, bias in zip(ws, bs):
            h = wt.relu(h @ w + bias)
        h.eval()
        ctx.sync()

    def torch_mlp():
        h = txin
        for w, bias in zip(tws, tbs):
            h = torch.relu(h @ w + bias)
        sync_t()

    if torch is not None:
        tws = [torch.from_numpy(w.numpy()).to(dev) for w in ws]
        tbs = [torch.zeros(width, device=dev) for _ in range(layers)]
        txin = torch.from_numpy(xin.numpy()).to(dev)
    row("MLP forward 4096x4096 x4", "ms", median_time(ours_mlp) * 1e3, median_time(torch_mlp) * 1e3 if torch else None)

    print("wgtensor %s on %s; torch %s on %s" % (wt.__version__, ctx.device_name,
                                                 torch.__version__ if torch else "-", dev if torch else "-"))
    print("%-28s %6s %12s %12s" % ("row", "unit", "wgtensor", "torch"))
    for r in rows:
        fmt = lambda v: "%12.3f" % v if v is not None else "%12s" % "-"
        print("%-28s %6s %s %s" % (r["row"], r["unit"], fmt(r["wgtensor"]), fmt(r["torch"])))
    if "--json" in sys.argv[:-1]:
        with open(sys.argv[sys.argv.index("--json") + 1], "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
