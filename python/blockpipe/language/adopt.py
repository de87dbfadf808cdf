"""`@pl.function`s defined outside a `@pl.program` class (at module level, or
in the factory that makes the class) and called by the program's functions
become functions of that program, as pypto makes them: a kernel is launched,
not inlined. Each program that calls one gets its own copy, so one kernel
serves several programs.

Only calls from functions that launch or call functions (orchestrations,
Opaque functions, groups, pipelines) are adopted, and in the plain helpers
those functions inline; a kernel calling such a function keeps inlining it,
as it inlines any plain helper. The adopted function is made a method
(`self` first, calls of it written `self.name(...)`), so the rest of the
lowering sees one kind of call.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import inspect
import textwrap
import types
from typing import Dict, List, Optional, Set, Tuple

from blockpipe.language.program import FunctionSpec
from blockpipe.language.source import (
    Source,
    assigned_names,
    lookup_static,
    parse_function,
    self_calls,
)
from blockpipe.language.types import FunctionType

_CALLING_KINDS = (
    FunctionType.Orchestration,
    FunctionType.Opaque,
    FunctionType.Group,
    FunctionType.Pipeline,
)


def _decorated(target) -> Optional[FunctionSpec]:
    spec = (
        getattr(target, "__bp_function__", None) if isinstance(target, types.FunctionType) else None
    )
    return spec if isinstance(spec, FunctionSpec) else None


def _local_names(tree: ast.FunctionDef) -> Set[str]:
    params = {a.arg for a in tree.args.args + tree.args.kwonlyargs}
    return params | set(assigned_names(tree.body))


def _callees(tree: ast.FunctionDef, globals_) -> List[Tuple[ast.Call, object]]:
    """The calls in `tree` of a name or dotted name that is not local, and
    what each names."""
    local = _local_names(tree)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        root = node.func
        while isinstance(root, ast.Attribute):
            root = root.value
        if not isinstance(root, ast.Name) or root.id in local or root.id == "self":
            continue
        target = lookup_static(node.func, globals_)
        if target is not None:
            found.append((node, target))
    return found


def _self_call(name: str, like: ast.AST) -> ast.Attribute:
    attr = ast.Attribute(value=ast.Name("self", ast.Load()), attr=name, ctx=ast.Load())
    for n in ast.walk(attr):
        ast.copy_location(n, like)
    return attr


class _Adoption:
    def __init__(self, functions: Dict[str, FunctionSpec], sources: Dict[str, Source], file: str):
        self.functions = functions
        self.sources = sources
        self.file = file
        # The program's function for each Python function already in it.
        self.names: Dict[int, str] = {id(spec.pyfunc): n for n, spec in functions.items()}
        self.adopted: List[str] = []

    def name_for(self, fn, spec: FunctionSpec, source: Source, call: ast.Call) -> str:
        name = self.names.get(id(fn))
        if name is not None:
            return name
        name = spec.name
        if name in self.functions:
            other = self.functions[name]
            where = _where(other)
            raise source.error(
                call,
                f"'{name}' ({_where(spec)}) and the program's function '{name}'"
                f"{f' ({where})' if where else ''} have one name; rename one of them",
            )
        own = parse_function(spec, self.file)
        tree = copy.deepcopy(own.tree)
        first = ast.arg("self")
        ast.copy_location(first, tree)
        tree.args.args.insert(0, first)
        adopted = dataclasses.replace(
            spec,
            source=Source(
                tree,
                own.file,
                own.line_offset,
                own.col_offset,
                own.globals,
                own.self_calls,
                own.pops,
            ),
        )
        self.functions[name] = adopted
        self.sources[name] = adopted.source
        self.names[id(fn)] = name
        self.adopted.append(name)
        return name

    def visit(self, name: str) -> None:
        """Adopts what `name` calls; its calls of adopted functions become
        self-calls."""
        spec = self.functions[name]
        if spec.kind not in _CALLING_KINDS or spec.unsupported:
            return
        source = self.sources[name]
        tree = copy.deepcopy(source.tree)
        changed = False
        through_helpers: List[str] = []
        for call, target in _callees(tree, source.globals):
            decorated = _decorated(target)
            if decorated is not None:
                call.func = _self_call(self.name_for(target, decorated, source, call), call.func)
                changed = True
            elif (
                isinstance(target, types.FunctionType)
                and getattr(target, "__bp_function__", None) is None
            ):
                through_helpers += self.helper_calls(target, source, call, [])
        if not changed and not through_helpers:
            return
        calls = tuple(self_calls(tree))
        new = dataclasses.replace(
            source,
            tree=tree if changed else source.tree,
            self_calls=calls + tuple(c for c in through_helpers if c not in calls),
        )
        self.sources[name] = new
        if spec.source is not None:
            self.functions[name] = dataclasses.replace(spec, source=new)

    def helper_calls(self, helper, source: Source, call: ast.Call, stack: list) -> List[str]:
        """The adopted functions a plain helper (inlined into a calling
        function) calls, directly or through its own helpers; the call
        itself is made at lowering (Calls.call)."""
        if helper in stack or len(stack) > 16:
            return []
        try:
            lines, _ = inspect.getsourcelines(helper)
            tree = ast.parse(textwrap.dedent("".join(lines)))
        except (OSError, TypeError, SyntaxError):
            return []
        fdef = next((n for n in tree.body if isinstance(n, ast.FunctionDef)), None)
        if fdef is None:
            return []
        globals_ = dict(helper.__globals__)
        if helper.__closure__:
            for var, cell in zip(helper.__code__.co_freevars, helper.__closure__):
                try:
                    globals_[var] = cell.cell_contents
                except ValueError:
                    pass
        names: List[str] = []
        for _call, target in _callees(fdef, globals_):
            decorated = _decorated(target)
            if decorated is not None:
                names.append(self.name_for(target, decorated, source, call))
            elif isinstance(target, types.FunctionType):
                names += self.helper_calls(target, source, call, stack + [helper])
        return names


def _where(spec: FunctionSpec) -> str:
    try:
        return f"{inspect.getsourcefile(spec.pyfunc)}:{inspect.getsourcelines(spec.pyfunc)[1]}"
    except (OSError, TypeError):
        return ""


def adopt_called_functions(
    functions: Dict[str, FunctionSpec], sources: Dict[str, Source], file: str
) -> Dict[int, str]:
    """Adds to `functions` and `sources` (in place) the `@pl.function`s
    defined outside the program that its functions call, transitively;
    returns the program's name of each Python function (by id) it holds. A name clash with a function of the program, or
    between two such functions, is a CompileError at the call."""
    adoption = _Adoption(functions, sources, file)
    pending = list(functions)
    while pending:
        name = pending.pop(0)
        before = len(adoption.adopted)
        adoption.visit(name)
        pending += adoption.adopted[before:]
    return adoption.names
