"""pypto's packed predicate masks, as pl.sel and pl.sels read them.

On Ascend, TCMP writes one bit per element and TSEL reads them: element
(i, j) is selected by bit (j mod W) of word (j div W) of row i of the mask,
W the width in bits of the mask's integer dtype, its "carrier" (so, little
endian, bit j mod 8 of byte j div 8 of the row's bytes). A comparison in
blockpipe keeps its 1/0 tile, which an annotation may call packed (a
values.PackedMask, read as it is); any other integer mask, a carrier loaded
from GM, is unpacked here with the ops blockpipe has: the word of each
column gathered from its row, shifted right by the column's bit, and 1.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from blockpipe.language.ops.gather import _gather
from blockpipe.language.ops.vector import binary
from blockpipe.language.types import INT32, MemorySpace, TileType
from blockpipe.language.values import PackedMask, Value

# The widths of the integer dtypes a packed mask may be held in (pypto's
# 8, 16 and 32-bit carriers).
CARRIER_BITS = (8, 16, 32)


def carrier_bits(dtype) -> Optional[int]:
    """The bits of an element of `dtype`, when it can carry mask bits."""
    if dtype.is_float or dtype.name in ("BOOL", "INDEX"):
        return None
    bits = np.dtype(dtype.numpy).itemsize * 8
    return bits if bits in CARRIER_BITS else None


def annotated(cx, value: Value, ann: TileType, node) -> Optional[PackedMask]:
    """`value` seen as the packed mask `ann` names, or None when `ann` is
    not pypto's packed form of it: an integer tile of `value`'s rows whose
    rows hold a bit for each of `value`'s columns."""
    have = value.type
    if (
        not value.predicate
        or have.unknown
        or ann.unknown
        or len(ann.shape) != 2
        or len(have.shape) != 2
        or ann.shape[0] != have.shape[0]
        or ann.space not in (None, MemorySpace.Vec)
        or carrier_bits(ann.dtype) is None
    ):
        return None
    cols, bits = ann.shape[1], ann.shape[1] * carrier_bits(ann.dtype)
    if isinstance(have.shape[1], int) and isinstance(cols, int) and bits < have.shape[1]:
        raise cx.error(
            node,
            f"a packed mask of {have.shape[1]} columns needs {have.shape[1]} bits a row, "
            f"but {ann} holds {bits}",
        )
    return PackedMask(value, ann, cx.source.position(node)[0])


def unpack(cx, mask: Value, data: TileType, node) -> Value:
    """The [rows, cols] 1/0 tile (in the mask's dtype) that the integer mask
    `mask` packs for tiles of type `data`."""
    from blockpipe.language import valid_shapes

    bits = carrier_bits(mask.type.dtype)
    rows, cols = data.shape if len(data.shape) == 2 else (None, None)
    if bits is None or len(mask.type.shape) != 2 or not isinstance(cols, int):
        raise cx.error(
            node,
            f"a packed mask is a 2-D tile of 8, 16 or 32-bit integers over 2-D tiles, got "
            f"{mask.type} for {data}",
        )
    words = mask.type.shape[1]
    if mask.type.shape[0] != rows:
        raise cx.error(
            node,
            f"the mask has {mask.type.shape[0]} rows but the tiles have {rows}: a packed "
            "mask holds a row of bits for each row",
        )
    if words * bits < cols:
        raise cx.error(
            node,
            f"the mask's rows hold {words * bits} bits ({words} x {mask.type.dtype.name}) but "
            f"the tiles have {cols} columns, a bit each",
        )
    mask = valid_shapes.pad_for(cx, mask, 0, node)  # unset bits outside it select nothing
    (column,) = cx.create(
        "bp.ci", [cx.index_value(0, node)], [TileType((1, cols), INT32, MemorySpace.Vec)], {}, node
    )
    word = binary(cx, "shr", column, bits.bit_length() - 1, node, None)
    (spread,) = cx.create(
        "bp.full",
        [],
        [TileType((rows, cols), INT32, MemorySpace.Vec)],
        {"value": cx.int_attr(0, INT32, node)},
        node,
    )
    index = binary(cx, "add", spread, word, node, None)
    held = _gather(cx, node, None, mask, index, "in_row", "check", (rows, cols))
    bit = binary(cx, "and", column, bits - 1, node, None)
    (shift,) = cx.create(
        "bp.cast", [bit], [TileType((1, cols), mask.type.dtype, MemorySpace.Vec)], {}, node
    )
    return binary(cx, "and", binary(cx, "shr", held, shift, node, None), 1, node, None)
