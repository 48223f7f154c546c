"""Optimizers over the C library's (docs/autograd.md): each updates its parameters in place
from their accumulated gradients; parameters without a gradient are left alone."""
from . import _core


class Optimizer:
    """The common part: step(), zero_grad() and the lr property."""

    def __init__(self, kind, params, lr, a, b, c, weight_decay):
        self.params = list(params)  # the tensors stay referenced from Python too
        self._opt = _core._optimizer(kind, self.params, float(lr), a, b, c, float(weight_decay))

    def step(self):
        """Updates every parameter that has a gradient (recorded as lazy, fused ops)."""
        _core._optimizer_call(self._opt, 0)

    def zero_grad(self):
        """Forgets the gradients of every parameter."""
        _core._optimizer_call(self._opt, 1)

    @property
    def lr(self):
        return _core._optimizer_call(self._opt, 3)

    @lr.setter
    def lr(self, value):
        _core._optimizer_call(self._opt, 2, float(value))


class SGD(Optimizer):
    """PyTorch's SGD: v = momentum v + (g + weight_decay p); p -= lr v."""

    def __init__(self, params, lr, momentum=0.0, weight_decay=0.0):
        super().__init__(0, params, lr, float(momentum), 0.0, 0.0, weight_decay)


class AdamW(Optimizer):
    """torch.optim.AdamW: p -= lr (m^ / (sqrt(v^) + eps) + weight_decay p)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):
        super().__init__(1, params, lr, float(betas[0]), float(betas[1]), float(eps), weight_decay)
