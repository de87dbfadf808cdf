"""Gathers: tiles of rows or elements chosen by an index tile (bp.gather).

pl.mgather reads a GM tensor (pypto's MGATHER: rows or elements, with its
`gather_oob` rule), pl.tile.gather a tile's elements, pl.tensor.gather (and
pl.gather) the elements of each row along the last dim, as torch.gather, or
the columns a mask pattern selects. An index is read as unsigned of its
width, so -1 lies past any end. Where no out-of-range rule is given (pypto's
"undefined"), an index outside the source fails the launch at the user's
line, naming the index and where it sits. Valid in InCore and AIV
functions.
"""

from __future__ import annotations

import ast
import math

from blockpipe.language import valid_shapes
from blockpipe.language.ops import operation
from blockpipe.language.ops.vector import VECTOR_KINDS, binary, vector_operand
from blockpipe.language.types import INT32, MemorySpace, TensorType, TileType
from blockpipe.language.values import Value, describe

# pypto's gather_oob, by name and by number, as bp.gather's bounds.
OUT_OF_RANGE = {"undefined": "check", "clamp": "clamp", "wrap": "wrap", "zero": "zero"}
OUT_OF_RANGE_NUMBERS = ("undefined", "clamp", "wrap", "zero")
# pypto's coalesce, by name and by number.
COALESCE = {"row": "rows", "elem": "elements"}
COALESCE_NUMBERS = ("row", "elem")
# pypto's MaskPattern 1..7 (P0101 ... P1111, bit 0 the first column of each
# group): the step between the selected columns and the first one.
MASK_PATTERNS = {1: (2, 0), 2: (2, 1), 3: (4, 0), 4: (4, 1), 5: (4, 2), 6: (4, 3), 7: (1, 0)}


def _option(cx, node, names, numbers, what) -> str:
    """An option given by name or by pypto's number, as its name."""
    value = node if isinstance(node, (str, int)) and not isinstance(node, bool) else cx.static(node)
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(numbers):
        value = numbers[value]
    if value not in names:
        choices = ", ".join(repr(n) for n in numbers)
        raise cx.error(
            node, f"{what} must be one of {choices} (or 0..{len(numbers) - 1}), got {value!r}"
        )
    return value


def index_tile(cx, value, node, what) -> Value:
    """`value` as an integer index tile in Vec, its elements outside a
    valid shape zero (index 0, read as any other)."""
    value = cx.tile_operand(value, node)
    if not (isinstance(value, Value) and isinstance(value.type, TileType)):
        raise cx.error(node, f"{what} must be a tile of integers, got {describe(value)}")
    value = cx.typed_tile(value, node, what)
    if value.type.dtype.is_float:
        raise cx.error(node, f"{what} must be a tile of integers, got {value.type.dtype.name}")
    if len(value.type.shape) != 2:
        raise cx.error(node, f"{what} must be a 2-D tile, got shape {list(value.type.shape)}")
    value = vector_operand(cx, value, node, what)
    return valid_shapes.pad_for(cx, value, 0, node)


def _gather(cx, node, name, source: Value, indices: Value, mode, bounds, shape) -> Value:
    dtype = source.type.dtype
    attrs = {"mode": cx.builder.gather_mode(mode), "bounds": cx.builder.gather_bounds(bounds)}
    (result,) = cx.create(
        "bp.gather",
        [source, indices],
        [TileType(tuple(shape), dtype, MemorySpace.Vec)],
        attrs,
        node,
        name,
    )
    return result


def _source_tile(cx, node, what) -> Value:
    value = cx.expr(node)
    if isinstance(value, Value) and isinstance(value.type, TensorType):
        return value
    value = cx.tile_operand(value, node)
    if not (isinstance(value, Value) and isinstance(value.type, TileType)):
        raise cx.error(node, f"{what} must be a tile or a tensor, got {describe(value)}")
    value = cx.typed_tile(value, node, what)
    if valid_shapes.of(value) is not None:
        raise cx.error(
            node,
            f"{what} has a valid_shape ({valid_shapes.describe(value.valid)}); pl.fillpad it "
            "first, so that what a gather reads outside it is defined",
        )
    return vector_operand(cx, value, node, what)


def _mgather(
    cx,
    call,
    mem,
    idx,
    coalesce="row",
    gather_oob="undefined",
    target_memory=None,
    scratch=None,
    valid_shape=None,
):
    """Rows or elements of a GM tensor at the indices of a tile:
    `pl.tile.mgather(mem, idx, coalesce="row")` (pypto's MGATHER).

    mem: a tensor parameter. idx: an integer tile (or, as pypto writes it
    for Mat results, a tensor, loaded whole); each index is read as
    unsigned.
    coalesce: "row" (0): idx is a [1, R] or [R, 1] tile and row k of the
        [R, cols] result is row idx[k] of a 2-D mem; "elem" (1): the result
        has idx's shape and holds mem's elements (row-major) at idx.
    gather_oob: what an index outside mem reads: "clamp" (1) the last row
        or element, "wrap" (2) the index modulo the extent, "zero" (3)
        zeros; "undefined" (0, the default) fails the launch at this line,
        naming the index (on Ascend it reads whatever lies there).
    target_memory: pl.Mem.Vec (the default), or pl.Mem.Mat for a cube
        operand (gathered in Vec, then moved). scratch: pypto's workspace
        for a Mat element gather, accepted and not needed.
    valid_shape: the result's valid shape for a Mat result; a Vec result's
        follows from idx's (its valid rows, or its valid region).
    """
    source = cx.tensor_arg(mem, "pl.tile.mgather's mem")
    mode = COALESCE[_option(cx, coalesce, COALESCE, COALESCE_NUMBERS, "pl.tile.mgather's coalesce")]
    bounds = OUT_OF_RANGE[
        _option(cx, gather_oob, OUT_OF_RANGE, OUT_OF_RANGE_NUMBERS, "pl.tile.mgather's gather_oob")
    ]
    space = cx.space_arg(target_memory, "pl.tile.mgather's target_memory")
    if space not in (None, MemorySpace.Vec, MemorySpace.Mat):
        raise cx.error(target_memory, "pl.tile.mgather gathers into Vec or Mat memory")
    raw = cx.expr(idx)
    valid = valid_shapes.of(raw)
    indices = index_tile(cx, raw, idx, "pl.tile.mgather's idx")
    rows, cols = indices.type.shape
    if mode == "rows":
        if len(source.type.shape) != 2:
            raise cx.error(
                mem, f"a row gather reads a 2-D tensor, got shape {list(source.type.shape)}"
            )
        if not isinstance(source.type.shape[1], int):
            raise cx.error(mem, "a row gather needs the tensor's row length known at compile time")
        if rows != 1 and cols != 1:
            raise cx.error(
                idx, f"a row gather takes a [1, R] or [R, 1] index tile, got {[rows, cols]}"
            )
        shape = (rows * cols, source.type.shape[1])
        if valid is not None:
            valid = (valid[1] if rows == 1 else valid[0], shape[1])
    else:
        shape = (rows, cols)
    result = _gather(cx, call.node, call.name, source, indices, mode, bounds, shape)
    if space is MemorySpace.Mat:
        if valid_shape is not None:
            from blockpipe.language.ops.memory import valid_arg

            valid = valid_arg(cx, valid_shape, shape, "pl.tile.mgather")
        (result,) = cx.create(
            "bp.move", [result], [result.type.with_space(MemorySpace.Mat)], {}, call.node
        )
    elif valid_shape is not None:
        raise cx.error(
            valid_shape,
            "pl.tile.mgather's valid_shape is for a Mat result; a Vec result's follows from idx",
        )
    return valid_shapes.with_valid(result, valid)


mgather = operation(name="mgather", kinds=VECTOR_KINDS)(_mgather)
tile_mgather = operation(name="tile.mgather", kinds=VECTOR_KINDS)(_mgather)


@operation(name="tile.gather", kinds=VECTOR_KINDS)
def tile_gather(cx, call, src, indices, tmp=None):
    """The elements of a tile at the indices of another: `dst[i, j] =
    src.flat[indices[i, j]]` (row-major), pypto's index-form
    `pl.tile.gather(src, indices, tmp)`.

    src: a Vec tile. indices: an integer tile; the result has its shape
    and src's dtype. tmp: pypto's workspace, accepted and not needed. An
    index outside src fails the launch at this line, naming it.
    """
    source = _source_tile(cx, src, "pl.tile.gather's src")
    if isinstance(source.type, TensorType):
        raise cx.error(src, "pl.tile.gather's src must be a tile; pl.mgather reads a tensor")
    raw = cx.expr(indices)
    valid = valid_shapes.of(raw)
    index = index_tile(cx, raw, indices, "pl.tile.gather's indices")
    result = _gather(cx, call.node, call.name, source, index, "elements", "check", index.type.shape)
    return valid_shapes.with_valid(result, valid)


def _tensor_gather(cx, call, input, dim=None, index=None, mask_pattern=None, output_dtype=None):
    """The elements of each row of `input` at the indices of the same row
    of `index`, as torch.gather along the last dim:
    `pl.tensor.gather(x, dim=-1, index=idx)` gives `out[i, j] = x[i,
    idx[i, j]]` (`pl.gather` is the same). Or the columns of each row a
    mask pattern selects: `pl.tensor.gather(x, mask_pattern=pl.tile.
    MaskPattern.P0101)` keeps columns 0, 2, 4, ... (P1010: 1, 3, ...;
    P0001, P0010, P0100, P1000: one column of every four, the first to
    the fourth; P1111: all of them).

    input: a 2-D tensor or tile. dim: -1 (or 1). index: an integer tensor
    or tile with no more rows than input. An index outside its row fails
    the launch at this line, naming it. output_dtype: with mask_pattern,
    pypto's reinterpretation of the bits; only input's own dtype is
    supported.

    Along another dim, or of an input of more dimensions, the index form
    is torch.gather's: index has input's rank, each of its dims no larger
    than input's but `dim`'s, and `out[i, j, k] = x[i, idx[i, j, k], k]`
    for dim=1 (a negative dim counts from the end). An index outside the
    whole input fails the launch; one outside its dim but inside the input
    reads the element that far along.
    """
    if (index is None) == (mask_pattern is None):
        raise cx.error(
            call.node,
            "pl.tensor.gather takes dim= and index= (the index form) or mask_pattern= "
            "(the mask form)",
        )
    source = _source_tile(cx, input, "pl.tensor.gather's input")
    shape = source.type.shape
    if mask_pattern is not None:
        if len(shape) != 2:
            raise cx.error(
                input, f"a mask-pattern gather reads a 2-D tensor or tile, got shape {list(shape)}"
            )
        return _mask_gather(cx, call, source, mask_pattern, output_dtype)
    if output_dtype is not None:
        raise cx.error(output_dtype, "output_dtype= goes with mask_pattern=, not the index form")
    axis = -1 if dim is None else cx.static_int(dim, "pl.tensor.gather's dim")
    if not -len(shape) <= axis < len(shape):
        raise cx.error(dim, f"pl.tensor.gather's dim is {axis}, outside input's {len(shape)} dims")
    axis %= len(shape)
    if len(shape) != 2 or axis != 1:
        return _gather_along(cx, call, source, axis, input, index)
    raw = cx.expr(index)
    valid = valid_shapes.of(raw)
    idx = index_tile(cx, raw, index, "pl.tensor.gather's index")
    if isinstance(shape[0], int) and idx.type.shape[0] > shape[0]:
        raise cx.error(
            index,
            f"pl.tensor.gather's index has {idx.type.shape[0]} rows, its input only {shape[0]}",
        )
    result = _gather(cx, call.node, call.name, source, idx, "in_row", "check", idx.type.shape)
    return valid_shapes.with_valid(result, valid)


def _gather_along(cx, call, source: Value, axis: int, input, index) -> Value:
    """torch.gather of an n-D input along `axis`, composed: each index
    becomes the flat (row-major) position it names in input, its other
    coordinates those of its own place in index, and the elements are
    gathered from input's flat order."""
    node = call.node
    shape = source.type.shape
    if not all(isinstance(d, int) for d in shape):
        raise cx.error(
            input,
            f"pl.tensor.gather along dim {axis} needs input's shape known at compile time, "
            f"got {list(shape)}",
        )
    raw = cx.expr(index)
    if valid_shapes.of(raw) is not None:
        raise cx.error(index, "pl.tensor.gather's index takes no valid shape here")
    idx = cx.tile_operand(raw, index)
    if not (isinstance(idx, Value) and isinstance(idx.type, TileType)):
        raise cx.error(index, f"pl.tensor.gather's index must be a tile, got {describe(idx)}")
    idx = cx.typed_tile(idx, index, "pl.tensor.gather's index")
    dims = tuple(idx.type.shape)
    if idx.type.dtype.is_float:
        raise cx.error(index, f"pl.tensor.gather's index must hold integers, got {idx.type}")
    if len(dims) != len(shape):
        raise cx.error(
            index,
            f"pl.tensor.gather's index must have input's rank, {len(shape)}, got shape "
            f"{list(dims)}",
        )
    for d, (have, limit) in enumerate(zip(dims, shape)):
        if d != axis and have > limit:
            raise cx.error(
                index,
                f"pl.tensor.gather's index is {have} long in dim {d}, its input only {limit}",
            )
    idx = vector_operand(cx, idx, index, "pl.tensor.gather's index")
    if idx.type.dtype != INT32:
        # Flat positions may not fit a narrower index.
        (idx,) = cx.create("bp.cast", [idx], [TileType(dims, INT32, MemorySpace.Vec)], {}, node)
    rows, cols = math.prod(dims[:-1]), dims[-1]
    strides = [math.prod(shape[d + 1 :]) for d in range(len(shape))]
    flat = _as_shape(cx, idx, (rows, cols), node)
    flat = binary(cx, "mul", flat, strides[axis], node, None) if strides[axis] != 1 else flat
    (place,) = cx.create(
        "bp.ci",
        [cx.index_value(0, node)],
        [TileType((1, rows * cols), INT32, MemorySpace.Vec)],
        {},
        node,
    )
    place = _as_shape(cx, place, (rows, cols), node)
    for d in range(len(dims)):
        if d == axis:
            continue
        after = math.prod(dims[d + 1 :])
        coordinate = binary(cx, "div", place, after, node, None) if after != 1 else place
        if d:
            coordinate = binary(cx, "rem", coordinate, dims[d], node, None)
        if strides[d] != 1:
            coordinate = binary(cx, "mul", coordinate, strides[d], node, None)
        flat = binary(cx, "add", flat, coordinate, node, None)
    if isinstance(source.type, TileType) and len(shape) > 2:
        # Tiles gather in 2-D; the flat order is the same.
        source = _as_shape(cx, source, (math.prod(shape[:-1]), shape[-1]), node)
    result = _gather(cx, node, None, source, flat, "elements", "check", (rows, cols))
    return _as_shape(cx, result, dims, node, call.name)


def _as_shape(cx, tile: Value, dims, node, name=None) -> Value:
    """`tile`'s elements in row-major order, in the shape `dims`."""
    if tuple(tile.type.shape) == tuple(dims):
        return tile
    (result,) = cx.create(
        "bp.reshape",
        [tile],
        [TileType(tuple(dims), tile.type.dtype, MemorySpace.Vec)],
        {},
        node,
        name,
    )
    return result


def mask_step(cx, mask_pattern):
    """The (step, first column) of pypto's mask pattern, checked."""
    pattern = cx.static(mask_pattern)
    pattern = getattr(pattern, "value", pattern)
    if pattern not in MASK_PATTERNS:
        raise cx.error(
            mask_pattern, f"mask_pattern must be 1..7 (pl.tile.MaskPattern), got {pattern!r}"
        )
    return MASK_PATTERNS[pattern]


def column_pattern(cx, call, mask_pattern, shape) -> Value:
    """The [rows, n] index tile of pypto's mask pattern over a [rows, n *
    step] tile: column j of every row is step * j + first."""
    step, first = mask_step(cx, mask_pattern)
    rows, cols = shape
    if not isinstance(cols, int) or cols % step:
        raise cx.error(
            mask_pattern,
            f"the mask pattern takes one column of every {step}; the tile has {cols}",
        )
    n = cols // step
    node = call.node
    (seq,) = cx.create(
        "bp.ci", [cx.index_value(0, node)], [TileType((1, n), INT32, MemorySpace.Vec)], {}, node
    )
    if step != 1:
        seq = binary(cx, "mul", seq, step, node, None)
    if first:
        seq = binary(cx, "add", seq, first, node, None)
    (base,) = cx.create(
        "bp.full",
        [],
        [TileType((rows, n), INT32, MemorySpace.Vec)],
        {"value": cx.int_attr(0, INT32, node)},
        node,
    )
    return binary(cx, "add", base, seq, node, None)


def _mask_gather(cx, call, source: Value, mask_pattern, output_dtype) -> Value:
    """The columns of every row that pypto's mask pattern selects, their
    bits read as `output_dtype` (of the same size) when given."""
    out_dtype = None if output_dtype is None else cx.dtype_arg(output_dtype, "output_dtype")
    if out_dtype is not None and out_dtype.bytes != source.type.dtype.bytes:
        raise cx.error(
            output_dtype,
            f"output_dtype= reads the bits as another dtype of the same size: "
            f"{source.type.dtype.name} has {source.type.dtype.bytes} bytes, "
            f"{out_dtype.name} {out_dtype.bytes}",
        )
    index = column_pattern(cx, call, mask_pattern, source.type.shape)
    result = _gather(cx, call.node, call.name, source, index, "in_row", "check", index.type.shape)
    if out_dtype is not None and out_dtype != source.type.dtype:
        from blockpipe.language.ops.reinterpret import bitcast

        result = bitcast(cx, call.node, call.name, result, out_dtype)
    return result


tensor_gather = operation(name="tensor.gather", kinds=VECTOR_KINDS)(_tensor_gather)
gather = operation(name="gather", kinds=VECTOR_KINDS)(_tensor_gather)


def _scaled(cx, size, factor, node):
    """A valid size times `factor`: a number, or an index value."""
    if isinstance(size, int):
        return size * factor
    (product,) = cx.create(
        "arith.muli", [cx.index_value(size, node), cx.index_value(factor, node)], None, {}, node
    )
    return product


def _gatherb(cx, call, src, offset, output_dtype=None):
    """32-byte blocks of a tile at byte offsets: pypto's
    `pl.tile.gatherb(src, offset)`. Row i of the result holds, for each
    offset `offset[i, j]`, the 32 bytes of src (row-major) from that byte
    on, as 32 / itemsize elements: result `[R, B * 32 / itemsize]` for
    offsets `[R, B]`. An offset names a block: its low 5 bits are not
    read (offset & ~31). A block past src's end fails the launch at this
    line. output_dtype: pypto's reinterpretation of the bytes as another
    dtype; only src's own is supported. The result's valid shape follows
    the offsets' (each valid offset, its block's elements).
    """
    source = _source_tile(cx, src, "pl.tile.gatherb's src")
    if isinstance(source.type, TensorType):
        raise cx.error(src, "pl.tile.gatherb's src must be a tile")
    dtype = source.type.dtype
    out_dtype = dtype if output_dtype is None else cx.dtype_arg(output_dtype, "output_dtype")
    size = dtype.bytes
    per = 32 // size
    raw = cx.expr(offset)
    valid = valid_shapes.of(raw)
    offsets = index_tile(cx, raw, offset, "pl.tile.gatherb's offset")
    rows, blocks = offsets.type.shape
    node = call.node
    cols = blocks * per
    kind = offsets.type.dtype
    # Column c of row i reads element (offset[i, c // per] >> 5) * per +
    # c % per of src: the block's first element, then the c % per-th.
    (c,) = cx.create(
        "bp.ci", [cx.index_value(0, node)], [TileType((1, cols), kind, MemorySpace.Vec)], {}, node
    )
    block_of = binary(cx, "shr", c, per.bit_length() - 1, node, None) if per > 1 else c
    within = binary(cx, "and", c, per - 1, node, None)
    (base,) = cx.create(
        "bp.full",
        [],
        [TileType((rows, cols), kind, MemorySpace.Vec)],
        {"value": cx.int_attr(0, kind, node)},
        node,
    )
    spread_blocks = binary(cx, "add", base, block_of, node, None)
    starts = _gather(cx, node, None, offsets, spread_blocks, "in_row", "check", (rows, cols))
    first = binary(cx, "shr", starts, 5, node, None)
    if per > 1:
        first = binary(cx, "shl", first, per.bit_length() - 1, node, None)
    index = binary(cx, "add", first, within, node, None)
    result = _gather(cx, node, call.name, source, index, "elements", "check", (rows, cols))
    if out_dtype != dtype:
        from blockpipe.language.ops.reinterpret import bitcast

        result = bitcast(cx, node, call.name, result, out_dtype)
    if valid is not None:
        valid = (valid[0], _scaled(cx, valid[1], 32 // out_dtype.bytes, node))
    return valid_shapes.with_valid(result, valid)


gatherb = operation(name="gatherb", kinds=VECTOR_KINDS)(_gatherb)
tile_gatherb = operation(name="tile.gatherb", kinds=VECTOR_KINDS)(_gatherb)


def _paged_gather(
    cx,
    call,
    src,
    indices,
    block_table,
    block_size,
    size,
    max_indices,
    space=None,
    col_off=0,
    is_trans=False,
    is_b_matrix=False,
):
    """Rows of a paged pool through a block table: pypto's
    `kv = pl.paged_gather(pool, idx, table, block_size=16, size=128,
    max_indices=16, space=pl.Mem.Mat)`. Row i of the result is columns
    [col_off, col_off + size) of pool row `table[idx[i] // block_size] *
    block_size + idx[i] % block_size`.

    src: a 2-D tensor. indices: an INT32 tensor or tile of max_indices
    logical rows, [n] or [1, n]. block_table: a 1-D INT32 tensor. space:
    pl.Mem.Mat (the default, a matmul operand) or pl.Mem.Vec. is_b_matrix
    is pypto's layout hint and changes nothing here; is_trans is not
    supported. A composition of gathers (the table's entries, then the
    pool's rows) in Vec memory, moved to `space`; an index or page outside
    its tensor fails the launch at this line. Valid in InCore and AIV
    functions.
    """
    node = call.node
    what = "pl.paged_gather"
    pool = cx.tensor_arg(src, f"{what}'s src")
    table = cx.tensor_arg(block_table, f"{what}'s block_table")
    if len(pool.type.shape) != 2 or not isinstance(pool.type.shape[1], int):
        raise cx.error(src, f"{what}'s src is a 2-D tensor with known rows, got {pool.type}")
    if len(table.type.shape) != 1 or table.type.dtype is not INT32:
        raise cx.error(block_table, f"{what}'s block_table is a 1-D INT32 tensor, got {table.type}")
    if is_trans is not False and cx.static(is_trans):
        raise cx.error(is_trans, f"{what}(is_trans=True) is not supported by blockpipe")
    page = cx.static_int(block_size, f"{what}'s block_size")
    width = cx.static_int(size, f"{what}'s size")
    count = cx.static_int(max_indices, f"{what}'s max_indices")
    first = cx.static_int(col_off, f"{what}'s col_off") if col_off != 0 else 0
    if page <= 0 or width <= 0 or not 0 <= first <= pool.type.shape[1] - width:
        raise cx.error(
            node,
            f"{what} reads columns [{first}, {first + width}) of rows of "
            f"{pool.type.shape[1]} in pages of {page}: out of range",
        )
    target = cx.space_arg(space, f"{what}'s space") if space is not None else MemorySpace.Mat
    if target not in (MemorySpace.Mat, MemorySpace.Vec):
        raise cx.error(space, f"{what} gathers into Mat or Vec memory, got {target.name}")
    logical = _logical_rows(cx, indices, count, what)
    pages = _gather(
        cx,
        node,
        None,
        table,
        binary(cx, "div", logical, page, node, None),
        "elements",
        "check",
        (1, count),
    )
    physical = binary(
        cx,
        "add",
        binary(cx, "mul", pages, page, node, None),
        binary(cx, "rem", logical, page, node, None),
        node,
        None,
    )
    rows = _gather(cx, node, None, pool, physical, "rows", "check", (count, pool.type.shape[1]))
    if (first, width) != (0, pool.type.shape[1]):
        from blockpipe.language.ops.memory import tile_window

        at = ast.copy_location(
            ast.List(elts=[ast.Constant(0), ast.Constant(first)], ctx=ast.Load()), node
        )
        rows = tile_window(cx, call, rows, (count, width), at)
    if target is MemorySpace.Vec:
        return rows
    return cx.demand(rows, MemorySpace.Mat, node, f"{what}'s result")


def _logical_rows(cx, indices, count: int, what: str) -> Value:
    """The logical row indices as a [1, count] INT32 tile."""
    raw = cx.tile_operand(cx.expr(indices), indices)
    if not (isinstance(raw, Value) and isinstance(raw.type, TileType)):
        raise cx.error(indices, f"{what}'s indices must be a tensor or tile, got {describe(raw)}")
    raw = cx.typed_tile(raw, indices, what)
    shape = tuple(raw.type.shape)
    if raw.type.dtype is not INT32 or shape not in ((count,), (1, count)):
        raise cx.error(
            indices,
            f"{what}'s indices are max_indices={count} INT32 rows, [{count}] or [1, {count}], "
            f"got {raw.type}",
        )
    raw = vector_operand(cx, raw, indices, f"{what}'s indices")
    if len(shape) == 1:
        (raw,) = cx.create(
            "bp.reshape", [raw], [TileType((1, count), INT32, MemorySpace.Vec)], {}, indices
        )
    return raw


paged_gather = operation(name="paged_gather", kinds=VECTOR_KINDS)(_paged_gather)
tensor_paged_gather = operation(name="tensor.paged_gather", kinds=VECTOR_KINDS)(_paged_gather)
