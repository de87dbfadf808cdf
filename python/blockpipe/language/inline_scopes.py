"""Helpers whose bodies hold `pl.at` / `pl.spmd` scopes (pypto's
`@pl.jit.inline` functions, or plain Python ones), inlined into the
function that calls them before its scopes are outlined: a scope becomes a
kernel only where the outliner sees it.

`out = helper(a, out)`, `helper(a, out)` and `return helper(a, out)` are
inlined: each parameter names its argument (an argument that is not a name
is computed once before the body), the helper's own names that the caller
also uses take the helper's name as a prefix, and its return value is
assigned to the call's target. A kernel outlined from a helper's scope is
read from the helper's file, with its globals; the helper's statements
outside scopes run in the caller (errors there name the caller's file
when the helper is in another one). A helper without scopes is left to
the lowering, which inlines any helper as it is called.
"""

from __future__ import annotations

import ast
import copy
import inspect
import types as _types
from typing import Dict, List, Optional

from blockpipe.errors import CompileError
from blockpipe.language.program import FunctionSpec
from blockpipe.language.source import Source, parse_function
from blockpipe.language.types import FunctionType

# Helpers inlined into helpers: deeper is recursion.
_MAX_DEPTH = 16


class ScopeInliner:
    """Inlines, into one function's body, the calls of helpers with scopes
    (`outliner` gives the function's source, namespace and errors)."""

    def __init__(self, outliner):
        self.o = outliner
        self.count = 0
        self.depth = 0
        self.caller_names = {n.id for n in ast.walk(outliner.tree) if isinstance(n, ast.Name)}

    def block(self, stmts: List[ast.stmt]) -> List[ast.stmt]:
        out: List[ast.stmt] = []
        for stmt in stmts:
            out += self.statement(stmt)
        return out

    def statement(self, stmt: ast.stmt) -> List[ast.stmt]:
        if isinstance(stmt, (ast.For, ast.If)) and not self.o.is_scope(stmt):
            copied = copy.copy(stmt)
            copied.body = self.block(stmt.body)
            copied.orelse = self.block(stmt.orelse)
            return [copied]
        call = target = None
        returns = False
        if isinstance(stmt, ast.Expr):
            call = stmt.value
        elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            call, target = stmt.value, stmt.targets[0]
        elif isinstance(stmt, ast.Return):
            call, returns = stmt.value, True
        if not isinstance(call, ast.Call):
            return [stmt]
        origin = getattr(stmt, "_bp_source", None)
        helper = self._helper(call, origin.globals if origin is not None else None)
        if helper is None:
            return [stmt]
        fn, source = helper
        if self.depth >= _MAX_DEPTH:
            raise self.o.error(call, f"'{fn.__name__}' calls itself; helpers are inlined")
        self.depth += 1
        try:
            return self.block(self._inline(stmt, call, target, returns, fn, source))
        finally:
            self.depth -= 1

    def _helper(self, call: ast.Call, namespace=None):
        """The helper a call names (in `namespace`, the caller's by
        default), with its source, when it is a Python function whose body
        holds a scope."""
        from blockpipe.language import ops
        from blockpipe.language.outline import _static

        fn = _static(call.func, self.o.namespace if namespace is None else namespace)
        if not isinstance(fn, _types.FunctionType) or ops.op_of(fn) is not None:
            return None
        try:
            source = parse_function(FunctionSpec(fn, FunctionType.Orchestration), "<unknown>")
        except (CompileError, OSError, TypeError, SyntaxError):
            return None
        namespace = dict(source.globals)
        namespace.update(self.o.scope)
        if any(self.o.is_scope(n, namespace) for n in ast.walk(source.tree)):
            return fn, source
        # A helper calling one with scopes.
        if self.depth < _MAX_DEPTH:
            self.depth += 1
            try:
                inner = ScopeInliner.__new__(ScopeInliner)
                inner.__dict__.update(self.__dict__)
                inner.o = _Namespaced(self.o, namespace)
                for node in ast.walk(source.tree):
                    if isinstance(node, ast.Call) and inner._helper(node) is not None:
                        return fn, source
            finally:
                self.depth -= 1
        return None

    def _inline(self, stmt, call, target, returns, fn, source: Source) -> List[ast.stmt]:
        try:
            bound = inspect.signature(fn).bind(
                *call.args, **{k.arg: k.value for k in call.keywords}
            )
        except TypeError as exc:
            raise self.o.error(call, f"call of '{fn.__name__}': {exc}") from None
        bound.apply_defaults()
        body = copy.deepcopy(source.tree.body)
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]  # the docstring
        if source.file == self.o.source.file:
            self._shift(body, source)
        else:
            # Its statements keep their positions in their own file: the
            # kernels of its scopes are read from there, with its globals.
            for node in (n for s in body for n in ast.walk(s)):
                if isinstance(node, ast.stmt):
                    node._bp_source = source
            self._numbers_of(body, source, set(bound.arguments))
        returns_at = [n for s in body for n in ast.walk(s) if isinstance(n, ast.Return)]
        if returns_at and (len(returns_at) > 1 or body[-1] is not returns_at[0]):
            raise self.o.error(
                call,
                f"'{fn.__name__}' is inlined and may return only at the end of its body "
                f"(a return at line {self.o.source.position(returns_at[0])[0]})",
            )
        before: List[ast.stmt] = []
        names: Dict[str, str] = {}
        for pname, arg in bound.arguments.items():
            if isinstance(arg, ast.Name):
                names[pname] = arg.id
                continue
            self.count += 1
            temp = f"{fn.__name__}_{pname}_{self.count}"
            if not isinstance(arg, ast.AST):
                if not isinstance(arg, (int, float, str, bool, type(None))):
                    raise self.o.error(
                        call,
                        f"'{fn.__name__}' is inlined: its default {pname}={arg!r} is not a number",
                    )
                arg = ast.copy_location(ast.Constant(arg), call)
            name = ast.copy_location(ast.Name(temp, ast.Store()), call)
            # The argument keeps its own positions.
            before.append(ast.copy_location(ast.Assign(targets=[name], value=arg), call))
            names[pname] = temp
        for node in (n for s in body for n in ast.walk(s)):
            if isinstance(node, ast.Name) and node.id not in names:
                if node.id in self.caller_names and isinstance(node.ctx, ast.Store):
                    names[node.id] = f"{fn.__name__}_{node.id}"
        for node in (n for s in body for n in ast.walk(s)):
            if isinstance(node, ast.Name) and node.id in names:
                node.id = names[node.id]
        result: Optional[ast.expr] = None
        if returns_at:
            result = body.pop().value
        after: List[ast.stmt] = []
        if returns:
            after.append(ast.copy_location(ast.Return(value=result), stmt))
        elif target is not None:
            if result is None:
                raise self.o.error(call, f"'{fn.__name__}' returns nothing to assign")
            same = isinstance(target, ast.Name) and isinstance(result, ast.Name)
            if not (same and target.id == result.id):
                after.append(ast.copy_location(ast.Assign(targets=[target], value=result), stmt))
        return before + body + after

    @staticmethod
    def _numbers_of(body: List[ast.stmt], source: Source, params) -> None:
        """The helper's module numbers (`HIDDEN`, `CHUNK`) its statements
        name, as constants: those outside its scopes run in the caller,
        whose module may not have them."""
        local = set(params)
        for node in (n for s in body for n in ast.walk(s)):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                local.add(node.id)
        for stmt in body:
            for parent in ast.walk(stmt):
                for field, value in ast.iter_fields(parent):
                    values = value if isinstance(value, list) else [value]
                    for index, child in enumerate(values):
                        if not (
                            isinstance(child, ast.Name)
                            and isinstance(child.ctx, ast.Load)
                            and child.id not in local
                        ):
                            continue
                        number = source.globals.get(child.id)
                        if isinstance(number, (bool, int, float)):
                            constant = ast.copy_location(ast.Constant(number), child)
                            if isinstance(value, list):
                                value[index] = constant
                            else:
                                setattr(parent, field, constant)

    def _shift(self, body: List[ast.stmt], source: Source) -> None:
        """Moves the helper's positions into the caller's frame."""
        lines = source.line_offset - self.o.source.line_offset
        cols = source.col_offset - self.o.source.col_offset
        for node in (n for s in body for n in ast.walk(s)):
            if hasattr(node, "lineno"):
                node.lineno += lines
                node.col_offset += cols
                if getattr(node, "end_lineno", None) is not None:
                    node.end_lineno += lines
                    node.end_col_offset += cols


class _Namespaced:
    """The outliner, reading names in a helper's namespace."""

    def __init__(self, outliner, namespace):
        self._outliner = outliner
        self.namespace = namespace

    def __getattr__(self, name):
        return getattr(self._outliner, name)
