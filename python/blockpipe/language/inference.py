"""What the frontend infers by lowering a program more than once: the memory
space of each `pl.load` and `pl.full` without `target_memory=` (from how the
tile is used) and the tile type of each `tpop` (from its peer's pushes).

The observing runs record uses and pushes in an `Inference`; the run that
builds reads them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, Optional, Set, Tuple

from blockpipe.language.rules import LEGAL_MOVES
from blockpipe.language.types import DType, MemorySpace, TileType
from blockpipe.language.values import Value

@dataclass
class Inference:
    """What the observing run learned."""

    load_uses: Dict[Tuple[int, int], Set[MemorySpace]] = field(default_factory=dict)
    # (pushing function, pipe id, direction) -> the (shape, dtype) of each
    # tile it pushes there, as the last observing run saw them.
    pushes: Dict[Tuple[str, int, str], Set[Tuple[Tuple[int, ...], DType]]] = field(default_factory=dict)


class MemorySpaces:
    """The part of a function's lowering that places tiles in memory spaces."""

    def demand(self, value: Value, space: MemorySpace, node, what: str) -> Value:
        """Makes `value` available in `space`, inserting a legal move."""
        tile = value.type
        assert isinstance(tile, TileType)
        if value.load_keys and self.program.observing:
            self.record_load_use(value, space)
            return value
        if tile.space is space:
            return value
        if (tile.space, space) not in LEGAL_MOVES:
            raise self.error(
                node,
                f"{what} must be in {space.name} memory, but this tile is in {tile.space.name} memory",
            )
        (moved,) = self.create("bp.move", [value], [tile.with_space(space)], {}, node)
        return moved

    def record_load_use(self, value: Value, space: MemorySpace) -> None:
        for key in value.load_keys:
            self.program.inference.load_uses.setdefault(key, set()).add(space)

    def resolve_load_space(self, key, explicit: Optional[MemorySpace]) -> Optional[MemorySpace]:
        if explicit is not None:
            return explicit
        if self.program.observing:
            return None
        uses = self.program.inference.load_uses.get(key, set())
        if not uses:
            return MemorySpace.Vec
        if uses == {MemorySpace.Vec}:
            return MemorySpace.Vec
        if MemorySpace.Vec in uses:
            return None  # reported by the caller
        if len(uses) == 1:
            return next(iter(uses))
        return MemorySpace.Mat  # several cube operands: load once, move to each
