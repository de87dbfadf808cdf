"""pypto's kernel-driven paged gather: `pl.create_l1(shape, dtype)`, an
on-chip accumulator, filled by `pl.gather_row(dst, src, dst_offset,
src_offset, shapes, valid_shape=)`, each call copying a window of a GM
tensor into it.

pypto DMAs the window straight into an L1 tile. blockpipe's tiles are
values, so a gather is a composition of existing ops on the vector unit:
the window is loaded (bp.load, reading only its valid part), shifted to
its place in a tile of the accumulator's shape (bp.insert into zeros) and
selected into the accumulator where the valid region lands (a mask of the
rows and columns it covers, bp.select). A matmul that reads the result
gets it moved to the cube unit as any Vec tile is.
"""

from __future__ import annotations

from blockpipe.language import valid_shapes
from blockpipe.language.ops import operation
from blockpipe.language.ops.memory import offsets_arg, valid_arg, window_load
from blockpipe.language.ops.vector import (
    VECTOR_KINDS,
    ast_text,
    binary,
    select,
    spread,
    vector_operand,
)
from blockpipe.language.types import INDEX, MemorySpace, TileType
from blockpipe.language.values import Value, describe


def _create_l1(cx, call, shape, dtype, transpose=False):
    """An on-chip accumulator of `shape` and `dtype` for pl.gather_row to
    fill: `kv = pl.create_l1([128, 64], pl.FP16)` (pypto's). pypto places it
    in L1 (Mat); blockpipe fills it on the vector unit and moves it to the
    cube unit where a matmul reads it. pypto leaves its elements undefined;
    blockpipe makes them zero. transpose=True (pypto's ZN layout for
    transposing gathers) is not supported. Valid in InCore and AIV
    functions."""
    what = ast_text(call.node.func)  # as spelled: pl.create_l1, pl.tensor.create_l1
    dims = cx.shape_arg(shape, f"{what}'s shape")
    element = cx.dtype_arg(dtype, f"{what}'s dtype")
    if element is INDEX:
        raise cx.error(dtype, "tiles cannot hold INDEX elements")
    _reject_transpose(cx, transpose, what)
    # The space follows from the uses (bp-infer-memory-spaces).
    return _zeros(cx, dims, element, call.node, call.name, None)


create_l1 = operation(name="create_l1", kinds=VECTOR_KINDS)(_create_l1)
tensor_create_l1 = operation(name="tensor.create_l1", kinds=VECTOR_KINDS)(_create_l1)


def _gather_row(
    cx, call, dst, src, dst_offset, src_offset, shapes, transpose=False, valid_shape=None
):
    """Copies the window `shapes` at `src_offset` of the GM tensor `src`
    into the tile `dst` at `dst_offset`, and returns `dst` so updated:
    `kv = pl.gather_row(kv, pool, [r, 0], [phys, 0], [1, 64])` (pypto's;
    `dst` usually from pl.create_l1, carried through a loop).

    dst: a 2-D tile. src: a 2-D tensor of dst's dtype.
    dst_offset, src_offset: [row, col]; numbers or values known at run time.
    shapes: the window, numbers known at compile time.
    valid_shape: how much of the window is copied, [rows, cols] (numbers or
        run-time sizes, each at most the window's): only that part of src is
        read, and only that part of dst written. Left out: all of it.
    transpose: pypto's transposing gather into a ZN tile; not supported.

    The part of dst written must lie in it; the window beyond the valid part
    may run past dst's end (a run of rows split at a run-time row). A part
    out of dst fails the launch at this line. Valid in InCore and AIV
    functions.
    """
    node = call.node
    what = ast_text(call.node.func)
    _reject_transpose(cx, transpose, what)
    acc = cx.expr(dst)
    if not (isinstance(acc, Value) and isinstance(acc.type, TileType)):
        raise cx.error(dst, f"{what}'s dst must be a tile (from pl.create_l1), got {describe(acc)}")
    acc = cx.typed_tile(vector_operand(cx, acc, node, f"{what}'s dst"), node, what)
    pool = cx.tensor_arg(src, f"{what}'s src")
    if len(acc.type.shape) != 2 or len(pool.type.shape) != 2:
        raise cx.error(
            node,
            f"{what} copies between a 2-D tensor and a 2-D tile, got a tensor of "
            f"{list(pool.type.shape)} and a tile of {list(acc.type.shape)}",
        )
    cx.check_dtype(pool.type.dtype, acc.type.dtype, node, f"{what}'s src and dst")
    window = cx.shape_arg(shapes, f"{what}'s shapes")
    if len(window) != 2:
        raise cx.error(shapes, f"{what}'s shapes is [rows, cols], got {list(window)}")
    at = offsets_arg(cx, dst_offset, acc.type, f"{what}'s dst")
    valid = valid_arg(cx, valid_shape, window, what)
    first = offsets_arg(cx, src_offset, pool.type, f"{what}'s src")
    part = window_load(cx, pool, first, window, node, None, acc.type.space, valid)
    if valid is None:
        # All of the window: it must fit in dst at `at` (checked there).
        (result,) = cx.create("bp.insert", [part, acc] + at, [acc.type], {}, node, call.name)
        return result
    # The loaded window's elements past its valid part are never selected.
    part = valid_shapes.with_valid(part, None)
    placed = _placed(cx, part, acc.type, at, node)
    mask = _covered(cx, acc.type, at, valid, node)
    return select(cx, mask, placed, acc, node, call.name)


gather_row = operation(name="gather_row", kinds=VECTOR_KINDS)(_gather_row)
tile_gather_row = operation(name="tile.gather_row", kinds=VECTOR_KINDS)(_gather_row)
tensor_gather_row = operation(name="tensor.gather_row", kinds=VECTOR_KINDS)(_gather_row)


def _reject_transpose(cx, transpose, what: str) -> None:
    flag = transpose if isinstance(transpose, bool) else cx.static(transpose)
    if not isinstance(flag, bool):
        raise cx.error(transpose, f"{what}'s transpose must be True or False, got {flag!r}")
    if flag:
        raise cx.error(
            transpose,
            f"{what}(..., transpose=True) (pypto's ZN layout for a b_trans operand) is not "
            "supported by blockpipe: gather rows as they are and pass b_trans=False",
        )


def _zeros(cx, dims, dtype, node, name=None, space=MemorySpace.Vec) -> Value:
    zero = cx.float_attr(0.0, dtype, node) if dtype.is_float else cx.int_attr(0, dtype, node)
    (result,) = cx.create(
        "bp.full", [], [TileType(tuple(dims), dtype, space)], {"value": zero}, node, name
    )
    return result


def _placed(cx, part: Value, like: TileType, at, node) -> Value:
    """`part` at `at` in a tile of `like`'s shape (zeros elsewhere). Along a
    dim where the window may run past the end, the tile is first made
    longer by the window's size, so that only an offset past the end fails
    (bp.insert checks it), then cut back."""
    dims = like.shape
    longer = tuple(
        d if _fits(cx, offset, w, d) else d + w for offset, w, d in zip(at, part.type.shape, dims)
    )
    frame = _zeros(cx, longer, like.dtype, node, space=like.space)
    (frame,) = cx.create("bp.insert", [part, frame] + at, [frame.type], {}, node)
    if longer == tuple(dims):
        return frame
    origin = [cx.index_value(0, node) for _ in dims]
    (cut,) = cx.create(
        "bp.extract", [frame] + origin, [TileType(dims, like.dtype, like.space)], {}, node
    )
    return cut


def _fits(cx, offset, size, dim) -> bool:
    known = valid_shapes.known(cx, offset)
    return known is not None and known + size <= dim


def _covered(cx, like: TileType, at, valid, node) -> Value:
    """A mask of `like`'s shape, 1 over [at, at + valid) and 0 elsewhere:
    the band of rows it covers times the band of columns."""
    rows, cols = like.shape
    row_band = _band(cx, like.dtype, (rows, 1), 0, at[0], valid[0], node)
    col_band = _band(cx, like.dtype, (1, cols), 1, at[1], valid[1], node)
    if row_band is None and col_band is None:
        return _ones_upto(cx, like.dtype, like.shape, 0, rows, node)
    if row_band is None:
        return spread(cx, col_band, _zeros(cx, like.shape, like.dtype, node), node, None)
    mask = spread(cx, row_band, _zeros(cx, like.shape, like.dtype, node), node, None)
    return mask if col_band is None else binary(cx, "mul", mask, col_band, node, None)


def _band(cx, dtype, dims, axis, start, size, node):
    """A [n, 1] or [1, n] tile, 1 at [start, start + size) along `axis`
    (None: all of it): ones valid up to start + size, less ones valid up to
    start (pl.fillpad with 0). The fillpad fails the launch at the user's
    line where start + size passes the end."""
    end = _add(cx, start, size, node)
    if valid_shapes.known(cx, end) == dims[axis] and valid_shapes.known(cx, start) == 0:
        return None
    upto_end = _ones_upto(cx, dtype, dims, axis, end, node)
    if valid_shapes.known(cx, start) == 0:
        return upto_end
    upto_start = _ones_upto(cx, dtype, dims, axis, start, node)
    return binary(cx, "sub", upto_end, upto_start, node, None)


def _ones_upto(cx, dtype, dims, axis, size, node) -> Value:
    one = cx.float_attr(1.0, dtype, node) if dtype.is_float else cx.int_attr(1, dtype, node)
    (ones,) = cx.create(
        "bp.full", [], [TileType(dims, dtype, MemorySpace.Vec)], {"value": one}, node
    )
    valid = tuple(size if i == axis else d for i, d in enumerate(dims))
    return valid_shapes.pad_for(cx, valid_shapes.with_valid(ones, valid), 0, node)


def _add(cx, a, b, node):
    """a + b of two sizes: a number when both are known."""
    x, y = valid_shapes.known(cx, a), valid_shapes.known(cx, b)
    if x is not None and y is not None:
        return x + y
    (total,) = cx.create(
        "arith.addi", [cx.index_value(a, node), cx.index_value(b, node)], None, {}, node
    )
    return total
