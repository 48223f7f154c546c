"""Quantized matrix-vector products and decoding, wgtensor beside PyTorch in the same run.

usage: python3 bench/compare_torch_quant.py [--wgtensor PATH] [--json OUT] [bench-quant options]

Runs `wgtensor bench-quant` (default build/wgtensor; every other option is passed to it, e.g.
--quick, --matvec 8192, --layers 24) and then, on the GPU PyTorch sees (else the CPU), for the
sizes it reports:
  copy          x.clone() of 64 Mi f32: bytes read + written per second (the floor's bandwidth)
  matvec f16    F.linear of a [1, N] f16 vector with an [N, N] f16 weight: weight GB/s
  matvec int8   torch._weight_int8pack_mm (int8 weight, one scale per row), where the build has it
  decode f16    a Llama-shaped model of the same sizes in f16 (random weights, KV cache, grouped
                heads, logits copied to the host each token as wgtensor's are): tokens/s and the
                fraction of the floor (copy bandwidth over the weight bytes a token reads)
and prints both sets of rows, with JSON (--json) holding both.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import time_like_wgtensor  # noqa: E402


def run_wgtensor(exe, args):
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        path = f.name
    try:
        subprocess.run([exe, "bench-quant", "--json", path] + args, check=True)
        return json.load(open(path))
    finally:
        os.unlink(path)


def llama_decode(torch, m, tokens):
    """Tokens per second of an f16 decoder with m's sizes, one token at a time after one."""
    F = torch.nn.functional
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    dt = torch.float16 if dev == "cuda" else torch.float32
    dim, layers, heads, kvh = m["dim"], m["layers"], m["heads"], m["kv_heads"]
    hidden, vocab, ctx = m["hidden"], m["vocab"], m["context"]
    hd = dim // heads
    g = torch.Generator(device=dev).manual_seed(1)
    rnd = lambda *s: (torch.randn(*s, generator=g, device=dev, dtype=dt) * 0.02)
    embed = rnd(vocab, dim) * 50
    out_w = rnd(vocab, dim)
    L = [dict(wq=rnd(dim, dim), wk=rnd(kvh * hd, dim), wv=rnd(kvh * hd, dim), wo=rnd(dim, dim),
              gate=rnd(hidden, dim), up=rnd(hidden, dim), down=rnd(dim, hidden),
              kc=torch.zeros(kvh, ctx, hd, device=dev, dtype=dt), vc=torch.zeros(kvh, ctx, hd, device=dev, dtype=dt))
         for _ in range(layers)]
    inv = 1.0 / (10000 ** (torch.arange(0, hd, 2, device=dev, dtype=torch.float32) / hd))

    def rope(x, pos):  # x [h, 1, hd], rotate-half
        ang = pos * inv
        cos, sin = torch.cos(ang).to(dt), torch.sin(ang).to(dt)
        a, b = x[..., : hd // 2], x[..., hd // 2:]
        return torch.cat([a * cos - b * sin, a * sin + b * cos], -1)

    def rms(x):
        return (x.float() * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-5)).to(dt)

    def step(tok, pos):
        x = embed[tok].view(1, dim)
        for l in L:
            h = rms(x)
            q = rope(F.linear(h, l["wq"]).view(heads, 1, hd), pos)
            k = rope(F.linear(h, l["wk"]).view(kvh, 1, hd), pos)
            l["kc"][:, pos] = k[:, 0]
            l["vc"][:, pos] = F.linear(h, l["wv"]).view(kvh, hd)
            kk = l["kc"][:, : pos + 1].repeat_interleave(heads // kvh, 0)
            vv = l["vc"][:, : pos + 1].repeat_interleave(heads // kvh, 0)
            o = F.scaled_dot_product_attention(q, kk, vv).reshape(1, dim)
            x = x + F.linear(o, l["wo"])
            h = rms(x)
            x = x + F.linear(F.silu(F.linear(h, l["gate"])) * F.linear(h, l["up"]), l["down"])
        return F.linear(rms(x), out_w).float().cpu()

    with torch.no_grad():
        step(1, 0)
        n = min(tokens, ctx - 2)
        t0 = time.perf_counter()
        for i in range(n):
            step((i * 7 + 3) % vocab, i + 1)
        rate = n / (time.perf_counter() - t0)
    weight_bytes = 2 * (vocab * dim + layers * (2 * dim * dim + 2 * kvh * hd * dim + 3 * hidden * dim))
    return rate, weight_bytes


def torch_rows(torch, ours):
    F = torch.nn.functional
    gpu = torch.cuda.is_available()
    dev = "cuda" if gpu else "cpu"
    sync = torch.cuda.synchronize if gpu else (lambda: None)
    rows = []
    big = torch.rand(1 << 26, device=dev)
    ms = time_like_wgtensor(lambda: big.clone(), sync)
    bw = 2 * 4 * (1 << 26) / (ms * 1e-3) / 1e9
    rows.append(("copy", bw, "GB/s", None))
    del big
    n = ours["matvec"]
    dt = torch.float16 if gpu else torch.float32
    w = torch.randn(n, n, device=dev, dtype=dt) * 0.02
    x = torch.randn(1, n, device=dev, dtype=dt)
    ms = time_like_wgtensor(lambda: F.linear(x, w), sync)
    gbs = w.numel() * w.element_size() / (ms * 1e-3) / 1e9
    rows.append(("matvec f16" if gpu else "matvec f32", gbs, "GB/s", gbs / bw))
    try:
        w8 = torch.randint(-127, 127, (n, n), device=dev, dtype=torch.int8)
        scales = torch.rand(n, device=dev, dtype=x.dtype)
        torch._weight_int8pack_mm(x, w8, scales)
        ms = time_like_wgtensor(lambda: torch._weight_int8pack_mm(x, w8, scales), sync)
        gbs = n * n / (ms * 1e-3) / 1e9
        rows.append(("matvec int8 (weight-only)", gbs, "GB/s", gbs / bw))
    except Exception as e:  # not in every build or on every device
        rows.append(("matvec int8 (weight-only)", None, "unavailable: %s" % str(e).splitlines()[0][:60], None))
    del w, x
    rate, weight_bytes = llama_decode(torch, ours["model"], ours["tokens"])
    rows.append(("decode f16", rate, "tokens/s", rate / (bw * 1e9 / weight_bytes)))
    return rows


def show(title, rows):
    print(title)
    for name, value, unit, frac in rows:
        v = "%12.2f" % value if value is not None else "%12s" % "-"
        f = "  %5.1f%% of the floor" % (frac * 100) if frac is not None and frac >= 0 else ""
        print("  %-28s %s %s%s" % (name, v, unit, f))


def main(argv):
    if "--help" in argv:
        print(__doc__)
        return 0
    exe, out, rest, i = "build/wgtensor", None, [], 1
    while i < len(argv):
        if argv[i] == "--wgtensor" and i + 1 < len(argv):
            exe, i = argv[i + 1], i + 2
        elif argv[i] == "--json" and i + 1 < len(argv):
            out, i = argv[i + 1], i + 2
        else:
            rest.append(argv[i])
            i += 1
    ours = run_wgtensor(exe, rest)
    import torch
    theirs = torch_rows(torch, ours)
    show("wgtensor (%s)" % ours["device"], [(r["name"], r["value"], r["unit"], r["fraction_of_floor"]) for r in ours["rows"]])
    show("PyTorch %s (%s)" % (torch.__version__, torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu"),
         theirs)
    if out:
        json.dump({"wgtensor": ours, "torch": [dict(name=n, value=v, unit=u, fraction_of_floor=f)
                                               for n, v, u, f in theirs]}, open(out, "w"), indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
