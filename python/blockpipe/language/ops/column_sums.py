"""pypto's column sum of floats with a scratch tile (`pl.col_sum(t, tmp)`,
TCOLSUM's binary tree; see bp.col_sum's record): rows 2k and 2k + 1 added
into row k, an odd last row into row 0, until one row is left, as row
windows and pl.add, which rounds each sum to the dtype. Without the
scratch tile the sum is bp.col_sum itself (row by row, each step
rounded)."""

from __future__ import annotations

from blockpipe.language.types import MemorySpace, TileType
from blockpipe.language.values import Value


def rounded_col_sum(cx, t: Value, scratch: bool, node, name):
    """The column sum of the float tile `t` ([M, N], valid everywhere) in
    pypto's tree when it has a scratch tile, else None (bp.col_sum is the
    sum)."""
    if t.type.unknown or not t.type.dtype.is_float or not scratch:
        return None
    rows, cols = t.type.shape
    if rows == 1:
        return None
    return _tree(cx, t, rows, cols, node, name)


def _rows(cx, t: Value, first: int, count: int, node) -> Value:
    """Rows [first, first + count) of `t`."""
    cols = t.type.shape[1]
    offsets = [cx.index_value(first, node), cx.index_value(0, node)]
    (part,) = cx.create(
        "bp.extract",
        [t] + offsets,
        [TileType((count, cols), t.type.dtype, MemorySpace.Vec)],
        {},
        node,
    )
    return part


def _add(cx, a: Value, b: Value, node, name=None) -> Value:
    from blockpipe.language.ops.vector import binary

    return binary(cx, "add", a, b, node, name)


def _tree(cx, t: Value, rows: int, cols: int, node, name) -> Value:
    level, count = t, rows
    while count > 1:
        half = count // 2
        pairs = _rows(cx, level, 0, 2 * half, node)
        (flat,) = cx.create(
            "bp.reshape",
            [pairs],
            [TileType((half, 2 * cols), t.type.dtype, MemorySpace.Vec)],
            {},
            node,
        )
        even = _columns(cx, flat, 0, cols, node)
        odd = _columns(cx, flat, cols, cols, node)
        summed = _add(cx, even, odd, node)
        if count % 2:
            first = _add(
                cx, _rows(cx, summed, 0, 1, node), _rows(cx, level, count - 1, 1, node), node
            )
            zero = cx.index_value(0, node)
            (summed,) = cx.create("bp.insert", [first, summed, zero, zero], [summed.type], {}, node)
        level, count = summed, half
    return level


def _columns(cx, t: Value, first: int, count: int, node) -> Value:
    rows = t.type.shape[0]
    offsets = [cx.index_value(0, node), cx.index_value(first, node)]
    (part,) = cx.create(
        "bp.extract",
        [t] + offsets,
        [TileType((rows, count), t.type.dtype, MemorySpace.Vec)],
        {},
        node,
    )
    return part
