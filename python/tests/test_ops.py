"""The op table and the operators against NumPy (float64 references), on both backends:
elementwise ops on views and with broadcasting, Python scalars with NumPy 2's rules,
reductions with axes, shape ops, indexing, matmul, rows and transformer pieces."""
import math

import numpy as np
import pytest

import wgtensor as wt

RNG = np.random.default_rng(0)
X = RNG.uniform(-2, 2, size=(3, 4)).astype(np.float32)
POS = RNG.uniform(0.1, 3, size=(3, 4)).astype(np.float32)
erf = np.vectorize(math.erf)


def close(t, ref, rtol=2e-6, atol=2e-6):
    out = t.numpy() if isinstance(t, wt.Tensor) else t
    np.testing.assert_allclose(out.astype(np.float64), np.asarray(ref, np.float64), rtol=rtol, atol=atol)


def tol(ctx, fn):
    """Transcendentals on the GPU are within a few ulp, not correctly rounded."""
    return dict(rtol=2e-5, atol=2e-6) if ctx.backend == "webgpu" or fn in ("gelu", "erf") else {}


UNARY = {
    "neg": (X, lambda x: -x), "abs": (X, np.abs), "sign": (X, np.sign), "square": (X, np.square),
    "sqrt": (POS, np.sqrt), "rsqrt": (POS, lambda x: 1 / np.sqrt(x)), "reciprocal": (POS, lambda x: 1 / x),
    "exp": (X, np.exp), "expm1": (X, np.expm1), "log": (POS, np.log), "log1p": (POS, np.log1p),
    "sin": (X, np.sin), "cos": (X, np.cos), "tanh": (X, np.tanh), "sigmoid": (X, lambda x: 1 / (1 + np.exp(-x))),
    "relu": (X, lambda x: np.maximum(x, 0)), "silu": (X, lambda x: x / (1 + np.exp(-x))),
    "softplus": (X, lambda x: np.log1p(np.exp(x))), "gelu": (X, lambda x: x * (1 + erf(x / math.sqrt(2))) / 2),
    "gelu_tanh": (X, lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))),
    "floor": (X, np.floor), "ceil": (X, np.ceil), "round": (X * 3, np.round), "erf": (X, erf),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_against_numpy_on_a_view(ctx, name):
    x, ref = UNARY[name]
    t = wt.asarray(np.ascontiguousarray(x.T)).T  # a transposed view
    close(getattr(wt, name)(t), ref(x.astype(np.float64)), **tol(ctx, name))


def test_unary_with_parameters_and_predicates(ctx):
    x = X.astype(np.float64)
    close(wt.leaky_relu(X), np.where(x > 0, x, 0.01 * x))
    close(wt.leaky_relu(X, negative_slope=0.2), np.where(x > 0, x, 0.2 * x))
    close(wt.elu(X, alpha=0.5), np.where(x > 0, x, 0.5 * np.expm1(x)), **tol(ctx, "elu"))
    v = np.array([1.0, np.nan, np.inf, -np.inf], np.float32)
    assert wt.isnan(v).tolist() == [0, 1, 0, 0] and wt.isinf(v).tolist() == [0, 0, 1, 1]
    assert wt.logical_not([0, 3]).tolist() == [1, 0]
    close(wt.clip(X, -1, 0.5), np.clip(x, -1, 0.5))
    close(wt.clip(X, None, 0.5), np.minimum(x, 0.5))
    assert wt.clip(wt.arange(-3, 3), 0, None).tolist() == [0, 0, 0, 0, 1, 2]


B = RNG.uniform(0.5, 2, size=(4,)).astype(np.float32)
BINARY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "pow": np.power,
    "maximum": np.maximum, "minimum": np.minimum, "mod": np.mod, "atan2": np.arctan2,
    "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
    "ge": np.greater_equal, "logical_and": np.logical_and, "logical_or": np.logical_or,
    "floor_divide": np.floor_divide,
}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_broadcasts_against_numpy(ctx, name):
    a = np.abs(X) if name == "pow" else np.round(X * 2) / 2
    b = np.round(B * 2) / 2
    close(getattr(wt, name)(wt.asarray(a), wt.asarray(b)), BINARY[name](a.astype(np.float64), b), **tol(ctx, name))


def test_integer_arithmetic_follows_numpy(ctx):
    a = np.array([-7, -3, 0, 3, 7], np.int32)
    b = np.array([2, -2, 3, 2, -3], np.int32)
    ta, tb = wt.asarray(a), wt.asarray(b)
    assert (ta // tb).tolist() == (a // b).tolist()
    assert (ta % tb).tolist() == (a % b).tolist()
    assert (ta / tb).dtype == wt.float32
    close(ta / tb, a / b)
    assert (~ta).tolist() == (~a).tolist()
    u = np.array([0, 1, 4000000000], np.uint32)
    assert (~wt.asarray(u)).tolist() == (~u).tolist()
    with pytest.raises(TypeError, match="bitwise"):
        ~wt.asarray([1.0])


def test_operators_with_python_scalars_follow_numpy_2(ctx):
    x = X.astype(np.float64)
    t = wt.asarray(X)
    close(t + 1, x + 1)
    close(1 - t, 1 - x)
    close(2.5 * t, 2.5 * x)
    close(t / 2, x / 2)
    close(2 ** t, 2 ** x, **tol(ctx, "pow"))
    close(t ** 2, x ** 2)
    close(-t, -x)
    close(abs(t), np.abs(x))
    assert (t > 0).tolist() == (x > 0).astype(np.uint32).tolist()
    assert (t == t).numpy().all()
    i = wt.arange(5)
    assert (i + 1).dtype == wt.int32 and (i * 2).tolist() == [0, 2, 4, 6, 8]
    assert (i + 0.5).dtype == wt.float32 and (i + 0.5).tolist() == [0.5, 1.5, 2.5, 3.5, 4.5]
    assert (10 - i).tolist() == [10, 9, 8, 7, 6] and (7 // wt.asarray([2])).tolist() == [3]
    with pytest.raises(OverflowError, match="out of bounds for i32"):
        i + 2**40
    with pytest.raises(OverflowError, match="out of bounds for u32"):
        wt.asarray([1], dtype=wt.uint32) + (-1)
    with pytest.raises(ValueError):  # rounds to infinity in f16: never silently
        wt.asarray([1.0], dtype=wt.float16) * 1e6
    # An ndarray on the left defers to the tensor.
    r = np.arange(4, dtype=np.float32) + wt.ones(4)
    assert isinstance(r, wt.Tensor) and r.tolist() == [1, 2, 3, 4]


def test_mixed_tensor_types_promote_or_refuse(ctx):
    f16 = wt.asarray([1.5], dtype=wt.float16)
    assert (f16 + wt.asarray([1.0])).dtype == wt.float32
    assert (wt.arange(2) * wt.asarray([0.5, 0.5])).dtype == wt.float32
    assert (wt.asarray([1], dtype=wt.bfloat16) + wt.arange(2)).dtype == wt.float32
    with pytest.raises(TypeError, match="no common type"):
        wt.arange(2, dtype=wt.int64) + wt.asarray([1, 2], dtype=wt.uint64)
    with pytest.raises(TypeError, match="bool with a number undefined"):
        wt.arange(2) + wt.asarray([True, False])


INTS = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]


@pytest.mark.parametrize("x", INTS)
@pytest.mark.parametrize("y", INTS)
def test_two_integer_types_promote_as_numpy(ctx, x, y):
    a = np.array([[3], [0], [1]], dtype=x)
    b = np.array([2, 5], dtype=y)
    ta, tb = wt.asarray(a, dtype=x), wt.asarray(b, dtype=y)
    want = np.result_type(a, b)
    if want == np.float64:  # uint64 with a signed type: the standard has no common type
        with pytest.raises(TypeError, match="no common type"):
            ta + tb
        return
    for op in ("__add__", "__mul__", "__gt__", "__and__"):
        got, ref = getattr(ta, op)(tb), getattr(a, op)(b)
        assert np.dtype(got.numpy().dtype) == ref.dtype, (op, got.dtype, ref.dtype)
        np.testing.assert_array_equal(got.numpy(), ref)


@pytest.mark.parametrize("name", ["sum", "mean", "max", "min", "prod"])
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions_against_numpy(ctx, name, axis, keepdims):
    a = RNG.uniform(0.5, 1.5, size=(2, 3, 4)).astype(np.float32)
    ref = getattr(np, name)(a.astype(np.float64), axis=axis, keepdims=keepdims)
    close(getattr(wt.asarray(a), name)(axis=axis, keepdims=keepdims), ref, rtol=1e-5)


def test_var_std_arg_and_cumsum(ctx):
    a = RNG.normal(size=(3, 5)).astype(np.float32)
    x = a.astype(np.float64)
    t = wt.asarray(a)
    close(t.var(), x.var(), rtol=1e-5)
    close(t.std(axis=1, ddof=1), x.std(axis=1, ddof=1), rtol=1e-5)
    close(wt.var(t, axis=(0,), ddof=1, keepdims=True), x.var(axis=0, ddof=1, keepdims=True), rtol=1e-5)
    assert t.argmax().item() == a.argmax() and t.argmin(axis=1).tolist() == a.argmin(axis=1).tolist()
    assert t.argmax(axis=0, keepdims=True).shape == (1, 5) and t.argmax(keepdims=True).shape == (1, 1)
    close(t.cumsum(axis=1), np.cumsum(x, axis=1), rtol=1e-5, atol=1e-5)
    close(t.cumsum(), np.cumsum(x), rtol=1e-5, atol=1e-5)


def test_matmul_linear_and_rows(ctx):
    a = RNG.normal(size=(2, 3, 4)).astype(np.float32)
    w = RNG.normal(size=(5, 4)).astype(np.float32)
    bias = RNG.normal(size=(5,)).astype(np.float32)
    x, w64 = a.astype(np.float64), w.astype(np.float64)
    close(wt.asarray(a) @ wt.asarray(w).T, x @ w64.T, rtol=1e-5, atol=1e-5)
    close(wt.matmul(wt.asarray(a[0, 0]), wt.asarray(w.T)), x[0, 0] @ w64.T, rtol=1e-5, atol=1e-5)
    close(wt.linear(a, w, bias), x @ w64.T + bias, rtol=1e-5, atol=1e-5)
    close(wt.linear(wt.asarray(a), w), x @ w64.T, rtol=1e-5, atol=1e-5)
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    close(wt.softmax(a), e / e.sum(axis=-1, keepdims=True), rtol=1e-5, atol=1e-6)
    e0 = np.exp(x - x.max(axis=0, keepdims=True))
    close(wt.softmax(a, axis=0), e0 / e0.sum(axis=0, keepdims=True), rtol=1e-5, atol=1e-6)
    close(wt.log_softmax(a), np.log(e / e.sum(axis=-1, keepdims=True)), rtol=1e-5, atol=1e-5)
    g, b4 = RNG.normal(size=(4,)).astype(np.float32), RNG.normal(size=(4,)).astype(np.float32)
    ln = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5) * g + b4
    close(wt.layer_norm(a, g, b4), ln, rtol=1e-4, atol=1e-5)
    close(wt.layer_norm(a, eps=1e-3), (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-3),
          rtol=1e-4, atol=1e-5)
    close(wt.rms_norm(a, g), x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-6) * g, rtol=1e-4, atol=1e-5)


def test_shape_ops(ctx):
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    t = wt.asarray(a)
    assert t.reshape(4, 6).tolist() == a.reshape(4, 6).tolist() and t.reshape((-1,)).shape == (24,)
    assert wt.broadcast_to(wt.asarray(a[0, 0]), (2, 4)).tolist() == np.broadcast_to(a[0, 0], (2, 4)).tolist()
    assert wt.expand(wt.asarray(a[:, :1]), (-1, 3, -1)).shape == (2, 3, 4)
    assert t.transpose().tolist() == a.transpose().tolist() and t.transpose((1, 0, 2)).tolist() == \
        a.transpose(1, 0, 2).tolist()
    assert t.swapaxes(0, 2).tolist() == a.swapaxes(0, 2).tolist() and t.mT.shape == (2, 4, 3)
    assert t.flip().tolist() == np.flip(a).tolist() and t.flip(axis=1).tolist() == np.flip(a, 1).tolist()
    assert wt.slice(t, 2, 3, 0, -2).tolist() == a[:, :, 3:0:-2].tolist()
    assert wt.as_strided(t, (2, 2), (1, 4)).tolist() == [[0, 4], [1, 5]]
    assert wt.expand_dims(t, 1).shape == (2, 1, 3, 4) and wt.squeeze(wt.expand_dims(t, 0)).shape == (2, 3, 4)
    assert t.flatten().tolist() == a.ravel().tolist() and t.T.ravel().tolist() == a.T.ravel().tolist()
    assert t.contiguous().is_contiguous and t.T.contiguous().tolist() == a.T.tolist()
    assert wt.concat([t, t], axis=1).tolist() == np.concatenate([a, a], 1).tolist()
    assert wt.stack([t, t], axis=-1).tolist() == np.stack([a, a], -1).tolist()
    parts = wt.split(t, [1, 3], axis=2)
    assert [p.tolist() for p in parts] == [p.tolist() for p in np.split(a, [1, 3], axis=2)]
    assert [p.shape for p in wt.split(t, 3, axis=1)] == [(2, 1, 4)] * 3
    assert wt.pad(t, ((0, 1), (2, 0), (1, 1)), constant_values=7).tolist() == \
        np.pad(a, ((0, 1), (2, 0), (1, 1)), constant_values=7).tolist()
    assert wt.astype(t, "int32").dtype == wt.int32 and t.astype(wt.float16).tolist() == a.tolist()


def test_where_and_indexing_ops(ctx):
    a = np.arange(12, dtype=np.float32).reshape(4, 3)
    t = wt.asarray(a)
    assert wt.where(t > 5, t, 0.0).tolist() == np.where(a > 5, a, 0).tolist()
    idx = np.array([[3, 0], [1, 1]], np.int32)
    assert wt.gather_rows(t, idx).tolist() == a[idx].tolist()
    assert t.take(wt.asarray([2, 0]), axis=1).tolist() == np.take(a, [2, 0], axis=1).tolist()
    d = wt.zeros((4, 3))
    assert wt.set_rows(d, wt.asarray([1, 3]), wt.ones((2, 3))) is None
    assert d.tolist() == [[0] * 3, [1] * 3, [0] * 3, [1] * 3]
    assert wt.one_hot(wt.asarray([2, 0]), 3).tolist() == [[0, 0, 1], [1, 0, 0]]
    assert wt.one_hot(wt.asarray([1]), 2, dtype="int32").dtype == wt.int32
    assert wt.triu(t, 1).tolist() == np.triu(a, 1).tolist() and wt.tril(t).tolist() == np.tril(a).tolist()
    with pytest.raises(IndexError, match="out of range"):
        wt.gather_rows(t, wt.asarray([4]))
    with pytest.raises(IndexError):
        wt.one_hot(wt.asarray([3]), 3)


def test_rope_and_attention(ctx):
    q = RNG.normal(size=(2, 5, 8)).astype(np.float32)
    k = RNG.normal(size=(2, 6, 8)).astype(np.float32)
    v = RNG.normal(size=(2, 6, 4)).astype(np.float32)
    x = q.astype(np.float64)
    half = 4
    freq = 10000.0 ** (-np.arange(half) * 2 / 8)
    ang = np.arange(5)[:, None] * freq[None, :]
    cos, sin = np.cos(ang), np.sin(ang)
    ref = np.concatenate([x[..., :half] * cos - x[..., half:] * sin, x[..., half:] * cos + x[..., :half] * sin], -1)
    close(wt.rope(q), ref, rtol=1e-5, atol=1e-5)
    s = q.astype(np.float64) @ k.astype(np.float64).transpose(0, 2, 1) / math.sqrt(8)
    mask = np.arange(6)[None, :] > np.arange(5)[:, None] + 1
    s = np.where(mask, -np.inf, s)
    p = np.exp(s - s.max(-1, keepdims=True))
    close(wt.attention(q, k, v, causal=True), (p / p.sum(-1, keepdims=True)) @ v, rtol=1e-4, atol=1e-5)


def test_attention_prefix(ctx):
    # Grouped heads as decoding reads its cache: q [kv_heads, group, d], keys past count unread.
    q = RNG.normal(size=(2, 3, 8)).astype(np.float32)
    k = RNG.normal(size=(2, 10, 8)).astype(np.float32)
    v = RNG.normal(size=(2, 10, 5)).astype(np.float32)
    k[:, 6:] = np.nan
    v[:, 6:] = np.nan
    s = q.astype(np.float64) @ k[:, :6].astype(np.float64).transpose(0, 2, 1) / math.sqrt(8)
    p = np.exp(s - s.max(-1, keepdims=True))
    ref = (p / p.sum(-1, keepdims=True)) @ v[:, :6].astype(np.float64)
    close(wt.attention_prefix(q, k, v, np.array([6], np.int32)), ref, rtol=1e-4, atol=1e-5)
    close(wt.attention_prefix(q, k, v, np.array([6], np.uint32), scale=1 / math.sqrt(8)), ref, rtol=1e-4, atol=1e-5)
    assert np.isnan(wt.attention_prefix(q, k, v, np.array([0], np.int32)).numpy()).all()
    with pytest.raises(Exception, match="count is f32"):
        wt.attention_prefix(q, k, v, np.array([6], np.float32))
