"""The array API's data-type functions: result_type, can_cast, finfo, iinfo and isdtype.

Promotion follows the array API's table (2024.12): within signed integers, unsigned integers
and real floats the wider type wins; an unsigned integer with a signed one gives the signed
type that holds both (uint8 with int8 is int16, uint32 with int32 is int64); uint64 with a
signed type has none (it would need 128 bits), which is an error. bool only meets bool. The standard
leaves integer-with-float and bool-with-number undefined: both are errors (NumPy would
promote; cast one side first). bfloat16 is outside the standard: with itself it stays
bfloat16, with float16 or float32 it gives float32 (PyTorch's rule).
"""

import numpy as _np

from . import (Tensor, bfloat16, bool as _bool, dtype as _dtype, float16, float32, int8, int16, int32, int64, uint8,
               uint16, uint32, uint64, _parse_dtype)

_SIGNED = (int8, int16, int32, int64)
_UNSIGNED = (uint8, uint16, uint32, uint64)
_FLOATS = (float16, bfloat16, float32)


def _kind(d):
    if d is _bool:
        return "bool"
    if d in _SIGNED:
        return "signed integer"
    if d in _UNSIGNED:
        return "unsigned integer"
    if d in _FLOATS:
        return "real floating"
    raise TypeError("%s has no place in type promotion (quantized block types do not promote)" % d)


def _bits(d):
    return 8 * d.itemsize


def _promote(a, b):
    if a is b:
        return a
    ka, kb = _kind(a), _kind(b)
    if ka == kb == "real floating":
        return float32 if bfloat16 in (a, b) or float32 in (a, b) else a
    if ka == kb:
        return a if _bits(a) >= _bits(b) else b
    if {ka, kb} == {"signed integer", "unsigned integer"}:
        s, u = (a, b) if ka == "signed integer" else (b, a)
        for t in _SIGNED:
            if _bits(t) > _bits(u) and _bits(t) >= _bits(s):
                return t
        raise TypeError("result_type: %s and %s have no common type (it would need 128 bits)" % (a, b))
    raise TypeError("result_type: %s and %s do not promote (the array API leaves %s with %s undefined; "
                    "cast one first)" % (a, b, ka, kb))


def result_type(*arrays_and_dtypes):
    """The type the array API's promotion gives for the tensors, dtypes and Python scalars
    given (a scalar takes the others' type when its kind fits, as the standard says)."""
    types, scalars = [], []
    for x in arrays_and_dtypes:
        if isinstance(x, Tensor):
            types.append(x.dtype)
        elif isinstance(x, (bool, int, float)) and not isinstance(x, _dtype):
            scalars.append(x)
        else:
            types.append(_parse_dtype(x))
    if not types:
        raise TypeError("result_type: needs at least one tensor or dtype")
    r = types[0]
    for t in types[1:]:
        r = _promote(r, t)
    for s in scalars:
        k = _kind(r)
        ok = (k == "bool") if isinstance(s, bool) else (k != "bool") if isinstance(s, int) else k == "real floating"
        if not ok:
            raise TypeError("result_type: a Python %s does not promote with %s" % (type(s).__name__, r))
    return r


def can_cast(from_, to):
    """Whether promotion allows from_ (a dtype or a tensor) to become to: result_type(from_, to) is to."""
    f = from_.dtype if isinstance(from_, Tensor) else _parse_dtype(from_)
    t = _parse_dtype(to)
    try:
        return _promote(f, t) is t
    except TypeError:
        return False


class finfo_object:
    """Machine limits of a float type: bits, eps, max, min, smallest_normal, dtype."""

    def __init__(self, bits, eps, max, smallest_normal, dtype):
        self.bits, self.eps, self.max, self.min = bits, eps, max, -max
        self.smallest_normal, self.dtype = smallest_normal, dtype

    def __repr__(self):
        return "finfo(bits=%d, eps=%r, max=%r, min=%r, smallest_normal=%r, dtype=%s)" % (
            self.bits, self.eps, self.max, self.min, self.smallest_normal, self.dtype)


class iinfo_object:
    """Limits of an integer type: bits, max, min, dtype."""

    def __init__(self, bits, min, max, dtype):
        self.bits, self.min, self.max, self.dtype = bits, min, max, dtype

    def __repr__(self):
        return "iinfo(bits=%d, min=%d, max=%d, dtype=%s)" % (self.bits, self.min, self.max, self.dtype)


def finfo(type):
    """Limits of a float type (a dtype or a tensor of one)."""
    d = type.dtype if isinstance(type, Tensor) else _parse_dtype(type)
    if d is bfloat16:  # 8 significand bits, f32's exponent
        return finfo_object(16, 2.0 ** -7, float(_np.float32(3.3895313892515355e38)), 2.0 ** -126, d)
    if d not in (float16, float32):
        raise TypeError("finfo: %s is not a floating type" % d)
    f = _np.finfo(d.numpy)
    return finfo_object(f.bits, float(f.eps), float(f.max), float(f.smallest_normal), d)


def iinfo(type):
    """Limits of an integer type (a dtype or a tensor of one)."""
    d = type.dtype if isinstance(type, Tensor) else _parse_dtype(type)
    if d not in _SIGNED + _UNSIGNED:
        raise TypeError("iinfo: %s is not an integer type" % d)
    i = _np.iinfo(d.numpy)
    return iinfo_object(i.bits, int(i.min), int(i.max), d)


_KINDS = {"bool", "signed integer", "unsigned integer", "integral", "real floating", "complex floating", "numeric"}


def isdtype(dtype, kind):
    """Whether dtype is of kind: a dtype, one of the array API's kind names ('bool', 'signed
    integer', 'unsigned integer', 'integral', 'real floating', 'complex floating', 'numeric'),
    or a tuple of those."""
    d = _parse_dtype(dtype)
    if isinstance(kind, tuple):
        return any(isdtype(d, k) for k in kind)
    if isinstance(kind, str):
        if kind not in _KINDS:
            raise ValueError("isdtype: unknown kind %r (one of %s)" % (kind, ", ".join(sorted(_KINDS))))
        try:
            k = _kind(d)
        except TypeError:
            return False
        if kind == "integral":
            return k in ("signed integer", "unsigned integer")
        if kind == "numeric":
            return k != "bool"
        return k == kind
    return d is _parse_dtype(kind)
