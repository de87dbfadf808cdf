"""Memory: tiles in and out of GM tensors, and moves between the memory
spaces of a core (Vec for the vector unit; Mat, Left, Right and Acc for the
cube unit)."""

from __future__ import annotations

import ast
from typing import List, Optional, Tuple

from blockpipe.language import strips, tensor_valid, valid_shapes
from blockpipe.language.ops import operation
from blockpipe.language.rules import LEGAL_MOVES, LEGAL_MOVES_TEXT
from blockpipe.language.types import (
    BF16,
    FP16,
    FP32,
    AtomicType,
    FunctionType,
    MemorySpace,
    ScalarType,
    TensorType,
    TileType,
    dynamic,
)
from blockpipe.language.values import KERNEL_KINDS, LoweringError, TransposedView, Value, is_int


@operation(kinds=KERNEL_KINDS)
def load(cx, call, tensor, offsets, shapes, valid_shape=None, target_memory=None, clamp=False):
    """Loads a window of a GM tensor into a tile: `pl.load(x, [r, c], [16, 32])`.

    tensor: a pl.Tensor parameter (or a tensor made by the orchestration).
    offsets: one index per tensor dimension, the window's first element;
        numbers, index values (loop variables, `pl.tile.get_block_idx()`) or
        INT32/INT64 scalars.
    shapes: the tile's shape, a list of positive integers known at compile
        time with one entry per tensor dimension. Leading sizes of 1 are
        dropped ([1, 16, 64] is a [16, 64] tile); a deeper window is an N-D
        tile (up to 8 dimensions) for elementwise ops, reductions over the
        last dimension, pl.store and pl.batch_matmul.
    valid_shape: the part of the window that holds data, one size per
        dimension (numbers or index values, each at most the shape's): only
        it is read (the tensor may end there), the rest of the tile is zero,
        and pl.store writes back only it. Left out: all of the window.
    target_memory: the tile's pl.MemorySpace. Left out, it follows from the
        tile's uses: Vec for vector operations, Left/Right for a matmul
        operand, Mat when it feeds several cube operands. A tile used by both
        units must be loaded once per unit. Never Acc.
    clamp: True reads a window that runs off the end of the tensor: its
        valid shape is cut at the tensor's end (the rest of the tile is
        zero, and pl.store writes back only what was read).

    Valid in InCore, AIC and AIV functions. A window out of the tensor's
    bounds fails the launch at this line.

    Example::

        row = pl.tile.get_block_idx() * 16
        x_tile = pl.load(x, [row, 0], [16, 64])
    """
    t = cx.tensor_arg(tensor, "pl.load's tensor")
    first = offsets_arg(cx, offsets, t.type, "pl.load")
    shape = cx.shape_arg(shapes, "pl.load's shapes")
    if len(shape) != len(t.type.shape):
        raise cx.error(
            shapes,
            f"pl.load's shapes has {len(shape)} dimensions but the tensor has {len(t.type.shape)}",
        )
    explicit = cx.space_arg(target_memory, "target_memory")
    if explicit is MemorySpace.Acc:
        raise cx.error(target_memory, "cannot load into Acc memory; Acc tiles come from pl.matmul")
    valid = valid_arg(cx, valid_shape, shape, "pl.load")
    clamped = cx.static(clamp) if clamp is not False else False
    if not isinstance(clamped, bool):
        raise cx.error(clamp, f"pl.load's clamp must be True or False, got {clamped!r}")
    if clamped:
        valid = valid_shapes.clamped(cx, t, first, shape, valid, call.node)
    # Without target_memory=, bp-infer-memory-spaces places the tile from its uses.
    return window_load(cx, t, first, shape, call.node, call.name, explicit, valid)


@operation(kinds=KERNEL_KINDS)
def store(cx, call, tile, offsets, output=None, shapes=None, output_tensor=None, atomic=None):
    """Stores a tile into a window of a GM tensor and returns the tensor:
    `out = pl.store(t, [r, c], out)`.

    tile: a Vec tile, or an Acc tile (a matmul result, stored as is); a tile
        in another space is moved to Vec.
    offsets: one index per tensor dimension, as for pl.load.
    output: a pl.Out or pl.InOut parameter (or a tensor the orchestration
        made) of the tile's dtype; storing into an input is an error.
        pypto's name for it, output_tensor=, is accepted.
    shapes: pypto's fourth argument, the shape of the window written
        (`pl.store(t, [r, 0], out, [16, 128])`); when given it must be the
        tile's shape, known at compile time.
    atomic: pl.AtomicType.Add adds each element into the one in the window,
        as one atomic read-modify-write (blocks of a launch may add into the
        same elements, in any order); pl.AtomicType.None_ (the default)
        overwrites. Integer sums wrap; 16-bit float sums round each add.

    Valid in InCore, AIC and AIV functions.

    Example::

        out = pl.store(pl.add(a, b), [row, 0], out)
    """
    if (output is None) == (output_tensor is None):
        raise cx.error(
            call.node,
            "pl.store takes its output tensor once: as output (the third argument) or as "
            "output_tensor=, pypto's name for it",
        )
    output = output if output is not None else output_tensor
    value = cx.tile_arg(tile, "pl.store's tile")
    if shapes is not None:
        dims = cx.shape_arg(shapes, "pl.store's shapes")
        if value.type.shape is not None and list(dims) != list(value.type.shape):
            raise cx.error(
                shapes,
                f"pl.store's shapes {list(dims)} must be the tile's shape "
                f"{list(value.type.shape)}: blockpipe writes the whole tile",
            )
    out = cx.tensor_arg(output, "pl.store's output")
    first = offsets_arg(cx, offsets, out.type, "pl.store")
    return store_tile(
        cx,
        call,
        value,
        out,
        first,
        tile,
        output,
        "pl.store",
        ("tile", "output"),
        atomic_add(cx, atomic, "pl.store"),
    )


def atomic_add(cx, node, what: str) -> bool:
    """Whether an `atomic=` argument asks for atomic adds."""
    if node is None:
        return False
    mode = cx.static(node)
    if mode in (AtomicType.None_, AtomicType.Add):
        return mode == AtomicType.Add
    raise cx.error(
        node, f"{what}'s atomic must be pl.AtomicType.None_ or pl.AtomicType.Add, got {mode!r}"
    )


def store_tile(
    cx,
    call,
    value: Value,
    out: Value,
    first: List[Value],
    tile_node,
    output_node,
    op: str,
    operands: Tuple[str, str],
    add: bool = False,
):
    """bp.store of `value` into `out` at `first`, for `op` ("pl.store"),
    which calls its tile and its output `operands` in errors; `add`: atomic
    adds into the window."""
    if value.type.space is not MemorySpace.Acc:
        value = cx.demand(value, MemorySpace.Vec, tile_node, f"{op}'s {operands[0]}")
    elif value.type.dtype is FP32 and out.type.dtype in (FP16, BF16):
        value = _rounded(cx, call, value, out.type.dtype, tile_node, op)
    cx.check_dtype(
        value.type.dtype, out.type.dtype, call.node, f"{op}'s {operands[0]} and {operands[1]}"
    )
    cx.check_writable(out, output_node, f"{op} into")
    # A tile with a valid shape writes only its valid region.
    valid = [cx.index_value(v, call.node) for v in value.valid or ()]
    attrs = segments(cx, 1, 1, len(first), len(valid))
    if add:
        if value.type.dtype.name == "BOOL":
            raise cx.error(call.node, f"{op} adds numbers atomically, not BOOL")
        attrs["atomic_add"] = cx.builder.unit()
    bare = valid_shapes.with_valid(value, None)
    (result,) = cx.create(
        "bp.store", [bare, out] + first + valid, None, attrs, call.node, call.name
    )
    cx.tensor_roots[result.handle] = cx.root_of(out)
    return result


def _rounded(cx, call, acc: Value, dtype, tile_node, op: str) -> Value:
    """An FP32 Acc tile stored into an FP16 or BF16 tensor, rounded to it
    once as the cube's output conversion (pypto's fix-pipe) does: here by
    a cast in Vec memory, so not in an AIC function."""
    if cx.kind is FunctionType.AIC:
        raise cx.error(
            tile_node,
            f"{op} of an FP32 Acc tile into a {dtype.name} tensor rounds it in Vec memory, "
            f"which an AIC function lacks; give the matmul out_dtype=pl.{dtype.name}",
        )
    vec = cx.demand(acc, MemorySpace.Vec, tile_node, f"{op}'s tile")
    (result,) = cx.create(
        "bp.cast",
        [valid_shapes.with_valid(vec, None)],
        [TileType(vec.type.shape, dtype, MemorySpace.Vec)],
        {},
        call.node,
    )
    return valid_shapes.with_valid(result, acc.valid)


def segments(cx, *sizes: int) -> dict:
    """The operand segment sizes of an op with optional operand groups."""
    return {"operandSegmentSizes": cx.builder.i32_array(list(sizes))}


def valid_arg(cx, node, dims, what: str) -> Optional[tuple]:
    """A valid_shape argument: one size per dim of `dims`, numbers within
    [0, dim] or index values; None when left out (or None, as a name
    bound to None: pypto's tests pass `valid_shape=vs` either way)."""
    if node is None:
        return None
    if isinstance(node, (ast.List, ast.Tuple)):
        sizes = [(cx.expr(e), e) for e in node.elts]
    else:
        value = cx.static(node)
        if value is None:
            return None
        if not isinstance(value, (list, tuple)):
            raise cx.error(node, f"{what}'s valid_shape must be a list such as [rows, 64]")
        sizes = [(v, node) for v in value]
    if len(sizes) != len(dims):
        raise cx.error(
            node, f"{what}'s valid_shape has {len(sizes)} dimensions but the shape has {len(dims)}"
        )
    valid = []
    for (size, at), dim in zip(sizes, dims):
        if is_int(size):
            if not 0 <= size <= dim:
                raise cx.error(at, f"{what}'s valid_shape size {size} is outside [0, {dim}]")
            valid.append(size)
        else:
            valid.append(cx.index_value(size, at))
    return tuple(valid)


@operation(kinds=KERNEL_KINDS)
def move(cx, call, tile, target_memory):
    """The tile in another memory space: `pl.move(t, target_memory=pl.MemorySpace.Left)`.

    Legal moves: Mat->Left, Mat->Right, Acc->Mat, Acc->Vec, Vec->Mat (a
    loaded tile is first placed where the move needs it). Moving a tile
    between the units of a group (Acc->Vec in a mixed kernel) becomes a pipe
    crossing.

    Valid in InCore, AIC and AIV functions.
    """
    value, viewed = cx.tile_or_view(tile, "pl.move's tile")
    space = cx.space_arg(target_memory, "target_memory")
    if space is None:
        raise cx.error(call.node, "pl.move needs target_memory=")
    if viewed:
        # A transposed view moves as its tile does, and stays a view.
        if space not in (MemorySpace.Left, MemorySpace.Right):
            raise cx.error(
                call.node,
                "a pl.tile.transpose_view moves to Left or Right memory only (it is read "
                f"as a pl.matmul operand), not to {space.name}",
            )
        return TransposedView(_move(cx, call, value, tile, space))
    return _move(cx, call, value, tile, space)


def _move(cx, call, value: Value, tile, space: MemorySpace) -> Value:
    if space in (MemorySpace.Left, MemorySpace.Right):
        value = cx.demand(value, MemorySpace.Mat, tile, "the tile moved to " + space.name)
    if value.type.space is None:
        # Placed by bp-infer-memory-spaces: where the move needs it, and the
        # move goes if that is `space` itself.
        (moved,) = cx.create(
            "bp.move", [value], [value.type.with_space(space)], {}, call.node, call.name
        )
        return moved
    if value.type.space is space:
        return value
    if (value.type.space, space) not in LEGAL_MOVES:
        raise cx.error(
            call.node,
            f"cannot move a tile from {value.type.space.name} to {space.name} memory "
            f"(legal: {LEGAL_MOVES_TEXT})",
        )
    return cx.demand(value, space, call.node, "pl.move's result")


@operation(name="tensor.dim")
def dim(cx, call, tensor, axis):
    """The size of a tensor's dimension `axis` (negative counts from the end):
    a number when the annotation fixes it, else an index value read at run
    time (a `pl.dynamic` dimension).

    Example::

        rows = pl.tensor.dim(x, 0)
        with pl.spmd(rows // 16):
            ...
    """
    t = cx.tensor_arg(tensor, "pl.tensor.dim's tensor")
    index = cx.static(axis)
    rank = len(t.type.shape)
    if not isinstance(index, int) or not -rank <= index < rank:
        raise cx.error(axis, f"axis {index!r} is out of range for a {rank}-D tensor")
    index %= rank
    if t.type.shape[index] is not dynamic:
        return t.type.shape[index]
    (result,) = cx.create(
        "bp.dim", [t], None, {"index": cx.builder.i64(index)}, call.node, call.name
    )
    return result


def _is_list(cx, node) -> bool:
    """Whether `node` is a list of indices: written out, or a module
    constant."""
    if isinstance(node, (ast.List, ast.Tuple)):
        return True
    try:
        return isinstance(cx.static(node), (list, tuple))
    except LoweringError:
        return False


def offsets_arg(cx, node, tensor: TensorType, what: str) -> List[Value]:
    """A load's or store's offsets: a list of indices, or a module constant."""
    if isinstance(node, (ast.List, ast.Tuple)):
        offsets = [(cx.expr(e), e) for e in node.elts]
    else:
        try:  # a module constant such as ORIGIN = [0, 0]
            value = cx.static(node)
        except LoweringError:
            value = None
        if not isinstance(value, (list, tuple)):
            raise cx.error(node, f"{what} offsets must be a list such as [row, 0]")
        offsets = [(v, node) for v in value]
    if len(offsets) != len(tensor.shape):
        raise cx.error(
            node,
            f"{what} needs {len(tensor.shape)} offsets, one per tensor dimension, got {len(offsets)}",
        )
    return [cx.index_value(v, e) for v, e in offsets]


def load_whole(cx, tensor: Value, node) -> Value:
    """A tensor used where a tile is expected, in a kernel outlined from a
    pl.at or pl.spmd scope: the whole tensor as a tile (inside an
    assignment to all of a tensor whose dim 0 is dynamic, the rows being
    computed: strips.py)."""
    strip = strips.window(cx, tensor, node)
    if strip is not None:
        return strip
    if any(d is dynamic for d in tensor.type.shape):
        raise cx.error(
            node,
            f"a tensor used as a tile needs a static shape, got {list(tensor.type.shape)}; "
            "take a window with pl.slice(tensor, shape, offsets), or assign all of a tensor "
            "whose dimension 0 is dynamic (out[:] = ...), which is computed in strips of rows",
        )
    zeros = [cx.index_value(0, node) for _ in tensor.type.shape]
    (result,) = cx.create(
        "bp.load",
        [tensor] + zeros,
        [TileType(tuple(tensor.type.shape), tensor.type.dtype, None)],
        segments(cx, 1, len(zeros), 0),
        node,
    )
    return result


@operation(name="slice", kinds=KERNEL_KINDS + (FunctionType.Orchestration,))
def slice_(cx, call, tensor, shape, offset, valid_shape=None, drop_dims=None, pad_value=None):
    """A window of a GM tensor as a tile: `pl.slice(x, [16, 64], [r, 0])`,
    pypto's spelling of `pl.load(x, [r, 0], [16, 64])` (shape before
    offsets). In an orchestration, the window as a tensor that shares x's
    memory (a view; see pl.tensor.slice).

    tensor: a tensor parameter. shape: the window's sizes, known at compile
    time. offset: one index per dimension.

    valid_shape: the part of the window that holds data, as for pl.load's;
    pad_value: what the rest of the tile holds, pl.PadValue.zero (the
    default; also 0), .max or .min (also math.inf, -math.inf): the largest
    or lowest value of the dtype.

    Valid in InCore, AIC, AIV and orchestration functions (and the pl.at
    scopes outlined into them).
    """
    if drop_dims is not None:
        raise cx.error(call.node, "pl.slice(drop_dims=...) is not supported by blockpipe")
    if cx.kind is FunctionType.Orchestration:
        from blockpipe.language.ops.orchestration import tensor_view

        return tensor_view(cx, call, tensor, shape, offset, valid_shape, pad_value)
    value = cx.expr(tensor)
    dims = cx.shape_arg(shape, "pl.slice's shape")
    if isinstance(value, Value) and isinstance(value.type, TileType):
        if valid_shape is not None or pad_value is not None:
            what = "valid_shape" if valid_shape is not None else "pad_value"
            raise cx.error(
                call.node,
                f"pl.slice({what}=...) of a tile is not supported by blockpipe; "
                "pl.tile.set_validshape the window",
            )
        return tile_window(cx, call, value, dims, offset)
    t = cx.tensor_arg(tensor, "pl.slice's tensor")
    first = offsets_arg(cx, offset, t.type, "pl.slice")
    if len(dims) != len(t.type.shape):
        raise cx.error(
            shape,
            f"pl.slice's shape has {len(dims)} dimensions but the tensor has {len(t.type.shape)}",
        )
    valid = valid_arg(cx, valid_shape, dims, "pl.slice")
    pad = pad_arg(cx, pad_value)
    if pad is not None and valid is None:
        raise cx.error(
            pad_value, "pl.slice's pad_value fills what lies outside a valid_shape; give one"
        )
    result = window_load(cx, t, first, dims, call.node, call.name, valid=valid)
    if pad not in (None, 0):
        valid = result.valid
        result = valid_shapes.with_valid(valid_shapes.pad_for(cx, result, pad, call.node), valid)
    return result


def pad_arg(cx, node):
    """A pad value: 0, "max" or "min" (pl.PadValue's zero, max, min; null
    is zero), or None when left out."""
    if node is None:
        return None
    from blockpipe.language.types import PadValue

    value = cx.static(node)
    pads = {
        PadValue.null: 0,
        PadValue.zero: 0,
        PadValue.max: "max",
        PadValue.min: "min",
        0: 0,
        float("inf"): "max",
        float("-inf"): "min",
    }
    if (
        isinstance(value, bool)
        or not isinstance(value, (PadValue, int, float))
        or value not in pads
    ):
        raise cx.error(
            node,
            f"a pad value is pl.PadValue.zero, .max or .min (or 0, math.inf, -math.inf), "
            f"got {value!r}",
        )
    return pads[value]


def window_load(
    cx, t: Value, first: List[Value], dims, node, name, space=None, valid=None
) -> Value:
    """The window `dims` at `first` of the tensor `t` as a tile: leading
    dims of 1 of a window deeper than 2-D are dropped (a [1, 64, 64] window
    of a [B, 64, 64] tensor is a [64, 64] tile), others stay (a [2, 64, 64]
    window is a 3-D tile). With `valid`, only that part of the window is
    read (bp.load ... valid); a tensor parameter with a pl.TensorView valid
    shape narrows it (tensor_valid.narrow)."""
    dims = tuple(dims)
    valid = tensor_valid.narrow(cx, t, first, dims, valid, node)
    while len(dims) > 2 and dims[0] == 1:
        if valid is not None:
            if valid[0] != 1:
                raise cx.error(
                    node,
                    "a valid_shape of a window deeper than 2-D must be 1 in its leading "
                    f"dimensions, got {valid_shapes.describe(valid)}",
                )
            valid = valid[1:]
        dims = dims[1:]
    if len(dims) > 2 and valid is not None:
        raise cx.error(
            node,
            f"a window of {list(dims)} takes no valid_shape: tiles of more than 2 "
            "dimensions are valid everywhere",
        )
    sizes = [cx.index_value(v, node) for v in valid or ()]
    (result,) = cx.create(
        "bp.load",
        [t] + first + sizes,
        [TileType(dims, t.type.dtype, space)],
        segments(cx, 1, len(first), len(sizes)),
        node,
        name,
    )
    return valid_shapes.with_valid(result, valid)


def tile_window(cx, call, value: Value, dims, offset) -> Value:
    """pl.slice of a tile: the window `dims` at `offset` (bp.extract)."""
    from blockpipe.language.ops.vector import vector_operand

    t = cx.typed_tile(
        vector_operand(cx, value, call.node, "pl.slice's tile"), call.node, "pl.slice of a tile"
    )
    if len(dims) != len(t.type.shape):
        raise cx.error(
            call.node,
            f"pl.slice's shape has {len(dims)} dimensions but the tile has {len(t.type.shape)}",
        )
    first = tile_offsets(cx, offset, t, "pl.slice")
    valid = valid_shapes.of_window(cx, t, first, dims, call.node)
    (result,) = cx.create(
        "bp.extract",
        [valid_shapes.with_valid(t, None)] + first,
        [TileType(tuple(dims), t.type.dtype, MemorySpace.Vec)],
        {},
        call.node,
        call.name,
    )
    return valid_shapes.with_valid(result, valid)


def tile_window_at(cx, node, value: Value, first: List[Value], dims, name) -> Value:
    """`t[i:i + 8, :]` of a tile: the window `dims` at `first` (bp.extract)."""
    from blockpipe.language.ops.vector import vector_operand

    t = cx.typed_tile(
        vector_operand(cx, value, node, "the indexed tile"), node, "a window of a tile"
    )
    valid = valid_shapes.of_window(cx, t, first, dims, node)
    (result,) = cx.create(
        "bp.extract",
        [valid_shapes.with_valid(t, None)] + first,
        [TileType(tuple(dims), t.type.dtype, MemorySpace.Vec)],
        {},
        node,
        name,
    )
    return valid_shapes.with_valid(result, valid)


@operation(name="tile.extract", kinds=KERNEL_KINDS)
def tile_extract(cx, call, src, index_row, index_col, shape, target_memory):
    """The window `shape` of the 2-D tile `src` at row `index_row`, column
    `index_col`, placed in `target_memory`: pypto's `pl.tile.extract(t, 0,
    0, [1, 64], target_memory=pl.Mem.Vec)` (Ascend's TEXTRACT). The window
    is taken in Vec memory, as pl.slice of a tile (an Acc tile is moved
    there first), then moved to `target_memory` (Vec, or Mat for a matmul
    operand). pypto's extract of a Mat tile into Left or Right memory is
    not supported: windows are taken of Vec tiles. Valid in InCore, AIC
    and AIV functions.
    """
    node = call.node
    t = cx.tile_arg(src, "pl.tile.extract's src")
    space = cx.space_arg(target_memory, "pl.tile.extract's target_memory")
    if t.type.space is MemorySpace.Mat:
        raise cx.error(
            src,
            "pl.tile.extract takes a window of a Vec or Acc tile; of a Mat tile (into Left "
            "or Right memory) it is not supported by blockpipe: load the window instead",
        )
    dims = cx.shape_arg(shape, "pl.tile.extract's shape")
    if len(dims) != 2:
        raise cx.error(shape, f"pl.tile.extract's shape is 2-D, got {list(dims)}")
    at = ast.copy_location(ast.List(elts=[index_row, index_col], ctx=ast.Load()), node)
    window = tile_window(cx, call, t, dims, at)
    if space is None or space is MemorySpace.Vec:
        return window
    return cx.demand(window, space, target_memory, "pl.tile.extract's result")


def tile_offsets(cx, node, t: Value, what: str) -> List[Value]:
    """One index per dimension of the tile `t`."""
    return offsets_arg(cx, node, t.type, what)


@operation(kinds=KERNEL_KINDS)
def assemble(cx, call, target, source, offset, atomic=None):
    """Writes a tile into a window of a GM tensor and returns the tensor:
    `c = pl.assemble(c, tile, [0, n0])`, pypto's spelling of
    `c = pl.store(tile, [0, n0], c)`. A whole tensor as `source` is
    copied. `atomic=pl.AtomicType.Add` adds into the window, as for
    pl.store (a split-K matmul's partial products).

    Valid in InCore, AIC and AIV functions (and the pl.at scopes outlined
    into them).
    """
    dest = cx.expr(target)
    add = atomic_add(cx, atomic, "pl.assemble")
    if isinstance(dest, Value) and isinstance(dest.type, TileType):
        from blockpipe.language.ops.vector import vector_operand

        if add:
            raise cx.error(atomic, "pl.assemble adds atomically into GM tensors, not into tiles")

        whole = cx.typed_tile(
            vector_operand(cx, dest, call.node, "pl.assemble's target"),
            call.node,
            "pl.assemble into a tile",
        )
        part = cx.typed_tile(
            vector_operand(
                cx, cx.tile_arg(source, "pl.assemble's source"), call.node, "pl.assemble's source"
            ),
            call.node,
            "pl.assemble into a tile",
        )
        if len(part.type.shape) != len(whole.type.shape):
            raise cx.error(
                source,
                f"pl.assemble's source {list(part.type.shape)} and target "
                f"{list(whole.type.shape)} differ in rank",
            )
        cx.check_dtype(
            part.type.dtype, whole.type.dtype, call.node, "pl.assemble's source and target"
        )
        first = tile_offsets(cx, offset, whole, "pl.assemble")
        (result,) = cx.create(
            "bp.insert", [part, whole] + first, [whole.type], {}, call.node, call.name
        )
        return result
    value = cx.tile_arg(source, "pl.assemble's source")
    out = cx.tensor_arg(target, "pl.assemble's target")
    first = offsets_arg(cx, offset, out.type, "pl.assemble")
    return store_tile(
        cx, call, value, out, first, source, target, "pl.assemble", ("source", "target"), add
    )


def _set_validshape(cx, call, tile, valid_rows, valid_cols):
    """The tile with only its leading `valid_rows` x `valid_cols` holding
    data (numbers, or index values known at run time, each at most the
    tile's): `t = pl.tile.set_validshape(t, rows, cols)`. Elementwise
    operations keep the valid shape, reductions and matmuls use only the
    valid region, pl.store writes only it. Nothing is copied. Valid in
    InCore, AIC and AIV functions."""
    t = cx.typed_tile(
        cx.tile_arg(tile, "pl.tile.set_validshape's tile"), call.node, "pl.tile.set_validshape"
    )
    if len(t.type.shape) != 2:
        raise cx.error(
            call.node, f"pl.tile.set_validshape takes a 2-D tile, got {list(t.type.shape)}"
        )
    sizes = ast.copy_location(ast.List(elts=[valid_rows, valid_cols], ctx=ast.Load()), call.node)
    return valid_shapes.with_valid(t, valid_arg(cx, sizes, t.type.shape, "pl.tile.set_validshape"))


set_validshape = operation(name="set_validshape", kinds=KERNEL_KINDS)(_set_validshape)
tile_set_validshape = operation(name="tile.set_validshape", kinds=KERNEL_KINDS)(_set_validshape)


def _fillpad(cx, call, tile, pad_value=None):
    """The tile with every element outside its valid shape set to
    `pad_value`: pl.PadValue.zero (the default; also 0), .max or .min (also
    math.inf, -math.inf), the dtype's largest or lowest value. The result is
    valid everywhere. Valid in InCore, AIC and AIV functions."""
    t = cx.tile_arg(tile, "pl.fillpad's tile")
    pad = pad_arg(cx, pad_value) if pad_value is not None else 0
    return valid_shapes.pad_for(cx, t, pad, call.node)


fillpad = operation(name="fillpad", kinds=KERNEL_KINDS)(_fillpad)
tile_fillpad = operation(name="tile.fillpad", kinds=KERNEL_KINDS)(_fillpad)


def _read(cx, call, tensor, indices):
    """One element of a tensor, as a scalar of its dtype: `w = pl.read(x,
    [i, j])` (one index per dimension: numbers or index values; of a 1-D
    tensor also `pl.read(x, i)`). In a
    kernel it reads GM directly; in an orchestration it waits for the tasks
    before it (a sync point). An index outside the tensor fails the call
    at this line."""
    t = cx.tensor_arg(tensor, "pl.read's tensor")
    if len(t.type.shape) == 1 and not _is_list(cx, indices):
        # pypto's form for one dimension: the index itself (`pl.read(x, i)`).
        indices = ast.copy_location(ast.List(elts=[indices], ctx=ast.Load()), indices)
    at = offsets_arg(cx, indices, t.type, "pl.read")
    (result,) = cx.create("bp.read", [t] + at, [ScalarType(t.type.dtype)], {}, call.node, call.name)
    return result


read = operation(name="read")(_read)
tensor_read = operation(name="tensor.read")(_read)


def _tile_read(cx, call, tile, indices):
    """One element of a Vec tile, as a scalar of its dtype: `v =
    pl.tile.read(t, [i, j])` (one index per dimension: numbers or index
    values; of a tile with one row, also `pl.tile.read(t, j)`, pypto's flat
    form). An index outside the tile fails the launch at this line. Valid
    in InCore and AIV functions."""
    from blockpipe.language.ops.vector import vector_operand

    value = cx.typed_tile(cx.tile_arg(tile, "pl.tile.read's tile"), tile, "pl.tile.read")
    value = vector_operand(cx, value, call.node, "pl.tile.read's tile")
    if not _is_list(cx, indices):
        shape = value.type.shape
        if len(shape) != 1 and any(d != 1 for d in shape[:-1]):
            raise cx.error(
                indices,
                f"pl.tile.read of a {list(shape)} tile takes one index per dimension "
                "([i, j]); a single index reads a tile of one row",
            )
        zeros = [ast.copy_location(ast.Constant(0), indices) for _ in shape[:-1]]
        indices = ast.copy_location(ast.List(elts=zeros + [indices], ctx=ast.Load()), indices)
    at = tile_offsets(cx, indices, value, "pl.tile.read")
    (result,) = cx.create(
        "bp.element", [value] + at, [ScalarType(value.type.dtype)], {}, call.node, call.name
    )
    return result


tile_read = operation(name="tile.read", kinds=(FunctionType.InCore, FunctionType.AIV))(_tile_read)
