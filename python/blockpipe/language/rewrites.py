"""pypto's spellings rewritten, on the parsed source, into the forms the
lowering reads; every statement keeps the user's position.

- A statement `pl.store(tile, offsets, out)` (or `pl.assemble(out, tile,
  offsets)`, `pl.write(out, indices, value)`) whose result is not
  assigned updates `out` as if `out = pl.store(...)` were written: loops
  carry it, ifs merge it, a scope that does it writes `out`.
- `for i, (a, b) in pl.range(n, init_values=(x, y)):` whose body ends in
  `r, s = pl.yield_(e, f)` is `a, b = x, y` before the loop, the body
  assigning `a, b` the yielded values, and `r, s = a, b` after it (the
  loop's results, pypto's names for them); `v = pl.yield_(e)` in an if is
  `v = e`. Either may be annotated (`v: pl.Scalar[pl.INDEX] = pl.yield_(e)`).
- `with pl.manual_scope():` and a well-formed `with pl.cluster():`
  (transparent_scopes.py) are their bodies, and `outs..., tid =
  pl.submit(self.kernel, args...)` is `outs... = self.kernel(args...)`:
  blockpipe orders tasks by the tensors they read and write, which orders
  every pair pypto's `deps=` would. Statements that only move task ids
  (`prev = None`, `tids = pl.array.create(n, pl.TASK_ID)`, `tids[i] = tid`,
  a barrier `b = pl.system.task_dummy(deps=[...])`) are dropped.
- `break` and `continue` in a loop body (directly, or in ifs there) set
  flags; run-time ifs on them skip the rest of the iteration, and after a
  break every later one (the loop still counts them).
"""

from __future__ import annotations

import ast
import copy
from typing import Any, Dict, List, Optional

from blockpipe.language.source import lookup_static as _static

# Operations whose statement form writes one of their arguments: the
# argument's position and keyword names.
_WRITES = {
    "store": (2, ("output", "output_tensor")),
    "tile.store": (2, ("output", "output_tensor")),
    "tensor.store": (2, ("output", "output_tensor")),
    "assemble": (0, ("target",)),
    "tile.assemble": (0, ("target",)),
    "tensor.assemble": (0, ("target",)),
    "write": (0, ("dst",)),
    "tile.write": (0, ("tile",)),
    "tensor.write": (0, ("tensor",)),
}


def _marker(name: str, misuse):
    """Marks a function standing for a spelling rewritten here; `misuse`
    gives the CompileError message of a use left as it was written (or the
    node it names and the message)."""

    def mark(fn):
        fn.__bp_marker__ = name
        fn.__bp_misuse__ = misuse
        return fn

    return mark


def _outside(name: str):
    from blockpipe.language.unsupported import NotSupportedError

    raise NotSupportedError(f"pl.{name} is only valid inside a blockpipe function")


@_marker(
    "yield_",
    lambda node: (
        "pl.yield_ is the last statement of a loop with init_values= (one value per "
        "carried name) or assigns a name in a branch of an if: 'r = pl.yield_(v)'"
    ),
)
def yield_(*values):
    """pypto's `pl.yield_(v, ...)`: the values a loop with `init_values=`
    carries to its next iteration (the last statement of its body; the
    names it assigns hold the loop's results after it), or the value a
    branch of an if gives the name it assigns (`r = pl.yield_(v)` there is
    `r = v`)."""
    from blockpipe.language.ops import INTERPRETER

    if INTERPRETER.get() is not None:  # BLOCKPIPE_INTERPRET: run as written
        from blockpipe.interpreter.runner import carry

        return carry(values)
    _outside("yield_")


# pl.submit's keywords that change nothing here (`dumps=` is pypto's
# selective argument dump, a debugging aid: see pl.dump_tag).
_SUBMIT_KEYWORDS = ("deps", "allow_early_resolve", "dumps", "predicate")
# pl.spmd_submit's, and those of pl.spmd that a launch takes.
_SPMD_KEYWORDS = _SUBMIT_KEYWORDS + ("core_num", "sync_start")
# pl.spmd's keywords that order or gate its launches, which blockpipe's
# tensor dependencies and an if stand for.
_SPMD_ORDERING = ("deps", "allow_early_resolve", "predicate")


def _launch_misuse(name: str, keywords, usage: str):
    """What a misused pl.submit / pl.spmd_submit reports: a keyword it lacks,
    else how it is written."""

    def misuse(node: ast.Call):
        for kw in node.keywords:
            if kw.arg not in keywords:
                return kw.value, f"pl.{name}({kw.arg}=...) is not supported by blockpipe"
        return node, f"pl.{name} is valid as a statement {usage}"

    return misuse


_submit_misuse = _launch_misuse(
    "submit",
    _SUBMIT_KEYWORDS,
    "'outs..., tid = pl.submit(self.kernel, args...)' (or 'pl.submit(self.kernel, args...)')",
)


@_marker("submit", _submit_misuse)
def submit(kernel, *args, deps=None, allow_early_resolve=False, dumps=None, predicate=None):
    """pypto's explicit launch, `out, tid = pl.submit(self.kernel, x, out,
    deps=[prev])`: the call `out = self.kernel(x, out)`, `tid` naming the
    task. blockpipe orders tasks by the tensors they read and write, which
    orders every pair an explicit `deps=` edge could; a task id has no value
    (it may appear in `deps=` only). `allow_early_resolve=` is accepted, and
    `dumps=` (pypto's selective argument dump, as pl.dump_tag) is ignored.
    `predicate=(cond)` launches only where the condition, read when the
    orchestration reaches it, holds: `if cond: out = self.kernel(x, out)`
    (a skipped task leaves its outputs as they were)."""
    _outside("submit")


_spmd_submit_misuse = _launch_misuse(
    "spmd_submit",
    _SPMD_KEYWORDS,
    "'outs..., tid = pl.spmd_submit(self.kernel, args..., core_num=n)', written pl.spmd_submit",
)


@_marker("spmd_submit", _spmd_submit_misuse)
def spmd_submit(
    kernel,
    *args,
    core_num=None,
    sync_start=False,
    deps=None,
    allow_early_resolve=False,
    dumps=None,
    predicate=None,
):
    """pypto's explicit SPMD launch, `out, tid = pl.spmd_submit(self.kernel,
    x, out, core_num=8, deps=[prev], predicate=(gate[0, 0] > 0))`: as
    pl.submit (deps=, predicate=), the kernel launched on `core_num` blocks
    as in `with pl.spmd(8, sync_start=...):`."""
    _outside("spmd_submit")


@_marker("manual_scope", lambda node: "pl.manual_scope is valid as 'with pl.manual_scope():'")
def manual_scope():
    """pypto's `with pl.manual_scope():`, whose tasks depend only on their
    `deps=`: blockpipe keeps ordering them by the tensors they read and
    write, which is what those dependencies guarantee (and possibly more),
    so the block runs as written."""
    _outside("manual_scope")


def _qualname(node: ast.AST, namespace: Dict[str, Any]) -> Optional[str]:
    """The DSL operation a call names (`"store"`, `"yield_"`), or None."""
    from blockpipe.language import ops

    if not isinstance(node, ast.Call):
        return None
    try:
        target = _static(node.func, namespace)
    except Exception:  # noqa: BLE001 - a user's attribute may raise anything
        return None
    op = ops.op_of(target)
    if op is not None:
        return op.qualname
    return getattr(target, "__bp_marker__", None)


def _located(node: ast.AST, loc: ast.AST) -> ast.AST:
    for n in ast.walk(node):
        ast.copy_location(n, loc)
        if hasattr(loc, "end_lineno"):
            n.end_lineno, n.end_col_offset = loc.end_lineno, loc.end_col_offset
    return node


def _assign(target: ast.expr, value: ast.expr, loc: ast.AST) -> ast.Assign:
    """`target = value` at `loc`; `value` keeps its own positions (a new
    target, a Name made here, takes loc's)."""
    if not hasattr(target, "lineno"):
        _located(target, loc)
    return ast.copy_location(ast.Assign(targets=[target], value=value), loc)


def needs_rewrite(tree: ast.FunctionDef, namespace: Dict[str, Any]) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, (ast.Break, ast.Continue)):
            return True
        if isinstance(node, ast.withitem) and node.optional_vars is not None:
            return True
        if _task_dummy(node):
            return True
        if isinstance(node, ast.Expr) and _qualname(node.value, namespace) in _WRITES:
            return True
        if isinstance(node, ast.Call) and _qualname(node, namespace) in (
            "yield_",
            "submit",
            "spmd_submit",
            "manual_scope",
            "cluster",
        ):
            return True
    return False


def rewrite(tree: ast.FunctionDef, namespace: Dict[str, Any]) -> ast.FunctionDef:
    """A copy of `tree` with pypto's spellings rewritten (the tree itself
    when it has none)."""
    if not needs_rewrite(tree, namespace):
        return tree
    tree = copy.deepcopy(tree)
    seeds = _task_seeds(tree, namespace)
    _Rewriter(namespace).visit(tree)
    if seeds:  # after init_values and yields became assignments
        _Tasks(tree, seeds).visit(tree)
    from blockpipe.language.jumps import Jumps

    Jumps(namespace).visit(tree)
    return tree


class _Rewriter(ast.NodeTransformer):
    def __init__(self, namespace: Dict[str, Any]):
        self.namespace = namespace
        self.count = 0

    def visit_Expr(self, node: ast.Expr):
        qualname = _qualname(node.value, self.namespace)
        if qualname in _WRITES:
            index, keywords = _WRITES[qualname]
            call = node.value
            written = call.args[index] if len(call.args) > index else None
            for kw in call.keywords:
                if kw.arg in keywords:
                    written = kw.value
            if isinstance(written, ast.Name):
                target = _located(ast.Name(written.id, ast.Store()), written)
                return _assign(target, call, node)
        if qualname == "yield_":
            # A bare `pl.yield_(...)`: the values carried, with no names after.
            return self._yielded(node, None, node.value)
        if qualname in ("submit", "spmd_submit"):
            return self._submitted(node, None, node.value)
        return self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign):
        if len(node.targets) == 1 and _qualname(node.value, self.namespace) == "yield_":
            return self._yielded(node, node.targets[0], node.value)
        if len(node.targets) == 1 and _qualname(node.value, self.namespace) in (
            "submit",
            "spmd_submit",
        ):
            return self._submitted(node, node.targets[0], node.value)
        return self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign):
        """`v: pl.Scalar[pl.INDEX] = pl.yield_(e)` in an if (pypto's
        annotated form): `v: pl.Scalar[pl.INDEX] = e`."""
        call = node.value
        if call is not None and _qualname(call, self.namespace) == "yield_":
            if len(call.args) != 1 or call.keywords:
                return node  # reported by pl.yield_ itself
            annotated = copy.copy(node)
            annotated.value = call.args[0]
            return annotated
        return self.generic_visit(node)

    def visit_With(self, node: ast.With):
        from blockpipe.language.transparent_scopes import is_transparent

        scope = _qualname(node.items[0].context_expr, self.namespace)
        if (
            len(node.items) == 1
            and node.items[0].optional_vars is None
            and scope == "manual_scope"
            and not node.items[0].context_expr.args
            and not node.items[0].context_expr.keywords
        ) or (scope == "cluster" and is_transparent(node)):
            out: List[ast.stmt] = []
            for stmt in node.body:
                visited = self.visit(stmt)
                out += (
                    visited if isinstance(visited, list) else [] if visited is None else [visited]
                )
            return out or [ast.copy_location(ast.Pass(), node)]
        if len(node.items) == 1 and _qualname(node.items[0].context_expr, self.namespace) == "spmd":
            return self._spmd_scope(node)
        return self.generic_visit(node)

    def _spmd_scope(self, node: ast.With):
        """`with pl.spmd(n, deps=[...], predicate=(cond)) as tid:` (pypto's
        task-naming scope): `tid` names the launches' task, which only
        deps= reads; deps= is what tensor dependencies already order; a
        predicate gates the block: `if cond: with pl.spmd(n): ...`."""
        self.generic_visit(node)
        item = node.items[0]
        call = item.context_expr
        keywords = [kw for kw in call.keywords if kw.arg not in _SPMD_ORDERING]
        predicate = next((kw.value for kw in call.keywords if kw.arg == "predicate"), None)
        scope = copy.copy(node)
        scope.items = [
            ast.withitem(
                context_expr=ast.copy_location(
                    ast.Call(func=call.func, args=call.args, keywords=keywords), call
                ),
                optional_vars=None,
            )
        ]
        if predicate is None:
            return scope
        return ast.copy_location(ast.If(test=predicate, body=[scope], orelse=[]), node)

    def _submitted(self, stmt: ast.stmt, target: Optional[ast.expr], call: ast.Call):
        """`outs..., tid = pl.submit(f, args...)`: `outs... = f(args...)`;
        pl.spmd_submit's launch in `with pl.spmd(core_num, sync_start=):`,
        and with `predicate=(cond)` under `if cond:`."""
        spmd = _qualname(call, self.namespace) == "spmd_submit"
        allowed = _SPMD_KEYWORDS if spmd else _SUBMIT_KEYWORDS
        keywords = {kw.arg: kw.value for kw in call.keywords}
        if (
            not call.args
            or any(isinstance(a, ast.Starred) for a in call.args)
            or any(kw not in allowed for kw in keywords)
            or (spmd and ("core_num" not in keywords or not isinstance(call.func, ast.Attribute)))
        ):
            return stmt  # pl.submit / pl.spmd_submit reports it
        launch = ast.copy_location(
            ast.Call(func=call.args[0], args=list(call.args[1:]), keywords=[]), call
        )
        if target is None:
            launched: ast.stmt = ast.copy_location(ast.Expr(value=launch), stmt)
        elif not (isinstance(target, ast.Tuple) and len(target.elts) >= 2):
            return stmt
        else:
            outs = target.elts[:-1]
            kept = (
                outs[0]
                if len(outs) == 1
                else ast.copy_location(ast.Tuple(elts=outs, ctx=ast.Store()), target)
            )
            launched = _assign(kept, launch, stmt)
        if spmd:
            # pl.spmd, spelled as the user spells pl (pl.spmd_submit's prefix).
            spmd_func = _located(
                ast.Attribute(value=copy.deepcopy(call.func.value), attr="spmd", ctx=ast.Load()),
                call.func,
            )
            scope_keywords = (
                [ast.keyword(arg="sync_start", value=keywords["sync_start"])]
                if "sync_start" in keywords
                else []
            )
            launched = ast.copy_location(
                ast.With(
                    items=[
                        ast.withitem(
                            context_expr=ast.copy_location(
                                ast.Call(
                                    func=spmd_func,
                                    args=[keywords["core_num"]],
                                    keywords=scope_keywords,
                                ),
                                call,
                            ),
                            optional_vars=None,
                        )
                    ],
                    body=[launched],
                ),
                stmt,
            )
        if "predicate" in keywords:
            return ast.copy_location(
                ast.If(test=keywords["predicate"], body=[launched], orelse=[]), stmt
            )
        return launched

    def _yielded(self, stmt: ast.stmt, target: Optional[ast.expr], call: ast.Call):
        """`target = pl.yield_(e, ...)` outside a loop with init_values (in
        an if): `target = e`. In the loop, `_loop` replaces it first."""
        if call.keywords:
            return stmt  # reported by pl.yield_ itself
        if target is None:
            return None if not call.args else stmt
        if len(call.args) == 1:
            return _assign(target, call.args[0], stmt)
        if not (
            isinstance(target, (ast.Tuple, ast.List))
            and len(target.elts) == len(call.args)
            and all(isinstance(e, ast.Name) for e in target.elts)
        ):
            return stmt  # reported by pl.yield_ itself
        return self._assign_all([e.id for e in target.elts], call.args, stmt)

    def _assign_all(self, names: List[str], values: List[ast.expr], loc: ast.AST):
        """`names[i] = values[i]` for every i, each value computed before
        any name is assigned (through temporaries)."""
        temps: List[str] = []
        out: List[ast.stmt] = []
        for value in values:
            self.count += 1
            temps.append(f"__bp_value_{self.count}")
            out.append(_assign(ast.Name(temps[-1], ast.Store()), value, value))
        for name, temp in zip(names, temps):
            read = _located(ast.Name(temp, ast.Load()), loc)
            out.append(_assign(ast.Name(name, ast.Store()), read, loc))
        return out

    def visit_For(self, node: ast.For):
        init = self._init_values(node)
        if init is None:
            return self.generic_visit(node)
        return self._loop(node, init)

    def _init_values(self, node: ast.For) -> Optional[ast.keyword]:
        call = node.iter
        if not isinstance(call, ast.Call) or _qualname(call, self.namespace) not in (
            "range",
            "parallel",
            "pipeline",
        ):
            return None
        return next((k for k in call.keywords if k.arg == "init_values"), None)

    def _loop(self, node: ast.For, init: ast.keyword) -> List[ast.stmt]:
        target = node.target
        if not (
            isinstance(target, ast.Tuple)
            and len(target.elts) == 2
            and isinstance(target.elts[0], ast.Name)
            and isinstance(target.elts[1], (ast.Tuple, ast.List))
            and all(isinstance(e, ast.Name) for e in target.elts[1].elts)
            and isinstance(init.value, (ast.Tuple, ast.List))
            and len(init.value.elts) == len(target.elts[1].elts)
        ):
            return self.generic_visit(node)  # reported by the loop
        carried = [e.id for e in target.elts[1].elts]
        inits = list(init.value.elts)
        loop = copy.copy(node)
        loop.iter = copy.copy(node.iter)
        loop.iter.keywords = [k for k in node.iter.keywords if k is not init]
        loop.target = target.elts[0]
        body = list(node.body)
        last = body[-1] if body else None
        results: Optional[ast.expr] = None
        yielded: Optional[ast.Call] = None
        if isinstance(last, ast.Assign) and len(last.targets) == 1:
            if _qualname(last.value, self.namespace) == "yield_":
                results, yielded = last.targets[0], last.value
        elif isinstance(last, ast.AnnAssign) and last.value is not None:
            if _qualname(last.value, self.namespace) == "yield_":  # `r: T = pl.yield_(v)`
                results, yielded = last.target, last.value
        elif isinstance(last, ast.Expr) and _qualname(last.value, self.namespace) == "yield_":
            yielded = last.value
        before = self._assign_all(carried, inits, node)
        matches = yielded is not None and len(yielded.args) == len(carried) and not yielded.keywords
        loop.body = []
        for stmt in body[:-1] if yielded is not None else body:
            visited = self.visit(stmt)
            loop.body += (
                visited if isinstance(visited, list) else [] if visited is None else [visited]
            )
        if matches:
            loop.body += self._assign_all(carried, list(yielded.args), last)
        elif yielded is not None:
            loop.body.append(last)  # pl.yield_ reports the mismatch
        after: List[ast.stmt] = []
        if matches and isinstance(results, ast.Name) and len(carried) == 1:
            after.append(_assign(results, _located(ast.Name(carried[0], ast.Load()), last), last))
        elif matches and isinstance(results, (ast.Tuple, ast.List)):
            if len(results.elts) == len(carried):
                for target, name in zip(results.elts, carried):
                    after.append(_assign(target, _located(ast.Name(name, ast.Load()), last), last))
        return before + [loop] + after


def _array_call(node: ast.AST, name: str) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == name
        and isinstance(node.func.value, ast.Attribute)
        and node.func.value.attr == "array"
    )


def _task_dummy(node: ast.AST) -> bool:
    """Whether `node` is pypto's barrier `pl.system.task_dummy(deps=[...])`."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "task_dummy"
        and isinstance(node.func.value, ast.Attribute)
        and node.func.value.attr == "system"
    )


def _task_seeds(tree: ast.FunctionDef, namespace: Dict[str, Any]) -> set:
    """The names pypto binds to task ids: `with pl.at(...) as tid`, the last
    target of `..., tid = pl.submit(...)`, `pl.array.create(n, pl.TASK_ID)`,
    a barrier `pl.system.task_dummy(deps=[...])`."""
    seeds = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.withitem) and isinstance(node.optional_vars, ast.Name):
            seeds.add(node.optional_vars.id)
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
            continue
        target = node.targets[0]
        if (
            isinstance(target, ast.Tuple)
            and target.elts
            and isinstance(target.elts[-1], ast.Name)
            and _qualname(node.value, namespace) == "submit"
        ):
            seeds.add(target.elts[-1].id)
        if isinstance(target, ast.Name) and _task_dummy(node.value):
            seeds.add(target.id)
        if (
            isinstance(target, ast.Name)
            and _array_call(node.value, "create")
            and len(node.value.args) == 2
            and isinstance(node.value.args[1], ast.Attribute)
            and node.value.args[1].attr == "TASK_ID"
        ):
            seeds.add(target.id)
    return seeds


class _Tasks(ast.NodeTransformer):
    """pypto's task ids (`with pl.at(...) as tid`, `out, tid =
    pl.submit(...)`) carried only to name `deps=`: the statements that only
    move them (`prev = None`, `tids = pl.array.create(n, pl.TASK_ID)`,
    `tids[i] = tid`) are dropped, as `deps=` is (blockpipe orders tasks by
    their tensors)."""

    def __init__(self, tree: ast.FunctionDef, seeds: set):
        self.tasks = set(seeds)
        changed = True
        while changed:  # names that hold task ids, from ones that do
            changed = False
            for node in ast.walk(tree):
                if isinstance(node, ast.Assign) and len(node.targets) == 1:
                    target = node.targets[0]
                    if (
                        isinstance(target, ast.Name)
                        and target.id not in self.tasks
                        and self._moves(node.value, none=False)
                    ):
                        self.tasks.add(target.id)
                        changed = True

    def _moves(self, node: ast.AST, none: bool = True) -> bool:
        """Whether a value is a task id (or an array of them) moved."""
        if _array_call(node, "create") and len(node.args) == 2:
            return isinstance(node.args[1], ast.Attribute) and node.args[1].attr == "TASK_ID"
        if _array_call(node, "update_element") and node.args:
            return self._task(node.args[0], none=False)
        if _task_dummy(node):  # a barrier: tasks stay ordered by their tensors
            return True
        if isinstance(node, ast.Subscript):  # `prev = tids[1]`
            return self._task(node.value, none=False)
        return self._task(node, none)

    def _task(self, node: ast.AST, none: bool = True) -> bool:
        if none and isinstance(node, ast.Constant) and node.value is None:
            return True
        return isinstance(node, ast.Name) and node.id in self.tasks

    def visit_Assign(self, node: ast.Assign):
        if len(node.targets) == 1:
            target = node.targets[0]
            base = target.value if isinstance(target, ast.Subscript) else target
            if isinstance(base, ast.Name) and base.id in self.tasks and self._moves(node.value):
                return None
        return node
