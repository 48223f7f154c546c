#!/usr/bin/env python3
"""Times the training step of `wgtensor bench-train` in PyTorch and prints both side by side.

Usage: python3 bench/bench_train_torch.py WGTENSOR_JSON [--json OUT] [--device cuda|cpu]

WGTENSOR_JSON is what `wgtensor bench-train --json FILE` wrote (same machine, same run). The
model is rebuilt with its shapes (tools/lm_model.c): token and learned position embeddings,
pre-norm blocks of layer norm, causal attention (q, k, v and output projections without
biases), layer norm and a GELU (erf) MLP of width 4 x d without biases, a final layer norm and
the output tied to the token embedding; mean cross-entropy; AdamW (lr 1e-4, betas 0.9/0.95,
eps 1e-8, weight decay 0.01 on every parameter), no clipping. f32 throughout, TF32 off (f32
GEMM is real f32, as wgtensor's). Attention is torch's scaled_dot_product_attention.

Each step is timed as wgtensor times its steps: from zero_grad to the loss read back on the
host (.item(), a full synchronisation), the same fixed stream of random token batches, the
same warm-up count; the median and minimum over the timed steps. The ratio is PyTorch's
median / wgtensor's: above 1, wgtensor is faster.
"""
import json
import math
import statistics
import sys
import time


def build(torch, cfg, dev):
    nn = torch.nn
    F = torch.nn.functional
    D, H, L, V, T = cfg["width"], cfg["heads"], cfg["layers"], cfg["vocab"], cfg["seq"]

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(D, eps=1e-5), nn.LayerNorm(D, eps=1e-5)
            self.wq, self.wk, self.wv, self.wo = (nn.Linear(D, D, bias=False) for _ in range(4))
            self.w1, self.w2 = nn.Linear(D, 4 * D, bias=False), nn.Linear(4 * D, D, bias=False)

        def forward(self, x):
            B, T_, _ = x.shape
            h = self.ln1(x)
            q, k, v = (w(h).view(B, T_, H, D // H).transpose(1, 2) for w in (self.wq, self.wk, self.wv))
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.wo(a.transpose(1, 2).reshape(B, T_, D))
            return x + self.w2(F.gelu(self.w1(self.ln2(x))))

    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok, self.pos = nn.Embedding(V, D), nn.Parameter(torch.randn(T, D) * 0.02)
            nn.init.normal_(self.tok.weight, std=0.02)
            self.blocks = nn.ModuleList(Block() for _ in range(L))
            self.lnf = nn.LayerNorm(D, eps=1e-5)

        def forward(self, tokens, targets):
            x = self.tok(tokens) + self.pos[: tokens.shape[1]]
            for b in self.blocks:
                x = b(x)
            logits = self.lnf(x) @ self.tok.weight.t()
            return F.cross_entropy(logits.view(-1, V), targets.view(-1))

    torch.manual_seed(1234)
    return LM().to(dev)


def batches(cfg, step, torch, dev):
    """A fixed stream of random token batches (not wgtensor's stream: the time does not depend on it)."""
    g = torch.Generator().manual_seed(0x5EED + step)
    seq = torch.randint(0, cfg["vocab"], (cfg["batch"], cfg["seq"] + 1), generator=g)
    return seq[:, :-1].contiguous().to(dev), seq[:, 1:].contiguous().to(dev)


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 0
    option = lambda name, default=None: argv[argv.index(name) + 1] if name in argv[:-1] else default
    ours = json.load(open(argv[1]))
    try:
        import torch
    except ImportError:
        print("PyTorch is not installed: wgtensor's figures alone")
        torch = None
    dev = option("--device", "cuda" if torch is not None and torch.cuda.is_available() else "cpu")
    rows = []
    if torch is not None:
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        model = build(torch, ours, dev)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.01)
        steps, warmup, times, losses = ours["rows"][0]["steps"], ours["warmup"], [], []
        for s in range(warmup + steps):
            tokens, targets = batches(ours, s, torch, dev)
            if dev == "cuda":
                torch.cuda.synchronize()
            t0 = time.perf_counter()
            opt.zero_grad(set_to_none=True)
            loss = model(tokens, targets)
            loss.backward()
            opt.step()
            losses.append(loss.item())
            if s >= warmup:
                times.append((time.perf_counter() - t0) * 1e3)
        name = torch.cuda.get_device_name() if dev == "cuda" else "cpu"
        rows.append({"mode": "torch", "device": name, "steps": steps, "ms_median": statistics.median(times),
                     "ms_min": min(times), "loss_first": losses[0], "loss_last": losses[-1]})
    tokens = ours["batch"] * ours["seq"]
    print(f"bench-train: {ours['layers']} layers, width {ours['width']}, {ours['heads']} heads, vocab {ours['vocab']}, "
          f"seq {ours['seq']}, batch {ours['batch']}: {ours['params'] / 1e6:.1f}M parameters, f32")
    print(f"wgtensor on {ours['device']} ({ours['backend']})" + (f"; PyTorch on {rows[0]['device']}" if rows else ""))
    print(f"{'mode':<8} {'median ms':>10} {'min ms':>9} {'tokens/s':>10} {'TFLOP/s':>8} {'first loss':>11} "
          f"{'torch/this':>11}")
    for r in ours["rows"] + rows:
        ratio = rows[0]["ms_median"] / r["ms_median"] if rows else math.nan
        print(f"{r['mode']:<8} {r['ms_median']:>10.2f} {r['ms_min']:>9.2f} {tokens / r['ms_median'] * 1e3:>10.0f} "
              f"{ours['flop_per_step'] / r['ms_median'] / 1e9:>8.3f} {r['loss_first']:>11.4f} {ratio:>11.3f}")
    out = option("--json")
    if out:
        json.dump({"wgtensor": ours, "torch": rows}, open(out, "w"), indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
