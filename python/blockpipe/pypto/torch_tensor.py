"""The tensor of the NumPy stand-in for torch (torch_standin): a NumPy
array subclass with torch's methods, torch's dtype names, and the array
functions both the methods and the module's functions use.
"""

from __future__ import annotations

import builtins
import collections

import ml_dtypes
import numpy as np

# ------------------------------------------------------------------ dtypes


class dtype:
    """torch.dtype: one of NumPy's dtypes under torch's name, with torch's
    questions (`is_floating_point`, `is_signed`, `itemsize`). NumPy takes it
    wherever it takes a dtype (through `.dtype`), and it compares and hashes
    as that NumPy dtype, so tests and blockpipe may mix the two."""

    __slots__ = ("_name", "_numpy")

    def __init__(self, name: str, numpy_dtype):
        self._name = name
        self._numpy = np.dtype(numpy_dtype)

    @property
    def dtype(self) -> np.dtype:
        """The NumPy dtype (what NumPy reads from a dtype-like object)."""
        return self._numpy

    @property
    def is_floating_point(self) -> builtins.bool:
        return self._numpy.kind == "f" or self._numpy.name == "bfloat16"

    @property
    def is_complex(self) -> builtins.bool:
        return self._numpy.kind == "c"

    @property
    def is_signed(self) -> builtins.bool:
        return self._numpy.kind in "ifc" or self._numpy.name == "bfloat16"

    @property
    def itemsize(self) -> builtins.int:
        return self._numpy.itemsize

    def __getattr__(self, attr: str):
        # NumPy's own questions (kind, type, name, str, char...).
        if attr.startswith("__"):
            raise AttributeError(attr)
        return getattr(self._numpy, attr)

    def __eq__(self, other) -> builtins.bool:
        if isinstance(other, dtype):
            return self._numpy == other._numpy
        try:
            return self._numpy == np.dtype(other)
        except TypeError:
            return False

    def __ne__(self, other) -> builtins.bool:
        return not self == other

    def __hash__(self) -> builtins.int:
        return hash(self._numpy)

    def __repr__(self) -> str:
        return f"torch.{self._name}"

    def __reduce__(self):
        return (_torch_dtype, (self._numpy,))


_BY_NUMPY: dict = {}


def _named(name: str, numpy_type) -> dtype:
    made = dtype(name, numpy_type)
    _BY_NUMPY[made.dtype] = made
    return made


def _torch_dtype(numpy_dtype) -> dtype:
    """The torch dtype a tensor of this NumPy dtype reports (one made on
    first use, under NumPy's name, for a dtype torch lacks)."""
    numpy_dtype = np.dtype(numpy_dtype)
    return _BY_NUMPY.get(numpy_dtype) or _named(numpy_dtype.name, numpy_dtype)


float32 = float = _named("float32", np.float32)
float16 = half = _named("float16", np.float16)
float64 = double = _named("float64", np.float64)
bfloat16 = _named("bfloat16", ml_dtypes.bfloat16)
int8, int16 = _named("int8", np.int8), _named("int16", np.int16)
int32, int64 = _named("int32", np.int32), _named("int64", np.int64)
int, short, long = int32, int16, int64
uint8, uint16 = _named("uint8", np.uint8), _named("uint16", np.uint16)
uint32, uint64 = _named("uint32", np.uint32), _named("uint64", np.uint64)
bool = _named("bool", np.bool_)
Size = tuple
_DTYPES = (dtype, np.dtype)  # what torch's methods take as a dtype


def iinfo(type_):
    return np.iinfo(np.dtype(type_))


def finfo(type_=None):
    # ml_dtypes' finfo knows bfloat16 as well as NumPy's floats.
    return ml_dtypes.finfo(np.dtype(float32 if type_ is None else type_))


ValuesIndices = collections.namedtuple("ValuesIndices", "values indices")


def _default(values, dtype_=None) -> np.ndarray:
    """`values` as an array with torch's default dtypes: float32 for
    Python floats, int64 for ints."""
    array = np.asarray(values)
    if dtype_ is not None:
        return array.astype(dtype_)
    if array.dtype == np.float64:
        return array.astype(np.float32)
    if array.dtype.kind in "iu" and array.dtype != np.uint8:
        return array.astype(np.int64)
    return array


def _wrap(value) -> Tensor:
    return np.asarray(value).view(Tensor)


def _np(value):
    return np.asarray(value) if isinstance(value, np.ndarray) else value


def _dim(dim, axis):
    return axis if dim is None else dim


def _keep(keepdim, keepdims):
    return builtins.bool(keepdims if keepdims is not None else keepdim)


def _shape(args) -> tuple:
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        return tuple(args[0])
    return tuple(args)


def _reduce(fn, x, dim, keepdim):
    return _wrap(fn(np.asarray(x), axis=dim, keepdims=keepdim))


def _minmax(x, dim, keepdim, other, pick, arg):
    if isinstance(dim, np.ndarray):  # torch.max(a, b): elementwise
        other, dim = dim, None
    if other is not None:
        return _wrap((np.maximum if pick is np.max else np.minimum)(_np(x), _np(other)))
    if dim is None:
        return _reduce(pick, x, None, False)
    values = _reduce(pick, x, dim, keepdim)
    indices = arg(np.asarray(x), axis=dim)
    if keepdim:
        indices = np.expand_dims(indices, dim)
    return ValuesIndices(values, _wrap(indices.astype(np.int64)))


class _Size(builtins.int):
    """An array's `size`: NumPy's element count that torch calls, as
    `x.size()` (the shape) or `x.size(dim)`."""

    def __new__(cls, count, shape):
        size = super().__new__(cls, count)
        size.shape = tuple(shape)
        return size

    def __call__(self, dim=None):
        return self.shape if dim is None else self.shape[dim]


_UNSET = object()
_NUMPY_DTYPE = np.ndarray.dtype


class Tensor(np.ndarray):
    """A torch tensor on NumPy. Methods take torch's arguments (and
    NumPy's, as NumPy itself calls some of them)."""

    @property
    def dtype(self) -> dtype:
        """torch's dtype of the elements (NumPy's own code reads the array's
        NumPy dtype directly)."""
        return _torch_dtype(_NUMPY_DTYPE.__get__(self))

    # conversions
    def float(self):
        return self.to(float32)

    def half(self):
        return self.to(float16)

    def double(self):
        return self.to(float64)

    def bfloat16(self):
        return self.to(bfloat16)

    def int(self):
        return self.to(int32)

    def long(self):
        return self.to(int64)

    def bool(self):
        return self.to(bool)

    def to(self, *args, dtype=None, **kwargs):
        for arg in args:
            if isinstance(arg, _DTYPES):
                dtype = arg
        return self if dtype is None else _wrap(np.asarray(self).astype(dtype))

    def type(self, dtype_=None):
        return str(self.dtype) if dtype_ is None else self.to(dtype_)

    def clone(self, **kwargs):
        return _wrap(np.array(self))

    def contiguous(self, **kwargs):
        return self if self.flags.c_contiguous else self.clone()

    def detach(self):
        return self

    def cpu(self):
        return self

    def numpy(self):
        return np.asarray(self)

    def is_contiguous(self):
        return builtins.bool(self.flags.c_contiguous)

    # shape
    @property
    def size(self):
        """NumPy's element count, which called is torch's size()."""
        return _Size(np.asarray(self).size, self.shape)

    def dim(self):
        return self.ndim

    def numel(self):
        return builtins.int(np.asarray(self).size)

    def view(self, *shape, **kwargs):
        if len(shape) == 1 and isinstance(shape[0], _DTYPES):
            return _wrap(np.asarray(self).view(shape[0]))
        if not shape or (len(shape) == 1 and isinstance(shape[0], type)):
            return super().view(*shape, **kwargs)  # NumPy's own view(type)
        return _wrap(np.asarray(self).reshape(_shape(shape)))

    def reshape(self, *shape, order="C", **kwargs):
        return _wrap(np.asarray(self).reshape(_shape(shape), order=order))

    def view_as(self, other):
        return self.reshape(other.shape)

    def flatten(self, start_dim=0, end_dim=-1, order=None):
        shape = self.shape
        if not shape:
            return self.reshape(1)
        end = end_dim % len(shape)
        start = start_dim % len(shape)
        merged = builtins.int(np.prod(shape[start : end + 1]))
        return self.reshape(shape[:start] + (merged,) + shape[end + 1 :])

    def unsqueeze(self, dim):
        return _wrap(np.expand_dims(np.asarray(self), dim))

    def squeeze(self, dim=None, axis=None):
        array = np.asarray(self)
        dim = _dim(dim, axis)
        if dim is not None and array.shape[dim] != 1:
            return self
        return _wrap(np.squeeze(array, dim))

    def permute(self, *dims):
        return _wrap(np.transpose(np.asarray(self), _shape(dims)))

    def transpose(self, *dims):
        if len(dims) == 2 and all(isinstance(d, builtins.int) for d in dims):
            return _wrap(np.swapaxes(np.asarray(self), *dims))
        return _wrap(np.asarray(self).transpose(*dims))

    def t(self):
        return self.T

    def expand(self, *sizes):
        sizes = _shape(sizes)
        full = tuple(
            s if n == -1 else n for s, n in zip((1,) * (len(sizes) - self.ndim) + self.shape, sizes)
        )
        return _wrap(np.broadcast_to(np.asarray(self), full))

    def expand_as(self, other):
        return self.expand(other.shape)

    def repeat(self, *sizes, axis=_UNSET):
        if axis is not _UNSET:  # NumPy's repeat (np.repeat calls it so)
            return _wrap(np.asarray(self).repeat(*sizes, axis=axis))
        return _wrap(np.tile(np.asarray(self), _shape(sizes)))

    def split(self, size, dim=0):
        return split(self, size, dim)

    def chunk(self, chunks, dim=0):
        return tuple(_wrap(p) for p in np.array_split(np.asarray(self), chunks, axis=dim))

    # reductions
    def sum(self, dim=None, keepdim=False, dtype=None, *, axis=None, keepdims=None, out=None, **kw):
        result = np.sum(np.asarray(self), axis=_dim(dim, axis), keepdims=_keep(keepdim, keepdims))
        return _wrap(result if dtype is None else result.astype(dtype))

    def mean(
        self, dim=None, keepdim=False, dtype=None, *, axis=None, keepdims=None, out=None, **kw
    ):
        return _reduce(np.mean, self, _dim(dim, axis), _keep(keepdim, keepdims))

    def prod(
        self, dim=None, keepdim=False, dtype=None, *, axis=None, keepdims=None, out=None, **kw
    ):
        return _reduce(np.prod, self, _dim(dim, axis), _keep(keepdim, keepdims))

    def max(self, dim=None, keepdim=False, *, axis=None, keepdims=None, out=None, **kw):
        return _minmax(self, _dim(dim, axis), _keep(keepdim, keepdims), None, np.max, np.argmax)

    def min(self, dim=None, keepdim=False, *, axis=None, keepdims=None, out=None, **kw):
        return _minmax(self, _dim(dim, axis), _keep(keepdim, keepdims), None, np.min, np.argmin)

    def amax(self, dim=None, keepdim=False):
        return _reduce(np.max, self, dim, keepdim)

    def amin(self, dim=None, keepdim=False):
        return _reduce(np.min, self, dim, keepdim)

    def argmax(self, dim=None, keepdim=False, *, axis=None, out=None, **kw):
        return argmax(self, _dim(dim, axis), keepdim)

    def argmin(self, dim=None, keepdim=False, *, axis=None, out=None, **kw):
        return argmin(self, _dim(dim, axis), keepdim)

    def any(self, dim=None, keepdim=False, *, axis=None, keepdims=None, out=None, **kw):
        return _reduce(np.any, self, _dim(dim, axis), _keep(keepdim, keepdims))

    def all(self, dim=None, keepdim=False, *, axis=None, keepdims=None, out=None, **kw):
        return _reduce(np.all, self, _dim(dim, axis), _keep(keepdim, keepdims))

    def norm(self, p=2, dim=None, keepdim=False):
        array = np.abs(np.asarray(self).astype(np.float64))
        return _wrap((np.sum(array**p, axis=dim, keepdims=keepdim) ** (1.0 / p)).astype(self.dtype))

    def cumsum(self, dim=None, *, axis=None, **kwargs):
        return _wrap(np.cumsum(np.asarray(self), axis=_dim(dim, axis)))

    def sort(self, dim=-1, descending=False, **kwargs):
        if kwargs:  # NumPy's in-place sort(axis=, kind=, order=): np.sort calls it so
            np.ndarray.sort(self, **kwargs)
            return None
        return sort(self, dim, descending)

    def softmax(self, dim):
        return softmax(self, dim)

    # elementwise
    def abs(self):
        return _wrap(np.abs(np.asarray(self)))

    def item(self, *args):
        return np.asarray(self).item(*args)

    def masked_fill(self, mask, value):
        return _wrap(np.where(np.asarray(mask), value, np.asarray(self)).astype(self.dtype))

    def masked_fill_(self, mask, value):
        self[np.asarray(mask)] = value
        return self

    def clamp(self, min=None, max=None):
        return clamp(self, min, max)

    def zero_(self):
        self[...] = 0
        return self

    def fill_(self, value):
        self[...] = value
        return self

    def copy_(self, src):
        self[...] = np.asarray(src)
        return self

    def add_(self, other):
        self[...] = np.asarray(self) + _np(other)
        return self

    def mul_(self, other):
        self[...] = np.asarray(self) * _np(other)
        return self

    def gather(self, dim, index):
        return gather(self, dim, index)

    def scatter(self, dim, index, src):
        return scatter(self, dim, index, src)

    def matmul(self, other):
        return matmul(self, other)

    def mm(self, other):
        return matmul(self, other)

    def bmm(self, other):
        return matmul(self, other)


def _unary(fn):
    def method(self, *args):
        return _wrap(fn(np.asarray(self), *(_np(a) for a in args)))

    return method


def _rsqrt(x):
    return 1.0 / np.sqrt(x)


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _relu(x):
    return np.maximum(x, np.zeros((), x.dtype))


_ELEMENTWISE = {
    "exp": np.exp,
    "sqrt": np.sqrt,
    "rsqrt": _rsqrt,
    "log": np.log,
    "sin": np.sin,
    "cos": np.cos,
    "tanh": np.tanh,
    "neg": np.negative,
    "reciprocal": np.reciprocal,
    "sigmoid": _sigmoid,
    "relu": _relu,
    "floor": np.floor,
    "ceil": np.ceil,
    "round": np.round,
    "sign": np.sign,
    "square": np.square,
    "pow": np.power,
    "fmod": np.fmod,
    "remainder": np.remainder,
    "bitwise_and": np.bitwise_and,
    "bitwise_or": np.bitwise_or,
    "bitwise_xor": np.bitwise_xor,
    "bitwise_not": np.invert,
    "eq": np.equal,
    "ne": np.not_equal,
    "gt": np.greater,
    "lt": np.less,
    "ge": np.greater_equal,
    "le": np.less_equal,
    "maximum": np.maximum,
    "minimum": np.minimum,
    "isnan": np.isnan,
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
}
for _name, _fn in _ELEMENTWISE.items():
    setattr(Tensor, _name, _unary(_fn))
    globals()[_name] = (
        lambda fn: lambda x, *args, **kw: _wrap(fn(_np(x), *(_np(a) for a in args)))
    )(_fn)


# ------------------------------------------------ shared with the module


def _arg(fn, x, dim, keepdim):
    result = fn(np.asarray(x), axis=dim, keepdims=keepdim if dim is not None else False)
    return _wrap(np.asarray(result).astype(np.int64))


def argmax(x, dim=None, keepdim=False):
    return _arg(np.argmax, x, dim, keepdim)


def argmin(x, dim=None, keepdim=False):
    return _arg(np.argmin, x, dim, keepdim)


def clamp(x, min=None, max=None):  # noqa: A002
    array = np.asarray(x)
    low = array.dtype.type(min) if min is not None else None
    high = array.dtype.type(max) if max is not None else None
    return _wrap(np.clip(array, low, high))


def softmax(x, dim, dtype=None):
    array = np.asarray(x)
    shifted = np.exp(array - np.max(array, axis=dim, keepdims=True))
    return _wrap((shifted / np.sum(shifted, axis=dim, keepdims=True)).astype(array.dtype))


def matmul(a, b):
    return _wrap(np.matmul(_np(a), _np(b)))


def split(x, size, dim=0):
    length = x.shape[dim]
    sizes = [size] * -(-length // size) if isinstance(size, builtins.int) else list(size)
    cuts = np.cumsum(sizes)[:-1]
    return tuple(_wrap(p) for p in np.split(np.asarray(x), cuts, axis=dim))


def gather(x, dim, index):
    return _wrap(np.take_along_axis(np.asarray(x), np.asarray(index), axis=dim))


def scatter(x, dim, index, src):
    out = np.array(x)
    values = np.broadcast_to(_np(src), np.shape(index)) if np.ndim(src) == 0 else np.asarray(src)
    np.put_along_axis(
        out, np.asarray(index), values[tuple(slice(0, n) for n in np.shape(index))], axis=dim
    )
    return _wrap(out)


def sort(x, dim=-1, descending=False, stable=True):
    array = np.asarray(x)
    order = np.argsort(-array if descending else array, axis=dim, kind="stable")
    return ValuesIndices(
        _wrap(np.take_along_axis(array, order, axis=dim)), _wrap(order.astype(np.int64))
    )
