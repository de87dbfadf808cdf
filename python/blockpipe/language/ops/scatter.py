"""Scatters: a tile with rows or elements written at an index tile's
positions (bp.scatter). pl.tile.scatter writes elements by flat index,
pl.tensor.scatter (and pl.scatter) those of each row along the last dim,
as torch's scatter, or into the columns a mask pattern selects, and
pl.scatter_update (pl.tile.scatter_update, pl.tensor.scatter_update) whole
rows. Writes go in the indices' row-major order, so the last of several
writes to one place stays; an index outside the destination fails the
launch at the user's line, naming it. Valid in InCore and AIV functions.
"""

from __future__ import annotations

from blockpipe.language import valid_shapes
from blockpipe.language.ops import operation
from blockpipe.language.ops.gather import column_pattern, index_tile, mask_step
from blockpipe.language.ops.vector import VECTOR_KINDS, vector_operand
from blockpipe.language.types import TileType
from blockpipe.language.values import Value, describe


def _tile(cx, node, what) -> Value:
    """A whole Vec tile (a tensor in a pl.at scope is loaded whole)."""
    value = cx.tile_operand(cx.expr(node), node)
    if not (isinstance(value, Value) and isinstance(value.type, TileType)):
        raise cx.error(node, f"{what} must be a tile, got {describe(value)}")
    value = cx.typed_tile(value, node, what)
    if len(value.type.shape) != 2:
        raise cx.error(node, f"{what} must be a 2-D tile, got shape {list(value.type.shape)}")
    if valid_shapes.of(value) is not None:
        raise cx.error(
            node,
            f"{what} has a valid_shape ({valid_shapes.describe(value.valid)}); pl.fillpad it "
            "first, so that all of it is defined",
        )
    return vector_operand(cx, value, node, what)


def _scatter(cx, call, mode, dest: Value, source: Value, index: Value, nodes) -> Value:
    dest_node, source_node, index_node = nodes
    if source.type.dtype != dest.type.dtype:
        raise cx.error(
            source_node,
            f"the source holds {source.type.dtype.name}, the destination "
            f"{dest.type.dtype.name}; they must agree",
        )
    rows, cols = source.type.shape
    if mode == "rows":
        if cols != dest.type.shape[1]:
            raise cx.error(
                source_node,
                f"the source's rows have {cols} elements, the destination's {dest.type.shape[1]}",
            )
        if index.type.shape[0] * index.type.shape[1] != rows:
            raise cx.error(
                index_node,
                f"one row index per source row ({rows}), got a {list(index.type.shape)} tile",
            )
    else:
        if tuple(index.type.shape) != tuple(source.type.shape):
            raise cx.error(
                index_node,
                f"the indices must have the source's shape {[rows, cols]}, got "
                f"{list(index.type.shape)}",
            )
        if mode == "in_row" and rows > dest.type.shape[0]:
            raise cx.error(
                source_node,
                f"the source has {rows} rows, the destination only {dest.type.shape[0]}",
            )
    (result,) = cx.create(
        "bp.scatter",
        [source, dest, index],
        [dest.type],
        {"mode": cx.builder.gather_mode(mode)},
        call.node,
        call.name,
    )
    return result


@operation(name="tile.scatter", kinds=VECTOR_KINDS)
def tile_scatter(cx, call, dst, src, indexes):
    """`dst` with `src[i, j]` written at its flat (row-major) position
    `indexes[i, j]`: pypto's index-form `pl.tile.scatter(dst, src,
    indexes)`. indexes: an integer tile of src's shape, each index read
    as unsigned. Returns the new tile; an index outside dst fails the
    launch at this line.
    """
    dest = _tile(cx, dst, "pl.tile.scatter's dst")
    source = _tile(cx, src, "pl.tile.scatter's src")
    index = index_tile(cx, cx.expr(indexes), indexes, "pl.tile.scatter's indexes")
    return _scatter(cx, call, "elements", dest, source, index, (dst, src, indexes))


def _tensor_scatter(cx, call, input, dim=None, index=None, src=None, mask_pattern=None, dst=None):
    """`input` with `src[i, j]` written at column `index[i, j]` of row i,
    as torch's scatter along the last dim: `pl.tensor.scatter(x, dim=-1,
    index=idx, src=v)` (`pl.scatter` is the same); index has src's shape.
    Or the mask form, `pl.tensor.scatter(x, mask_pattern=p, dst=d)`: `d`
    with the columns of each row pl.tile.MaskPattern `p` selects set to
    x's columns (P0101: `d[:, 0::2] = x`).

    An index outside its row fails the launch at this line.
    """
    if mask_pattern is not None or dst is not None:
        if mask_pattern is None or dst is None or index is not None or src is not None:
            raise cx.error(
                call.node,
                "pl.tensor.scatter's mask form takes mask_pattern= and dst= (and no index= or src=)",
            )
        source = _tile(cx, input, "pl.tensor.scatter's input")
        dest = _tile(cx, dst, "pl.tensor.scatter's dst")
        rows, cols = source.type.shape
        step, _ = mask_step(cx, mask_pattern)
        if tuple(dest.type.shape) != (rows, cols * step):
            raise cx.error(
                dst,
                f"the mask pattern writes one column of every {step}: dst must be "
                f"{[rows, cols * step]}, got {list(dest.type.shape)}",
            )
        columns = column_pattern(cx, call, mask_pattern, (rows, cols * step))
        return _scatter(cx, call, "in_row", dest, source, columns, (dst, input, mask_pattern))
    if index is None or src is None:
        raise cx.error(call.node, "pl.tensor.scatter takes dim=, index= and src= (the index form)")
    axis = -1 if dim is None else cx.static_int(dim, "pl.tensor.scatter's dim")
    if axis not in (-1, 1):
        raise cx.error(
            dim, f"pl.tensor.scatter writes along the last dim (dim=-1) only, got dim={axis}"
        )
    dest = _tile(cx, input, "pl.tensor.scatter's input")
    source = _tile(cx, src, "pl.tensor.scatter's src")
    idx = index_tile(cx, cx.expr(index), index, "pl.tensor.scatter's index")
    return _scatter(cx, call, "in_row", dest, source, idx, (input, src, index))


tensor_scatter = operation(name="tensor.scatter", kinds=VECTOR_KINDS)(_tensor_scatter)
scatter = operation(name="scatter", kinds=VECTOR_KINDS)(_tensor_scatter)


def _scatter_update(cx, call, input, dim=None, index=None, src=None):
    """`input` with row `index.flat[k]` replaced by row k of `src`:
    pypto's `pl.scatter_update(input, -2, index, src)` (also
    `pl.tile.scatter_update(input, dim=-2, index=, src=)` and
    `pl.tensor.scatter_update`). index: an integer tile (pypto's [b, s])
    of a row index per src row, read as unsigned. dim: -2 (or 0), the
    rows. A row index outside input fails the launch at this line.
    """
    if index is None or src is None:
        raise cx.error(call.node, "scatter_update takes input, dim, index and src")
    if dim is not None:
        axis = cx.static_int(dim, "scatter_update's dim")
        if axis not in (-2, 0):
            raise cx.error(dim, f"scatter_update replaces rows (dim=-2), got dim={axis}")
    dest = _tile(cx, input, "scatter_update's input")
    source = _tile(cx, src, "scatter_update's src")
    idx = index_tile(cx, cx.expr(index), index, "scatter_update's index")
    return _scatter(cx, call, "rows", dest, source, idx, (input, src, index))


scatter_update = operation(name="scatter_update", kinds=VECTOR_KINDS)(_scatter_update)
tile_scatter_update = operation(name="tile.scatter_update", kinds=VECTOR_KINDS)(_scatter_update)
tensor_scatter_update = operation(name="tensor.scatter_update", kinds=VECTOR_KINDS)(_scatter_update)


def _mscatter(cx, call, src, idx, output_tensor):
    """`output_tensor` with `src[i, j]` written at its flat (row-major)
    element `idx[i, j]`: pypto's `pl.mscatter(src, idx, out)` (also
    `pl.tile.mscatter`), a scatter into GM. idx: an integer tile of src's
    shape, each index read as unsigned; the writes go in idx's row-major
    order, so the last of several to one element stays. An index outside
    the tensor fails the launch at this line, the tensor untouched.

    blockpipe reads the whole tensor into a tile, scatters into it and
    writes it back, so the tensor must fit in Vec memory with its static
    shape, and the blocks of one launch must not scatter into the same
    tensor (the compiler warns of that: each block rewrites all of it).
    Returns the tensor. Valid in InCore and AIV functions.
    """
    from blockpipe.language.ops.memory import load_whole, store_tile

    out = cx.tensor_arg(output_tensor, "pl.mscatter's output_tensor")
    source = _tile(cx, src, "pl.mscatter's src")
    index = index_tile(cx, cx.expr(idx), idx, "pl.mscatter's idx")
    node = call.node
    shape = tuple(out.type.shape)
    whole = vector_operand(cx, load_whole(cx, out, output_tensor), node, "pl.mscatter's output")
    count = 1
    for dim in shape:
        count *= dim
    flat_type = TileType((1, count), out.type.dtype, whole.type.space)
    (flat,) = cx.create("bp.reshape", [whole], [flat_type], {}, node)
    scattered = _scatter(cx, call, "elements", flat, source, index, (output_tensor, src, idx))
    (back,) = cx.create("bp.reshape", [scattered], [whole.type], {}, node)
    first = [cx.index_value(0, node) for _ in shape]
    return store_tile(
        cx, call, back, out, first, src, output_tensor, "pl.mscatter", ("src", "output_tensor")
    )


mscatter = operation(name="mscatter", kinds=VECTOR_KINDS)(_mscatter)
tile_mscatter = operation(name="tile.mscatter", kinds=VECTOR_KINDS)(_mscatter)
