"""Tiles made from a sequence or joined from others: pl.tile.ci (and its
spellings) and pl.concat."""

from __future__ import annotations

from blockpipe.language.ops import operation
from blockpipe.language.ops.vector import VECTOR_KINDS, vector_operand
from blockpipe.language.types import (
    INDEX,
    INT32,
    UINT32,
    DType,
    FunctionType,
    MemorySpace,
    ScalarType,
    TileType,
)
from blockpipe.language.values import Value


def _ci(cx, call, start, shape, dtype=None, descending=False):
    """An integer sequence in a [1, N] tile: element k is start + k (with
    descending=True, start - k), wrapping around at the dtype's width, as
    pypto's `pl.tile.ci` (NumPy's arange): `pl.tile.ci(0, [1, 32],
    dtype=pl.INT32)`.

    start: a number or an integer scalar, known at run time. shape: [1, N]
    or [N] (pypto's ci fills one row). dtype: an integer dtype (pl.INT32 by
    default). pl.tile.arange, pl.tensor.ci and pl.arange are the same
    operation. Valid in InCore and AIV functions (and the pl.at scopes
    outlined into them).
    """
    dims = cx.shape_arg(shape, "pl.tile.ci's shape")
    if not (len(dims) == 1 or (len(dims) == 2 and dims[0] == 1)):
        raise cx.error(
            shape, f"pl.tile.ci fills one row: its shape is [1, N] or [N], got {list(dims)}"
        )
    kind = INT32 if dtype is None else cx.static(dtype)
    if not isinstance(kind, DType) or kind.is_float or kind is INDEX:
        raise cx.error(
            dtype if dtype is not None else call.node,
            f"pl.tile.ci's dtype must be an integer dtype, got {kind!r}",
        )
    is_descending = cx.static(descending) if not isinstance(descending, bool) else descending
    if not isinstance(is_descending, bool):
        raise cx.error(descending, "pl.tile.ci's descending must be True or False")
    first = cx.expr(start)
    if isinstance(first, float) or (
        isinstance(first, Value)
        and isinstance(first.type, ScalarType)
        and first.type.dtype.is_float
    ):
        raise cx.error(start, "pl.tile.ci's start must be an integer")
    attrs = {"descending": cx.builder.unit()} if is_descending else {}
    (result,) = cx.create(
        "bp.ci",
        [cx.index_value(first, start)],
        [TileType(dims, kind, MemorySpace.Vec)],
        attrs,
        call.node,
        call.name,
    )
    return result


tile_ci = operation(name="tile.ci", kinds=VECTOR_KINDS)(_ci)
tile_arange = operation(name="tile.arange", kinds=VECTOR_KINDS)(_ci)
tensor_ci = operation(name="tensor.ci", kinds=VECTOR_KINDS)(_ci)
tensor_arange = operation(name="tensor.arange", kinds=VECTOR_KINDS)(_ci)
arange = operation(name="arange", kinds=VECTOR_KINDS)(_ci)


@operation(kinds=(FunctionType.InCore, FunctionType.AIV))
def concat(cx, call, src0, src1):
    """The columns of `src0` then those of `src1`: `pl.concat(a, b)` of
    [M, N0] and [M, N1] Vec tiles of one dtype is [M, N0 + N1] (pypto's
    column-wise concatenation). Valid in InCore and AIV functions."""
    parts = []
    for node, what in ((src0, "pl.concat's first tile"), (src1, "pl.concat's second tile")):
        value = vector_operand(cx, cx.tile_arg(node, what), call.node, what)
        parts.append(cx.typed_tile(value, node, "pl.concat"))
    a, b = parts
    cx.check_dtype(a.type.dtype, b.type.dtype, call.node, "pl.concat's tiles")
    if len(a.type.shape) != 2 or len(b.type.shape) != 2 or a.type.shape[0] != b.type.shape[0]:
        raise cx.error(
            call.node,
            f"pl.concat joins the columns of 2-D tiles with as many rows, got "
            f"{list(a.type.shape)} and {list(b.type.shape)}",
        )
    rows, left = a.type.shape
    dtype = a.type.dtype
    whole = TileType((rows, left + b.type.shape[1]), dtype, MemorySpace.Vec)
    zero = (
        cx.float_attr(0.0, dtype, call.node) if dtype.is_float else cx.int_attr(0, dtype, call.node)
    )
    (result,) = cx.create("bp.full", [], [whole], {"value": zero}, call.node)
    for part, column in ((a, 0), (b, left)):
        at = [cx.index_value(0, call.node), cx.index_value(column, call.node)]
        (result,) = cx.create("bp.insert", [part, result] + at, [whole], {}, call.node, call.name)
    return result


def _random(
    cx,
    call,
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
    """A tile of counter-based pseudo-random 32-bit integers, as pypto's
    `pl.tile.random(key0, key1, counter0, counter1, counter2, counter3,
    [R, C], dtype=pl.UINT32, rounds=10)`: Philox4x32 with `rounds` rounds
    (7 or 10); element e (row-major) is word e mod 4 of the block the key
    (key0, key1) makes of the 128-bit counter (counter0 the lowest word)
    plus e div 4. The same seeds give the same tile, on every target and
    in the interpreter.

    Seeds: numbers or integer scalars, each taken modulo 2**32. dtype:
    pl.UINT32 (the default) or pl.INT32 (the same bits). valid_shape: the
    part that holds the values (pypto fills only it). pl.random and
    pl.tensor.random are the same operation. Valid in InCore and AIV
    functions.
    """
    dims = cx.shape_arg(shape, "pl.tile.random's shape")
    if len(dims) != 2:
        raise cx.error(shape, f"pl.tile.random makes a 2-D tile, got shape {list(dims)}")
    kind = UINT32 if dtype is None else cx.static(dtype)
    if kind not in (UINT32, INT32):
        raise cx.error(dtype, f"pl.tile.random makes UINT32 or INT32 tiles, got {kind!r}")
    count = cx.static_int(rounds, "pl.tile.random's rounds") if rounds != 10 else 10
    if count not in (7, 10):
        raise cx.error(rounds, f"pl.tile.random runs 7 or 10 rounds, got {count}")
    seeds = []
    for node in (key0, key1, counter0, counter1, counter2, counter3):
        value = cx.expr(node)
        if isinstance(value, float) or (
            isinstance(value, Value)
            and isinstance(value.type, ScalarType)
            and value.type.dtype.is_float
        ):
            raise cx.error(node, "pl.tile.random's seeds must be integers")
        if isinstance(value, int):
            value &= 0xFFFFFFFF  # a seed is taken modulo 2**32
        seeds.append(cx.index_value(value, node))
    (result,) = cx.create(
        "bp.random",
        seeds,
        [TileType(dims, kind, MemorySpace.Vec)],
        {"rounds": cx.builder.i32(count)},
        call.node,
        call.name,
    )
    if valid_shape is None:
        return result
    from blockpipe.language import valid_shapes
    from blockpipe.language.ops.memory import valid_arg

    return valid_shapes.with_valid(result, valid_arg(cx, valid_shape, dims, "pl.tile.random"))


tile_random = operation(name="tile.random", kinds=VECTOR_KINDS)(_random)
tensor_random = operation(name="tensor.random", kinds=VECTOR_KINDS)(_random)
random = operation(name="random", kinds=VECTOR_KINDS)(_random)
