"""Compile-time evaluation: what a kernel's source names at compile time
(shapes, dtypes, memory spaces, module constants, the DSL's own names)."""

from __future__ import annotations

import ast
import builtins
import difflib
import numbers
from typing import Optional, Tuple

from blockpipe.language import ops
from blockpipe.language.types import DType, MemorySpace, MemRef
from blockpipe.language.unsupported import Unsupported
from blockpipe.language.values import LoweringError


class ConstEval:
    """The part of a function's lowering that evaluates at compile time."""

    def static(self, node: ast.expr):
        """Evaluates a compile-time expression (dtypes, spaces, shapes)."""
        value = self.static_name(node)
        if isinstance(value, Unsupported):
            raise self.error(node, value.message)
        return value

    def static_name(self, node: ast.expr):
        """static(), but a pypto name blockpipe lacks is returned (an
        Unsupported) rather than reported, so that the caller can name all
        of it (`pl.system.syncall`, not `pl.system`)."""
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            if node.id in self.env:
                value = self.env[node.id]
                if isinstance(value, (int, float)):
                    return value
                raise self.error(node, f"'{node.id}' must be known at compile time here")
            if node.id in self.source.globals:
                return python_number(self.source.globals[node.id])
            if hasattr(builtins, node.id) and node.id in ("None", "True", "False"):
                return getattr(builtins, node.id)
            raise self.error(node, f"unknown name '{node.id}'{self.suggestion(node)}")
        if isinstance(node, ast.Attribute):
            base = self.static_name(node.value)
            try:
                return python_number(getattr(base, node.attr))
            except AttributeError:
                raise self.error(
                    node,
                    f"'{ast.unparse(node.value)}' has no attribute "
                    f"'{node.attr}'{self.suggestion(node)}",
                ) from None
        if isinstance(node, (ast.List, ast.Tuple)):
            return [self.static(e) for e in node.elts]
        if isinstance(node, ast.Call) and self._names_memref(node.func):
            # `pl.MemRef("ub", slots=2)` written in an annotation: a hint
            # blockpipe accepts and does not use (types.MemRef).
            return MemRef()
        if isinstance(node, ast.Subscript):
            base = self.static_name(node.value)
            if isinstance(base, MemRef):
                # A slot picked at run time (`ring[i % 2]`) is the same
                # hint as any other: every tile has storage of its own.
                return base
            index = self.static(node.slice)
            try:
                return python_number(
                    base[tuple(index) if isinstance(node.slice, ast.Tuple) else index]
                )
            except (TypeError, KeyError, IndexError) as exc:
                raise self.error(node, str(exc)) from None
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -self.static(node.operand)
        if isinstance(node, ast.BinOp) or (isinstance(node, ast.Call) and self.calls_helper(node)):
            value = self.expr(node)
            if isinstance(value, (int, float)) or (
                isinstance(value, (list, tuple)) and all(isinstance(v, (int, float)) for v in value)
            ):
                return list(value) if isinstance(value, tuple) else value
        raise self.error(node, f"'{ast.unparse(node)}' must be known at compile time")

    def _names_memref(self, func: ast.expr) -> bool:
        try:
            return self.static_name(func) is MemRef
        except LoweringError:
            return False

    def calls_helper(self, node: ast.Call) -> bool:
        """Whether `node` calls a plain Python function (inlined)."""
        import types

        try:
            target = self.static_name(node.func)
        except LoweringError:
            return False
        return isinstance(target, types.FunctionType) and ops.op_of(target) is None

    def static_value(self, node, types, what: str):
        if node is None or (isinstance(node, ast.Constant) and node.value is None):
            return None if not isinstance(types, type) or types is not bool else False
        if isinstance(node, (bool, str, int)):
            return node
        value = self.static(node)
        if not isinstance(value, types):
            names = " or ".join(
                "None" if t is type(None) else t.__name__
                for t in (types if isinstance(types, tuple) else (types,))
            )
            raise self.error(node, f"{what} must be a compile-time {names}, got {value!r}")
        return value

    def intrinsic_of(self, node: ast.expr) -> Optional[str]:
        """The qualified name of the DSL operation `node` calls, if it calls one."""
        if not isinstance(node, ast.Call):
            return None
        try:
            target = self.static(node.func)
        except LoweringError:
            return None
        op = ops.op_of(target)
        return op.qualname if op is not None else None

    def static_int(self, node, what: str) -> int:
        if isinstance(node, int):
            return node
        value = self.static(node)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(
                node, f"{what} must be an integer known at compile time, got {value!r}"
            )
        return value

    def dtype_arg(self, node, what: str) -> DType:
        value = self.static(node)
        if not isinstance(value, DType):
            raise self.error(node, f"{what} must be a dtype such as pl.FP32, got {value!r}")
        return value

    def space_arg(self, node, what: str) -> Optional[MemorySpace]:
        if node is None:
            return None
        value = self.static(node)
        if value is None:
            return None
        if not isinstance(value, MemorySpace):
            raise self.error(node, f"{what} must be a pl.MemorySpace, got {value!r}")
        return value

    def shape_arg(self, node, what: str) -> Tuple[int, ...]:
        value = self.static(node)
        if isinstance(value, tuple):  # a module constant such as SHAPE = (16, 32)
            value = list(value)
        if (
            not isinstance(value, list)
            or not value
            or not all(isinstance(d, int) and not isinstance(d, bool) and d > 0 for d in value)
        ):
            raise self.error(
                node,
                f"{what} must be a list of positive integers known at compile time, got {value!r}",
            )
        return tuple(value)

    def suggestion(self, node: ast.expr) -> str:
        """ "; did you mean 'x'?" for a misspelt name or attribute, else ""."""
        if isinstance(node, ast.Attribute):
            try:
                base = self.static(node.value)
            except LoweringError:
                return ""
            candidates = ops.names_in(base)
            wrong = node.attr
        elif isinstance(node, ast.Name):
            candidates = list(self.env) + [n for n in self.source.globals if not n.startswith("__")]
            wrong = node.id
        else:
            return ""
        close = difflib.get_close_matches(wrong, candidates, n=1)
        return f"; did you mean '{close[0]}'?" if close else ""


def python_number(value):
    """A numpy scalar (np.int64(16), np.float32(0.5)) as the Python number it
    holds, also inside a list or tuple; anything else unchanged."""
    if type(value) in (list, tuple):
        return type(value)(python_number(v) for v in value)
    if isinstance(value, bool) or type(value) in (int, float):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    return value
