"""All of a tensor whose leading dim is dynamic: `out[:] = pl.add(a, a)`.

In a kernel outlined from a pl.at or pl.spmd scope a tensor used where a
tile is expected is loaded whole, and `out[:] = t` stores a tile into all of
`out`. A tile's shape is fixed when the program is compiled, so a tensor
whose leading dim is dynamic (`pl.dynamic("M")`) cannot be one tile. An
assignment to all of such a tensor (`out[:]`, `out[:, :]`) is computed in
strips of rows instead: a loop over its rows in steps of a strip, where each
whole tensor the expression names whose leading dim is dynamic (`a`, or
`a[:]`) stands for the same rows of it, the last strip holding fewer (a
valid shape, so nothing past the end is read or written). The result is the
whole tensor's exactly when each row of it depends only on the same row of
the operands: elementwise operations, row reductions and broadcasts of a
row or column vector. An operation that mixes rows (a column reduction, a
matmul, a transpose, a reshape, a window of a tile, a mask by position) is a
CompileError at its line, as are a tile computed before the assignment and
a tensor dynamic in another dim. The tensors' leading dims must agree: an
operand with fewer rows fails the launch at the line, and dims named alike
(`pl.dynamic("M")`) are checked when the program is called.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Optional

from blockpipe.language import valid_shapes
from blockpipe.language.types import INDEX, ScalarType, TensorType, TileType, dynamic
from blockpipe.language.values import Value

# The bytes of one operand's strip: a handful live at once in a core's
# vector memory.
STRIP_BYTES = 16 * 1024

# The operations whose result's row i depends only on the operands' row i
# (or on scalars and broadcast vectors), and those that compute indices.
ROW_WISE = frozenset(
    """
    bp.load bp.store bp.move bp.dim bp.read bp.fillpad bp.full
    bp.add bp.sub bp.mul bp.div bp.maximum bp.minimum bp.exp bp.sqrt bp.relu
    bp.neg bp.abs bp.recip bp.rsqrt bp.log bp.tanh bp.sigmoid bp.cmp bp.select
    bp.cast bp.row_sum bp.row_max bp.row_min
    bp.get_block_idx bp.get_block_num bp.get_subblock_idx
    builtin.unrealized_conversion_cast
""".split()
)


@dataclass(frozen=True)
class Strip:
    """The rows of one iteration: [row, row + rows), of which `valid` hold
    data (all but in the last strip)."""

    row: Value
    rows: int
    valid: Value


def is_whole(target: ast.Subscript) -> bool:
    """Whether the subscript takes all of every dim: `x[:]`, `x[:, :]`."""
    items = target.slice.elts if isinstance(target.slice, ast.Tuple) else [target.slice]
    return all(
        isinstance(i, ast.Slice) and i.lower is None and i.upper is None and i.step is None
        for i in items
    )


def applies(cx, target: ast.Subscript, base) -> bool:
    """Whether `target = ...` assigns all of a tensor whose leading dim is
    dynamic, in a kernel outlined from a scope."""
    return (
        cx.spec.tensor_ops
        and isinstance(base, Value)
        and isinstance(base.type, TensorType)
        and len(base.type.shape) in (1, 2)
        and base.type.shape[0] is dynamic
        and is_whole(target)
    )


def strip_rows(tensors) -> int:
    """The rows of a strip: a power of two whose strip of the widest of
    `tensors` (their rows at 4 bytes an element at least, for what a cast
    widens) fits STRIP_BYTES."""
    from blockpipe import _core

    size = {d["enumerator"]: max(d["bytes"], 4) for d in _core.dtypes()}
    row_bytes = max(size[t.dtype.name] * (t.shape[1] if len(t.shape) == 2 else 1) for t in tensors)
    rows = 1
    while rows * 2 * row_bytes <= STRIP_BYTES:
        rows *= 2
    return rows


def assign(cx, target: ast.Subscript, value_node: ast.expr, stmt: ast.stmt, base: Value) -> Value:
    """`out[:] = expr`, out's leading dim dynamic: a loop over strips of
    out's rows, each computing expr on the same rows of the tensors it
    names; returns the written tensor."""
    name = target.value.id
    if len(base.type.shape) == 2 and base.type.shape[1] is dynamic:
        raise cx.error(
            target,
            f"all of '{name}' is assigned in strips of rows, but its dimension 1 is dynamic too; "
            "take windows of a known width: [:, j : j + 64]",
        )
    operands = [base.type]
    for node in ast.walk(value_node):
        if isinstance(node, ast.Name) and isinstance(cx.env.get(node.id), Value):
            held = cx.env[node.id]
            shape = held.type.shape if isinstance(held.type, TensorType) else ()
            if len(shape) in (1, 2) and all(d is not dynamic for d in shape[1:]):
                operands.append(held.type)
            if isinstance(held.type, TileType):
                raise cx.error(
                    node,
                    f"all of '{name}' (its dimension 0 is dynamic) is computed in strips of rows, "
                    f"so its expression may name tensors, scalars and numbers, not the tile "
                    f"'{node.id}'",
                )
    if cx.strip is not None:
        raise cx.error(stmt, "an assignment to all of a tensor inside another one")
    rows = strip_rows(operands)
    (extent,) = cx.create("bp.dim", [base], None, {"index": cx.builder.i64(0)}, stmt)
    lower, step = cx.index_value(0, stmt), cx.index_value(rows, stmt)
    handles = cx.builder.begin_for(
        lower.handle, extent.handle, step.handle, [base.handle], cx.loc(stmt), f"{name}_row"
    )
    row = Value(handles[0], ScalarType(INDEX))
    tensor = Value(handles[1], base.type)
    cx.tensor_roots[handles[1]] = cx.root_of(base)
    cx.region_depth += 1
    try:
        (left,) = cx.create("arith.subi", [extent, row], None, {}, stmt)
        (valid,) = cx.create("arith.minsi", [left, step], None, {}, stmt)
        cx.strip = Strip(row, rows, valid)
        try:
            value = cx.tile_operand(cx.expr(value_node), value_node)
        finally:
            cx.strip = None
        if not (isinstance(value, Value) and isinstance(value.type, TileType)):
            raise cx.error(value_node, f"a window is assigned a tile, got {value!r}")
        shape = (rows,) + tuple(base.type.shape[1:])
        if not value.type.unknown and tuple(value.type.shape) != shape:
            raise cx.error(
                stmt,
                f"all of '{name}' is computed in strips of {list(shape)}, but the expression "
                f"gives a tile of {list(value.type.shape)}",
            )
        # The strip's rows that hold data, whatever the expression kept.
        value = valid_shapes.with_valid(value, (valid,) + tuple(base.type.shape[1:]))
        first = [row] + [cx.index_value(0, stmt) for _ in base.type.shape[1:]]
        from blockpipe.language import ops
        from blockpipe.language.ops.memory import store_tile

        written = store_tile(
            cx,
            ops.Call(stmt, None, None),
            value,
            tensor,
            first,
            value_node,
            target.value,
            "the assignment",
            ("tile", "tensor"),
        )
    finally:
        cx.region_depth -= 1
    (result,) = cx.builder.end_for([written.handle], cx.loc(stmt))
    cx.tensor_roots[result] = cx.root_of(base)
    return Value(result, base.type)


def window(cx, tensor: Value, node) -> Optional[Value]:
    """Inside a strip: the strip's rows of a whole tensor whose leading dim
    is dynamic, as a tile (None for a tensor that is not one)."""
    strip = cx.strip
    shape = tensor.type.shape
    if strip is None or len(shape) not in (1, 2) or shape[0] is not dynamic:
        return None
    if any(d is dynamic for d in shape[1:]):
        raise cx.error(
            node,
            f"a tensor of {list(shape)} in an assignment computed in strips of rows: only its "
            "dimension 0 may be dynamic",
        )
    from blockpipe.language.ops.memory import window_load

    first = [strip.row] + [cx.index_value(0, node) for _ in shape[1:]]
    dims = (strip.rows,) + tuple(shape[1:])
    return window_load(cx, tensor, first, dims, node, None, valid=(strip.valid,) + tuple(shape[1:]))


def check(cx, op: str, node) -> None:
    """Inside a strip, an operation that would mix rows is an error."""
    if op in ROW_WISE or op.startswith("arith."):
        return
    raise cx.error(
        node,
        f"{op.split('.')[-1]} mixes the rows of its operands, but this assignment to all of a "
        "tensor whose dimension 0 is dynamic is computed in strips of rows; take windows "
        "(x[r : r + 16, :]) in a pl.range loop instead",
    )
