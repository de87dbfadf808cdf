"""pypto's pl.write: one element of a tensor or a tile set to a scalar.
Composed from a tile of one element holding the scalar (pl.expands') and
pl.store into a tensor or pl.assemble's bp.insert into a tile; the
statement `pl.write(t, [i, j], v)` updates `t` (rewrites.py)."""

from __future__ import annotations

import ast

from blockpipe.language import valid_shapes
from blockpipe.language.ops import operation
from blockpipe.language.ops.memory import offsets_arg, store_tile
from blockpipe.language.ops.vector import VECTOR_KINDS, spread_to, vector_operand
from blockpipe.language.types import ScalarType, TensorType, TileType
from blockpipe.language.values import Value, describe


def _write(cx, call, dst, offset, value):
    """Sets one element of a tensor or a tile to a scalar and returns the
    destination: `t = pl.write(t, [i, j], v)`, or the statement
    `pl.write(t, [i, j], v)`, which updates `t` (pypto's). `offset` is one
    index per dimension (numbers or index values; of a 1-D destination also
    the index itself); `value` a number or a pl.Scalar of the destination's
    dtype. Valid in InCore and AIV functions."""
    node = call.node
    target = cx.expr(dst)
    if not (isinstance(target, Value) and isinstance(target.type, (TensorType, TileType))):
        raise cx.error(
            dst, f"pl.write's destination must be a tensor or a tile, got {describe(target)}"
        )
    if len(target.type.shape) == 1 and not isinstance(offset, (ast.List, ast.Tuple)):
        offset = ast.copy_location(ast.List(elts=[offset], ctx=ast.Load()), offset)
    at = offsets_arg(cx, offset, target.type, "pl.write")
    element = _element(cx, value, target, node)
    if isinstance(target.type, TensorType):
        return store_tile(
            cx, call, element, target, at, value, dst, "pl.write", ("value", "destination")
        )
    whole = vector_operand(cx, target, node, "pl.write's tile")
    (result,) = cx.create(
        "bp.insert",
        [element, valid_shapes.with_valid(whole, None)] + at,
        [whole.type],
        {},
        node,
        call.name,
    )
    # The tile's valid region stays what it was.
    return valid_shapes.with_valid(result, whole.valid)


def _element(cx, node, target: Value, at) -> Value:
    """The scalar `node` as a tile of one element of the destination's rank
    and dtype."""
    dtype = target.type.dtype
    scalar = cx.expr(node)
    if isinstance(scalar, Value) and isinstance(scalar.type, ScalarType):
        if scalar.type.dtype != dtype:
            raise cx.error(
                node,
                f"pl.write's value is {scalar.type.dtype.name} but the destination is "
                f"{dtype.name}; convert it with pl.cast",
            )
    elif isinstance(scalar, bool) or not isinstance(scalar, (int, float)):
        raise cx.error(
            node, f"pl.write's value must be a number or a scalar, got {describe(scalar)}"
        )
    return spread_to(cx, scalar, (1,) * len(target.type.shape), dtype, at, None)


write = operation(name="write", kinds=VECTOR_KINDS)(_write)


@operation(name="tensor.write", kinds=VECTOR_KINDS)
def tensor_write(cx, call, tensor, indices, value):
    """pypto's `pl.tensor.write(t, [i, j], v)`: pl.write of a tensor,
    one element of it set to the scalar `v`. Valid in InCore and AIV
    functions."""
    return _write(cx, call, tensor, indices, value)


@operation(name="tile.write", kinds=VECTOR_KINDS)
def tile_write(cx, call, tile, indices, value):
    """pypto's `pl.tile.write(t, [i, j], v)`: pl.write of a tile, one
    element of it set to the scalar `v` (its valid shape unchanged). Valid
    in InCore and AIV functions."""
    return _write(cx, call, tile, indices, value)
