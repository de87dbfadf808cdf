"""pypto's scopes that change nothing a blockpipe program computes:
`with pl.cluster():` here, `with pl.manual_scope():` in rewrites.py.

In pypto a cluster groups co-scheduled AIC (cube) and AIV (vector) kernels
so that they share one physical cluster: its body becomes a Group function.
blockpipe places kernels on its own, so rewrites.py drops a well-formed
`with pl.cluster():` and its body runs as written, wherever it stands
(around launches in an orchestration, around pl.at scopes in an Opaque or
@pl.jit function, inside a kernel). A misused one stays in the tree and is
reported by `with_misuse` at the user's line.
"""

from __future__ import annotations

import ast
import keyword
from typing import Optional, Tuple

from blockpipe.language.rewrites import _marker, _outside

_USAGE = "'with pl.cluster():' or 'with pl.cluster(name_hint=\"name\"):'"

Report = Tuple[ast.AST, str]


def _argument_problem(call: ast.Call) -> Optional[Report]:
    """What is wrong with the arguments of `pl.cluster(...)`, if anything
    (pypto's rules: no positional ones, name_hint an identifier literal)."""
    if call.args:
        return call.args[0], f"pl.cluster takes no positional arguments: {_USAGE}"
    for kw in call.keywords:
        if kw.arg != "name_hint":
            where = kw.value if kw.arg else call
            return where, f"pl.cluster has no argument {kw.arg or '**'}: {_USAGE}"
        hint = kw.value
        if not (isinstance(hint, ast.Constant) and isinstance(hint.value, str)):
            return hint, "pl.cluster's name_hint must be a string literal"
        if hint.value and (not hint.value.isidentifier() or keyword.iskeyword(hint.value)):
            return hint, f"pl.cluster's name_hint must be an identifier, got {hint.value!r}"
    return None


def is_transparent(stmt: ast.With) -> bool:
    """Whether `stmt` is a well-formed `with pl.cluster(...):` (the caller
    has checked that its one item calls pl.cluster)."""
    item = stmt.items[0]
    return (
        len(stmt.items) == 1
        and item.optional_vars is None
        and _argument_problem(item.context_expr) is None
    )


def _misuse(node: ast.Call) -> Report:
    return _argument_problem(node) or (node, f"pl.cluster is valid as {_USAGE}")


@_marker("cluster", _misuse)
def cluster(*, name_hint: str = ""):
    """pypto's `with pl.cluster(name_hint=...):`, which groups co-scheduled
    AIC and AIV kernels on one physical cluster. It has no effect on results
    in blockpipe: the body runs as if the `with` were not there."""
    _outside("cluster")


def with_misuse(item: ast.withitem, target) -> Optional[Report]:
    """The report for a `with` item calling `target`, a pypto spelling that
    rewrites.py rewrites when it is well formed (pl.cluster,
    pl.manual_scope), or None when `target` is no such spelling."""
    misuse = getattr(target, "__bp_misuse__", None)
    call = item.context_expr
    if misuse is None or not isinstance(call, ast.Call):
        return None
    if item.optional_vars is not None:
        name = ast.unparse(call.func)
        return item.optional_vars, f"'with {name}(...) as ...' is not supported: it names no value"
    found = misuse(call)
    return found if isinstance(found, tuple) else (call, found)
