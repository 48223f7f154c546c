"""What bench/compare_torch.py and bench/compare_numpy.py share: reading `wgtensor bench` row
sizes, timing a workload the way `wgtensor bench` times its rows, the read-bound table and the
ratio plot."""
import json
import statistics
import time


def read_args(argv, doc):
    """(rows JSON, --json OUT or None, --plot OUT.png or None) from a script's command line, or
    None after printing the script's doc when no JSON file was named."""
    if len(argv) < 2:
        print(doc)
        return None
    option = lambda name: argv[argv.index(name) + 1] if name in argv[:-1] else None
    return json.load(open(argv[1])), option("--json"), option("--plot")


def parse_size(size):
    """A row's size string ("4096x4096x4096", "32h 2048 128") as a list of ints."""
    return [int(x) for x in size.replace("h", "").split("x" if "x" in size else " ")]


def attention_dims(dims):
    """Heads, queries, keys and head dimension of an attention row's size: "32h 2048 128"
    (as many queries as keys) or "32h 1 8192 128"."""
    return dims if len(dims) == 4 else (dims[0], dims[1], dims[1], dims[2])


def time_like_wgtensor(fn, sync=lambda: None, batch_ms=None, warmup_s=0.5, phase_s=0.2):
    """Milliseconds per run as `wgtensor bench` takes its wall-clock figure: one run to size
    the batches (about 20 ms of runs, at most 200), warmup_s of batches, then batches for at
    least phase_s and 5 batches; the median batch's time per run. A batch is the runs back to
    back and one sync. batch_ms(n), when given, runs a batch of n itself and returns its own
    per-run figure (PyTorch's CUDA events) instead of the wall clock's."""
    fn()
    sync()
    t0 = time.perf_counter()
    fn()
    sync()
    first_ms = (time.perf_counter() - t0) * 1e3
    n = max(1, min(200, int(20.0 / max(first_ms, 0.001))))

    def batch():
        if batch_ms is not None:
            return batch_ms(n)
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        sync()
        return (time.perf_counter() - t0) * 1e3 / n

    start = time.perf_counter()
    while time.perf_counter() - start < warmup_s:
        batch()
    return median_of_batches(batch, phase_s)


def median_of_batches(batch, phase_s=0.2):
    """The median of batch()'s figures over at least 5 calls and phase_s (at most 1000), as
    `wgtensor bench` takes each of its figures."""
    times = []
    start = time.perf_counter()
    while len(times) < 1000 and (len(times) < 5 or time.perf_counter() - start < phase_s):
        times.append(batch())
    return statistics.median(times)


def print_read_bound(rows, other, label):
    """Read-bound rows (matrix-vector, few-row GEMM): bytes read per second in wgtensor and in
    the other library, and each one's fraction of its own copy (copy_f32, bytes read + written
    per second). rows carry wgtensor_ms, <other>_ms, gbyte and gbyte_read, and where both
    sides timed them chained (`wgtensor bench` step 6), wgtensor_ms_chained and
    <other>_ms_chained, which add the same figures chained; the fractions are stored back
    into them."""
    copy = next((r for r in rows if r["name"] == "copy_f32"), None)
    bound = [r for r in rows if r["gbyte_read"] > 0]
    if copy is None or not bound:
        return
    chained = lambda r: r.get("wgtensor_ms_chained", 0) > 0 and r.get(other + "_ms_chained", 0) > 0
    copy_rate = lambda key: copy["gbyte"] / (copy[key] * 1e-3)
    # Each figure's time key and the key its fraction of the copy is stored under.
    per_run = [("wgtensor_ms", "copy_fraction"), (other + "_ms", other + "_copy_fraction")]
    in_chains = [("wgtensor_ms_chained", "chained_copy_fraction"),
                 (other + "_ms_chained", other + "_chained_copy_fraction")] if chained(copy) else []
    rates = [f"wgtensor {copy_rate(per_run[0][0]):.1f}, {label} {copy_rate(per_run[1][0]):.1f}"]
    if in_chains:
        rates.append(f"chained {copy_rate(in_chains[0][0]):.1f} and {copy_rate(in_chains[1][0]):.1f}")
    print(f"\nread-bound rows: GB/s of bytes read, and the fraction of each one's copy (copy_f32, GB/s read + "
          f"written: {'; '.join(rates)})")
    head = f"{'workload':22} {'size':18} {'wgtensor':>9} {'of copy':>8} {label:>9} {'of copy':>8}"
    print(head + (" | chained:" + head[41:] if in_chains else ""))

    def figures(r, keys):
        text = ""
        for time_key, fraction_key in keys:
            rate = r["gbyte_read"] / (r[time_key] * 1e-3)
            r[fraction_key] = rate / copy_rate(time_key)
            text += f" {rate:9.1f} {r[fraction_key]:8.2f}"
        return text

    for r in bound:
        line = f"{r['name']:22} {r['size']:18}" + figures(r, per_run)
        if in_chains and chained(r):
            line += " |" + " " * 8 + figures(r, in_chains)
        print(line)


def plot_ratios(rows, path, xlabel, title):
    """A bar per row of its ratio (1 = parity) into path (PNG), or a message saying why not."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"matplotlib is not importable by {__import__('sys').executable}: no plot written to {path}")
        return
    fig, ax = plt.subplots(figsize=(9, max(3, 0.3 * len(rows) + 1)))
    ax.barh([r["name"] for r in rows], [r["ratio"] for r in rows])
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.invert_yaxis()  # rows in the order of the table
    ax.set_xlabel(xlabel)
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"plot written to {path}")
