"""What the frontend still infers by lowering a program more than once: the
tile type of each `tpop` (from its peer's pushes). The observing runs record
the pushes in an `Inference`; the run that builds reads them.

Memory spaces are not the frontend's: a `pl.load` or `pl.full` without
`target_memory=` gets the space `?`, and the compiler's
bp-infer-memory-spaces pass decides it from the tile's uses.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, Set, Tuple

from blockpipe.language.rules import LEGAL_MOVES
from blockpipe.language.types import DType, MemorySpace, TileType
from blockpipe.language.values import Value


@dataclass
class Inference:
    """What the observing run learned."""

    # (pushing function, pipe id, direction) -> the (shape, dtype) of each
    # tile it pushes there, as the last observing run saw them.
    pushes: Dict[Tuple[str, int, str], Set[Tuple[Tuple[int, ...], DType]]] = field(default_factory=dict)


class MemorySpaces:
    """The part of a function's lowering that places tiles in memory spaces."""

    def demand(self, value: Value, space: MemorySpace, node, what: str) -> Value:
        """Makes `value` available in `space`, inserting a legal move. A tile
        whose space is undecided is left to bp-infer-memory-spaces, which
        places it (or moves it) where this use needs it."""
        tile = value.type
        assert isinstance(tile, TileType)
        if tile.space is None or tile.space is space:
            return value
        if (tile.space, space) not in LEGAL_MOVES:
            raise self.error(
                node,
                f"{what} must be in {space.name} memory, but this tile is in {tile.space.name} memory",
            )
        (moved,) = self.create("bp.move", [value], [tile.with_space(space)], {}, node)
        return moved
