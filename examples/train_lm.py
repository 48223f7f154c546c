#!/usr/bin/env python3
"""The Python twin of `wgtensor train-lm` (tools/train_lm.c): the same character-level
transformer (tools/lm_model.c: GPT-2-shaped pre-norm blocks, causal attention, GELU MLP,
learned positions, output tied to the embedding), the same weights from the same seed (drawn
on the host by the same splitmix64 stream), the same text (Debian's fortunes, the last tenth
held out), batches and schedule (AdamW, betas 0.9/0.95, clipping at norm 1, warmup and
cosine over the time given), written with the Python package's autograd and optimizer. It
prints the same report: the validation loss at the start on the device and on the CPU
backend, the unigram baseline, a progress line every 5 s, the final validation loss (which
must fall at least 0.5 below the baseline), then saves the model and samples it.

    PYTHONPATH=build/python python3 examples/train_lm.py [--seconds 180] [--text FILE]...
"""
import argparse
import math
import os
import sys
import time

import numpy as np

import wgtensor as wt

FORTUNES = "/usr/share/games/fortunes/"
DEFAULT_TEXTS = [FORTUNES + n for n in ("literature", "songs-poems", "wisdom", "people", "science", "definitions")]
VAL_BATCHES = 4
M64 = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15


def _mix(z):
    """splitmix64's output function, on Python ints or a uint64 array (wrapping)."""
    if isinstance(z, np.ndarray):
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


class Rng:
    """lm_rand: the C tool's splitmix64 stream, so batches and weights match it."""

    def __init__(self, seed):
        self.state = seed & M64

    def next(self):
        self.state = (self.state + GOLDEN) & M64
        return _mix(self.state)

    def normal(self, n, std):
        """n draws of lm_model.c's Box-Muller (two uniforms in (0, 1) per value), as float32."""
        k = np.arange(1, 2 * n + 1, dtype=np.uint64)
        with np.errstate(over="ignore"):
            z = _mix(np.uint64(self.state) + k * np.uint64(GOLDEN))
        self.state = (self.state + 2 * n * GOLDEN) & M64
        u = ((z >> np.uint64(11)).astype(np.float64) + 0.5) / 9007199254740992.0
        return (std * np.sqrt(-2 * np.log(u[0::2])) * np.cos(2 * np.pi * u[1::2])).astype(np.float32)


def load_corpus(paths):
    """The files one after another; a fortune's "%" separator lines become blank lines."""
    data = bytearray()
    for p in paths:
        with open(p, "rb") as f:
            for line in f:
                data += b"\n" if line == b"%\n" else line
    chars = sorted(set(data))
    table = np.full(256, -1, np.int32)
    table[chars] = np.arange(len(chars), dtype=np.int32)
    return table[np.frombuffer(bytes(data), np.uint8)], bytes(chars)


def unigram_loss(ids, split, vocab):
    count = np.bincount(ids[:split], minlength=vocab).astype(np.float64)
    return float(-np.mean(np.log((count[ids[split:]] + 1) / (split + vocab))))


def lm_batch(ids, rng, batch, length):
    tok, tgt = np.empty((batch, length), np.int32), np.empty((batch, length), np.int32)
    for b in range(batch):
        at = rng.next() % (len(ids) - length - 1)
        tok[b], tgt[b] = ids[at:at + length], ids[at + 1:at + 1 + length]
    return tok, tgt


class Model:
    """lm_model.c's parameters, in its order and from its stream: GPT-2's initialisation
    (0.02, the residual projections scaled by 1 / sqrt(2 layers))."""

    def __init__(self, ctx, vocab, layers, width, heads, context, seed):
        self.ctx, self.layers, self.width, self.heads, self.context = ctx, layers, width, heads, context
        rng, D = Rng(seed), width
        s, s_out = 0.02, 0.02 / math.sqrt(2.0 * layers)
        self.names, self.params = [], []

        def param(name, shape, std, fill=0.0):
            n = int(np.prod(shape))
            v = rng.normal(n, std) if std else np.full(n, fill, np.float32)
            self.names.append(name)
            self.params.append(wt.asarray(v.reshape(shape), ctx=ctx).requires_grad_())

        param("tok_emb", (vocab, D), s)
        param("pos_emb", (context, D), s)
        for l in range(layers):
            param("h%d.ln1.w" % l, (D,), 0, 1), param("h%d.ln1.b" % l, (D,), 0)
            for w in ("wq", "wk", "wv"):
                param("h%d.%s" % (l, w), (D, D), s)
            param("h%d.wo" % l, (D, D), s_out)
            param("h%d.ln2.w" % l, (D,), 0, 1), param("h%d.ln2.b" % l, (D,), 0)
            param("h%d.w1" % l, (4 * D, D), s), param("h%d.w2" % l, (D, 4 * D), s_out)
        param("lnf.w", (D,), 0, 1), param("lnf.b", (D,), 0)

    def logits(self, tokens):
        B, T = tokens.shape
        D, H, P = self.width, self.heads, self.params
        x = wt.gather_rows(P[0], tokens) + P[1][:T]
        heads = lambda t: wt.transpose(wt.reshape(t, (B, T, H, D // H)), (0, 2, 1, 3))
        for l in range(self.layers):
            ln1w, ln1b, wq, wk, wv, wo, ln2w, ln2b, w1, w2 = P[2 + 10 * l:12 + 10 * l]
            h = wt.layer_norm(x, ln1w, ln1b, 1e-5)
            a = wt.attention(heads(wt.linear(h, wq)), heads(wt.linear(h, wk)), heads(wt.linear(h, wv)), True)
            merged = wt.reshape(wt.contiguous(wt.transpose(a, (0, 2, 1, 3))), (B, T, D))
            x = x + wt.linear(merged, wo)
            x = x + wt.linear(wt.gelu(wt.linear(wt.layer_norm(x, ln2w, ln2b, 1e-5), w1)), w2)
        return wt.linear(wt.layer_norm(x, P[-2], P[-1], 1e-5), P[0])  # tied to the embedding

    def loss(self, tok, tgt):
        return wt.cross_entropy(self.logits(wt.asarray(tok, ctx=self.ctx)), wt.asarray(tgt, ctx=self.ctx))


def val_loss(model, val, batch):
    rng, total = Rng(12345), 0.0
    with wt.no_grad():
        for _ in range(VAL_BATCHES):
            total += model.loss(*lm_batch(val, rng, batch, model.context)).item()
    return total / VAL_BATCHES


def sample(model, chars, prompt, n, seed):
    ids = [chars.index(c) for c in prompt.encode() if c in chars]
    rng, out = Rng(seed), prompt
    with wt.no_grad():
        for _ in range(n):
            t = min(len(ids), model.context)
            row = model.logits(wt.asarray(np.array([ids[-t:]], np.int32), ctx=model.ctx))[0, t - 1].numpy()
            p = np.exp((row - row.max()) / 0.8)
            u = ((rng.next() >> 11) + 0.5) / 9007199254740992.0
            pick = int(np.searchsorted(np.cumsum(p / p.sum()), u))
            ids.append(min(pick, len(chars) - 1))
            out += chr(chars[ids[-1]])
    return out


def is_software(ctx):
    return ctx.backend == "cpu" or any(s in ctx.device_name for s in ("llvmpipe", "lavapipe", "SwiftShader"))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=180)
    ap.add_argument("--text", action="append")
    ap.add_argument("--out", default="build/train-lm-py")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--lr", type=float, default=3e-3)
    for flag in ("layers", "width", "heads", "context", "batch"):
        ap.add_argument("--" + flag, type=int, default=0)
    ap.add_argument("--sample", type=int, default=400)
    ap.add_argument("--backend", default=None, help="auto (default), webgpu or cpu: where to train")
    a = ap.parse_args(argv)
    texts = a.text or DEFAULT_TEXTS
    for t in texts:
        if not os.path.exists(t):
            sys.exit("train_lm.py: cannot open %s (install the fortunes package: scripts/setup.sh)" % t)
    ids, chars = load_corpus(texts)
    vocab, split = len(chars), len(ids) * 9 // 10
    print("train-lm (Python): %d characters of text (%s and %d more), vocabulary %d; the last tenth for validation"
          % (len(ids), texts[0], len(texts) - 1, vocab))
    dev, cpu = wt.Context(backend=a.backend, quiet=True), wt.Context(backend="cpu")
    small = is_software(dev)
    layers, width, heads, context = (2, 64, 4, 64) if small else (4, 256, 8, 128)
    layers, width, heads, context = a.layers or layers, a.width or width, a.heads or heads, a.context or context
    B = a.batch or (16 if small else 64)
    print("training on: %s (backend %s)" % (dev.device_name, dev.backend))
    m = Model(dev, vocab, layers, width, heads, context, a.seed)
    nparam = sum(int(np.prod(p.shape)) for p in m.params)
    print("model: %d layers, width %d, %d heads, context %d, %d parameters; batch %d, AdamW lr %g, %.0f s"
          % (layers, width, heads, context, nparam, B, a.lr, a.seconds))
    unigram, val = unigram_loss(ids, split, vocab), ids[split:]
    v0 = val_loss(m, val, B)
    v0_cpu = v0 if dev.backend == "cpu" else val_loss(Model(cpu, vocab, layers, width, heads, context, a.seed), val, B)
    print("validation loss at the start: %.6f on %s, %.6f on the CPU backend (difference %.2g); uniform ln(%d) = %.4f, "
          "unigram baseline %.4f" % (v0, dev.device_name, v0_cpu, abs(v0 - v0_cpu), vocab, math.log(vocab), unigram))
    opt = wt.optim.AdamW(m.params, lr=a.lr, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.01)
    rng, train = Rng(a.seed * 7919 + 1), []
    t0 = last_print = time.perf_counter()
    vals = [(0, v0)]
    next_val = a.seconds / 8
    while (elapsed := time.perf_counter() - t0) < a.seconds:
        # The schedule runs on the fraction of the time spent: warmup over the first 3%, then a
        # cosine down to a tenth of the peak.
        lr = wt.lr_warmup_cosine(int(10000 * elapsed / a.seconds), 300, 10000, a.lr, a.lr / 10)
        tok, tgt = lm_batch(ids[:split], rng, B, context)
        opt.zero_grad()
        loss = m.loss(tok, tgt)
        loss.backward()
        train.append(loss.item())
        wt.clip_grad_norm(m.params, 1.0)
        opt.lr = lr
        opt.step()
        if not math.isfinite(train[-1]):
            sys.exit("train_lm.py: the loss is %r at step %d" % (train[-1], len(train)))
        now = time.perf_counter()
        if now - t0 >= next_val and len(vals) < 63:
            vals.append((len(train) - 1, val_loss(m, val, B)))
            next_val += a.seconds / 8
        if now - last_print >= 5 or len(train) == 1:
            print("step %5d  loss %.4f  val %.4f  lr %.2e  %7.0f tokens/s  %4.0f s left"
                  % (len(train), train[-1], vals[-1][1], lr, len(train) * B * context / (now - t0),
                     max(0, a.seconds - (now - t0))), flush=True)
            last_print = now
    final = val_loss(m, val, B)
    vals.append((len(train) - 1, final))
    print("trained %d steps (%d tokens) in %.1f s: %.0f tokens/s"
          % (len(train), len(train) * B * context, elapsed, len(train) * B * context / elapsed))
    good = final < unigram - 0.5  # "well below": at least half a nat under the baseline
    print("final validation loss %.4f; unigram baseline %.4f; start %.4f: %s"
          % (final, unigram, v0, "well below the unigram baseline" if good else "NOT well below the unigram baseline"))
    os.makedirs(a.out, exist_ok=True)
    path = os.path.join(a.out, "model.safetensors")
    wt.save(path, dict(zip(m.names, m.params)))
    print("model: %s" % path)
    if a.sample:
        print("sample (temperature 0.8):\n" + sample(m, chars, "The ", a.sample, a.seed))
    print("result: %s" % ("PASS" if good else "FAIL"))
    return {"train": train, "val": vals, "unigram": unigram, "start": v0, "start_cpu": v0_cpu, "final": final,
            "good": good}


if __name__ == "__main__":
    sys.exit(0 if main(sys.argv[1:])["good"] else 1)
