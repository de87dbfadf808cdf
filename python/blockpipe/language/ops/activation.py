"""Activations that pypto has as single instructions and blockpipe composes
from the vector ops: pl.tile.prelu. Valid in InCore and AIV functions."""

from __future__ import annotations

from blockpipe.language.ops import operation
from blockpipe.language.ops.vector import VECTOR_KINDS, binary, select, vector_operand


def _prelu(cx, call, tile, slope, tmp=None):
    """Parametric ReLU: `tile` where it is > 0, else `slope * tile`,
    element by element: `pl.tile.prelu(x, alpha, tmp)` (pypto's).

    slope: a tile of `tile`'s shape and dtype (one slope per element).
    pypto's scratch `tmp` is accepted and not needed. A composition of
    pl.cmp, pl.mul and pl.where; a valid shape of `tile` is kept. Valid in
    InCore and AIV functions.
    """
    node = call.node
    x = vector_operand(cx, cx.tile_arg(tile, "pl.prelu's tile"), node, "pl.prelu's tile")
    s = vector_operand(cx, cx.tile_arg(slope, "pl.prelu's slope"), node, "pl.prelu's slope")
    x = cx.typed_tile(x, node, "pl.prelu")
    s = cx.typed_tile(s, node, "pl.prelu")
    if (tuple(s.type.shape), s.type.dtype) != (tuple(x.type.shape), x.type.dtype):
        raise cx.error(
            slope, f"pl.prelu's slope must be a tile of {x.type}'s shape and dtype, got {s.type}"
        )
    positive = binary(cx, "cmp", x, 0, node, None, {"predicate": cx.builder.cmp_predicate("gt")})
    scaled = binary(cx, "mul", x, s, node, None)
    return select(cx, positive, x, scaled, node, call.name)


prelu = operation(name="prelu", kinds=VECTOR_KINDS)(_prelu)
tile_prelu = operation(name="tile.prelu", kinds=VECTOR_KINDS)(_prelu)
