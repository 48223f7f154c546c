"""wgtensor: tensor math on any GPU through WebGPU, with a CPU backend beside it.

The C extension wgtensor._core holds the tensor type, contexts, conversions and every op;
this layer adds what is easier in Python: dtype objects, the default context and `with`
blocks, the creation functions with NumPy's argument forms, repr, iteration and NumPy
aliases. docs/python.md describes the API and when data is copied.
"""
import builtins as _builtins
import operator as _operator
import sys as _sys
import threading as _threading

import numpy as _np

from . import _core, _indexing
from ._core import (BOUND as _BOUND, BackendError, DeviceLostError, Read, Tensor, UnavailableError, devices, empty, eval,
                    full, library_version, ones, zeros)

__version__ = library_version()


# ---- dtypes -------------------------------------------------------------------------------------

class dtype:
    """One of wgtensor's element types; equal to the NumPy dtype and the names it stands for.
    The block types q8_0 and q4_0 (docs/quant.md) have no NumPy dtype (numpy is None, itemsize
    0): block_size elements share block_bytes bytes."""

    __slots__ = ("name", "short", "code", "numpy", "itemsize", "block_size", "block_bytes")

    def __init__(self, name, short, code, numpy_type, itemsize=0):
        self.name, self.short, self.code = name, short, code
        self.numpy = None if numpy_type is None else _np.dtype(numpy_type)
        self.itemsize = itemsize if numpy_type is None else self.numpy.itemsize
        self.block_size, self.block_bytes = _core._dtype_block(code)

    def __repr__(self):
        return "wgtensor." + self.name

    def __str__(self):
        return self.name

    def __eq__(self, other):
        if isinstance(other, dtype):
            return other is self
        try:
            return _parse_dtype(other) is self
        except TypeError:
            return False

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash(self.numpy) if self.numpy is not None else hash(self.name)


float32 = dtype("float32", "f32", 1, _np.float32)
float16 = dtype("float16", "f16", 2, _np.float16)
int32 = dtype("int32", "i32", 3, _np.int32)
uint32 = dtype("uint32", "u32", 4, _np.uint32)
q8_0 = dtype("q8_0", "q8_0", 5, None)
q4_0 = dtype("q4_0", "q4_0", 6, None)
# The narrow types (docs/ops.md): storage, views, casts, comparisons and where; other ops want
# a cast first. bfloat16 has no NumPy type: numpy() and asarray go through float32.
bool = dtype("bool", "bool", 7, _np.bool_)
int8 = dtype("int8", "i8", 8, _np.int8)
uint8 = dtype("uint8", "u8", 9, _np.uint8)
int16 = dtype("int16", "i16", 10, _np.int16)
uint16 = dtype("uint16", "u16", 11, _np.uint16)
bfloat16 = dtype("bfloat16", "bf16", 12, None, 2)
# The 64-bit integers (docs/ops.md): storage, views, casts, where, sums and products, add,
# sub, mul, maximum, minimum, comparisons, bitwise ops, neg and abs. A NumPy int64 array
# still becomes int32 by default (checked per value: most ops and every index take int32);
# asarray(x, dtype=wgtensor.int64) keeps 64 bits.
int64 = dtype("int64", "i64", 13, _np.int64)
uint64 = dtype("uint64", "u64", 14, _np.uint64)
_ELEMENT_DTYPES = (float32, float16, int32, uint32, bool, int8, uint8, int16, uint16, int64, uint64)
_DTYPES = (float32, float16, int32, uint32, q8_0, q4_0, bool, int8, uint8, int16, uint16, bfloat16, int64, uint64)
_BY_NAME = {n: d for d in _ELEMENT_DTYPES for n in (d.name, d.short, d.numpy.str, d.numpy.char)}
_BY_NAME.update({"q8_0": q8_0, "q4_0": q4_0, "bfloat16": bfloat16, "bf16": bfloat16})
_BY_NAME.update({"half": float16, "float": float32, "int": int32})


def _parse_dtype(o):
    """A wgtensor dtype from a dtype, a name ('float32', 'f32'), a NumPy dtype or a scalar type."""
    if isinstance(o, dtype):
        return o
    if isinstance(o, str) and o in _BY_NAME:
        return _BY_NAME[o]
    if o is float:
        return float32
    if o is int:
        return int32
    if o is _builtins.bool:
        return bool
    try:
        npd = _np.dtype(o)
    except (TypeError, ValueError):
        raise TypeError("%r is not a wgtensor dtype (float32, float16, int64, uint64, int32, uint32, bool, int8, "
                        "uint8, int16, uint16 or bfloat16)" % (o,)) from None
    for d in _ELEMENT_DTYPES:
        if d.numpy == npd:
            return d
    raise TypeError("NumPy dtype %s has no wgtensor type (float32, float16, int64, uint64, int32, uint32, bool, int8, "
                    "uint8, int16 or uint16)" % npd)


# ---- contexts -------------------------------------------------------------------------------

class Context(_core.Context):
    """A device (WebGPU adapter or the CPU) and the tensors made on it.

    Context(backend=None, adapter=None, library=None, timeout_ms=0, quiet=False, fusion=True,
    max_device_bytes=0): backend 'auto' (None), 'webgpu' or 'cpu'; WGT_BACKEND and the other
    WGT_* variables apply as in C. Used as `with ctx:` it is the default context of the
    calling thread inside the block.
    """

    def __enter__(self):
        _stack().append(self)
        return self

    def __exit__(self, *exc):
        stack = _stack()
        if stack and stack[-1] is self:
            stack.pop()
        return False

    def __repr__(self):
        return "wgtensor.Context(backend=%r, device=%r)" % (self.backend, self.device_name)


_local = _threading.local()
_default_lock = _threading.Lock()
_default = None


def _stack():
    s = getattr(_local, "stack", None)
    if s is None:
        s = _local.stack = []
    return s


def get_default_context():
    """The innermost `with` context of this thread, else the process's default context, made
    on first use as the C library makes one: WebGPU when a real adapter works, else the CPU."""
    s = _stack()
    if s:
        return s[-1]
    global _default
    if _default is None:
        with _default_lock:
            if _default is None:
                _default = Context()
    return _default


# ---- conversion -----------------------------------------------------------------------------

def _to_numpy_source(obj):
    """obj as something with the buffer protocol in native byte order."""
    if isinstance(obj, _np.ndarray):
        a = obj
    elif isinstance(obj, _builtins.bool):
        return _np.asarray(obj, dtype=_np.bool_)
    elif isinstance(obj, int):
        if not -2**31 <= obj < 2**31:
            raise ValueError("asarray: integer %d is outside the range of int32 (give dtype=uint32 or a float type)"
                             % obj)
        return _np.asarray(obj, dtype=_np.int32)
    elif isinstance(obj, float):
        return _np.asarray(obj, dtype=_np.float64)
    elif obj is None or isinstance(obj, (str, bytes, dict, set)):
        raise TypeError("asarray: cannot make a tensor of %s" % type(obj).__name__)
    else:
        a = _np.asarray(obj)
    if a.dtype.kind not in "fiub":
        raise TypeError("asarray: cannot make a tensor of %s data (%s)" % (a.dtype, type(obj).__name__))
    if not a.dtype.isnative:
        a = a.astype(a.dtype.newbyteorder("="))
    return a


def _place(fn, ctx, device):
    """The context from ctx= or device= (the array API's name for it: a tensor's .device is
    its Context); both given must agree."""
    if device is None:
        return ctx
    if ctx is not None and ctx is not device:
        raise ValueError("%s: ctx and device name two different contexts" % fn)
    return device


def asarray(obj, dtype=None, ctx=None, *, device=None, copy=None):
    """A tensor of obj: a Tensor (as is, or cast / moved when dtype or ctx differ), a NumPy
    array of any layout (one copy, straight into the tensor's storage), a Python scalar or
    nested lists. Without dtype, float64 becomes float32, wider or narrower integers int32
    (uint32 for unsigned ones) and bool stays bool; a value the type cannot hold is an error naming it.
    copy (the array API's): True always gives a new tensor; False never copies, so anything
    but a Tensor already of that dtype and context is a ValueError; None copies when needed."""
    ctx = _place("asarray", ctx, device)
    if isinstance(obj, Tensor):
        t = obj
        if ctx is not None and t.ctx is not ctx:
            t = t.to(ctx)
        if dtype is not None and t.dtype != dtype:
            t = t.astype(dtype)
        if copy is False and t is not obj:
            raise ValueError("asarray: copy=False, but the tensor's dtype or context differ")
        if copy and t is obj:
            t = _core._from_buffer(t.numpy(), None, t.ctx)
        return t
    if copy is False:
        raise ValueError("asarray: copy=False, but a %s must be copied into a tensor" % type(obj).__name__)
    if isinstance(obj, memoryview):
        return _core._from_buffer(obj, dtype, ctx)
    return _core._from_buffer(_to_numpy_source(obj), dtype, ctx)


def array(obj, dtype=None, ctx=None, copy=True):
    """As asarray, and a Tensor given is copied unless copy=False."""
    t = asarray(obj, dtype, ctx)
    if copy and t is obj:
        t = _core._from_buffer(t.numpy(), None, t.ctx)
    return t


def from_numpy(a, ctx=None):
    """asarray for a NumPy array, keeping its type where wgtensor has it."""
    return asarray(a, None, ctx)


def _numpy(self):
    """The values as a read-only NumPy array: a view of the host copy for a contiguous tensor
    (kept valid by a reference to the tensor), else one row-major copy (docs/python.md);
    bfloat16 comes as float32 (exactly), NumPy having no bfloat16."""
    if self.dtype is bfloat16:
        return _np.asarray(memoryview(self.astype(float32)))
    return _np.asarray(memoryview(self))


def _array(self, dtype=None, copy=None):
    if copy is False and not self.is_contiguous:
        raise ValueError("a non-contiguous tensor cannot be viewed without a copy (copy=False)")
    a = _numpy(self) if self.dtype is bfloat16 else _np.asarray(memoryview(self))
    if dtype is not None and a.dtype != _np.dtype(dtype):
        return a.astype(dtype)
    if copy:
        return a.copy()
    return a


def _to(self, ctx):
    """This tensor on ctx (a copy through the host; the same tensor when already there)."""
    if self.ctx is ctx:
        return self
    return _core._from_buffer(self.numpy(), None, ctx)


# ---- creation -------------------------------------------------------------------------------

def _like(t, dtype):
    t = asarray(t)
    return t, (t.dtype if dtype is None else dtype)


def zeros_like(a, dtype=None, ctx=None, *, device=None):
    ctx = _place("zeros_like", ctx, device)
    a, d = _like(a, dtype)
    return zeros(a.shape, d, ctx or a.ctx)


def ones_like(a, dtype=None, ctx=None, *, device=None):
    ctx = _place("ones_like", ctx, device)
    a, d = _like(a, dtype)
    return ones(a.shape, d, ctx or a.ctx)


def empty_like(a, dtype=None, ctx=None, *, device=None):
    ctx = _place("empty_like", ctx, device)
    a, d = _like(a, dtype)
    return empty(a.shape, d, ctx or a.ctx)


def full_like(a, fill_value, dtype=None, ctx=None, *, device=None):
    ctx = _place("full_like", ctx, device)
    a, d = _like(a, dtype)
    return full(a.shape, fill_value, d, ctx or a.ctx)


def arange(start, stop=None, step=1, dtype=None, ctx=None, *, device=None):
    """NumPy's arange: int32 when start, stop and step are ints, else float32."""
    ctx = _place("arange", ctx, device)
    if stop is None:
        start, stop = 0, start
    for v in (start, stop, step):
        if not isinstance(v, (int, float, _np.integer, _np.floating)):
            raise TypeError("arange: start, stop and step must be numbers, not %s" % type(v).__name__)
    if dtype is None:
        dtype = int32 if _builtins.all(isinstance(v, (int, _np.integer)) for v in (start, stop, step)) else float32
    return _core._arange(float(start), float(stop), float(step), dtype, ctx)


def linspace(start, stop, num=50, endpoint=True, dtype=float32, ctx=None, *, device=None):
    """num values from start to stop, computed in float64 and rounded once."""
    return asarray(_np.linspace(start, stop, num, endpoint=endpoint), dtype, _place("linspace", ctx, device))


def eye(N, M=None, k=0, dtype=float32, ctx=None, *, device=None):
    """Ones on diagonal k of an [N, M] matrix (k > 0 above the main one), zeros elsewhere.
    Made on the device, a column of row numbers plus k compared with a row of column numbers,
    so no N x M array is built on the host."""
    ctx = _place("eye", ctx, device)
    n, m, k = (_operator.index(v) for v in (N, N if M is None else M, k))
    if n < 0 or m < 0:
        raise ValueError("eye: negative dimensions are not allowed (N=%d, M=%d)" % (n, m))
    if n == 0 or m == 0 or k >= m or -k >= n:
        return zeros((n, m), dtype, ctx)
    # The row numbers plus k lie in (-n, m + n): int32 holds them below 2^31.
    index = int32 if n + m < 2**31 else int64
    rows = arange(k, k + n, dtype=index, ctx=ctx).reshape(n, 1)
    cols = arange(0, m, dtype=index, ctx=ctx).reshape(1, m)
    return (rows == cols).astype(dtype)


class _Random:
    """Seeded random tensors made on the device by a counter-based generator (Philox4x32-10:
    wgt_rand_uniform, wgt_rand_normal, wgt_rand_bits): the same seed gives the same values on
    every backend. Without seed=, calls draw seeds 0, 1, 2, ... after random.seed(s)."""

    def __init__(self):
        self._next = 0
        self._lock = _threading.Lock()

    def seed(self, s):
        self._next = int(s)

    def _seed(self, seed):
        if seed is not None:
            seed = _builtins.int(seed)
            if not 0 <= seed < 2**64:
                raise ValueError("random: seed %d is outside 0 .. 2**64 - 1" % seed)
            return seed
        with self._lock:
            s, self._next = self._next, self._next + 1
        return s

    def uniform(self, low=0.0, high=1.0, size=(), dtype=float32, seed=None, ctx=None):
        return _core._random("uniform", size, low, high, self._seed(seed), dtype, ctx)

    def normal(self, loc=0.0, scale=1.0, size=(), dtype=float32, seed=None, ctx=None):
        return _core._random("normal", size, loc, scale, self._seed(seed), dtype, ctx)

    def integers(self, low, high=None, size=(), dtype=int32, seed=None, ctx=None):
        """Whole numbers in [low, high) (NumPy's Generator.integers; high None: [0, low))."""
        if high is None:
            low, high = 0, low
        return _core._random("uniform", size, low, high, self._seed(seed), dtype, ctx)

    def bits(self, size=(), seed=None, ctx=None):
        """The generator's raw 32-bit words (uint32)."""
        return _core._random("bits", size, 0.0, 0.0, self._seed(seed), uint32, ctx)

    def rand(self, *shape, seed=None, ctx=None):
        return self.uniform(0.0, 1.0, shape, float32, seed, ctx)

    def randn(self, *shape, seed=None, ctx=None):
        return self.normal(0.0, 1.0, shape, float32, seed, ctx)


random = _Random()


# ---- Tensor: the parts written in Python ---------------------------------------------------------

def _repr(self):
    if self.dtype.numpy is None:  # blocks, not elements: numpy() would refuse
        return "tensor(<%d blocks>, shape=%s, dtype=%s)" % (self.size // self.dtype.block_size, self.shape,
                                                            self.dtype.name)
    body = _np.array2string(self.numpy(), separator=", ", prefix="tensor(", threshold=1000)
    return "tensor(%s, dtype=%s)" % (body, self.dtype.name)


def _str(self):
    return _np.array2string(self.numpy(), threshold=1000)


def _scalar(self, what):
    if self.size != 1:
        raise ValueError("%s of a tensor of %d elements (only one-element tensors convert)" % (what, self.size))
    return self.numpy().reshape(()).item()


def _iter(self):
    if self.ndim == 0:
        raise TypeError("iteration over a 0-d tensor")
    for i in range(self.shape[0]):
        yield _core._squeeze_axis(_core.slice(self, 0, i, i + 1), 0)


def _squeeze(self, axis=None):
    if axis is None:
        axis = tuple(i for i, n in enumerate(self.shape) if n == 1)
    if isinstance(axis, (tuple, list)):
        t = self
        for ax in sorted((a % self.ndim if self.ndim else a for a in axis), reverse=True):
            t = _core._squeeze_axis(t, ax)
        return t
    return _core._squeeze_axis(self, axis)


Tensor.numpy = _numpy
Tensor.__array__ = _array
Tensor.__repr__ = _repr
Tensor.__str__ = _str
Tensor.__iter__ = _iter
Tensor.to = _to
Tensor.item = lambda self: _scalar(self, "item()")
Tensor.tolist = lambda self: self.numpy().tolist()
Tensor.__bool__ = lambda self: _builtins.bool(_scalar(self, "truth value"))
Tensor.__float__ = lambda self: float(_scalar(self, "float()"))
Tensor.__int__ = lambda self: int(_scalar(self, "int()"))
Tensor.squeeze = _squeeze
Tensor.flatten = lambda self: _core.reshape(_core.contiguous(self), (-1,))
Tensor.ravel = lambda self: _core.reshape(self, (-1,))
Tensor.T = property(lambda self: _core.transpose(self))
Tensor.mT = property(lambda self: _core.swapaxes(self, -1, -2))


def _index(self):
    if self.ndim != 0 or self.dtype not in (int32, uint32):
        raise TypeError("only 0-d integer tensors can be used as an index")
    return int(_scalar(self, "index"))


Tensor.__index__ = _index
Tensor.__getitem__ = _indexing.getitem
Tensor.__setitem__ = _indexing.setitem
for _name, _op in (("add", "+="), ("sub", "-="), ("mul", "*="), ("truediv", "/="), ("floordiv", "//="),
                   ("mod", "%="), ("pow", "**="), ("matmul", "@=")):
    setattr(Tensor, "__i%s__" % _name, _indexing.inplace(getattr(Tensor, "__%s__" % _name), _op))
del _name, _op


def _numpy_async(self):
    """Starts reading the values into a new NumPy array and returns a Read: .done() polls
    without blocking, .result() waits and returns the array. Reads started together share one
    submission to the device, so their transfers overlap."""
    return _core._read_begin(self, _np.empty(self.shape, self.dtype.numpy))


Tensor.numpy_async = _numpy_async
Tensor.__array_namespace__ = lambda self, api_version=None: _sys.modules[__name__]


def from_dlpack(x, ctx=None, *, device=None, copy=None):
    """A tensor of a DLPack-exporting array (NumPy, PyTorch on the CPU, ...): NumPy imports it
    without a copy, then asarray copies it once into the new tensor's storage (so copy=False
    is a ValueError)."""
    if copy is False:
        raise ValueError("from_dlpack: copy=False, but the data must be copied into a tensor")
    return asarray(_np.from_dlpack(x), ctx=_place("from_dlpack", ctx, device))


class compile:
    """compile(fn): fn traced once per input signature (shapes, dtypes, context) over graph
    placeholders into a compiled graph (wgt_graph_build), then dispatched on later calls with
    matching tensors (wgt_graph_dispatch): fused kernels, planned memory, reused commands.
    fn takes tensors and returns a tensor or a tuple of them; it must not read values (a read
    of a placeholder is an error) and Python control flow is fixed at trace time."""

    _counter = 0
    _counter_lock = _threading.Lock()

    def __init__(self, fn):
        self.fn = fn
        self._graphs = {}
        self.__name__ = getattr(fn, "__name__", "compiled")
        self.__doc__ = getattr(fn, "__doc__", None)

    def _trace(self, ctx, ts):
        with compile._counter_lock:
            compile._counter += 1
            tag = "wgtpy%d_" % compile._counter
        placeholders = [_core._graph_input(ctx, tag + "in%d" % i, t.dtype, t.shape) for i, t in enumerate(ts)]
        out = self.fn(*placeholders)
        single = isinstance(out, Tensor)
        outs = [out] if single else list(out) if isinstance(out, (tuple, list)) else []
        if not outs or not _builtins.all(isinstance(o, Tensor) for o in outs):
            raise TypeError("compile: %s must return a tensor or a tuple of tensors" % self.__name__)
        names = [tag + "out%d" % i for i in range(len(outs))]
        graph = _core.Graph(ctx, list(zip(names, outs)))
        meta = [(o.shape, o.dtype) for o in outs]
        return graph, [p for p in placeholders], [tag + "in%d" % i for i in range(len(ts))], names, meta, single

    def __call__(self, *args):
        ctx = next((a.ctx for a in args if isinstance(a, Tensor)), None) or get_default_context()
        ts = [asarray(a, ctx=ctx) for a in args]
        key = (id(ctx), tuple((t.shape, t.dtype.code) for t in ts))
        entry = self._graphs.get(key)
        if entry is None or entry[0] is not ctx:
            entry = self._graphs[key] = (ctx,) + self._trace(ctx, ts)
        _, graph, _, in_names, out_names, meta, single = entry
        outs = [empty(shape, d, ctx) for shape, d in meta]
        graph.dispatch(list(zip(in_names, ts)), list(zip(out_names, outs)))
        return outs[0] if single else tuple(outs)

    def launches(self, *args):
        """Kernel launches one call with these arguments' signature makes (after fusion)."""
        ctx = next((a.ctx for a in args if isinstance(a, Tensor)), None) or get_default_context()
        ts = [asarray(a, ctx=ctx) for a in args]
        key = (id(ctx), tuple((t.shape, t.dtype.code) for t in ts))
        if key not in self._graphs:
            self(*args)
        return self._graphs[key][1].launches


class output:
    """An output a kernel call creates (zero-filled before the kernel runs) and returns."""

    def __init__(self, shape, dtype=float32):
        self.shape, self.dtype = shape, dtype


def _cpu_caller(fn):
    """The library's view of a CPU function: memoryviews become NumPy arrays of the tensors'
    shapes (writable for read_write bindings), valid only while fn runs."""
    def call(buffers, params, grid):
        arrays = {name: _np.frombuffer(mv, dtype=d.numpy).reshape(shape) for name, mv, d, shape, _ in buffers}
        fn(arrays, params, grid)
    return call


class kernel:
    """kernel(wgsl, entry="main", ctx=None, cpu=None): a WGSL compute shader compiled once on
    the context, called on tensors like an op. The CPU backend runs no WGSL: there a call runs
    cpu(arrays, params, grid), a Python function computing the same on NumPy arrays (a dict by
    binding name, read_write ones writable and written in place; params the uniform's bytes or
    None; grid the workgroups), or is UnavailableError without one. cpu must not call wgtensor
    and must not keep the arrays; an exception in it fails the run with BackendError.
    Inside wgtensor.compile a call records into the graph (a kernel writing one binding).

    k(*tensors, grid=None, n=None, params=None, **named): the shader's storage bindings in
    source order, or by name; each a Tensor (a read_write one is written in place), a NumPy
    array or list (uploaded with one copy), or wgtensor.output(shape, dtype) for an output
    the call creates. grid=(x, y, z) workgroups, or n=count for ceil(n / workgroup_size.x)
    groups along x. params: the var<uniform>'s bytes (a NumPy structured array, bytes), of
    its exact size. Returns the created outputs (one, a tuple, or None). The dispatch is
    recorded lazily like any op; reads wait for it.
    """

    def __init__(self, wgsl, entry="main", ctx=None, cpu=None):
        self.ctx = ctx if ctx is not None else get_default_context()
        self._k = _core.Kernel(self.ctx, wgsl, entry)
        if cpu is not None:
            self._k.set_cpu(_cpu_caller(cpu))
        self.bindings = self._k.bindings()
        self.workgroup_size = self._k.workgroup_size
        self._names = [b["name"] for b in self.bindings if not b["uniform"]]

    def __call__(self, *args, grid=None, n=None, params=None, **named):
        if len(args) > len(self._names):
            raise TypeError("kernel: %d tensors given, the shader has %d storage bindings (%s)"
                            % (len(args), len(self._names), ", ".join(self._names)))
        values = dict(zip(self._names, args))
        for name, v in named.items():
            if name not in self._names:
                raise TypeError("kernel: the shader has no storage binding %r (it has %s)"
                                % (name, ", ".join(self._names)))
            if name in values:
                raise TypeError("kernel: binding %r given twice" % name)
            values[name] = v
        pairs = []
        for name in self._names:
            if name not in values:
                raise TypeError("kernel: binding %r is not given" % name)
            v = values[name]
            if isinstance(v, output):
                v = (v.dtype, v.shape)
            elif not isinstance(v, Tensor):
                v = asarray(v, ctx=self.ctx)
            pairs.append((name, v))
        if grid is None:
            if n is None:
                raise TypeError("kernel: give grid=(x, y, z) workgroups or n=invocations")
            grid = self._k.groups_for(n)
        grid = tuple(grid) + (1,) * (3 - len(tuple(grid)))
        if params is not None and not isinstance(params, (bytes, bytearray, memoryview)):
            params = _np.ascontiguousarray(params)
        created = [o for o in self._k.dispatch(pairs, params, grid) if o is not None]
        return None if not created else created[0] if len(created) == 1 else tuple(created)


# ---- functions from the op table, and NumPy's names for them -------------------------------------

_g = globals()
for _py in set(_BOUND.values()):
    if not _py.startswith("_"):
        _g[_py] = getattr(_core, _py)
subtract, multiply, divide, true_divide, power, remainder = sub, mul, div, div, pow, mod
negative, absolute, positive = neg, abs, (lambda a: asarray(a))
equal, not_equal, less, less_equal, greater, greater_equal = eq, ne, lt, le, gt, ge
concatenate, permute_dims, amax, amin, clamp, cast = concat, transpose, max, min, clip, astype
squeeze = _squeeze
invert = bitwise_not = bitwise_invert
arcsin, arccos, arctan, arcsinh, arccosh, arctanh = asin, acos, atan, asinh, acosh, atanh
left_shift, right_shift = bitwise_left_shift, bitwise_right_shift
e, inf, nan, pi, newaxis = _np.e, _np.inf, _np.nan, _np.pi, None


def matrix_transpose(x):
    return _core.swapaxes(x, -1, -2)


del _g, _py


# NumPy ufuncs applied to tensors run as wgtensor ops where one matches (so `ndarray + tensor`
# and np.exp(t) give tensors); any other ufunc, or one called with out=, where= and the like,
# runs in NumPy on the values (a host copy) and gives an ndarray.
_UFUNCS = {
    "add": add, "subtract": sub, "multiply": mul, "divide": div, "true_divide": div,
    "floor_divide": floor_divide, "remainder": mod, "power": pow, "maximum": maximum,
    "minimum": minimum, "arctan2": atan2, "equal": eq, "not_equal": ne, "less": lt,
    "less_equal": le, "greater": gt, "greater_equal": ge, "logical_and": logical_and,
    "logical_or": logical_or, "logical_xor": logical_xor, "logical_not": logical_not, "negative": neg, "absolute": abs,
    "sign": sign, "square": square, "sqrt": sqrt, "reciprocal": reciprocal, "exp": exp,
    "expm1": expm1, "log": log, "log1p": log1p, "sin": sin, "cos": cos, "tanh": tanh,
    "floor": floor, "ceil": ceil, "isnan": isnan, "isinf": isinf, "matmul": matmul,
    "invert": invert,
}


def _array_ufunc(self, ufunc, method, *inputs, **kwargs):
    fn = _UFUNCS.get(ufunc.__name__) if method == "__call__" and not kwargs else None
    if fn is not None:
        return fn(*inputs)
    host = [x.numpy() if isinstance(x, Tensor) else x for x in inputs]
    return getattr(ufunc, method)(*host, **kwargs)


Tensor.__array_ufunc__ = _array_ufunc


def split(a, indices_or_sections, axis=0):
    """NumPy's split: a number of equal sections or the indices to cut at; views."""
    a = asarray(a)
    n = a.shape[axis]
    if isinstance(indices_or_sections, int):
        if indices_or_sections <= 0 or n % indices_or_sections:
            raise ValueError("split: %d does not divide an axis of length %d into equal sections"
                             % (indices_or_sections, n))
        sizes = [n // indices_or_sections] * indices_or_sections
    else:
        cuts = [_builtins.min(_builtins.max(int(i) if i >= 0 else int(i) + n, 0), n) for i in indices_or_sections]
        bounds = [0] + cuts + [n]
        sizes = [_builtins.max(hi - lo, 0) for lo, hi in zip(bounds, bounds[1:])]
    return _core._split_sizes(a, sizes, axis)


def pad(a, pad_width, constant_values=0):
    """NumPy's pad with mode='constant': pad_width is an int, (before, after) or one pair per axis."""
    a = asarray(a)
    w = _np.broadcast_to(_np.asarray(pad_width, dtype=_np.int64), (a.ndim, 2))
    return _core._pad(a, [int(x) for x in w[:, 0]], [int(x) for x in w[:, 1]], constant_values)


_core._register(_DTYPES, _parse_dtype, asarray, get_default_context)

from . import gguf, linalg, optim  # noqa: E402  (they use the names above)
from ._dtype_functions import can_cast, finfo, iinfo, isdtype, result_type  # noqa: E402
from ._autograd import (clip_grad_norm, cross_entropy, load, lr_warmup_cosine, no_grad, save)  # noqa: E402
from ._quant import dequantize, kv_cache_append, matmul_quantized, quantize  # noqa: E402
from ._manip import broadcast_arrays, meshgrid  # noqa: E402
from ._array_api import (__array_namespace_info__, conj, cumulative_prod, cumulative_sum, diff, imag,  # noqa: E402
                         real, unstack)
from ._sorting import (argsort, nonzero, searchsorted, sort, topk, unique_all, unique_counts,  # noqa: E402
                       unique_inverse, unique_values)
