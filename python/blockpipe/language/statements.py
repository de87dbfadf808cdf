"""Statements: a block in order, assignments (to names, to windows of
tensors, annotated ones), expression statements and return; loops, ifs
and `with` blocks are control_flow.py's."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, List, Sequence

from blockpipe.language import ops, strips, valid_shapes
from blockpipe.language.types import (
    MemRef,
    ParamDirection,
    ParamType,
    ScalarType,
    TensorType,
    TileType,
    TileView,
)
from blockpipe.language.values import (
    KERNEL_KINDS,
    LoweringError,
    Value,
    describe,
    same_type,
)

if TYPE_CHECKING:
    pass


class Statements:
    """The part of a function's lowering that lowers statements."""

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
            if _is_breakpoint(stmt.value):
                return  # stops there under BLOCKPIPE_INTERPRET=1; compiled, nothing to run
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
        elif isinstance(stmt, ast.While):
            self.while_loop(stmt)
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
            if isinstance(values, tuple):  # `rows, cols = x.shape`
                values = list(values)
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
            # A tile with a valid shape known here fits the window of that
            # shape too: its valid region is what is written.
            valid = tuple(value.valid) if value.valid else None
            lead = len(dims) - len(shape)
            fits = tuple(dims[lead:]) == shape or (
                valid is not None
                and all(isinstance(v, int) for v in valid)
                and tuple(dims[lead:]) == valid
                and isinstance(base.type, TensorType)
            )
            if lead < 0 or any(d != 1 for d in dims[:lead]) or not fits:
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

    def without_memrefs(self, annotation: ast.expr) -> ast.expr:
        """A pl.Tile[...] annotation without its pl.MemRef entries (`ring`
        or `ring[i % 2]`, whose slot may be known only at run time), which
        blockpipe does not use (types.MemRef)."""
        if not (isinstance(annotation, ast.Subscript) and isinstance(annotation.slice, ast.Tuple)):
            return annotation

        def is_memref(entry: ast.expr) -> bool:
            node = entry.value if isinstance(entry, ast.Subscript) else entry
            if not isinstance(node, (ast.Name, ast.Attribute)):
                return False
            try:
                return isinstance(self.static(node), MemRef)
            except LoweringError:
                return False

        kept = [entry for entry in annotation.slice.elts if not is_memref(entry)]
        if len(kept) == len(annotation.slice.elts):
            return annotation
        entries = ast.copy_location(ast.Tuple(elts=kept, ctx=ast.Load()), annotation.slice)
        return ast.copy_location(
            ast.Subscript(value=annotation.value, slice=entries, ctx=ast.Load()), annotation
        )

    def tile_view(self, annotation: ast.expr):
        """An annotation without its pl.MemRef entries and its
        pl.TileView(...) entry (the 4th of a pl.Tile[...]), and that
        entry's call, if any."""
        annotation = self.without_memrefs(annotation)
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
                packed = ops.packed_masks.annotated(self, value, ann, stmt)
                if packed is None:
                    raise self.error(
                        stmt, f"value of type {vtype} does not match the annotation {ann}"
                    )
                self.bind(stmt.target.id, packed, stmt.target)
                return
        elif isinstance(ann, TensorType) and isinstance(vtype, TensorType):
            if ann.dtype != vtype.dtype or len(ann.shape) != len(vtype.shape):
                raise self.error(stmt, f"value of type {vtype} does not match the annotation {ann}")
        elif (
            isinstance(ann, TensorType)
            and isinstance(vtype, TileType)
            and self.spec.tensor_ops
            and not vtype.unknown
            and ann.dtype == vtype.dtype
            and _squeezed(ann.shape) == _squeezed(vtype.shape)
        ):
            pass  # a tensor-level op's result, which a kernel holds as a tile
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
        values, visible = self.with_unreturned_outputs(values)
        if visible is not None:
            self.program.visible_results[self.spec.name] = visible
            self.builder.set_function_results(
                self.spec.name, [self.program.ir_type(v.type) for v in values]
            )
            params, _ = self.program.signatures[self.spec.name]
            self.program.signatures[self.spec.name] = (params, [v.type for v in values])
        if self.result_types is not None:
            if len(types) != len(self.result_types) or any(
                not same_type(a, b) for a, b in zip(types, self.result_types)
            ):
                got = ", ".join(str(t) for t in types) or "nothing"
                want = ", ".join(str(t) for t in self.result_types) or "nothing"
                raise self.error(
                    stmt, f"'{self.spec.name}' returns {got} but is declared to return {want}"
                )
        elif visible is None:
            self.result_types = types
            self.builder.set_function_results(
                self.spec.name, [self.program.ir_type(t) for t in types]
            )
            params, _ = self.program.signatures[self.spec.name]
            self.program.signatures[self.spec.name] = (params, types)
        self.builder.create("func.return", [v.handle for v in values], [], {}, self.loc(stmt))
        self.saw_return = True

    def with_unreturned_outputs(self, values: List[Value]):
        """pypto lets a kernel return only some of the Out/InOut tensors it
        writes in place (the others are written all the same); the dialect
        wants every one returned. The values to return, every Out/InOut
        parameter's tensor in parameter order, and the places of the
        user's among them (None when the user returned them all)."""
        if self.kind not in KERNEL_KINDS:
            return values, None
        dirs = self.program.param_dirs[self.spec.name]
        outputs = [p for p, d in zip(self.param_values, dirs) if d is not ParamDirection.In]
        place = {p.handle: i for i, p in enumerate(outputs)}
        roots = [self.root_of(v) if isinstance(v.type, TensorType) else None for v in values]
        if len(values) >= len(outputs) or any(r not in place for r in roots):
            return values, None  # normalize-return-order reports what is amiss
        if len(set(roots)) != len(roots):
            return values, None
        full = [self.current_tensor(p) for p in outputs]
        for value, root in zip(values, roots):
            full[place[root]] = value
        return full, [place[r] for r in roots]

    def current_tensor(self, param: Value) -> Value:
        """The parameter's tensor as last written: its name's value when
        that is still its tensor (`out = pl.store(t, [0, 0], out)`)."""
        index = self.param_values.index(param)
        name = self.source.tree.args.args[index + 1].arg
        value = self.env.get(name)
        if isinstance(value, Value) and self.root_of(value) == param.handle:
            return value
        return param


def _squeezed(shape) -> list:
    """`shape` without its leading dims of 1, as a window's tile drops them."""
    dims = list(shape)
    while len(dims) > 1 and dims[0] == 1:
        dims.pop(0)
    return dims


def _is_breakpoint(call: ast.Call) -> bool:
    """`breakpoint()`, Python's debugger hook (PEP 553)."""
    return (
        isinstance(call.func, ast.Name)
        and call.func.id == "breakpoint"
        and not call.args
        and not call.keywords
    )
