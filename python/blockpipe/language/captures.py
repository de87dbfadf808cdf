"""What a scope reads from the function around it (outline.py): which
names it reads before it sets them, and which statements before it
compute names from shapes and numbers only, so that its kernel computes
them again rather than taking them as parameters."""

from __future__ import annotations

import ast
from typing import List, Optional

from blockpipe.language.source import lookup_static as _static


def assigned(stmts) -> List[str]:
    """The names a block binds or writes, in order."""
    out: List[str] = []
    for stmt in stmts:
        for node in ast.walk(stmt):
            targets = (
                node.targets
                if isinstance(node, ast.Assign)
                else (
                    [node.target]
                    if isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.For))
                    else []
                )
            )
            for target in targets:
                for name in _target_names(target):
                    if name not in out:
                        out.append(name)
    return out


def _names(nodes) -> List[str]:
    return [n.id for node in nodes for n in ast.walk(node) if isinstance(n, ast.Name)]


def _target_names(target: ast.AST) -> List[str]:
    while isinstance(target, (ast.Subscript, ast.Starred)):
        target = target.value
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for elt in target.elts for n in _target_names(elt)]
    return []


def read_first(stmts, name: str) -> bool:
    """Whether a block reads `name` before it assigns it (so that it reads
    the value from outside), as Python runs it: an assignment's value
    before its targets, a loop's iterable before its variable."""

    def first(node) -> Optional[str]:
        if isinstance(node, ast.Name) and node.id == name:
            return "store" if isinstance(node.ctx, ast.Store) else "load"
        if isinstance(node, ast.AugAssign):
            found = first(node.value)
            return found or ("load" if name in _target_names(node.target) else None)
        if isinstance(node, ast.Assign):
            order = [node.value] + list(node.targets)
        elif isinstance(node, ast.AnnAssign):
            order = [node.value, node.target]
        elif isinstance(node, ast.For):
            order = [node.iter, node.target] + node.body + node.orelse
        else:
            order = list(ast.iter_child_nodes(node))
        for child in order:
            found = first(child) if child is not None else None
            if found:
                return found
        return None

    for stmt in stmts:
        found = first(stmt)
        if found:
            return found == "load"
    return False


# Calls a recomputed statement may make.
_PURE_CALLS = ("min", "max", "len", "int", "abs")


def _pure(node: ast.AST, namespace) -> bool:
    """Whether an expression computes a number from shapes, numbers and
    names only (nothing the kernel could not compute again)."""
    from blockpipe.language import ops

    for sub in ast.walk(node):
        if isinstance(sub, ast.Call):
            func = sub.func
            if isinstance(func, ast.Name) and func.id in _PURE_CALLS:
                continue
            op = ops.op_of(_static(func, namespace))
            if op is None or op.qualname not in ("tensor.dim", "min", "max"):
                return False
        elif isinstance(sub, (ast.Lambda, ast.NamedExpr, ast.Await, ast.Yield)):
            return False
    return True


def recomputed_before(
    before: List[ast.stmt], needed: List[str], params: List[str], namespace
) -> List[ast.stmt]:
    """The statements before a scope that compute the names it reads
    (and those they read), when each is an assignment of a pure
    expression at the top level; none when one is not."""
    wanted = set(needed)
    kept: List[ast.stmt] = []
    for stmt in reversed(before):
        targets = set(assigned([stmt]))
        if not targets & wanted:
            continue
        if not isinstance(stmt, (ast.Assign, ast.AnnAssign)) or stmt.value is None:
            return []
        if not _pure(stmt.value, namespace):
            return []
        kept.insert(0, stmt)
        wanted -= targets
        wanted |= {n for n in _names([stmt.value]) if n not in params}
    return kept


def stored_aliases(stmts: List[ast.stmt], namespace) -> List[tuple]:
    """(name, tensor) for each `name = pl.store(t, offs, tensor)` (or
    `pl.assemble(tensor, ...)`) in a block: the name stands for the tensor."""
    from blockpipe.language.rewrites import _WRITES, _qualname

    found: List[tuple] = []
    for stmt in stmts:
        for node in ast.walk(stmt):
            if not (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
            ):
                continue
            qualname = _qualname(node.value, namespace)
            if qualname not in _WRITES:
                continue
            index, keywords = _WRITES[qualname]
            written = node.value.args[index] if len(node.value.args) > index else None
            for kw in node.value.keywords:
                if kw.arg in keywords:
                    written = kw.value
            if isinstance(written, ast.Name) and written.id != node.targets[0].id:
                pair = (node.targets[0].id, written.id)
                if pair not in found:
                    found.append(pair)
    return found
