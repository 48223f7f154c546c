"""Each family of ops raises each exception type that its inputs can call for, with the
library's message (naming the function): TypeError for a dtype it does not take, ValueError
for a shape or an argument, IndexError for an index out of range (the indexing family, and
wherever an op reads indices). MemoryError, DeviceLostError and TimeoutError, which come from
the device rather than from an op's inputs, are in test_context.py."""
import numpy as np
import pytest

import wgtensor as wt

I = np.arange(6, dtype=np.int32).reshape(2, 3)
F = np.ones((2, 3), np.float32)


def inputs(ctx):
    f = wt.asarray(np.arange(6, dtype=np.float32).reshape(2, 3), ctx=ctx)
    return {
        "f": f,
        "i": wt.asarray(np.arange(6, dtype=np.int32).reshape(2, 3), ctx=ctx),
        "b": f > 2,
        "x4": wt.ones((1, 2, 5, 5), ctx=ctx),
        "idx": lambda *v: wt.asarray(np.array(v, np.int32), ctx=ctx),
        "ctx": ctx,
    }


# (family, exception, call, words the message must hold)
CASES = [
    ("unary", TypeError, lambda t: wt.sqrt(t["i"]), "wgt_sqrt"),
    ("unary", ValueError, lambda t: wt.clip(t["f"], 2, 1), "wgt_clamp"),
    ("binary", TypeError, lambda t: wt.bitwise_and(t["f"], t["f"]), "wgt_bitwise_and"),
    ("binary", TypeError, lambda t: t["i"] + (t["f"] > 1), "do not promote"),
    ("binary", ValueError, lambda t: t["f"] + wt.ones(4, ctx=t["ctx"]), "do not broadcast"),
    ("reduction", TypeError, lambda t: wt.logsumexp(t["i"]), "wgt_logsumexp"),
    ("reduction", TypeError, lambda t: wt.var(t["b"]), "wgt_var"),
    ("reduction", ValueError, lambda t: wt.sum(t["f"], axis=5), "wgt_sum"),
    ("reduction", ValueError, lambda t: wt.std(t["f"], correction=-1), "correction"),
    ("scan", TypeError, lambda t: wt.cumprod(t["b"], axis=1), "wgt_cumprod"),
    ("scan", ValueError, lambda t: wt.cummax(t["f"], axis=4), "wgt_cummax"),
    ("manipulation", ValueError, lambda t: wt.reshape(t["f"], (4, 4)), "wgt_reshape"),
    ("manipulation", ValueError, lambda t: wt.concat([t["f"], wt.ones((2, 4), ctx=t["ctx"])], axis=0), "wgt_concat"),
    ("indexing", TypeError, lambda t: wt.take(t["f"], wt.asarray([0.5], ctx=t["ctx"]), axis=1), "wgt_take"),
    ("indexing", ValueError, lambda t: wt.take(t["f"], t["idx"](0), axis=2), "wgt_take"),
    ("indexing", IndexError, lambda t: wt.take(t["f"], t["idx"](7), axis=1), "out of range"),
    ("indexing", IndexError, lambda t: t["f"][5], "out of bounds"),
    ("indexing", IndexError, lambda t: t["f"][t["idx"](0, 2)], "out of range"),
    ("indexing", IndexError, lambda t: t["f"].__setitem__(t["idx"](9), 1.0), "wgt_set_rows"),
    ("indexing", IndexError, lambda t: wt.gather_rows(t["f"], t["idx"](2)), "wgt_gather_rows"),
    ("indexing", IndexError, lambda t: wt.take_along_axis(t["f"], wt.asarray([[3], [0]], ctx=t["ctx"]), axis=1),
     "wgt_take_along_axis"),
    ("indexing", IndexError, lambda t: wt.scatter(t["f"], 0, wt.asarray([[2, 0, 0]], ctx=t["ctx"]), t["f"][:1]),
     "wgt_scatter"),
    ("indexing", IndexError, lambda t: wt.index_add(t["f"], 0, t["idx"](0, 4), t["f"]), "wgt_index_add"),
    ("indexing", TypeError, lambda t: wt.masked_fill(t["f"].astype("int64"), t["b"], 1), "wgt_masked_fill"),
    ("indexing", ValueError, lambda t: wt.masked_select(t["f"], wt.ones(4, ctx=t["ctx"]) > 0), "wgt_masked_select"),
    ("sorting", TypeError, lambda t: wt.sort(t["f"].astype("int64")), "wgt_sort"),
    ("sorting", TypeError, lambda t: wt.searchsorted(t["f"][0], t["i"][0]), "wgt_searchsorted"),
    ("sorting", ValueError, lambda t: wt.topk(t["f"], 9), "wgt_topk"),
    ("sorting", TypeError, lambda t: wt.unique_values(t["f"].astype("int64")), "wgt_unique"),
    ("sorting", ValueError, lambda t: wt.nonzero(wt.asarray(1.0, ctx=t["ctx"])), "wgt_nonzero"),
    ("linalg", TypeError, lambda t: wt.linalg.inv(t["i"][:, :2]), "wgt_linalg_inv"),
    ("linalg", ValueError, lambda t: wt.linalg.inv(t["f"]), "square"),
    ("linalg", ValueError, lambda t: wt.linalg.solve(wt.zeros((2, 2), ctx=t["ctx"]), t["f"]), "singular"),
    ("linalg", TypeError, lambda t: wt.matmul(t["b"], t["b"].T), "wgt_matmul"),
    ("linalg", ValueError, lambda t: t["f"] @ t["f"], "wgt_matmul"),
    ("linalg", ValueError, lambda t: wt.einsum("ij,jk->ik", t["f"], t["f"]), "wgt_einsum"),
    ("nn", TypeError, lambda t: wt.conv2d(t["x4"].astype("int32"), wt.ones((3, 2, 3, 3), dtype="int32", ctx=t["ctx"])),
     "wgt_conv2d"),
    ("nn", ValueError, lambda t: wt.conv2d(t["x4"], wt.ones((3, 4, 3, 3), ctx=t["ctx"])), "wgt_conv2d"),
    ("nn", TypeError, lambda t: wt.max_pool2d(t["x4"].astype("int32"), 2), "wgt_max_pool2d"),
    ("nn", ValueError, lambda t: wt.max_pool2d(t["x4"], 0), "wgt_max_pool2d"),
    ("nn", IndexError, lambda t: wt.one_hot(t["idx"](0, 5), 3), "out of range"),
    ("creation", TypeError, lambda t: wt.zeros(2, dtype="complex64", ctx=t["ctx"]), "complex64"),
    ("creation", ValueError, lambda t: wt.zeros((-1,), ctx=t["ctx"]), "wgt_zeros"),
    ("creation", ValueError, lambda t: wt.random.uniform(1, 0, size=(2,), seed=1, ctx=t["ctx"]), "wgt_rand_uniform"),
    ("cast", TypeError, lambda t: t["i"].astype("q8_0"), "wgt_cast"),
    ("cast", ValueError, lambda t: t["f"].astype("q8_0"), "wgt_cast"),
    # NumPy arrays as operands (made tensors on the default context); None: any message.
    ("creation", TypeError, lambda t: wt.full((2,), 0.5, dtype=wt.int32), None),
    ("creation", ValueError, lambda t: wt.ones((2, -3)), None),
    ("elementwise", TypeError, lambda t: wt.sqrt(I), None),
    ("elementwise", ValueError, lambda t: wt.add(F, np.ones(4, np.float32)), None),
    ("scalars", TypeError, lambda t: wt.div_scalar(I, 0.5), None),
    ("scalars", ValueError, lambda t: wt.add_scalar(I, 2.0**40), None),
    ("cast", TypeError, lambda t: wt.astype(F, "float64"), None),
    ("reductions", ValueError, lambda t: wt.sum(F, axis=2), None),
    ("reductions", ValueError, lambda t: wt.max(np.ones((0,), np.float32)), None),
    ("reductions", TypeError, lambda t: wt.sum(F, axis=0.5), None),
    ("linalg", TypeError, lambda t: wt.matmul(I > 0, I.T > 0), None),  # bool (integers multiply)
    ("linalg", ValueError, lambda t: wt.matmul(F, F), None),
    ("rows", TypeError, lambda t: wt.softmax(I), None),
    ("rows", ValueError, lambda t: wt.layer_norm(F, np.ones(4, np.float32)), None),
    ("manipulation", ValueError, lambda t: wt.reshape(F, (4, 2)), None),
    ("manipulation", TypeError, lambda t: wt.concat([F, I]), None),
    ("indexing", IndexError, lambda t: wt.take(F, [3], axis=1), None),
    ("indexing", TypeError, lambda t: wt.gather_rows(F, np.zeros(2, np.float32)), None),
    ("transformer", ValueError, lambda t: wt.rope(np.ones((2, 3), np.float32)), None),
    ("transformer", TypeError, lambda t: wt.attention(I, I, I), None),
]


@pytest.mark.parametrize("family, exc, call, words", CASES,
                         ids=["%s-%s-%d" % (c[0], c[1].__name__, i) for i, c in enumerate(CASES)])
def test_each_family_raises_each_exception_type(ctx, family, exc, call, words):
    t = inputs(ctx)
    with pytest.raises(exc, match=words) as e:
        r = call(t)
        # On WebGPU an index held on the device is checked there: the read or sync reports it.
        if isinstance(r, wt.Tensor):
            r.numpy()
        ctx.sync()
    # The most specific type: an IndexError is not also reported as a plain ValueError case.
    assert type(e.value) is exc or (exc is ValueError and not isinstance(e.value, IndexError)), type(e.value)
    if hasattr(e.value, "status"):  # from the library: the message names the C function
        assert "wgt_" in str(e.value)


def test_the_table_covers_every_family_with_each_type():
    seen = {}
    for family, exc, _, _ in CASES:
        seen.setdefault(family, set()).add(exc)
    for family, kinds in seen.items():
        assert {TypeError, ValueError} <= kinds, "%s: %s" % (family, kinds)
    assert IndexError in seen["indexing"]
