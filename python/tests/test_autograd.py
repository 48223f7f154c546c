"""Autograd from Python: gradients against NumPy formulas and finite differences, no_grad and
detach, optimizers against their formulas, a training loop whose loss falls, and errors."""
import numpy as np
import pytest

import wgtensor as wt


def leaf(a):
    return wt.asarray(np.asarray(a, np.float32)).requires_grad_()


def test_requires_grad_marks_a_leaf_and_propagates(ctx):
    x = wt.asarray(np.ones(3, np.float32))
    assert x.requires_grad is False and x.grad is None
    x.requires_grad = True
    assert x.requires_grad and (x * 2).requires_grad
    assert not (x * 2).detach().requires_grad
    x.requires_grad_(False)
    assert not x.requires_grad


def test_gradients_match_numpy_formulas(ctx):
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal((4, 5)).astype(np.float32)
    ta, tb = leaf(a), leaf(b)
    up = rng.standard_normal((3, 5)).astype(np.float32)
    (ta @ tb).backward(wt.asarray(up))
    np.testing.assert_allclose(ta.grad.numpy(), up @ b.T, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(tb.grad.numpy(), a.T @ up, rtol=1e-5, atol=1e-5)
    # d sum(exp(a) * a) / da = exp(a) (1 + a)
    x = leaf(a)
    (wt.exp(x) * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp(a) * (1 + a), rtol=1e-5, atol=1e-6)


def test_gradient_of_tanh_mean_matches_finite_differences(ctx):
    a = np.linspace(-1.5, 1.2, 6, dtype=np.float32).reshape(2, 3)
    x = leaf(a)
    wt.tanh(x * x).mean().backward()
    f = lambda v: np.tanh(v.astype(np.float64) ** 2).mean()  # noqa: E731
    h, num = 1e-6, np.zeros(a.shape)
    for i in np.ndindex(a.shape):
        e = np.zeros(a.shape)
        e[i] = h
        num[i] = (f(a + e) - f(a - e)) / (2 * h)
    np.testing.assert_allclose(x.grad.numpy(), num, rtol=1e-4, atol=1e-6)


def test_gradients_accumulate_until_zero_grad(ctx):
    x = leaf([1.0, 2.0])
    (x * 3).sum().backward()
    (x * 3).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [6, 6])
    x.zero_grad()
    assert x.grad is None


def test_cross_entropy_value_and_gradient(ctx):
    rng = np.random.default_rng(2)
    logits = rng.standard_normal((4, 5)).astype(np.float32)
    targets = np.array([0, 3, 4, 1], np.int32)
    x = leaf(logits)
    loss = wt.cross_entropy(x, targets)
    sm = np.exp(logits - logits.max(1, keepdims=True))
    sm /= sm.sum(1, keepdims=True)
    assert loss.shape == () and abs(loss.item() + np.log(sm[np.arange(4), targets]).mean()) < 1e-5
    loss.backward()
    np.testing.assert_allclose(x.grad.numpy(), (sm - np.eye(5)[targets]) / 4, atol=1e-6)


def test_no_grad_as_context_manager_and_decorator(ctx):
    x = leaf([1.0, 2.0])
    with wt.no_grad():
        assert not (x * 2).requires_grad

    @wt.no_grad()
    def double(t):
        return t * 2
    assert not double(x).requires_grad
    assert (x * 2).requires_grad  # the scope ended


def test_sgd_and_adamw_steps_follow_their_formulas(ctx):
    p0, g = np.array([1.0, -2.0, 0.5], np.float32), np.array([0.5, 0.25, -1.0], np.float32)
    p = leaf(p0)
    opt = wt.optim.SGD([p], lr=0.1, momentum=0.9, weight_decay=0.01)
    (p * wt.asarray(g)).sum().backward()
    opt.step()
    opt.step()  # the momentum buffer doubles up on the same gradient (plus weight decay)
    v1 = g + 0.01 * p0
    p1 = p0 - 0.1 * v1
    v2 = 0.9 * v1 + g + 0.01 * p1
    np.testing.assert_allclose(p.numpy(), p1 - 0.1 * v2, rtol=1e-6)
    q = leaf(p0)
    adam = wt.optim.AdamW([q], lr=0.01, betas=(0.9, 0.99), eps=1e-8, weight_decay=0.1)
    assert adam.lr == pytest.approx(0.01)
    adam.lr = 0.02
    assert adam.lr == pytest.approx(0.02)
    (q * wt.asarray(g)).sum().backward()
    adam.step()
    # step 1: m^ = g, v^ = g^2, so the update is lr (sign(g) + wd p) up to eps
    np.testing.assert_allclose(q.numpy(), p0 - 0.02 * (g / (np.abs(g) + 1e-8) + 0.1 * p0), rtol=1e-5)
    adam.zero_grad()
    assert q.grad is None


def test_lr_schedule_and_clip_grad_norm(ctx):
    assert wt.lr_warmup_cosine(0, 10, 100, 1.0) == pytest.approx(0.1)
    assert wt.lr_warmup_cosine(55, 10, 100, 1.0, 0.1) == pytest.approx(0.1 + 0.45 * (1 + np.cos(np.pi * 0.5)))
    assert wt.lr_warmup_cosine(200, 10, 100, 1.0, 0.1) == pytest.approx(0.1)
    a, b = leaf([3.0, 0.0]), leaf([4.0])
    (a * a).sum().backward()  # grad 6, 0
    (b * b).sum().backward()  # grad 8
    assert wt.clip_grad_norm([a, b], 5.0) == pytest.approx(10.0)
    np.testing.assert_allclose(np.concatenate([a.grad.numpy(), b.grad.numpy()]), [3, 0, 4], rtol=1e-6)


def test_training_loop_loss_falls(ctx):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((64, 8)).astype(np.float32)
    y = (x[:, 0] + x[:, 1] > 0).astype(np.int32)
    w = wt.asarray(rng.standard_normal((8, 2)).astype(np.float32) * 0.1).requires_grad_()
    b = wt.zeros(2).requires_grad_()
    opt = wt.optim.AdamW([w, b], lr=0.05, weight_decay=0.0)
    xs = wt.asarray(x)
    losses = []
    for _ in range(30):
        opt.zero_grad()
        loss = wt.cross_entropy(xs @ w + b, y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0], losses


def test_errors_are_the_right_exceptions(ctx):
    with pytest.raises(TypeError):  # integers get no gradient: WGT_ERR_DTYPE
        wt.asarray(np.array([1, 2], np.int32)).requires_grad = True
    x = leaf([1.0, 2.0])
    with pytest.raises(ValueError):  # a loss of two elements needs grad=
        (x * 2).backward()
    with pytest.raises(ValueError, match="backward"):  # argmax has no gradient
        wt.argmax(x * 2).astype(wt.float32).backward()
    with pytest.raises(IndexError, match="2"):  # a target past the classes (found when computed), as torch
        wt.cross_entropy(leaf([[0.0, 1.0]]), np.array([2], np.int32)).item()
    with pytest.raises(TypeError):
        wt.optim.SGD([np.zeros(2)], lr=0.1)
    with pytest.raises(ValueError):
        wt.clip_grad_norm([x], -1.0)
