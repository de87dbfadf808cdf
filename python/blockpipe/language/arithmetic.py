"""Arithmetic: binary operators on tiles, scalars and index values (folded
when both sides are known at compile time), and conversions between scalar
types."""

from __future__ import annotations

import ast

import numpy as np

from blockpipe.language import ops
from blockpipe.language.types import FP32, INDEX, DType, ScalarType, TileType, is_unsigned
from blockpipe.language.values import (
    Value,
    dtype_named,
    op_symbol,
)


def too_large():
    raise OverflowError


class Arithmetic:
    """The part of a function's lowering that evaluates arithmetic."""

    _TILE_BINOPS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div"}
    _INDEX_BINOPS = {
        ast.Add: "arith.addi",
        ast.Sub: "arith.subi",
        ast.Mult: "arith.muli",
        ast.FloorDiv: "arith.floordivsi",
        ast.Mod: "arith.remsi",  # then given the divisor's sign, as in Python
        ast.LShift: "arith.shli",
        ast.RShift: "arith.shrsi",
        ast.BitAnd: "arith.andi",
        ast.BitOr: "arith.ori",
        ast.BitXor: "arith.xori",
    }

    _FLOAT_BINOPS = {
        ast.Add: "arith.addf",
        ast.Sub: "arith.subf",
        ast.Mult: "arith.mulf",
        ast.Div: "arith.divf",
    }

    def binop(self, node: ast.BinOp, name):
        # In a kernel outlined from a scope a tensor is a tile here too
        # (`a - pl.row_max(a)`).
        lhs = self.tile_operand(self.expr(node.left), node.left)
        rhs = self.tile_operand(self.expr(node.right), node.right)
        is_tile = lambda v: isinstance(v, Value) and isinstance(v.type, TileType)  # noqa: E731 - a one-line local predicate
        if is_tile(lhs) or is_tile(rhs):
            op = self._TILE_BINOPS.get(type(node.op))
            if op is None:
                raise self.error(node, f"operator '{op_symbol(node.op)}' is not defined on tiles")
            if not is_tile(lhs):
                if op in ("add", "mul"):
                    lhs, rhs = rhs, lhs
                else:
                    return ops.vector.scalar_first(self, op, lhs, rhs, node, name)
            return ops.vector.binary(self, op, lhs, rhs, node, name)
        return self.arith_binop(node.op, lhs, rhs, node, name)

    def arith_binop(self, op, lhs, rhs, node, name):
        if isinstance(lhs, (int, float)) and isinstance(rhs, (int, float)):
            try:
                return {
                    ast.Add: lambda a, b: a + b,
                    ast.Sub: lambda a, b: a - b,
                    ast.Mult: lambda a, b: a * b,
                    ast.FloorDiv: lambda a, b: a // b,
                    ast.Mod: lambda a, b: a % b,
                    ast.Div: lambda a, b: a / b,
                    ast.Pow: lambda a, b: a**b if abs(b) <= 256 else too_large(),
                    ast.LShift: lambda a, b: a << b if b <= 256 else too_large(),
                    ast.RShift: lambda a, b: a >> b,
                    ast.BitAnd: lambda a, b: a & b,
                    ast.BitOr: lambda a, b: a | b,
                    ast.BitXor: lambda a, b: a ^ b,
                }[type(op)](lhs, rhs)
            except KeyError:
                raise self.error(node, f"operator '{op_symbol(op)}' is not supported") from None
            except (TypeError, ValueError) as exc:  # a float shifted, a negative shift count
                raise self.error(node, f"'{op_symbol(op)}' on {lhs!r} and {rhs!r}: {exc}") from None
            except ZeroDivisionError:
                raise self.error(node, "division by zero") from None
            except OverflowError:
                raise self.error(
                    node, "the result of this constant expression is too large"
                ) from None
        # Scalars combine with scalars of their own type (and with numbers,
        # which take that type); an INT32 or INT64 scalar meeting an index
        # value joins index arithmetic.
        types = []
        for v in (lhs, rhs):
            if isinstance(v, Value):
                if not isinstance(v.type, ScalarType):
                    raise self.error(
                        node, f"scalar arithmetic takes scalars and index values, got {v.type}"
                    )
                types.append(v.type)
        if len(set(types)) == 1:
            stype = types[0]
        elif all(not t.dtype.is_float for t in types) and ScalarType(INDEX) in types:
            stype = ScalarType(INDEX)
        elif all(not t.dtype.is_float for t in types):
            # INT32 with INT64: in INT64, as C would.
            stype = ScalarType(dtype_named("INT64"))
            lhs, rhs = (self.widen(v, stype, node) for v in (lhs, rhs))
        else:
            raise self.error(
                node, f"cannot combine {types[0]} and {types[1]} with '{op_symbol(op)}'"
            )
        if stype.dtype.is_float:
            opname = self._FLOAT_BINOPS.get(type(op))
            if opname is None:
                raise self.error(
                    node,
                    f"operator '{op_symbol(op)}' is not supported on {stype.dtype.name} scalars",
                )
            a, b = self.as_value(lhs, node, like=stype), self.as_value(rhs, node, like=stype)
            (result,) = self.create(opname, [a, b], None, {}, node, name)
            return result
        for v in (lhs, rhs):
            if isinstance(v, float):
                raise self.error(node, "index arithmetic takes integers, got a float")
        opname = self._INDEX_BINOPS.get(type(op))
        if opname is None:
            raise self.error(node, f"operator '{op_symbol(op)}' is not supported on index values")
        if stype == ScalarType(INDEX):
            a, b = self.index_value(lhs, node), self.index_value(rhs, node)
        else:
            a, b = self.as_value(lhs, node, like=stype), self.as_value(rhs, node, like=stype)
        if isinstance(op, ast.Mod):
            # As Python (and as `//`, floordivsi): the remainder takes the
            # divisor's sign, -7 % 3 == 2, where remsi gives -1; a nonzero
            # remainder of the other sign gets the divisor added.
            (rem,) = self.create("arith.remsi", [a, b], None, {}, node)
            zero = self.constant(0, stype.dtype, node)
            predicate = lambda op: self.builder.cmpi(self._CMPI_PREDICATES[op])  # noqa: E731 - a one-line local helper
            if isinstance(rhs, int):
                # A divisor of known sign: only a remainder of the other sign moves.
                (adjust,) = self.create(
                    "arith.cmpi",
                    [rem, zero],
                    None,
                    {"predicate": predicate(ast.Lt if rhs > 0 else ast.Gt)},
                    node,
                )
            else:
                (nonzero,) = self.create(
                    "arith.cmpi", [rem, zero], None, {"predicate": predicate(ast.NotEq)}, node
                )
                (rem_neg,) = self.create(
                    "arith.cmpi", [rem, zero], None, {"predicate": predicate(ast.Lt)}, node
                )
                (div_neg,) = self.create(
                    "arith.cmpi", [b, zero], None, {"predicate": predicate(ast.Lt)}, node
                )
                (signs_differ,) = self.create("arith.xori", [rem_neg, div_neg], None, {}, node)
                (adjust,) = self.create("arith.andi", [nonzero, signs_differ], None, {}, node)
            (adjusted,) = self.create("arith.addi", [rem, b], None, {}, node)
            (result,) = self.create("arith.select", [adjust, adjusted, rem], None, {}, node, name)
            return result
        (result,) = self.create(opname, [a, b], None, {}, node, name)
        return result

    def convert_scalar(self, value: Value, target: ScalarType, node) -> Value:
        """`value` as a scalar of `target`'s type: integers are
        sign-extended (zero-extended when unsigned) or truncated, floats
        convert to integers toward zero."""
        src = value.type.dtype
        dst = target.dtype
        if src == dst:
            return value
        i64 = ScalarType(dtype_named("INT64"))
        f32 = ScalarType(FP32)
        if not src.is_float and not dst.is_float:
            if INDEX in (src, dst):
                other = dst if src is INDEX else src
                if other.name != "INT64":  # index casts go through INT64
                    if src is INDEX:
                        return self.convert_scalar(
                            self.convert_scalar(value, i64, node), target, node
                        )
                    value = self.convert_scalar(value, i64, node)
                (result,) = self.create("arith.index_cast", [value], [target], {}, node)
                return result
            src_bits, dst_bits = _bits(src), _bits(dst)
            if src_bits == dst_bits:  # UINT8 <-> INT8: the same bits
                return Value(value.handle, target)
            if dst_bits < src_bits:
                op = "arith.trunci"
            else:
                op = "arith.extui" if is_unsigned(src) else "arith.extsi"
            (result,) = self.create(op, [value], [target], {}, node)
            return result
        if not src.is_float:  # integer -> float
            if src is INDEX:
                value = self.convert_scalar(value, i64, node)
            op = "arith.uitofp" if is_unsigned(src) else "arith.sitofp"
            (result,) = self.create(op, [value], [target], {}, node)
            return result
        if not dst.is_float:  # float -> integer
            step = i64 if dst is INDEX else target
            op = "arith.fptoui" if is_unsigned(dst) else "arith.fptosi"
            (result,) = self.create(op, [value], [step], {}, node)
            return self.convert_scalar(result, target, node)
        # float -> float, through f32 between the two 16-bit types.
        if src is not FP32 and dst is not FP32:
            value = self.convert_scalar(value, f32, node)
            return self.convert_scalar(value, target, node)
        op = "arith.extf" if dst is FP32 else "arith.truncf"
        (result,) = self.create(op, [value], [target], {}, node)
        return result


def _bits(dtype: DType) -> int:
    """The width of an integer dtype's elements in bits."""
    return 8 * np.dtype(dtype.numpy).itemsize
