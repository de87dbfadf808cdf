"""pypto's `pl.expand_clone(x, target)`: a 3-D tensor copied into a
target whose shape it matches but for at most one dimension of 1, which
is repeated. Composed from a loop over the target's batches (dimension 0)
of pl.load, a broadcast (pl.row_expand / pl.col_expand's) and pl.store."""

from __future__ import annotations

from blockpipe.language.ops import Call, operation
from blockpipe.language.ops.memory import store_tile, window_load
from blockpipe.language.ops.vector import VECTOR_KINDS, spread_to
from blockpipe.language.types import INDEX, ScalarType
from blockpipe.language.values import Value


def _expand_clone(cx, call, input, target):  # noqa: A002 - pypto's name
    """The target tensor with the 3-D tensor `input` copied into it,
    `out = pl.expand_clone(x, y)` (pypto's `tensor.expand_clone`): each
    dimension of `input` is the target's or 1, and at most one is 1 where
    the target's is not; along that one the input is repeated (cloned,
    as `x.repeat` would). Dims and dtypes are the target's, known at
    compile time. Returns the written target. Valid in InCore and AIV
    functions; a composition of pl.load, a broadcast and pl.store in a
    loop over the target's dimension 0.

    Example::

        out = pl.expand_clone(x, y)  # x: [B, 1, K], y: [B, N, K]
    """
    node = call.node
    x = cx.tensor_arg(input, "pl.expand_clone's input")
    out = cx.tensor_arg(target, "pl.expand_clone's target")
    have, want = tuple(x.type.shape), tuple(out.type.shape)
    _check_shapes(cx, node, have, want)
    batches = cx.index_value(want[0], node)
    zero, one = cx.index_value(0, node), cx.index_value(1, node)
    handles = cx.builder.begin_for(
        zero.handle, batches.handle, one.handle, [out.handle], cx.loc(node), "batch"
    )
    batch = Value(handles[0], ScalarType(INDEX))
    written = Value(handles[1], out.type)
    cx.tensor_roots[handles[1]] = cx.root_of(out)
    cx.region_depth += 1
    try:
        # Batch b of the input, or its only one when dimension 0 repeats.
        first = [batch if have[0] == want[0] else zero, zero, zero]
        tile = window_load(cx, x, first, (1,) + have[1:], node, None)
        if have[1:] != want[1:]:
            tile = spread_to(cx, tile, want[1:], x.type.dtype, node, None)
        written = store_tile(
            cx,
            Call(node, None, None),
            tile,
            written,
            [batch, zero, zero],
            input,
            target,
            "pl.expand_clone",
            ("input", "target"),
        )
    finally:
        cx.region_depth -= 1
    (result,) = cx.builder.end_for([written.handle], cx.loc(node))
    cx.tensor_roots[result] = cx.root_of(out)
    return Value(result, out.type)


def _check_shapes(cx, node, have: tuple, want: tuple) -> None:
    """pypto's rule: two 3-D shapes, equal but for at most one dimension
    where the input's is 1 (all known at compile time here)."""
    if len(have) != 3 or len(want) != 3:
        raise cx.error(
            node,
            f"pl.expand_clone copies a 3-D tensor into a 3-D target, got {list(have)} "
            f"and {list(want)}",
        )
    if not all(isinstance(d, int) for d in have + want):
        raise cx.error(
            node,
            f"pl.expand_clone needs dims known at compile time, got {list(have)} and {list(want)}",
        )
    repeated = [i for i, (h, w) in enumerate(zip(have, want)) if h != w]
    if any(have[i] != 1 for i in repeated) or len(repeated) > 1:
        raise cx.error(
            node,
            f"pl.expand_clone repeats at most one dimension of size 1 of its input, and "
            f"{list(have)} cannot become {list(want)} so",
        )


expand_clone = operation(name="expand_clone", kinds=VECTOR_KINDS)(_expand_clone)
tensor_expand_clone = operation(name="tensor.expand_clone", kinds=VECTOR_KINDS)(_expand_clone)
