"""pypto's scratch tiles: `pl.create_tile(shape, dtype=, target_memory=)`
(also spelled `pl.tile.create`), a tile to be written, or the scratch
operand pypto's reductions take (blockpipe's need none)."""

from __future__ import annotations

from blockpipe.language.ops import operation
from blockpipe.language.types import INDEX, FunctionType, MemorySpace, TileType

_KINDS = (FunctionType.InCore, FunctionType.AIV, FunctionType.AIC)


def _create(cx, call, shape, dtype, target_memory, what: str):
    dims = cx.shape_arg(shape, f"{what}'s shape")
    element = cx.dtype_arg(dtype, f"{what}'s dtype")
    if element is INDEX:
        raise cx.error(dtype, "tiles cannot hold INDEX elements")
    space = cx.space_arg(target_memory, "target_memory")
    if space not in (None, MemorySpace.Vec, MemorySpace.Acc):
        raise cx.error(
            target_memory,
            f"{what} in {space.name} memory is not supported by blockpipe: Mat, Left and "
            "Right tiles come from pl.load and pl.move",
        )
    if cx.kind is FunctionType.AIC and space is not MemorySpace.Acc:
        raise cx.error(call.node, f"an AIC function can only make Acc tiles with {what}")
    zero = (
        cx.float_attr(0.0, element, call.node)
        if element.is_float
        else cx.int_attr(0, element, call.node)
    )
    (result,) = cx.create(
        "bp.full", [], [TileType(dims, element, space)], {"value": zero}, call.node, call.name
    )
    return result


@operation(name="create_tile", kinds=_KINDS)
def create_tile(cx, call, shape, dtype, target_memory=None):
    """A tile of `shape` and `dtype` to be written: `pl.create_tile([16, 16],
    dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)`. pypto leaves its
    elements undefined; blockpipe makes them zero (it is `pl.full(shape,
    dtype, 0)`). target_memory: Vec or Acc, or left out (from its uses).
    A reduction's scratch tile (pypto's `pl.row_max(t, tmp)`) may be one;
    blockpipe's reductions need none. Valid in InCore and AIV functions, and
    in AIC functions for Acc tiles."""
    return _create(cx, call, shape, dtype, target_memory, "pl.create_tile")


@operation(name="tile.create", kinds=_KINDS)
def tile_create(cx, call, shape, dtype, target_memory=None):
    """pypto's other spelling of pl.create_tile: a zero tile of `shape` and
    `dtype` to be written, or a reduction's scratch operand:
    `pl.tile.create([16, 16], dtype=pl.FP32)`."""
    return _create(cx, call, shape, dtype, target_memory, "pl.tile.create")
