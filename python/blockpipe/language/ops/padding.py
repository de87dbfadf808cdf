"""pypto's padding forms beyond pl.fillpad: pl.tile.fillpad_inplace (the
same as pl.fillpad, a tile being a value here) and pl.tile.fillpad_expand
(a tile's valid region copied into a larger tile, the rest padded),
composed from bp.full, bp.insert and bp.fillpad."""

from __future__ import annotations

from blockpipe.language import valid_shapes
from blockpipe.language.ops import memory, operation
from blockpipe.language.ops.vector import VECTOR_KINDS, vector_operand
from blockpipe.language.types import MemorySpace, TileType
from blockpipe.language.values import KERNEL_KINDS


def _fillpad_inplace(cx, call, tile, pad_value=None):
    """pypto's `pl.tile.fillpad_inplace(t, pad_value=)`: pl.fillpad(t,
    pad_value). pypto reuses the input's buffer; here a tile is a value and
    the result is the padded tile either way. Valid in InCore, AIC and AIV
    functions."""
    return memory._fillpad(cx, call, tile, pad_value)


def _fillpad_expand(cx, call, tile, shape, pad_value=None):
    """The tile's valid region (all of it without a valid shape) at the
    top left of a larger tile of `shape`, every other element `pad_value`
    (pl.PadValue.zero, the default, .max or .min, as pl.fillpad's):
    `pl.tile.fillpad_expand(t, [64, 64], pad_value=pl.PadValue.max)`
    (pypto's). `shape` is at least the tile's in each dimension. The result
    is valid everywhere. A composition: the tile is inserted into a new
    one, narrowed to its valid region and pl.fillpad-ed. Valid in InCore
    and AIV functions.
    """
    node = call.node
    t = vector_operand(cx, cx.tile_arg(tile, "pl.fillpad_expand's tile"), node, "its tile")
    t = cx.typed_tile(t, node, "pl.fillpad_expand")
    dims = tuple(cx.shape_arg(shape, "pl.fillpad_expand's shape"))
    have = tuple(t.type.shape)
    if len(have) != 2 or len(dims) != 2 or any(d < h for d, h in zip(dims, have)):
        raise cx.error(
            shape,
            f"pl.fillpad_expand makes a 2-D tile at least as large as its 2-D tile "
            f"{list(have)}, got shape {list(dims)}",
        )
    pad = memory.pad_arg(cx, pad_value) if pad_value is not None else 0
    dtype = t.type.dtype
    zero = cx.float_attr(0.0, dtype, node) if dtype.is_float else cx.int_attr(0, dtype, node)
    (dest,) = cx.create(
        "bp.full", [], [TileType(dims, dtype, MemorySpace.Vec)], {"value": zero}, node
    )
    at = [cx.index_value(0, node), cx.index_value(0, node)]
    # What lies outside the tile's valid region is overwritten by the pad.
    (dest,) = cx.create(
        "bp.insert", [valid_shapes.with_valid(t, None), dest] + at, [dest.type], {}, node
    )
    region = t.valid if t.valid is not None else have
    dest = valid_shapes.with_valid(dest, region)
    return valid_shapes.pad_for(cx, dest, pad, node)


fillpad_inplace = operation(name="fillpad_inplace", kinds=KERNEL_KINDS)(_fillpad_inplace)
tile_fillpad_inplace = operation(name="tile.fillpad_inplace", kinds=KERNEL_KINDS)(_fillpad_inplace)
fillpad_expand = operation(name="fillpad_expand", kinds=VECTOR_KINDS)(_fillpad_expand)
tile_fillpad_expand = operation(name="tile.fillpad_expand", kinds=VECTOR_KINDS)(_fillpad_expand)
tensor_fillpad_expand = operation(name="tensor.fillpad_expand", kinds=VECTOR_KINDS)(_fillpad_expand)
