"""pypto's partial combines, pl.tile.part_add / part_mul / part_max /
part_min: a binary op where both sources hold data, a copy of the first
where only it does. Composed from the op and pl.fillpad. Valid in InCore
and AIV functions."""

from __future__ import annotations

from blockpipe.language import valid_shapes
from blockpipe.language.ops import operation
from blockpipe.language.ops.vector import VECTOR_KINDS, binary, vector_operand

# Each partial op, the elementwise op it applies, and that op's identity,
# with which the second source is padded outside its valid shape: there
# the op gives the first source back exactly (x + -0.0 is x, -0.0 too).
PARTS = {
    "part_add": ("add", -0.0, "sum"),
    "part_mul": ("mul", 1, "product"),
    "part_max": ("maximum", "min", "maximum"),
    "part_min": ("minimum", "max", "minimum"),
}


def _part(name: str, qualname: str):
    op, identity, what = PARTS[name]

    def lower(cx, call, src0, src1):
        node = call.node
        a = vector_operand(cx, cx.tile_arg(src0, f"pl.{qualname}'s src0"), node, "src0")
        b = vector_operand(cx, cx.tile_arg(src1, f"pl.{qualname}'s src1"), node, "src1")
        a = cx.typed_tile(a, node, f"pl.{qualname}")
        b = cx.typed_tile(b, node, f"pl.{qualname}")
        if (tuple(b.type.shape), b.type.dtype) != (tuple(a.type.shape), a.type.dtype):
            raise cx.error(
                src1,
                f"pl.{qualname}'s sources must be tiles of one shape and dtype, got "
                f"{a.type} and {b.type}",
            )
        pad = identity if op != "add" or a.type.dtype.is_float else 0
        b = valid_shapes.pad_for(cx, b, pad, node)
        # The result holds data where src0 does (pypto's type follows src0).
        return binary(cx, op, a, b, node, call.name)

    lower.__name__ = name
    lower.__doc__ = f"""The elementwise {what} of `src0` and `src1` where both
    hold data, and `src0` where only it does: `pl.tile.{name}(a, b)`
    (pypto's). The result has `src0`'s valid shape. Sources: tiles of one
    shape and dtype (tensors in a scope, loaded whole). A composition:
    `src1` outside its valid shape is set to the op's identity
    (pl.fillpad), then pl.{op} applies. Valid in InCore and AIV
    functions."""
    return operation(name=qualname, kinds=VECTOR_KINDS)(lower)


for _name in PARTS:
    for _prefix in ("", "tile.", "tensor."):
        globals()[(_prefix + _name).replace(".", "_")] = _part(_name, _prefix + _name)
