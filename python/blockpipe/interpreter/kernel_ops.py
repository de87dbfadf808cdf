"""The operations of a kernel on NumPy, by the qualified name of the
operation they run ("load", "tile.get_block_idx"). Each takes the
operation's arguments by parameter name, as the DSL signature binds them.

The op table's operations (elementwise, reductions) run their NumPy
reference from the table (op_table.numpy_reference); what is here is the
rest: windows of tensors, matmul, block identity, casts, broadcasts.
"""

from __future__ import annotations

from typing import Callable, Dict, Optional, Tuple

import numpy as np

from blockpipe.interpreter.state import Tile, as_tile, failure, misuse, numpy_dtype, running
from blockpipe.language import op_table
from blockpipe.language.types import DType

IMPLS: Dict[str, Callable] = {}


def implements(*names: str):
    def register(fn: Callable) -> Callable:
        for name in names:
            IMPLS[name] = fn
        return fn

    return register


def _is_tile(value) -> bool:
    return isinstance(value, np.ndarray)


def _ints(values, what: str) -> Tuple[int, ...]:
    try:
        return tuple(int(v) for v in values)
    except TypeError:
        raise misuse(f"{what} must be a list of integers, got {values!r}") from None


# ------------------------------------------------------------- op table


# What the padding outside a valid shape holds for a reduction, by the
# record's identity.
def _identity(identity: str, dtype: np.dtype):
    if identity == "zero":
        return 0
    if identity == "one":
        return 1
    info = np.finfo(dtype) if dtype.kind == "f" else np.iinfo(dtype)
    return info.min if identity == "lowest" else info.max


def _tree_col_sum(t: np.ndarray) -> np.ndarray:
    """pl.col_sum with a scratch tile (language/ops/column_sums.py): rows
    2k and 2k + 1 into row k, an odd last row into row 0, each sum in the
    tile's dtype; integers as bp.col_sum adds them."""
    if t.dtype.kind in "iub":  # (bfloat16's kind is "V")
        return np.add.accumulate(t, axis=0, dtype=t.dtype)[-1:]
    level = t.copy()
    while len(level) > 1:
        half = len(level) // 2
        summed = (level[0 : 2 * half : 2] + level[1 : 2 * half : 2]).astype(t.dtype)
        if len(level) % 2:
            summed[0] = (summed[0] + level[-1]).astype(t.dtype)
        level = summed
    return level


def _table_op(record: dict) -> Callable:
    mnemonic = record["name"][len("bp.") :]
    reference = op_table.numpy_reference(mnemonic)
    cls = record["class"]
    names = [p.split("=")[0].strip() for p in record["params"].split(",")]

    if cls in op_table.REDUCTION_CLASSES:
        rows = cls in op_table.ROW_REDUCTION_CLASSES

        def reduce(**arguments):
            t = np.asarray(arguments[names[0]])
            valid = getattr(t, "valid", None)
            if valid is not None:
                # Of a tile with a valid shape only the valid region counts.
                padded = np.full(t.shape, _identity(record["identity"], t.dtype), t.dtype)
                padded[tuple(slice(0, v) for v in valid)] = t[tuple(slice(0, v) for v in valid)]
                t = padded
            result = reference(np.asarray(t).view(np.ndarray))
            if mnemonic == "col_sum" and arguments.get("tmp_tile") is not None:
                result = _tree_col_sum(np.asarray(t).view(np.ndarray))
            if cls not in op_table.ARG_REDUCTION_CLASSES:
                result = result.astype(t.dtype, copy=False)
            if valid is None:
                return as_tile(result)
            return as_tile(result, (valid[0], 1) if rows else (1, valid[1]))

        return reduce

    def elementwise(**arguments):
        operands = [arguments[n] for n in names[: 1 if cls == "unary" else 2]]
        first = next((o for o in operands if _is_tile(o)), None)
        if first is None:
            raise misuse(f"pl.{record['pl_name']} needs a tile operand, got {operands!r}")
        plain = [o.view(np.ndarray) if isinstance(o, np.ndarray) else o for o in operands]
        result = reference(*plain)
        return as_tile(
            np.asarray(result).astype(first.dtype, copy=False), getattr(first, "valid", None)
        )

    return elementwise


for _record in op_table.RECORDS.values():
    _impl = _table_op(_record)
    for _where in _record["spellings"].split():
        IMPLS[_record["pl_name"] if _where == "pl" else f"{_where}.{_record['pl_name']}"] = _impl


# ------------------------------------------------------------- identity


@implements("tile.get_block_idx")
def get_block_idx():
    return running().block_idx


@implements("tile.get_block_num")
def get_block_num():
    return running().block_num


@implements("tile.get_subblock_idx")
def get_subblock_idx():
    return 0


# ------------------------------------------------------------- memory


def _window(tensor: np.ndarray, offsets, extent, what: str):
    """The slices of `tensor` at `offsets` of `extent`; an ExecutionError
    when the window leaves the tensor (as a compiled launch fails)."""
    if len(offsets) != tensor.ndim:
        raise misuse(f"{what}'s offsets have {len(offsets)} entries, the tensor has {tensor.ndim}")
    for o, e, dim in zip(offsets, extent, tensor.shape):
        if o < 0 or o + e > dim:
            raise failure(
                f"{what} window at {list(offsets)} of {list(extent)} is outside the tensor "
                f"of shape {list(tensor.shape)}"
            )
    return tuple(slice(o, o + e) for o, e in zip(offsets, extent))


@implements("slice", "tensor.slice")
def slice_(tensor, shape, offset, valid_shape=None, drop_dims=None, pad_value=None):
    """A window: of a tile, or of a tensor in a kernel, read as a tile (as
    pl.load); of a tensor in an orchestration, a view writing through."""
    now = running()
    if isinstance(tensor, Tile) or (now is not None and now.in_kernel):
        if isinstance(tensor, Tile) and (valid_shape is not None or pad_value is not None):
            raise misuse("pl.slice(valid_shape=..., pad_value=...) of a tile is not supported")
        return load(tensor, offset, shape, valid_shape=valid_shape)
    at = _ints(offset, "pl.slice's offset")
    return tensor[_window(tensor, at, _ints(shape, "pl.slice's shape"), "pl.slice")]


@implements("tile.extract")
def tile_extract(src, index_row, index_col, shape, target_memory):
    rows, cols = _ints(shape, "pl.tile.extract's shape")
    at = _window(np.asarray(src), [int(index_row), int(index_col)], (rows, cols), "pl.tile.extract")
    return as_tile(np.array(np.asarray(src)[at]))


@implements("load", "tile.load")
def load(tensor, offsets, shapes, valid_shape=None, target_memory=None, clamp=False):
    offsets = _ints(offsets, "pl.load's offsets")
    shape = _ints(shapes, "pl.load's shapes")
    if len(shape) != len(offsets):
        raise misuse(
            f"pl.load's shapes has {len(shape)} dimensions but the tensor has {len(offsets)}"
        )
    valid = _ints(valid_shape, "pl.load's valid_shape") if valid_shape is not None else None
    if clamp:
        valid = tuple(
            max(0, min(v, dim - o)) for v, dim, o in zip(valid or shape, np.shape(tensor), offsets)
        )
    region = valid or shape
    data = np.zeros(shape, np.asarray(tensor).dtype)
    data[tuple(slice(0, r) for r in region)] = tensor[_window(tensor, offsets, region, "pl.load")]
    # Leading sizes of 1 are dropped: [1, 16, 64] is a [16, 64] tile.
    while data.ndim > 2 and data.shape[0] == 1:
        data = data[0]
        region = region[1:]
    return as_tile(data, region if valid is not None else None)


@implements("store", "tile.store")
def store(tile, offsets, output=None, shapes=None, output_tensor=None, atomic=None):
    out = output if output is not None else output_tensor
    return _write(out, tile, offsets, atomic)


@implements("assemble", "tile.assemble")
def assemble(target, source, offset, atomic=None):
    if isinstance(target, Tile):  # a tile into a tile
        whole = np.array(target)
        part = np.asarray(source)
        at = _ints(offset, "pl.assemble's offset")
        whole[tuple(slice(o, o + n) for o, n in zip(at, part.shape))] = part
        return as_tile(whole)
    return _write(target, source, offset, atomic)


def _write(out, tile, offsets, atomic):
    """`tile` stored into `out` at `offsets` (added, with atomic=Add)."""
    offsets = _ints(offsets, "pl.store's offsets")
    value = np.asarray(tile)
    region = getattr(tile, "valid", None) or value.shape
    value = value[tuple(slice(0, r) for r in region)]
    # A tile whose leading sizes of 1 were dropped writes a window with them.
    extent = (1,) * (out.ndim - value.ndim) + tuple(region)
    window = _window(out, offsets, extent, "pl.store")
    value = value.reshape(extent).astype(out.dtype)
    if atomic is not None and int(atomic) == 1:  # pl.AtomicType.Add
        out[window] = (out[window] + value).astype(out.dtype)
    else:
        out[window] = value
    return out


@implements("tile.transpose_view")
def transpose_view(tile):
    # The view's data is the transpose; a matmul reads it as given.
    return as_tile(np.swapaxes(np.asarray(tile), -1, -2))


@implements("move", "tile.move")
def move(tile, target_memory):  # memory spaces are not modelled
    return tile


@implements("tensor.dim")
def dim(tensor, axis):
    return int(np.shape(tensor)[axis])


# ------------------------------------------------------------- cube


def _accumulator(a: np.ndarray) -> np.dtype:
    return np.dtype(np.float32) if a.dtype.kind == "f" else np.dtype(np.int32)


def _product(lhs, rhs, a_trans, b_trans) -> np.ndarray:
    a, b = np.asarray(lhs), np.asarray(rhs)
    if a_trans:
        a = np.swapaxes(a, -1, -2)
    if b_trans:
        b = np.swapaxes(b, -1, -2)
    accumulator = _accumulator(a)
    return np.matmul(a.astype(accumulator), b.astype(accumulator))


@implements("matmul", "tile.matmul")
def matmul(lhs, rhs, out_dtype=None, a_trans=False, b_trans=False, c_matrix_nz=False, acc=None):
    result = _product(lhs, rhs, a_trans, b_trans)
    if acc is not None:
        result = result + np.asarray(acc).astype(result.dtype)
    if out_dtype is not None:
        result = result.astype(numpy_dtype(out_dtype))
    return as_tile(result)


@implements("batch_matmul", "tile.batch_matmul")
def batch_matmul(lhs, rhs, a_trans=False, b_trans=False, out_dtype=None):
    return matmul(lhs, rhs, out_dtype=out_dtype, a_trans=a_trans, b_trans=b_trans)


@implements("matmul_acc", "tile.matmul_acc")
def matmul_acc(acc, lhs, rhs, a_trans=False, b_trans=False, init_cond=None):
    result = _product(lhs, rhs, a_trans, b_trans)
    if init_cond is not None and bool(init_cond):
        return as_tile(result.astype(np.asarray(acc).dtype))
    return as_tile((np.asarray(acc) + result).astype(np.asarray(acc).dtype))


# ------------------------------------------------------------- vector


@implements("full", "tile.full")
def full(shape, dtype: DType, value, target_memory=None):
    return as_tile(np.full(_ints(shape, "pl.full's shape"), value, numpy_dtype(dtype)))


@implements("create_tile", "tile.create")
def create_tile(shape, dtype: DType, target_memory=None):
    return as_tile(np.zeros(_ints(shape, "pl.create_tile's shape"), numpy_dtype(dtype)))


@implements("expands", "tile.expands")
def expands(target, scalar):
    return as_tile(np.full(np.shape(target), scalar, np.asarray(target).dtype))


@implements("cast", "tile.cast")
def cast(tile, target_type=None, mode=None, out_dtype=None):
    if (target_type is None) == (out_dtype is None):
        raise misuse("pl.cast takes the dtype once: pl.cast(t, pl.FP16)")
    if mode is not None and mode not in ("round", "rint"):
        raise misuse(f"pl.cast(mode={mode!r}) is not supported by blockpipe")
    dtype = target_type if target_type is not None else out_dtype
    if not _is_tile(tile):
        # A scalar: floats to integers truncate toward zero, as in C.
        return float(tile) if dtype.is_float else int(tile)
    source = np.asarray(tile)
    if source.dtype.itemsize == 2 and source.dtype.kind == "f" or source.dtype.name == "bfloat16":
        source = source.astype(np.float32)  # the 16-bit floats convert through FP32
    return _like(source.astype(numpy_dtype(dtype)), tile)


def _like(result, first) -> Tile:
    return as_tile(result, getattr(first, "valid", None))


_CMP = (np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal)


@implements("cmp", "cmps", "tile.cmp", "tile.cmps")
def cmp(lhs, rhs, cmp_type=0):
    if not 0 <= int(cmp_type) < len(_CMP):
        raise misuse(f"cmp_type must be 0 .. 5, got {cmp_type!r}")
    left = np.asarray(lhs)
    right = np.asarray(rhs) if _is_tile(rhs) else rhs
    result = _like(_CMP[int(cmp_type)](left, right).astype(left.dtype), lhs)
    result.predicate = True
    return result


@implements("where")
def where(mask, lhs, rhs):
    left = np.asarray(lhs)
    return _like(np.where(np.asarray(mask) != 0, left, rhs).astype(left.dtype), lhs)


def _unpacked(mask, like) -> np.ndarray:
    """The 1/0 tile of `like`'s shape that pl.sel's mask selects by: a
    comparison's or a float tile itself; any other integer tile's bits,
    (i, j) bit j mod W of word j div W of row i (language/ops/packed_masks)."""
    words = np.asarray(mask)
    if getattr(mask, "predicate", False) or words.dtype.kind == "f":
        return words
    bits = words.dtype.itemsize * 8
    rows, cols = np.shape(like)
    if words.ndim != 2 or bits not in (8, 16, 32) or words.shape[0] != rows:
        raise misuse(f"a packed mask of {np.shape(like)} tiles has their rows, got {words.shape}")
    if words.shape[1] * bits < cols:
        raise misuse(f"the mask's rows hold {words.shape[1] * bits} bits, the tiles have {cols}")
    column = np.arange(cols)
    held = words.view(f"u{bits // 8}")[:, column // bits]
    return (held >> (column % bits).astype(held.dtype)) & 1


@implements("sel", "tile.sel")
def sel(mask, lhs, rhs, tmp=None):
    return where(_unpacked(mask, lhs), lhs, rhs)


@implements("sels", "tile.sels")
def sels(mask, src, tmp, scalar):
    return where(_unpacked(mask, src), src, scalar)


def _scalar_extremum(which: Callable):
    def extremum(lhs, rhs):
        if _is_tile(lhs) or _is_tile(rhs):
            raise misuse("pl.min / pl.max take two scalars; tiles take pl.minimum or pl.row_min")
        return which(lhs, rhs)

    return extremum


IMPLS["min"] = _scalar_extremum(min)
IMPLS["max"] = _scalar_extremum(max)

_EXPAND_OPS: Dict[str, Optional[Callable]] = {
    "": None,
    "_add": np.add,
    "_sub": np.subtract,
    "_mul": np.multiply,
    "_div": np.divide,
    "_max": np.maximum,
    "_min": np.minimum,
    "_expdif": lambda x, v: np.exp(x - v),
}


def _expand(op: Optional[Callable]):
    def expand(tile, vec, tmp=None):
        t, v = np.asarray(tile), np.asarray(vec)
        result = np.broadcast_to(v, t.shape) if op is None else op(t, v)
        return _like(np.asarray(result).astype(t.dtype), tile)

    return expand


for _axis in ("row", "col"):
    for _suffix, _op in _EXPAND_OPS.items():
        IMPLS[f"{_axis}_expand{_suffix}"] = IMPLS[f"tile.{_axis}_expand{_suffix}"] = _expand(_op)


@implements("reshape", "tile.reshape")
def reshape(tile, shape):
    return _like(np.reshape(np.asarray(tile), _ints(shape, "pl.reshape's shape")), None)


@implements("transpose", "tile.transpose")
def transpose(tile, axis1=0, axis2=1):
    return _like(np.swapaxes(np.asarray(tile), axis1, axis2), None)


@implements("const")
def const(value, dtype: DType):
    return float(value) if dtype.is_float else int(value)


def philox4x32(counters: np.ndarray, key0: int, key1: int, rounds: int) -> np.ndarray:
    """Philox4x32 of each row of `counters` ([n, 4] uint32, word 0 the
    lowest) under the key (key0, key1): the tile library's
    detail::philox4x32, on NumPy."""
    c = counters.astype(np.uint64)
    k0, k1 = np.uint64(key0 & 0xFFFFFFFF), np.uint64(key1 & 0xFFFFFFFF)
    mask = np.uint64(0xFFFFFFFF)
    for r in range(rounds):
        if r:
            k0 = (k0 + np.uint64(0x9E3779B9)) & mask
            k1 = (k1 + np.uint64(0xBB67AE85)) & mask
        p0 = np.uint64(0xD2511F53) * c[:, 0]
        p1 = np.uint64(0xCD9E8D57) * c[:, 2]
        c = np.stack(
            [
                (p1 >> np.uint64(32)) ^ c[:, 1] ^ k0,
                p1 & mask,
                (p0 >> np.uint64(32)) ^ c[:, 3] ^ k1,
                p0 & mask,
            ],
            axis=1,
        )
    return c.astype(np.uint32)


@implements("tile.random", "tensor.random", "random")
def random(
    key0,
    key1,
    counter0,
    counter1,
    counter2,
    counter3,
    shape,
    valid_shape=None,
    dtype=None,
    rounds=10,
):
    rows, cols = _ints(shape, "pl.tile.random's shape")
    n = rows * cols
    steps = np.arange((n + 3) // 4, dtype=np.uint64)
    base = sum(
        int(c) % (1 << 32) << (32 * i)
        for i, c in enumerate((counter0, counter1, counter2, counter3))
    )
    values = [(base + int(s)) % (1 << 128) for s in steps]
    counters = np.array(
        [[(v >> (32 * i)) & 0xFFFFFFFF for i in range(4)] for v in values], np.uint64
    )
    words = philox4x32(counters, int(key0), int(key1), int(rounds)).reshape(-1)[:n]
    out = (
        words.view(np.int32)
        if dtype is not None and np.dtype(numpy_dtype(dtype)) == np.int32
        else words
    )
    valid = _ints(valid_shape, "pl.tile.random's valid_shape") if valid_shape is not None else None
    return as_tile(out.reshape(rows, cols).copy(), valid)


# ------------------------------------------------------------- printing


def _text(value) -> str:
    """A value as the tile library's print_line writes it (Tile/Print.h)."""
    if isinstance(value, (str, float)):  # text, or a number the program wrote
        return str(value)
    if isinstance(value, np.ndarray) and value.ndim > 0:
        rows = value.reshape(-1, value.shape[-1])  # as the tile library's 2-D tiles
        summarize = rows.size > 1000

        def shown(k, extent):
            return not summarize or extent <= 6 or k < 3 or k >= extent - 3

        def line(items):
            out = []
            for k, item in enumerate(items):
                if shown(k, len(items)):
                    out.append(_text(item))
                elif k == 3:
                    out.append("...")
            return "[" + ", ".join(out) + "]"

        return (
            "["
            + ", ".join(
                "..." if not shown(r, len(rows)) else line(list(rows[r]))
                for r in range(len(rows))
                if shown(r, len(rows)) or r == 3
            )
            + "]"
        )
    number = np.asarray(value)
    if number.dtype.kind in "iub":
        return str(int(number))
    if number.dtype == np.float64 and not isinstance(value, (float, int)):
        return format(float(number), ".17g")
    return format(float(np.float32(number)), ".8g")


@implements("print")
def print_(args, sep=" "):
    import os

    from blockpipe.interpreter.state import user_site

    now = running()
    file, line, _ = user_site()
    where = f"{os.path.basename(file)}:{line}: " if file else ""
    print(
        f"kernel '{now.name}' block {now.block_idx}: {where}" + sep.join(_text(a) for a in args),
        flush=True,
    )


# ------------------------------------------------------------- prefetching


@implements("prefetch.make_context")
def prefetch_make_context():
    return "prefetch context"  # a cache hint: nothing to hold


@implements("prefetch.async_prefetch")
def prefetch_async_prefetch(tensor, ctx):
    return "prefetch event"


@implements("prefetch.session")
def prefetch_session(ctx):
    return "prefetch session"


@implements("prefetch.wait")
def prefetch_wait(evt, session):
    return None


@implements("tile.read")
def tile_read(tile, indices):
    data = np.asarray(tile)
    at = [indices] if np.ndim(indices) == 0 else list(indices)
    at = [0] * (data.ndim - len(at)) + [int(i) for i in at]
    for k, (i, n) in enumerate(zip(at, data.shape)):
        if not 0 <= i < n:
            raise failure(
                f"pl.tile.read: index {i} of dimension {k} is outside the tile's [0, {n})"
            )
    return data[tuple(at)]
