"""The operations made from the op table (blockpipe.language.op_table): for
each record, `pl.X` and pypto's `pl.tile.X` / `pl.tensor.X` where pypto has
them, with the record's parameters and a docstring from its documentation.
One lowering per op class; op-specific Python lives in `vector` (operators,
tuple forms and other sugar)."""

from __future__ import annotations

import inspect
import re

from blockpipe.language import op_table, valid_shapes
from blockpipe.language.ops import operation
from blockpipe.language.ops.column_sums import rounded_col_sum
from blockpipe.language.ops.vector import (
    VECTOR_KINDS,
    binary,
    scalar_first,
    unary,
    vector_operand,
)
from blockpipe.language.types import TileType
from blockpipe.language.values import LoweringError, Value, describe

# What the padding outside a valid shape holds for each reduction identity,
# in valid_shapes.pad_for's terms.
PADDING = {"zero": 0, "one": 1, "lowest": "min", "highest": "max"}

_SCRATCH = ("tmp", "tmp_tile")

# pypto's choice of PTOAS's slower, more exact path (div, log, recip,
# rsqrt). blockpipe's functors compute in full precision either way (16-bit
# floats through FP32, rounded once), so both choices give the same results.
_PRECISION = "high_precision"


def _signature(params: str) -> inspect.Signature:
    namespace: dict = {}
    exec(f"def _op({params}): pass", {}, namespace)  # the table's own text
    return inspect.signature(namespace["_op"])


def _check_extras(cx, qualname: str, signature: inspect.Signature, operands, arguments):
    """pypto's optional parameters: a scratch tile is accepted and not
    needed, a precision choice is accepted; any other must keep its
    default."""
    for name, parameter in signature.parameters.items():
        if name in operands or name in _SCRATCH:
            continue
        value = arguments.get(name, parameter.default)
        if value is parameter.default:
            continue
        if name == _PRECISION:
            _high_precision(cx, qualname, arguments)
        elif cx.static(value) != parameter.default:
            raise cx.error(
                value,
                f"pl.{qualname}({name}={ast_text(value)}) is not supported by blockpipe "
                f"(only {name}={parameter.default!r})",
            )


def _high_precision(cx, qualname: str, arguments) -> bool:
    """The op's high_precision=: True or False, known at compile time."""
    node = arguments.get(_PRECISION, False)
    if node is False:
        return False
    try:
        value = cx.static(node)
    except LoweringError:
        value = None
    if not isinstance(value, bool):
        raise cx.error(
            node,
            f"pl.{qualname}'s high_precision must be True or False, known at compile time; "
            f"got {ast_text(node)}",
        )
    return value


def ast_text(node) -> str:
    import ast

    return ast.unparse(node) if isinstance(node, ast.AST) else repr(node)


def _lower_unary(cx, call, qualname, mnemonic, operands, arguments):
    (tile,) = operands
    return unary(
        cx, mnemonic, cx.tile_arg(arguments[tile], f"pl.{qualname}'s operand"), call.node, call.name
    )


def _lower_binary(cx, call, qualname, mnemonic, operands, arguments):
    lhs, rhs = (arguments[name] for name in operands)
    record = op_table.record(mnemonic)
    a = cx.tile_operand(cx.expr(lhs), lhs)
    b = cx.tile_operand(cx.expr(rhs), rhs)
    if _high_precision(cx, qualname, arguments):
        _check_high_precision_operands(cx, qualname, a, b, arguments[_PRECISION])
    if not (isinstance(a, Value) and isinstance(a.type, TileType)):
        rhs_is_tile = isinstance(b, Value) and isinstance(b.type, TileType)
        if rhs_is_tile and record["commutative"]:
            a, b = b, a
        elif rhs_is_tile and record["class"] == "binary":
            return scalar_first(cx, mnemonic, a, b, call.node, call.name)
        else:
            raise cx.error(lhs, f"pl.{qualname}'s first operand must be a tile, got {describe(a)}")
    if record["class"] == "scalar" and isinstance(b, Value) and isinstance(b.type, TileType):
        raise cx.error(
            rhs,
            f"pl.{qualname}'s {operands[1]} must be a scalar (a number or a pl.Scalar), got a tile",
        )
    return binary(cx, mnemonic, a, b, call.node, call.name)


def _check_high_precision_operands(cx, qualname, a, b, node) -> None:
    # pypto's high-precision division exists for two floating-point tiles
    # only, and it refuses the rest rather than fall back; so does blockpipe.
    tiles = all(isinstance(v, Value) and isinstance(v.type, TileType) for v in (a, b))
    if not tiles or (not a.type.unknown and not a.type.dtype.is_float):
        raise cx.error(
            node,
            f"pl.{qualname}(high_precision=True) needs two floating-point tiles (or "
            "tensors); pypto has no high-precision form for a scalar operand or integers",
        )


def _lower_reduction(cx, call, qualname, mnemonic, operands, arguments):
    (tile,) = operands
    record = op_table.record(mnemonic)
    rows = record["class"] in op_table.ROW_REDUCTION_CLASSES
    t = vector_operand(
        cx,
        cx.tile_arg(arguments[tile], f"pl.{qualname}'s operand"),
        call.node,
        f"pl.{qualname}'s operand",
    )
    if not t.type.unknown and (len(t.type.shape) < 2 if rows else len(t.type.shape) != 2):
        raise cx.error(
            call.node,
            f"pl.{qualname} reduces the rows (the last dimension) of a tile of 2 or more "
            f"dimensions, got {list(t.type.shape)}"
            if rows
            else f"pl.{qualname} reduces the columns of a 2-D tile, got {list(t.type.shape)}",
        )
    if not t.type.unknown:
        op_table.check_dtype(cx, mnemonic, t.type.dtype, call.node)
    # Of a tile with a valid shape, the valid region is reduced: the rest
    # holds the reduction's identity.
    valid = t.valid
    t = valid_shapes.pad_for(cx, t, PADDING[record["identity"]], call.node)
    result = None
    if mnemonic == "col_sum":
        scratch = any(arguments.get(name) is not None for name in _SCRATCH)
        result = rounded_col_sum(cx, t, scratch, call.node, call.name)
    if result is None:
        (result,) = cx.create(f"bp.{mnemonic}", [t], None, {}, call.node, call.name)
    if valid is not None:
        result = valid_shapes.with_valid(result, (valid[0], 1) if rows else (1, valid[1]))
    return result


_LOWER = {
    "unary": _lower_unary,
    "binary": _lower_binary,
    "scalar": _lower_binary,
    **{cls: _lower_reduction for cls in op_table.REDUCTION_CLASSES},
}

_OPERANDS = {"unary": 1, "binary": 2, "scalar": 2, **{c: 1 for c in op_table.REDUCTION_CLASSES}}

_DTYPES = {
    "any": "",
    "float": " of a floating-point dtype",
    "integer": " of an integer dtype",
}


def _class_text(record, operands) -> str:
    dtypes = _DTYPES[record["dtypes"]]
    cls = record["class"]
    if cls == "unary":
        return (
            f"{operands[0]}: a tile{dtypes}. Returns a Vec tile of its shape and dtype. "
            "Valid in InCore and AIV functions."
        )
    if cls == "binary":
        return (
            f"{operands[0]}, {operands[1]}: tiles{dtypes} of one dtype, or a tile and a "
            "scalar (a number, or a pl.Scalar of the tile's dtype). The second tile may "
            "also broadcast: an [M, 1] tile along the rows of an [M, N] tile, a [1, N] "
            "tile along its columns. Returns a Vec tile of the first tile's shape and "
            "dtype. Valid in InCore and AIV functions."
        )
    if cls == "scalar":
        return (
            f"{operands[0]}: a tile{dtypes}; {operands[1]}: a number, or a pl.Scalar of "
            "the tile's dtype. Returns a Vec tile of the tile's shape and dtype. Valid in "
            "InCore and AIV functions."
        )
    shape = "[M, 1]" if cls in op_table.ROW_REDUCTION_CLASSES else "[1, N]"
    result = (
        "an INT32 tile of indices"
        if cls in op_table.ARG_REDUCTION_CLASSES
        else "Combine the result with the tile by broadcasting"
    )
    if cls in op_table.ARG_REDUCTION_CLASSES:
        result = f"The result is {result}"
    return (
        f"{operands[0]}: a 2-D tile{dtypes}, [M, N] -> {shape}. {result}. pypto's scratch "
        "`tmp_tile` is accepted and not needed. Valid in InCore and AIV functions."
    )


def _doc(record, qualname, operands) -> str:
    summary = record["summary"]
    # The ODS description without its IR examples.
    description = re.sub(r"```mlir.*?```", "", record["description"], flags=re.S).strip()
    text = (
        f"{summary[0].upper()}{summary[1:]}: `pl.{qualname}({', '.join(operands)})`.\n\n"
        f"{_class_text(record, operands)}"
    )
    if description:
        text += f"\n\n{description}"
    if _PRECISION in _signature(record["params"]).parameters:
        text += (
            "\n\nhigh_precision: pypto's choice of a more exact path, True or False known "
            "at compile time; blockpipe computes in full precision either way, so the "
            "results are the same."
        )
    return text + f"\n\nNumPy: {record['numpy']}\n"


def _declare(record: dict, qualname: str) -> None:
    mnemonic = record["name"][len("bp.") :]
    signature = _signature(record["params"])
    names = list(signature.parameters)
    operands = names[: _OPERANDS[record["class"]]]
    lower_class = _LOWER[record["class"]]

    def lower(cx, call, **arguments):
        _check_extras(cx, qualname, signature, operands, arguments)
        return lower_class(cx, call, qualname, mnemonic, operands, arguments)

    lower.__name__ = qualname.rsplit(".", 1)[-1]
    lower.__doc__ = _doc(record, qualname, operands)
    operation(name=qualname, kinds=VECTOR_KINDS, signature=signature)(lower)


for _record in op_table.RECORDS.values():
    for _where in _record["spellings"].split():
        _declare(
            _record, _record["pl_name"] if _where == "pl" else f"{_where}.{_record['pl_name']}"
        )
