"""Lowering one `@pl.function`: its signature, its statements in order, and
calls. Expressions, control flow, compile-time evaluation and memory spaces
are in the mixins this class combines; each DSL operation is a function in
`ops/`."""

from __future__ import annotations

import ast
import types
import typing
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple, Union

from blockpipe.errors import CompileError
from blockpipe.language import ops, strips, valid_shapes
from blockpipe.language.consteval import ConstEval
from blockpipe.language.control_flow import ControlFlow
from blockpipe.language.expressions import Expressions
from blockpipe.language.memory_spaces import MemorySpaces
from blockpipe.language.program import FunctionSpec
from blockpipe.language.source import Source
from blockpipe.language.types import (
    INDEX,
    DType,
    FunctionType,
    ParamDirection,
    ParamType,
    ScalarType,
    SplitMode,
    TensorType,
    TileType,
    TileView,
    dynamic,
)
from blockpipe.language.unsupported import Unsupported
from blockpipe.language.values import (
    KERNEL_KINDS,
    IRType,
    Literal,
    LoweringError,
    Value,
    describe,
    same_type,
)

if TYPE_CHECKING:
    from blockpipe.language.lowering import ProgramLowering


class FunctionLowering(Expressions, ControlFlow, ConstEval, MemorySpaces):
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
        # The statement that last assigned each name.
        self.assigned_at: Dict[str, ast.AST] = {}
        # Each tensor value's tensor (handle of a parameter): stores, loops
        # and ifs return the tensor they were given.
        self.tensor_roots: Dict[int, int] = {}
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
                raise self.error(
                    param, f"parameter '{param.arg}' has unsupported annotation {ann!r}"
                )
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
        for param, handle, ptype in zip(params[1:], handles, param_types):
            value = Value(handle, ptype)
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
        if ann is None:
            return None
        if typing.get_origin(ann) in (tuple, typing.Tuple):  # `-> tuple[pl.Tensor[...], ...]`
            ann = typing.get_args(ann)
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
            binop = ast.BinOp(
                left=ast.Name(stmt.target.id, ast.Load()), op=stmt.op, right=stmt.value
            )
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
        elif isinstance(target, (ast.Tuple, ast.List)) and all(
            isinstance(e, ast.Name) for e in target.elts
        ):
            values = self.expr(stmt.value, name=None, multi=True)
            if not isinstance(values, list) or len(values) != len(target.elts):
                count = len(values) if isinstance(values, list) else 1
                raise self.error(
                    stmt, f"cannot unpack {count} value(s) into {len(target.elts)} names"
                )
            for elt, value in zip(target.elts, values):
                self.bind(elt.id, value, elt)
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            self.bind(target.value.id, self.store_window(target, stmt.value, stmt), target.value)
        else:
            raise self.error(
                target, "only names, a tuple of names or a window x[a:b, ...] can be assigned"
            )

    def store_window(self, target: ast.Subscript, value_node: ast.expr, stmt: ast.stmt) -> Value:
        """`x[i:i + 16, :] = t`: the tile `t` stored into that window of the
        tensor x (or written into that window of the tile x); returns the
        written tensor (tile)."""
        base = self.expr(target.value)
        if not (isinstance(base, Value) and isinstance(base.type, (TensorType, TileType))):
            raise self.error(target.value, f"cannot assign into a window of {describe(base)}")
        if strips.applies(self, target, base):
            return strips.assign(self, target, value_node, stmt, base)
        first, dims = self.window(target, base)
        value = self.tile_operand(self.expr(value_node), value_node)
        if not (isinstance(value, Value) and isinstance(value.type, TileType)):
            raise self.error(value_node, f"a window is assigned a tile, got {describe(value)}")
        if not value.type.unknown:
            shape = tuple(value.type.shape)
            lead = len(dims) - len(shape)
            if lead < 0 or any(d != 1 for d in dims[:lead]) or tuple(dims[lead:]) != shape:
                raise self.error(
                    stmt,
                    f"the window {list(dims)} of '{target.value.id}' does not fit a tile of "
                    f"{list(shape)}",
                )
        call = ops.Call(stmt, None, None)
        if isinstance(base.type, TileType):
            from blockpipe.language.ops.vector import vector_operand

            whole = vector_operand(self, base, stmt, "the assigned tile")
            part = vector_operand(self, value, stmt, "the assigned tile")
            self.check_dtype(part.type.dtype, whole.type.dtype, stmt, "the window and the tile")
            (result,) = self.create("bp.insert", [part, whole] + first, [whole.type], {}, stmt)
            return result
        from blockpipe.language.ops.memory import store_tile

        return store_tile(
            self,
            call,
            value,
            base,
            first,
            value_node,
            target.value,
            "the assignment",
            ("tile", "window"),
        )

    def tile_view(self, annotation: ast.expr):
        """An annotation without its pl.TileView(...) entry (the 4th of a
        pl.Tile[...]), and that entry's call, if any."""
        if not (
            isinstance(annotation, ast.Subscript)
            and isinstance(annotation.slice, ast.Tuple)
            and len(annotation.slice.elts) == 4
            and isinstance(annotation.slice.elts[3], ast.Call)
        ):
            return annotation, None
        view = annotation.slice.elts[3]
        try:
            is_view = self.static(view.func) is TileView
        except LoweringError:
            is_view = False
        if not is_view:
            return annotation, None
        entries = ast.copy_location(
            ast.Tuple(elts=annotation.slice.elts[:3], ctx=ast.Load()), annotation.slice
        )
        stripped = ast.copy_location(
            ast.Subscript(value=annotation.value, slice=entries, ctx=ast.Load()), annotation
        )
        return stripped, view

    def view_valid(self, view: ast.Call, tile: TileType):
        """The valid shape a pl.TileView(...) call declares for `tile`."""
        from blockpipe.language.ops.memory import valid_arg

        valid = view.args[0] if view.args else None
        for keyword in view.keywords:
            if keyword.arg == "valid_shape" and valid is None:
                valid = keyword.value
            else:
                raise self.error(
                    keyword.value, f"pl.TileView({keyword.arg}=...) is not supported by blockpipe"
                )
        if valid is None:
            return None
        if tile.unknown:
            raise self.error(
                view, "a pl.TileView(valid_shape=...) needs the tile's shape in the annotation"
            )
        return valid_arg(self, valid, tile.shape, "pl.TileView")

    def ann_assign(self, stmt: ast.AnnAssign) -> None:
        if not isinstance(stmt.target, ast.Name) or stmt.value is None:
            raise self.error(stmt, "an annotated assignment needs a name and a value")
        annotation, view = self.tile_view(stmt.annotation)
        ann = self.static(annotation)
        if isinstance(ann, ParamType):
            ann = ann.inner
        if not isinstance(ann, (TensorType, TileType, ScalarType)):
            raise self.error(stmt.annotation, f"unsupported annotation {ann!r}")
        value = self.expr(stmt.value, name=stmt.target.id, expected=ann)
        vtype = value.type if isinstance(value, Value) else None
        if (
            isinstance(ann, TileType)
            and isinstance(vtype, TileType)
            and vtype.unknown
            and not (ann.space is not None and vtype.space is not None and ann.space != vtype.space)
        ):
            # A popped tile's type, still to be inferred: bp-infer-pipe-types
            # checks that it is the annotation's.
            target = TileType(ann.shape, ann.dtype, ann.space or vtype.space)
            (value,) = self.create(
                "builtin.unrealized_conversion_cast", [value], [target], {}, stmt
            )
        elif isinstance(ann, TileType) and isinstance(vtype, TileType):
            if (
                ann.shape != vtype.shape
                or ann.dtype != vtype.dtype
                or (ann.space is not None and vtype.space is not None and ann.space != vtype.space)
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
        if view is not None and isinstance(ann, TileType):
            value = valid_shapes.with_valid(value, self.view_valid(view, ann))
        self.bind(stmt.target.id, value, stmt.target)

    def ret(self, stmt: ast.Return) -> None:
        if stmt.value is None:
            values: List[Value] = []
        elif isinstance(stmt.value, ast.Tuple):
            values = [self.as_value(self.expr(e), e) for e in stmt.value.elts]
        else:
            # `return self.kernel(...)` of a kernel with several results
            # returns them all.
            value = self.expr(stmt.value, multi=isinstance(stmt.value, ast.Call))
            values = [
                self.as_value(v, stmt.value)
                for v in (value if isinstance(value, list) else [value])
            ]
        types = [v.type for v in values]
        if self.result_types is not None:
            if len(types) != len(self.result_types) or any(
                not same_type(a, b) for a, b in zip(types, self.result_types)
            ):
                got = ", ".join(str(t) for t in types) or "nothing"
                want = ", ".join(str(t) for t in self.result_types) or "nothing"
                raise self.error(
                    stmt, f"'{self.spec.name}' returns {got} but is declared to return {want}"
                )
        else:
            self.result_types = types
            self.builder.set_function_results(
                self.spec.name, [self.program.ir_type(t) for t in types]
            )
            params, _ = self.program.signatures[self.spec.name]
            self.program.signatures[self.spec.name] = (params, types)
        self.builder.create("func.return", [v.handle for v in values], [], {}, self.loc(stmt))
        self.saw_return = True

    # ------------------------------------------------------------------ scopes

    def block_local_message(self, name: str, stmt: ast.stmt) -> str:
        return f"'{name}' is only defined inside the block at line {self.source.position(stmt)[0]}"

    def root_of(self, value: Value) -> int:
        return self.tensor_roots.get(value.handle, value.handle)

    def tensor_value(self, value: Value) -> Value:
        """The parameter whose tensor `value` is."""
        root = self.root_of(value)
        return next((p for p in self.param_values if p.handle == root), value)

    # ------------------------------------------------------------------ calls

    def call(self, node: ast.Call, name, statement: bool, multi: bool, expected):
        func = node.func
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id == "self"
        ):
            return self.call_function(node, func.attr, name, multi)
        if (
            isinstance(func, ast.Attribute)
            and func.attr == "bind_dynamic"
            and self.holds_shaped(func.value)
        ):
            return self.bind_dynamic(node)
        if (
            isinstance(func, ast.Name)
            and func.id in ("min", "max")
            and func.id not in self.env
            and func.id not in self.source.globals
        ):
            return self.min_max(node, {"min": min, "max": max}[func.id])
        try:
            target = self.static_name(func)
        except LoweringError:
            raise self.error(
                node, f"unknown function '{ast.unparse(func)}'{self.suggestion(func)}"
            ) from None
        if isinstance(target, Unsupported):
            raise self.error(node, target.message)
        op = ops.op_of(target)
        if op is None:
            jit_name = getattr(target, "__bp_jit_name__", None)
            if jit_name is not None and jit_name in self.program.functions:
                return self.call_function(node, jit_name, name, multi)
            if isinstance(target, types.FunctionType):
                return self.inline(node, target, name, multi)
            raise self.error(
                node, f"'{ast.unparse(func)}' cannot be called in a blockpipe function"
            )
        return op.lower(self, node, name, expected)

    def min_max(self, node: ast.Call, fn):
        """Python's min(a, b, ...) / max(...) of numbers and index values."""
        if len(node.args) < 2 or node.keywords:
            raise self.error(
                node, f"{fn.__name__}() takes two or more numbers or index values here"
            )
        values = [self.expr(a) for a in node.args]
        numbers = [v for v in values if isinstance(v, (int, float))]
        others = [
            self.index_value(v, a)
            for v, a in zip(values, node.args)
            if not isinstance(v, (int, float))
        ]
        if numbers and any(isinstance(n, float) for n in numbers) and others:
            raise self.error(node, f"{fn.__name__}() of index values takes integers")
        result = fn(numbers) if numbers else None
        for value in others:
            if result is None:
                result = value
                continue
            op = "arith.minsi" if fn is min else "arith.maxsi"
            (result,) = self.create(op, [self.index_value(result, node), value], None, {}, node)
        return result

    def bind_dynamic(self, node: ast.Call):
        """pypto's `x.bind_dynamic(axis, pl.dynamic("M"))`: says that a
        dimension is dynamic (for @pl.jit's specialization); here it checks
        that it is."""
        tensor = self.expr(node.func.value)
        if len(node.args) != 2 or node.keywords:
            raise self.error(node, "bind_dynamic takes an axis and a pl.dynamic dimension")
        axis = self.static_int(node.args[0], "bind_dynamic's axis")
        rank = len(tensor.type.shape)
        if not -rank <= axis < rank:
            raise self.error(node.args[0], f"axis {axis} is out of range for a {rank}-D tensor")
        if tensor.type.shape[axis % rank] is not dynamic:
            raise self.error(
                node,
                f"dimension {axis % rank} of '{ast.unparse(node.func.value)}' is "
                f"{tensor.type.shape[axis % rank]}, not dynamic; annotate it with "
                "the pl.dynamic dimension",
            )
        return None

    # ------------------------------------------------------------ inlining

    def inline(self, node: ast.Call, fn, name, multi: bool):
        """A call of a plain Python function (or a @pl.inline one): its body
        is lowered here, its parameters bound to the arguments' values, its
        return statement giving the call's value."""
        import inspect

        from blockpipe.language.source import parse_function

        stack = self.__dict__.setdefault("_inlining", [])
        if fn in stack or len(stack) >= 32:
            raise self.error(
                node,
                f"'{fn.__name__}' calls itself; helpers are inlined, so recursion is not supported",
            )
        if any(isinstance(a, ast.Starred) for a in node.args) or any(
            k.arg is None for k in node.keywords
        ):
            raise self.error(node, f"'{fn.__name__}' is inlined: call it without *args or **kwargs")
        try:
            bound = inspect.signature(fn).bind(
                *node.args, **{k.arg: k.value for k in node.keywords}
            )
        except TypeError as exc:
            raise self.error(node, f"call of '{fn.__name__}': {exc}") from None
        values = {}
        for pname, arg in bound.arguments.items():
            values[pname] = self.expr(arg)
        for param in inspect.signature(fn).parameters.values():
            if param.name not in values:
                if param.default is inspect.Parameter.empty:
                    raise self.error(
                        node, f"'{fn.__name__}' takes *{param.name}, which inlining does not"
                    )
                values[param.name] = param.default
        spec = FunctionSpec(fn, self.kind)
        try:
            source = parse_function(spec, self.source.file)
        except CompileError as exc:
            raise self.error(node, str(exc)) from None
        body = [s for s in source.tree.body]
        returns = [s for s in body if isinstance(s, ast.Return)]
        nested = [
            n for s in body for n in ast.walk(s) if isinstance(n, ast.Return) and n not in returns
        ]
        if nested or (returns and body[-1] is not returns[0]) or len(returns) > 1:
            where = (nested or returns)[0]
            line = source.position(where)[0]
            raise self.error(
                node,
                f"'{fn.__name__}' is inlined and may return only at the end of its body "
                f"(a return at {source.file}:{line})",
            )
        saved = (self.source, self.env, self.assigned_at, self.out_of_scope)
        self.source, self.env, self.assigned_at, self.out_of_scope = source, dict(values), {}, {}
        stack.append(fn)
        try:
            self.block(body[:-1] if returns else body)
            result = None
            if returns and returns[0].value is not None:
                value = returns[0].value
                if isinstance(value, ast.Tuple):
                    result = [self.expr(e) for e in value.elts]
                else:
                    result = self.expr(value, name=name, multi=multi)
        except LoweringError as err:
            caller_file, (caller_line, _) = saved[0].file, saved[0].position(node)
            err = LoweringError(
                err.node,
                f"{err.message} (in '{fn.__name__}', inlined at {caller_file}:{caller_line})",
            )
            raise self._compile_error(err) from None
        finally:
            stack.pop()
            self.source, self.env, self.assigned_at, self.out_of_scope = saved
        if isinstance(result, list) and not multi and len(result) == 1:
            return result[0]
        return result

    def bind_args(
        self, what: str, node: ast.Call, required: Sequence[str], optional: Dict[str, Any]
    ) -> Dict[str, Any]:
        names = list(required) + list(optional)
        if any(isinstance(a, ast.Starred) for a in node.args) or any(
            k.arg is None for k in node.keywords
        ):
            raise self.error(node, f"pl.{what} does not take *args or **kwargs")
        if len(node.args) > len(names):
            raise self.error(
                node, f"pl.{what} takes at most {len(names)} arguments, got {len(node.args)}"
            )
        bound: Dict[str, Any] = dict(zip(names, node.args))
        for kw in node.keywords:
            if kw.arg not in names:
                raise self.error(
                    kw.value, f"pl.{what} has no argument '{kw.arg}' (it takes {', '.join(names)})"
                )
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
            raise self.error(
                node,
                f"pl.{what} is only valid in {allowed} functions, not in {self.kind.name} function '{self.spec.name}'",
            )

    def tile_arg(self, node, what: str) -> Value:
        value = self.tile_operand(self.expr(node), node)
        if not (isinstance(value, Value) and isinstance(value.type, TileType)):
            raise self.error(node, f"{what} must be a tile, got {describe(value)}")
        return value

    def tile_operand(self, value, node):
        """In a kernel outlined from a scope, a tensor where a tile is
        expected is the whole tensor loaded (pypto's tensor-level ops)."""
        if self.spec.tensor_ops and isinstance(value, Value) and isinstance(value.type, TensorType):
            from blockpipe.language.ops.memory import load_whole

            return load_whole(self, value, node)
        return value

    def typed_tile(self, value: Value, node, what: str) -> Value:
        """`value`, a tile whose shape and dtype `what` needs while the
        function is built."""
        if value.type.unknown:
            raise self.error(
                node,
                f"{what} needs the tile's shape and dtype, but they come through a pipe "
                "from the other half of the group, which pops too, so they are known only "
                "once the whole group is built; annotate the pl.tpop_from_*() the tile "
                "comes from, e.g. t: pl.Tile[[16, 16], pl.FP32] = pl.tpop_from_aic()",
            )
        return value

    def tensor_arg(self, node, what: str) -> Value:
        value = self.expr(node)
        if not (isinstance(value, Value) and isinstance(value.type, TensorType)):
            raise self.error(node, f"{what} must be a tensor, got {describe(value)}")
        return value

    def create(
        self,
        op: str,
        operands: List[Value],
        results: Optional[List[IRType]],
        attrs,
        node,
        name=None,
    ) -> List[Value]:
        """Builds `op` at `node`. `results` None: the dialect infers the
        result types from the operands. `attrs` holds the session's
        attributes (self.builder.i64(...), ...)."""
        for result in results or ():
            # What the dialect's tile type allows, said in the DSL's terms
            # (the builder would only report an invalid type).
            if isinstance(result, TileType) and not result.unknown and len(result.shape) > 2:
                raise self.error(node, f"tiles are 1-D or 2-D, got {list(result.shape)}")
            if isinstance(result, TileType) and result.dtype is INDEX:
                raise self.error(node, "tiles cannot hold INDEX elements; use pl.INT64")
        if self.strip is not None:
            strips.check(self, op, node)
        if self.lane is not None:
            attrs = dict(attrs, **{"bp.lane": self.builder.unit()})
        program = self.program
        handles = self.builder.create(
            op,
            [v.handle for v in operands],
            None if results is None else [program.ir_type(t) for t in results],
            attrs,
            self.loc(node, name or ""),
        )
        if results is None:
            results = [program.frontend_type(self.builder.type_of(h)) for h in handles]
        return valid_shapes.propagate(
            self, op, operands, [Value(h, t) for h, t in zip(handles, results)], node
        )

    def infer(self, op: str, operands: List[Value], node, attrs=None) -> List[IRType]:
        """The result types the dialect gives `op` on these operands."""
        descs = self.builder.infer(op, [v.handle for v in operands], attrs or {}, self.loc(node))
        return [self.program.frontend_type(d) for d in descs]

    # ---------------------------------------------------------- argument rules

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
        self.written.add(self.root_of(tensor))
        pname = self.input_param_name(tensor)
        if pname is not None:
            raise self.error(
                node,
                f"{what} '{pname}', an input of '{self.spec.name}'; declare it "
                "pl.Out[...] or pl.InOut[...] to write it",
            )

    def check_dtype(self, a: Optional[DType], b: Optional[DType], node, what: str) -> None:
        """A tile's dtype still to be inferred is bp-infer-pipe-types' to check."""
        if a is not None and b is not None and a != b:
            raise self.error(node, f"{what} have different dtypes: {a.name} and {b.name}")

    def group_peers(self) -> List[str]:
        """The functions a group pairs with this one (its other halves)."""
        functions = self.program.functions
        peers: List[str] = []
        for name, spec in functions.items():
            calls = [c for c in self.program.sources[name].self_calls if c in functions]
            if spec.kind is FunctionType.Group and self.spec.name in calls:
                peers += [c for c in calls if c != self.spec.name and c not in peers]
        return peers

    # ------------------------------------------- calls of the program's functions

    def call_function(self, node: ast.Call, callee: str, name, multi: bool):
        program = self.program
        spec = program.functions.get(callee)
        if spec is None:
            raise self.error(node.func, f"'{callee}' is not a @pl.function of this program")
        if node.keywords:
            raise self.error(node, f"call '{callee}' with positional arguments only")
        param_types, result_types = program.signatures[callee]
        if len(node.args) != len(param_types):
            raise self.error(
                node, f"'{callee}' takes {len(param_types)} arguments, got {len(node.args)}"
            )
        args = []
        for arg_node, ptype in zip(node.args, param_types):
            value = self.expr(arg_node)
            if isinstance(ptype, ScalarType) and isinstance(value, (int, float)):
                value = self.constant(value, ptype.dtype, arg_node)
            # A pipeline's stage may take a tensor split into microbatches:
            # bp.stage's verifier checks those (and stage boundaries).
            staged = (
                self.kind is FunctionType.Pipeline
                and isinstance(value, Value)
                and isinstance(value.type, TensorType)
                and isinstance(ptype, TensorType)
            )
            if not isinstance(value, Value) or not (staged or same_type(value.type, ptype)):
                raise self.error(
                    arg_node, f"argument of '{callee}' must be {ptype}, got {describe(value)}"
                )
            args.append(value)

        callee_kind = spec.kind
        if self.kind in (FunctionType.Orchestration, FunctionType.Group):
            callee_params = program.sources[callee].tree.args.args[1:]
            for arg_node, arg, direction, param in zip(
                node.args, args, program.param_dirs[callee], callee_params
            ):
                if direction is not ParamDirection.In:
                    self.check_writable(
                        arg,
                        arg_node,
                        f"'{callee}' writes its {direction.name} parameter '{param.arg}', given",
                    )
        if self.kind is FunctionType.Orchestration:
            if callee_kind not in KERNEL_KINDS + (FunctionType.Group,):
                raise self.error(
                    node,
                    f"orchestration functions launch incore, aic, aiv or group functions; '{callee}' is {callee_kind.name}",
                )
            results = self.launch(node, callee, args, result_types, name)
        elif self.kind is FunctionType.Group:
            if callee_kind not in (FunctionType.AIC, FunctionType.AIV):
                raise self.error(
                    node,
                    f"a group calls its AIC and AIV functions; '{callee}' is {callee_kind.name}",
                )
            results = self.create(
                "func.call", args, result_types, {"callee": self.builder.symbol(callee)}, node, name
            )
        elif self.kind is FunctionType.Pipeline:
            if callee_kind is not FunctionType.Orchestration:
                raise self.error(
                    node, f"a pipeline calls orchestration stages; '{callee}' is {callee_kind.name}"
                )
            # Result j is typed like the argument of the j-th Out/InOut
            # parameter (whole or split).
            outs = [
                arg
                for arg, d in zip(args, program.param_dirs[callee])
                if d is not ParamDirection.In
            ]
            staged_types = (
                [arg.type for arg in outs] if len(outs) == len(result_types) else result_types
            )
            results = self.create(
                "bp.stage", args, staged_types, {"callee": self.builder.symbol(callee)}, node, name
            )
        else:
            raise self.error(node, f"{self.kind.name} functions cannot call other functions")
        if self.kind in (FunctionType.Orchestration, FunctionType.Group):
            # Result j is the tensor of the j-th Out/InOut argument, written.
            outs = [
                arg
                for arg, d in zip(args, program.param_dirs[callee])
                if d is not ParamDirection.In
            ]
            if len(outs) == len(results):
                for result, out in zip(results, outs):
                    self.tensor_roots[result.handle] = self.root_of(out)
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
        b = self.builder
        operands = list(args)
        dynamic = isinstance(core_num, Value)
        if dynamic:
            operands = [core_num] + operands
        attrs = {
            "callee": b.symbol(callee),
            "operandSegmentSizes": b.i32_array([int(dynamic), len(args)]),
        }
        if not dynamic:
            attrs["core_num"] = b.i64(core_num)
        if sync_start:
            attrs["sync_start"] = b.unit()
        if name_hint:
            attrs["name_hint"] = b.string(name_hint)
        return self.create("bp.launch", operands, result_types, attrs, node, name)
