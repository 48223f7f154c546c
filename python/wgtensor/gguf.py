"""GGUF files (the format of ggml and llama.cpp; docs/quant.md): `open` reads the metadata and
the tensor descriptions and loads tensors by name; `write` saves tensors and metadata.

Metadata values written: bool, str, int (uint32 when it fits 0 .. 2**32-1, llama.cpp's type
for counts, else int64 or uint64), float (float32, llama.cpp's type for hyperparameters), NumPy
scalars (their own type), and lists or 1-D NumPy arrays of one of these (ints int32 when all fit,
else int64; floats float32). Read back, every number is a Python int or float."""
import os as _os

import numpy as _np

from . import _core

# GGUF's metadata type numbers (wgt_gguf_type).
UINT8, INT8, UINT16, INT16, UINT32, INT32, FLOAT32, BOOL, STRING, ARRAY, UINT64, INT64, FLOAT64 = range(13)
_NUMPY_TYPES = {_np.dtype(k): v for k, v in (("u1", UINT8), ("i1", INT8), ("u2", UINT16), ("i2", INT16),
                                             ("u4", UINT32), ("i4", INT32), ("f4", FLOAT32), ("u8", UINT64),
                                             ("i8", INT64), ("f8", FLOAT64), ("?", BOOL))}


class TensorInfo:
    """One tensor's description: name, shape, dtype (None for a type wgtensor cannot load),
    ggml_type (the file's type number), offset and nbytes in the file."""

    __slots__ = ("name", "shape", "dtype", "ggml_type", "offset", "nbytes")

    def __init__(self, name, shape, dtype, ggml_type, offset, nbytes):
        self.name, self.shape, self.dtype = name, shape, dtype
        self.ggml_type, self.offset, self.nbytes = ggml_type, offset, nbytes

    def __repr__(self):
        return "TensorInfo(%r, shape=%s, dtype=%s)" % (self.name, self.shape, self.dtype)


class File:
    """An open GGUF file: version, metadata (dict key -> value), tensors (dict name ->
    TensorInfo, in the file's order), load(name, ctx=None), close(). Also a context manager."""

    def __init__(self, path):
        self._g = _core._gguf_open(_os.fspath(path))
        self.version, self.metadata, infos = _core._gguf_info(self._g)
        self.tensors = {i[0]: TensorInfo(*i) for i in infos}

    def load(self, name, ctx=None):
        """The named tensor, read from the file into a new tensor on ctx (None: the default)."""
        if self._g is None:
            raise ValueError("gguf.File.load: the file is closed")
        return _core._gguf_load(self._g, name, ctx)

    def close(self):
        self._g = None  # the capsule closes the file when freed

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def open(path):  # noqa: A001  (gguf.open, as the module's reader)
    """Opens a GGUF file (versions 2 and 3); malformed files raise ValueError naming the problem,
    a missing one FileNotFoundError (as wgtensor.load)."""
    if not _os.path.exists(path):
        raise FileNotFoundError(2, "gguf.open: no such file", _os.fspath(path))
    return File(path)


def _int_type(values, array):
    lo, hi = min(values), max(values)
    if array and -2**31 <= lo and hi < 2**31:
        return INT32
    if not array and 0 <= lo and hi < 2**32:
        return UINT32
    if -2**63 <= lo and hi < 2**63:
        return INT64
    if 0 <= lo and hi < 2**64:
        return UINT64
    raise OverflowError("gguf.write: integer %d does not fit 64 bits" % (hi if hi >= 2**63 else lo))


def _scalar_type(v, key, array):
    """The GGUF type of one value and the value as a plain Python object."""
    if isinstance(v, (bool, _np.bool_)):
        return BOOL, bool(v)
    if isinstance(v, _np.generic) and v.dtype in _NUMPY_TYPES:
        return _NUMPY_TYPES[v.dtype], v.item()
    if isinstance(v, int):
        return _int_type([v], array), v
    if isinstance(v, float):
        return FLOAT32, v
    if isinstance(v, str):
        return STRING, v
    raise TypeError("gguf.write: metadata %r: %s is not a GGUF value (bool, int, float, str, NumPy scalar, list)"
                    % (key, type(v).__name__))


def _metadata_entry(key, value):
    if not isinstance(key, str):
        raise TypeError("gguf.write: metadata keys are str, not %s" % type(key).__name__)
    if isinstance(value, _np.ndarray):
        if value.ndim != 1 or value.dtype not in _NUMPY_TYPES:
            raise TypeError("gguf.write: metadata %r: a 1-D array of numbers or bools, not %s %s"
                            % (key, value.dtype, value.shape))
        return (key, ARRAY, _NUMPY_TYPES[value.dtype], tuple(value.tolist()))
    if isinstance(value, (list, tuple)):
        typed = [_scalar_type(v, key, True) for v in value]
        kinds = {t for t, _ in typed}
        values = tuple(v for _, v in typed)
        if kinds <= {INT32, INT64, UINT32, UINT64} and kinds:
            kinds = {_int_type(values, True)}
        if len(kinds) > 1:
            raise TypeError("gguf.write: metadata %r: a list of values of one type, not %s" % (key, sorted(kinds)))
        return (key, ARRAY, kinds.pop() if kinds else INT32, values)
    t, v = _scalar_type(value, key, False)
    return (key, t, t, (v,))


def write(path, tensors, metadata=None, alignment=32):
    """Saves tensors (dict name -> Tensor: float32, float16, int32, q8_0 or q4_0) and metadata
    (dict key -> value, see the module's doc) as a GGUF version 3 file."""
    meta = [_metadata_entry(k, v) for k, v in (metadata or {}).items()]
    names = tuple(tensors)
    _core._gguf_write(_os.fspath(path), meta, names, tuple(tensors[n] for n in names), alignment)
