"""Reading a `@pl.function`'s source: its AST, where it sits in its file,
the globals its body may name, and AST queries the lowering shares."""

from __future__ import annotations

import ast
import inspect
import linecache
import sys
import textwrap
import types
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

from blockpipe.errors import CompileError
from blockpipe.language.program import FunctionSpec


@dataclass
class Source:
    """A function's parsed source and how to map its positions back."""

    tree: ast.FunctionDef
    file: str
    line_offset: int
    col_offset: int
    globals: Dict[str, Any]
    self_calls: Tuple[str, ...] = ()
    # Whether it pops tiles (pl.tpop_from_*): it is built after the group's
    # halves that do not, whose pushes give its pops their types.
    pops: bool = False

    def position(self, node: ast.AST) -> Tuple[int, int]:
        return (
            getattr(node, "lineno", 1) + self.line_offset,
            getattr(node, "col_offset", 0) + self.col_offset + 1,
        )

    def error(self, node: ast.AST, message: str) -> CompileError:
        """A CompileError at `node` of this source."""
        line, col = self.position(node)
        return CompileError(message, file=self.file, line=line, column=col)


@dataclass(frozen=True)
class _Parsed:
    """What a function's source text gives, independent of its globals."""

    tree: ast.FunctionDef
    file: str
    line_offset: int
    col_offset: int
    self_calls: Tuple[str, ...]
    pops: bool


# Reading and parsing a function's source (inspect's tokenizer, ast.parse)
# is most of the time of a compile that builds nothing; the result depends
# only on the function's code object, so it is kept per code object (a
# redefined function has a new one). Bounded: a long session redefining
# functions does not grow it without end.
_PARSED_LIMIT = 512
_parsed_by_code: OrderedDict[Any, _Parsed] = OrderedDict()


# The file name Python gives the code of `python -c` (and of an exec()'d
# string compiled without one).
_COMMAND_FILE = "<string>"
# Whether the text of `python -c` was put in linecache as _COMMAND_FILE.
_command_registered = False


def _source_lines(fn) -> Tuple[List[str], int, Optional[str]]:
    """`fn`'s source lines, its first line's number and its file, as
    inspect.getsourcelines gives them; for a function of `python -c`, from
    the command's text."""
    global _command_registered
    code = fn.__code__
    if code.co_filename == _COMMAND_FILE:
        text = _command_text(code)
        if text is not None:
            lines = text.splitlines(True)
            # For the errors' excerpts and the sources of the helpers it calls.
            linecache.cache[_COMMAND_FILE] = (len(text), None, lines, _COMMAND_FILE)
            _command_registered = True
            first = code.co_firstlineno
            return inspect.getblock(lines[first - 1 :]), first, _COMMAND_FILE
        if _command_registered:  # an exec()'d string's: linecache holds the command's
            raise OSError("source code not available")
    lines, first = inspect.getsourcelines(fn)
    return lines, first, inspect.getsourcefile(fn)


def _command_text(code: types.CodeType) -> Optional[str]:
    """The text of `python -c` when `code` was compiled from it. Python
    keeps it only in sys.orig_argv, which inspect does not read. An exec()'d
    string is also "<string>": the code must be found in the text's own
    compiled code (its name, first line and bytecode)."""
    argv = getattr(sys, "orig_argv", [])
    if sys.argv[:1] != ["-c"] or "-c" not in argv[1:-1]:
        return None
    text = argv[argv.index("-c", 1) + 1]
    try:
        pending = [compile(text, _COMMAND_FILE, "exec", dont_inherit=True)]
    except (SyntaxError, ValueError):
        return None
    while pending:
        found = pending.pop()
        if (found.co_name, found.co_firstlineno, found.co_code) == (
            code.co_name,
            code.co_firstlineno,
            code.co_code,
        ):
            return text
        pending += [c for c in found.co_consts if isinstance(c, types.CodeType)]
    return None


def _parse_source(spec: FunctionSpec, default_file: str) -> _Parsed:
    fn = spec.pyfunc
    key = (fn.__code__, default_file)
    parsed = _parsed_by_code.get(key)
    if parsed is not None:
        _parsed_by_code.move_to_end(key)
        return parsed
    try:
        lines, first_line, file = _source_lines(fn)
    except (OSError, TypeError):
        raise CompileError(
            f"cannot read the source of function '{spec.name}': blockpipe compiles a function "
            "from its source text, and Python keeps none for code given to exec(), read from "
            "standard input or typed at an interactive prompt; define the program in a .py file and import or run that "
            "(or, for exec(), put the text in linecache.cache under the file name given to "
            "compile())"
        ) from None
    file = file or default_file
    source = "".join(lines)
    dedented = textwrap.dedent(source)
    indent = len(lines[0]) - len(lines[0].lstrip()) if lines else 0
    module = ast.parse(dedented)
    tree = next(n for n in module.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))
    if isinstance(tree, ast.AsyncFunctionDef):
        raise CompileError(f"function '{spec.name}' must not be async", file=file, line=first_line)
    parsed = _Parsed(tree, file, first_line - 1, indent, tuple(self_calls(tree)), _has_pops(tree))
    _parsed_by_code[key] = parsed
    if len(_parsed_by_code) > _PARSED_LIMIT:
        _parsed_by_code.popitem(last=False)
    return parsed


def parse_function(spec: FunctionSpec, default_file: str) -> Source:
    if spec.source is not None:
        return spec.source
    parsed = _parse_source(spec, default_file)
    fn = spec.pyfunc
    # Globals are read at every compile: a changed module constant counts.
    globals_ = dict(fn.__globals__)
    if fn.__closure__:
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
            try:
                globals_[name] = cell.cell_contents
            except ValueError:
                pass
    return Source(
        _rewritten(parsed.tree, globals_),
        parsed.file,
        parsed.line_offset,
        parsed.col_offset,
        globals_,
        parsed.self_calls,
        parsed.pops,
    )


# The tree with pypto's spellings rewritten (rewrites.py), per parsed tree
# and the objects the names its calls start from stand for (the rewrite
# depends on which calls are pl.store, pl.yield_, ...): a @pl.jit function
# is read again at every call.
_rewritten_trees: OrderedDict[Any, Tuple[ast.FunctionDef, ast.FunctionDef]] = OrderedDict()
_call_roots: Dict[int, Tuple[Any, Tuple[str, ...]]] = {}


def _rewritten(tree: ast.FunctionDef, globals_: Dict[str, Any]) -> ast.FunctionDef:
    from blockpipe.language.rewrites import rewrite

    roots = _call_roots.get(id(tree))
    if roots is None or roots[0] is not tree:
        names = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                func = node.func
                while isinstance(func, ast.Attribute):
                    func = func.value
                if isinstance(func, ast.Name):
                    names.add(func.id)
        roots = _call_roots[id(tree)] = (tree, tuple(sorted(names)))
    key = (id(tree), tuple(id(globals_.get(n)) for n in roots[1]))
    found = _rewritten_trees.get(key)
    if found is not None and found[0] is tree:
        _rewritten_trees.move_to_end(key)
        return found[1]
    result = rewrite(tree, globals_)
    _rewritten_trees[key] = (tree, result)
    if len(_rewritten_trees) > _PARSED_LIMIT:
        _rewritten_trees.popitem(last=False)
    if len(_call_roots) > 4 * _PARSED_LIMIT:
        _call_roots.clear()
    return result


def _has_pops(tree: ast.FunctionDef) -> bool:
    return any(
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr.startswith("tpop_from_")
        for node in ast.walk(tree)
    )


def self_calls(tree: ast.FunctionDef) -> List[str]:
    """The names of the program's functions `tree` calls (`self.name(...)`),
    in order."""
    names = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "self"
        ):
            names.append(node.func.attr)
    return names


def assigned_names(stmts: Sequence[ast.stmt]) -> List[str]:
    names: List[str] = []
    for stmt in stmts:
        for node in ast.walk(stmt):
            targets = []
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
                targets = [node.target]
            for target in targets:
                for sub in ast.walk(target):
                    if isinstance(sub, ast.Name) and sub.id not in names:
                        names.append(sub.id)
    return names


def assignment_of(stmts: Sequence[ast.stmt], name: str) -> Optional[ast.AST]:
    """The first statement among `stmts` (or nested in them) that assigns `name`."""
    for stmt in stmts:
        for node in ast.walk(stmt):
            targets = (
                node.targets
                if isinstance(node, ast.Assign)
                else ([node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else [])
            )
            if any(
                isinstance(sub, ast.Name) and sub.id == name for t in targets for sub in ast.walk(t)
            ):
                return node
    return None


def lookup_static(node: ast.AST, namespace: Dict[str, Any]):
    """The value of a constant, a name or a dotted name (`pl.Level.CORE_GROUP`)
    in `namespace`, or None."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return namespace.get(node.id)
    if isinstance(node, ast.Attribute):
        base = lookup_static(node.value, namespace)
        return None if base is None else getattr(base, node.attr, None)
    return None
