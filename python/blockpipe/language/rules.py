"""The dialect's typing rules, as the compiler core states them (the
verifiers apply the same functions): the frontend asks rather than restates
them, so that each rule exists once, in C++."""

from __future__ import annotations

import functools
from typing import FrozenSet, List, Tuple

from blockpipe import _core
from blockpipe.language.types import MemorySpace

# The moves bp.move allows, (from, to).
LEGAL_MOVES: FrozenSet[Tuple[MemorySpace, MemorySpace]] = frozenset(
    (MemorySpace(src), MemorySpace(dst)) for src, dst in _core.legal_moves()
)
# "Mat->Left, Mat->Right, ..." in the DSL's names, in the dialect's order.
LEGAL_MOVES_TEXT = ", ".join(
    f"{MemorySpace(src).name}->{MemorySpace(dst).name}" for src, dst in _core.legal_moves()
)
# The most dimensions a tile has (bp-flatten-tiles makes 2-D tiles of more).
MAX_TILE_RANK: int = _core.MAX_TILE_RANK


@functools.cache
def broadcast_shapes(lhs: Tuple[int, ...]) -> List[Tuple[int, ...]]:
    """The shapes a binary op's rhs tile may have besides `lhs` itself."""
    return [tuple(shape) for shape in _core.binary_broadcast_shapes(list(lhs))]


def broadcasts(lhs: Tuple[int, ...], rhs: Tuple[int, ...]) -> bool:
    """Whether an rhs tile of shape `rhs` broadcasts over an `lhs` tile."""
    return tuple(rhs) in broadcast_shapes(tuple(lhs))


def broadcast_hint(lhs: Tuple[int, ...]) -> str:
    """The broadcast forms an rhs could take against `lhs`, for an error."""
    forms = [
        f"{list(shape)} (broadcast along {'rows' if shape == (*lhs[:-1], 1) else 'columns'})"
        for shape in broadcast_shapes(tuple(lhs))
    ]
    return f"; the second operand may also be {' or '.join(forms)}" if forms else ""
