"""Quantized weights for Python (docs/quant.md): quantize / dequantize to and from the block
types q8_0 and q4_0, products with a quantized weight, and KV-cache appends."""
from . import _core, float32


def quantize(a, dtype):
    """a (float32 or float16, last axis a multiple of 32) as q8_0 or q4_0 blocks along its last axis."""
    return _core._quantize(a, dtype)


def dequantize(q, dtype=float32):
    """A q8_0 or q4_0 tensor's values as float32 (or float16)."""
    return _core._dequantize(q, dtype)


def matmul_quantized(x, w):
    """x @ w.T for x [..., K] (float) and a quantized weight w [N, K]: [..., N] of x's type."""
    return _core._matmul_quantized(x, w)


def kv_cache_append(cache, x, pos):
    """Writes x [..., n, d] into cache [..., length, d] at positions pos .. pos + n - 1 of the
    second-to-last axis, in place."""
    _core._kv_cache_append(cache, x, pos)
