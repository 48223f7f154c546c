#!/usr/bin/env python3
"""Runs wgtensor's benchmark workloads in PyTorch and prints them side by side.

Usage: python3 bench/compare_torch.py WGTENSOR_JSON [--json OUT] [--plot OUT.png]

WGTENSOR_JSON is what `wgtensor bench --json FILE` or `wgtensor bench-engine --json FILE`
wrote (same machine, same run); the rows say which.

bench rows: each workload is rebuilt here with the same shapes (TF32 off, so f32 GEMM is real
f32) and timed as wgtensor timed its row: about 0.5 s of back-to-back warm-up, then batches of
back-to-back runs (about 20 ms, at most 200, a synchronize each), the median batch's time per
run. Where wgtensor's row used GPU timestamps (the sum of its compute passes), PyTorch's run is
timed by CUDA events around each launch, summed; where it used the wall clock, PyTorch's batch
is timed by the wall clock too. Each is also timed with a synchronize per run ("synced"),
against wgtensor's "ms_synced". Rows that wgtensor also timed chained (its read-bound rows and the
copy: each run takes the previous run's result, one submit per chain) are chained here too, CUDA
events around chains of as many launches, for the read-bound table's chained columns.

bench-engine rows (kind overhead, fusion, memory):
  overhead  the same op chain (x*0.999, x+b, tanh, x+0.001 on [256] f32) in PyTorch eager, one
            launch per op and a .cpu() read per iteration, and as a CUDA graph (captured once,
            then replay and .cpu() read per iteration); microseconds per op = iteration / N.
  fusion    the same 8-op chain and the single add, eager, synchronize around each; the
            figure is chain time / add time.
  memory    the 1000-op chain with each intermediate dropped at once: the caching allocator's
            peak (max_memory_allocated) over the 3 x 4 MB live set.

The ratio columns are PyTorch time / wgtensor time: 1.0 means parity, above 1 wgtensor is
faster. Without PyTorch or CUDA the wgtensor figures are printed alone.
"""
import json
import statistics
import sys
import time

from bench_common import (attention_dims, median_of_batches, parse_size, plot_ratios, print_read_bound, read_args,
                          time_like_wgtensor)


def workload(torch, name, size, dev):
    """A zero-argument function running the workload in PyTorch, or None if unknown."""
    f = torch.float32
    dims = parse_size(size)
    if name == "matvec_f16":  # w [n, k] f16 @ v [k] f16, an f16 result
        n, k = dims
        w = torch.rand(n, k, device=dev, dtype=torch.float16) * 2 - 1
        v = torch.rand(k, device=dev, dtype=torch.float16) * 2 - 1
        return lambda: torch.matmul(w, v)
    if name.startswith(("gemm", "matvec")):
        if len(dims) == 4:
            b, m, k, n = dims
        else:
            (m, k, n), b = dims, 1
        if name.endswith("_tn"):  # a a transposed view of [b, k, m]
            a = (torch.rand(b, k, m, device=dev, dtype=f) * 2 - 1).transpose(1, 2)
        else:
            a = torch.rand(b, m, k, device=dev, dtype=f) * 2 - 1
        if name.endswith("_nt"):  # b a transposed view of [b, n, k], as wgtensor runs it
            w = (torch.rand(b, n, k, device=dev, dtype=f) * 2 - 1).transpose(1, 2)
        else:
            w = torch.rand(b, k, n, device=dev, dtype=f) * 2 - 1
        return lambda: torch.matmul(a, w)
    if name.startswith("attention"):
        # The causal row has lq = lk, where PyTorch's mask is the same as wgtensor's.
        h, lq, lk, d = attention_dims(dims)
        q = torch.randn(h, lq, d, device=dev, dtype=f)
        k, v = (torch.randn(h, lk, d, device=dev, dtype=f) for _ in range(2))
        sdpa = torch.nn.functional.scaled_dot_product_attention
        causal = name == "attention_causal"
        return lambda: sdpa(q, k, v, is_causal=causal)
    if name.startswith("conv2d"):  # x [n, cin, h, w] (*) w [cout, cin, k, k], padding k // 2
        n, cin, h, w_, cout, k = dims
        x = torch.randn(n, cin, h, w_, device=dev, dtype=f)
        w = torch.randn(cout, cin, k, k, device=dev, dtype=f)
        return lambda: torch.nn.functional.conv2d(x, w, padding=k // 2)
    if name == "topk_f32":  # rows x cols, k
        rows, cols, k = dims
        x = torch.randn(rows, cols, device=dev, dtype=f)
        return lambda: torch.topk(x, k, dim=-1, largest=True, sorted=True)
    rows, cols = dims
    x = torch.randn(rows, cols, device=dev, dtype=f)
    if name == "sort_f32":  # stable, as wgtensor's sort
        return lambda: torch.sort(x, dim=-1, stable=True)
    if name == "add_f32":
        y = torch.randn(rows, cols, device=dev, dtype=f)
        return lambda: x + y
    if name == "add_broadcast_f32":
        y = torch.randn(cols, device=dev, dtype=f)
        return lambda: x + y
    if name == "copy_f32":  # as wgtensor's copy reference: one read and one write per element
        return lambda: torch.neg(x)
    if name == "sum_all_f32":
        return lambda: x.sum()
    if name == "sum_rows_f32":
        return lambda: x.sum(dim=1)
    if name in ("softmax_rows", "softmax_vocab"):
        return lambda: torch.softmax(x, dim=-1)
    if name == "cross_entropy_fwd_bwd":  # the mean loss over integer targets and its gradient
        xg = x.detach().requires_grad_(True)
        t = (torch.arange(rows, device=dev) * 7919) % cols
        ce = torch.nn.functional.cross_entropy
        return lambda: torch.autograd.grad(ce(xg, t), xg)[0]
    if name == "layer_norm_rows":
        return lambda: torch.nn.functional.layer_norm(x, (cols,), eps=1e-5)
    if name == "rms_norm_rows":
        return lambda: x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5)
    return None


def chained_workload(torch, name, size, dev):
    """(step, x0) for a row wgtensor also timed chained (`wgtensor bench` step 6: x <- -x, x <- w @ x,
    x <- x @ w), or None."""
    f = torch.float32
    dims = parse_size(size)
    if name == "copy_f32":
        return torch.neg, torch.randn(*dims, device=dev, dtype=f)
    if name == "matvec_f16":
        n, k = dims
        w = torch.rand(n, k, device=dev, dtype=torch.float16) * 2 - 1
        return (lambda x: torch.matmul(w, x)), torch.rand(k, device=dev, dtype=torch.float16) * 2 - 1
    if name.startswith(("gemm", "matvec")) and len(dims) == 3:
        m, k, n = dims
        w = torch.rand(k, n, device=dev, dtype=f) * 2 - 1
        return (lambda x: torch.matmul(x, w)), torch.rand(m, k, device=dev, dtype=f) * 2 - 1
    return None


def time_chained(torch, step, x0, n, phase_s=0.2):
    """Milliseconds per run of chains of n runs (each on the previous one's result) launched back to
    back, CUDA events around the whole chain: three chains to warm up, then the median over at
    least 5 chains and phase_s, as `wgtensor bench` times its chained figure."""
    begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def chain():
        x = x0
        begin.record()
        for _ in range(n):
            x = step(x)
        end.record()
        torch.cuda.synchronize()
        return begin.elapsed_time(end) / n

    for _ in range(3):
        chain()
    return median_of_batches(chain, phase_s)


def time_ms(torch, fn, repeats=10):
    """Median of runs with a synchronize each (wgtensor's "ms_synced")."""
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def time_torch_like_wgtensor(torch, fn, gpu):
    """Per-run milliseconds as `wgtensor bench` takes them; gpu: CUDA events around each launch,
    summed per batch, as wgtensor sums its compute passes' timestamps."""
    events = []

    def batch_ms(n):
        while len(events) < n:
            events.append((torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)))
        for begin, end in events[:n]:
            begin.record()
            fn()
            end.record()
        torch.cuda.synchronize()
        return sum(begin.elapsed_time(end) for begin, end in events[:n]) / n

    return time_like_wgtensor(fn, torch.cuda.synchronize, batch_ms if gpu else None)


def load_torch():
    """torch with CUDA usable, or None (the reason printed)."""
    try:
        import torch
    except ImportError:
        print("PyTorch is not importable here: wgtensor figures only")
        return None
    if not torch.cuda.is_available():
        print("PyTorch sees no CUDA device: wgtensor figures only")
        return None
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    return torch


# ---- bench rows -----------------------------------------------------------------------------


def compare_kernels(ours, torch, out_json, plot):
    if torch is None:
        print(f"wgtensor on {ours['device']}")
        print(f"{'workload':22} {'size':18} {'wgtensor ms':>12}")
        for r in ours["rows"]:
            print(f"{r['name']:22} {r['size']:18} {r['ms']:12.3f}")
        return 0
    dev = "cuda"
    print(f"wgtensor on {ours['device']} against PyTorch {torch.__version__} on {torch.cuda.get_device_name()}")
    print("ms: GPU time where the timing column says gpu (wgtensor: timestamps around its compute passes; "
          "PyTorch: CUDA events around each launch), else wall clock per run in back-to-back batches; "
          "synced: one run with a synchronize. ratio: PyTorch / wgtensor, above 1 wgtensor is faster")
    print(f"{'workload':22} {'size':18} {'timing':>6} {'wgtensor ms':>12} {'torch ms':>10} {'ratio':>7} "
          f"{'synced ratio':>12}")
    rows = []
    for r in ours["rows"]:
        fn = workload(torch, r["name"], r["size"], dev)
        if fn is None:
            continue
        gpu = r.get("timing") == "gpu"
        t = time_torch_like_wgtensor(torch, fn, gpu)
        t_synced = time_ms(torch, fn)
        ratio = t / r["ms"] if r["ms"] > 0 else 0.0
        synced_ratio = t_synced / r["ms_synced"] if r.get("ms_synced", 0) > 0 else 0.0
        rows.append({"name": r["name"], "size": r["size"], "timing": "gpu" if gpu else "wall", "wgtensor_ms": r["ms"],
                     "torch_ms": t, "ratio": ratio, "wgtensor_ms_synced": r.get("ms_synced"),
                     "torch_ms_synced": t_synced, "synced_ratio": synced_ratio, "gbyte": r["gbyte"],
                     "gbyte_read": r.get("gbyte_read", 0), "copy_fraction": r.get("copy_fraction", 0)})
        chained = chained_workload(torch, r["name"], r["size"], dev) if r.get("ms_chained", -1) > 0 else None
        if chained is not None:
            rows[-1]["wgtensor_ms_chained"] = r["ms_chained"]
            rows[-1]["torch_ms_chained"] = time_chained(torch, *chained, r["chain_runs"])
            del chained
        print(f"{r['name']:22} {r['size']:18} {rows[-1]['timing']:>6} {r['ms']:12.3f} {t:10.3f} {ratio:7.2f} "
              f"{synced_ratio:12.2f}")
        del fn
        torch.cuda.empty_cache()
    print_read_bound(rows, "torch", "PyTorch")
    if out_json:
        json.dump({"device": ours["device"], "torch": torch.__version__, "rows": rows}, open(out_json, "w"), indent=1)
    if plot:
        plot_ratios(rows, plot, "PyTorch time / wgtensor time (1 = parity)", f"wgtensor vs PyTorch on {ours['device']}")
    return 0


# ---- bench-engine rows ----------------------------------------------------------------------


def chain(torch, x, b, n):
    """The overhead and memory chain: op i of the cycle x*0.999, x+b, tanh(x), x+0.001."""
    for i in range(n):
        k = i % 4
        if k == 0:
            x = x * 0.999
        elif k == 1:
            x = x + b
        elif k == 2:
            x = torch.tanh(x)
        else:
            x = x + 0.001
    return x


def chain8(torch, x, t):
    """The fusion chain: relu((tanh((x*0.5 + t)*1.5 - 0.25))*2 + 0.125), eight ops."""
    y = x * 0.5
    y = y + t
    y = y * 1.5
    y = y - 0.25
    y = torch.tanh(y)
    y = y * 2.0
    y = y + 0.125
    return torch.relu(y)


def median_us(fn, budget_s=0.3, min_iters=5, max_iters=2000):
    """As wgtensor bench-engine: two warm-up runs, then runs until the budget is spent."""
    fn()
    fn()
    times = []
    start = time.perf_counter()
    while len(times) < max_iters and (len(times) < min_iters or time.perf_counter() - start < budget_s):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e6)
    return statistics.median(times)


def torch_overhead(torch, n):
    """(eager us/iter, CUDA graph us/iter, max error of the graph result vs float64)."""
    g = torch.Generator(device="cuda").manual_seed(11)
    x0 = torch.rand(256, device="cuda", generator=g) * 2 - 1
    b = torch.rand(256, device="cuda", generator=g) - 0.5
    eager = median_us(lambda: chain(torch, x0, b, n).cpu())
    static_x = x0.clone()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(2):
            chain(torch, static_x, b, n)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_y = chain(torch, static_x, b, n)

    def replay():
        graph.replay()
        return static_y.cpu()

    replayed = median_us(replay)
    want = chain(torch, x0.double(), b.double(), n).cpu()
    err = (replay().double() - want).abs().max().item()
    del graph, static_y
    return eager, replayed, err


def torch_fusion(torch, numel):
    """(8-op chain ms, add ms) eager, synchronize around each."""
    x = torch.rand(numel, device="cuda") * 2 - 1
    t = torch.rand(numel, device="cuda") * 2 - 1

    def timed(fn):
        def run():
            fn()
            torch.cuda.synchronize()
        return median_us(run, min_iters=10) * 1e-3

    torch.cuda.synchronize()
    chain_ms = timed(lambda: chain8(torch, x, t))
    add_ms = timed(lambda: x + t)
    del x, t
    torch.cuda.empty_cache()
    return chain_ms, add_ms


def torch_memory(torch, rows, cols, n):
    """Peak bytes the caching allocator handed out for the chain (inputs included)."""
    x0 = torch.rand(rows, cols, device="cuda") * 2 - 1
    b = torch.rand(cols, device="cuda") - 0.5
    chain(torch, x0, b, 8)  # kernels loaded outside the measurement
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    y = chain(torch, x0, b, n)
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated()
    del y, x0, b
    torch.cuda.empty_cache()
    return peak


def fmt(v, width, prec):
    return f"{v:{width}.{prec}f}" if v is not None else f"{'-':>{width}}"


def ratio(torch_v, ours_v):
    return torch_v / ours_v if torch_v is not None and ours_v else None


def compare_engine(ours, torch, out_json):
    rows = ours["rows"]
    where = ours["device"] + (" (lavapipe, Mesa's CPU Vulkan driver: not GPU figures)" if ours.get("lavapipe") else "")
    if torch is not None:
        print(f"wgtensor bench-engine on {where} against PyTorch {torch.__version__} on {torch.cuda.get_device_name()}")
    else:
        print(f"wgtensor bench-engine on {where}")
    bad = [r["name"] for r in rows if not r["ok"]]
    if bad:
        print(f"rows whose check FAILED in wgtensor: {', '.join(bad)}")
    out = {"device": ours["device"], "torch": torch.__version__ if torch else None, "overhead": [], "fusion": [],
           "memory": []}

    def find(kind, **want):
        for r in rows:
            if r["kind"] == kind and all(r.get(k) == v for k, v in want.items()):
                return r
        return None

    # overhead: us per op, wgtensor eager and graph with fusion on and off beside PyTorch.
    lengths = sorted({r["n_ops"] for r in rows if r["kind"] == "overhead"})
    if lengths:
        print("\n== overhead: us per op (iteration time / N), chain on [256] f32 with a read per iteration")
        print(f"{'N':>5} | {'eager':>8} {'unfused':>8} {'torch':>8} {'ratio':>6} | {'graph':>8} {'unfused':>8} "
              f"{'cudagraph':>9} {'ratio':>6} | {'launches e/g':>12}")
    for n in lengths:
        e1 = find("overhead", mode="eager", fusion=True, n_ops=n)
        e0 = find("overhead", mode="eager", fusion=False, n_ops=n)
        g1 = find("overhead", mode="graph", fusion=True, n_ops=n)
        g0 = find("overhead", mode="graph", fusion=False, n_ops=n)
        us = lambda r: r["us_per_op"] if r and r["ok"] else None
        te = tg = err = None
        if torch is not None:
            te, tg, err = torch_overhead(torch, n)
            te, tg = te / n, tg / n
        launches = "/".join("-" if r is None else f"{r['launches_per_iter']:.0f}" for r in (e1, g1))
        print(f"{n:5d} | {fmt(us(e1), 8, 2)} {fmt(us(e0), 8, 2)} {fmt(te, 8, 2)} {fmt(ratio(te, us(e1)), 6, 2)} | "
              f"{fmt(us(g1), 8, 2)} {fmt(us(g0), 8, 2)} {fmt(tg, 9, 2)} {fmt(ratio(tg, us(g1)), 6, 2)} | {launches:>12}")
        out["overhead"].append({"n_ops": n, "eager_fused_us_per_op": us(e1), "eager_unfused_us_per_op": us(e0),
                                "torch_eager_us_per_op": te, "graph_fused_us_per_op": us(g1),
                                "graph_unfused_us_per_op": us(g0), "torch_cudagraph_us_per_op": tg,
                                "eager_ratio": ratio(te, us(e1)), "graph_ratio": ratio(tg, us(g1)),
                                "torch_max_err": err})
    if lengths:
        print("eager/graph: wgtensor with fusion on; unfused: no_fusion=1; ratio: PyTorch / wgtensor (fused)")

    # fusion: the 8-op chain over the single add, in each.
    add = find("fusion", name="fusion_add1_fused")
    fused = find("fusion", name="fusion_chain8_fused")
    unfused = find("fusion", name="fusion_chain8_unfused")
    if add or fused or unfused:
        numel = (add or fused or unfused)["numel"]
        print(f"\n== fusion: 8-op elementwise chain vs one add over {numel} f32 (goal: chain / add <= 1.2)")
        print(f"{'':24} {'add ms':>9} {'chain ms':>9} {'chain/add':>9} {'launches':>9}")
        ms = lambda r: r["ms"] if r and r["ok"] else None
        for label, r in (("wgtensor fusion on", fused), ("wgtensor fusion off", unfused)):
            if r is not None:
                print(f"{label:24} {fmt(ms(add), 9, 3)} {fmt(ms(r), 9, 3)} "
                      f"{fmt(ratio(ms(r), ms(add)), 9, 2)} {r['launches_per_iter']:9.0f}")
        entry = {"numel": numel, "add_ms": ms(add), "chain8_fused_ms": ms(fused), "chain8_unfused_ms": ms(unfused),
                 "fused_over_add": ratio(ms(fused), ms(add)), "unfused_over_add": ratio(ms(unfused), ms(add))}
        if torch is not None:
            tc, ta = torch_fusion(torch, numel)
            print(f"{'PyTorch eager':24} {ta:9.3f} {tc:9.3f} {tc / ta:9.2f} {8:9d}")
            entry.update({"torch_add_ms": ta, "torch_chain8_ms": tc, "torch_chain_over_add": tc / ta,
                          "chain8_fused_ratio": ratio(tc, ms(fused))})
        out["fusion"].append(entry)

    # memory: peak over the live set.
    mem = [r for r in rows if r["kind"] == "memory"]
    if mem:
        r0 = mem[0]
        print(f"\n== memory: {r0['n_ops']}-op chain on {r0['numel']} f32, intermediates released at once")
        print(f"{'':24} {'peak MB':>9} {'live MB':>9} {'peak/live':>9}")
        for r in mem:
            label = "wgtensor fusion " + ("on" if r["fusion"] else "off")
            if r["peak_bytes"]:
                print(f"{label:24} {r['peak_bytes'] / 2**20:9.2f} {r['live_bytes'] / 2**20:9.2f} {r['peak_over_live']:9.2f}")
            else:
                print(f"{label:24} {'-':>9} {r['live_bytes'] / 2**20:9.2f} {'-':>9}  ({r['note']})")
            out["memory"].append({"fusion": r["fusion"], "peak_bytes": r["peak_bytes"], "live_bytes": r["live_bytes"],
                                  "peak_over_live": r["peak_over_live"]})
        if torch is not None:
            peak = torch_memory(torch, 4096, r0["numel"] // 4096, r0["n_ops"])
            live = r0["live_bytes"]
            print(f"{'PyTorch eager':24} {peak / 2**20:9.2f} {live / 2**20:9.2f} {peak / live:9.2f}")
            out["memory"].append({"torch": True, "peak_bytes": peak, "live_bytes": live, "peak_over_live": peak / live})
    if out_json:
        json.dump(out, open(out_json, "w"), indent=1)
    return 0


def main(argv):
    args = read_args(argv, __doc__)
    if args is None:
        return 2
    ours, out_json, plot = args
    torch = load_torch()
    if ours.get("program") == "bench-engine":
        if plot:
            print("--plot draws bench rows only: no plot for bench-engine rows")
        return compare_engine(ours, torch, out_json)
    return compare_kernels(ours, torch, out_json, plot)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
