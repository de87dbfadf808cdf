"""The gathers and scatters on NumPy (pl.mgather, pl.tile.gather,
pl.tensor.gather, pl.tile.scatter, pl.tensor.scatter, pl.scatter_update):
the rules of bp.gather — an index read as unsigned of its width, what an
index outside the source reads by pypto's gather_oob, and an
ExecutionError naming the first such index where no rule is given."""

from __future__ import annotations

import numpy as np

from blockpipe.interpreter.kernel_ops import implements
from blockpipe.interpreter.state import as_tile, failure, misuse
from blockpipe.language.ops.gather import (
    COALESCE,
    COALESCE_NUMBERS,
    MASK_PATTERNS,
    OUT_OF_RANGE,
    OUT_OF_RANGE_NUMBERS,
)


def _option(value, names, numbers, what) -> str:
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(numbers):
        value = numbers[value]
    if value not in names:
        raise misuse(f"{what} must be one of {', '.join(repr(n) for n in numbers)}, got {value!r}")
    return value


def _unsigned(indices) -> np.ndarray:
    """The indices as unsigned of their width, as int64 (nothing valid is
    lost: uint32 fits)."""
    a = np.asarray(indices)
    if a.dtype.kind not in "iu":
        raise misuse(f"gather indices must be integers, got {a.dtype}")
    if a.dtype.kind == "i":
        a = a.astype(a.dtype.str.replace("i", "u"))
    return a.astype(np.int64)


def _valid_zeroed(indices) -> np.ndarray:
    """The indices with those outside their valid shape 0, as compiled."""
    a = np.array(indices)
    valid = getattr(indices, "valid", None)
    if valid is not None:
        keep = np.zeros(a.shape, bool)
        keep[tuple(slice(0, v) for v in valid)] = True
        a[~keep] = 0
    return a


def _bounded(u: np.ndarray, extent: int, bounds: str, raw: np.ndarray, what: str = "gather"):
    """Where each index reads (-1: zeros), or a failure for the first one
    outside [0, extent) under "check"."""
    inside = u < extent
    if bounds == "check" and not inside.all():
        first = int(np.flatnonzero(~inside.reshape(-1))[0])
        row, col = divmod(first, raw.shape[-1])
        raise failure(
            f"{what}: index {int(raw.reshape(-1)[first])} at [{row}, {col}] of the indices is "
            f"outside the source's [0, {extent})"
        )
    if extent == 0:
        return np.full(u.shape, -1)
    if bounds == "clamp":
        return np.minimum(u, extent - 1)
    if bounds == "wrap":
        return u % extent
    return np.where(inside, u, -1)


def _take(flat: np.ndarray, where: np.ndarray) -> np.ndarray:
    out = flat[np.where(where >= 0, where, 0)]
    out[where < 0] = 0
    return out


@implements("mgather", "tile.mgather")
def mgather(
    mem,
    idx,
    coalesce="row",
    gather_oob="undefined",
    target_memory=None,
    scratch=None,
    valid_shape=None,
):
    mode = COALESCE[_option(coalesce, COALESCE, COALESCE_NUMBERS, "pl.tile.mgather's coalesce")]
    bounds = OUT_OF_RANGE[
        _option(gather_oob, OUT_OF_RANGE, OUT_OF_RANGE_NUMBERS, "pl.tile.mgather's gather_oob")
    ]
    raw = _valid_zeroed(idx)
    table = np.asarray(mem)
    valid = getattr(idx, "valid", None)
    if mode == "rows":
        rows = raw.reshape(-1)
        where = _bounded(_unsigned(rows), table.shape[0], bounds, raw)
        out = np.zeros((rows.size, table.shape[1]), table.dtype)
        out[where >= 0] = table[where[where >= 0]]
        if valid is not None:
            valid = (valid[1] if raw.shape[0] == 1 else valid[0], table.shape[1])
    else:
        where = _bounded(_unsigned(raw), table.size, bounds, raw)
        out = _take(table.reshape(-1), where)
    if valid_shape is not None:
        valid = tuple(int(v) for v in valid_shape)
    return as_tile(out, valid)


@implements("tile.gather")
def tile_gather(src, indices, tmp=None):
    raw = _valid_zeroed(indices)
    table = np.asarray(src)
    where = _bounded(_unsigned(raw), table.size, "check", raw)
    return as_tile(_take(table.reshape(-1), where), getattr(indices, "valid", None))


@implements("tensor.gather", "gather")
def tensor_gather(input, dim=None, index=None, mask_pattern=None, output_dtype=None):
    table = np.asarray(input)
    if mask_pattern is not None:
        step, first = MASK_PATTERNS[int(mask_pattern)]
        out = np.ascontiguousarray(table[:, first::step])
        if output_dtype is not None:
            from blockpipe.interpreter.state import numpy_dtype

            out = out.view(numpy_dtype(output_dtype))
        return as_tile(out)
    axis = -1 if dim is None else int(dim)
    if not -table.ndim <= axis < table.ndim:
        raise misuse(f"pl.tensor.gather's dim is {axis}, outside input's {table.ndim} dims")
    if table.ndim != 2 or axis % table.ndim != 1:
        return _gather_along(table, axis % table.ndim, np.asarray(index))
    raw = _valid_zeroed(index)
    where = _bounded(_unsigned(raw), table.shape[1], "check", raw)
    rows = np.arange(raw.shape[0])[:, None] * table.shape[1]
    out = _take(table.reshape(-1), np.where(where >= 0, where + rows, -1))
    return as_tile(out, getattr(index, "valid", None))


def _scatter(dest, source, index, extent, place):
    """A copy of `dest` with each source item placed at its index, in the
    indices' row-major order; a failure for the first index outside."""
    out = np.array(dest)
    raw = _valid_zeroed(index)
    u = _unsigned(raw).reshape(-1)
    _bounded(u, extent, "check", raw, "scatter")
    items = np.asarray(source)
    for k, at in enumerate(u):
        place(out, items, k, int(at))
    return as_tile(out)


@implements("tile.scatter")
def tile_scatter(dst, src, indexes):
    cols = np.asarray(dst).shape[1]

    def place(out, items, k, at):
        out[divmod(at, cols)] = items.reshape(-1)[k]

    return _scatter(dst, src, indexes, np.asarray(dst).size, place)


@implements("mscatter", "tile.mscatter")
def mscatter(src, idx, output_tensor):
    def place(out, items, k, at):
        out.reshape(-1)[at] = items.reshape(-1)[k]

    scattered = _scatter(output_tensor, src, idx, np.asarray(output_tensor).size, place)
    output_tensor[...] = scattered
    return output_tensor


def _in_rows(dest, source, index):
    width = np.asarray(source).shape[1]

    def place(out, items, k, at):
        out[k // width, at] = items.reshape(-1)[k]

    return _scatter(dest, source, index, np.asarray(dest).shape[1], place)


@implements("tensor.scatter", "scatter")
def tensor_scatter(input, dim=None, index=None, src=None, mask_pattern=None, dst=None):
    if mask_pattern is not None:
        step, first = MASK_PATTERNS[int(mask_pattern)]
        out = np.array(dst)
        out[:, first::step] = np.asarray(input)
        return as_tile(out)
    if dim not in (None, -1, 1):
        raise misuse(f"pl.tensor.scatter writes along the last dim (dim=-1) only, got dim={dim}")
    return _in_rows(input, src, index)


@implements("scatter_update", "tile.scatter_update", "tensor.scatter_update")
def scatter_update(input, dim=None, index=None, src=None):
    def place(out, items, k, at):
        out[at] = items[k]

    return _scatter(input, src, index, np.asarray(input).shape[0], place)


@implements("gatherb", "tile.gatherb")
def gatherb(src, offset, output_dtype=None):
    # As compiled: element c of row i reads src.flat[(offset[i, c // per]
    # >> 5) * per + c % per], checked as a gather of those elements.
    table = np.ascontiguousarray(src)
    per = 32 // table.dtype.itemsize
    starts = _unsigned(_valid_zeroed(offset)) >> 5
    cols = np.arange(starts.shape[1] * per)
    index = starts[:, cols // per] * per + cols % per
    where = _bounded(index, table.size, "check", index)
    out = _take(table.reshape(-1), where)
    if output_dtype is not None:
        from blockpipe.interpreter.state import numpy_dtype

        out = np.ascontiguousarray(out).view(numpy_dtype(output_dtype))
    valid = getattr(offset, "valid", None)
    per = 32 // out.dtype.itemsize
    return as_tile(out, None if valid is None else (valid[0], valid[1] * per))


@implements("reinterpret_view", "tile.reinterpret_view")
def reinterpret_view(data, dtype, shape=None):
    from blockpipe.interpreter.state import numpy_dtype

    table = np.ascontiguousarray(data)
    out = table.reshape(-1).view(numpy_dtype(dtype))
    if shape is not None:
        return as_tile(out.reshape(tuple(int(d) for d in shape)))
    return as_tile(out.reshape(table.shape[:-1] + (-1,)))


def _gather_along(table: np.ndarray, axis: int, index: np.ndarray):
    """torch.gather along `axis`, as compiled: each index becomes the flat
    position it names, checked against the whole input only."""
    if index.ndim != table.ndim:
        raise misuse(f"pl.tensor.gather's index must have input's rank, {table.ndim}")
    strides = [int(np.prod(table.shape[d + 1 :])) for d in range(table.ndim)]
    place = np.indices(index.shape)
    flat = index.astype(np.int64) * strides[axis]
    for d in range(table.ndim):
        if d != axis:
            flat = flat + place[d] * strides[d]
    raw = flat.reshape(-1, index.shape[-1])
    where = _bounded(np.where(raw < 0, table.size, raw), table.size, "check", raw)
    return as_tile(_take(table.reshape(-1), where).reshape(index.shape))


@implements("paged_gather", "tensor.paged_gather")
def paged_gather(
    src,
    indices,
    block_table,
    block_size,
    size,
    max_indices,
    space=None,
    col_off=0,
    is_trans=False,
    is_b_matrix=False,
):
    if is_trans:
        raise misuse("pl.paged_gather(is_trans=True) is not supported by blockpipe")
    logical = np.asarray(indices).reshape(1, -1).astype(np.int64)
    if logical.size != int(max_indices):
        raise misuse(f"pl.paged_gather's indices are max_indices={max_indices} rows")
    table = np.asarray(block_table)
    pages = _take(table, _bounded(logical // block_size, table.size, "check", logical))
    physical = pages.astype(np.int64) * block_size + logical % block_size
    pool = np.asarray(src)
    rows = _bounded(physical.reshape(-1), pool.shape[0], "check", physical)
    return as_tile(np.array(pool[rows, int(col_off) : int(col_off) + int(size)]))
