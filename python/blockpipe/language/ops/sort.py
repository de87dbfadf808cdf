"""pypto's sorts: pl.tile.sort32 makes (value, index) pairs sorted in runs
of 32 (bp.sort32), pl.tile.mrgsort merges sorted runs of them (bp.mrgsort),
and pl.tile.gather_mask reads the values or the indices back out. A row of
2N floats holds N pairs, the index's 32 bits in the odd float; a run is
sorted by value, larger first, NaN before every number, equal values in
their order. The tensor spellings (pl.tensor.X, pl.X) take tensors or
tiles. Valid in InCore and AIV functions.
"""

from __future__ import annotations

from blockpipe.language.ops import operation
from blockpipe.language.ops.gather import _mask_gather, _source_tile
from blockpipe.language.ops.memory import load_whole
from blockpipe.language.ops.vector import VECTOR_KINDS
from blockpipe.language.types import FP32, INT32, UINT32, MemorySpace, TensorType, TileType
from blockpipe.language.values import Value


def _tile(cx, node, what) -> Value:
    """A vec tile operand: a tile, or a tensor loaded whole."""
    value = _source_tile(cx, node, what)
    if isinstance(value.type, TensorType):
        value = load_whole(cx, value, node)
    return value


def _sort32(cx, call, src, idx):
    """Each row of `src` ([R, C] FP32) cut into runs of 32 values, each run
    sorted by value, larger first, into (value, index) pairs: the result
    is [R, 2C] FP32, pair j of a row in columns 2j (the value) and 2j + 1
    (the 32 bits of its index from `idx`, [R, C] UINT32 or INT32, as the
    float's bits). NaN sorts before every number; equal values keep their
    order. `pl.tile.gather_mask(t, mask_pattern=pl.tile.MaskPattern.P0101)`
    reads the values back, P1010 with `output_dtype=pl.UINT32` the indices.
    """
    values = _tile(cx, src, "pl.tile.sort32's src")
    index = _tile(cx, idx, "pl.tile.sort32's idx")
    if values.type.dtype is not FP32 or len(values.type.shape) != 2:
        raise cx.error(
            src, f"pl.tile.sort32 sorts a 2-D FP32 tile, got {values.type} (blockpipe sorts FP32)"
        )
    if index.type.dtype not in (UINT32, INT32) or index.type.shape != values.type.shape:
        raise cx.error(
            idx,
            f"pl.tile.sort32's idx must be a UINT32 or INT32 tile shaped as src "
            f"{list(values.type.shape)}, got {index.type}",
        )
    rows, cols = values.type.shape
    result = TileType((rows, 2 * cols), FP32, MemorySpace.Vec)
    (sorted_,) = cx.create("bp.sort32", [values, index], [result], {}, call.node, call.name)
    return sorted_


def _pairs(cx, node, what) -> Value:
    value = _tile(cx, node, what)
    shape = value.type.shape
    if value.type.dtype is not FP32 or len(shape) != 2 or shape[1] % 2:
        raise cx.error(
            node,
            f"{what} must hold (value, index) pairs, as pl.tile.sort32 makes them: a 2-D FP32 "
            f"tile of an even number of columns, got {value.type}",
        )
    return value


def _merge(cx, call, src: Value, block_len, node) -> Value:
    (merged,) = cx.create(
        "bp.mrgsort", [src, cx.index_value(block_len, node)], [src.type], {}, call.node, call.name
    )
    return merged


def _mrgsort(
    cx, call, src0, src1=None, src2=None, src3=None, tmp=None, exhausted=False, block_len=None
):
    """Merges sorted runs of (value, index) pairs (pl.tile.sort32's).

    `pl.tile.mrgsort(t, block_len=L)`: each row of `t` is lists of `L`
    floats (L / 2 pairs), each sorted; every four consecutive lists are
    merged into one (the last group may have fewer), so sort32's runs of
    64 floats become runs of 256 with L = 64, then 1024 with L = 256.
    `L` may be a value known at run time; it must be positive (a launch
    with another fails at this line).

    `pl.tile.mrgsort(a, b[, c[, d]], tmp=t)`: the sorted tiles (one row
    each, or as many rows as each other) merged into one whose columns are
    theirs together. tmp and exhausted, pypto's hardware workspace and
    status, are accepted and not needed.
    """
    first = _pairs(cx, src0, "pl.tile.mrgsort's src0")
    others = [n for n in (src1, src2, src3) if n is not None]
    if block_len is not None:
        if others or tmp is not None:
            raise cx.error(
                call.node,
                "pl.tile.mrgsort takes block_len= (one tile of sorted lists) or 2 to 4 sorted "
                "tiles and tmp=, not both",
            )
        length = cx.expr(block_len)
        if isinstance(length, int) and length <= 0:
            raise cx.error(block_len, f"pl.tile.mrgsort's block_len must be positive, got {length}")
        return _merge(cx, call, first, length, block_len)
    if not others:
        raise cx.error(
            call.node,
            "pl.tile.mrgsort needs block_len= (one tile of sorted lists) or 2 to 4 sorted tiles",
        )
    if src3 is not None and src2 is None:
        raise cx.error(src3, "pl.tile.mrgsort's src3 goes with src2")
    tiles = [first] + [_pairs(cx, n, f"pl.tile.mrgsort's src{k}") for k, n in enumerate(others, 1)]
    rows = first.type.shape[0]
    for k, t in enumerate(tiles[1:], 1):
        if t.type.shape[0] != rows:
            raise cx.error(
                others[k - 1],
                f"pl.tile.mrgsort merges tiles of the same rows: src0 has {rows}, "
                f"src{k} {t.type.shape[0]}",
            )
    # The lists side by side, then one merge of the whole row: sorted
    # lists merged are the row sorted.
    cols = sum(t.type.shape[1] for t in tiles)
    node = call.node
    (whole,) = cx.create(
        "bp.full",
        [],
        [TileType((rows, cols), FP32, MemorySpace.Vec)],
        {"value": cx.float_attr(0.0, FP32, node)},
        node,
    )
    at = 0
    for t in tiles:
        offsets = [cx.index_value(0, node), cx.index_value(at, node)]
        (whole,) = cx.create("bp.insert", [t, whole] + offsets, [whole.type], {}, node)
        at += t.type.shape[1]
    return _merge(cx, call, whole, (cols + 3) // 4, node)


def _gather_mask(cx, call, src, mask_pattern, output_dtype=None):
    """The columns of every row of `src` that pypto's mask pattern selects
    (pl.tile.MaskPattern: P0101 the even ones, P1010 the odd ones, ...),
    their bits read as `output_dtype` (of the same size) when given: the
    values (P0101) and the indices (P1010, output_dtype=pl.UINT32) of
    pl.tile.sort32's pairs. pl.tensor.gather(src, mask_pattern=) is the
    same."""
    source = _tile(cx, src, "pl.tile.gather_mask's src")
    return _mask_gather(cx, call, source, mask_pattern, output_dtype)


for _prefix in ("", "tile.", "tensor."):
    operation(name=f"{_prefix}sort32", kinds=VECTOR_KINDS)(_sort32)
    operation(name=f"{_prefix}mrgsort", kinds=VECTOR_KINDS)(_mrgsort)
operation(name="tile.gather_mask", kinds=VECTOR_KINDS)(_gather_mask)
