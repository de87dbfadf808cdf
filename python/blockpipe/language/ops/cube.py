"""Cube: matrix multiplication on the cube unit."""

from __future__ import annotations

import inspect

from blockpipe.language import valid_shapes
from blockpipe.language.ops import operation
from blockpipe.language.types import (
    BF16,
    FP16,
    FP32,
    INT8,
    INT32,
    FunctionType,
    MemorySpace,
    TileType,
)
from blockpipe.language.values import LoweringError, TransposedView, Value


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
    a_trans: lhs is given as [K, M] (its columns are the product's rows):
        lhs^T @ rhs. A lhs that is a pl.tile.transpose_view is its tile read
        transposed the same way.
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
    a, lhs_viewed = cx.tile_or_view(lhs, "pl.matmul's first operand")
    b, viewed = cx.tile_or_view(rhs, "pl.matmul's second operand")
    if _batched(a) or _batched(b):
        if acc is not None:
            raise cx.error(
                acc,
                "pl.matmul(acc=...) of tiles of more than 2 dimensions is not supported by "
                "blockpipe",
            )
        return _batch(
            cx,
            call,
            (a, lhs_viewed, lhs),
            (b, viewed, rhs),
            a_trans,
            b_trans,
            "pl.matmul",
            out_dtype,
        )
    c = None if acc is None else cx.tile_arg(acc, "pl.matmul's acc")
    return product(
        cx,
        call,
        (a, lhs_viewed, lhs),
        (b, viewed, rhs),
        out_dtype,
        a_trans,
        b_trans,
        c_matrix_nz,
        (c, acc),
    )


def product(
    cx, call, left, right, out_dtype, a_trans, b_trans, c_matrix_nz, accumulated, what="pl.matmul"
):
    """The 2-D product of the operands `left` and `right` (each: tile,
    whether a transposed view, node), added to `accumulated` (an Acc tile or
    None, and the node its errors name); `what` names the operation in
    errors."""
    (a, lhs_viewed, lhs), (b, viewed, rhs), (c, acc) = left, right, accumulated
    cx.check_dtype(a.type.dtype, b.type.dtype, call.node, f"{what}'s operands")
    if c_matrix_nz is not False and cx.static(c_matrix_nz) is not False:
        raise cx.error(c_matrix_nz, f"{what}(c_matrix_nz=True) is not supported by blockpipe")
    lhs_transposed = _transposed(cx, a_trans, lhs_viewed, what, "a_trans")
    transposed = _transposed(cx, b_trans, viewed, what)
    a = cx.demand(a, MemorySpace.Left, lhs, f"{what}'s first operand")
    b = cx.demand(b, MemorySpace.Right, rhs, f"{what}'s second operand")
    # Of operands with a valid shape, only the valid regions multiply: the
    # rest is zero, and the product is valid where both are.
    rows = (a.valid[1] if lhs_transposed else a.valid[0]) if a.valid else None
    cols = (b.valid[0] if transposed else b.valid[1]) if b.valid else None
    a = valid_shapes.pad_for(cx, a, 0, call.node)
    b = valid_shapes.pad_for(cx, b, 0, call.node)
    attrs = _orientation(cx, lhs_transposed, transposed)
    # Ranks and inner dimensions are the dialect's to check (bp.matmul's
    # inference and verifier), at this line.
    (result_type,) = cx.infer("bp.matmul", [a, b], call.node, attrs)
    acc_dtype = result_type.dtype
    if out_dtype is not None and acc_dtype is None:
        cx.typed_tile(a if a.type.unknown else b, out_dtype, f"{what}'s out_dtype")
    results = None
    if out_dtype is not None:
        out = cx.dtype_arg(out_dtype, f"{what}'s out_dtype")
        if out != acc_dtype:
            if not (acc_dtype.is_float and out in (FP16, BF16)):
                raise cx.error(
                    out_dtype,
                    f"{what} accumulates {a.type.dtype.name} in {acc_dtype.name}; "
                    f"its result is {acc_dtype.name}, or FP16/BF16 for float operands, "
                    f"not {out.name}",
                )
            result_type = TileType(result_type.shape, out, MemorySpace.Acc)
            results = [result_type]
    operands = [a, b]
    if c is not None:
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
                f"{what}'s acc must be {result_type}, got {c.type}; a chain "
                "starts from a pl.matmul result or from pl.full",
            )
        c = cx.demand(c, MemorySpace.Acc, acc, f"{what}'s acc")
        operands.append(valid_shapes.pad_for(cx, c, 0, call.node))
    if c is not None and results is None:
        results = [result_type]
    (result,) = cx.create("bp.matmul", operands, results, attrs, call.node, call.name)
    if (rows is not None or cols is not None) and not result.type.unknown:
        m, n = result.type.shape
        result = valid_shapes.with_valid(
            result, (m if rows is None else rows, n if cols is None else cols)
        )
    return result


def _transposed(cx, flag, viewed: bool, what: str, keyword: str = "b_trans") -> bool:
    """Whether an operand is read transposed: its flag (a_trans or
    b_trans) True, or a pl.tile.transpose_view (its tile read transposed);
    both: not."""
    transposed = flag is not False and cx.static(flag)
    if not isinstance(transposed, bool):
        raise cx.error(flag, f"{what}'s {keyword} must be True or False, got {transposed!r}")
    return transposed != viewed


def _orientation(cx, lhs_transposed: bool, rhs_transposed: bool) -> dict:
    """bp.matmul's attributes for operands read transposed."""
    attrs = {}
    if lhs_transposed:
        attrs["transpose_lhs"] = cx.builder.unit()
    if rhs_transposed:
        attrs["transpose_rhs"] = cx.builder.unit()
    return attrs


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
    a, lhs_viewed = cx.tile_or_view(lhs, "pl.batch_matmul's first operand")
    b, viewed = cx.tile_or_view(rhs, "pl.batch_matmul's second operand")
    return _batch(
        cx,
        call,
        (a, lhs_viewed, lhs),
        (b, viewed, rhs),
        a_trans,
        b_trans,
        "pl.batch_matmul",
        out_dtype,
    )


def _batch(cx, call, left, right, a_trans, b_trans, what: str, out_dtype=None):
    """The batched product of the operands `left` and `right` (each:
    tile, whether a transposed view, node)."""
    (a, lhs_viewed, lhs), (b, viewed, rhs) = left, right
    cx.check_dtype(a.type.dtype, b.type.dtype, call.node, f"{what}'s operands")
    lhs_transposed = _transposed(cx, a_trans, lhs_viewed, what, "a_trans")
    transposed = _transposed(cx, b_trans, viewed, what)
    for value, node in ((a, lhs), (b, rhs)):
        if value.valid is not None:
            raise cx.error(node, f"{what}'s operands take no valid shape")
    a = cx.demand(a, MemorySpace.Left, lhs, f"{what}'s first operand")
    b = cx.demand(b, MemorySpace.Right, rhs, f"{what}'s second operand")
    attrs = _orientation(cx, lhs_transposed, transposed)
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
    (b_trans as there). Valid in InCore and AIC functions.

    init_cond: a condition (`k0 == 0`) under which the product starts the
    accumulation afresh, `lhs @ rhs`, acc's content unread: the split-K
    loop's first step without peeling it or zeroing acc. Known at compile
    time it picks one form; else an if chooses between the two.
    """
    if init_cond is None:
        return _accumulate(cx, call, acc, lhs, rhs, a_trans, b_trans, True)
    try:
        fresh = cx.condition(init_cond)
    except LoweringError as err:
        raise cx.error(
            init_cond,
            f"pl.matmul_acc's init_cond is a condition, as an if's: {err.message}",
        ) from None
    if isinstance(fresh, bool):
        return _accumulate(cx, call, acc, lhs, rhs, a_trans, b_trans, not fresh)
    cx.builder.begin_if(fresh.handle, cx.loc(call.node))
    cx.region_depth += 1  # constants made in a branch stay there
    try:
        started = _accumulate(cx, call, acc, lhs, rhs, a_trans, b_trans, False)
        cx.builder.enter_branch(True)
        added = _accumulate(cx, call, acc, lhs, rhs, a_trans, b_trans, True)
    finally:
        cx.region_depth -= 1
    if started.type != added.type:
        raise cx.error(
            acc,
            f"pl.matmul_acc's acc must be {started.type}, the product's type, which init_cond "
            f"starts it from; got {added.type}",
        )
    loc = cx.loc(call.node, call.name or "")
    (handle,) = cx.builder.end_if([started.handle], [added.handle], loc)
    return Value(handle, added.type)


def _accumulate(cx, call, acc, lhs, rhs, a_trans, b_trans, onto_acc: bool):
    """lhs @ rhs, added to acc when `onto_acc`."""
    start = acc if onto_acc else None
    return matmul.__bp_op__.impl(cx, call, lhs, rhs, a_trans=a_trans, b_trans=b_trans, acc=start)


# ------------------------------------------- pypto's biased and GEMV forms
#
# Compositions of bp.matmul: a bias [1, N] is broadcast over the rows by a
# product of a column of ones [M, 1] and the bias (exact: 1 * b + 0), which
# starts the accumulator the operands' product is added to, as the cube's
# bias table does, all on the cube unit.

CUBE_KINDS = (FunctionType.InCore, FunctionType.AIC)
GEMV_DTYPES = (INT8, FP16, BF16, FP32)
ACC_PHASES = ("unspecified", "partial", "final")


def _operands(cx, call, lhs, rhs, what: str):
    """The 2-D operands of `what`, typed while the function is built."""
    a, lhs_viewed = cx.tile_or_view(lhs, f"{what}'s lhs")
    a = cx.typed_tile(a, lhs, what)
    b, viewed = cx.tile_or_view(rhs, f"{what}'s rhs")
    b = cx.typed_tile(b, rhs, what)
    for value, node in ((a, lhs), (b, rhs)):
        if len(value.type.shape) != 2:
            raise cx.error(node, f"{what} takes 2-D tiles, got {list(value.type.shape)}")
    return (a, lhs_viewed, lhs), (b, viewed, rhs)


def _accumulator(dtype):
    return FP32 if dtype.is_float else INT32


def _gemv_checks(cx, call, left, right, acc_phase, what: str):
    """pypto's GEMV rules: the lhs is one row, both operands INT8, FP16,
    BF16 or FP32 of one dtype; acc_phase one of its three names."""
    (a, lhs_viewed, lhs), (b, _, _) = left, right
    rows = a.valid[0] if a.valid else a.type.shape[0]
    if lhs_viewed or a.type.shape[0] != 1 or (isinstance(rows, int) and rows != 1):
        raise cx.error(lhs, f"{what}'s lhs must be one row, [1, K], got {list(a.type.shape)}")
    if a.type.dtype not in GEMV_DTYPES or b.type.dtype != a.type.dtype:
        raise cx.error(
            call.node,
            f"{what} multiplies INT8, FP16, BF16 or FP32 operands of one dtype, got "
            f"{a.type.dtype.name} and {b.type.dtype.name}",
        )
    if acc_phase is not None:
        phase = acc_phase if isinstance(acc_phase, str) else cx.static(acc_phase)
        if phase not in ACC_PHASES:
            raise cx.error(
                acc_phase,
                f"{what}'s acc_phase must be 'unspecified', 'partial' or 'final', got {phase!r}",
            )


def _bias_rows(cx, call, left, right, bias, what: str):
    """The Acc tile [M, N] whose every row is the bias [1, N]."""
    (a, lhs_viewed, _), (b, viewed, _) = left, right
    m, n = a.type.shape[1 if lhs_viewed else 0], b.type.shape[0 if viewed else 1]
    dtype = _accumulator(a.type.dtype)
    v = cx.typed_tile(cx.tile_arg(bias, f"{what}'s bias"), bias, what)
    if (tuple(v.type.shape), v.type.dtype) != ((1, n), dtype):
        raise cx.error(
            bias,
            f"{what}'s bias must be a [1, {n}] tile of {dtype.name} (the accumulator's "
            f"dtype for {a.type.dtype.name} operands), got {v.type}",
        )
    node = call.node
    one = cx.float_attr(1.0, dtype, node) if dtype.is_float else cx.int_attr(1, dtype, node)
    (ones,) = cx.create(
        "bp.full", [], [TileType((m, 1), dtype, MemorySpace.Acc)], {"value": one}, node
    )
    ones = cx.demand(ones, MemorySpace.Left, node, f"{what}'s column of ones")
    v = cx.demand(v, MemorySpace.Right, bias, f"{what}'s bias")
    v = valid_shapes.pad_for(cx, v, 0, node)
    (rows,) = cx.create("bp.matmul", [ones, v], None, {}, node)
    return rows


def _biased(cx, call, lhs, rhs, bias, what: str, acc_phase=None):
    left, right = _operands(cx, call, lhs, rhs, what)
    if acc_phase is not None:
        _gemv_checks(cx, call, left, right, acc_phase, what)
    else:
        cx.check_dtype(left[0].type.dtype, right[0].type.dtype, call.node, f"{what}'s operands")
    start = _bias_rows(cx, call, left, right, bias, what)
    return product(cx, call, left, right, None, False, False, False, (start, call.node), what)


def _matmul_bias(cx, call, lhs, rhs, bias, what=""):
    """lhs @ rhs + bias: `pl.tile.matmul_bias(a, b, bias)` (pypto's), the
    [1, N] bias added to every row of the product.

    lhs: an [M, K] tile; rhs: a [K, N] tile of the same dtype (a
    pl.tile.transpose_view is read transposed, as in pl.matmul). bias: a
    [1, N] tile of the accumulator's dtype (FP32 for float operands, INT32
    for integer ones). Returns an [M, N] Acc tile; operands with a valid
    shape multiply as in pl.matmul. A composition: the bias starts the
    accumulator the product is added to. Valid in InCore and AIC functions.
    """
    return _biased(cx, call, lhs, rhs, bias, what)


def _gemv(cx, call, lhs, rhs, acc_phase="unspecified", what=""):
    """The row vector lhs [1, K] times rhs [K, N]: `pl.tile.gemv(a, b)`
    (pypto's), a [1, N] Acc tile of INT32 (INT8 operands) or FP32 (FP16,
    BF16, FP32 ones).

    lhs has exactly one row; both operands have one dtype of INT8, FP16,
    BF16 and FP32. acc_phase ("unspecified", "partial" or "final") is
    pypto's hint to its hardware and changes nothing here. pl.matmul of
    such operands. Valid in InCore and AIC functions.
    """
    left, right = _operands(cx, call, lhs, rhs, what)
    _gemv_checks(cx, call, left, right, acc_phase, what)
    return product(cx, call, left, right, None, False, False, False, (None, None), what)


def _gemv_acc(cx, call, acc, lhs, rhs, acc_phase="unspecified", what=""):
    """acc + lhs @ rhs for a row vector lhs: `pl.tile.gemv_acc(c, a, b)`
    (pypto's): pl.tile.gemv's product added to `acc`, a [1, N] Acc tile of
    its dtype (a pl.tile.gemv result, or pl.full(..., target_memory=Acc)).
    Valid in InCore and AIC functions.
    """
    left, right = _operands(cx, call, lhs, rhs, what)
    _gemv_checks(cx, call, left, right, acc_phase, what)
    c = cx.tile_arg(acc, f"{what}'s acc")
    return product(cx, call, left, right, None, False, False, False, (c, acc), what)


def _gemv_bias(cx, call, lhs, rhs, bias, acc_phase="unspecified", what=""):
    """lhs @ rhs + bias for a row vector lhs: `pl.tile.gemv_bias(a, b,
    bias)` (pypto's): pl.tile.gemv's product plus the [1, N] bias of its
    dtype (INT32 for INT8 operands, else FP32). A composition, as
    pl.tile.matmul_bias. Valid in InCore and AIC functions.
    """
    return _biased(cx, call, lhs, rhs, bias, what, acc_phase)


def _declare(name: str, impl) -> None:
    """`pl.X` and `pl.tile.X` for `impl(cx, call, ..., what=)`, `what`
    naming the spelling in errors."""
    params = list(inspect.signature(impl).parameters.values())[2:-1]
    for qualname in (name, f"tile.{name}"):

        def lower(cx, call, _what=f"pl.{qualname}", **arguments):
            return impl(cx, call, what=_what, **arguments)

        lower.__name__, lower.__doc__ = name, impl.__doc__
        public = operation(name=qualname, kinds=CUBE_KINDS, signature=inspect.Signature(params))
        globals()[qualname.replace(".", "_")] = public(lower)


for _name, _impl in (
    ("matmul_bias", _matmul_bias),
    ("gemv", _gemv),
    ("gemv_acc", _gemv_acc),
    ("gemv_bias", _gemv_bias),
):
    _declare(_name, _impl)


@operation(name="tile.transpose_view", kinds=(FunctionType.InCore, FunctionType.AIC))
def transpose_view(cx, call, tile):
    """The Mat tile `tile` ([N, K]) read as its transpose ([K, N]), without
    moving data: `kt = pl.tile.transpose_view(pl.load(k, [0, 0], [N, K],
    target_memory=pl.MemorySpace.Mat))`.

    The view may be moved to Right memory (`pl.move(kt,
    target_memory=pl.MemorySpace.Right)`, still a view) and be pl.matmul's
    right operand: `pl.matmul(q, kt)` is q @ k^T, as `b_trans=True` on the
    tile itself; likewise to Left memory as the left operand (`a_trans=True`).
    pl.batch_matmul reads views the same way. Nothing else reads a view
    (pl.transpose transposes a Vec tile's data); a view of a view is the tile
    again. pypto's NZ/ZN layout
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
    if value.type.space not in (None, MemorySpace.Mat, MemorySpace.Left, MemorySpace.Right):
        raise cx.error(
            tile,
            "pl.tile.transpose_view takes a Mat tile (a matmul operand on its way to Left "
            f"or Right memory), got a {value.type.space.name} tile",
        )
    return TransposedView(value)
