"""Vector: the lowering of elementwise ops (which the op table's
operations in `table` and the operators `+ - * /` on tiles share),
comparisons and selections, masks, casts, transposes, row and column
broadcasts and filled tiles, on Vec tiles (a tile in another space is moved
to Vec where a legal move exists). Valid in InCore and AIV functions."""

from __future__ import annotations

import dataclasses
import math

from blockpipe.language import op_table, valid_shapes
from blockpipe.language.ops import memory, operation
from blockpipe.language.rules import broadcast_hint, broadcasts
from blockpipe.language.types import (
    INDEX,
    INT32,
    DType,
    FunctionType,
    MemorySpace,
    ScalarType,
    TileType,
    is_unsigned,
    signless,
)
from blockpipe.language.values import PackedMask, Value, describe


def ast_text(node) -> str:
    import ast

    return ast.unparse(node) if isinstance(node, ast.AST) else repr(node)


VECTOR_KINDS = (FunctionType.InCore, FunctionType.AIV)


# pypto's cmp_type values, in bp.cmp's order.
CMP_TYPES = ("eq", "ne", "lt", "le", "gt", "ge")


def _cmp(name: str):
    def lower(cx, call, lhs, rhs, cmp_type=0):
        kind = cx.static_int(cmp_type, "cmp_type")
        if not 0 <= kind < len(CMP_TYPES):
            raise cx.error(
                cmp_type,
                f"cmp_type must be 0 (EQ), 1 (NE), 2 (LT), 3 (LE), 4 (GT) or 5 (GE), got {kind}",
            )
        result = binary(
            cx,
            "cmp",
            cx.tile_arg(lhs, f"pl.{name}'s lhs"),
            cx.tile_operand(cx.expr(rhs), rhs),
            call.node,
            call.name,
            {"predicate": cx.builder.cmp_predicate(CMP_TYPES[kind])},
        )
        return dataclasses.replace(result, predicate=True)

    lower.__name__ = name.rsplit(".", 1)[-1]
    lower.__doc__ = """Elementwise comparison, 1 where it holds and 0 elsewhere, in
    the lhs's dtype (a mask for pl.sel / pl.where; annotated as an integer
    tile of the lhs's rows, pypto's packed mask, only a mask):
    `m = pl.cmp(scores, 0.0, cmp_type=pl.CmpType.GT)`.

    rhs: a tile of the lhs's shape and dtype (or a row or column broadcast),
        or a scalar. cmp_type: 0 EQ, 1 NE, 2 LT, 3 LE, 4 GT, 5 GE (pypto's).
    Valid in InCore and AIV functions.
    """
    return operation(name=name, kinds=VECTOR_KINDS)(lower)


cmp = _cmp("cmp")
cmps = _cmp("cmps")
tile_cmp = _cmp("tile.cmp")
tile_cmps = _cmp("tile.cmps")


def select(cx, mask, lhs, rhs, node, name, packed=False):
    """Where `mask` is nonzero `lhs`, elsewhere `rhs` (a tile or scalar).
    `packed` (pl.sel, pl.sels): an integer mask that is no comparison's 1/0
    tile holds a bit per element (ops/packed_masks.py)."""
    from blockpipe.language.ops import packed_masks

    if isinstance(mask, PackedMask):
        mask = mask.tile
    mask = vector_operand(cx, mask, node, "the mask")
    lhs = cx.typed_tile(vector_operand(cx, lhs, node, "the selected tile"), node, "a selection")
    if isinstance(rhs, Value) and isinstance(rhs.type, TileType):
        rhs = vector_operand(cx, rhs, node, "the other tile")
        if not rhs.type.unknown and (rhs.type.shape, rhs.type.dtype) != (
            lhs.type.shape,
            lhs.type.dtype,
        ):
            raise cx.error(
                node,
                f"both choices must be tiles of one shape and dtype, got {lhs.type} and {rhs.type}",
            )
    else:
        rhs = cx.as_value(rhs, node, like=lhs.type)
    if packed and not mask.predicate:
        mask = cx.typed_tile(mask, node, "a packed mask")
        if not mask.type.dtype.is_float:
            mask = packed_masks.unpack(cx, mask, lhs.type, node)
    if not mask.type.unknown and mask.type.shape != lhs.type.shape:
        raise cx.error(
            node, f"the mask is {list(mask.type.shape)} but the tiles are {list(lhs.type.shape)}"
        )
    (result,) = cx.create("bp.select", [mask, lhs, rhs], None, {}, node, name)
    return result


@operation(kinds=VECTOR_KINDS)
def where(cx, call, mask, lhs, rhs):
    """`lhs` where `mask` is nonzero, else `rhs`:
    `pl.where(pl.tile.tri(q0, [16, 64], dtype=pl.FP32), s, -1e30)` (a causal mask).

    mask: a tile of the result's shape (any dtype), or a comparison
    annotated as a packed mask. lhs: a tile. rhs: a tile of lhs's shape and
    dtype, or a scalar. Valid in InCore and AIV functions.
    """
    return select(
        cx,
        cx.mask_arg(mask, "pl.where's mask"),
        cx.tile_arg(lhs, "pl.where's lhs"),
        cx.expr(rhs),
        call.node,
        call.name,
    )


_PACKED = """The mask: a comparison's result (pl.tile.cmp, pl.tile.cmps: its
    1/0 tile, or annotated as pypto's packed mask, `m: pl.Tile[[16, 32],
    pl.UINT8] = pl.tile.cmp(a, b)`), a float tile (nonzero selects), or an
    8, 16 or 32-bit integer tile of packed bits: (i, j) is selected by bit
    j mod W of word j div W of row i, W the dtype's width."""


def _sel(name: str):
    def lower(cx, call, mask, lhs, rhs, tmp=None):
        return select(
            cx,
            cx.mask_arg(mask, f"pl.{name}'s mask"),
            cx.tile_arg(lhs, f"pl.{name}'s lhs"),
            cx.expr(rhs),
            call.node,
            call.name,
            packed=True,
        )

    lower.__name__ = name.rsplit(".", 1)[-1]
    lower.__doc__ = f"""pypto's `pl.{name}(mask, lhs, rhs, tmp)`: lhs where the mask
    selects, rhs elsewhere; the scratch `tmp` is accepted and not needed.
    {_PACKED}"""
    return operation(name=name, kinds=VECTOR_KINDS)(lower)


def _sels(name: str):
    def lower(cx, call, mask, src, tmp, scalar):
        mask_value = cx.mask_arg(mask, f"pl.{name}'s mask")
        tile = cx.tile_arg(src, f"pl.{name}'s src")
        value = _sels_scalar(cx, cx.expr(scalar), tile, scalar)
        return select(cx, mask_value, tile, value, call.node, call.name, packed=True)

    lower.__name__ = name.rsplit(".", 1)[-1]
    lower.__doc__ = f"""pypto's `pl.{name}(mask, src, tmp, scalar)`: src where the mask
    selects, the scalar elsewhere; the scratch `tmp` is accepted and not needed.
    {_PACKED}"""
    return operation(name=name, kinds=VECTOR_KINDS)(lower)


def _sels_scalar(cx, value, tile: Value, node):
    """pypto's TSELS takes the scalar of an unsigned tile as the signed
    integer of its width: -3 selected into a UINT32 tile is 2**32 - 3. A
    negative number there is that signed integer's bits; any other scalar
    is as for pl.where."""
    if isinstance(value, Value) or isinstance(value, bool) or not isinstance(value, (int, float)):
        return value
    dtype = None if tile.type.unknown else tile.type.dtype
    if dtype is None or not is_unsigned(dtype) or value >= 0:
        return value
    bits = cx.constant(value, signless(dtype), node)
    return Value(bits.handle, ScalarType(dtype))


sel, tile_sel = _sel("sel"), _sel("tile.sel")
sels, tile_sels = _sels("sels"), _sels("tile.sels")


def _tri(cx, call, diagonal, shape, valid_shape=None, dtype=None, upper=False):
    """A triangular mask: 1 at (i, j) where j <= i + diagonal (or, with
    upper=True, j >= i + diagonal), 0 elsewhere; diagonal 0 is a causal mask
    and may be computed at run time (a block's first query row minus its
    first key column): `pl.tile.tri(q0 - k0, [16, 64], dtype=pl.FP32)`.

    dtype: the tile's (pl.INT32 by default, pypto's). valid_shape: the
    region that holds the mask (sizes known at compile time or at run
    time, as pl.load's): the result has that valid shape, so pl.store
    writes only it. Valid in InCore and AIV functions.
    """
    dims = cx.shape_arg(shape, "pl.tile.tri's shape")
    if len(dims) != 2:
        raise cx.error(shape, f"pl.tile.tri makes a 2-D tile, got shape {list(dims)}")
    valid = memory.valid_arg(cx, valid_shape, dims, "pl.tile.tri")
    kind = INT32 if dtype is None else cx.static(dtype)
    if not isinstance(kind, DType):
        raise cx.error(dtype, f"pl.tile.tri's dtype must be a pl dtype, got {kind!r}")
    is_upper = cx.static(upper) if not isinstance(upper, bool) else upper
    if not isinstance(is_upper, bool):
        raise cx.error(upper, "pl.tile.tri's upper must be True or False")
    attrs = {"upper": cx.builder.unit()} if is_upper else {}
    (result,) = cx.create(
        "bp.tri",
        [cx.index_value(cx.expr(diagonal), diagonal)],
        [TileType(dims, kind, MemorySpace.Vec)],
        attrs,
        call.node,
        call.name,
    )
    # Only the valid region is pypto's mask; the rest of the tile is
    # computed alike and means nothing.
    return valid_shapes.with_valid(dataclasses.replace(result, predicate=True), valid)


tri = operation(name="tile.tri", kinds=VECTOR_KINDS)(_tri)
top_tri = operation(name="tri", kinds=VECTOR_KINDS)(_tri)


@operation(kinds=VECTOR_KINDS)
def cast(cx, call, tile, target_type=None, mode=None, out_dtype=None):
    """The tile converted to `target_type`: `pl.cast(t, pl.FP16)`
    (`out_dtype=` is the same argument).

    Float to integer truncates toward zero, as in C; the 16-bit float types
    convert through FP32 (pypto's rounding `mode=` is accepted when it is
    the default, "round"). Returns a Vec tile of the same shape.
    Of a scalar (a pl.Scalar or index value) it is the scalar converted
    (`pl.cast(n, pl.FP32)`); of a number, the number. Valid in InCore and
    AIV functions.
    """
    if (target_type is None) == (out_dtype is None):
        raise cx.error(call.node, "pl.cast takes the dtype once: pl.cast(t, pl.FP16)")
    if mode is not None and cx.static(mode) not in ("round", "rint"):
        raise cx.error(
            mode,
            f"pl.cast(mode={ast_text(mode)}) is not supported by blockpipe: it "
            "rounds to nearest even (mode='round')",
        )
    out_dtype = target_type if target_type is not None else out_dtype
    value = cx.expr(tile)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        # A number known at compile time stays one (floats to integers
        # toward zero).
        dtype = cx.dtype_arg(out_dtype, "pl.cast's target_type")
        return float(value) if dtype.is_float else int(value)
    if isinstance(value, Value) and isinstance(value.type, ScalarType):
        dtype = cx.dtype_arg(out_dtype, "pl.cast's target_type")
        return cx.convert_scalar(value, ScalarType(dtype), call.node)
    value = cx.tile_operand(value, tile)
    if not (isinstance(value, Value) and isinstance(value.type, TileType)):
        raise cx.error(tile, f"pl.cast's operand must be a tile or a scalar, got {describe(value)}")
    t = vector_operand(cx, value, call.node, "pl.cast's operand")
    t = cx.typed_tile(t, call.node, "pl.cast")
    dtype = cx.dtype_arg(out_dtype, "pl.cast's target_type")
    if dtype is INDEX:
        raise cx.error(out_dtype, "tiles cannot hold INDEX elements")
    (result,) = cx.create(
        "bp.cast", [t], [TileType(t.type.shape, dtype, MemorySpace.Vec)], {}, call.node, call.name
    )
    return result


def _full(cx, call, shape, dtype, value, target_memory=None):
    """A tile of `shape` and `dtype` with every element `value`:
    `pl.full([16, 16], pl.FP32, 0.0)` (pypto's `pl.tile.full` is the same).

    shape: a list of positive integers known at compile time.
    value: a number known at compile time (in range for the dtype).
    target_memory: Vec, or Acc for the starting value of a
        `pl.matmul(..., acc=...)` chain. Left out, it follows from the uses.

    Valid in InCore and AIV functions, and in AIC functions for Acc tiles.

    Example::

        acc = pl.full([16, 16], pl.FP32, 0.0)
        for k in pl.range(0, K, 32):
            acc = pl.matmul(pl.load(a, [0, k], [16, 32]), pl.load(b, [k, 0], [32, 16]), acc=acc)
    """
    dims = cx.shape_arg(shape, "pl.full's shape")
    element = cx.dtype_arg(dtype, "pl.full's dtype")
    number = cx.static(value)
    if isinstance(number, bool) or not isinstance(number, (int, float)):
        raise cx.error(
            value, f"pl.full's value must be a number known at compile time, got {number!r}"
        )
    if element.is_float:
        attr = cx.float_attr(number, element, value)
    else:
        if isinstance(number, float) and not number.is_integer():
            raise cx.error(
                value, f"pl.full's value {number} is not an integer but dtype is {element.name}"
            )
        attr = cx.int_attr(number, element, value)
    # A vec tile, or an acc tile that starts a matmul chain: from
    # target_memory=, else from how it is used (as loads are).
    explicit = cx.space_arg(target_memory, "target_memory")
    if explicit not in (None, MemorySpace.Vec, MemorySpace.Acc):
        raise cx.error(
            target_memory,
            "pl.full makes Vec tiles, or Acc tiles that start a "
            f"pl.matmul(..., acc=...) chain; got {explicit.name}",
        )
    if cx.kind is FunctionType.AIC and explicit is MemorySpace.Vec:
        raise cx.error(
            call.node,
            "an AIC function can only make Acc tiles with pl.full (the starting "
            "value of a pl.matmul(..., acc=...) chain)",
        )
    # Without target_memory=, bp-infer-memory-spaces decides from its uses.
    (result,) = cx.create(
        "bp.full", [], [TileType(dims, element, explicit)], {"value": attr}, call.node, call.name
    )
    return result


_FULL_KINDS = (FunctionType.InCore, FunctionType.AIV, FunctionType.AIC)
full = operation(name="full", kinds=_FULL_KINDS)(_full)
tile_full = operation(name="tile.full", kinds=_FULL_KINDS)(_full)


def vector_operand(cx, value: Value, node, what: str) -> Value:
    return cx.demand(value, MemorySpace.Vec, node, what)


def binary(cx, op: str, lhs: Value, rhs, node, name, attrs=None):
    """`op` on the tile `lhs` and a tile or scalar `rhs` (also for `a + b`)."""
    cx.require_kind(node, op, VECTOR_KINDS)
    lhs = vector_operand(cx, lhs, node, f"pl.{op}'s operands")
    tile = lhs.type.with_space(MemorySpace.Vec)
    if not tile.unknown:
        op_table.check_dtype(cx, op, tile.dtype, node)
    if (
        isinstance(rhs, Value)
        and isinstance(rhs.type, TileType)
        and (tile.unknown or rhs.type.unknown)
    ):
        # Shapes and dtypes still to be inferred: the dialect checks them
        # once bp-infer-pipe-types has.
        rhs = vector_operand(cx, rhs, node, f"pl.{op}'s operands")
    elif isinstance(rhs, Value) and isinstance(rhs.type, TileType):
        rhs = vector_operand(cx, rhs, node, f"pl.{op}'s operands")
        record = op_table.record(op)
        if record and record["commutative"] and broadcasts(rhs.type.shape, tile.shape):
            # gamma * x: the tile ops broadcast their second operand only,
            # and these are commutative.
            lhs, rhs = rhs, lhs
            tile = lhs.type.with_space(MemorySpace.Vec)
        elif broadcasts(rhs.type.shape, tile.shape) and not tile.unknown:
            # row_max(x) - x: the broadcast operand first is spread over the
            # other's shape.
            lhs = spread(cx, lhs, rhs, node, None)
            tile = lhs.type.with_space(MemorySpace.Vec)
        if rhs.type.shape != tile.shape and not broadcasts(tile.shape, rhs.type.shape):
            raise cx.error(
                node,
                f"pl.{op} operand shapes differ: {list(tile.shape)} and "
                f"{list(rhs.type.shape)}{broadcast_hint(tile.shape)}",
            )
        cx.check_dtype(tile.dtype, rhs.type.dtype, node, f"pl.{op}'s operands")
        rhs = _checked_outside_valid(cx, op, tile, rhs, node)
    else:
        if not isinstance(rhs, Value):  # a number takes the tile's dtype
            tile = cx.typed_tile(lhs, node, f"pl.{op} with a number").type.with_space(
                MemorySpace.Vec
            )
        if (
            isinstance(rhs, Value)
            and isinstance(rhs.type, ScalarType)
            and not tile.unknown
            and signless(rhs.type.dtype) != signless(tile.dtype)
        ):
            rhs = scalar_as_tile_dtype(cx, op, rhs, tile.dtype, node)
        if op == "div" and not tile.dtype.is_float and rhs == 0 and not isinstance(rhs, Value):
            raise cx.error(
                node, f"integer division by zero: pl.div of a tile of {tile.dtype.name} by 0"
            )
        rhs = cx.as_value(rhs, node, like=tile)
        if not isinstance(rhs.type, ScalarType):
            raise cx.error(
                node, f"pl.{op}'s second operand must be a tile or a scalar, got {rhs.type}"
            )
    (result,) = cx.create(f"bp.{op}", [lhs, rhs], None, attrs or {}, node, name)
    return result


def _checked_outside_valid(cx, op: str, tile, rhs: Value, node) -> Value:
    """The second operand of an integer op whose operands are checked at
    run time (a divisor, a shift amount), with what lies outside its valid
    shape set to an operand the check accepts (1, or a shift of 0): the
    result there is not data, and must not fail the launch."""
    record = op_table.record(op)
    if not record or not record["check"] or tile.dtype.is_float or tile.unknown:
        return rhs
    valid = valid_shapes.of(rhs)
    if valid is None:
        return rhs
    benign = 0 if op in ("shl", "shr") else 1
    return valid_shapes.pad_for(cx, rhs, benign, node)


def scalar_as_tile_dtype(cx, op: str, scalar: Value, dtype, node) -> Value:
    """A scalar operand of another dtype than its tile's, converted to the
    tile's as pl.cast of a scalar does: pypto's tile-scalar ops keep the
    tile's dtype and narrow the scalar to it. An op on integers only takes
    an integer scalar (as pypto's bitwise and shift ops do)."""
    if op_table.dtype_rule(op) == "integer" and scalar.type.dtype.is_float:
        raise cx.error(
            node,
            f"pl.{op}'s scalar is {scalar.type.dtype.name} but the tile is {dtype.name}: "
            f"pl.{op} takes an integer scalar",
        )
    return cx.convert_scalar(scalar, ScalarType(dtype), node)


def scalar_first(cx, op: str, scalar, tile: Value, node, name):
    """`scalar - tile` and `scalar op tile` (as in 1.0 / (1.0 + pl.exp(-x))):
    the tile ops take their scalar second, so these become
    neg(tile) + scalar and op(full(scalar), tile)."""
    cx.require_kind(node, op, VECTOR_KINDS)
    tile = cx.typed_tile(
        vector_operand(cx, tile, node, f"pl.{op}'s operands"), node, f"a number {op} a tile"
    )
    if op == "sub":
        return binary(cx, "add", unary(cx, "neg", tile, node, None), scalar, node, name)
    dtype = tile.type.dtype
    value = scalar if isinstance(scalar, (int, float)) else 1
    if not dtype.is_float and isinstance(value, float) and not value.is_integer():
        raise cx.error(node, f"{value} is not an integer but the tile is {dtype.name}")
    attr = cx.float_attr(value, dtype, node) if dtype.is_float else cx.int_attr(value, dtype, node)
    (filled,) = cx.create(
        "bp.full", [], [TileType(tile.type.shape, dtype, MemorySpace.Vec)], {"value": attr}, node
    )
    if isinstance(scalar, Value):
        filled = binary(cx, "mul", filled, scalar, node, None)
    return binary(cx, op, filled, tile, node, name)


def unary(cx, op: str, tile: Value, node, name):
    """`op` on a tile (also for `-t`)."""
    cx.require_kind(node, op, VECTOR_KINDS)
    tile = vector_operand(cx, tile, node, f"pl.{op}'s operand")
    if not tile.type.unknown:
        op_table.check_dtype(cx, op, tile.type.dtype, node)
    (result,) = cx.create(f"bp.{op}", [tile], None, {}, node, name)
    return result


@operation(kinds=VECTOR_KINDS)
def transpose(cx, call, tile, axis1=0, axis2=1):
    """The transpose of a 2-D tile, [M, N] -> [N, M]: `pl.transpose(t, 0, 1)`
    (pypto's axes; the two axes of a 2-D tile, in either order or negative).

    Returns a Vec tile of the same dtype. Valid in InCore and AIV functions.

    Example::

        kt = pl.transpose(pl.load(k, [0, 0], [64, 128]))   # [128, 64]
    """
    t = vector_operand(
        cx, cx.tile_arg(tile, "pl.transpose's operand"), call.node, "pl.transpose's operand"
    )
    rank = 2 if t.type.unknown else len(t.type.shape)
    if rank < 2:
        raise cx.error(call.node, f"pl.transpose transposes a 2-D tile, got {list(t.type.shape)}")
    axes = []
    for node in (axis1, axis2):
        axis = cx.static(node) if not isinstance(node, int) else node
        if isinstance(axis, bool) or not isinstance(axis, int) or not -rank <= axis < rank:
            raise cx.error(
                node if not isinstance(node, int) else call.node,
                f"pl.transpose's axes are those of a {rank}-D tile "
                f"({', '.join(str(a) for a in [*range(rank), *range(-rank, 0)])}), got {axis!r}",
            )
        axes.append(axis % rank)
    if axes[0] == axes[1]:
        raise cx.error(
            call.node, f"pl.transpose swaps two different axes, got {axes[0]} and {axes[1]}"
        )
    if rank > 2:
        if sorted(axes) != [rank - 2, rank - 1]:
            raise cx.error(
                call.node,
                f"pl.transpose of a {rank}-D tile swaps its last two axes ({rank - 2} and "
                f"{rank - 1}), got {axes[0]} and {axes[1]}",
            )
        return _batch_transpose(cx, call, t)
    (result,) = cx.create("bp.transpose", [t], None, {}, call.node, call.name)
    return result


def _batch_transpose(cx, call, t: Value) -> Value:
    """Each [R, C] matrix of an n-D tile transposed, its leading dims kept:
    the tile as [P * R, C] rows, each batch's window transposed and
    inserted at its place in a [P * C, R] tile, shaped back."""
    node = call.node
    *lead, rows, cols = t.type.shape
    batches = math.prod(lead)
    dtype = t.type.dtype

    def tile(shape):
        return TileType(tuple(shape), dtype, MemorySpace.Vec)

    (flat,) = cx.create("bp.reshape", [t], [tile((batches * rows, cols))], {}, node)
    zero = cx.float_attr(0.0, dtype, node) if dtype.is_float else cx.int_attr(0, dtype, node)
    (out,) = cx.create("bp.full", [], [tile((batches * cols, rows))], {"value": zero}, node)
    origin = cx.index_value(0, node)
    for b in range(batches):
        at = [cx.index_value(b * rows, node), origin]
        (window,) = cx.create("bp.extract", [flat] + at, [tile((rows, cols))], {}, node)
        (flipped,) = cx.create("bp.transpose", [window], None, {}, node)
        to = [cx.index_value(b * cols, node), origin]
        (out,) = cx.create("bp.insert", [flipped, out] + to, [out.type], {}, node)
    (result,) = cx.create("bp.reshape", [out], [tile((*lead, cols, rows))], {}, node, call.name)
    return result


# ----------------------------------------------- row and column broadcasts


def _expand(op: str, axis: str, combine: str, qualname: str):
    """pypto's row_expand_* / col_expand_*: `combine` of a tile with a
    [M, 1] (row) or [1, N] (column) vector, as pl.`qualname` (the
    pl.tensor.X spelling takes tensors in a scope, loaded whole)."""
    row = axis == "row"
    shape = "[M, 1]" if row else "[1, N]"

    def lower(cx, call, tile, vec, tmp=None):
        t = vector_operand(
            cx, cx.tile_arg(tile, f"pl.{qualname}'s tile"), call.node, f"pl.{qualname}'s tile"
        )
        v = vector_operand(
            cx,
            cx.tile_arg(vec, f"pl.{qualname}'s {axis} vector"),
            call.node,
            f"pl.{qualname}'s vector",
        )
        if not (t.type.unknown or v.type.unknown):
            shape = tuple(t.type.shape)
            if len(shape) < 2 or (combine == "expand" and len(shape) != 2):
                raise cx.error(tile, f"pl.{qualname} takes a 2-D tile, got {list(shape)}")
            # Of an N-D tile, the vector spans its leading dims (row) or its last (column).
            want = shape[:-1] + (1,) if row else (1,) * (len(shape) - 1) + shape[-1:]
            # pypto gives the packed carrier to the tile-level row_expand_add only.
            packed_ok = qualname == op and op == "row_expand_add"
            if packed_ok and is_packed_row_vector(v.type, shape):
                v = repeat_packed_lanes(cx, v, shape[-1], call.node)
            elif tuple(v.type.shape) != want:
                raise cx.error(
                    vec,
                    f"pl.{qualname}'s {axis} vector must be {list(want)}"
                    f"{packed_hint(t.type) if packed_ok else ''} for a tile of "
                    f"{list(t.type.shape)}, got {list(v.type.shape)}",
                )
        if combine == "expand":
            return spread(cx, v, t, call.node, call.name)
        if combine == "expdif":
            return unary(cx, "exp", binary(cx, "sub", t, v, call.node, None), call.node, call.name)
        return binary(cx, combine, t, v, call.node, call.name)

    lower.__name__ = qualname.rsplit(".", 1)[-1]
    packed_doc = (
        "\n\n    The row vector may also be pypto's packed carrier, [M, 32 / itemsize]:"
        "\n    one 32-byte block per row, element (i, j) adding vec[i, j mod W]."
        if qualname == "row_expand_add"
        else ""
    )
    what = {
        "expand": f"the {shape} vector repeated over the tile's shape",
        "expdif": "exp(tile - vector)",
    }.get(combine, f"pl.{combine} of the tile and the vector")
    lower.__doc__ = f"""{what}, the {shape} vector broadcast along the
    tile's {"columns" if row else "rows"}: `pl.{qualname}(t, v)`. pypto's scratch
    `tmp` is accepted and not needed. Valid in InCore and AIV functions.{packed_doc}
    """
    return operation(name=qualname, kinds=VECTOR_KINDS)(lower)


# pypto's row_expand_add also takes a row-major "packed" row vector: one
# 32-byte block of lanes per row, repeated across the destination row.
PACKED_ROW_BYTES = 32


def packed_lanes(dtype) -> int:
    return PACKED_ROW_BYTES // dtype.bytes


def is_packed_row_vector(vec: TileType, shape) -> bool:
    """Whether `vec` is pypto's packed carrier for a 2-D tile of `shape`:
    [M, 32 / itemsize], more than one lane."""
    lanes = packed_lanes(vec.dtype)
    return len(shape) == 2 and lanes > 1 and tuple(vec.shape) == (shape[0], lanes)


def packed_hint(tile: TileType) -> str:
    if len(tile.shape) != 2 or packed_lanes(tile.dtype) < 2:
        return ""
    return f" (or [{tile.shape[0]}, {packed_lanes(tile.dtype)}], one 32-byte block per row)"


def repeat_packed_lanes(cx, vec: Value, cols: int, node) -> Value:
    """The packed row vector [M, W] repeated along its row to [M, cols]:
    element (i, j) is vec[i, j mod W]. The lanes outside its valid rows are
    zeroed first (a window is not elementwise); the result's valid rows are
    the tile's, which the sum takes."""
    vec = valid_shapes.pad_for(cx, vec, 0, node)
    rows, lanes = vec.type.shape
    dtype = vec.type.dtype
    whole = TileType((rows, cols), dtype, MemorySpace.Vec)
    zero = cx.float_attr(0.0, dtype, node) if dtype.is_float else cx.int_attr(0, dtype, node)
    (result,) = cx.create("bp.full", [], [whole], {"value": zero}, node)
    for first in range(0, cols, lanes):
        part = vec
        if first + lanes > cols:  # the last block, cut at the row's end
            width = cols - first
            at = [cx.index_value(0, node), cx.index_value(0, node)]
            piece = TileType((rows, width), dtype, MemorySpace.Vec)
            (part,) = cx.create("bp.extract", [vec] + at, [piece], {}, node)
        at = [cx.index_value(0, node), cx.index_value(first, node)]
        (result,) = cx.create("bp.insert", [part, result] + at, [whole], {}, node)
    return result


def spread(cx, vec, like: Value, node, name) -> Value:
    """`vec` (a broadcastable tile or a scalar) spread over the shape and
    dtype of `like`."""
    return spread_to(cx, vec, like.type.shape, like.type.dtype, node, name)


def spread_to(cx, vec, shape, dtype, node, name) -> Value:
    """`vec` (a broadcastable tile or a scalar) spread over a Vec tile of
    `shape` and `dtype` (-0.0 + v is v exactly, for every v)."""
    zero = cx.float_attr(-0.0, dtype, node) if dtype.is_float else cx.int_attr(0, dtype, node)
    (base,) = cx.create(
        "bp.full", [], [TileType(tuple(shape), dtype, MemorySpace.Vec)], {"value": zero}, node
    )
    return binary(cx, "add", base, vec, node, name)


for _axis in ("row", "col"):
    for _combine, _binop in (
        ("", "expand"),
        ("_add", "add"),
        ("_sub", "sub"),
        ("_mul", "mul"),
        ("_div", "div"),
        ("_max", "maximum"),
        ("_min", "minimum"),
        ("_expdif", "expdif"),
    ):
        _name = f"{_axis}_expand{_combine}"
        for _prefix in ("", "tensor."):
            globals()[(_prefix + _name).replace(".", "_")] = _expand(
                _name, _axis, _binop, _prefix + _name
            )


@operation(kinds=VECTOR_KINDS)
def expands(cx, call, target, scalar):
    """A tile of `target`'s shape and dtype with every element `scalar`
    (a number, or a pl.Scalar known at run time): `pl.expands(t, 0.5)`.
    Valid in InCore and AIV functions."""
    t = cx.typed_tile(
        vector_operand(
            cx, cx.tile_arg(target, "pl.expands's target"), call.node, "pl.expands's target"
        ),
        call.node,
        "pl.expands",
    )
    value = cx.expr(scalar)
    dtype = t.type.dtype
    if not isinstance(value, Value):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise cx.error(scalar, f"pl.expands takes a number or a scalar, got {describe(value)}")
        if not dtype.is_float and isinstance(value, float) and not value.is_integer():
            raise cx.error(scalar, f"{value} is not an integer but the tile is {dtype.name}")
        attr = (
            cx.float_attr(value, dtype, scalar)
            if dtype.is_float
            else cx.int_attr(int(value), dtype, scalar)
        )
        (result,) = cx.create(
            "bp.full",
            [],
            [TileType(t.type.shape, dtype, MemorySpace.Vec)],
            {"value": attr},
            call.node,
            call.name,
        )
        return result
    return spread(cx, value, t, call.node, call.name)


@operation(kinds=VECTOR_KINDS)
def reshape(cx, call, tile, shape):
    """The tile's elements, in row-major order, in another shape with as
    many elements: `pl.reshape(t, [64, 16])` of a [16, 64] tile.

    Returns a Vec tile of the same dtype. Valid in InCore and AIV
    functions (a GM tensor is reshaped by viewing it with another shape in
    the orchestration).
    """
    value = cx.tile_operand(cx.expr(tile), tile)
    if not (isinstance(value, Value) and isinstance(value.type, TileType)):
        raise cx.error(tile, f"pl.reshape's operand must be a tile, got {describe(value)}")
    t = cx.typed_tile(
        vector_operand(cx, value, call.node, "pl.reshape's operand"), call.node, "pl.reshape"
    )
    dims = cx.shape_arg(shape, "pl.reshape's shape")
    have = 1
    for d in t.type.shape:
        have *= d
    want = 1
    for d in dims:
        want *= d
    if have != want:
        raise cx.error(
            shape,
            f"pl.reshape cannot make {list(dims)} ({want} elements) of a tile of "
            f"{list(t.type.shape)} ({have} elements)",
        )
    (result,) = cx.create(
        "bp.reshape",
        [t],
        [TileType(tuple(dims), t.type.dtype, MemorySpace.Vec)],
        {},
        call.node,
        call.name,
    )
    return result
