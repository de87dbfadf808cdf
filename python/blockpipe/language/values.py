"""The values the frontend works with while it builds a function, and the
rules it needs about their types."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Optional, Tuple, Union

from blockpipe.language import types
from blockpipe.language.types import DType, FunctionType, ScalarType, TensorType, TileType

IRType = Union[TensorType, TileType, ScalarType]
Literal = Union[int, float]

KERNEL_KINDS = (FunctionType.InCore, FunctionType.AIC, FunctionType.AIV)
# The type of an if's condition; not a dtype users can name.
BOOL = ScalarType(types.BOOL)


@dataclass
class Value:
    """An SSA value of the function being built. A tile may hold data in
    its leading `valid` rows and columns only (valid_shapes.py). A
    `predicate` is a comparison's 1/0 tile (or pl.tri's), which pl.sel and
    pl.sels read element by element, where they read any other integer
    mask as packed bits (ops/packed_masks.py)."""

    handle: int
    type: IRType
    valid: Optional[Tuple] = field(default=None, compare=False)
    predicate: bool = field(default=False, compare=False)


@dataclass(frozen=True)
class TransposedView:
    """`pl.tile.transpose_view(t)`: the Mat tile `t` ([N, K]) read as its
    transpose ([K, N]) without moving data. It may be moved to Left or
    Right memory (still a view) and be a matmul's operand, which then reads
    `t` transposed (`a_trans` / `b_trans`); nothing else reads it."""

    tile: Value


@dataclass(frozen=True)
class PackedMask:
    """A comparison annotated as pypto's packed predicate mask (`m:
    pl.Tile[[16, 32], pl.UINT8] = pl.tile.cmp(a, b)` for [16, 16] tiles):
    blockpipe keeps the comparison's 1/0 tile (`tile`), so the mask is only
    read as pl.sel's, pl.sels' or pl.where's mask; `packed` is the type
    the annotation gives it, and `line` where it was made."""

    tile: Value
    packed: TileType
    line: int

    def misuse(self, name: str) -> str:
        """Why `name`, this mask, cannot be used other than as a mask."""
        return (
            f"'{name}' is a packed predicate mask (the comparison at line {self.line}, "
            f"annotated {self.packed}): blockpipe holds it as the comparison's 1/0 tile "
            f"({self.tile.type}), not as the packed bytes, so it is only pl.sel's, "
            "pl.sels' or pl.where's mask; annotate the comparison with its operands' "
            f"type ({self.tile.type}) to use its 1/0 values"
        )


class LoweringError(Exception):
    """A user error at `node`; the function's lowering turns it into a
    CompileError at the user's file and line."""

    def __init__(self, node: Optional[ast.AST], message: str):
        super().__init__(message)
        self.node = node
        self.message = message


def dtype_named(name: str) -> DType:
    """The dtype of an enumerator: pl's ("FP32", "INDEX", "BOOL")."""
    return getattr(types, name)


def same_type(a: IRType, b: IRType) -> bool:
    return a == b


def launch_compatible(arg: IRType, param: IRType) -> bool:
    """Whether a launch may pass a tensor of type `arg` for a parameter of
    type `param`: one dtype and rank, and the dims known in both agree. A
    dim known only in the parameter is checked when the launch runs (a
    tensor sized at run time given to a kernel compiled for a size); one
    known only in the argument is passed to the kernel as its dynamic dim."""
    if not (isinstance(arg, TensorType) and isinstance(param, TensorType)):
        return arg == param
    if arg.dtype != param.dtype or len(arg.shape) != len(param.shape):
        return False
    return all(
        not isinstance(a, int) or not isinstance(p, int) or a == p
        for a, p in zip(arg.shape, param.shape)
    )


def joinable(a: IRType, b: IRType) -> bool:
    """Tiles a cast can join for the compiler to decide: they differ only in
    that one's memory space is still to be decided (bp-infer-memory-spaces
    decides it for both), or one's shape and dtype are still to be inferred
    (bp-infer-pipe-types infers them, and checks they agree)."""
    if not (isinstance(a, TileType) and isinstance(b, TileType)) or a == b:
        return False
    if a.unknown != b.unknown:
        return a.space is None or b.space is None or a.space == b.space
    return (a.space is None) != (b.space is None) and a.shape == b.shape and a.dtype == b.dtype


def joined_by_cast(own: IRType, other: IRType) -> bool:
    """Whether, of two joinable tiles, `own` is the one cast to the other's
    type: the one whose shape and dtype are unknown, else the one whose space
    is undecided."""
    if own.unknown != other.unknown:
        return own.unknown
    return own.space is None


def is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def same_value(a, b) -> bool:
    if isinstance(a, Value) or isinstance(b, Value):
        return isinstance(a, Value) and isinstance(b, Value) and a.handle == b.handle
    return type(a) is type(b) and a == b


def describe(value) -> str:
    if isinstance(value, Value):
        return str(value.type)
    if isinstance(value, PackedMask):
        return f"a packed predicate mask ({value.packed}), only a selection's mask"
    if value is None:
        return "nothing"
    return repr(value)


def cmp_symbol(op: ast.cmpop) -> str:
    return {
        ast.Eq: "==",
        ast.NotEq: "!=",
        ast.Lt: "<",
        ast.LtE: "<=",
        ast.Gt: ">",
        ast.GtE: ">=",
        ast.Is: "is",
        ast.IsNot: "is not",
        ast.In: "in",
        ast.NotIn: "not in",
    }.get(type(op), type(op).__name__)


def op_symbol(op: ast.operator) -> str:
    return {
        ast.Add: "+",
        ast.Sub: "-",
        ast.Mult: "*",
        ast.Div: "/",
        ast.FloorDiv: "//",
        ast.Mod: "%",
        ast.Pow: "**",
        ast.MatMult: "@",
        ast.BitAnd: "&",
        ast.BitOr: "|",
        ast.BitXor: "^",
        ast.LShift: "<<",
        ast.RShift: ">>",
    }.get(type(op), type(op).__name__)


class LoopValueNeeded(Exception):
    """A name first set in a loop is read after it: the program is lowered
    again with the loop carrying it (`key`: the function and the loop's
    position)."""

    def __init__(self, key, name: str, t):
        super().__init__(f"'{name}' is read after the loop at {key}")
        self.key, self.name, self.type = key, name, t
