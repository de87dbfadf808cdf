"""The runtime's dtype table as Python reads it: each dtype's numpy dtype
(bf16 from ml_dtypes), the pl dtype of an array, the integer scalars'
ranges. One table (blockpipe/Target/DType.h), read through _core."""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import numpy as np


def _dtype_table() -> Dict[str, dict]:
    """The target library's dtypes by their kernel_config.json name."""
    from blockpipe import _core

    return {d["name"]: d for d in _core.dtypes()}


_DTYPES = _dtype_table()
_FLOAT_SCALARS = tuple(name for name, d in _DTYPES.items() if d["is_float"])


def _numpy_dtype(name: str) -> Optional[np.dtype]:
    """The numpy dtype that supplies a tensor of `name`; bf16 comes from
    ml_dtypes (numpy has none)."""
    entry = _DTYPES.get(name)
    if entry is None:
        return None
    try:
        return np.dtype(entry["numpy"])
    except TypeError:
        pass
    try:
        import ml_dtypes
    except ImportError:  # pragma: no cover - ml_dtypes is a dependency
        return None
    return np.dtype(getattr(ml_dtypes, entry["numpy"]))


def dtype_of_array(array: np.ndarray):
    """The pl dtype of a numpy array's elements, or None (INDEX is never an
    array's)."""
    from blockpipe.language import types
    from blockpipe.language.values import dtype_named

    for name, entry in _DTYPES.items():
        enumerator = entry["enumerator"]
        if enumerator == "INDEX" or _numpy_dtype(name) != array.dtype:
            continue
        # The runtime's table may know dtypes the language has no pl.X for.
        if enumerator == "BOOL" or hasattr(types, enumerator):
            return dtype_named(enumerator)
    return None


def array_dtype_names() -> List[str]:
    """The numpy dtypes whose arrays programs take, for messages."""
    from blockpipe.language import types

    return [
        str(_numpy_dtype(name))
        for name, entry in _DTYPES.items()
        if entry["enumerator"] not in ("INDEX", "BOOL")  # scalars only
        and hasattr(types, entry["enumerator"])
        and _numpy_dtype(name) is not None
    ]


# The range of each integer scalar parameter's C++ type.
def _int_limits(name: str) -> Tuple[int, int]:
    """The values an integer scalar of `name` holds (a bool: 0 and 1)."""
    dtype = _numpy_dtype(name)
    if dtype.kind == "b":
        return (0, 1)
    info = np.iinfo(dtype)
    return (int(info.min), int(info.max))


_INT_LIMITS = {name: _int_limits(name) for name, d in _DTYPES.items() if not d["is_float"]}
