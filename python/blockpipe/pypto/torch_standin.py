"""A NumPy stand-in for the part of torch (CPU) pypto's tests and examples
call, used when torch is not installed: `import torch` then gives this
module. A tensor is a NumPy array (`Tensor`, an ndarray subclass, in
torch_tensor), so blockpipe runs on it in place; the functions follow
torch's signatures and result dtypes (float32 by default, int64 for
integers, reductions that take `dim`/`keepdim` and return (values, indices)
where torch does).

Only what the tests call is here; tests/python/test_pypto_torch_standin.py
checks each function against NumPy.
"""

from __future__ import annotations

import builtins
import contextlib
import sys
import types

import numpy as np

from blockpipe.pypto import torch_tensor as _tensor
from blockpipe.pypto.torch_tensor import (  # noqa: F401 - torch's names
    _ELEMENTWISE,
    Size,
    Tensor,
    ValuesIndices,
    _default,
    _dim,
    _keep,
    _minmax,
    _np,
    _reduce,
    _shape,
    _wrap,
    argmax,
    argmin,
    bfloat16,
    bool,
    clamp,
    double,
    finfo,
    float,
    float16,
    float32,
    float64,
    gather,
    half,
    iinfo,
    int,
    int8,
    int16,
    int32,
    int64,
    long,
    matmul,
    scatter,
    short,
    softmax,
    sort,
    split,
    uint8,
    uint16,
    uint32,
    uint64,
)

mm = bmm = matmul

for _name, _fn in _ELEMENTWISE.items():
    globals()[_name] = (
        lambda fn: lambda x, *args, **kw: _wrap(fn(_np(x), *(_np(a) for a in args)))
    )(_fn)

# ------------------------------------------------------------- factories

_rng = np.random.default_rng(0)


class Generator:
    def __init__(self, device=None):
        self.rng = np.random.default_rng(0)

    def manual_seed(self, seed):
        self.rng = np.random.default_rng(seed)
        return self


def manual_seed(seed):
    global _rng
    _rng = np.random.default_rng(seed)


def _rng_of(generator):
    return generator.rng if generator is not None else _rng


def randn(*size, dtype=None, generator=None, **kwargs):
    return _wrap(_rng_of(generator).standard_normal(_shape(size)).astype(dtype or float32))


def rand(*size, dtype=None, generator=None, **kwargs):
    return _wrap(_rng_of(generator).random(_shape(size)).astype(dtype or float32))


def randint(*args, dtype=None, generator=None, size=None, **kwargs):
    args = list(args)
    if size is None:
        size = args.pop()
    low, high = (0, args[0]) if len(args) == 1 else args
    return _wrap(_rng_of(generator).integers(low, high, tuple(size)).astype(dtype or int64))


def randperm(n, dtype=None, generator=None, **kwargs):
    return _wrap(_rng_of(generator).permutation(n).astype(dtype or int64))


def zeros(*size, dtype=None, **kwargs):
    return _wrap(np.zeros(_shape(size), dtype or float32))


def ones(*size, dtype=None, **kwargs):
    return _wrap(np.ones(_shape(size), dtype or float32))


empty = zeros


def full(size, fill_value, dtype=None, **kwargs):
    return _wrap(_default(np.full(tuple(size), fill_value), dtype))


def zeros_like(x, dtype=None, **kwargs):
    return zeros(x.shape, dtype=dtype or x.dtype)


def ones_like(x, dtype=None, **kwargs):
    return ones(x.shape, dtype=dtype or x.dtype)


empty_like = zeros_like


def full_like(x, fill_value, dtype=None, **kwargs):
    return full(x.shape, fill_value, dtype=dtype or x.dtype)


def arange(*args, dtype=None, **kwargs):
    return _wrap(_default(np.arange(*args), dtype))


def eye(n, m=None, dtype=None, **kwargs):
    return _wrap(np.eye(n, m, dtype=dtype or float32))


def tensor(data, dtype=None, **kwargs):
    if isinstance(data, np.ndarray):
        return _wrap(np.array(data, dtype=dtype))
    return _wrap(_default(data, dtype))


def as_tensor(data, dtype=None, **kwargs):
    array = np.asarray(data)
    return _wrap(array if dtype is None else array.astype(dtype, copy=False))


def from_numpy(array):
    return _wrap(array)


# -------------------------------------------------------------- functions


def _along(dim, axis):
    return _dim(dim, axis)


def sum(x, dim=None, keepdim=False, *, dtype=None, axis=None, keepdims=None):  # noqa: A001
    return _wrap(x).sum(_along(dim, axis), _keep(keepdim, keepdims), dtype)


def prod(x, dim=None, keepdim=False, *, dtype=None, axis=None, keepdims=None):
    return _wrap(x).prod(_along(dim, axis), _keep(keepdim, keepdims))


def mean(x, dim=None, keepdim=False, *, axis=None, keepdims=None):
    return _wrap(x).mean(_along(dim, axis), _keep(keepdim, keepdims))


def max(x, dim=None, keepdim=False, *, axis=None, keepdims=None, other=None):  # noqa: A001
    return _minmax(x, _along(dim, axis), _keep(keepdim, keepdims), other, np.max, np.argmax)


def min(x, dim=None, keepdim=False, *, axis=None, keepdims=None, other=None):  # noqa: A001
    return _minmax(x, _along(dim, axis), _keep(keepdim, keepdims), other, np.min, np.argmin)


def amax(x, dim=None, keepdim=False):
    return _reduce(np.max, x, dim, keepdim)


def amin(x, dim=None, keepdim=False):
    return _reduce(np.min, x, dim, keepdim)


def any(x, dim=None, keepdim=False):  # noqa: A001
    return _reduce(np.any, x, dim, keepdim)


def all(x, dim=None, keepdim=False):  # noqa: A001
    return _reduce(np.all, x, dim, keepdim)


def count_nonzero(x, dim=None):
    return _wrap(np.asarray(np.count_nonzero(np.asarray(x), axis=dim), np.int64))


def abs(x):  # noqa: A001
    return _wrap(np.abs(_np(x)))


def where(condition, x=None, y=None):
    if x is None:
        return tuple(_wrap(i.astype(np.int64)) for i in np.nonzero(np.asarray(condition)))
    return _wrap(np.where(np.asarray(condition), _np(x), _np(y)))


def div(x, y, rounding_mode=None):
    a, b = _np(x), _np(y)
    if rounding_mode == "floor":
        return _wrap(np.floor_divide(a, b))
    if rounding_mode == "trunc":
        quotient = np.trunc(np.true_divide(a, b))
        return _wrap(quotient.astype(np.result_type(a, b)))
    return _wrap(np.true_divide(a, b))


def cat(tensors, dim=0):
    return _wrap(np.concatenate([_np(t) for t in tensors], axis=dim))


concat = cat


def stack(tensors, dim=0):
    return _wrap(np.stack([_np(t) for t in tensors], axis=dim))


def unique(x, sorted=True, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
    result = np.unique(np.asarray(x), return_inverse=return_inverse, return_counts=return_counts)
    return tuple(_wrap(r) for r in result) if isinstance(result, tuple) else _wrap(result)


def triu(x, diagonal=0):
    return _wrap(np.triu(np.asarray(x), diagonal))


def tril(x, diagonal=0):
    return _wrap(np.tril(np.asarray(x), diagonal))


def _float64(x):
    return np.asarray(x).astype(np.float64)


def isclose(a, b, rtol=1e-5, atol=1e-8, equal_nan=False):
    return _wrap(np.isclose(_float64(a), _float64(b), rtol=rtol, atol=atol, equal_nan=equal_nan))


def allclose(a, b, rtol=1e-5, atol=1e-8, equal_nan=False):
    return builtins.bool(
        np.allclose(_float64(a), _float64(b), rtol=rtol, atol=atol, equal_nan=equal_nan)
    )


def equal(a, b):
    return builtins.bool(
        np.shape(a) == np.shape(b) and np.array_equal(np.asarray(a), np.asarray(b))
    )


def is_tensor(x):
    return isinstance(x, np.ndarray)


@contextlib.contextmanager
def no_grad():
    yield


def _assert_close(actual, expected, rtol=None, atol=None, equal_nan=False, msg=None, **kwargs):
    rtol = 1.3e-6 if rtol is None else rtol
    atol = 1e-5 if atol is None else atol
    np.testing.assert_allclose(
        _float64(actual),
        _float64(expected),
        rtol=rtol,
        atol=atol,
        equal_nan=equal_nan,
        err_msg=msg or "",
    )


testing = types.ModuleType("torch.testing")
testing.assert_close = _assert_close

MODULES = {"torch": sys.modules[__name__], "torch.testing": testing}

# torch.dtype: the type of torch.float32 and the others (last: the
# functions above take a `dtype=` argument).
dtype = _tensor.dtype
