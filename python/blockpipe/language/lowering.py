"""From a `@pl.program` to `bp` IR.

Each `@pl.function` body is read from its Python AST and built op by op
through `blockpipe._core.IRBuilder`, every op at the user's file:line:col.

Lowering runs twice. The first run only observes: it records how every
`pl.load` without `target_memory=` is used (matmul operand, vector operand,
...) and which tile types are pushed into each pipe. The second run builds
the IR with those facts: a load feeding matmul's left operand lands in `Left`,
a `tpop` without annotation takes the type its peer pushes.
"""

from __future__ import annotations

import ast
import inspect
import math
import numbers
import re
import textwrap
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple, Union

from blockpipe.errors import CompileError
from blockpipe.language import ops as _ops
from blockpipe.language.program import FunctionSpec, Program
from blockpipe.language.types import (
    DType,
    FP32,
    INDEX,
    FunctionType,
    MemorySpace,
    ParamDirection,
    ParamType,
    ScalarType,
    TensorType,
    TileType,
    dynamic,
)

IRType = Union[TensorType, TileType, ScalarType]
# bp.PipeDir values, as in PipeLayout.h.
_PIPE_DIRS = {"c2v": "1 : i32", "v2c": "2 : i32"}
Literal = Union[int, float]

# The moves bp.move allows (its verifier has the same table).
_LEGAL_MOVES = {
    (MemorySpace.Mat, MemorySpace.Left),
    (MemorySpace.Mat, MemorySpace.Right),
    (MemorySpace.Acc, MemorySpace.Vec),
    (MemorySpace.Acc, MemorySpace.Mat),
    (MemorySpace.Vec, MemorySpace.Mat),
}
_KERNEL_KINDS = (FunctionType.InCore, FunctionType.AIC, FunctionType.AIV)
_CUBE_SPACES = (MemorySpace.Mat, MemorySpace.Left, MemorySpace.Right, MemorySpace.Acc)
# The type of an if's condition; not a dtype users can name.
_BOOL = ScalarType(DType("BOOL", "i1", "bool_", False))


@dataclass
class Value:
    """An SSA value of the function being built."""

    handle: int
    type: IRType
    # For a pl.load whose memory space is inferred: the key of that load
    # (of each such load, for a value an if takes from either branch).
    load_keys: Tuple[Tuple[int, int], ...] = ()


@dataclass
class Inference:
    """What the observing run learned."""

    load_uses: Dict[Tuple[int, int], Set[MemorySpace]] = field(default_factory=dict)
    # (pushing function, pipe id, direction) -> the (shape, dtype) of each
    # tile it pushes there, as the last observing run saw them.
    pushes: Dict[Tuple[str, int, str], Set[Tuple[Tuple[int, ...], DType]]] = field(default_factory=dict)


class _Error(Exception):
    def __init__(self, node: Optional[ast.AST], message: str):
        super().__init__(message)
        self.node = node
        self.message = message


@dataclass
class _Source:
    """A function's parsed source and how to map its positions back."""

    tree: ast.FunctionDef
    file: str
    line_offset: int
    col_offset: int
    globals: Dict[str, Any]
    self_calls: Tuple[str, ...] = ()

    def position(self, node: ast.AST) -> Tuple[int, int]:
        return (
            getattr(node, "lineno", 1) + self.line_offset,
            getattr(node, "col_offset", 0) + self.col_offset + 1,
        )


@dataclass(frozen=True)
class _Parsed:
    """What a function's source text gives, independent of its globals."""

    tree: ast.FunctionDef
    file: str
    line_offset: int
    col_offset: int
    self_calls: Tuple[str, ...]


# Reading and parsing a function's source (inspect's tokenizer, ast.parse)
# is most of the time of a compile that builds nothing; the result depends
# only on the function's code object, so it is kept per code object (a
# redefined function has a new one). Bounded: a long session redefining
# functions does not grow it without end.
_PARSED_LIMIT = 512
_parsed_by_code: "OrderedDict[Any, _Parsed]" = OrderedDict()


def _parse_source(spec: FunctionSpec, default_file: str) -> _Parsed:
    fn = spec.pyfunc
    key = (fn.__code__, default_file)
    parsed = _parsed_by_code.get(key)
    if parsed is not None:
        _parsed_by_code.move_to_end(key)
        return parsed
    try:
        lines, first_line = inspect.getsourcelines(fn)
        file = inspect.getsourcefile(fn) or default_file
    except (OSError, TypeError) as exc:
        raise CompileError(f"cannot read the source of function '{spec.name}': {exc}") from None
    source = "".join(lines)
    dedented = textwrap.dedent(source)
    indent = len(lines[0]) - len(lines[0].lstrip()) if lines else 0
    module = ast.parse(dedented)
    tree = next(n for n in module.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))
    if isinstance(tree, ast.AsyncFunctionDef):
        raise CompileError(f"function '{spec.name}' must not be async", file=file, line=first_line)
    parsed = _Parsed(tree, file, first_line - 1, indent, tuple(_self_calls(tree)))
    _parsed_by_code[key] = parsed
    if len(_parsed_by_code) > _PARSED_LIMIT:
        _parsed_by_code.popitem(last=False)
    return parsed


def _parse_function(spec: FunctionSpec, default_file: str) -> _Source:
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
    return _Source(parsed.tree, parsed.file, parsed.line_offset, parsed.col_offset, globals_,
                   parsed.self_calls)


def _self_calls(tree: ast.FunctionDef) -> List[str]:
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


class ProgramLowering:
    """Lowers every function of a program into one module."""

    def __init__(self, program: Program, core, inference: Inference, observing: bool,
                 tolerant: bool = False, devices: Optional[int] = None):
        self.program = program
        self.devices = devices
        self.core = core
        self.observing = observing
        self.tolerant = tolerant
        self.inference = inference
        self.sources: Dict[str, _Source] = {}
        self.signatures: Dict[str, Tuple[List[IRType], List[IRType]]] = {}
        self.param_dirs: Dict[str, List[ParamDirection]] = {}
        # The pushes this (observing) run records; a function lowered before
        # its peer looks up the peer's pushes of the previous run.
        self.recorded_pushes: Dict[Tuple[str, int, str], Set[Tuple[Tuple[int, ...], DType]]] = {}
        self.builder = core.IRBuilder(program.source_file)

    def run(self):
        for name, spec in self.program.functions.items():
            self.sources[name] = _parse_function(spec, self.program.source_file)
        placed = [f for f in self.program.functions.values() if f.device is not None]
        devices = self.devices
        if devices is None and placed:
            devices = max(f.device for f in placed) + 1
        for spec in placed:
            if spec.device >= devices:
                src = self.sources[spec.name]
                # The decorator that places it, where there is one.
                line, col = src.position(src.tree.decorator_list[0] if src.tree.decorator_list
                                         else src.tree)
                raise CompileError(f"'{spec.name}' is placed on device {spec.device}, outside the "
                                   f"mesh of {devices} devices (compile(..., devices={devices}))",
                                   file=src.file, line=line, column=col)
        if devices is not None:
            self.builder.set_module_attr("bp.num_devices", f"{devices} : i64")
        self.devices = devices
        for name in self._callees_first():
            try:
                FunctionLowering(self, self.program.functions[name], self.sources[name]).lower()
            except CompileError:
                # Only a body's errors are tolerated: a function whose
                # signature failed has none for its callers to use.
                if not self.tolerant or name not in self.signatures:
                    raise
        if self.observing:
            self.inference.pushes = self.recorded_pushes
        return self.builder

    def pushes_of(self, key) -> Set[Tuple[Tuple[int, ...], DType]]:
        if key in self.recorded_pushes:
            return self.recorded_pushes[key]
        return self.inference.pushes.get(key, set())

    def _callees_first(self) -> List[str]:
        order: List[str] = []
        state: Dict[str, int] = {}

        def visit(name: str, stack: List[str]) -> None:
            if state.get(name) == 2:
                return
            if state.get(name) == 1:
                cycle = " -> ".join(stack[stack.index(name):] + [name])
                src = self.sources[name]
                line, col = src.position(src.tree)
                raise CompileError(
                    f"recursive calls are not supported: {cycle}", file=src.file, line=line, column=col
                )
            state[name] = 1
            for callee in self.sources[name].self_calls:
                if callee in self.program.functions:
                    visit(callee, stack + [name])
            state[name] = 2
            order.append(name)

        for name in self.program.functions:
            visit(name, [])
        return order


def lower_program(program: Program, core, devices: Optional[int] = None) -> "Any":
    """Returns an IRBuilder holding the program's module (not yet verified:
    `verify_ir(builder.text(True))` or the pass pipeline does that).
    `devices` is the size of the mesh the program runs on (default: one
    device more than the highest `device=` placement, if any)."""
    inference = Inference()
    # A group's halves may each pop what the other pushes, so the first
    # observing run may meet a pop before its push: it tolerates the errors
    # that causes, and the second run sees every push.
    for tolerant in (True, False):
        ProgramLowering(program, core, inference, observing=True, tolerant=tolerant,
                        devices=devices).run()
    return ProgramLowering(program, core, inference, observing=False, devices=devices).run()


def program_ir(program: Program, locations: bool = False) -> str:
    """The verified bp IR of `program`, optionally with its locations."""
    from blockpipe import _core

    text = lower_program(program, _core).text(True)
    return _core.parse_and_verify(text, program.source_file, locations)


class FunctionLowering:
    """Builds one function: statements in order, values in `env`."""

    def __init__(self, program: ProgramLowering, spec: FunctionSpec, source: _Source):
        self.program = program
        self.spec = spec
        self.kind = spec.kind
        self.source = source
        self.builder = program.builder
        self.env: Dict[str, Union[Value, Literal]] = {}
        self.result_types: Optional[List[IRType]] = None
        self.param_values: List[Value] = []
        self.constants: Dict[Tuple[str, Any], Value] = {}
        self.spmd_depth = 0
        self.region_depth = 0
        self.spmd_args: Optional[Tuple[Union[Value, int], bool, Optional[str]]] = None
        # Names whose block has ended, with the error a later use reports.
        self.out_of_scope: Dict[str, str] = {}
        # The statement that last assigned each name.
        self.assigned_at: Dict[str, ast.AST] = {}
        # Each tensor value's tensor (handle of a parameter): stores, loops
        # and ifs return the tensor they were given.
        self.tensor_roots: Dict[int, int] = {}

    # ----------------------------------------------------------------- errors

    def error(self, node: Optional[ast.AST], message: str) -> _Error:
        return _Error(node, message)

    def _compile_error(self, err: _Error) -> CompileError:
        line, col = self.source.position(err.node) if err.node is not None else (None, None)
        return CompileError(err.message, file=self.source.file, line=line, column=col)

    def loc(self, node: ast.AST, name: str = ""):
        line, col = self.source.position(node)
        return self.program.core.SourceLoc(self.source.file, line, col, name)

    # ------------------------------------------------------------------- entry

    def lower(self) -> None:
        try:
            self._lower()
        except _Error as err:
            raise self._compile_error(err) from None

    def _lower(self) -> None:
        tree = self.source.tree
        args = tree.args
        if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs or args.defaults:
            raise self.error(tree, "blockpipe functions take plain positional parameters only")
        params = args.args
        if not params or params[0].arg != "self":
            raise self.error(tree, f"'{self.spec.name}' must be a method whose first parameter is self")
        annotations = self.spec.pyfunc.__annotations__
        param_types: List[IRType] = []
        dirs: List[ParamDirection] = []
        arg_attrs: List[Dict[str, str]] = []
        for param in params[1:]:
            ann = self.annotation(annotations.get(param.arg), param.annotation or param)
            if ann is None:
                raise self.error(
                    param,
                    f"parameter '{param.arg}' of '{self.spec.name}' needs a type annotation "
                    "(pl.Tensor[...], pl.Out[...], pl.InOut[...], pl.Scalar[...])",
                )
            direction = ParamDirection.In
            if isinstance(ann, ParamType):
                direction, ann = ann.direction, ann.inner
            if isinstance(ann, TileType):
                if self.kind is not FunctionType.AIV and self.kind is not FunctionType.AIC:
                    raise self.error(param, "tile parameters are not supported; pass a pl.Tensor")
            if not isinstance(ann, (TensorType, ScalarType)):
                raise self.error(param, f"parameter '{param.arg}' has unsupported annotation {ann!r}")
            param_types.append(ann)
            dirs.append(direction)
            attrs = {}
            if direction is not ParamDirection.In:
                attrs["bp.dir"] = f"#bp<dir {direction.value}>"
            arg_attrs.append(attrs)

        declared_results = self._declared_results(
            self.annotation(annotations.get("return"), tree.returns or tree), tree)
        self.result_types = declared_results
        fn_attrs = {"bp.kind": f"#bp<kind {self.kind.value}>"}
        if self.spec.device is not None:
            fn_attrs["bp.device"] = f"{self.spec.device} : i64"
        if self.spec.microbatches is not None:
            fn_attrs["bp.microbatches"] = f"{self.spec.microbatches} : i64"
        if self.spec.schedule is not None:
            fn_attrs["bp.schedule"] = _mlir_string(self.spec.schedule)

        # The signature must be known before the body is built, but results may
        # be inferred from the return statement: build into a placeholder whose
        # results are fixed when the return is seen.
        self._pending = (param_types, arg_attrs, fn_attrs, params[1:])
        self.program.param_dirs[self.spec.name] = dirs
        handles = self.builder.begin_function(
            self.spec.name,
            [t.mlir for t in param_types],
            [p.arg for p in params[1:]],
            arg_attrs,
            [t.mlir for t in (declared_results or [])],
            fn_attrs,
            self.loc(tree, self.spec.name),
        )
        for param, handle, ptype in zip(params[1:], handles, param_types):
            value = Value(handle, ptype)
            self.env[param.arg] = value
            self.param_values.append(value)
        self.program.signatures[self.spec.name] = (param_types, declared_results or [])
        self.saw_return = False
        self.block(tree.body, top_level=True)
        if not self.saw_return:
            if declared_results:
                raise self.error(tree, f"'{self.spec.name}' declares results but does not return")
            self.builder.create("func.return", [], [], {}, self.loc(tree))
        self.builder.end_function()

    def annotation(self, ann, node):
        """An annotation's value; string annotations (`from __future__ import
        annotations`) are evaluated in the function's namespace."""
        if not isinstance(ann, str):
            return ann
        try:
            # The user's own source text, in the function's globals and the
            # scope that defined the program (Python's own lookup order).
            return eval(ann, dict(self.source.globals), self.program.program.scope)
        except Exception as exc:  # noqa: BLE001 - report any failure at the annotation
            raise self.error(node, f"cannot evaluate annotation '{ann}': {exc}") from None

    def _declared_results(self, ann, node) -> Optional[List[IRType]]:
        if ann is None:
            return None
        items = list(ann) if isinstance(ann, (tuple, list)) else [ann]
        result = []
        for item in items:
            if isinstance(item, ParamType):
                item = item.inner
            if not isinstance(item, (TensorType, ScalarType)):
                raise self.error(node, f"unsupported return annotation {item!r}")
            result.append(item)
        return result

    # -------------------------------------------------------------- statements

    def block(self, stmts: Sequence[ast.stmt], top_level: bool = False) -> None:
        for stmt in stmts:
            if self.saw_return:
                raise self.error(stmt, "statements after return are not supported")
            self.statement(stmt, top_level)

    def statement(self, stmt: ast.stmt, top_level: bool) -> None:
        if isinstance(stmt, ast.Expr):
            if isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str):
                return  # docstring
            if not isinstance(stmt.value, ast.Call):
                raise self.error(stmt, "an expression statement must be a call")
            self.expr(stmt.value, statement=True)
        elif isinstance(stmt, ast.Assign):
            self.assign(stmt)
        elif isinstance(stmt, ast.AnnAssign):
            self.ann_assign(stmt)
        elif isinstance(stmt, ast.AugAssign):
            if not isinstance(stmt.target, ast.Name):
                raise self.error(stmt, "only names can be assigned")
            binop = ast.BinOp(left=ast.Name(stmt.target.id, ast.Load()), op=stmt.op, right=stmt.value)
            ast.copy_location(binop, stmt)
            ast.copy_location(binop.left, stmt.target)
            self.bind(stmt.target.id, self.expr(binop, name=stmt.target.id), stmt)
        elif isinstance(stmt, ast.Return):
            if not top_level:
                raise self.error(stmt, "return is only supported at the end of the function body")
            self.ret(stmt)
        elif isinstance(stmt, ast.For):
            self.for_loop(stmt)
        elif isinstance(stmt, ast.If):
            self.if_stmt(stmt)
        elif isinstance(stmt, ast.With):
            self.with_block(stmt)
        elif isinstance(stmt, ast.Pass):
            return
        else:
            what = type(stmt).__name__.lower()
            raise self.error(stmt, f"unsupported Python construct '{what}' in a blockpipe function")

    def bind(self, name: str, value, node: ast.AST) -> None:
        if name == "self":
            raise self.error(node, "cannot assign to self")
        if isinstance(value, list):
            raise self.error(node, f"'{name}' would hold several values; unpack them into names")
        self.env[name] = value
        self.assigned_at[name] = node

    def assign(self, stmt: ast.Assign) -> None:
        if len(stmt.targets) != 1:
            raise self.error(stmt, "chained assignment is not supported")
        target = stmt.targets[0]
        if isinstance(target, ast.Name):
            self.bind(target.id, self.expr(stmt.value, name=target.id), target)
        elif isinstance(target, (ast.Tuple, ast.List)) and all(isinstance(e, ast.Name) for e in target.elts):
            values = self.expr(stmt.value, name=None, multi=True)
            if not isinstance(values, list) or len(values) != len(target.elts):
                count = len(values) if isinstance(values, list) else 1
                raise self.error(stmt, f"cannot unpack {count} value(s) into {len(target.elts)} names")
            for elt, value in zip(target.elts, values):
                self.bind(elt.id, value, elt)
        else:
            raise self.error(target, "only names (or a tuple of names) can be assigned")

    def ann_assign(self, stmt: ast.AnnAssign) -> None:
        if not isinstance(stmt.target, ast.Name) or stmt.value is None:
            raise self.error(stmt, "an annotated assignment needs a name and a value")
        ann = self.static(stmt.annotation)
        if isinstance(ann, ParamType):
            ann = ann.inner
        if not isinstance(ann, (TensorType, TileType, ScalarType)):
            raise self.error(stmt.annotation, f"unsupported annotation {ann!r}")
        value = self.expr(stmt.value, name=stmt.target.id, expected=ann)
        vtype = value.type if isinstance(value, Value) else None
        if isinstance(ann, TileType) and isinstance(vtype, TileType):
            if ann.shape != vtype.shape or ann.dtype != vtype.dtype or (
                ann.space is not None and vtype.space is not None and ann.space != vtype.space
            ):
                raise self.error(stmt, f"value of type {vtype} does not match the annotation {ann}")
        elif isinstance(ann, TensorType) and isinstance(vtype, TensorType):
            if ann.dtype != vtype.dtype or len(ann.shape) != len(vtype.shape):
                raise self.error(stmt, f"value of type {vtype} does not match the annotation {ann}")
        elif vtype is not None and type(ann) is not type(vtype):
            raise self.error(stmt, f"value of type {vtype} does not match the annotation {ann}")
        elif isinstance(ann, ScalarType):
            # The annotation gives a scalar its type: `r: pl.Scalar[pl.INT32] = blk * 8`.
            if isinstance(value, Value):
                value = self.convert_scalar(value, ann, stmt)
            elif ann.dtype.is_float:
                value = float(value)
            elif isinstance(value, float):
                if not value.is_integer():
                    raise self.error(stmt, f"{value} is not an integer but the annotation is {ann}")
                value = int(value)
        self.bind(stmt.target.id, value, stmt.target)

    def convert_scalar(self, value: Value, target: ScalarType, node) -> Value:
        """`value` as a scalar of `target`'s type: integers are
        sign-extended or truncated, floats convert to integers toward zero."""
        src = value.type.dtype
        dst = target.dtype
        if src == dst:
            return value
        i64 = ScalarType(_dtype("INT64"))
        f32 = ScalarType(FP32)
        if not src.is_float and not dst.is_float:
            if INDEX in (src, dst):
                op = "arith.index_cast"
            else:
                op = "arith.extsi" if dst.mlir == "i64" else "arith.trunci"
            (result,) = self.create(op, [value], [target], {}, node)
            return result
        if not src.is_float:  # integer -> float
            if src is INDEX:
                value = self.convert_scalar(value, i64, node)
            (result,) = self.create("arith.sitofp", [value], [target], {}, node)
            return result
        if not dst.is_float:  # float -> integer
            step = i64 if dst is INDEX else target
            (result,) = self.create("arith.fptosi", [value], [step], {}, node)
            return self.convert_scalar(result, target, node)
        # float -> float, through f32 between the two 16-bit types.
        if src.mlir != "f32" and dst.mlir != "f32":
            value = self.convert_scalar(value, f32, node)
            return self.convert_scalar(value, target, node)
        op = "arith.extf" if dst.mlir == "f32" else "arith.truncf"
        (result,) = self.create(op, [value], [target], {}, node)
        return result

    def ret(self, stmt: ast.Return) -> None:
        if stmt.value is None:
            values: List[Value] = []
        elif isinstance(stmt.value, ast.Tuple):
            values = [self.as_value(self.expr(e), e) for e in stmt.value.elts]
        else:
            values = [self.as_value(self.expr(stmt.value), stmt.value)]
        types = [v.type for v in values]
        if self.result_types is not None:
            if len(types) != len(self.result_types) or any(
                not _same_tensor_type(a, b) for a, b in zip(types, self.result_types)
            ):
                got = ", ".join(str(t) for t in types) or "nothing"
                want = ", ".join(str(t) for t in self.result_types) or "nothing"
                raise self.error(stmt, f"'{self.spec.name}' returns {got} but is declared to return {want}")
        else:
            self.result_types = types
            self.builder.set_function_results(self.spec.name, [t.mlir for t in types])
            params, _ = self.program.signatures[self.spec.name]
            self.program.signatures[self.spec.name] = (params, types)
        self.builder.create("func.return", [v.handle for v in values], [], {}, self.loc(stmt))
        self.saw_return = True

    # ------------------------------------------------------------------- loops

    def for_loop(self, stmt: ast.For) -> None:
        if stmt.orelse:
            raise self.error(stmt, "for/else is not supported")
        if not isinstance(stmt.target, ast.Name):
            raise self.error(stmt.target, "the loop variable must be a single name")
        intrinsic = self.intrinsic_of(stmt.iter)
        if intrinsic == "spmd":
            self.spmd_block(stmt.iter, stmt.body, stmt, loop_var=stmt.target.id)
            return
        if intrinsic != "range":
            raise self.error(stmt.iter, "for loops iterate over pl.range(...) or pl.spmd(...)")
        if self.kind not in _KERNEL_KINDS:
            raise self.error(stmt, "pl.range loops are supported in incore, aic and aiv functions")
        call = stmt.iter
        if call.keywords or not 1 <= len(call.args) <= 3:
            raise self.error(call, "pl.range takes 1 to 3 positional arguments: (stop), (start, stop) or (start, stop, step)")
        bounds = [self.expr(a) for a in call.args]
        if len(bounds) == 1:
            bounds = [0, bounds[0], 1]
        elif len(bounds) == 2:
            bounds = [bounds[0], bounds[1], 1]
        if isinstance(bounds[2], int) and bounds[2] <= 0:
            raise self.error(call, f"pl.range step must be positive, got {bounds[2]}")
        lower, upper, step = (self.index_value(b, a) for b, a in zip(bounds, [call] * 3))

        # The loop variable is the induction value at the start of every
        # iteration, whatever the body assigns it: never carried.
        assigned = [n for n in _assigned_names(stmt.body) if n != stmt.target.id]
        # An integer the body reassigns varies from one iteration to the
        # next, so it is carried as an index value too.
        carried = [n for n in assigned if isinstance(self.env.get(n), Value) or _is_int(self.env.get(n))]
        for name in assigned:
            if isinstance(self.env.get(name), float):
                # Not carried: every iteration would see the value from
                # before the loop, and so would the code after it.
                raise self.error(_assignment_of(stmt.body, name) or stmt,
                                 f"'{name}' holds the compile-time number {self.env[name]!r} and the loop body "
                                 "reassigns it; a loop carries only index values and tiles from one iteration "
                                 "to the next: compute it from the loop variable, or keep it in a tile")
        inits = [self.index_value(self.env[n], stmt) if _is_int(self.env[n]) else self.env[n] for n in carried]
        handles = self.builder.begin_for(
            lower.handle, upper.handle, step.handle, [v.handle for v in inits], self.loc(stmt),
            stmt.target.id,
        )
        outer = dict(self.env)
        self.env[stmt.target.id] = Value(handles[0], ScalarType(INDEX))
        for name, init, handle in zip(carried, inits, handles[1:]):
            self.env[name] = Value(handle, init.type, init.load_keys)
            self.tensor_roots[handle] = self.root_of(init)
        self.region_depth += 1
        try:
            self.block(stmt.body)
        finally:
            self.region_depth -= 1
        yielded = []
        carried_keys = []
        carried_types = []
        for name, init in zip(carried, inits):
            value = self.as_value(self.env[name], stmt)
            inferred = isinstance(init.type, TileType) and init.load_keys and init.type.space is None
            if inferred and isinstance(value.type, TileType) and not value.load_keys \
                    and value.type.space is not None:
                # An inferred tile (a load or pl.full) that starts what the
                # body makes in a known space (a matmul chain's Acc) is in
                # that space.
                if (value.type.shape, value.type.dtype) != (init.type.shape, init.type.dtype):
                    raise self.error(
                        stmt, f"'{name}' changes type inside the loop, from {init.type} to {value.type}"
                    )
                if self.program.observing:
                    for key in init.load_keys:
                        self.program.inference.load_uses.setdefault(key, set()).add(value.type.space)
                yielded.append(value.handle)
                carried_keys.append(())
                carried_types.append(value.type)
                continue
            if not _same_type(value.type, init.type):
                raise self.error(
                    stmt, f"'{name}' changes type inside the loop, from {init.type} to {value.type}"
                )
            yielded.append(value.handle)
            carried_types.append(init.type)
            # The loads the loop carries in one variable (before it, and
            # in its body) are used alike: one memory space for all.
            keys = tuple(dict.fromkeys(init.load_keys + value.load_keys))
            if self.program.observing and len(keys) > len(init.load_keys):
                uses = self.program.inference.load_uses
                merged = set().union(*(uses.get(k, set()) for k in keys))
                for key in keys:
                    uses[key] = set(merged)
            carried_keys.append(keys)
        results = self.builder.end_for(yielded, self.loc(stmt))
        inner_only = {n for n in assigned if n not in outer}
        self.env = outer
        for name, init, handle, keys, type_ in zip(carried, inits, results, carried_keys, carried_types):
            self.env[name] = Value(handle, type_, keys)
            self.tensor_roots[handle] = self.root_of(init)
        for name in inner_only:
            self.env.pop(name, None)
            self.out_of_scope[name] = self.block_local_message(name, stmt)
        # Python leaves the last induction value in it; here it has none
        # (a value it held before the loop would be stale).
        self.env.pop(stmt.target.id, None)
        self.out_of_scope[stmt.target.id] = (
            f"'{stmt.target.id}' is the variable of the loop at line {self.source.position(stmt)[0]} and has "
            "no value after it; keep what you need in another name inside the loop")

    def block_local_message(self, name: str, stmt: ast.stmt) -> str:
        return f"'{name}' is only defined inside the block at line {self.source.position(stmt)[0]}"

    def root_of(self, value: Value) -> int:
        return self.tensor_roots.get(value.handle, value.handle)

    def tensor_value(self, value: Value) -> Value:
        """The parameter whose tensor `value` is."""
        root = self.root_of(value)
        return next((p for p in self.param_values if p.handle == root), value)

    def with_block(self, stmt: ast.With) -> None:
        if len(stmt.items) != 1 or self.intrinsic_of(stmt.items[0].context_expr) != "spmd":
            raise self.error(stmt, "with blocks are only supported as 'with pl.spmd(core_num):'")
        item = stmt.items[0]
        if item.optional_vars is not None:
            raise self.error(item.optional_vars, "'with pl.spmd(...) as name' is not supported")
        self.spmd_block(item.context_expr, stmt.body, stmt, loop_var=None)

    def spmd_block(self, call: ast.Call, body, stmt, loop_var: Optional[str]) -> None:
        if self.kind is not FunctionType.Orchestration:
            raise self.error(call, "pl.spmd is only valid in orchestration functions")
        if self.spmd_depth:
            raise self.error(call, "pl.spmd blocks cannot be nested")
        bound = self.bind_args("spmd", call, ("core_num",), {"sync_start": False, "name_hint": None})
        core_num = self.expr(bound["core_num"])
        if isinstance(core_num, int):
            if core_num <= 0:
                raise self.error(bound["core_num"], f"core_num must be positive, got {core_num}")
        elif isinstance(core_num, Value) and isinstance(core_num.type, ScalarType) and not core_num.type.dtype.is_float:
            core_num = self.index_value(core_num, bound["core_num"])
        else:
            raise self.error(bound["core_num"], "core_num must be a positive integer or an index value")
        sync_start = self.static_value(bound["sync_start"], bool, "sync_start")
        name_hint = self.static_value(bound["name_hint"], (str, type(None)), "name_hint")
        self.spmd_depth += 1
        self.spmd_args = (core_num, sync_start, name_hint)
        hidden = self.env.pop(loop_var, None) if loop_var else None
        if loop_var:
            # Each block has its own index, known only inside the kernel.
            self.out_of_scope[loop_var] = (
                f"'{loop_var}', the variable of pl.spmd, has no value in an orchestration function; "
                "the launched kernel reads its block's index with pl.tile.get_block_idx()")
        try:
            self.block(body)
        finally:
            self.spmd_depth -= 1
            self.spmd_args = None
            if loop_var and hidden is not None:
                self.env[loop_var] = hidden

    # ---------------------------------------------------------------- branches

    def if_stmt(self, stmt: ast.If) -> None:
        condition = self.condition(stmt.test)
        if isinstance(condition, bool):
            # Known at compile time: as Python would, run only the branch taken.
            self.block(stmt.body if condition else stmt.orelse)
            return
        if self.kind not in _KERNEL_KINDS:
            raise self.error(stmt, "an if whose condition is known only at run time is supported in "
                                   f"incore, aic and aiv functions, not in {self.kind.name} function "
                                   f"'{self.spec.name}'")
        outer, outer_assigned = dict(self.env), dict(self.assigned_at)
        self.builder.begin_if(condition.handle, self.loc(stmt))
        self.region_depth += 1
        try:
            self.block(stmt.body)
            then_env, then_assigned = self.env, self.assigned_at
            self.env, self.assigned_at = dict(outer), dict(outer_assigned)
            self.builder.enter_branch(True)
            self.block(stmt.orelse)
            else_env, else_assigned = self.env, self.assigned_at
        finally:
            self.region_depth -= 1
        self.env, self.assigned_at = dict(outer), dict(outer_assigned)

        # What each name holds after the if: the same value from both
        # branches, or a result of the scf.if that each branch yields.
        merged: List[Tuple[str, Any, Any, ast.AST]] = []
        for name in _assigned_names(list(stmt.body) + list(stmt.orelse)):
            then_value, else_value = then_env.get(name), else_env.get(name)
            if then_value is None and else_value is None:
                continue  # local to a block inside a branch
            if then_value is None or else_value is None:
                self.env.pop(name, None)
                self.out_of_scope[name] = (
                    f"'{name}' is assigned in only one branch of the if at line "
                    f"{self.source.position(stmt)[0]}; assign it before the if, or in both branches, "
                    "to use it after the if")
                continue
            in_else = else_assigned.get(name) is not outer_assigned.get(name)
            node = else_assigned[name] if in_else else then_assigned.get(name, stmt)
            self.assigned_at[name] = node
            if _same_value(then_value, else_value):
                self.env[name] = then_value
                continue
            self.check_branches_agree(name, then_value, else_value, node,
                                      in_then=then_assigned.get(name) is not outer_assigned.get(name),
                                      in_else=in_else)
            # A tensor stored into in a branch becomes a result too (the
            # same tensor on both sides, checked above): later ops see the
            # stores through it.
            merged.append((name, then_value, else_value, node))

        yielded: Dict[bool, List[Value]] = {False: [], True: []}
        for is_else in (False, True):
            pairs = [(m[2], m[1]) if is_else else (m[1], m[2]) for m in merged]  # (own, other)
            has_literal = any(not isinstance(own, Value) for own, _ in pairs)
            if has_literal:
                # A literal becomes a constant in its branch, typed like the
                # other branch's value.
                self.builder.enter_branch(is_else)
                self.region_depth += 1
            try:
                for (_, _, _, node), (own, other) in zip(merged, pairs):
                    like = other.type if isinstance(other, Value) else None
                    yielded[is_else].append(self.as_value(own, node, like=like))
            finally:
                if has_literal:
                    self.region_depth -= 1
        # A single result is named after its variable, for generated code.
        results = self.builder.end_if([v.handle for v in yielded[False]], [v.handle for v in yielded[True]],
                                      self.loc(stmt, merged[0][0] if len(merged) == 1 else ""))
        for (name, _, _, _), then_value, else_value, handle in zip(merged, yielded[False], yielded[True], results):
            known = then_value if not _unknown_space(then_value.type) else else_value
            keys = tuple(dict.fromkeys(then_value.load_keys + else_value.load_keys))
            self.env[name] = Value(handle, known.type, keys)
            self.tensor_roots[handle] = self.root_of(then_value)

    def check_branches_agree(self, name: str, then_value, else_value, node: ast.AST,
                             in_then: bool, in_else: bool) -> None:
        values = [v for v in (then_value, else_value) if isinstance(v, Value)]
        if len(values) == 2:
            agree = _same_type(then_value.type, else_value.type) or (
                self.program.observing and _same_shape_unknown_space(then_value.type, else_value.type))
        else:
            # A literal takes the type of the other branch's scalar.
            agree = not values or isinstance(values[0].type, ScalarType)
            if not values and any(isinstance(v, float) for v in (then_value, else_value)):
                raise self.error(node, f"'{name}' is a float known at compile time that differs between the "
                                       "branches of an if decided at run time, so it would need a run-time type: "
                                       "pass it as a pl.Scalar[pl.FP32], or keep it in a tile")
        if not agree:
            then_text, else_text = _describe(then_value), _describe(else_value)
            if in_then and in_else:
                raise self.error(node, f"'{name}' is {then_text} after the if branch but {else_text} after "
                                       "the else branch; both branches must leave it the same type")
            before, after = (else_text, then_text) if in_then else (then_text, else_text)
            raise self.error(node, f"'{name}' changes type inside the if, from {before} to {after}")
        if len(values) == 2 and isinstance(then_value.type, TensorType) and (
            self.root_of(then_value) != self.root_of(else_value)
        ):
            raise self.error(node, f"'{name}' is a different tensor in each branch of the if; a tensor "
                                   "assigned in a branch must stay the same tensor (assign it the result "
                                   "of pl.store into it)")

    _CMPI_PREDICATES = {ast.Eq: 0, ast.NotEq: 1, ast.Lt: 2, ast.LtE: 3, ast.Gt: 4, ast.GtE: 5}
    # Ordered predicates (false on NaN), except != which is true on NaN, as in Python.
    _CMPF_PREDICATES = {ast.Eq: 1, ast.Gt: 2, ast.GtE: 3, ast.Lt: 4, ast.LtE: 5, ast.NotEq: 13}
    _PY_COMPARE = {
        ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b,
        ast.Lt: lambda a, b: a < b, ast.LtE: lambda a, b: a <= b,
        ast.Gt: lambda a, b: a > b, ast.GtE: lambda a, b: a >= b,
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
                (result,) = self.create("arith.andi" if is_and else "arith.ori", [result, value],
                                        [_BOOL], {}, node)
            return result
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            operand = self.condition(node.operand)
            if isinstance(operand, bool):
                return not operand
            true = self.constant(1, _BOOL.dtype, node)
            (result,) = self.create("arith.xori", [operand, true], [_BOOL], {}, node)
            return result
        if isinstance(node, ast.Compare):
            for op in node.ops:
                if type(op) not in self._CMPI_PREDICATES:
                    raise self.error(node, f"'{_cmp_symbol(op)}' is not supported in an if condition; "
                                           "compare with ==, !=, <, <=, > or >=")
            nodes = [node.left] + list(node.comparators)
            operands = [self.condition_operand(n) for n in nodes]
            parts = [self.compare(op, operands[i], operands[i + 1], nodes[i], nodes[i + 1], node)
                     for i, op in enumerate(node.ops)]
            if any(p is False for p in parts):
                return False
            values = [p for p in parts if isinstance(p, Value)]
            if not values:
                return True
            result = values[0]
            for value in values[1:]:
                (result,) = self.create("arith.andi", [result, value], [_BOOL], {}, node)
            return result
        value = self.condition_operand(node)
        if not isinstance(value, Value):
            return bool(value)
        if isinstance(value.type, ScalarType):
            return self.compare(ast.NotEq(), value, 0, node, node, node)  # Python's truth of a number
        raise self.error(node, "an if condition must be a comparison of scalars or index values such as "
                               f"'k == 0', got {_describe(value)}")

    def condition_operand(self, node: ast.expr):
        if isinstance(node, ast.Constant) and isinstance(node.value, bool):
            return node.value
        if isinstance(node, ast.Attribute) or (
            isinstance(node, ast.Name) and node.id not in self.env and node.id not in self.out_of_scope
        ):
            try:
                value = self.static(node)
            except _Error:
                value = None
            if isinstance(value, (bool, int, float)):
                return value
        return self.expr(node)

    def compare(self, op: ast.cmpop, lhs, rhs, lhs_node, rhs_node, node) -> Union[bool, Value]:
        for value, value_node in ((lhs, lhs_node), (rhs, rhs_node)):
            scalar = isinstance(value, Value) and isinstance(value.type, ScalarType)
            if not (scalar or isinstance(value, (int, float))):
                raise self.error(value_node, "an if condition compares scalars or index values, "
                                             f"got {_describe(value)}")
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
                wide = ScalarType(_dtype("INT64"))
                lhs, rhs = self.widen(lhs, wide, lhs_node), self.widen(rhs, wide, rhs_node)
        like = lhs.type if isinstance(lhs, Value) else rhs.type
        lhs, rhs = self.as_value(lhs, lhs_node, like=like), self.as_value(rhs, rhs_node, like=like)
        if like.dtype.is_float:
            opname, predicate = "arith.cmpf", self._CMPF_PREDICATES[type(op)]
        else:
            opname, predicate = "arith.cmpi", self._CMPI_PREDICATES[type(op)]
        (result,) = self.create(opname, [lhs, rhs], [_BOOL], {"predicate": f"{predicate} : i64"}, node)
        return result

    # ------------------------------------------------------------- expressions

    def expr(self, node: ast.expr, name: Optional[str] = None, statement: bool = False,
             multi: bool = False, expected: Optional[IRType] = None):
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
                return self.unary_op("neg", operand, node, name)
            if isinstance(operand, Value) and isinstance(operand.type, ScalarType) and operand.type.dtype.is_float:
                (result,) = self.create("arith.negf", [operand], [operand.type], {}, node, name)
                return result
            return self.arith_binop(ast.Sub(), 0, operand, node, name)
        if isinstance(node, ast.Call):
            return self.call(node, name, statement, multi, expected)
        if isinstance(node, ast.Attribute):
            value = self.static(node)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return value
            raise self.error(node, f"'{ast.unparse(node)}' is not a value")
        raise self.error(node, f"unsupported expression '{ast.unparse(node)}'")

    def lookup(self, node: ast.Name):
        if node.id in self.env:
            return self.env[node.id]
        if node.id in self.out_of_scope:
            raise self.error(node, self.out_of_scope[node.id])
        if node.id in self.source.globals:
            value = _python_number(self.source.globals[node.id])
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return value
            raise self.error(node, f"'{node.id}' is a {type(value).__name__}, not a value a kernel can use")
        raise self.error(node, f"unknown name '{node.id}'")

    def static(self, node: ast.expr):
        """Evaluates a compile-time expression (dtypes, spaces, shapes)."""
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            if node.id in self.env:
                value = self.env[node.id]
                if isinstance(value, (int, float)):
                    return value
                raise self.error(node, f"'{node.id}' must be known at compile time here")
            if node.id in self.source.globals:
                return _python_number(self.source.globals[node.id])
            import builtins

            if hasattr(builtins, node.id) and node.id in ("None", "True", "False"):
                return getattr(builtins, node.id)
            raise self.error(node, f"unknown name '{node.id}'")
        if isinstance(node, ast.Attribute):
            base = self.static(node.value)
            try:
                return _python_number(getattr(base, node.attr))
            except AttributeError:
                raise self.error(node, f"'{ast.unparse(node.value)}' has no attribute '{node.attr}'") from None
        if isinstance(node, (ast.List, ast.Tuple)):
            return [self.static(e) for e in node.elts]
        if isinstance(node, ast.Subscript):
            base = self.static(node.value)
            index = self.static(node.slice)
            try:
                return _python_number(base[tuple(index) if isinstance(node.slice, ast.Tuple) else index])
            except (TypeError, KeyError, IndexError) as exc:
                raise self.error(node, str(exc)) from None
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -self.static(node.operand)
        if isinstance(node, ast.BinOp):
            value = self.expr(node)
            if isinstance(value, (int, float)):
                return value
        raise self.error(node, f"'{ast.unparse(node)}' must be known at compile time")

    def static_value(self, node, types, what: str):
        if node is None or (isinstance(node, ast.Constant) and node.value is None):
            return None if not isinstance(types, type) or types is not bool else False
        if isinstance(node, (bool, str, int)):
            return node
        value = self.static(node)
        if not isinstance(value, types):
            names = " or ".join("None" if t is type(None) else t.__name__
                                for t in (types if isinstance(types, tuple) else (types,)))
            raise self.error(node, f"{what} must be a compile-time {names}, got {value!r}")
        return value

    def intrinsic_of(self, node: ast.expr) -> Optional[str]:
        if not isinstance(node, ast.Call):
            return None
        try:
            target = self.static(node.func)
        except _Error:
            return None
        return target.qualname if isinstance(target, _ops.Intrinsic) else None

    def as_value(self, value, node: ast.AST, like: Optional[IRType] = None) -> Value:
        if isinstance(value, Value):
            return value
        if isinstance(value, (int, float)):
            if like is None:
                if isinstance(value, float):
                    raise self.error(node, "a float constant needs a tile or scalar to give it a type")
                return self.constant(value, INDEX, node)
            dtype = like.dtype if isinstance(like, (TileType, ScalarType)) else INDEX
            return self.constant(value, dtype, node)
        raise self.error(node, f"expected a value, got {value!r}")

    def constant(self, value: Literal, dtype: DType, node: ast.AST) -> Value:
        if not dtype.is_float and isinstance(value, float):
            if not value.is_integer():
                raise self.error(node, f"{value} is not an integer but the value is {dtype.name}")
            value = int(value)
        key = (dtype.mlir, repr(value))  # repr: -0.0 is not 0.0 here
        # Constants are shared at function level only: one made inside a loop
        # body would not dominate later uses outside it.
        cached = self.constants.get(key)
        if cached is not None:
            return cached
        if dtype.is_float:
            attr = self.float_attr(value, dtype, node)
        else:
            attr = self.int_attr(value, dtype, node)
        (handle,) = self.builder.create(
            "arith.constant", [], [dtype.mlir], {"value": attr}, self.loc(node)
        )
        result = Value(handle, ScalarType(dtype))
        if self.region_depth == 0:
            self.constants[key] = result
        return result

    def float_attr(self, value: Literal, dtype: DType, node) -> str:
        attr = _float_attr(value, dtype)
        if attr is None:
            raise self.error(node, f"{value!r} is out of range for {dtype.name}")
        return attr

    def int_attr(self, value: Literal, dtype: DType, node) -> str:
        bits = _INT_BITS.get(dtype.mlir)
        if bits is not None and not -(2 ** (bits - 1)) <= int(value) < 2 ** (bits - 1):
            raise self.error(node, f"{int(value)} is out of range for {dtype.name}")
        return f"{int(value)} : {dtype.mlir}"

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
        if isinstance(value, Value) and isinstance(value.type, ScalarType) and value.type.dtype.mlir in ("i32", "i64"):
            # An INT32 or INT64 scalar used as an offset, a bound or a count.
            (cast,) = self.create("arith.index_cast", [value], [ScalarType(INDEX)], {}, node)
            return cast
        raise self.error(node, f"expected an index value, got {_describe(value)}")

    # ------------------------------------------------------------- arithmetic

    _TILE_BINOPS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div"}
    _INDEX_BINOPS = {
        ast.Add: "arith.addi",
        ast.Sub: "arith.subi",
        ast.Mult: "arith.muli",
        ast.FloorDiv: "arith.floordivsi",
        ast.Mod: "arith.remsi",  # then given the divisor's sign, as in Python
    }

    _FLOAT_BINOPS = {ast.Add: "arith.addf", ast.Sub: "arith.subf", ast.Mult: "arith.mulf", ast.Div: "arith.divf"}

    def binop(self, node: ast.BinOp, name):
        lhs = self.expr(node.left)
        rhs = self.expr(node.right)
        is_tile = lambda v: isinstance(v, Value) and isinstance(v.type, TileType)  # noqa: E731
        if is_tile(lhs) or is_tile(rhs):
            op = self._TILE_BINOPS.get(type(node.op))
            if op is None:
                raise self.error(node, f"operator '{_op_symbol(node.op)}' is not defined on tiles")
            if not is_tile(lhs):
                if op in ("add", "mul"):
                    lhs, rhs = rhs, lhs
                else:
                    return self.scalar_first(op, lhs, rhs, node, name)
            return self.binary_op(op, lhs, rhs, node, name)
        return self.arith_binop(node.op, lhs, rhs, node, name)

    def arith_binop(self, op, lhs, rhs, node, name):
        if isinstance(lhs, (int, float)) and isinstance(rhs, (int, float)):
            try:
                return {
                    ast.Add: lambda a, b: a + b,
                    ast.Sub: lambda a, b: a - b,
                    ast.Mult: lambda a, b: a * b,
                    ast.FloorDiv: lambda a, b: a // b,
                    ast.Mod: lambda a, b: a % b,
                    ast.Div: lambda a, b: a / b,
                    ast.Pow: lambda a, b: a ** b if abs(b) <= 256 else _too_large(),
                    ast.LShift: lambda a, b: a << b if b <= 256 else _too_large(),
                    ast.RShift: lambda a, b: a >> b,
                    ast.BitAnd: lambda a, b: a & b,
                    ast.BitOr: lambda a, b: a | b,
                    ast.BitXor: lambda a, b: a ^ b,
                }[type(op)](lhs, rhs)
            except KeyError:
                raise self.error(node, f"operator '{_op_symbol(op)}' is not supported") from None
            except (TypeError, ValueError) as exc:  # a float shifted, a negative shift count
                raise self.error(node, f"'{_op_symbol(op)}' on {lhs!r} and {rhs!r}: {exc}") from None
            except ZeroDivisionError:
                raise self.error(node, "division by zero") from None
            except OverflowError:
                raise self.error(node, "the result of this constant expression is too large") from None
        # Scalars combine with scalars of their own type (and with numbers,
        # which take that type); an INT32 or INT64 scalar meeting an index
        # value joins index arithmetic.
        types = []
        for v in (lhs, rhs):
            if isinstance(v, Value):
                if not isinstance(v.type, ScalarType):
                    raise self.error(node, f"scalar arithmetic takes scalars and index values, got {v.type}")
                types.append(v.type)
        if len(set(types)) == 1:
            stype = types[0]
        elif all(not t.dtype.is_float for t in types) and ScalarType(INDEX) in types:
            stype = ScalarType(INDEX)
        elif all(not t.dtype.is_float for t in types):
            # INT32 with INT64: in INT64, as C would.
            stype = ScalarType(_dtype("INT64"))
            lhs, rhs = (self.widen(v, stype, node) for v in (lhs, rhs))
        else:
            raise self.error(node, f"cannot combine {types[0]} and {types[1]} with '{_op_symbol(op)}'")
        if stype.dtype.is_float:
            opname = self._FLOAT_BINOPS.get(type(op))
            if opname is None:
                raise self.error(node, f"operator '{_op_symbol(op)}' is not supported on {stype.dtype.name} scalars")
            a, b = self.as_value(lhs, node, like=stype), self.as_value(rhs, node, like=stype)
            (result,) = self.create(opname, [a, b], [stype], {}, node, name)
            return result
        for v in (lhs, rhs):
            if isinstance(v, float):
                raise self.error(node, "index arithmetic takes integers, got a float")
        opname = self._INDEX_BINOPS.get(type(op))
        if opname is None:
            raise self.error(node, f"operator '{_op_symbol(op)}' is not supported on index values")
        if stype == ScalarType(INDEX):
            a, b = self.index_value(lhs, node), self.index_value(rhs, node)
        else:
            a, b = self.as_value(lhs, node, like=stype), self.as_value(rhs, node, like=stype)
        if isinstance(op, ast.Mod):
            # As Python (and as `//`, floordivsi): the remainder takes the
            # divisor's sign, -7 % 3 == 2, where remsi gives -1; a nonzero
            # remainder of the other sign gets the divisor added.
            (rem,) = self.create("arith.remsi", [a, b], [stype], {}, node)
            zero = self.constant(0, stype.dtype, node)
            predicate = lambda op: f"{self._CMPI_PREDICATES[op]} : i64"  # noqa: E731
            if isinstance(rhs, int):
                # A divisor of known sign: only a remainder of the other sign moves.
                (adjust,) = self.create("arith.cmpi", [rem, zero], [_BOOL],
                                        {"predicate": predicate(ast.Lt if rhs > 0 else ast.Gt)}, node)
            else:
                (nonzero,) = self.create("arith.cmpi", [rem, zero], [_BOOL], {"predicate": predicate(ast.NotEq)}, node)
                (rem_neg,) = self.create("arith.cmpi", [rem, zero], [_BOOL], {"predicate": predicate(ast.Lt)}, node)
                (div_neg,) = self.create("arith.cmpi", [b, zero], [_BOOL], {"predicate": predicate(ast.Lt)}, node)
                (signs_differ,) = self.create("arith.xori", [rem_neg, div_neg], [_BOOL], {}, node)
                (adjust,) = self.create("arith.andi", [nonzero, signs_differ], [_BOOL], {}, node)
            (adjusted,) = self.create("arith.addi", [rem, b], [stype], {}, node)
            (result,) = self.create("arith.select", [adjust, adjusted, rem], [stype], {}, node, name)
            return result
        (result,) = self.create(opname, [a, b], [stype], {}, node, name)
        return result

    # ------------------------------------------------------------------ calls

    def call(self, node: ast.Call, name, statement: bool, multi: bool, expected):
        func = node.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
            return self.call_function(node, func.attr, name, multi)
        try:
            target = self.static(func)
        except _Error:
            raise self.error(node, f"unknown function '{ast.unparse(func)}'") from None
        if not isinstance(target, _ops.Intrinsic):
            raise self.error(node, f"'{ast.unparse(func)}' cannot be called in a blockpipe function")
        handler = getattr(self, "op_" + target.qualname.replace(".", "_"), None)
        if handler is None:
            raise self.error(node, f"pl.{target.qualname} is not valid in an expression here")
        return handler(node, name, expected)

    def bind_args(self, what: str, node: ast.Call, required: Sequence[str],
                  optional: Dict[str, Any]) -> Dict[str, Any]:
        names = list(required) + list(optional)
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            raise self.error(node, f"pl.{what} does not take *args or **kwargs")
        if len(node.args) > len(names):
            raise self.error(node, f"pl.{what} takes at most {len(names)} arguments, got {len(node.args)}")
        bound: Dict[str, Any] = dict(zip(names, node.args))
        for kw in node.keywords:
            if kw.arg not in names:
                raise self.error(kw.value, f"pl.{what} has no argument '{kw.arg}' (it takes {', '.join(names)})")
            if kw.arg in bound:
                raise self.error(kw.value, f"pl.{what} got argument '{kw.arg}' twice")
            bound[kw.arg] = kw.value
        for req in required:
            if req not in bound:
                raise self.error(node, f"pl.{what} is missing argument '{req}'")
        for opt, default in optional.items():
            bound.setdefault(opt, default)
        return bound

    def require_kind(self, node, what: str, kinds) -> None:
        if self.kind not in kinds:
            allowed = ", ".join(k.name for k in kinds)
            raise self.error(node, f"pl.{what} is only valid in {allowed} functions, not in {self.kind.name} function '{self.spec.name}'")

    def tile_arg(self, node, what: str) -> Value:
        value = self.expr(node)
        if not (isinstance(value, Value) and isinstance(value.type, TileType)):
            raise self.error(node, f"{what} must be a tile, got {_describe(value)}")
        return value

    def tensor_arg(self, node, what: str) -> Value:
        value = self.expr(node)
        if not (isinstance(value, Value) and isinstance(value.type, TensorType)):
            raise self.error(node, f"{what} must be a tensor, got {_describe(value)}")
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
        if not isinstance(value, list) or not value or not all(
            isinstance(d, int) and not isinstance(d, bool) and d > 0 for d in value
        ):
            raise self.error(node, f"{what} must be a list of positive integers known at compile time, got {value!r}")
        return tuple(value)

    def create(self, op: str, operands: List[Value], results: List[IRType], attrs, node, name=None):
        for result in results:
            # What the dialect's tile type allows, said in the DSL's terms
            # (the builder would only report an invalid type).
            if isinstance(result, TileType) and len(result.shape) > 2:
                raise self.error(node, f"tiles are 1-D or 2-D, got {list(result.shape)}")
            if isinstance(result, TileType) and result.dtype is INDEX:
                raise self.error(node, "tiles cannot hold INDEX elements; use pl.INT64")
        handles = self.builder.create(
            op, [v.handle for v in operands], [t.mlir for t in results], attrs, self.loc(node, name or "")
        )
        return [Value(h, t) for h, t in zip(handles, results)]

    # -------------------------------------------------- tile space inference

    def demand(self, value: Value, space: MemorySpace, node, what: str) -> Value:
        """Makes `value` available in `space`, inserting a legal move."""
        tile = value.type
        assert isinstance(tile, TileType)
        if value.load_keys and self.program.observing:
            self.record_load_use(value, space)
            return value
        if tile.space is space:
            return value
        if (tile.space, space) not in _LEGAL_MOVES:
            raise self.error(
                node,
                f"{what} must be in {space.name} memory, but this tile is in {tile.space.name} memory",
            )
        (moved,) = self.create("bp.move", [value], [tile.with_space(space)], {}, node)
        return moved

    def record_load_use(self, value: Value, space: MemorySpace) -> None:
        for key in value.load_keys:
            self.program.inference.load_uses.setdefault(key, set()).add(space)

    def resolve_load_space(self, key, explicit: Optional[MemorySpace]) -> Optional[MemorySpace]:
        if explicit is not None:
            return explicit
        if self.program.observing:
            return None
        uses = self.program.inference.load_uses.get(key, set())
        if not uses:
            return MemorySpace.Vec
        if uses == {MemorySpace.Vec}:
            return MemorySpace.Vec
        if MemorySpace.Vec in uses:
            return None  # reported by the caller
        if len(uses) == 1:
            return next(iter(uses))
        return MemorySpace.Mat  # several cube operands: load once, move to each

    # ---------------------------------------------------------- tile ops

    def op_load(self, node, name, expected):
        self.require_kind(node, "load", _KERNEL_KINDS)
        b = self.bind_args("load", node, ("tensor", "offsets", "shapes"), {"target_memory": None})
        tensor = self.tensor_arg(b["tensor"], "pl.load's tensor")
        offsets = self.offsets_arg(b["offsets"], tensor.type, "pl.load")
        shape = self.shape_arg(b["shapes"], "pl.load's shapes")
        if len(shape) != len(tensor.type.shape):
            raise self.error(b["shapes"], f"pl.load's shapes has {len(shape)} dimensions but the tensor has {len(tensor.type.shape)}")
        explicit = self.space_arg(b["target_memory"], "target_memory")
        if explicit is MemorySpace.Acc:
            raise self.error(b["target_memory"], "cannot load into Acc memory; Acc tiles come from pl.matmul")
        key = self.source.position(node)
        space = self.resolve_load_space(key, explicit)
        if space is None and not self.program.observing:
            raise self.error(node, "this tile is used by both vector and cube operations; load it once per unit or pass target_memory=")
        if space is MemorySpace.Acc:
            raise self.error(node, "a loaded tile cannot start a pl.matmul(..., acc=...) chain (Acc tiles come "
                                   "from pl.matmul or pl.full); start it with pl.full, or with a pl.matmul")
        tile = TileType(shape, tensor.type.dtype, space)
        (result,) = self.create("bp.load", [tensor] + offsets, [tile.with_space(space or MemorySpace.Vec)], {}, node, name)
        result.type = tile.with_space(space) if space else tile
        if explicit is None:
            result.load_keys = (key,)
        return result

    def offsets_arg(self, node, tensor: TensorType, what: str) -> List[Value]:
        if isinstance(node, (ast.List, ast.Tuple)):
            offsets = [(self.expr(e), e) for e in node.elts]
        else:
            try:  # a module constant such as ORIGIN = [0, 0]
                value = self.static(node)
            except _Error:
                value = None
            if not isinstance(value, (list, tuple)):
                raise self.error(node, f"{what} offsets must be a list such as [row, 0]")
            offsets = [(v, node) for v in value]
        if len(offsets) != len(tensor.shape):
            raise self.error(node, f"{what} needs {len(tensor.shape)} offsets, one per tensor dimension, got {len(offsets)}")
        return [self.index_value(v, e) for v, e in offsets]

    def op_store(self, node, name, expected):
        self.require_kind(node, "store", _KERNEL_KINDS)
        b = self.bind_args("store", node, ("tile", "offsets", "output"), {})
        tile = self.tile_arg(b["tile"], "pl.store's tile")
        out = self.tensor_arg(b["output"], "pl.store's output")
        offsets = self.offsets_arg(b["offsets"], out.type, "pl.store")
        if tile.type.space is not MemorySpace.Acc:
            tile = self.demand(tile, MemorySpace.Vec, b["tile"], "pl.store's tile")
        self.check_dtype(tile.type.dtype, out.type.dtype, node, "pl.store's tile and output")
        self.check_writable(out, b["output"], "pl.store into")
        (result,) = self.create("bp.store", [tile, out] + offsets, [out.type], {}, node, name)
        self.tensor_roots[result.handle] = self.root_of(out)
        return result

    def input_param_name(self, value: Value) -> Optional[str]:
        """The name of the In parameter whose tensor `value` is, if any."""
        root = self.root_of(value)
        dirs = self.program.param_dirs[self.spec.name]
        for index, param in enumerate(self.param_values):
            if param.handle == root and dirs[index] is ParamDirection.In:
                return self.source.tree.args.args[index + 1].arg
        return None

    def check_writable(self, tensor: Value, node, what: str) -> None:
        """An In parameter is never copied back to the caller: writing it
        would be lost without a word."""
        pname = self.input_param_name(tensor)
        if pname is not None:
            raise self.error(node, f"{what} '{pname}', an input of '{self.spec.name}'; declare it "
                                   "pl.Out[...] or pl.InOut[...] to write it")

    def op_move(self, node, name, expected):
        self.require_kind(node, "move", _KERNEL_KINDS)
        b = self.bind_args("move", node, ("tile", "target_memory"), {})
        tile = self.tile_arg(b["tile"], "pl.move's tile")
        space = self.space_arg(b["target_memory"], "target_memory")
        if space is None:
            raise self.error(node, "pl.move needs target_memory=")
        if space in (MemorySpace.Left, MemorySpace.Right):
            tile = self.demand(tile, MemorySpace.Mat, b["tile"], "the tile moved to " + space.name)
        if self.program.observing and tile.load_keys:
            return Value(tile.handle, tile.type.with_space(space))
        if tile.type.space is space:
            return tile
        if (tile.type.space, space) not in _LEGAL_MOVES:
            raise self.error(node, f"cannot move a tile from {tile.type.space.name} to {space.name} memory "
                                   "(legal: Mat->Left, Mat->Right, Acc->Mat, Acc->Vec, Vec->Mat)")
        return self.demand(tile, space, node, "pl.move's result")

    def check_dtype(self, a: DType, b: DType, node, what: str) -> None:
        if a != b:
            raise self.error(node, f"{what} have different dtypes: {a.name} and {b.name}")

    def vector_operand(self, value: Value, node, what: str) -> Value:
        return self.demand(value, MemorySpace.Vec, node, what)

    def binary_op(self, op: str, lhs: Value, rhs, node, name):
        self.require_kind(node, op, (FunctionType.InCore, FunctionType.AIV))
        lhs = self.vector_operand(lhs, node, f"pl.{op}'s operands")
        tile = lhs.type.with_space(MemorySpace.Vec)
        if isinstance(rhs, Value) and isinstance(rhs.type, TileType):
            rhs = self.vector_operand(rhs, node, f"pl.{op}'s operands")
            if op in ("add", "mul") and _broadcasts(rhs.type.shape, tile.shape):
                # gamma * x: the tile ops broadcast their second operand only,
                # and these two are commutative.
                lhs, rhs = rhs, lhs
                tile = lhs.type.with_space(MemorySpace.Vec)
            if rhs.type.shape != tile.shape and not _broadcasts(tile.shape, rhs.type.shape):
                raise self.error(node, f"pl.{op} operand shapes differ: {list(tile.shape)} and "
                                       f"{list(rhs.type.shape)}{_broadcast_hint(tile.shape)}")
            self.check_dtype(tile.dtype, rhs.type.dtype, node, f"pl.{op}'s operands")
        else:
            if isinstance(rhs, Value) and isinstance(rhs.type, ScalarType) and rhs.type.dtype != tile.dtype:
                raise self.error(node, f"pl.{op}'s scalar is {rhs.type.dtype.name} but the tile is {tile.dtype.name}")
            if op == "div" and not tile.dtype.is_float and rhs == 0 and not isinstance(rhs, Value):
                raise self.error(node, f"integer division by zero: pl.div of a tile of {tile.dtype.name} by 0")
            rhs = self.as_value(rhs, node, like=tile)
            if not isinstance(rhs.type, ScalarType):
                raise self.error(node, f"pl.{op}'s second operand must be a tile or a scalar, got {rhs.type}")
        (result,) = self.create(f"bp.{op}", [lhs, rhs], [tile], {}, node, name)
        return result

    def scalar_first(self, op: str, scalar, tile: Value, node, name):
        """`scalar - tile` and `scalar / tile` (as in 1.0 / (1.0 + pl.exp(-x))):
        the tile ops take their scalar second, so these become
        neg(tile) + scalar and full(scalar) / tile."""
        self.require_kind(node, op, (FunctionType.InCore, FunctionType.AIV))
        tile = self.vector_operand(tile, node, f"pl.{op}'s operands")
        if op == "sub":
            return self.binary_op("add", self.unary_op("neg", tile, node, None), scalar, node, name)
        dtype = tile.type.dtype
        value = scalar if isinstance(scalar, (int, float)) else 1
        if not dtype.is_float and isinstance(value, float) and not value.is_integer():
            raise self.error(node, f"{value} is not an integer but the tile is {dtype.name}")
        attr = self.float_attr(value, dtype, node) if dtype.is_float else self.int_attr(value, dtype, node)
        (filled,) = self.create("bp.full", [], [TileType(tile.type.shape, dtype, MemorySpace.Vec)], {"value": attr}, node)
        if isinstance(scalar, Value):
            filled = self.binary_op("mul", filled, scalar, node, None)
        return self.binary_op("div", filled, tile, node, name)

    def _binary(op):
        def handler(self, node, name, expected):
            b = self.bind_args(op, node, ("lhs", "rhs"), {})
            lhs = self.expr(b["lhs"])
            rhs = self.expr(b["rhs"])
            if not (isinstance(lhs, Value) and isinstance(lhs.type, TileType)):
                rhs_is_tile = isinstance(rhs, Value) and isinstance(rhs.type, TileType)
                if op in ("add", "mul", "maximum", "minimum") and rhs_is_tile:
                    lhs, rhs = rhs, lhs
                elif op in ("sub", "div") and rhs_is_tile:
                    return self.scalar_first(op, lhs, rhs, node, name)
                else:
                    raise self.error(b["lhs"], f"pl.{op}'s first operand must be a tile, got {_describe(lhs)}")
            return self.binary_op(op, lhs, rhs, node, name)

        return handler

    op_add = _binary("add")
    op_sub = _binary("sub")
    op_mul = _binary("mul")
    op_div = _binary("div")
    op_maximum = _binary("maximum")
    op_minimum = _binary("minimum")

    def unary_op(self, op: str, tile: Value, node, name):
        self.require_kind(node, op, (FunctionType.InCore, FunctionType.AIV))
        tile = self.vector_operand(tile, node, f"pl.{op}'s operand")
        if op in ("exp", "sqrt") and not tile.type.dtype.is_float:
            raise self.error(node, f"pl.{op} needs a floating-point tile, got {tile.type.dtype.name}")
        (result,) = self.create(f"bp.{op}", [tile], [tile.type.with_space(MemorySpace.Vec)], {}, node, name)
        return result

    def _unary(op):
        def handler(self, node, name, expected):
            b = self.bind_args(op, node, ("tile",), {})
            return self.unary_op(op, self.tile_arg(b["tile"], f"pl.{op}'s operand"), node, name)

        return handler

    op_exp = _unary("exp")
    op_sqrt = _unary("sqrt")
    op_relu = _unary("relu")
    op_neg = _unary("neg")
    op_abs = _unary("abs")

    def _reduction(op):
        def handler(self, node, name, expected):
            self.require_kind(node, op, (FunctionType.InCore, FunctionType.AIV))
            b = self.bind_args(op, node, ("tile",), {})
            tile = self.vector_operand(self.tile_arg(b["tile"], f"pl.{op}'s operand"), node, f"pl.{op}'s operand")
            if len(tile.type.shape) != 2:
                raise self.error(node, f"pl.{op} reduces the rows of a 2-D tile, got {list(tile.type.shape)}")
            result_type = TileType((tile.type.shape[0], 1), tile.type.dtype, MemorySpace.Vec)
            (result,) = self.create(f"bp.{op}", [tile], [result_type], {}, node, name)
            return result

        return handler

    op_row_sum = _reduction("row_sum")
    op_row_max = _reduction("row_max")

    def op_cast(self, node, name, expected):
        self.require_kind(node, "cast", (FunctionType.InCore, FunctionType.AIV))
        b = self.bind_args("cast", node, ("tile", "out_dtype"), {})
        tile = self.vector_operand(self.tile_arg(b["tile"], "pl.cast's operand"), node, "pl.cast's operand")
        dtype = self.dtype_arg(b["out_dtype"], "pl.cast's out_dtype")
        if dtype.mlir == "index":
            raise self.error(b["out_dtype"], "tiles cannot hold INDEX elements")
        (result,) = self.create("bp.cast", [tile], [TileType(tile.type.shape, dtype, MemorySpace.Vec)], {}, node, name)
        return result

    def op_full(self, node, name, expected):
        self.require_kind(node, "full", (FunctionType.InCore, FunctionType.AIV, FunctionType.AIC))
        b = self.bind_args("full", node, ("shape", "dtype", "value"), {"target_memory": None})
        shape = self.shape_arg(b["shape"], "pl.full's shape")
        dtype = self.dtype_arg(b["dtype"], "pl.full's dtype")
        value = self.static(b["value"])
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.error(b["value"], f"pl.full's value must be a number known at compile time, got {value!r}")
        if dtype.is_float:
            attr = self.float_attr(value, dtype, b["value"])
        else:
            if isinstance(value, float) and not value.is_integer():
                raise self.error(b["value"], f"pl.full's value {value} is not an integer but dtype is {dtype.name}")
            attr = self.int_attr(value, dtype, b["value"])
        # A vec tile, or an acc tile that starts a matmul chain: from
        # target_memory=, else from how it is used (as loads are).
        explicit = self.space_arg(b["target_memory"], "target_memory")
        if explicit not in (None, MemorySpace.Vec, MemorySpace.Acc):
            raise self.error(b["target_memory"], "pl.full makes Vec tiles, or Acc tiles that start a "
                                                 f"pl.matmul(..., acc=...) chain; got {explicit.name}")
        key = self.source.position(node)
        space = explicit
        if space is None and not self.program.observing:
            uses = self.program.inference.load_uses.get(key, set())
            if uses and uses <= {MemorySpace.Acc}:
                space = MemorySpace.Acc
            elif MemorySpace.Acc in uses:
                raise self.error(node, "this pl.full is used both as a matmul accumulator and as a vector "
                                       "tile; make one of each")
            else:
                space = MemorySpace.Vec
        if self.kind is FunctionType.AIC and space is not MemorySpace.Acc and not self.program.observing:
            raise self.error(node, "an AIC function can only make Acc tiles with pl.full (the starting "
                                   "value of a pl.matmul(..., acc=...) chain)")
        tile = TileType(shape, dtype, space)
        (result,) = self.create("bp.full", [], [tile.with_space(space or MemorySpace.Vec)], {"value": attr},
                                node, name)
        result.type = tile.with_space(space) if space else tile
        if explicit is None:
            result.load_keys = (key,)
        return result

    def op_matmul(self, node, name, expected):
        self.require_kind(node, "matmul", (FunctionType.InCore, FunctionType.AIC))
        b = self.bind_args("matmul", node, ("lhs", "rhs"), {"out_dtype": None, "acc": None})
        lhs = self.tile_arg(b["lhs"], "pl.matmul's first operand")
        rhs = self.tile_arg(b["rhs"], "pl.matmul's second operand")
        ls, rs = lhs.type.shape, rhs.type.shape
        if len(ls) != 2 or len(rs) != 2:
            raise self.error(node, "pl.matmul takes 2-D tiles")
        if ls[1] != rs[0]:
            raise self.error(node, f"pl.matmul inner dimensions differ: {list(ls)} x {list(rs)}")
        self.check_dtype(lhs.type.dtype, rhs.type.dtype, node, "pl.matmul's operands")
        acc_dtype = FP32 if lhs.type.dtype.is_float else _dtype("INT32")
        if b["out_dtype"] is not None:
            out = self.dtype_arg(b["out_dtype"], "pl.matmul's out_dtype")
            if out != acc_dtype:
                raise self.error(b["out_dtype"], f"pl.matmul accumulates {lhs.type.dtype.name} in {acc_dtype.name}; use pl.cast for {out.name}")
        lhs = self.demand(lhs, MemorySpace.Left, b["lhs"], "pl.matmul's first operand")
        rhs = self.demand(rhs, MemorySpace.Right, b["rhs"], "pl.matmul's second operand")
        result_type = TileType((ls[0], rs[1]), acc_dtype, MemorySpace.Acc)
        operands = [lhs, rhs]
        if b["acc"] is not None:
            acc = self.tile_arg(b["acc"], "pl.matmul's acc")
            known = acc.type.space is not None or not acc.load_keys
            if (acc.type.shape, acc.type.dtype) != (result_type.shape, result_type.dtype) or (
                    known and not acc.load_keys and acc.type.space is not MemorySpace.Acc):
                raise self.error(b["acc"], f"pl.matmul's acc must be {result_type}, got {acc.type}; a chain "
                                           "starts from a pl.matmul result or from pl.full")
            acc = self.demand(acc, MemorySpace.Acc, b["acc"], "pl.matmul's acc")
            operands.append(acc)
        (result,) = self.create("bp.matmul", operands, [result_type], {}, node, name)
        return result

    # ------------------------------------------------------- block identity

    def _block_query(op):
        def handler(self, node, name, expected):
            self.require_kind(node, f"tile.{op}", _KERNEL_KINDS)
            self.bind_args(f"tile.{op}", node, (), {})
            (result,) = self.create(f"bp.{op}", [], [ScalarType(INDEX)], {}, node, name)
            return result

        return handler

    op_tile_get_block_idx = _block_query("get_block_idx")
    op_tile_get_block_num = _block_query("get_block_num")
    op_tile_get_subblock_idx = _block_query("get_subblock_idx")

    def op_tensor_dim(self, node, name, expected):
        b = self.bind_args("tensor.dim", node, ("tensor", "axis"), {})
        tensor = self.tensor_arg(b["tensor"], "pl.tensor.dim's tensor")
        axis = self.static(b["axis"])
        rank = len(tensor.type.shape)
        if not isinstance(axis, int) or not -rank <= axis < rank:
            raise self.error(b["axis"], f"axis {axis!r} is out of range for a {rank}-D tensor")
        axis %= rank
        if tensor.type.shape[axis] is not dynamic:
            return tensor.type.shape[axis]
        (result,) = self.create("bp.dim", [tensor], [ScalarType(INDEX)], {"index": f"{axis} : i64"}, node, name)
        return result

    # ---------------------------------------------------------- orchestration

    def op_create_tensor(self, node, name, expected):
        self.require_kind(node, "create_tensor", (FunctionType.Orchestration, FunctionType.Pipeline))
        b = self.bind_args("create_tensor", node, ("shape", "dtype"), {})
        dtype = self.dtype_arg(b["dtype"], "pl.create_tensor's dtype")
        if not isinstance(b["shape"], (ast.List, ast.Tuple)) or not b["shape"].elts:
            raise self.error(b["shape"], "pl.create_tensor's shape must be a list of sizes")
        dims, sizes = [], []
        for elt in b["shape"].elts:
            value = self.expr(elt)
            if isinstance(value, int):
                if value <= 0:
                    raise self.error(elt, f"tensor sizes must be positive, got {value}")
                dims.append(value)
            else:
                sizes.append(self.index_value(value, elt))
                dims.append(dynamic)
        tensor = TensorType(tuple(dims), dtype)
        (result,) = self.create("bp.tensor_create", sizes, [tensor], {}, node, name)
        return result

    # -------------------------------------------------------------- transfers

    def op_device_id(self, node, name, expected):
        self.require_kind(node, "device_id", (FunctionType.Orchestration,))
        self.bind_args("device_id", node, (), {})
        (result,) = self.create("bp.device_id", [], [ScalarType(INDEX)], {}, node, name)
        return result

    def transfer_attrs(self, what: str, b, node) -> Dict[str, str]:
        """source_target_pairs and channel of a transfer, as attributes."""
        if self.program.devices is None:
            raise self.error(node, f"pl.{what} moves tensors between the devices of a mesh; compile "
                                   "the program for one with blockpipe.compile(..., devices=N)")
        pairs_node = b["source_target_pairs"]
        pairs = self.static_pairs(pairs_node, what)
        channel = self.static_int(b["channel"], f"pl.{what}'s channel")
        if channel < 0:
            raise self.error(b["channel"], f"pl.{what}'s channel must be >= 0, got {channel}")
        flat = ", ".join(f"[{s}, {t}]" for s, t in pairs)
        return {
            "source_target_pairs": f"dense<[{flat}]> : tensor<{len(pairs)}x2xi64>" if pairs
            else "dense<> : tensor<0x2xi64>",
            "channel_handle": f"#bp.channel<handle = {channel}, type = 1>",
        }

    def static_pairs(self, node, what: str) -> List[Tuple[int, int]]:
        """A compile-time list of [source, target] device pairs."""
        value = node
        if isinstance(node, ast.Name) and node.id not in self.env and node.id in self.source.globals:
            value = self.source.globals[node.id]
        items = value.elts if isinstance(value, (ast.List, ast.Tuple)) else value
        if not isinstance(items, (list, tuple)):
            raise self.error(node, f"pl.{what}'s source_target_pairs must be a list of "
                                   "[source, target] device pairs known at compile time")
        pairs = []
        for item in items:
            elts = item.elts if isinstance(item, (ast.List, ast.Tuple)) else item
            if not isinstance(elts, (list, tuple)) or len(elts) != 2:
                raise self.error(item if isinstance(item, ast.AST) else node,
                                 f"each of pl.{what}'s source_target_pairs is a [source, target] pair")
            pair = tuple(self.static_int(e, "a device id") if isinstance(e, ast.AST) else e for e in elts)
            if not all(isinstance(d, int) and not isinstance(d, bool) for d in pair):
                raise self.error(node, f"pl.{what}'s device ids must be integers, got {list(pair)}")
            pairs.append(pair)
        return pairs

    def op_send(self, node, name, expected):
        self.require_kind(node, "send", (FunctionType.Orchestration,))
        b = self.bind_args("send", node, ("tensor", "source_target_pairs"), {"channel": 0})
        tensor = self.tensor_arg(b["tensor"], "pl.send's tensor")
        self.create("bp.send", [tensor], [], self.transfer_attrs("send", b, node), node, name)
        return None

    def op_recv(self, node, name, expected):
        self.require_kind(node, "recv", (FunctionType.Orchestration,))
        b = self.bind_args("recv", node, ("tensor", "source_target_pairs"), {"channel": 0})
        dest = self.tensor_arg(b["tensor"], "pl.recv's tensor")
        self.check_writable(dest, b["tensor"], "pl.recv writes into")
        (result,) = self.create("bp.recv", [dest], [dest.type], self.transfer_attrs("recv", b, node), node, name)
        return result

    def op_collective_permute(self, node, name, expected):
        self.require_kind(node, "collective_permute", (FunctionType.Orchestration,))
        b = self.bind_args("collective_permute", node, ("tensor", "out", "source_target_pairs"),
                           {"channel": 0})
        tensor = self.tensor_arg(b["tensor"], "pl.collective_permute's tensor")
        out = self.tensor_arg(b["out"], "pl.collective_permute's out")
        if not _same_type(tensor.type, out.type):
            raise self.error(b["out"], f"pl.collective_permute's out must be {tensor.type} like its "
                                       f"tensor, got {out.type}")
        self.check_writable(out, b["out"], "pl.collective_permute writes into")
        (result,) = self.create("bp.collective_permute", [tensor, out], [out.type],
                                self.transfer_attrs("collective_permute", b, node), node, name)
        return result

    def call_function(self, node: ast.Call, callee: str, name, multi: bool):
        program = self.program
        spec = program.program.functions.get(callee)
        if spec is None:
            raise self.error(node.func, f"'{callee}' is not a @pl.function of this program")
        if node.keywords:
            raise self.error(node, f"call '{callee}' with positional arguments only")
        param_types, result_types = program.signatures[callee]
        if len(node.args) != len(param_types):
            raise self.error(node, f"'{callee}' takes {len(param_types)} arguments, got {len(node.args)}")
        args = []
        for arg_node, ptype in zip(node.args, param_types):
            value = self.expr(arg_node)
            if isinstance(ptype, ScalarType) and isinstance(value, (int, float)):
                value = self.constant(value, ptype.dtype, arg_node)
            # A pipeline's stage may take a tensor split into microbatches:
            # bp.stage's verifier checks those (and stage boundaries).
            staged = (self.kind is FunctionType.Pipeline and isinstance(value, Value)
                      and isinstance(value.type, TensorType) and isinstance(ptype, TensorType))
            if not isinstance(value, Value) or not (staged or _same_type(value.type, ptype)):
                raise self.error(arg_node, f"argument of '{callee}' must be {ptype}, got {_describe(value)}")
            args.append(value)

        callee_kind = spec.kind
        if self.kind in (FunctionType.Orchestration, FunctionType.Group):
            callee_params = program.sources[callee].tree.args.args[1:]
            for arg_node, arg, direction, param in zip(node.args, args, program.param_dirs[callee], callee_params):
                if direction is not ParamDirection.In:
                    self.check_writable(arg, arg_node, f"'{callee}' writes its {direction.name} parameter "
                                                       f"'{param.arg}', given")
        if self.kind is FunctionType.Orchestration:
            if callee_kind not in _KERNEL_KINDS + (FunctionType.Group,):
                raise self.error(node, f"orchestration functions launch incore, aic, aiv or group functions; '{callee}' is {callee_kind.name}")
            results = self.launch(node, callee, args, result_types, name)
        elif self.kind is FunctionType.Group:
            if callee_kind not in (FunctionType.AIC, FunctionType.AIV):
                raise self.error(node, f"a group calls its AIC and AIV functions; '{callee}' is {callee_kind.name}")
            results = self.create("func.call", args, result_types, {"callee": _symbol_ref(callee)}, node, name)
        elif self.kind is FunctionType.Pipeline:
            if callee_kind is not FunctionType.Orchestration:
                raise self.error(node, f"a pipeline calls orchestration stages; '{callee}' is {callee_kind.name}")
            # Result j is typed like the argument of the j-th Out/InOut
            # parameter (whole or split).
            outs = [arg for arg, d in zip(args, program.param_dirs[callee]) if d is not ParamDirection.In]
            staged_types = [arg.type for arg in outs] if len(outs) == len(result_types) else result_types
            results = self.create("bp.stage", args, staged_types, {"callee": _symbol_ref(callee)}, node, name)
        else:
            raise self.error(node, f"{self.kind.name} functions cannot call other functions")
        if multi:
            return results
        if len(results) == 1:
            return results[0]
        if not results:
            return None
        return results

    def launch(self, node, callee, args, result_types, name):
        if self.spmd_args is None:
            core_num, sync_start, name_hint = 1, False, None
        else:
            core_num, sync_start, name_hint = self.spmd_args
        operands = list(args)
        if isinstance(core_num, Value):
            operands = [core_num] + operands
            segments = f"array<i32: 1, {len(args)}>"
        else:
            segments = f"array<i32: 0, {len(args)}>"
        attrs = {"callee": _symbol_ref(callee), "operandSegmentSizes": segments}
        if not isinstance(core_num, Value):
            attrs["core_num"] = f"{core_num} : i64"
        if sync_start:
            attrs["sync_start"] = "unit"
        if name_hint:
            attrs["name_hint"] = _mlir_string(name_hint)
        return self.create("bp.launch", operands, result_types, attrs, node, name)

    # ------------------------------------------------------------------ pipes

    def _pipe_init(side: FunctionType):
        what = "aic_initialize_pipe" if side is FunctionType.AIC else "aiv_initialize_pipe"

        def handler(self, node, name, expected):
            self.require_kind(node, what, (side,))
            b = self.bind_args(what, node, ("dir_mask", "slot_size"), {"slot_num": None, "pipe_id": 0})
            try:
                dir_mask = self.program.core.pipe_dirs_attr(self.static_int(b["dir_mask"], "dir_mask"))
            except ValueError as e:
                raise self.error(b["dir_mask"], str(e)) from None
            slot_size = self.static_int(b["slot_size"], "slot_size")
            if slot_size <= 0:
                raise self.error(b["slot_size"], f"slot_size must be positive, got {slot_size}")
            attrs = {"id": f"{self.static_int(b['pipe_id'], 'pipe_id')} : i64",
                     "dir_mask": dir_mask, "slot_size": f"{slot_size} : i64"}
            slot_node = b["slot_num"]
            if isinstance(slot_node, ast.AST) and self.static(slot_node) is None:
                slot_node = None
            if slot_node is not None:
                slot_num = self.static_int(slot_node, "slot_num")
                if slot_num <= 0:
                    raise self.error(slot_node, f"slot_num must be positive, got {slot_num}")
                attrs["slot_num"] = f"{slot_num} : i64"
            self.create("bp.initialize_pipe", [], [], attrs, node)
            return None

        return handler

    op_aic_initialize_pipe = _pipe_init(FunctionType.AIC)
    op_aiv_initialize_pipe = _pipe_init(FunctionType.AIV)

    def static_int(self, node, what: str) -> int:
        if isinstance(node, int):
            return node
        value = self.static(node)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(node, f"{what} must be an integer known at compile time, got {value!r}")
        return value

    def pipe_options(self, what: str, node: ast.Call, required: Sequence[str]):
        b = self.bind_args(what, node, tuple(required), {"pipe_id": 0, "aiv_idx": 0})
        aiv_idx = self.static_int(b["aiv_idx"], "aiv_idx")
        if aiv_idx != 0:
            raise self.error(b["aiv_idx"], "pipes connect the AIC with AIV subblock 0; aiv_idx must be 0")
        return b, self.static_int(b["pipe_id"], "pipe_id")

    def _push(side: FunctionType, direction: str):
        what = "tpush_to_aiv" if side is FunctionType.AIC else "tpush_to_aic"

        def handler(self, node, name, expected):
            self.require_kind(node, what, (side,))
            b, pipe = self.pipe_options(what, node, ("tile",))
            tile = self.tile_arg(b["tile"], f"pl.{what}'s tile")
            if side is FunctionType.AIV:
                tile = self.vector_operand(tile, b["tile"], f"pl.{what}'s tile")
            elif tile.load_keys and self.program.observing:
                self.record_load_use(tile, MemorySpace.Mat)
            if self.program.observing:
                key = (self.spec.name, pipe, direction)
                self.program.recorded_pushes.setdefault(key, set()).add((tile.type.shape, tile.type.dtype))
            self.create("bp.tpush", [tile], [], {"dir": _PIPE_DIRS[direction], "pipe": f"{pipe} : i64"}, node)
            return None

        return handler

    op_tpush_to_aiv = _push(FunctionType.AIC, "c2v")
    op_tpush_to_aic = _push(FunctionType.AIV, "v2c")

    def _pop(side: FunctionType, direction: str):
        what = "tpop_from_aic" if side is FunctionType.AIV else "tpop_from_aiv"
        default_space = MemorySpace.Vec if side is FunctionType.AIV else MemorySpace.Mat

        def handler(self, node, name, expected):
            self.require_kind(node, what, (side,))
            _, pipe = self.pipe_options(what, node, ())
            # Only this function's peers in a group push into its pipes
            # (another group may use the same pipe id for other tiles).
            found = set()
            for peer in self.group_peers():
                found |= self.program.pushes_of((peer, pipe, direction))
            if isinstance(expected, TileType):
                if found and (expected.shape, expected.dtype) not in found and not self.program.observing:
                    pushed_text = ", ".join(str(TileType(*t)) for t in sorted(found, key=str))
                    raise self.error(node, f"pl.{what}() is annotated {TileType(expected.shape, expected.dtype)} but "
                                           f"pipe {pipe} carries {pushed_text} from the other half of the group")
                tile = expected if expected.space else expected.with_space(default_space)
            else:
                if len(found) > 1 and not self.program.observing:
                    raise self.error(node, f"the peers of '{self.spec.name}' push tiles of different types into "
                                           f"pipe {pipe}: annotate it, e.g. t: pl.Tile[[16, 16], pl.FP32] = "
                                           f"pl.{what}()")
                pushed = next(iter(found)) if len(found) == 1 else None
                if pushed is None:
                    if not self.program.observing:
                        raise self.error(node, f"cannot infer the tile type of pl.{what}() on pipe {pipe}: "
                                               f"annotate it, e.g. t: pl.Tile[[16, 16], pl.FP32] = pl.{what}()")
                    pushed = ((1,), FP32)
                tile = TileType(pushed[0], pushed[1], default_space)
            (result,) = self.create("bp.tpop", [], [tile], {"dir": _PIPE_DIRS[direction], "pipe": f"{pipe} : i64"}, node, name)
            return result

        return handler

    def group_peers(self) -> List[str]:
        """The functions a group pairs with this one (its other halves)."""
        functions = self.program.program.functions
        peers: List[str] = []
        for name, spec in functions.items():
            calls = [c for c in self.program.sources[name].self_calls if c in functions]
            if spec.kind is FunctionType.Group and self.spec.name in calls:
                peers += [c for c in calls if c != self.spec.name and c not in peers]
        return peers

    op_tpop_from_aic = _pop(FunctionType.AIV, "c2v")
    op_tpop_from_aiv = _pop(FunctionType.AIC, "v2c")

    def _free(side: FunctionType, direction: str):
        what = "tfree_to_aic" if side is FunctionType.AIV else "tfree_to_aiv"

        def handler(self, node, name, expected):
            self.require_kind(node, what, (side,))
            _, pipe = self.pipe_options(what, node, ())
            self.create("bp.tfree", [], [], {"dir": _PIPE_DIRS[direction], "pipe": f"{pipe} : i64"}, node)
            return None

        return handler

    op_tfree_to_aic = _free(FunctionType.AIV, "c2v")
    op_tfree_to_aiv = _free(FunctionType.AIC, "v2c")

    def op_range(self, node, name, expected):
        raise self.error(node, "pl.range is only valid as the iterable of a for loop")

    def op_spmd(self, node, name, expected):
        raise self.error(node, "pl.spmd is only valid as 'with pl.spmd(n):' or 'for i in pl.spmd(n):'")


def _python_number(value):
    """A numpy scalar (np.int64(16), np.float32(0.5)) as the Python number it
    holds, also inside a list or tuple; anything else unchanged."""
    if type(value) in (list, tuple):
        return type(value)(_python_number(v) for v in value)
    if isinstance(value, bool) or type(value) in (int, float):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    return value


def _too_large():
    raise OverflowError


def _dtype(name: str) -> DType:
    from blockpipe.language import types

    return getattr(types, name)


_INT_BITS = {"i32": 32, "i64": 64, "index": 64}


# The bit patterns of +inf, -inf and NaN: MLIR spells a float attribute
# that is not finite in hexadecimal.
_NON_FINITE_BITS = {
    "f32": (0x7F800000, 0xFF800000, 0x7FC00000),
    "f16": (0x7C00, 0xFC00, 0x7E00),
    "bf16": (0x7F80, 0xFF80, 0x7FC0),
}


# The magnitude from which a float rounds to infinity in each dtype (the
# largest finite value plus half its ulp).
_OVERFLOW_AT = {"f32": 2.0**128 - 2.0**103, "f16": 65520.0, "bf16": 2.0**128 - 2.0**119}


def _float_attr(value: Literal, dtype: DType) -> Optional[str]:
    """The MLIR attribute of a float constant; None for a finite value
    beyond the dtype's range."""
    value = float(value)
    if math.isfinite(value):
        if abs(value) >= _OVERFLOW_AT[dtype.mlir]:
            return None
        # MLIR's float literal needs a '.': Python writes 1e-05 for 1.0e-05.
        mantissa, e, exponent = repr(value).partition("e")
        if "." not in mantissa:
            mantissa += ".0"
        return f"{mantissa}{e}{exponent} : {dtype.mlir}"
    pos_inf, neg_inf, nan = _NON_FINITE_BITS[dtype.mlir]
    bits = nan if math.isnan(value) else pos_inf if value > 0 else neg_inf
    return f"0x{bits:X} : {dtype.mlir}"


def _symbol_ref(name: str) -> str:
    """`@name`, quoted when the name is not a bare MLIR identifier (a Python
    identifier may hold letters beyond ASCII)."""
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_$.]*", name):
        return f"@{name}"
    return f"@{_mlir_string(name)}"


def _mlir_string(text: str) -> str:
    escaped = "".join(
        ch if 0x20 <= ord(ch) < 0x7F and ch not in '"\\' else "".join(f"\\{b:02X}" for b in ch.encode())
        for ch in text
    )
    return f'"{escaped}"'


def _same_tensor_type(a: IRType, b: IRType) -> bool:
    return _same_type(a, b)


def _same_type(a: IRType, b: IRType) -> bool:
    if isinstance(a, TileType) and isinstance(b, TileType):
        return a.shape == b.shape and a.dtype == b.dtype and (a.space or MemorySpace.Vec) == (b.space or MemorySpace.Vec)
    return a == b


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _same_value(a, b) -> bool:
    if isinstance(a, Value) or isinstance(b, Value):
        return isinstance(a, Value) and isinstance(b, Value) and a.handle == b.handle
    return type(a) is type(b) and a == b


def _unknown_space(t: IRType) -> bool:
    """A tile whose memory space the observing run has not inferred yet."""
    return isinstance(t, TileType) and t.space is None


def _same_shape_unknown_space(a: IRType, b: IRType) -> bool:
    return (isinstance(a, TileType) and isinstance(b, TileType) and (a.space is None or b.space is None)
            and a.shape == b.shape and a.dtype == b.dtype)


def _assigned_names(stmts: Sequence[ast.stmt]) -> List[str]:
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


def _assignment_of(stmts: Sequence[ast.stmt], name: str) -> Optional[ast.AST]:
    """The first statement among `stmts` (or nested in them) that assigns `name`."""
    for stmt in stmts:
        for node in ast.walk(stmt):
            targets = node.targets if isinstance(node, ast.Assign) else (
                [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else [])
            if any(isinstance(sub, ast.Name) and sub.id == name for t in targets for sub in ast.walk(t)):
                return node
    return None


def _broadcasts(lhs: tuple, rhs: tuple) -> bool:
    """Whether a binary op's rhs of shape `rhs` broadcasts over an `lhs` tile
    (the result has lhs's shape): an Mx1 rhs along the rows of MxN (N > 1),
    or a 1xN rhs along the columns of MxN (M > 1). bp's verifier agrees."""
    if len(lhs) != 2 or len(rhs) != 2:
        return False
    rows, cols = lhs
    return (cols > 1 and rhs == (rows, 1)) or (rows > 1 and rhs == (1, cols))


def _broadcast_hint(lhs: tuple) -> str:
    """The broadcast forms a rhs could take against `lhs`, for an error."""
    forms = []
    if len(lhs) == 2 and lhs[1] > 1:
        forms.append(f"[{lhs[0]}, 1] (broadcast along rows)")
    if len(lhs) == 2 and lhs[0] > 1:
        forms.append(f"[1, {lhs[1]}] (broadcast along columns)")
    return f"; the second operand may also be {' or '.join(forms)}" if forms else ""


def _describe(value) -> str:
    if isinstance(value, Value):
        return str(value.type)
    if value is None:
        return "nothing"
    return repr(value)


def _cmp_symbol(op: ast.cmpop) -> str:
    return {
        ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=",
        ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in",
    }.get(type(op), type(op).__name__)


def _op_symbol(op: ast.operator) -> str:
    return {
        ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//",
        ast.Mod: "%", ast.Pow: "**", ast.MatMult: "@", ast.BitAnd: "&", ast.BitOr: "|",
        ast.BitXor: "^", ast.LShift: "<<", ast.RShift: ">>",
    }.get(type(op), type(op).__name__)
