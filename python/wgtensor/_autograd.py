"""Autograd for Python (docs/autograd.md, docs/python.md): Tensor.requires_grad / backward /
grad / zero_grad / detach, no_grad, cross_entropy, the learning-rate schedule, gradient
clipping, and saving and loading tensors as .npy and safetensors files."""
import contextlib as _contextlib
import os as _os

from . import _core
from ._core import Tensor


def _requires_grad_(self, requires_grad=True):
    """Marks this tensor as a leaf that gets a gradient (or stops it getting one); returns it."""
    self.requires_grad = requires_grad
    return self


def _backward(self, grad=None):
    """Accumulates d self / d leaf into the .grad of every leaf this tensor depends on; grad is
    d(result)/d(self) of self's shape, or None for a one-element tensor (then 1)."""
    _core._backward(self, grad)


Tensor.requires_grad_ = _requires_grad_
Tensor.backward = _backward
Tensor.zero_grad = lambda self: _core._zero_grad(self)
Tensor.detach = lambda self: _core._detach(self)


class no_grad(_contextlib.ContextDecorator):
    """`with wgtensor.no_grad():` (or @wgtensor.no_grad() on a function): ops inside record no
    gradients, on this thread; scopes nest."""

    def __enter__(self):
        _core._no_grad_begin()
        return self

    def __exit__(self, *exc):
        _core._no_grad_end()
        return False


def cross_entropy(logits, targets):
    """Mean over rows of -log softmax(logits)[target]: logits [..., C] (float), targets integer
    class indices of logits' shape without its last axis (anything asarray takes)."""
    return _core._cross_entropy(logits, targets)


def lr_warmup_cosine(step, warmup, total, peak, min_lr=0.0):
    """Learning rate at step (from 0): linear warmup to peak over warmup steps, then a cosine
    down to min_lr at total steps, min_lr after."""
    return _core._lr_warmup_cosine(step, warmup, total, peak, min_lr)


def clip_grad_norm(params, max_norm):
    """Scales the gradients of params so their global L2 norm is at most max_norm; returns the
    norm before scaling (a wait for the device)."""
    return _core._clip_grad_norm(list(params), max_norm)


def _is_safetensors(path):
    return str(path).endswith(".safetensors")


def save(path, obj):
    """Writes a tensor as NumPy .npy (np.load reads it), or a dict {name: tensor} as a
    safetensors file (the path must end in .safetensors)."""
    path = _os.fspath(path)
    if isinstance(obj, dict):
        if not _is_safetensors(path):
            raise ValueError("save: a dict of tensors is written as safetensors; %r does not end in .safetensors"
                             % path)
        names = tuple(obj)
        for n in names:
            if not isinstance(n, str):
                raise TypeError("save: tensor names must be str, not %s" % type(n).__name__)
        _core._save_safetensors(path, names, tuple(obj[n] for n in names))
    elif isinstance(obj, Tensor):
        if _is_safetensors(path):
            raise ValueError("save: a safetensors file holds named tensors; pass a dict {name: tensor}")
        _core._save_npy(obj, path)
    else:
        raise TypeError("save: a Tensor or a dict of name -> Tensor, not %s" % type(obj).__name__)


def load(path, ctx=None):
    """A .npy file's tensor, or a safetensors file's tensors as a dict {name: tensor} in the
    file's order, on ctx (None: the default context)."""
    path = _os.fspath(path)
    if not _os.path.exists(path):  # the library reports it as a bad argument; Python has a type for it
        raise FileNotFoundError(2, "load: no such file", path)
    if not _is_safetensors(path):
        return _core._load(path, None, ctx)
    names = _core._safetensors_names(path)
    return {n: _core._load(path, n, ctx) for n in names.split("\n") if n}
