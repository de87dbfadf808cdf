"""Cube: matrix multiplication on the cube unit."""

from __future__ import annotations

from blockpipe.language.ops import operation
from blockpipe.language.types import FunctionType, MemorySpace


@operation(kinds=(FunctionType.InCore, FunctionType.AIC))
def matmul(cx, call, lhs, rhs, out_dtype=None, acc=None):
    """The matrix product lhs @ rhs, in Acc memory: `pl.matmul(a, b)`.

    lhs: an [M, K] tile, placed in Left memory (a loaded tile lands there; a
        Mat tile is moved).
    rhs: a [K, N] tile of the same dtype, placed in Right memory.
    out_dtype: the accumulator's dtype, FP32 for float operands and INT32
        for integer ones; other dtypes go through pl.cast.
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
    b = cx.tile_arg(rhs, "pl.matmul's second operand")
    cx.check_dtype(a.type.dtype, b.type.dtype, call.node, "pl.matmul's operands")
    a = cx.demand(a, MemorySpace.Left, lhs, "pl.matmul's first operand")
    b = cx.demand(b, MemorySpace.Right, rhs, "pl.matmul's second operand")
    # Ranks and inner dimensions are the dialect's to check (bp.matmul's
    # inference and verifier), at this line.
    (result_type,) = cx.infer("bp.matmul", [a, b], call.node)
    acc_dtype = result_type.dtype
    if out_dtype is not None and acc_dtype is None:
        cx.typed_tile(a if a.type.unknown else b, out_dtype, "pl.matmul's out_dtype")
    if out_dtype is not None:
        out = cx.dtype_arg(out_dtype, "pl.matmul's out_dtype")
        if out != acc_dtype:
            raise cx.error(out_dtype, f"pl.matmul accumulates {a.type.dtype.name} in {acc_dtype.name}; "
                                      f"use pl.cast for {out.name}")
    operands = [a, b]
    if acc is not None:
        c = cx.tile_arg(acc, "pl.matmul's acc")
        if not (c.type.unknown or result_type.unknown) and (c.type.shape, c.type.dtype) != (
                result_type.shape, result_type.dtype) or (
                c.type.space not in (None, MemorySpace.Acc)):
            raise cx.error(acc, f"pl.matmul's acc must be {result_type}, got {c.type}; a chain "
                                "starts from a pl.matmul result or from pl.full")
        c = cx.demand(c, MemorySpace.Acc, acc, "pl.matmul's acc")
        operands.append(c)
    (result,) = cx.create("bp.matmul", operands, None, {}, call.node, call.name)
    return result
