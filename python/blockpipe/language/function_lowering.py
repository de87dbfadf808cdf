"""Lowering one `@pl.function`: its signature, its statements in order, and
calls. Statements, calls, the DSL operations' argument checks and op building,
expressions, arithmetic, control flow, compile-time evaluation and memory
spaces are in the mixins this class combines; each DSL operation is a function
in `ops/`."""

from __future__ import annotations

import ast
import typing
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple, Union

from blockpipe.errors import CompileError
from blockpipe.language import strips, tensor_valid
from blockpipe.language.arithmetic import Arithmetic
from blockpipe.language.calls import Calls
from blockpipe.language.consteval import ConstEval
from blockpipe.language.control_flow import ControlFlow
from blockpipe.language.expressions import Expressions
from blockpipe.language.memory_spaces import MemorySpaces
from blockpipe.language.op_building import OpBuilding
from blockpipe.language.program import FunctionSpec
from blockpipe.language.source import Source
from blockpipe.language.split_regions import SplitRegions
from blockpipe.language.statements import Statements
from blockpipe.language.types import (
    FunctionType,
    ParamDirection,
    ParamType,
    ScalarType,
    SplitMode,
    Tensor,
    TensorType,
    TileType,
    is_shapeless,
    is_unsigned,
    param_annotation,
)
from blockpipe.language.unsupported import Unsupported
from blockpipe.language.values import (
    IRType,
    Literal,
    LoweringError,
    Value,
)

if TYPE_CHECKING:
    from blockpipe.language.lowering import ProgramLowering


class FunctionLowering(
    Statements,
    Calls,
    OpBuilding,
    Expressions,
    Arithmetic,
    ControlFlow,
    SplitRegions,
    ConstEval,
    MemorySpaces,
):
    """Builds one function: statements in order, values in `env`."""

    def __init__(self, program: ProgramLowering, spec: FunctionSpec, source: Source):
        self.program = program
        self.spec = spec
        self.kind = spec.kind
        self.source = source
        self.builder = program.builder
        self.env: Dict[str, Union[Value, Literal]] = {}
        # pl.reserve_buffer's of this function, by name.
        self.reserved: Dict[str, Any] = {}
        # The tensors (roots) the function writes or passes to be written.
        self.written: set = set()
        # (tile, direction, pipe, the pop's node) of every pl.tpop_from_*
        # so far, for the pl.tfree_to_*(tile) that frees it; the freed ones
        # (handle -> line of the free) may not be used any more.
        self.popped: List[Tuple[Value, str, int, ast.AST]] = []
        self.freed: Dict[int, int] = {}
        self.result_types: Optional[List[IRType]] = None
        self.param_values: List[Value] = []
        # Inside a pl.split_aiv region: its SplitMode and the lane index.
        self.lane: Optional[SplitMode] = None
        self.lane_value: Optional[Value] = None
        self.region_loops: set = set()
        self.constants: Dict[Tuple[str, Any], Value] = {}
        self.spmd_depth = 0
        self.region_depth = 0
        self.spmd_args: Optional[Tuple[Union[Value, int], bool, Optional[str]]] = None
        # Names whose block has ended, with the error a later use reports.
        self.out_of_scope: Dict[str, str] = {}
        # Of those, the ones a loop could carry: (the loop's key, the type,
        # the message in out_of_scope).
        self.loop_values: Dict[str, Tuple[Any, Any, str]] = {}
        # The statement that last assigned each name.
        self.assigned_at: Dict[str, ast.AST] = {}
        # Each tensor value's tensor (handle of a parameter): stores, loops
        # and ifs return the tensor they were given.
        self.tensor_roots: Dict[int, int] = {}
        # A tensor parameter's pl.TensorView valid shape, by its handle
        # (tensor_valid).
        self.tensor_views: Dict[int, tuple] = {}
        # Inside `out[:] = ...` of a tensor whose dim 0 is dynamic: the rows
        # being computed (strips.py).
        self.strip: Optional[strips.Strip] = None

    # ----------------------------------------------------------------- errors

    def error(self, node: Optional[ast.AST], message: str) -> LoweringError:
        return LoweringError(node, message)

    def _compile_error(self, err: LoweringError) -> CompileError:
        from blockpipe.language.lowering import _located_error

        return _located_error(self.source, err)

    def loc(self, node: ast.AST, name: str = ""):
        line, col = self.source.position(node)
        return self.program.core.SourceLoc(self.source.file, line, col, name)

    # ------------------------------------------------------------------- entry

    def lower(self) -> None:
        try:
            self._lower()
        except LoweringError as err:
            raise self._compile_error(err) from None

    def _lower(self) -> None:
        tree = self.source.tree
        args = tree.args
        if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs or args.defaults:
            raise self.error(tree, "blockpipe functions take plain positional parameters only")
        params = args.args
        if not params or params[0].arg != "self":
            raise self.error(
                tree, f"'{self.spec.name}' must be a method whose first parameter is self"
            )
        annotations = self.spec.pyfunc.__annotations__
        param_types: List[IRType] = []
        dirs: List[ParamDirection] = []
        arg_attrs: List[Dict[str, Any]] = []
        views: List[Optional[tuple]] = []
        for param in params[1:]:
            ann = param_annotation(
                self.annotation(annotations.get(param.arg), param.annotation or param)
            )
            if is_shapeless(ann):
                raise self.error(
                    param,
                    f"parameter '{param.arg}' of '{self.spec.name}' is a pl.Tensor without "
                    "shape and dtype; only @pl.jit functions take them from their call: "
                    "annotate it pl.Tensor[[dims...], dtype]",
                )
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
                raise self.error(
                    param, f"parameter '{param.arg}' has unsupported annotation {ann!r}"
                )
            if isinstance(ann, ScalarType) and is_unsigned(ann.dtype):
                # Scalars are signless in the IR: the parameter would take
                # the signed range of its width.
                raise self.error(
                    param,
                    f"parameter '{param.arg}' of '{self.spec.name}' is a pl.Scalar[pl."
                    f"{ann.dtype.name}]; unsigned scalar parameters are not supported by "
                    "blockpipe: take a wider signed one (pl.Scalar[pl.INT64]) and pl.cast it",
                )
            if isinstance(ann, TensorType):
                views.append(tensor_valid.declared(self, ann, param.annotation, param))
            else:
                views.append(None)
            param_types.append(ann)
            dirs.append(direction)
            attrs = {}
            if direction is not ParamDirection.In:
                attrs["bp.dir"] = self.builder.param_dir(direction.value)
            arg_attrs.append(attrs)

        declared_results = self._declared_results(
            self.annotation(annotations.get("return"), tree.returns or tree), tree
        )
        self.result_types = declared_results
        b = self.builder
        fn_attrs = {"bp.kind": b.function_kind(self.kind.value)}
        if self.spec.device is not None:
            fn_attrs["bp.device"] = b.i64(self.spec.device)
        if self.spec.microbatches is not None:
            fn_attrs["bp.microbatches"] = b.i64(self.spec.microbatches)
        if self.spec.schedule is not None:
            fn_attrs["bp.schedule"] = b.string(self.spec.schedule)
        split = self.spec.split
        regions = self.split_aiv_regions(tree.body) if self.kind is FunctionType.InCore else []
        if regions:
            if split is not SplitMode.NONE:
                raise self.error(
                    regions[0][0],
                    f"'{self.spec.name}' is split {split.name} and has pl.split_aiv "
                    "regions; a kernel with regions takes its split from them",
                )
            # The launch runs both AIV lanes; each region's pl.aiv_shard
            # says which half a lane takes (task-parallel NONE regions take
            # none: any split mode runs both lanes).
            split = next(
                (mode for _, mode in regions if mode is not SplitMode.NONE), SplitMode.UP_DOWN
            )
        self.region_loops = {id(stmt) for stmt, _ in regions}
        if split is not SplitMode.NONE:
            fn_attrs["bp.split"] = b.split_mode(split.name.lower())
        if self.spec.slot_num is not None:
            fn_attrs["bp.slot_num"] = b.i64(self.spec.slot_num)

        # The signature must be known before the body is built, but results may
        # be inferred from the return statement: build into a placeholder whose
        # results are fixed when the return is seen.
        self.program.param_dirs[self.spec.name] = dirs
        handles = self.builder.begin_function(
            self.spec.name,
            [self.program.ir_type(t) for t in param_types],
            [p.arg for p in params[1:]],
            arg_attrs,
            [self.program.ir_type(t) for t in (declared_results or [])],
            fn_attrs,
            self.loc(tree, self.spec.name),
        )
        for param, handle, ptype, view in zip(params[1:], handles, param_types, views):
            value = Value(handle, ptype)
            if view is not None:
                self.tensor_views[handle] = view
            self.env[param.arg] = value
            self.param_values.append(value)
        self.program.signatures[self.spec.name] = (param_types, declared_results or [])
        self.program.named_dims[self.spec.name] = [
            (i, p.arg, t.dim_names)
            for i, (p, t) in enumerate(zip(params[1:], param_types))
            if isinstance(t, TensorType) and t.dim_names
        ]
        self.saw_return = False
        self.block(tree.body, top_level=True)
        if not self.saw_return:
            if declared_results:
                raise self.error(tree, f"'{self.spec.name}' declares results but does not return")
            self.builder.create("func.return", [], [], {}, self.loc(tree))
            self._unwritten_outputs_are_inputs()
        for tile, direction, pipe, node in self.popped:
            if tile.handle not in self.freed:
                free = "pl.tfree_to_aic" if direction == "c2v" else "pl.tfree_to_aiv"
                raise self.error(
                    node,
                    f"the tile popped here from pipe {pipe} is never freed; {free}(t) "
                    "after its last use releases its slot",
                )
        self.builder.end_function()

    def _unwritten_outputs_are_inputs(self) -> None:
        """pypto's group halves take the group's parameters, Out ones too,
        whether they write them or not: in an AIC or AIV function without a
        return, an Out/InOut tensor it never writes is an input."""
        if self.kind not in (FunctionType.AIC, FunctionType.AIV):
            return
        dirs = self.program.param_dirs[self.spec.name]
        for index, (value, direction) in enumerate(zip(self.param_values, dirs)):
            if direction is not ParamDirection.In and value.handle not in self.written:
                self.builder.clear_param_dir(self.spec.name, index)
                dirs[index] = ParamDirection.In

    def annotation(self, ann, node):
        """An annotation's value; string annotations (`from __future__ import
        annotations`) are evaluated in the function's namespace."""
        if isinstance(ann, str):
            try:
                # The user's own source text, in the function's globals and
                # the scope that defined the program (Python's own lookup
                # order).
                ann = eval(ann, dict(self.source.globals), self.program.program.scope)
            except Exception as exc:  # noqa: BLE001 - report any failure at the annotation
                raise self.error(node, f"cannot evaluate annotation '{ann}': {exc}") from None
        if isinstance(ann, Unsupported):
            raise self.error(node, ann.message)
        return ann

    def _declared_results(self, ann, node) -> Optional[List[IRType]]:
        if ann is None or ann is Tensor:  # `-> pl.Tensor`: the return says
            return None
        if typing.get_origin(ann) in (tuple, typing.Tuple):  # `-> tuple[pl.Tensor[...], ...]`
            ann = typing.get_args(ann)
        items = list(ann) if isinstance(ann, (tuple, list)) else [ann]
        if any(item is Tensor or is_shapeless(item) for item in items):
            return None  # shaped by the return statement
        result = []
        for item in items:
            if isinstance(item, ParamType):
                item = item.inner
            if not isinstance(item, (TensorType, ScalarType)):
                raise self.error(node, f"unsupported return annotation {item!r}")
            result.append(item)
        return result

    # ------------------------------------------------------------------ scopes

    def block_local_message(self, name: str, stmt: ast.stmt) -> str:
        return f"'{name}' is only defined inside the block at line {self.source.position(stmt)[0]}"

    def root_of(self, value: Value) -> int:
        return self.tensor_roots.get(value.handle, value.handle)

    def tensor_value(self, value: Value) -> Value:
        """The parameter whose tensor `value` is."""
        root = self.root_of(value)
        return next((p for p in self.param_values if p.handle == root), value)
