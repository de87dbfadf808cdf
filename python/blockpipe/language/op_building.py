"""What the DSL operations in `ops/` build with: their arguments bound and
checked, and their ops created with the result types the dialect
infers."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence

from blockpipe.language import strips, valid_shapes
from blockpipe.language.rules import MAX_TILE_RANK
from blockpipe.language.types import (
    INDEX,
    DType,
    FunctionType,
    ParamDirection,
    TensorType,
    TileType,
)
from blockpipe.language.values import (
    IRType,
    PackedMask,
    TransposedView,
    Value,
    describe,
)

if TYPE_CHECKING:
    pass


class OpBuilding:
    """The part of a function's lowering that the DSL operations call."""

    # --------------------------------------------------------------- arguments

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
        if isinstance(value, TransposedView):
            raise self.error(
                node,
                f"{what} cannot be a pl.tile.transpose_view: a transposed view is only moved "
                "to Left or Right memory and multiplied as a pl.matmul operand (pl.transpose "
                "transposes a Vec tile's data)",
            )
        if not (isinstance(value, Value) and isinstance(value.type, TileType)):
            raise self.error(node, f"{what} must be a tile, got {describe(value)}")
        return value

    def mask_arg(self, node, what: str):
        """A selection's mask: a tile, or a name holding a packed mask
        (which no other use may read, values.PackedMask)."""
        if isinstance(node, ast.Name) and isinstance(self.env.get(node.id), PackedMask):
            return self.env[node.id]
        return self.tile_arg(node, what)

    def tile_or_view(self, node, what: str):
        """A tile argument that may be a pl.tile.transpose_view: the tile,
        and whether it is read transposed."""
        value = self.expr(node)
        if isinstance(value, TransposedView):
            return value.tile, True
        value = self.tile_operand(value, node)
        if not (isinstance(value, Value) and isinstance(value.type, TileType)):
            raise self.error(node, f"{what} must be a tile, got {describe(value)}")
        return value, False

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
            if (
                isinstance(result, TileType)
                and not result.unknown
                and len(result.shape) > MAX_TILE_RANK
            ):
                raise self.error(
                    node, f"tiles have 1 to {MAX_TILE_RANK} dimensions, got {list(result.shape)}"
                )
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
