"""`break` and `continue` in `pl.range` loop bodies (and the ifs in them),
rewritten into flags that run-time ifs test: part of the rewrite of a
function's tree before it is lowered (rewrites.py)."""

from __future__ import annotations

import ast
import copy
from typing import Any, Dict, List, Optional

from blockpipe.language.rewrites import _assign, _located, _qualname

# Loops whose body may `break` / `continue`: run-time ifs guard the rest.
_LOOPS = ("range", "parallel", "pipeline", "unroll")


def _jumps(stmts: List[ast.stmt]) -> List[ast.stmt]:
    """The break and continue statements of a loop body (not of loops
    nested in it)."""
    found: List[ast.stmt] = []

    def visit(node):
        if isinstance(node, (ast.Break, ast.Continue)):
            found.append(node)
        elif not isinstance(node, (ast.For, ast.While, ast.FunctionDef, ast.Lambda)):
            for child in ast.iter_child_nodes(node):
                visit(child)

    for stmt in stmts:
        visit(stmt)
    return found


class Jumps(ast.NodeTransformer):
    """`break` and `continue` in a loop body, as flags that ifs test:
    `continue` skips the rest of the iteration, `break` that and every later
    iteration (which the loop still counts, doing nothing)."""

    def __init__(self, namespace: Dict[str, Any]):
        self.namespace = namespace
        self.count = 0

    def visit_For(self, node: ast.For):
        self.generic_visit(node)  # inner loops first
        jumps = _jumps(node.body)
        if not jumps or not self._loop(node.iter):
            return node
        # Only an if may hold them: anything else is reported where it is.
        if any(not self._reachable(node.body, j) for j in jumps):
            return node
        self.count += 1
        skip, stop = f"__bp_skip_{self.count}", f"__bp_stop_{self.count}"
        breaks = any(isinstance(j, ast.Break) for j in jumps)
        body = self._guarded(node.body, skip, stop if breaks else None)
        loop = copy.copy(node)
        if breaks:
            # Once broken, the remaining iterations do nothing.
            loop.body = [
                _assign(
                    ast.Name(skip, ast.Store()), _located(ast.Name(stop, ast.Load()), node), node
                ),
                self._if_clear(skip, body, node),
            ]
            start = _assign(ast.Name(stop, ast.Store()), _located(ast.Constant(0), node), node)
            return [start, loop]
        loop.body = [
            _assign(ast.Name(skip, ast.Store()), _located(ast.Constant(0), node), node)
        ] + body
        return loop

    def _loop(self, iterable: ast.expr) -> bool:
        if not isinstance(iterable, ast.Call):
            return False
        if isinstance(iterable.func, ast.Name) and iterable.func.id == "range":
            return True
        return _qualname(iterable, self.namespace) in _LOOPS

    @staticmethod
    def _reachable(stmts: List[ast.stmt], jump: ast.stmt) -> bool:
        """Whether `jump` sits in `stmts` itself or in ifs nested there."""
        for stmt in stmts:
            if stmt is jump:
                return True
            if isinstance(stmt, ast.If) and (
                Jumps._reachable(stmt.body, jump) or Jumps._reachable(stmt.orelse, jump)
            ):
                return True
        return False

    def _if_clear(self, skip: str, body: List[ast.stmt], loc: ast.AST) -> ast.If:
        test = ast.Compare(
            left=ast.Name(skip, ast.Load()), ops=[ast.Eq()], comparators=[ast.Constant(0)]
        )
        return ast.copy_location(ast.If(test=_located(test, loc), body=body, orelse=[]), loc)

    def _guarded(self, stmts: List[ast.stmt], skip: str, stop: Optional[str]) -> List[ast.stmt]:
        out: List[ast.stmt] = []
        for index, stmt in enumerate(stmts):
            if isinstance(stmt, (ast.Break, ast.Continue)):
                out.append(
                    _assign(ast.Name(skip, ast.Store()), _located(ast.Constant(1), stmt), stmt)
                )
                if isinstance(stmt, ast.Break):
                    out.append(
                        _assign(ast.Name(stop, ast.Store()), _located(ast.Constant(1), stmt), stmt)
                    )
                return out  # the rest of the block never runs
            if isinstance(stmt, ast.If) and _jumps([stmt]):
                guarded = copy.copy(stmt)
                guarded.body = self._guarded(stmt.body, skip, stop) or [
                    ast.copy_location(ast.Pass(), stmt)
                ]
                guarded.orelse = self._guarded(stmt.orelse, skip, stop)
                out.append(guarded)
                rest = stmts[index + 1 :]
                if rest:
                    out.append(self._if_clear(skip, self._guarded(rest, skip, stop), rest[0]))
                return out
            out.append(stmt)
        return out
