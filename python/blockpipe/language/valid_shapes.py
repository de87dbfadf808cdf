"""Valid shapes: the part of a tile that holds data.

A tile may hold data in its leading rows and columns only: a window at the
edge of a tensor (`pl.load(..., valid_shape=[rows, 64])`), a tile declared so
(`t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[r, c])]`)
or narrowed (`pl.tile.set_validshape(t, r, c)`). The sizes are numbers or
index values known at run time. The frontend follows them through the
function (they are not part of the tile's type):

- elementwise operations give their result the valid shape of their operand
  (the elements outside it are computed, and mean nothing);
- a reduction, a matmul or pl.fillpad first sets the elements outside it to
  the operation's identity (bp.fillpad), so only the valid region counts;
- pl.store writes the valid region only (bp.store ... valid [...]).

Any other operation on such a tile is an error naming it: pl.fillpad the
tile first. The valid shape does not travel through a pipe: the popping side
declares it with its annotation.
"""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple, Union

from blockpipe.language import op_table
from blockpipe.language.types import TileType
from blockpipe.language.values import Value, same_value

Size = Union[int, Value]
Valid = Tuple[Size, ...]

# The operations whose result holds, element for element, what their
# operands hold there: the op table's elementwise classes, and these.
ELEMENTWISE = op_table.ELEMENTWISE | frozenset(
    "bp.cmp bp.select bp.cast bp.move builtin.unrealized_conversion_cast".split()
)
# The operations whose lowering takes the valid shape into account, or that
# do not look at the elements.
AWARE = frozenset("bp.store bp.fillpad bp.tpush bp.tfree bp.transpose".split())


def of(value) -> Optional[Valid]:
    return value.valid if isinstance(value, Value) else None


def with_valid(value: Value, valid: Optional[Valid]) -> Value:
    """`value` seen with the valid shape `valid` (None: the whole tile)."""
    if valid is not None and isinstance(value.type, TileType) and not value.type.unknown:
        shape = value.type.shape
        if all(isinstance(s, int) and s == d for s, d in zip(valid, shape)):
            valid = None  # all of it
    return Value(value.handle, value.type, valid, value.predicate)


def same(a: Optional[Valid], b: Optional[Valid]) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))


def propagate(cx, op: str, operands: Sequence[Value], results: List[Value], node) -> List[Value]:
    """The results of `op` with the valid shape they hold, or an error
    when `op` cannot take a tile with one."""
    narrowed = [v for v in operands if of(v) is not None]
    if not narrowed:
        return results
    if op in AWARE:
        if op == "bp.transpose":
            return [with_valid(results[0], tuple(reversed(narrowed[0].valid)))]
        return results
    if op not in ELEMENTWISE:
        first = narrowed[0]
        raise cx.error(
            node,
            f"{op.split('.')[-1]} of a tile with a valid_shape ({describe(first.valid)}) is not "
            "supported by blockpipe: pl.fillpad the tile first, which sets the elements "
            "outside the valid region and makes all of it valid",
        )
    out = []
    for result in results:
        if not isinstance(result.type, TileType) or result.type.unknown:
            out.append(result)
            continue
        shape = result.type.shape
        # The operand of the result's shape, else a broadcast one: its valid
        # sizes, whole along the dims it is broadcast over.
        source = next(
            (v for v in narrowed if not v.type.unknown and v.type.shape == shape), narrowed[0]
        )
        valid = tuple(
            s if (not source.type.unknown and source.type.shape[i] == d) else d
            for i, (s, d) in enumerate(zip(source.valid, shape))
        )
        out.append(with_valid(result, valid))
    return out


def describe(valid: Valid) -> str:
    return (
        "[" + ", ".join(str(s) if isinstance(s, int) else "a run-time value" for s in valid) + "]"
    )


def join(cx, name: str, a: Value, b: Value, node) -> Optional[Valid]:
    """The valid shape of `name` where two values meet (a loop's start and
    its next iteration, an if's branches): the same on both, else an
    error."""
    if same(of(a), of(b)):
        return of(a)
    raise cx.error(
        node,
        f"'{name}' has a different valid_shape where control flow joins "
        f"({describe(of(a)) if of(a) else 'all of it'} and "
        f"{describe(of(b)) if of(b) else 'all of it'}); pl.fillpad it first, "
        "or give it the same valid shape on both sides",
    )


def pad_for(cx, value: Value, pad, node) -> Value:
    """`value` with the elements outside its valid shape set to `pad` (a
    number, or "max"/"min": the dtype's largest/lowest), and all of it
    valid; `value` itself when it has no valid shape."""
    if of(value) is None:
        return value
    dtype = value.type.dtype
    if pad in ("max", "min"):
        if dtype.is_float:
            pad = float("inf") if pad == "max" else float("-inf")
        else:
            import numpy

            info = numpy.iinfo(dtype.numpy)
            pad = int(info.max) if pad == "max" else int(info.min)
    sizes = [cx.index_value(s, node) for s in value.valid]
    pad_value = cx.constant(pad, dtype, node)
    (result,) = cx.create("bp.fillpad", [value] + sizes + [pad_value], [value.type], {}, node)
    return result


def known(cx, size) -> Optional[int]:
    """`size` as a number, when it is one or an index constant."""
    if isinstance(size, int):
        return size
    for (dtype, text), value in cx.constants.items():
        if dtype == "INDEX" and value.handle == size.handle:
            return int(text)
    return None


def of_window(cx, source: Value, first: Sequence[Value], dims, node) -> Optional[Valid]:
    """The valid shape of the window `dims` at `first` of the tile
    `source`: its valid region shifted by the offsets and cut to the
    window, min(max(valid - offset, 0), size) per dim."""
    if of(source) is None:
        return None
    return tuple(
        cut(cx, size, offset, dim, node) for size, offset, dim in zip(source.valid, first, dims)
    )


def cut(cx, size, offset, bound, node) -> Size:
    """min(max(size - offset, 0), bound): what of a region of `size` from 0
    lies in a window at `offset` of `bound` elements. A number when all
    three are known, else an index value computed at run time."""
    s, o, b = known(cx, size), known(cx, offset), known(cx, bound)
    if s is not None and o is not None and b is not None:
        return min(max(s - o, 0), b)
    (rest,) = cx.create(
        "arith.subi", [cx.index_value(size, node), cx.index_value(offset, node)], None, {}, node
    )
    (low,) = cx.create("arith.maxsi", [rest, cx.index_value(0, node)], None, {}, node)
    (result,) = cx.create("arith.minsi", [low, cx.index_value(bound, node)], None, {}, node)
    return result


def clamped(cx, tensor: Value, first: Sequence[Value], dims, valid, node) -> Optional[Valid]:
    """The valid shape of pl.load(clamp=True) of the window `dims` at
    `first` of `tensor`: `valid` (or the whole window) cut at the tensor's
    end, min(max(extent - offset, 0), size) per dim; None when that is all
    of the window."""
    out = []
    for i, (extent, offset, dim) in enumerate(zip(tensor.type.shape, first, dims)):
        asked = valid[i] if valid is not None else dim
        if not isinstance(extent, int):  # pl.dynamic: the extent at run time
            (extent,) = cx.create("bp.dim", [tensor], None, {"index": cx.builder.i64(i)}, node)
        out.append(cut(cx, extent, offset, asked, node))
    if valid is None and all(isinstance(v, int) and v == d for v, d in zip(out, dims)):
        return None
    return tuple(out)
