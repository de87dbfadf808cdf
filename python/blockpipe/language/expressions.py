"""Expressions: names, numbers, subscripts, if conditions and comparisons,
and constants; the binary operators and the conversions between scalar types
are arithmetic.py's."""

from __future__ import annotations

import ast
from typing import Optional, Union

import numpy as np

from blockpipe.language import ops, strips
from blockpipe.language.consteval import python_number
from blockpipe.language.types import (
    INDEX,
    DType,
    FunctionType,
    ScalarType,
    TensorType,
    TileType,
    dynamic,
    is_unsigned,
    signless,
)
from blockpipe.language.values import (
    BOOL,
    IRType,
    Literal,
    LoopValueNeeded,
    LoweringError,
    PackedMask,
    Value,
    cmp_symbol,
    describe,
    dtype_named,
)


class Expressions:
    """The part of a function's lowering that evaluates expressions."""

    _CMPI_PREDICATES = {
        ast.Eq: "eq",
        ast.NotEq: "ne",
        ast.Lt: "slt",
        ast.LtE: "sle",
        ast.Gt: "sgt",
        ast.GtE: "sge",
    }
    # Ordered predicates (false on NaN), except != which is true on NaN, as in Python.
    _CMPF_PREDICATES = {
        ast.Eq: "oeq",
        ast.Gt: "ogt",
        ast.GtE: "oge",
        ast.Lt: "olt",
        ast.LtE: "ole",
        ast.NotEq: "une",
    }
    _PY_COMPARE = {
        ast.Eq: lambda a, b: a == b,
        ast.NotEq: lambda a, b: a != b,
        ast.Lt: lambda a, b: a < b,
        ast.LtE: lambda a, b: a <= b,
        ast.Gt: lambda a, b: a > b,
        ast.GtE: lambda a, b: a >= b,
    }

    def condition(self, node: ast.expr) -> Union[bool, Value]:
        """An if's condition: a bool when known at compile time, else an i1 value."""
        if isinstance(node, ast.BoolOp):
            is_and = isinstance(node.op, ast.And)
            parts = [self.condition(v) for v in node.values]
            if any(isinstance(p, bool) and p != is_and for p in parts):
                return not is_and  # a known False decides 'and', a known True 'or'
            values = [p for p in parts if isinstance(p, Value)]
            if not values:
                return is_and
            result = values[0]
            for value in values[1:]:
                (result,) = self.create(
                    "arith.andi" if is_and else "arith.ori", [result, value], None, {}, node
                )
            return result
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            operand = self.condition(node.operand)
            if isinstance(operand, bool):
                return not operand
            true = self.constant(1, BOOL.dtype, node)
            (result,) = self.create("arith.xori", [operand, true], None, {}, node)
            return result
        if isinstance(node, ast.Compare):
            for op in node.ops:
                if type(op) not in self._CMPI_PREDICATES:
                    raise self.error(
                        node,
                        f"'{cmp_symbol(op)}' is not supported in a condition; "
                        "compare with ==, !=, <, <=, > or >=",
                    )
            nodes = [node.left] + list(node.comparators)
            operands = [self.condition_operand(n) for n in nodes]
            parts = [
                self.compare(op, operands[i], operands[i + 1], nodes[i], nodes[i + 1], node)
                for i, op in enumerate(node.ops)
            ]
            if any(p is False for p in parts):
                return False
            values = [p for p in parts if isinstance(p, Value)]
            if not values:
                return True
            result = values[0]
            for value in values[1:]:
                (result,) = self.create("arith.andi", [result, value], None, {}, node)
            return result
        value = self.condition_operand(node)
        if not isinstance(value, Value):
            return bool(value)
        if isinstance(value.type, ScalarType):
            return self.compare(
                ast.NotEq(), value, 0, node, node, node
            )  # Python's truth of a number
        raise self.error(
            node,
            "an if condition must be a comparison of scalars or index values such as "
            f"'k == 0', got {describe(value)}",
        )

    def condition_operand(self, node: ast.expr):
        if isinstance(node, ast.Constant) and isinstance(node.value, bool):
            return node.value
        if isinstance(node, ast.Attribute) or (
            isinstance(node, ast.Name)
            and node.id not in self.env
            and node.id not in self.out_of_scope
        ):
            try:
                value = self.static(node)
            except LoweringError:
                value = None
            if isinstance(value, (bool, int, float)):
                return value
        return self.expr(node)

    def compare(self, op: ast.cmpop, lhs, rhs, lhs_node, rhs_node, node) -> Union[bool, Value]:
        for value, value_node in ((lhs, lhs_node), (rhs, rhs_node)):
            scalar = isinstance(value, Value) and isinstance(value.type, ScalarType)
            if not (scalar or isinstance(value, (int, float))):
                raise self.error(
                    value_node,
                    f"an if condition compares scalars or index values, got {describe(value)}",
                )
        if not isinstance(lhs, Value) and not isinstance(rhs, Value):
            return self._PY_COMPARE[type(op)](lhs, rhs)
        if isinstance(lhs, Value) and isinstance(rhs, Value) and lhs.type != rhs.type:
            if lhs.type.dtype.is_float or rhs.type.dtype.is_float:
                raise self.error(node, f"cannot compare {lhs.type} with {rhs.type}")
            # Integers of different types: as index values when one is, else
            # in INT64 (as in arithmetic).
            if ScalarType(INDEX) in (lhs.type, rhs.type):
                lhs, rhs = self.index_value(lhs, lhs_node), self.index_value(rhs, rhs_node)
            else:
                wide = ScalarType(dtype_named("INT64"))
                lhs, rhs = self.widen(lhs, wide, lhs_node), self.widen(rhs, wide, rhs_node)
        like = lhs.type if isinstance(lhs, Value) else rhs.type
        lhs, rhs = self.as_value(lhs, lhs_node, like=like), self.as_value(rhs, rhs_node, like=like)
        if like.dtype.is_float:
            opname, predicate = "arith.cmpf", self.builder.cmpf(self._CMPF_PREDICATES[type(op)])
        else:
            opname, predicate = "arith.cmpi", self.builder.cmpi(self._CMPI_PREDICATES[type(op)])
        (result,) = self.create(opname, [lhs, rhs], None, {"predicate": predicate}, node)
        return result

    # ------------------------------------------------------------- expressions

    def expr(
        self,
        node: ast.expr,
        name: Optional[str] = None,
        statement: bool = False,
        multi: bool = False,
        expected: Optional[IRType] = None,
    ):
        if isinstance(node, ast.Constant):
            if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
                raise self.error(node, f"unsupported constant {node.value!r}")
            return node.value
        if isinstance(node, ast.Name):
            return self.lookup(node)
        if isinstance(node, ast.BinOp):
            return self.binop(node, name)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            operand = self.expr(node.operand)
            if isinstance(operand, (int, float)):
                return -operand
            if isinstance(operand, Value) and isinstance(operand.type, TileType):
                return ops.vector.unary(self, "neg", operand, node, name)
            if (
                isinstance(operand, Value)
                and isinstance(operand.type, ScalarType)
                and operand.type.dtype.is_float
            ):
                (result,) = self.create("arith.negf", [operand], None, {}, node, name)
                return result
            return self.arith_binop(ast.Sub(), 0, operand, node, name)
        if isinstance(node, ast.Call):
            return self.call(node, name, statement, multi, expected)
        if isinstance(node, ast.Subscript):
            return self.subscript(node, name)
        if (
            isinstance(node, ast.Attribute)
            and node.attr == "shape"
            and self.holds_shaped(node.value)
        ):
            return self.shape_of(node.value)
        if isinstance(node, ast.Attribute):
            value = self.static(node)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return value
            raise self.error(node, f"'{ast.unparse(node)}' is not a value")
        if isinstance(node, ast.IfExp):
            # `a if FLAG else b` on a condition known at compile time.
            try:
                test = self.static(node.test)
            except LoweringError:
                test = None
            if not isinstance(test, bool):
                raise self.error(
                    node.test,
                    "a conditional expression needs a condition known at compile "
                    "time (True or False); use an if statement",
                )
            return self.expr(node.body if test else node.orelse, name, statement, multi, expected)
        raise self.error(node, f"unsupported expression '{ast.unparse(node)}'")

    # -------------------------------------------------------- subscripts

    def holds_shaped(self, node: ast.expr) -> bool:
        """Whether `node` names a tensor or a tile of the function."""
        return (
            isinstance(node, ast.Name)
            and isinstance(self.env.get(node.id), Value)
            and isinstance(self.env[node.id].type, (TensorType, TileType))
        )

    def shape_of(self, node: ast.expr) -> tuple:
        """`x.shape`: each dim a number, or (a dynamic tensor dim) an index
        value read at run time."""
        value = self.expr(node)
        dims = []
        for axis, extent in enumerate(value.type.shape):
            if extent is dynamic:
                (extent,) = self.create(
                    "bp.dim", [value], None, {"index": self.builder.i64(axis)}, node
                )
            dims.append(extent)
        return tuple(dims)

    def subscript(self, node: ast.Subscript, name=None):
        """`x[i:i + 16, :]` of a tensor (a window loaded as a tile) or of a
        tile (a window of it); `x.shape[k]` and an item of a tuple or of a
        list the program's Python defines (`shape[0]`)."""
        named = node.value.id if isinstance(node.value, ast.Name) else None
        if (
            named is not None
            and named not in self.env
            and named not in self.out_of_scope
            and isinstance(self.source.globals.get(named), (list, tuple))
        ):
            base = self.source.globals[named]
        else:
            base = self.expr(node.value)
        if isinstance(base, (tuple, list)):
            index = self.static(node.slice)
            if (
                isinstance(index, bool)
                or not isinstance(index, int)
                or not -len(base) <= index < len(base)
            ):
                raise self.error(
                    node.slice, f"index {index!r} is out of range for {len(base)} values"
                )
            return base[index]
        if not (isinstance(base, Value) and isinstance(base.type, (TensorType, TileType))):
            raise self.error(node, f"cannot index {describe(base)}")
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if (
            self.kind is FunctionType.Orchestration
            and isinstance(base.type, TensorType)
            and len(items) == len(base.type.shape)
            and not any(isinstance(item, ast.Slice) for item in items)
        ):
            # `gate[0, 0]` in an orchestration: the element, read once the
            # tasks before it are done (pl.read).
            at = [self.index_value(self.expr(item), item) for item in items]
            (element,) = self.create(
                "bp.read", [base] + at, [ScalarType(base.type.dtype)], {}, node, name
            )
            return element
        if isinstance(base.type, TensorType) and strips.is_whole(node):
            strip = strips.window(self, base, node)
            if strip is not None:
                return strip
        offsets, dims = self.window(node, base)
        if isinstance(base.type, TensorType):
            return ops.memory.window_load(self, base, offsets, dims, node, name)
        return ops.memory.tile_window_at(self, node, base, offsets, dims, name)

    def window(self, node: ast.Subscript, base: Value):
        """The offsets (index values) and sizes of the window `node` takes of
        `base`: one slice or index per dimension (missing trailing ones are
        whole); a slice's size must be known at compile time."""
        shape = base.type.shape
        items = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
        if len(items) > len(shape):
            what = "tensor" if isinstance(base.type, TensorType) else "tile"
            raise self.error(node, f"{len(items)} indices for a {len(shape)}-D {what}")
        items += [ast.Slice(None, None, None)] * (len(shape) - len(items))
        offsets, dims = [], []
        for axis, (item, extent) in enumerate(zip(items, shape)):
            if not isinstance(item, ast.Slice):
                offsets.append(self.index_value(self.expr(item), item))
                dims.append(1)
                continue
            if item.step is not None:
                raise self.error(item, "a window's slice takes no step")
            lower = 0 if item.lower is None else self.expr(item.lower)
            if item.upper is None:
                if extent is dynamic:
                    raise self.error(
                        item,
                        f"dimension {axis} is dynamic: give the slice's end, e.g. [i : i + 16]",
                    )
                size = extent - lower if isinstance(lower, int) else None
            else:
                size = self.slice_size(item, lower)
            if not isinstance(size, int) or size <= 0:
                raise self.error(
                    item,
                    "a window's size must be a positive number known at compile time: "
                    "write [a : b] with numbers, or [i : i + 16]",
                )
            offsets.append(self.index_value(lower, item.lower or item))
            dims.append(size)
        return offsets, dims

    def slice_size(self, item: ast.Slice, lower):
        """upper - lower of `item`, at compile time: numbers, or `i : i + k`."""
        upper = item.upper
        if item.lower is not None:
            (lo_base, lo), (up_base, up) = self.affine_parts(item.lower), self.affine_parts(upper)
            if (
                lo_base is not None
                and lo_base == up_base
                and isinstance(lo, int)
                and isinstance(up, int)
            ):
                return up - lo
        upper_value = self.expr(upper)
        if isinstance(upper_value, int) and isinstance(lower, int):
            return upper_value - lower
        return None

    def affine_parts(self, node: ast.expr):
        """`e + k`, `e - k`, `k + e` or `e` as (e's source, k), k a number
        known at compile time; else (None, None)."""

        def number(n):
            try:
                value = self.static(n)
            except LoweringError:
                return None
            return value if isinstance(value, int) and not isinstance(value, bool) else None

        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
            k = number(node.right)
            if k is not None:
                return ast.dump(node.left), k if isinstance(node.op, ast.Add) else -k
            k = number(node.left)
            if k is not None and isinstance(node.op, ast.Add):
                return ast.dump(node.right), k
        return ast.dump(node), 0

    def lookup(self, node: ast.Name):
        if node.id in self.env:
            value = self.env[node.id]
            if isinstance(value, Value) and value.handle in self.freed:
                raise self.error(
                    node,
                    f"'{node.id}' is used after the pl.tfree at line "
                    f"{self.freed[value.handle]} released its pipe slot; use a popped "
                    "tile only before it is freed",
                )
            if isinstance(value, PackedMask):
                raise self.error(node, value.misuse(node.id))
            return value
        if node.id in self.out_of_scope:
            found = self.loop_values.get(node.id)
            if found is not None and found[2] is self.out_of_scope[node.id]:
                key, t, _ = found
                if node.id not in self.program.loop_hints.get(key, {}):
                    # Set in a loop, read after it: lowered again, the loop
                    # carries it.
                    raise LoopValueNeeded(key, node.id, t)
            raise self.error(node, self.out_of_scope[node.id])
        if node.id in self.source.globals:
            value = python_number(self.source.globals[node.id])
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return value
            raise self.error(
                node, f"'{node.id}' is a {type(value).__name__}, not a value a kernel can use"
            )
        raise self.error(node, f"unknown name '{node.id}'{self.suggestion(node)}")

    def as_value(self, value, node: ast.AST, like: Optional[IRType] = None) -> Value:
        if isinstance(value, Value):
            return value
        if isinstance(value, (int, float)):
            if like is None:
                if isinstance(value, float):
                    raise self.error(
                        node, "a float constant needs a tile or scalar to give it a type"
                    )
                return self.constant(value, INDEX, node)
            dtype = like.dtype if isinstance(like, (TileType, ScalarType)) else INDEX
            return self.constant(value, dtype, node)
        if isinstance(value, PackedMask):
            raise self.error(node, value.misuse(ast.unparse(node)))
        raise self.error(node, f"expected a value, got {value!r}")

    def constant(self, value: Literal, dtype: DType, node: ast.AST) -> Value:
        if not dtype.is_float and isinstance(value, float):
            if not value.is_integer():
                raise self.error(node, f"{value} is not an integer but the value is {dtype.name}")
            value = int(value)
        key = (dtype.name, repr(value))  # repr: -0.0 is not 0.0 here
        # Constants are shared at function level only: one made inside a loop
        # body would not dominate later uses outside it.
        cached = self.constants.get(key)
        if cached is not None:
            return cached
        if dtype.is_float:
            attr = self.float_attr(value, dtype, node)
        elif is_unsigned(dtype):
            # In its range as unsigned, and held by the signless integer of
            # its width (200 as UINT8 is the i8 of the same bits).
            self.int_attr(value, dtype, node)
            bits = 8 * np.dtype(dtype.numpy).itemsize
            value = int(value)
            attr = self.int_attr(
                value - (1 << bits) if value >> (bits - 1) else value, signless(dtype), node
            )
        else:
            attr = self.int_attr(value, dtype, node)
        stype = ScalarType(dtype)
        (handle,) = self.builder.create(
            "arith.constant", [], [self.program.ir_type(stype)], {"value": attr}, self.loc(node)
        )
        result = Value(handle, stype)
        if self.region_depth == 0:
            self.constants[key] = result
        return result

    def float_attr(self, value: Literal, dtype: DType, node):
        attr = self.builder.float_value(float(value), dtype.name)
        if attr is None:
            raise self.error(node, f"{value!r} is out of range for {dtype.name}")
        return attr

    def int_attr(self, value: Literal, dtype: DType, node):
        attr = self.builder.int_value(int(value), dtype.name)
        if attr is None:
            raise self.error(node, f"{int(value)} is out of range for {dtype.name}")
        return attr

    def widen(self, value, stype: ScalarType, node):
        """An INT32 scalar as INT64 (`stype`); anything else unchanged."""
        if isinstance(value, Value) and value.type != stype:
            (value,) = self.create("arith.extsi", [value], [stype], {}, node)
        return value

    def index_value(self, value, node) -> Value:
        if isinstance(value, int):
            return self.constant(value, INDEX, node)
        if isinstance(value, Value) and value.type == ScalarType(INDEX):
            return value
        if (
            isinstance(value, Value)
            and isinstance(value.type, ScalarType)
            and value.type.dtype.name in ("INT32", "INT64")
        ):
            # An INT32 or INT64 scalar used as an offset, a bound or a count.
            (cast,) = self.create("arith.index_cast", [value], [ScalarType(INDEX)], {}, node)
            return cast
        if (
            isinstance(value, Value)
            and isinstance(value.type, ScalarType)
            and not value.type.dtype.is_float
            and value.type.dtype.name != "BOOL"
        ):
            # A narrower or unsigned integer: extended (by its signedness)
            # to INT64, then cast.
            return self.convert_scalar(value, ScalarType(INDEX), node)
        raise self.error(node, f"expected an index value, got {describe(value)}")
