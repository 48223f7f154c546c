"""Array API functions written over the library's ops: the complex-number functions on real
tensors (wgtensor has no complex types), cumulative_sum, diff, unstack and the inspection
namespace. Each result is an ordinary op's (or a view), so gradients come with them."""
import operator as _operator

from . import _core


def _pkg():
    """The wgtensor package, for names it defines after importing this module (dtypes, the
    default context)."""
    import wgtensor
    return wgtensor

_MAX_DIMS = 8


def conj(x, /):
    """The complex conjugate: x itself for the real types wgtensor has."""
    return x


def real(x, /):
    """The real part: x itself for the real types wgtensor has."""
    return x


def imag(x, /):
    """The imaginary part: zeros of x's shape and type for the real types wgtensor has."""
    return _core.zeros(x.shape, x.dtype, x.ctx)


def _axis(fn, axis, ndim):
    axis = _operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError("%s: axis %d is out of range for %d dimensions" % (fn, axis, ndim))
    return axis % ndim


def _take_range(x, axis, start, stop):
    return x[(slice(None),) * axis + (slice(start, stop),)]


def _cumulative(fn, scan, initial, x, axis, dtype, include_initial):
    if axis is None:
        if x.ndim != 1:
            raise ValueError("%s: axis is required for %d dimensions" % (fn, x.ndim))
        axis = 0
    axis = _axis(fn, axis, x.ndim)
    if dtype is not None and x.dtype != dtype:
        x = x.astype(dtype)
    r = scan(x, axis)
    if include_initial:
        shape = list(x.shape)
        shape[axis] = 1
        r = _core.concat([_core.full(tuple(shape), initial, r.dtype, r.ctx), r], axis)
    return r


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    """Running sums along axis (which only a 1-D x may leave out), computed in dtype when given;
    include_initial puts the empty sum (0) first, so the axis grows by one."""
    return _cumulative("cumulative_sum", _core.cumsum, 0, x, axis, dtype, include_initial)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    """Running products along axis, as cumulative_sum; include_initial puts the empty product
    (1) first."""
    return _cumulative("cumulative_prod", _core.cumprod, 1, x, axis, dtype, include_initial)


def diff(x, /, *, axis=-1, n=1, prepend=None, append=None):
    """The n-th forward difference along axis, after prepend and append are joined on."""
    axis = _axis("diff", axis, x.ndim)
    n = _operator.index(n)
    if n < 0:
        raise ValueError("diff: n must be at least 0, not %d" % n)
    parts = [t for t in (prepend, x, append) if t is not None]
    if len(parts) > 1:
        x = _core.concat(parts, axis)
    for _ in range(n):
        if x.shape[axis] == 0:
            break
        x = _take_range(x, axis, 1, None) - _take_range(x, axis, None, -1)
    return x


def unstack(x, /, *, axis=0):
    """The slices of x along axis, as a tuple of views."""
    axis = _axis("unstack", axis, x.ndim)
    return tuple(x[(slice(None),) * axis + (i,)] for i in range(x.shape[axis]))


class _Info:
    """What __array_namespace_info__ returns: the library's capabilities, devices (contexts)
    and data types."""

    def capabilities(self):
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": _MAX_DIMS}

    def default_device(self):
        return _pkg().get_default_context()

    def devices(self):
        return [_pkg().get_default_context()]

    def default_dtypes(self, *, device=None):
        wt = _pkg()
        return {"real floating": wt.float32, "complex floating": None, "integral": wt.int32, "indexing": wt.int32}

    def dtypes(self, *, device=None, kind=None):
        names = {"bool": ("bool",), "signed integer": ("int8", "int16", "int32"),
                 "unsigned integer": ("uint8", "uint16", "uint32"), "real floating": ("float16", "float32"),
                 "complex floating": ()}
        names["integral"] = names["signed integer"] + names["unsigned integer"]
        names["numeric"] = names["integral"] + names["real floating"]
        kinds = (kind,) if isinstance(kind, str) else tuple(kind) if kind is not None else (
            "bool", "numeric")
        out = {}
        for k in kinds:
            if k not in names:
                raise ValueError("dtypes: unknown kind %r" % (k,))
            for name in names[k]:
                out[name] = getattr(_pkg(), name)
        return out


def __array_namespace_info__():
    return _Info()
