"""Scopes outlined into kernels: pypto's `pl.FunctionType.Opaque` functions
and `with pl.at(level=pl.Level.CORE_GROUP):` scopes.

A scope's body works on tensors with tile operations (`pl.add(a, b)` on two
tensors, `pl.slice(c, shape, offsets)`, `pl.assemble(c, tile, offsets)`).
Each scope becomes an InCore kernel of its own, named `<function>_incore_<i>`
(or the scope's `name_hint=`), taking the function's parameters the body
names; a parameter the body assigns (`c = pl.assemble(c, ...)`) is written,
so the kernel takes it InOut (Out if it was declared Out) and returns it.
The function becomes an orchestration that launches each kernel where its
scope was: on one block for `pl.at`, on `n` for `for i in pl.spmd(n)` (whose
variable is the block index in the kernel). Inside an outlined kernel a
tensor used where a tile is expected is loaded whole.

Statements keep their positions in the user's file, so errors in a scope
point at the user's line.
"""

from __future__ import annotations

import ast
import copy
import types as _types
from typing import Any, Callable, Dict, List, Optional, Tuple

from blockpipe.language.captures import assigned as _assigned
from blockpipe.language.captures import read_first, recomputed_before, stored_aliases
from blockpipe.language.program import FunctionSpec
from blockpipe.language.scope_args import ScopeArgs
from blockpipe.language.source import Source
from blockpipe.language.source import lookup_static as _static
from blockpipe.language.types import (
    CAPTURED,
    FunctionType,
    ParamDirection,
    ParamType,
    ScalarType,
    ShapelessTensor,
    Split,
    SplitMode,
    TensorType,
    param_annotation,
)
from blockpipe.language.unsupported import unsupported_in
from blockpipe.language.values import LoweringError


def _names(stmts) -> List[str]:
    seen: List[str] = []
    for stmt in stmts:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and node.id not in seen:
                seen.append(node.id)
    return seen


def _at(node: ast.AST, namespace) -> bool:
    from blockpipe.language import ops

    return isinstance(node, ast.Call) and ops.op_of(_static(node.func, namespace)) is ops.OPS.get(
        "at"
    )


def _spmd(node: ast.AST, namespace) -> bool:
    from blockpipe.language import ops

    return isinstance(node, ast.Call) and ops.op_of(_static(node.func, namespace)) is ops.OPS.get(
        "spmd"
    )


def _assembly(node: ast.AST, namespace) -> bool:
    """`t = pl.assemble(t, part, offsets)` as a statement: outside a scope,
    in an orchestration, a tensor copied into a window of another, which
    only a kernel can do (pypto's orchestration-level tensor.assemble)."""
    from blockpipe.language import ops

    value = node.value if isinstance(node, (ast.Assign, ast.Expr)) else None
    return isinstance(value, ast.Call) and ops.op_of(_static(value.func, namespace)) is ops.OPS.get(
        "assemble"
    )


def _scope_body(node: ast.stmt) -> List[ast.stmt]:
    """A scope's statements: a `with` or `for` scope's body, or the
    assembly statement itself."""
    return node.body if isinstance(node, (ast.With, ast.For)) else [node]


def _self_call(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "self"
    )


def _launches_only(body) -> bool:
    """Whether a pl.spmd body is the orchestration's own form: calls of the
    program's kernels."""
    for stmt in body:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue
        value = stmt.value if isinstance(stmt, (ast.Expr, ast.Assign, ast.AnnAssign)) else None
        if not _self_call(value):
            return False
    return True


class Outliner(ScopeArgs):
    """Outlines the scopes of one function."""

    def __init__(
        self,
        spec: FunctionSpec,
        source: Source,
        scope: Dict[str, Any],
        taken: Callable[[str], bool],
    ):
        self.spec = spec
        self.source = source
        self.namespace = dict(source.globals)
        self.namespace.update(scope)
        self.scope = scope
        self.taken = taken
        self.tree = source.tree
        self.params = [a.arg for a in self.tree.args.args[1:]]
        annotations = spec.pyfunc.__annotations__
        self.annotations = {p: self._evaluate(annotations.get(p)) for p in self.params}
        self.annotations["return"] = annotations.get("return")
        self.kernels: List[Tuple[FunctionSpec, Source]] = []

    def error(self, node, message: str) -> LoweringError:
        return LoweringError(node, message)

    def _evaluate(self, ann):
        if isinstance(ann, str):
            try:
                ann = eval(ann, dict(self.source.globals), self.scope)  # the user's own annotation
            except Exception:  # noqa: BLE001 - the lowering reports it at the parameter
                return ann
        return param_annotation(ann)

    # ------------------------------------------------------------------ entry

    def run(self) -> Optional[List[Tuple[FunctionSpec, Source]]]:
        """The functions replacing this one (the orchestration first, then
        its kernels), or None when it has no scope to outline."""
        from blockpipe.language.inline_scopes import ScopeInliner

        self.body = ScopeInliner(self).block(self.tree.body)
        # Names the function sets outside its scopes (a scope may read them).
        self.outer = [n for n in _assigned(self._outside(self.body)) if n not in self.params]
        # Names set in the function's loops and ifs: their value at a scope
        # is not the top-level statements', so the kernel takes them.
        self.varying = set(
            _assigned([s for s in self._outside(self.body) if isinstance(s, (ast.For, ast.If))])
        )
        # ... and the names a scope gives a tensor it stores into: the
        # orchestration binds them after its launch.
        for node in (n for stmt in self.body for n in ast.walk(stmt)):
            if self.is_scope(node):
                self.outer += [
                    a
                    for a, _ in stored_aliases(_scope_body(node), self.namespace)
                    if a not in self.outer and a not in self.params
                ]
        self.written: List[str] = []
        body = self._outline_block(self.body, self.body)
        written = self.written
        if not self.kernels:
            if self.spec.kind is FunctionType.Opaque:
                self._report_misused_scopes()
                raise self.error(
                    self.tree.decorator_list[0] if self.tree.decorator_list else self.tree,
                    f"Opaque function '{self.spec.name}' has no scope to run: put "
                    "its work in 'with pl.at(level=pl.Level.CORE_GROUP):' or "
                    "'for i in pl.spmd(n):'",
                )
            return None
        tree = copy.copy(self.tree)
        tree.body = body
        tree.decorator_list = []
        annotations = dict(self.spec.pyfunc.__annotations__)
        for name in written:
            annotations[name] = self._written(self.annotations[name])
        orchestration = FunctionSpec(
            self._pyfunc(self.spec.name, annotations), FunctionType.Orchestration
        )
        return [(orchestration, self._source(tree))] + self.kernels

    def _report_misused_scopes(self) -> None:
        """A misused `with pl.cluster(...)` (left as written by rewrites.py)
        is why an Opaque function has no scope: report it instead."""
        from blockpipe.language.transparent_scopes import with_misuse

        for item in (n for n in ast.walk(self.tree) if isinstance(n, ast.withitem)):
            if not isinstance(item.context_expr, ast.Call):
                continue
            try:
                target = _static(item.context_expr.func, self.namespace)
            except Exception:  # noqa: BLE001 - a user's attribute may raise anything
                continue
            if (misuse := with_misuse(item, target)) is not None:
                raise self.error(*misuse)

    # ------------------------------------------------------------------ scopes

    def is_scope(self, node: ast.AST, namespace=None) -> bool:
        """Whether a statement is a scope this function outlines."""
        namespace = self.namespace if namespace is None else namespace
        if isinstance(node, ast.With) and len(node.items) == 1:
            expr = node.items[0].context_expr
            return _at(expr, namespace) or (
                self.spec.kind is FunctionType.Opaque
                and _spmd(expr, namespace)
                and not _launches_only(node.body)
            )
        return (
            isinstance(node, ast.For)
            and self.spec.kind is FunctionType.Opaque
            and _spmd(node.iter, namespace)
            and not _launches_only(node.body)
        ) or _assembly(node, namespace)

    def _outside(self, stmts: List[ast.stmt]) -> List[ast.stmt]:
        """The statements of a block outside its scopes (loops and ifs with
        their bodies' statements outside scopes)."""
        out: List[ast.stmt] = []
        for stmt in stmts:
            if self.is_scope(stmt):
                continue
            if isinstance(stmt, (ast.For, ast.If)):
                shell = copy.copy(stmt)
                shell.body = self._outside(stmt.body)
                shell.orelse = self._outside(stmt.orelse)
                out.append(shell)
            else:
                out.append(stmt)
        return out

    def _outline_block(self, stmts: List[ast.stmt], top: List[ast.stmt]) -> List[ast.stmt]:
        """A block with its scopes (also those in its loops and ifs)
        replaced by launches; `top` is the function's top-level statement
        the block sits in, or the top-level block itself."""
        body: List[ast.stmt] = []
        for stmt in stmts:
            before = top[: top.index(stmt)] if stmts is top else top
            outlined = self._scope(stmt, before)
            if outlined is not None:
                launch, kernel_written = outlined
                body += launch
                self.written += [n for n in kernel_written if n not in self.written]
            elif isinstance(stmt, (ast.For, ast.If)) and any(
                self.is_scope(n) for n in ast.walk(stmt)
            ):
                enclosing = before if stmts is top else top
                shell = copy.copy(stmt)
                shell.body = self._outline_block(stmt.body, enclosing)
                shell.orelse = self._outline_block(stmt.orelse, enclosing)
                body.append(shell)
            else:
                body.append(stmt)
        return body

    def _scope(self, stmt: ast.stmt, before: List[ast.stmt]):
        if (
            isinstance(stmt, ast.With)
            and len(stmt.items) == 1
            and _at(stmt.items[0].context_expr, self.namespace)
        ):
            call = stmt.items[0].context_expr
            name_hint, split = self._at_args(call)
            task = stmt.items[0].optional_vars
            if task is not None:
                self._task(stmt, task)
            return self._outline(stmt, before, stmt.body, None, None, name_hint, split)
        if _assembly(stmt, self.namespace):
            # A kernel of its own, launched on one block, as a pl.at scope.
            return self._outline(stmt, before, [stmt], None, None, None, None)
        if self.spec.kind is not FunctionType.Opaque:
            return None  # an orchestration's pl.spmd launches kernels
        if (
            isinstance(stmt, ast.With)
            and len(stmt.items) == 1
            and _spmd(stmt.items[0].context_expr, self.namespace)
            and not _launches_only(stmt.body)
        ):
            call, hint, split = self._spmd_args(stmt.items[0].context_expr)
            return self._outline(stmt, before, stmt.body, call, None, hint, split)
        if (
            isinstance(stmt, ast.For)
            and _spmd(stmt.iter, self.namespace)
            and not _launches_only(stmt.body)
        ):
            if not isinstance(stmt.target, ast.Name):
                raise self.error(stmt.target, "the variable of pl.spmd must be a name")
            call, hint, split = self._spmd_args(stmt.iter)
            return self._outline(stmt, before, stmt.body, call, stmt.target.id, hint, split)
        return None

    def _task(self, stmt: ast.With, task: ast.expr) -> None:
        """`with pl.at(...) as tid:` names the scope's task, for pypto's
        `deps=[tid]`; blockpipe orders tasks by the tensors they read and
        write, so the name may be bound but not used."""
        if not isinstance(task, ast.Name):
            raise self.error(task, "'with pl.at(...) as name' takes a single name")
        # In pypto's `deps=[tid]`, that keyword is reported at its scope.
        deps = {
            id(n)
            for node in ast.walk(self.tree)
            if isinstance(node, ast.keyword) and node.arg == "deps"
            for n in ast.walk(node.value)
        }
        for node in ast.walk(self.tree):
            if (
                isinstance(node, ast.Name)
                and node.id == task.id
                and node is not task
                and id(node) not in deps
            ):
                raise self.error(
                    node,
                    f"'{task.id}' is the task of the pl.at scope at line "
                    f"{self.source.position(stmt)[0]}; blockpipe orders tasks by the tensors "
                    "they read and write and has no task ids to use",
                )

    def _outline(self, stmt, before, body, spmd_call, block_var, name_hint, split: Optional[Split]):
        index = len(self.kernels)
        name = name_hint or f"{self.spec.name}_incore_{index}"
        if name == self.spec.name:
            # pypto names a @pl.jit function's only scope after it: the
            # kernel takes the name with a suffix.
            name = f"{name}_kernel"
        if self.taken(name) or name in (k.name for k, _ in self.kernels):
            raise self.error(
                stmt,
                f"the kernel outlined here would be named '{name}', which the program "
                "already has; give the scope a name_hint=",
            )
        used = _names(body)
        assigned = _assigned(body)
        # A name the function sets outside its scopes: computed from shapes
        # and numbers (`M, N = a.shape`), the kernel computes it again;
        # otherwise (a tensor the function made, a loop variable) the
        # kernel takes it as a parameter of the value's type at the launch.
        reads = [n for n in used if n in self.outer and read_first(body, n)]
        prologue = recomputed_before(
            before,
            [n for n in reads if n not in assigned and n not in self.varying],
            self.params,
            self.namespace,
        )
        recomputed = set(_assigned(prologue))
        used += [n for n in _names(prologue) if n not in used]
        captured = [n for n in reads if n not in recomputed]
        params = [p for p in self.params if p in used]
        # A tensor is written where it is assigned, or stored into with the
        # result named otherwise (`o2 = pl.store(t, offs, o)`).
        stored = [o for _, o in stored_aliases(body, self.namespace)]
        written = [p for p in params if p in assigned or p in stored]
        captured_written = [n for n in captured if n in assigned or n in stored]
        for p in params:
            ann = self.annotations[p]
            found = unsupported_in(ann)
            if found is not None:
                # Such as a dtype blockpipe lacks: named at the parameter.
                param = self.tree.args.args[1 + self.params.index(p)]
                raise self.error(param.annotation or param, found.message)
        for p in written:
            ann = self.annotations[p]
            if not isinstance(ann, (TensorType, ParamType, ShapelessTensor)):
                node = next(
                    node
                    for s in body
                    for node in ast.walk(s)
                    if isinstance(node, ast.Name) and node.id == p
                )
                if not isinstance(ann, ScalarType):
                    param = self.tree.args.args[1 + self.params.index(p)]
                    raise self.error(
                        param.annotation or param,
                        f"the scope at line {self.source.position(stmt)[0]} writes '{p}', "
                        f"whose annotation {ann!r} is not a tensor",
                    )
                raise self.error(
                    node, f"the scope assigns '{p}', a scalar parameter; name the result otherwise"
                )

        loc = stmt
        kernel_body: List[ast.stmt] = []
        if block_var is not None:
            kernel_body.append(
                self._located(ast.parse(f"{block_var} = pl.tile.get_block_idx()").body[0], loc)
            )
            self._bind_pl(kernel_body[-1])
        kernel_body += [copy.deepcopy(s) for s in prologue]
        kernel_body += body
        outputs = written + captured_written
        if outputs:
            ret = ast.Return(value=self._names_expr(outputs, loc))
            kernel_body.append(self._located(ret, body[-1]))
        args = ast.arguments(
            posonlyargs=[],
            args=[ast.arg("self")] + [ast.arg(p) for p in params + captured],
            vararg=None,
            kwonlyargs=[],
            kw_defaults=[],
            kwarg=None,
            defaults=[],
        )
        for a in args.args:
            self._located(a, loc)
        fdef = ast.FunctionDef(
            name=name, args=args, body=kernel_body, decorator_list=[], returns=None
        )
        ast.copy_location(fdef, loc)  # its body keeps the user's positions
        annotations = {p: self._kernel_param(p, p in written) for p in params}
        for n in captured:
            annotations[n] = (
                ParamType(ParamDirection.InOut, CAPTURED) if n in captured_written else CAPTURED
            )
        kernel = FunctionSpec(
            self._pyfunc(name, annotations),
            FunctionType.InCore,
            tensor_ops=True,
            split=split.mode if split is not None else SplitMode.NONE,
            slot_num=split.slot_num if split is not None else None,
        )
        source = self._source(fdef, getattr(stmt, "_bp_source", None))
        self.kernels.append((kernel, source))

        # The launch where the scope was.
        call = ast.Call(
            func=ast.Attribute(value=ast.Name("self", ast.Load()), attr=name, ctx=ast.Load()),
            args=[ast.Name(p, ast.Load()) for p in params + captured],
            keywords=[],
        )
        launch_stmt: ast.stmt
        if outputs:
            target = self._names_expr(outputs, loc, ast.Store())
            launch_stmt = ast.Assign(targets=[target], value=call)
        else:
            launch_stmt = ast.Expr(value=call)
        if spmd_call is not None:
            spmd = copy.deepcopy(spmd_call)
        else:
            spmd = ast.Call(
                func=ast.Attribute(value=ast.Name("pl", ast.Load()), attr="spmd", ctx=ast.Load()),
                args=[ast.Constant(1)],
                keywords=[],
            )
            self._bind_pl(spmd)
        launch = ast.With(
            items=[ast.withitem(context_expr=spmd, optional_vars=None)], body=[launch_stmt]
        )
        # A name the scope sets to a tensor it stores into (`o2 =
        # pl.store(t, offs, o)`) is that tensor after it, as in pypto.
        aliases = [
            self._located(
                ast.Assign(targets=[ast.Name(alias, ast.Store())], value=ast.Name(o, ast.Load())),
                loc,
            )
            for alias, o in stored_aliases(body, self.namespace)
            if o in outputs and alias not in outputs
        ]
        return [self._located(launch, loc)] + aliases, written

    # ----------------------------------------------------------------- helpers

    def _bind_pl(self, node: ast.AST) -> None:
        """Synthesized code names the DSL as `pl`: make sure that resolves."""
        import blockpipe.language as pl

        if not any(isinstance(n, ast.Name) and n.id == "pl" for n in ast.walk(node)):
            return
        if self.namespace.get("pl") is not pl:
            # The user imported the DSL under another name: use a private one.
            for n in ast.walk(node):
                if isinstance(n, ast.Name) and n.id == "pl":
                    n.id = "__bp_language"
            self.source.globals["__bp_language"] = pl

    def _names_expr(self, names: List[str], loc, ctx=None):
        ctx = ctx or ast.Load()
        if len(names) == 1:
            return self._located(ast.Name(names[0], ctx), loc)
        return self._located(
            ast.Tuple([self._located(ast.Name(n, ctx), loc) for n in names], ctx), loc
        )

    @staticmethod
    def _located(node, loc):
        for n in ast.walk(node):
            ast.copy_location(n, loc)
            if hasattr(loc, "end_lineno"):
                n.end_lineno, n.end_col_offset = loc.end_lineno, loc.end_col_offset
        return node

    def _written(self, ann):
        """A parameter a scope writes: In becomes InOut (Out stays Out)."""
        if isinstance(ann, (TensorType, ShapelessTensor)):
            return ParamType(ParamDirection.InOut, ann)
        return ann

    def _kernel_param(self, name: str, written: bool):
        """In the kernel a parameter the scope writes is InOut (it may read
        it first), any other one an input."""
        ann = self.annotations[name]
        inner = ann.inner if isinstance(ann, ParamType) else ann
        return (
            ParamType(ParamDirection.InOut, inner)
            if written and isinstance(inner, (TensorType, ShapelessTensor))
            else inner
        )

    def _pyfunc(self, name: str, annotations: Dict[str, Any]):
        return _types.SimpleNamespace(__name__=name, __annotations__=annotations)

    def _source(self, tree: ast.FunctionDef, origin: Optional[Source] = None) -> Source:
        """The Source of a function made here: the function's own, or that
        of the helper in another file a scope was inlined from."""
        s = origin or self.source
        calls = tuple(n.func.attr for n in ast.walk(tree) if _self_call(n))
        return Source(tree, s.file, s.line_offset, s.col_offset, s.globals, calls, False)


def outline_program(
    functions: Dict[str, FunctionSpec],
    sources: Dict[str, Source],
    scope: Dict[str, Any],
    compile_error: Callable[[Source, LoweringError], Exception],
):
    """Replaces each Opaque function, and each orchestration with a scope to
    outline, by an orchestration and its kernels (in place, keeping the
    program's order)."""
    if not any(
        s.kind in (FunctionType.Opaque, FunctionType.Orchestration) for s in functions.values()
    ):
        return
    out_specs: Dict[str, FunctionSpec] = {}
    out_sources: Dict[str, Source] = {}
    for name, spec in functions.items():
        replaced = None
        if spec.kind in (FunctionType.Opaque, FunctionType.Orchestration):
            try:
                replaced = Outliner(
                    spec, sources[name], scope, lambda n: n in functions or n in out_specs
                ).run()
            except LoweringError as err:
                raise compile_error(sources[name], err) from None
        if replaced is None:
            out_specs[name], out_sources[name] = spec, sources[name]
            continue
        # Kernels first: the orchestration launches them.
        for new_spec, new_source in replaced[1:] + replaced[:1]:
            out_specs[new_spec.name], out_sources[new_spec.name] = new_spec, new_source
    functions.clear()
    functions.update(out_specs)
    sources.clear()
    sources.update(out_sources)
