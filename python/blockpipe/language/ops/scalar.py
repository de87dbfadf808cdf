"""Scalars: pypto's `pl.min` / `pl.max` of two scalar values (tiles reduce
with pl.row_min / pl.minimum and the like)."""

from __future__ import annotations

from blockpipe.language.ops import operation
from blockpipe.language.types import FP32, ScalarType
from blockpipe.language.values import Value, describe


def _is_scalar(value) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, (int, float)) or (
        isinstance(value, Value) and isinstance(value.type, ScalarType)
    )


def _extremum(cx, call, lhs, rhs, which: str):
    nodes = (lhs, rhs)
    values = [cx.expr(n) for n in nodes]
    for value, node in zip(values, nodes):
        if not _is_scalar(value):
            raise cx.error(
                node,
                f"pl.{which} takes two scalars (numbers, index values or pl.Scalar values), got "
                f"{describe(value)}; tiles take pl.{which}imum or pl.row_{which}",
            )
    if not any(isinstance(v, Value) for v in values):
        return min(values) if which == "min" else max(values)
    typed = [v.type.dtype for v in values if isinstance(v, Value)]
    if any(isinstance(v, float) for v in values) or any(d.is_float for d in typed):
        dtype = next((d for d in typed if d.is_float), FP32)
        operands = [
            cx.constant(float(v), dtype, n)
            if not isinstance(v, Value)
            else cx.convert_scalar(v, ScalarType(dtype), n)
            for v, n in zip(values, nodes)
        ]
        op = "arith.minimumf" if which == "min" else "arith.maximumf"
    else:
        dtype = typed[0] if len(set(typed)) == 1 else None
        if dtype is not None and len(typed) == 2:
            operands = values
        elif dtype is not None and dtype.name in ("INT32", "INT64"):
            operands = [
                v if isinstance(v, Value) else cx.constant(v, dtype, n)
                for v, n in zip(values, nodes)
            ]
        else:
            operands = [cx.index_value(v, n) for v, n in zip(values, nodes)]
        op = "arith.minsi" if which == "min" else "arith.maxsi"
    (result,) = cx.create(op, operands, None, {}, call.node, call.name)
    return result


@operation(name="min")
def min_(cx, call, lhs, rhs):
    """The smaller of two scalars: `pl.min(a, b)`, numbers, index values
    or pl.Scalar values (an integer and an index value compare as index
    values; a float and anything else as the float's dtype). Of two
    numbers, a number known at compile time. Tiles take pl.minimum (element
    by element) or pl.row_min."""
    return _extremum(cx, call, lhs, rhs, "min")


@operation(name="max")
def max_(cx, call, lhs, rhs):
    """The larger of two scalars: `pl.max(a, b)`, as pl.min. Tiles take
    pl.maximum or pl.row_max."""
    return _extremum(cx, call, lhs, rhs, "max")
