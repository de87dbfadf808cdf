"""pl.reinterpret_view: a tile's bytes read as another dtype (bp.bitcast),
also behind the output_dtype= of pypto's byte gathers."""

from __future__ import annotations

from blockpipe.language import valid_shapes
from blockpipe.language.ops import operation
from blockpipe.language.ops.vector import VECTOR_KINDS, vector_operand
from blockpipe.language.types import INDEX, MemorySpace, TileType
from blockpipe.language.values import Value, describe


def bitcast(cx, node, name, tile: Value, dtype, shape=None) -> Value:
    """`tile`'s bytes as `dtype`, in `shape` (by default the last dim scaled
    by the ratio of the element sizes)."""
    src = tile.type
    rows = tuple(src.shape[:-1])
    if shape is None:
        total = src.shape[-1] * src.dtype.bytes
        if total % dtype.bytes:
            raise cx.error(
                node,
                f"a row of {total} bytes holds no whole number of {dtype.name} elements; "
                "give shape=",
            )
        shape = rows + (total // dtype.bytes,)
    count = 1
    for d in src.shape:
        count *= d
    wanted = 1
    for d in shape:
        wanted *= d
    if wanted * dtype.bytes != count * src.dtype.bytes:
        raise cx.error(
            node,
            f"shape {list(shape)} of {dtype.name} holds {wanted * dtype.bytes} bytes; the "
            f"tile holds {count * src.dtype.bytes}",
        )
    (result,) = cx.create(
        "bp.bitcast", [tile], [TileType(tuple(shape), dtype, MemorySpace.Vec)], {}, node, name
    )
    return result


def _reinterpret_view(cx, call, data, dtype, shape=None):
    """The tile's bytes read as `dtype`, row-major: pypto's
    `pl.reinterpret_view(t, pl.INT16)` of a `[R, C]` FP32 tile is `[R, 2C]`
    INT16 (the last dim scaled by the ratio of the element sizes), or the
    byte-equivalent `shape=` given. The result is a new tile (blockpipe's
    tiles are values); its valid shape is all of it. Valid in InCore and
    AIV functions.
    """
    value = cx.tile_operand(cx.expr(data), data)
    if not (isinstance(value, Value) and isinstance(value.type, TileType)):
        raise cx.error(data, f"pl.reinterpret_view's data must be a tile, got {describe(value)}")
    value = vector_operand(cx, cx.typed_tile(value, data, "pl.reinterpret_view"), data, "data")
    kind = cx.dtype_arg(dtype, "pl.reinterpret_view's dtype")
    if kind is INDEX:
        raise cx.error(dtype, "tiles cannot hold INDEX elements")
    dims = None if shape is None else tuple(cx.shape_arg(shape, "pl.reinterpret_view's shape"))
    value = valid_shapes.pad_for(cx, value, 0, call.node)
    return bitcast(cx, call.node, call.name, value, kind, dims)


reinterpret_view = operation(name="reinterpret_view", kinds=VECTOR_KINDS)(_reinterpret_view)
tile_reinterpret_view = operation(name="tile.reinterpret_view", kinds=VECTOR_KINDS)(
    _reinterpret_view
)
