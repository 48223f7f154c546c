"""wgtensor.llama, the Python twin of `wgtensor generate`: its forward pass and its replayed
decoding step against a float64 NumPy transformer on random weights (f32, f16 and quantized
weights, the file's interleaved q / k rows), GGUF files through llama.cpp's names, the C tool's
tokens for the same file and seed, and its errors."""
import os
import subprocess

import numpy as np
import pytest

import wgtensor as wt
from wgtensor import gguf, llama

CFG = dict(dim=64, layers=2, heads=4, kv_heads=2, hidden=96, vocab=40, context=32, rope_base=10000.0, eps=1e-5)
TOOL = os.path.join(os.path.dirname(wt.__file__), "..", "..", "wgtensor")


def random_weights(cfg, seed=3):
    """float32 weights in rotate-half order: the reference's."""
    rng = np.random.default_rng(seed)
    c, hd = cfg, cfg.head_dim
    w = {"token_embd.weight": rng.standard_normal((c.vocab, c.dim)),
         "output_norm.weight": 1 + 0.1 * rng.standard_normal(c.dim),
         "output.weight": 0.1 * rng.standard_normal((c.vocab, c.dim))}
    shapes = {"attn_norm": (c.dim,), "attn_q": (c.dim, c.dim), "attn_k": (c.kv_heads * hd, c.dim),
              "attn_v": (c.kv_heads * hd, c.dim), "attn_output": (c.dim, c.dim), "ffn_norm": (c.dim,),
              "ffn_gate": (c.hidden, c.dim), "ffn_up": (c.hidden, c.dim), "ffn_down": (c.dim, c.hidden)}
    for i in range(c.layers):
        for name, shape in shapes.items():
            scale = 0.1 if len(shape) == 1 else 0.3 / np.sqrt(shape[1])
            base = 1.0 if len(shape) == 1 else 0.0
            w["blk.%d.%s.weight" % (i, name)] = base + scale * rng.standard_normal(shape)
    return {k: v.astype(np.float32) for k, v in w.items()}


def to_file(cfg, w):
    """The weights with attn_q / attn_k rows in the file's interleaved order."""
    out = dict(w)
    for i in range(cfg.layers):
        out["blk.%d.attn_q.weight" % i] = llama.rope_rows_to_file(w["blk.%d.attn_q.weight" % i], cfg.heads)
        out["blk.%d.attn_k.weight" % i] = llama.rope_rows_to_file(w["blk.%d.attn_k.weight" % i], cfg.kv_heads)
    return out


def reference_logits(cfg, w, tokens):
    """Every token's logits [n, vocab] in float64 (rotate-half weights, positions 0..n-1)."""
    c, hd = cfg, cfg.head_dim
    half, group, n = hd // 2, c.heads // c.kv_heads, len(tokens)
    w = {k: v.astype(np.float64) for k, v in w.items()}

    def norm(x, g):
        return x / np.sqrt((x * x).mean(-1, keepdims=True) + c.eps) * g

    ang = np.arange(n)[:, None] * c.rope_base ** (-np.arange(half) / half)
    cos, sin = np.cos(ang), np.sin(ang)

    def rope(t):  # [heads, n, hd]
        a, b = t[..., :half], t[..., half:]
        return np.concatenate([a * cos - b * sin, b * cos + a * sin], -1)

    x = w["token_embd.weight"][tokens]
    mask = np.triu(np.ones((n, n), bool), 1)
    for i in range(c.layers):
        p = lambda name: w["blk.%d.%s.weight" % (i, name)]  # noqa: E731
        h = norm(x, p("attn_norm"))
        q = rope((h @ p("attn_q").T).reshape(n, c.heads, hd).transpose(1, 0, 2))
        k = rope((h @ p("attn_k").T).reshape(n, c.kv_heads, hd).transpose(1, 0, 2))
        v = (h @ p("attn_v").T).reshape(n, c.kv_heads, hd).transpose(1, 0, 2)
        k, v = np.repeat(k, group, 0), np.repeat(v, group, 0)
        s = q @ k.transpose(0, 2, 1) / np.sqrt(hd)
        s[:, mask] = -np.inf
        s = np.exp(s - s.max(-1, keepdims=True))
        o = (s / s.sum(-1, keepdims=True)) @ v
        x = x + o.transpose(1, 0, 2).reshape(n, c.dim) @ p("attn_output").T
        h = norm(x, p("ffn_norm"))
        g, u = h @ p("ffn_gate").T, h @ p("ffn_up").T
        x = x + (g / (1 + np.exp(-g)) * u) @ p("ffn_down").T
    return norm(x, w["output_norm.weight"]) @ w["output.weight"].T


def close(got, want, tol):
    err = np.abs(got - want).max() / np.abs(want).max()
    assert err < tol, "largest error %.3g of the largest logit (tolerance %.1g)" % (err, tol)


TOKENS = [3, 17, 0, 39, 22, 5, 11]


def test_forward_matches_float64_reference(ctx):
    cfg = llama.Config(**CFG)
    w = random_weights(cfg)
    m = llama.Model(cfg, to_file(cfg, w), ctx)
    want = reference_logits(cfg, w, TOKENS)
    close(m.forward(TOKENS, 0, all_logits=True).numpy(), want, 2e-6)
    # The caches: the prompt in two parts gives the same last logits.
    m.forward(TOKENS[:4], 0)
    close(m.forward(TOKENS[4:], 4).numpy(), want[-1], 2e-6)
    # One token at a time, as decoding runs.
    for pos, t in enumerate(TOKENS):
        last = m.forward([t], pos).numpy()
    close(last, want[-1], 2e-6)


def test_forward_f16_weights(ctx):
    cfg = llama.Config(**CFG)
    w = {k: v.astype(np.float16) for k, v in random_weights(cfg).items()}
    m = llama.Model(cfg, to_file(cfg, w), ctx)
    assert m.act == wt.float16
    close(m.forward(TOKENS, 0, all_logits=True).numpy(), reference_logits(cfg, w, TOKENS), 4e-3)


@pytest.mark.parametrize("block", ["q8_0", "q4_0"])
def test_quantized_forward_matches_its_dequantized_weights(ctx, block):
    cfg = llama.Config(**CFG)
    w = random_weights(cfg)
    m = llama.Model(cfg, to_file(cfg, w), ctx).quantize(getattr(wt, block))
    assert m.layers[0]["attn_q"].dtype == getattr(wt, block) and m.embed.dtype == getattr(wt, block)
    # The reference over the weights the blocks hold (rows back in rotate-half order).
    deq = {"token_embd.weight": wt.dequantize(m.embed).numpy(), "output.weight": wt.dequantize(m.output).numpy(),
           "output_norm.weight": w["output_norm.weight"]}
    for i, layer in enumerate(m.layers):
        for name, t in layer.items():
            if name.endswith("cache"):
                continue
            a = wt.dequantize(t).numpy() if t.dtype in (wt.q8_0, wt.q4_0) else t.numpy()
            if name in ("attn_q", "attn_k"):
                heads = cfg.heads if name == "attn_q" else cfg.kv_heads
                hd = cfg.head_dim
                a = a.reshape(heads, hd // 2, 2, -1).swapaxes(1, 2).reshape(a.shape)
            deq["blk.%d.%s.weight" % (i, name)] = a
    want = reference_logits(cfg, deq, TOKENS)
    close(m.forward(TOKENS, 0, all_logits=True).numpy(), want, 2e-6)
    # The tolerance is far below what quantizing changes.
    assert np.abs(want - reference_logits(cfg, w, TOKENS)).max() > 1e-3 * np.abs(want).max()


def test_gguf_file_round_trip_and_c_tool_tokens(ctx, tmp_path):
    cfg = llama.Config(**CFG)
    w = to_file(cfg, random_weights(cfg))
    path = str(tmp_path / "tiny.gguf")
    meta = {"general.architecture": "llama", "llama.embedding_length": cfg.dim, "llama.block_count": cfg.layers,
            "llama.attention.head_count": cfg.heads, "llama.attention.head_count_kv": cfg.kv_heads,
            "llama.feed_forward_length": cfg.hidden, "llama.context_length": cfg.context,
            "llama.rope.freq_base": cfg.rope_base, "llama.attention.layer_norm_rms_epsilon": cfg.eps}
    gguf.write(path, {k: wt.asarray(v, ctx=ctx) for k, v in w.items()}, meta)
    m = llama.load(path, ctx)
    assert (m.config.dim, m.config.kv_heads, m.config.vocab, m.config.context) == (64, 2, 40, 32)
    close(m.forward(TOKENS, 0, all_logits=True).numpy(), reference_logits(cfg, random_weights(cfg), TOKENS), 2e-6)
    # Sampling with a temperature: the C tool's tokens for the same file, prompt and seed.
    prompt = "ab"
    ids = [b % cfg.vocab for b in prompt.encode()]
    got = list(m.generate(ids, 20, temperature=1.3, top_k=25, seed=7))
    assert len(got) == 20
    backend = "--cpu" if ctx.backend == "cpu" else "--webgpu"
    run = subprocess.run([TOOL, "generate", backend, "--model", path, "--prompt", prompt, "--tokens", "20",
                          "--temperature", "1.3", "--top-k", "25", "--sample-seed", "7"],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout.rstrip("\n") == prompt + "".join(m.token_text(t) for t in got)


def test_replayed_steps_match_the_float64_reference(ctx):
    """Model.step against the float64 transformer at every position of a context of 80: the
    compiled step of the first 64 positions, then the one of all 80 (built when reached)."""
    cfg = llama.Config(**dict(CFG, context=80))
    w = random_weights(cfg)
    m = llama.Model(cfg, to_file(cfg, w), ctx)
    tokens = [(7 * i + 3) % cfg.vocab for i in range(cfg.context)]
    want = reference_logits(cfg, w, tokens)
    m.forward(tokens[:2], 0)
    for pos in range(2, cfg.context):
        close(m.step(tokens[pos], pos).numpy(), want[pos], 2e-6)
    assert sorted(m._replays) == [64, 80]
    # The caches the steps wrote are the eager pass's.
    e = llama.Model(cfg, to_file(cfg, w), ctx)
    e.forward(tokens, 0)
    for key in ("k_cache", "v_cache"):
        close(m.layers[1][key].numpy(), e.layers[1][key].numpy(), 1e-6)
    with pytest.raises(ValueError, match="position 80 does not fit the context of 80"):
        m.step(0, cfg.context)


@pytest.mark.parametrize("block", [None, "q4_0"])
def test_generate_replayed_gives_the_eager_tokens(ctx, block):
    cfg = llama.Config(**CFG)
    models = [llama.Model(cfg, to_file(cfg, random_weights(cfg)), ctx) for _ in range(2)]
    if block:
        for m in models:
            m.step(1, 0)  # a graph over the f32 weights, which quantize must drop
            m.quantize(getattr(wt, block))
    for temperature in (0.0, 1.3):
        got = [list(m.generate([5, 9], 25, temperature, 25, seed=7, replay=r)) for m, r in zip(models, (True, False))]
        assert got[0] == got[1] and len(got[0]) == 25
    assert models[0]._replays and not models[1]._replays


def test_sampling_rule():
    logits = np.array([0.5, 2.0, 2.0, -1.0, 1.0], np.float32)
    assert llama.sample(logits) == 1  # the first largest
    draws = [llama.sample(logits, 1.0, 3, seed=11, step=s) for s in range(400)]
    assert set(draws) <= {1, 2, 4}  # top-3 only
    freq = np.bincount(draws, minlength=5) / 400
    p = np.exp([2.0, 2.0, 1.0])
    p /= p.sum()
    assert np.abs(freq[[1, 2, 4]] - p).max() < 0.08, freq
    assert llama.step_uniform(1, 0) != llama.step_uniform(1, 1)
    assert 0 <= llama.step_uniform(2**63, 5) < 1


def test_errors(tmp_path):
    with pytest.raises(ValueError, match="bad sizes"):
        llama.Config(dim=60, layers=1, heads=8, kv_heads=8, hidden=8, vocab=8, context=8)
    cfg = llama.Config(**CFG)
    m = llama.Model(cfg, to_file(cfg, random_weights(cfg)))
    with pytest.raises(ValueError, match="do not fit the context of 32"):
        m.forward(list(range(30)), 5)
    with pytest.raises(ValueError, match="quantize takes"):
        m.quantize(wt.float16)
    bad = dict(to_file(cfg, random_weights(cfg)))
    bad["blk.1.attn_k.weight"] = bad["blk.1.attn_k.weight"][:16]
    with pytest.raises(ValueError, match=r"blk.1.attn_k.weight has shape \(16, 64\); the sizes want \(32, 64\)"):
        llama.Model(cfg, bad)
    path = str(tmp_path / "other.gguf")
    gguf.write(path, {"x": wt.zeros((2,))}, {"general.architecture": "gpt2"})
    with pytest.raises(ValueError, match="is not a llama model"):
        llama.load(path)
