"""A Llama-shaped decoder from Python, the twin of `wgtensor generate` (tools/llama.c, docs/quant.md):
token embedding, layers of RMSNorm, rotary attention with a KV cache (grouped key heads) and a
SwiGLU MLP, a final norm and an output projection, in f32, f16, q8_0 or q4_0 weights.

`load(path)` reads a llama GGUF file (llama.* metadata, llama.cpp's tensor names, attn_q and
attn_k rows in ggml's interleaved rotation order, as llama.cpp's converter and
`wgtensor generate --save` write them); `Model.quantize` turns every matrix into q8_0 or q4_0
blocks; `Model.generate` yields tokens with the C tool's sampling rule (greedy at temperature 0,
else a draw from the softmax of the top_k largest logits over the temperature, the uniform of
step i being splitmix64 of (seed, i)), so both give the same tokens for the same file, prompt
and seed. The prompt runs through the C tool's eager forward pass, op for op; each later token
through a compiled step replayed with the token and position as inputs, as the C tool's is
(`Model.step`). This loop reads each step's logits back to sample on the host, where the C tool
keeps greedy sampling on the device."""
import math as _math

import numpy as _np

from . import gguf as _gguf
import wgtensor as _w

# Positions the first replayed step's graph attends over (Model.step), as tools/llama.h's
# LLAMA_REPLAY_SPAN.
REPLAY_SPAN = 64

_LAYER_NAMES = ("attn_norm", "attn_q", "attn_k", "attn_v", "attn_output", "ffn_norm", "ffn_gate", "ffn_up",
                "ffn_down")


class Config:
    """The sizes: dim, layers, heads, kv_heads, hidden (MLP), vocab, context; rope_base, eps."""

    __slots__ = ("dim", "layers", "heads", "kv_heads", "hidden", "vocab", "context", "rope_base", "eps")

    def __init__(self, dim, layers, heads, kv_heads, hidden, vocab, context, rope_base=10000.0, eps=1e-5):
        self.dim, self.layers, self.heads, self.kv_heads = int(dim), int(layers), int(heads), int(kv_heads)
        self.hidden, self.vocab, self.context = int(hidden), int(vocab), int(context)
        self.rope_base, self.eps = float(rope_base), float(eps)
        sizes = (self.dim, self.layers, self.heads, self.kv_heads, self.hidden, self.vocab, self.context)
        if min(sizes) <= 0 or self.dim % self.heads or self.heads % self.kv_heads or (self.dim // self.heads) % 2:
            raise ValueError("llama: bad sizes: dim %d, heads %d, kv heads %d (dim / heads must be even, heads a "
                             "multiple of kv heads; every size positive)" % (self.dim, self.heads, self.kv_heads))

    @property
    def head_dim(self):
        return self.dim // self.heads

    def __repr__(self):
        return "Config(%s)" % ", ".join("%s=%r" % (k, getattr(self, k)) for k in self.__slots__)


def rope_rows_to_file(rows, heads):
    """NumPy rows of a q or k matrix [heads * hd, ...] in wgtensor's rotate-half order, moved to
    the file's interleaved order (row h*hd + 2i + j holds h*hd + j*hd/2 + i)."""
    hd = rows.shape[0] // heads
    return rows.reshape(heads, 2, hd // 2, *rows.shape[1:]).swapaxes(1, 2).reshape(rows.shape)


def step_uniform(seed, step):
    """splitmix64's finaliser of seed + step: the uniform in [0, 1) of a sampling step."""
    m = (1 << 64) - 1
    z = (seed + 0x9e3779b97f4a7c15 * (step + 1)) & m
    z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & m
    z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & m
    z ^= z >> 31
    return (z >> 11) / 9007199254740992.0


def sample(logits, temperature=0.0, top_k=0, seed=0, step=0):
    """The next token from logits [vocab] (NumPy float32) by the C tool's rule (module doc)."""
    logits = _np.asarray(logits, _np.float32)
    if not temperature > 0:
        return int(_np.argmax(logits))  # the first largest
    k = top_k if 0 < top_k < logits.size else logits.size
    order = _np.argsort(-logits, kind="stable")[:k]
    scaled = logits[order] / _np.float32(temperature)
    p = _np.exp(scaled - scaled.max())
    p /= p.sum(dtype=_np.float32)
    cdf = _np.cumsum(p, dtype=_np.float32)
    threshold = cdf[-1] * _np.float32(step_uniform(seed, step))
    return int(order[min(int(_np.searchsorted(cdf, threshold, side="left")), k - 1)])


class Model:
    """A decoder's weights and KV caches on one context. Build it with `load`, or from NumPy
    arrays with `Model(config, arrays, ctx)`: arrays maps llama.cpp's names ("token_embd.weight",
    "blk.0.attn_q.weight", ..., "output_norm.weight", and "output.weight" or none for tied
    embeddings) to arrays or Tensors, attn_q and attn_k with their rows in the file's
    interleaved order (rope_rows_to_file). The weights stay as the file has them: the forward
    pass moves q's and k's columns to rotate-half order instead (a view, and one copy that
    joins the rotation's kernel), so block types need no row moves either."""

    def __init__(self, config, arrays, ctx=None, tokens=None):
        self.config, self.ctx, self.tokens = config, ctx or _w.get_default_context(), tokens
        c = config
        t = {name: _w.asarray(a, ctx=self.ctx) for name, a in arrays.items()}
        kvd = c.kv_heads * c.head_dim
        wants = {"token_embd.weight": (c.vocab, c.dim), "output_norm.weight": (c.dim,), "output.weight": (c.vocab, c.dim)}
        for i in range(c.layers):
            for n, shape in zip(_LAYER_NAMES, ((c.dim,), (c.dim, c.dim), (kvd, c.dim), (kvd, c.dim), (c.dim, c.dim),
                                               (c.dim,), (c.hidden, c.dim), (c.hidden, c.dim), (c.dim, c.hidden))):
                wants["blk.%d.%s.weight" % (i, n)] = shape
        for name, want in wants.items():
            if name in t and tuple(t[name].shape) != want:
                raise ValueError("llama: %s has shape %s; the sizes want %s" % (name, tuple(t[name].shape), want))
        embed = t["token_embd.weight"]
        self.act = _w.float16 if embed.dtype == _w.float16 else _w.float32
        self.embed = self._as_act(embed)
        self.out_norm = self._as_act(t["output_norm.weight"])
        self.output = self._as_act(t["output.weight"]) if "output.weight" in t else self.embed
        self.layers = []
        for i in range(c.layers):
            get = [self._as_act(t["blk.%d.%s.weight" % (i, n)]) for n in _LAYER_NAMES]
            self.layers.append(dict(zip(_LAYER_NAMES, get)))
        self._make_caches()

    def _as_act(self, t):
        return t if t.dtype in (self.act, _w.q8_0, _w.q4_0) else _w.cast(t, self.act)

    def _make_caches(self):
        c = self.config
        self._replays = {}  # step's compiled graphs by span: they hold the weights and caches they saw
        shape = (c.kv_heads, c.context, c.head_dim)
        # Filled with zeros rather than made by zeros(), which holds no data until written: a
        # replayed step's write into such a cache would make it a value of the step's graph.
        for layer in self.layers:
            layer["k_cache"] = _w.full(shape, 0, dtype=self.act, ctx=self.ctx)
            layer["v_cache"] = _w.full(shape, 0, dtype=self.act, ctx=self.ctx)

    def quantize(self, dtype):
        """Every matrix (embedding and output included) as q8_0 or q4_0 blocks; activations f32."""
        if dtype not in (_w.q8_0, _w.q4_0):
            raise ValueError("llama: quantize takes wgtensor.q8_0 or wgtensor.q4_0, not %r" % (dtype,))
        tied = self.output is self.embed
        self._replays = {}
        self.embed = _w.quantize(self.embed, dtype)
        self.output = self.embed if tied else _w.quantize(self.output, dtype)
        for layer in self.layers:
            for key in _LAYER_NAMES:
                if layer[key].ndim == 2:
                    layer[key] = _w.quantize(layer[key], dtype)
        if self.act != _w.float32:
            self.act = _w.float32
            self.out_norm = _w.cast(self.out_norm, _w.float32)
            for layer in self.layers:
                layer["attn_norm"] = _w.cast(layer["attn_norm"], _w.float32)
                layer["ffn_norm"] = _w.cast(layer["ffn_norm"], _w.float32)
            self._make_caches()
        return self

    def forward(self, tokens, pos=0, all_logits=False):
        """Runs tokens (ints) at positions pos.. through the model, filling the caches: the logits
        of the last token [vocab] (or of every token [n, vocab]) as a float32 Tensor."""
        c = self.config
        ids = _np.asarray(tokens, dtype=_np.int32).reshape(-1)
        n = ids.size
        if n == 0 or pos < 0 or pos + n > c.context:
            raise ValueError("llama: %d tokens at position %d do not fit the context of %d" % (n, pos, c.context))
        positions = _w.asarray(_np.arange(pos, pos + n, dtype=_np.int32), ctx=self.ctx)
        return self._layers(_w.asarray(ids, ctx=self.ctx), positions, n, pos, None, all_logits)

    def _layers(self, ids, positions, n, pos, past, all_logits=False):
        """The layers, the final norm and the output projection over ids [n] (i32 Tensor) at
        positions [n]: eagerly (past None) the caches written at pos.. and attention over their
        filled prefix; in a replayed step (past = (count, span): one token) the caches written
        at the position the tensor holds and attention over their first span positions, of
        which the first count ([1] i32: the position + 1) are seen."""
        c = self.config
        hd, group, total = c.head_dim, c.heads // c.kv_heads, pos + n
        x = _w.gather_rows(self.embed, ids)
        if x.dtype != self.act:
            x = _w.cast(x, self.act)
        for layer in self.layers:
            h = _w.rms_norm(x, layer["attn_norm"], c.eps)
            q = _w.rope(self._heads(_w.linear(h, layer["attn_q"]), n, c.heads, True), positions, c.rope_base)
            k = _w.rope(self._heads(_w.linear(h, layer["attn_k"]), n, c.kv_heads, True), positions, c.rope_base)
            v = self._heads(_w.linear(h, layer["attn_v"]), n, c.kv_heads, False)
            if past is None:
                _w.kv_cache_append(layer["k_cache"], k, pos)
                _w.kv_cache_append(layer["v_cache"], v, pos)
                # Query heads [kv_heads, group, n, hd] beside each key head broadcast over its group.
                seen = (c.kv_heads, group, total, hd)
                ks = _w.broadcast_to(_w.expand_dims(_w.slice(layer["k_cache"], 1, 0, total), 1), seen)
                vs = _w.broadcast_to(_w.expand_dims(_w.slice(layer["v_cache"], 1, 0, total), 1), seen)
                o = _w.attention(_w.reshape(q, (c.kv_heads, group, n, hd)), ks, vs, True, 0.0)
            else:
                # Rows of the caches seen with their sequence axis first, at the positions the
                # tensor holds: the write is part of every dispatch, before the attention. Each
                # query head's group shares its key head: q as [kv_heads, group, hd].
                count, span = past
                layer["k_cache"][:, positions] = k
                layer["v_cache"][:, positions] = v
                ks, vs = _w.slice(layer["k_cache"], 1, 0, span), _w.slice(layer["v_cache"], 1, 0, span)
                o = _w.attention_prefix(_w.reshape(q, (c.kv_heads, group, hd)), ks, vs, count, 1.0 / _math.sqrt(hd))
            o = _w.reshape(_w.swapaxes(_w.reshape(o, (c.heads, n, hd)), 0, 1), (n, c.dim))
            x = x + _w.linear(o, layer["attn_output"])
            h = _w.rms_norm(x, layer["ffn_norm"], c.eps)
            g, u = _w.linear(h, layer["ffn_gate"]), _w.linear(h, layer["ffn_up"])
            x = x + _w.linear(_w.silu(g) * u, layer["ffn_down"])
        last = x if all_logits else _w.slice(x, 0, n - 1, n)
        logits = _w.linear(_w.rms_norm(last, self.out_norm, c.eps), self.output)
        if logits.dtype != _w.float32:
            logits = _w.cast(logits, _w.float32)
        return logits if all_logits else _w.reshape(logits, (c.vocab,))

    def step(self, token, pos):
        """One decoding step of token (an int) at position pos, as forward([token], pos) computes
        it, from a compiled graph (wgtensor.compile) replayed with the token and position as its
        inputs: one dispatch instead of the step's ops recorded anew. Graph i attends over the
        caches' first 64 * 2^i positions (at most the context) and serves the positions its
        predecessor does not; each is built when first reached. The logits [vocab], float32."""
        c = self.config
        if not 0 <= pos < c.context:
            raise ValueError("llama: a token at position %d does not fit the context of %d" % (pos, c.context))
        span = REPLAY_SPAN
        while pos >= span and span < c.context:
            span *= 2
        span = min(span, c.context)
        graph = self._replays.get(span)
        if graph is None:
            def replayed(tok, at, count):
                return self._layers(tok, at, 1, 0, (count, span))
            graph = self._replays[span] = _w.compile(replayed)
        at = _np.array([token, pos, pos + 1], dtype=_np.int32)
        return graph(*(_w.asarray(at[i:i + 1], ctx=self.ctx) for i in range(3)))

    def _heads(self, y, n, heads, interleaved):
        """A product's [n, heads * hd] as [heads, n, hd]; interleaved (q, k): each head's columns
        from the file's order (pairs adjacent) to rotate-half order (pair i at i and i + hd/2)."""
        hd = self.config.head_dim
        if interleaved:
            y = _w.reshape(_w.swapaxes(_w.reshape(y, (n, heads, hd // 2, 2)), 2, 3), (n, heads, hd))
        else:
            y = _w.reshape(y, (n, heads, hd))
        return _w.swapaxes(y, 0, 1)

    def loss(self, tokens):
        """The mean next-token cross-entropy (nats) of tokens, from position 0."""
        ids = _np.asarray(tokens, dtype=_np.int32).reshape(-1)
        if ids.size < 2:
            raise ValueError("llama: a loss needs at least 2 tokens, not %d" % ids.size)
        lp = _w.log_softmax(self.forward(ids, 0, all_logits=True), -1).numpy().astype(_np.float64)
        return float(-lp[_np.arange(ids.size - 1), ids[1:]].mean())

    def generate(self, prompt, count, temperature=0.0, top_k=0, seed=0, replay=True):
        """Yields up to count tokens after the prompt's (ints; at least one), as they come. The
        prompt runs eagerly, each later token through `step` (replay=False: forward, the ops
        recorded anew each step)."""
        prompt = [int(t) for t in prompt]
        if not prompt:
            raise ValueError("llama: the prompt needs at least one token")
        count = min(int(count), self.config.context - len(prompt))
        logits = self.forward(prompt, 0)
        pos = len(prompt)
        for step in range(count):
            token = sample(logits.numpy(), temperature, top_k, seed, step)
            yield token
            if step + 1 < count:
                logits = self.step(token, pos) if replay else self.forward([token], pos)
                pos += 1

    def token_text(self, token):
        """A token as text: the file's vocabulary (SentencePiece's word mark as a space) or, for
        byte models, printable ASCII and newline as themselves and other bytes as <n>."""
        if self.tokens:
            return self.tokens[token].replace("\u2581", " ")
        return chr(token) if token < 127 and (token >= 32 or token == 10) else "<%d>" % token


def load(path, ctx=None):
    """A Model from a llama GGUF file (f32, f16, q8_0 or q4_0 tensors)."""
    with _gguf.open(path) as f:
        md = f.metadata
        if md.get("general.architecture") != "llama":
            raise ValueError("llama: %s is not a llama model (general.architecture)" % path)
        need = ("llama.embedding_length", "llama.block_count", "llama.attention.head_count",
                "llama.feed_forward_length")
        for key in need:
            if key not in md:
                raise ValueError("llama: %s lacks %s" % (path, key))
        if "token_embd.weight" not in f.tensors:
            raise ValueError("llama: the file has no tensor token_embd.weight")
        heads = md["llama.attention.head_count"]
        config = Config(md["llama.embedding_length"], md["llama.block_count"], heads,
                        md.get("llama.attention.head_count_kv", heads), md["llama.feed_forward_length"],
                        f.tensors["token_embd.weight"].shape[0], md.get("llama.context_length", 2048),
                        md.get("llama.rope.freq_base", 10000.0), md.get("llama.attention.layer_norm_rms_epsilon", 1e-5))
        arrays = {}
        for name in ["token_embd.weight", "output_norm.weight", "output.weight"] + [
                "blk.%d.%s.weight" % (i, n) for i in range(config.layers) for n in _LAYER_NAMES]:
            if name not in f.tensors:
                if name == "output.weight":
                    continue  # tied embeddings
                raise ValueError("llama: the file has no tensor %s" % name)
            arrays[name] = f.load(name, ctx)
        vocab = md.get("tokenizer.ggml.tokens")
        tokens = list(vocab) if isinstance(vocab, (list, tuple)) and len(vocab) == config.vocab else None
    return Model(config, arrays, ctx, tokens)


def _main(argv=None):
    import argparse
    import sys
    import time
    ap = argparse.ArgumentParser(prog="python3 -m wgtensor.llama", description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True, help="a llama GGUF file")
    ap.add_argument("--quantize", choices=("q8_0", "q4_0"), help="quantize every matrix first")
    ap.add_argument("--prompt", default="", help='bytes fed as tokens ("": one token 0)')
    ap.add_argument("--tokens", type=int, default=64, help="tokens to generate")
    ap.add_argument("--temperature", type=float, default=0.8, help="0 is greedy")
    ap.add_argument("--top-k", type=int, default=40)
    ap.add_argument("--sample-seed", type=int, default=1)
    ap.add_argument("--eval", metavar="FILE", help="the validation loss on the file's first context bytes, "
                                                   "before and after --quantize")
    ap.add_argument("--backend", choices=("auto", "webgpu", "cpu"), default="auto")
    a = ap.parse_args(argv)
    ctx = _w.Context(None if a.backend == "auto" else a.backend)
    m = load(a.model, ctx)
    c = m.config
    evals = None
    if a.eval:
        with open(a.eval, "rb") as f:
            evals = [b % c.vocab for b in f.read(c.context)]
        before = m.loss(evals)
        print("validation loss, %s weights: %.4f nats per token (%d tokens)"
              % (m.layers[0]["attn_q"].dtype, before, len(evals)), file=sys.stderr)
    if a.quantize:
        m.quantize(getattr(_w, a.quantize))
        if evals:
            after = m.loss(evals)
            print("validation loss, %s weights: %.4f nats per token\nquantized loss: %+.2f%% of the unquantized "
                  "model's" % (a.quantize, after, (after / before - 1) * 100), file=sys.stderr)
    print("model: %s on %s" % (c, ctx.device_name), file=sys.stderr)
    prompt = [b % c.vocab for b in a.prompt.encode()] or [0]
    sys.stdout.write(a.prompt)
    t0, made = time.perf_counter(), 0
    for token in m.generate(prompt, a.tokens, a.temperature, a.top_k, a.sample_seed):
        sys.stdout.write(m.token_text(token))
        sys.stdout.flush()
        made += 1
    dt = time.perf_counter() - t0
    print()
    print("%d tokens in %.2f s: %.1f tokens/s (prompt included; each step's logits read back)"
          % (made, dt, made / dt if dt > 0 else 0), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
