"""Memory spaces as the frontend sees them: an operation that needs its tile
in a given space gets a legal move there. A `pl.load` or `pl.full` without
`target_memory=` has the space `?`, which the compiler's
bp-infer-memory-spaces pass decides from the tile's uses; the tile type of a
`pl.tpop_from_*` whose peer is not built yet is the compiler's
bp-infer-pipe-types pass' to infer.
"""

from __future__ import annotations

from blockpipe.language.rules import LEGAL_MOVES
from blockpipe.language.types import MemorySpace, TileType
from blockpipe.language.values import Value


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
        if (
            (tile.space, space) not in LEGAL_MOVES
            and (tile.space, MemorySpace.Mat) in LEGAL_MOVES
            and (MemorySpace.Mat, space) in LEGAL_MOVES
        ):
            # Vec -> Mat -> Left/Right: a vector result as a matmul operand
            # (in a mixed kernel, the Vec -> Mat move is the pipe crossing).
            value = self.demand(value, MemorySpace.Mat, node, what)
            tile = value.type
        if (tile.space, space) not in LEGAL_MOVES:
            raise self.error(
                node,
                f"{what} must be in {space.name} memory, but this tile is in {tile.space.name} memory",
            )
        (moved,) = self.create("bp.move", [value], [tile.with_space(space)], {}, node)
        return moved
