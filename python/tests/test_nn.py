"""Convolutions against float64 NumPy references (torch.nn.functional's arguments and
arithmetic), on both backends: strides, paddings ("same" too), dilations, groups, transposed
convolutions, f16, and errors."""
import numpy as np
import pytest

import wgtensor as wt

RNG = np.random.default_rng(3)


def conv2d_ref(x, w, b, stride, padding, dilation, groups):
    """Direct convolution in float64: one strided slice of the padded input per tap."""
    x, w = x.astype(np.float64), w.astype(np.float64)
    (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
    n, cin, h, wd = x.shape
    cout, cin_g, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (ph[0], ph[1]), (pw[0], pw[1])))
    oh = (xp.shape[2] - dh * (kh - 1) - 1) // sh + 1
    ow = (xp.shape[3] - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((n, cout, oh, ow))
    cout_g = cout // groups
    for g in range(groups):
        xs = xp[:, g * cin_g:(g + 1) * cin_g]
        ws = w[g * cout_g:(g + 1) * cout_g]
        for i in range(kh):
            for j in range(kw):
                patch = xs[:, :, i * dh:i * dh + sh * (oh - 1) + 1:sh, j * dw:j * dw + sw * (ow - 1) + 1:sw]
                out[:, g * cout_g:(g + 1) * cout_g] += np.einsum("nchw,oc->nohw", patch, ws[:, :, i, j])
    if b is not None:
        out += b.astype(np.float64)[None, :, None, None]
    return out


def conv_transpose2d_ref(x, w, b, stride, padding, output_padding, dilation, groups):
    x, w = x.astype(np.float64), w.astype(np.float64)
    n, cin, h, wd = x.shape
    _, cout_g, kh, kw = w.shape
    cin_g = cin // groups
    oh = (h - 1) * stride[0] - 2 * padding[0] + dilation[0] * (kh - 1) + output_padding[0] + 1
    ow = (wd - 1) * stride[1] - 2 * padding[1] + dilation[1] * (kw - 1) + output_padding[1] + 1
    full = np.zeros((n, cout_g * groups, oh + 2 * padding[0] + kh * dilation[0] + h * stride[0],
                     ow + 2 * padding[1] + kw * dilation[1] + wd * stride[1]))
    for g in range(groups):
        xs = x[:, g * cin_g:(g + 1) * cin_g]
        for i in range(kh):
            for j in range(kw):
                contrib = np.einsum("nchw,co->nohw", xs, w[g * cin_g:(g + 1) * cin_g, :, i, j])
                r0, c0 = i * dilation[0], j * dilation[1]
                full[:, g * cout_g:(g + 1) * cout_g, r0:r0 + stride[0] * h:stride[0],
                     c0:c0 + stride[1] * wd:stride[1]] += contrib
    out = full[:, :, padding[0]:padding[0] + oh, padding[1]:padding[1] + ow]
    if b is not None:
        out = out + b.astype(np.float64)[None, :, None, None]
    return out


def rand(*shape, dtype=np.float32):
    return RNG.uniform(-1, 1, size=shape).astype(dtype)


def check(got, ref, x, w, dtype):
    """Within 1e-5 (f32) or 1e-3 (f16) of the largest sum of |terms|, bounded by |x| |w| K."""
    bound = np.abs(x.astype(np.float64)).max() * np.abs(w.astype(np.float64)).max() * w[0].size + 1
    tol = 1e-3 if dtype == np.float16 else 1e-5
    np.testing.assert_allclose(got.numpy().astype(np.float64), ref, rtol=0, atol=tol * bound)


@pytest.mark.parametrize("stride,padding,dilation,groups", [
    (1, 0, 1, 1), (2, 1, 1, 2), (3, 2, 2, 4), ((1, 2), (2, 0), (2, 1), 1), (1, "same", 2, 2), (1, "valid", 1, 1)])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_conv2d_matches_numpy(ctx, stride, padding, dilation, groups, dtype):
    x, w, b = rand(3, 4, 9, 7, dtype=dtype), rand(8, 4 // groups, 3, 2, dtype=dtype), rand(8, dtype=dtype)
    got = wt.conv2d(wt.asarray(x, ctx=ctx), wt.asarray(w, ctx=ctx), wt.asarray(b, ctx=ctx), stride=stride,
                    padding=padding, dilation=dilation, groups=groups)
    pair = lambda v: v if isinstance(v, tuple) else (v, v)
    s, d = pair(stride), pair(dilation)
    if padding == "same":
        pads = [(dd * (k - 1) // 2, dd * (k - 1) - dd * (k - 1) // 2) for dd, k in zip(d, w.shape[2:])]
    elif padding == "valid":
        pads = [(0, 0), (0, 0)]
    else:
        pads = [(p, p) for p in pair(padding)]
    ref = conv2d_ref(x, w, b, s, pads, d, groups)
    assert got.dtype == wt.float16 if dtype == np.float16 else got.dtype == wt.float32
    check(got, ref, x, w, dtype)


def test_conv1d_matches_numpy(ctx):
    x, w = rand(2, 6, 13), rand(4, 3, 3)
    xt = wt.asarray(x.transpose(0, 2, 1).copy(), ctx=ctx).transpose((0, 2, 1))  # a strided view
    got = wt.conv1d(xt, wt.asarray(w, ctx=ctx), None, 2, 1, 2, 2)
    ref = conv2d_ref(x[:, :, None], w[:, :, None], None, (1, 2), [(0, 0), (1, 1)], (1, 2), 2)[:, :, 0]
    check(got, ref, x, w, np.float32)


@pytest.mark.parametrize("stride,padding,output_padding,dilation,groups", [
    (1, 0, 0, 1, 1), (2, 1, 1, 1, 2), (3, 2, 1, 2, 1), ((2, 1), (0, 1), (1, 0), (1, 2), 2)])
def test_conv_transpose2d_matches_numpy(ctx, stride, padding, output_padding, dilation, groups):
    x, w, b = rand(2, 4, 5, 6), rand(4, 3, 3, 2), rand(3 * groups)
    got = wt.conv_transpose2d(wt.asarray(x, ctx=ctx), wt.asarray(w, ctx=ctx), wt.asarray(b, ctx=ctx), stride, padding,
                              output_padding, groups, dilation)
    pair = lambda v: v if isinstance(v, tuple) else (v, v)
    ref = conv_transpose2d_ref(x, w, b, pair(stride), pair(padding), pair(output_padding), pair(dilation), groups)
    check(got, ref, x, w, np.float32)


def test_conv_errors(ctx):
    x, w = wt.asarray(rand(1, 4, 5, 5), ctx=ctx), wt.asarray(rand(6, 3, 3, 3), ctx=ctx)
    with pytest.raises(Exception, match="3 input channels per group"):
        wt.conv2d(x, w)
    with pytest.raises(Exception, match="padding"):
        wt.conv2d(x, w, padding="full")
    with pytest.raises(TypeError, match="stride must be an int or 2 ints"):
        wt.conv2d(x, w, stride=(1, 2, 3))


def pool_ref(x, k, s, p, d, ceil_mode, kind, count_include_pad=True):
    """max_pool2d / avg_pool2d in float64 with PyTorch's sizes."""
    x = x.astype(np.float64)
    n, c, h, w = x.shape

    def out_len(size, k, s, p, d):
        o = (size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
        return o - 1 if ceil_mode and (o - 1) * s >= size + p else o

    oh, ow = out_len(h, k[0], s[0], p[0], d[0]), out_len(w, k[1], s[1], p[1], d[1])
    out = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            rows = [i * s[0] - p[0] + a * d[0] for a in range(k[0])]
            cols = [j * s[1] - p[1] + b * d[1] for b in range(k[1])]
            rows = [r for r in rows if 0 <= r < h]
            cols = [q for q in cols if 0 <= q < w]
            win = x[:, :, rows][:, :, :, cols]
            if kind == "max":
                out[:, :, i, j] = win.max(axis=(2, 3))
            else:
                hs, ws = i * s[0] - p[0], j * s[1] - p[1]
                div = ((min(hs + k[0], h + p[0]) - hs) * (min(ws + k[1], w + p[1]) - ws) if count_include_pad
                       else len(rows) * len(cols))
                out[:, :, i, j] = win.sum(axis=(2, 3)) / div
    return out


@pytest.mark.parametrize("kernel,stride,padding,ceil_mode", [(2, None, 0, False), (3, 2, 1, True), ((3, 2), (2, 1), (1, 0), False)])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_pooling_matches_numpy(ctx, kernel, stride, padding, ceil_mode, dtype):
    x = rand(2, 3, 7, 8, dtype=dtype)
    pair = lambda v: v if isinstance(v, tuple) else (v, v)
    k, p = pair(kernel), pair(padding)
    s = pair(stride) if stride is not None else k
    xt = wt.asarray(x, ctx=ctx)
    got = wt.max_pool2d(xt, kernel, stride, padding, 1, ceil_mode)
    np.testing.assert_array_equal(got.numpy().astype(np.float64), pool_ref(x, k, s, p, (1, 1), ceil_mode, "max"))
    tol = 1e-3 if dtype == np.float16 else 1e-5
    for include in (True, False):
        got = wt.avg_pool2d(xt, kernel, stride=stride, padding=padding, ceil_mode=ceil_mode, count_include_pad=include)
        np.testing.assert_allclose(got.numpy().astype(np.float64), pool_ref(x, k, s, p, (1, 1), ceil_mode, "avg", include),
                                   rtol=0, atol=tol)


def test_max_pool_dilation_and_adaptive(ctx):
    x = rand(1, 2, 9, 7)
    got = wt.max_pool2d(wt.asarray(x, ctx=ctx), 2, dilation=(2, 1))
    np.testing.assert_array_equal(got.numpy().astype(np.float64), pool_ref(x, (2, 2), (2, 2), (0, 0), (2, 1), False, "max"))
    got = wt.adaptive_avg_pool2d(wt.asarray(x, ctx=ctx), (4, 3)).numpy()
    for i in range(4):
        for j in range(3):
            h0, h1 = i * 9 // 4, -(-(i + 1) * 9 // 4)
            w0, w1 = j * 7 // 3, -(-(j + 1) * 7 // 3)
            np.testing.assert_allclose(got[:, :, i, j], x[:, :, h0:h1, w0:w1].astype(np.float64).mean(axis=(2, 3)),
                                       rtol=0, atol=1e-6)


def test_pooling_errors(ctx):
    x = wt.asarray(rand(1, 2, 5, 5), ctx=ctx)
    with pytest.raises(Exception, match="larger than the padded input"):
        wt.max_pool2d(x, 7)
    with pytest.raises(Exception, match="padding 3 must lie in"):
        wt.avg_pool2d(x, 3, padding=3)
