"""Cube: matrix multiplication on the cube unit."""

from __future__ import annotations

from blockpipe.language import valid_shapes
from blockpipe.language.ops import operation
from blockpipe.language.types import BF16, FP16, FunctionType, MemorySpace, TileType
from blockpipe.language.values import TransposedView


@operation(kinds=(FunctionType.InCore, FunctionType.AIC))
def matmul(
    cx, call, lhs, rhs, out_dtype=None, a_trans=False, b_trans=False, c_matrix_nz=False, acc=None
):
    """The matrix product lhs @ rhs, in Acc memory: `pl.matmul(a, b)`.

    lhs: an [M, K] tile, placed in Left memory (a loaded tile lands there; a
        Mat tile is moved).
    rhs: a [K, N] tile of the same dtype, placed in Right memory.
    out_dtype: the result's dtype: the accumulator's (FP32 for float
        operands, INT32 for integer ones, the default), or FP16/BF16 for
        float operands: the FP32 sum rounded once, as the cube's output
        conversion does.
    b_trans: rhs is given as [N, K] (its rows are the product's columns):
        lhs @ rhs^T, as attention's Q @ K^T. A rhs that is a
        pl.tile.transpose_view is its tile read transposed the same way.
    acc: an [M, N] Acc tile to add the product to (a previous pl.matmul
        result or pl.full(..., target_memory=Acc)): a K loop's chain.

    Returns an [M, N] Acc tile. FP16/BF16 products accumulate in FP32.
    Valid in InCore and AIC functions (in an InCore function the result
    reaches vector operations through a pipe).

    Example::

        acc = pl.matmul(pl.load(a, [0, 0], [64, 128]), pl.load(b, [0, 0], [128, 64]))
        out = pl.store(acc, [0, 0], out)
    """
    a = cx.tile_arg(lhs, "pl.matmul's first operand")
    b, viewed = cx.tile_or_view(rhs, "pl.matmul's second operand")
    if _batched(a) or _batched(b):
        if acc is not None:
            raise cx.error(
                acc,
                "pl.matmul(acc=...) of tiles of more than 2 dimensions is not supported by "
                "blockpipe",
            )
        return _batch(
            cx, call, (a, lhs), (b, viewed, rhs), a_trans, b_trans, "pl.matmul", out_dtype
        )
    cx.check_dtype(a.type.dtype, b.type.dtype, call.node, "pl.matmul's operands")
    for keyword, value in (("a_trans", a_trans), ("c_matrix_nz", c_matrix_nz)):
        if value is not False and cx.static(value) is not False:
            raise cx.error(value, f"pl.matmul({keyword}=True) is not supported by blockpipe")
    transposed = _transposed(cx, b_trans, viewed, "pl.matmul")
    a = cx.demand(a, MemorySpace.Left, lhs, "pl.matmul's first operand")
    b = cx.demand(b, MemorySpace.Right, rhs, "pl.matmul's second operand")
    # Of operands with a valid shape, only the valid regions multiply: the
    # rest is zero, and the product is valid where both are.
    rows = a.valid[0] if a.valid else None
    cols = (b.valid[0] if transposed else b.valid[1]) if b.valid else None
    a = valid_shapes.pad_for(cx, a, 0, call.node)
    b = valid_shapes.pad_for(cx, b, 0, call.node)
    attrs = {"transpose_rhs": cx.builder.unit()} if transposed else {}
    # Ranks and inner dimensions are the dialect's to check (bp.matmul's
    # inference and verifier), at this line.
    (result_type,) = cx.infer("bp.matmul", [a, b], call.node, attrs)
    acc_dtype = result_type.dtype
    if out_dtype is not None and acc_dtype is None:
        cx.typed_tile(a if a.type.unknown else b, out_dtype, "pl.matmul's out_dtype")
    results = None
    if out_dtype is not None:
        out = cx.dtype_arg(out_dtype, "pl.matmul's out_dtype")
        if out != acc_dtype:
            if not (acc_dtype.is_float and out in (FP16, BF16)):
                raise cx.error(
                    out_dtype,
                    f"pl.matmul accumulates {a.type.dtype.name} in {acc_dtype.name}; "
                    f"its result is {acc_dtype.name}, or FP16/BF16 for float operands, "
                    f"not {out.name}",
                )
            result_type = TileType(result_type.shape, out, MemorySpace.Acc)
            results = [result_type]
    operands = [a, b]
    if acc is not None:
        c = cx.tile_arg(acc, "pl.matmul's acc")
        if (
            out_dtype is None
            and not c.type.unknown
            and acc_dtype is not None
            and acc_dtype.is_float
            and c.type.dtype in (FP16, BF16)
        ):
            # A chain kept in FP16/BF16 (its first pl.matmul had out_dtype=).
            result_type = TileType(result_type.shape, c.type.dtype, MemorySpace.Acc)
        if (
            not (c.type.unknown or result_type.unknown)
            and (c.type.shape, c.type.dtype) != (result_type.shape, result_type.dtype)
            or (c.type.space not in (None, MemorySpace.Acc))
        ):
            raise cx.error(
                acc,
                f"pl.matmul's acc must be {result_type}, got {c.type}; a chain "
                "starts from a pl.matmul result or from pl.full",
            )
        c = cx.demand(c, MemorySpace.Acc, acc, "pl.matmul's acc")
        operands.append(valid_shapes.pad_for(cx, c, 0, call.node))
    if acc is not None and results is None:
        results = [result_type]
    (result,) = cx.create("bp.matmul", operands, results, attrs, call.node, call.name)
    if (rows is not None or cols is not None) and not result.type.unknown:
        m, n = result.type.shape
        result = valid_shapes.with_valid(
            result, (m if rows is None else rows, n if cols is None else cols)
        )
    return result


def _transposed(cx, b_trans, viewed: bool, what: str) -> bool:
    """Whether the rhs is read transposed: b_trans=True, or a
    pl.tile.transpose_view (its tile read transposed); both: not."""
    transposed = b_trans is not False and cx.static(b_trans)
    if not isinstance(transposed, bool):
        raise cx.error(b_trans, f"{what}'s b_trans must be True or False, got {transposed!r}")
    return transposed != viewed


def _batched(value) -> bool:
    return not value.type.unknown and len(value.type.shape) > 2


@operation(kinds=(FunctionType.InCore, FunctionType.AIC))
def batch_matmul(cx, call, lhs, rhs, a_trans=False, b_trans=False, out_dtype=None):
    """The matrix products of the last two dimensions of `lhs` and `rhs`,
    batch by batch, in Acc memory: `pl.batch_matmul(a, b)` for a
    [..., M, K] and a [..., K, N] tile is [..., M, N], as NumPy's `a @ b`.
    pl.matmul of tiles of more than 2 dimensions is the same.

    The leading (batch) dimensions broadcast as NumPy's: aligned from the
    right, a size of 1 (or a missing dimension) against any size. b_trans
    (or a pl.tile.transpose_view rhs) reads rhs as [..., N, K]. out_dtype,
    if given, is the accumulator's dtype.

    Both operands are tiles loaded whole from GM tensors (pl.load, with
    target_memory= or pl.move as for pl.matmul), and the result is stored
    whole (pl.store) right after: blockpipe loads, multiplies and stores
    one batch at a time (bp-flatten-tiles), so a batch's tiles are all the
    memories hold. Float products accumulate in FP32, integer ones in INT32.

    Valid in InCore and AIC functions.

    Example::

        a_t = pl.load(a, [0, 0, 0], [4, 32, 64])
        b_t = pl.load(b, [0, 0, 0], [4, 64, 32])
        out = pl.store(pl.batch_matmul(a_t, b_t), [0, 0, 0], out)
    """
    a = cx.tile_arg(lhs, "pl.batch_matmul's first operand")
    b, viewed = cx.tile_or_view(rhs, "pl.batch_matmul's second operand")
    return _batch(
        cx, call, (a, lhs), (b, viewed, rhs), a_trans, b_trans, "pl.batch_matmul", out_dtype
    )


def _batch(cx, call, left, right, a_trans, b_trans, what: str, out_dtype=None):
    """The batched product of the operands `left` (tile, node) and `right`
    (tile, whether a transposed view, node)."""
    (a, lhs), (b, viewed, rhs) = left, right
    cx.check_dtype(a.type.dtype, b.type.dtype, call.node, f"{what}'s operands")
    if a_trans is not False and cx.static(a_trans) is not False:
        raise cx.error(a_trans, f"{what}(a_trans=True) is not supported by blockpipe")
    transposed = _transposed(cx, b_trans, viewed, what)
    for value, node in ((a, lhs), (b, rhs)):
        if value.valid is not None:
            raise cx.error(node, f"{what}'s operands take no valid shape")
    a = cx.demand(a, MemorySpace.Left, lhs, f"{what}'s first operand")
    b = cx.demand(b, MemorySpace.Right, rhs, f"{what}'s second operand")
    attrs = {"transpose_rhs": cx.builder.unit()} if transposed else {}
    # Shapes and broadcasting are the dialect's to check, at this line.
    (result,) = cx.create("bp.batch_matmul", [a, b], None, attrs, call.node, call.name)
    if out_dtype is not None:
        out = cx.dtype_arg(out_dtype, f"{what}'s out_dtype")
        if out != result.type.dtype:
            raise cx.error(
                out_dtype,
                f"{what} of tiles of more than 2 dimensions accumulates {a.type.dtype.name} in "
                f"{result.type.dtype.name}, its result's dtype; out_dtype={out.name} is not "
                "supported by blockpipe",
            )
    return result


@operation(kinds=(FunctionType.InCore, FunctionType.AIC))
def matmul_acc(cx, call, acc, lhs, rhs, a_trans=False, b_trans=False, init_cond=None):
    """acc + lhs @ rhs: pypto's spelling of `pl.matmul(lhs, rhs, acc=acc)`
    (b_trans as there). Valid in InCore and AIC functions."""
    if init_cond is not None:
        raise cx.error(
            init_cond,
            "pl.matmul_acc(init_cond=...) is not supported by blockpipe; start the "
            "chain from pl.matmul or pl.full",
        )
    return matmul.__bp_op__.impl(cx, call, lhs, rhs, a_trans=a_trans, b_trans=b_trans, acc=acc)


@operation(name="tile.transpose_view", kinds=(FunctionType.InCore, FunctionType.AIC))
def transpose_view(cx, call, tile):
    """The Mat tile `tile` ([N, K]) read as its transpose ([K, N]), without
    moving data: `kt = pl.tile.transpose_view(pl.load(k, [0, 0], [N, K],
    target_memory=pl.MemorySpace.Mat))`.

    The view may be moved to Right memory (`pl.move(kt,
    target_memory=pl.MemorySpace.Right)`, still a view) and be pl.matmul's
    right operand: `pl.matmul(q, kt)` is q @ k^T, as `b_trans=True` on the
    tile itself. Nothing else reads a view (pl.transpose transposes a Vec
    tile's data); a view of a view is the tile again. pypto's NZ/ZN layout
    reinterpretation, which this stands for, has no layout to change here.

    Valid in InCore and AIC functions.
    """
    value, viewed = cx.tile_or_view(tile, "pl.tile.transpose_view's tile")
    if viewed:
        return value
    if not value.type.unknown and len(value.type.shape) < 2:
        raise cx.error(
            tile,
            f"pl.tile.transpose_view takes a tile of 2 or more dimensions, got "
            f"{list(value.type.shape)}",
        )
    if value.type.space not in (None, MemorySpace.Mat, MemorySpace.Right):
        raise cx.error(
            tile,
            "pl.tile.transpose_view takes a Mat tile (a matmul operand on its way to Right "
            f"memory), got a {value.type.space.name} tile",
        )
    return TransposedView(value)
