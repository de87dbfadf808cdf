"""Pipes: tiles between the AIC (cube) and AIV (vector) halves of a group,
through the group's slice of the GM pipe buffer.

Each side initializes the pipe (same id, direction and slot size on both),
the producer pushes tiles, the consumer pops them in order and frees each
slot when done with it. `pipe_id` tells apart the pipes of one group."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any, Optional

from blockpipe.language.ops import operation
from blockpipe.language.ops.vector import vector_operand
from blockpipe.language.types import FunctionType, MemorySpace, ScalarType, SplitMode, TileType
from blockpipe.language.values import Value


@dataclass(frozen=True)
class PipeBuffer:
    """pypto's consumer buffer of a pipe: `pl.reserve_buffer` in the
    consuming function, `pl.import_peer_buffer` of it in the producing one.
    blockpipe's pipes live in the GM pipe buffer it sizes itself, so these
    only name and check the pairing."""

    name: str
    owner: str  # the function that reserves it
    size: Optional[int] = None  # None where imported
    node: Any = None


@operation(kinds=(FunctionType.AIC, FunctionType.AIV))
def reserve_buffer(cx, call, name, size, base=None):
    """pypto's consumer buffer of a pipe:
    `buf = pl.reserve_buffer(name="c2v", size=4 * 4096, base=pl.AUTO)` in the
    function that pops, passed to its `pl.a*_initialize_pipe`.

    size: bytes, at least slot_size times the slots the consumer holds
        (local_slot_num, else slot_num). base: pl.AUTO or an address; the
        placement is the compiler's (the pipe's slots are in GM).
    """
    label = cx.static(name)
    if not isinstance(label, str) or not label:
        raise cx.error(name, "pl.reserve_buffer's name must be a string")
    if label in cx.reserved:
        raise cx.error(name, f"'{cx.spec.name}' reserves '{label}' twice")
    bytes_ = cx.static_int(size, "size")
    if bytes_ <= 0:
        raise cx.error(size, f"pl.reserve_buffer's size must be positive, got {bytes_}")
    cx.reserved[label] = PipeBuffer(label, cx.spec.name, bytes_, name)
    return cx.reserved[label]


@operation(kinds=(FunctionType.AIC, FunctionType.AIV))
def import_peer_buffer(cx, call, name, peer_func):
    """pypto's handle on the buffer a peer function of the group reserves:
    `peer = pl.import_peer_buffer(name="c2v", peer_func="vector")`, passed
    to the producing side's `pl.a*_initialize_pipe`."""
    label, peer = cx.static(name), cx.static(peer_func)
    if not isinstance(label, str) or not isinstance(peer, str):
        raise cx.error(call.node, "pl.import_peer_buffer takes name= and peer_func= strings")
    if peer not in cx.program.functions or peer == cx.spec.name:
        raise cx.error(peer_func, f"peer_func '{peer}' is not another function of the program")
    return PipeBuffer(label, peer)


def _consumer_buffer(cx, node, side: FunctionType, direction: int, dir_mask: int, what: str):
    """Checks one of pypto's consumer-buffer arguments: the direction's
    consumer reserves it, the producer imports it from the consumer; a
    direction the pipe does not carry passes 0."""
    value = None if node is None else cx.expr(node)
    if not isinstance(value, PipeBuffer):
        # 0, pl.const(0, ...) or a scalar address: no buffer to check.
        if (
            value is None
            or isinstance(value, (int, Value))
            and not (isinstance(value, Value) and not isinstance(value.type, ScalarType))
        ):
            return None
        raise cx.error(node, f"{what} must be a pl.reserve_buffer, a pl.import_peer_buffer or 0")
    if not dir_mask & direction:
        raise cx.error(
            node,
            f"{what} is given but the pipe's dir_mask {dir_mask} does not carry that direction",
        )
    consumer = FunctionType.AIV if direction == 1 else FunctionType.AIC
    if side is consumer and value.owner != cx.spec.name:
        raise cx.error(
            node,
            f"{what}: the {side.name} consumes this direction and reserves its buffer "
            f"with pl.reserve_buffer, not pl.import_peer_buffer",
        )
    if side is not consumer and value.owner == cx.spec.name:
        raise cx.error(
            node,
            f"{what}: the {consumer.name} consumes this direction; import its buffer "
            "with pl.import_peer_buffer",
        )
    return value


def _initialize(side: FunctionType):
    what = "aic_initialize_pipe" if side is FunctionType.AIC else "aiv_initialize_pipe"

    def lower(
        cx,
        call,
        c2v_consumer_buf=None,
        v2c_consumer_buf=None,
        dir_mask=None,
        slot_size=None,
        slot_num=None,
        pipe_id=0,
        id=None,  # noqa: A002 - pypto's keyword
        local_slot_num=None,
    ):
        for node, keyword in ((dir_mask, "dir_mask"), (slot_size, "slot_size")):
            if node is None:
                raise cx.error(call.node, f"pl.{what} is missing argument '{keyword}'")
        mask_bits = cx.static_int(dir_mask, "dir_mask")
        try:
            mask = cx.builder.pipe_dirs(mask_bits)
        except ValueError as e:
            raise cx.error(dir_mask, str(e)) from None
        # The verifier checks the sizes (positive) at this line.
        size = cx.static_int(slot_size, "slot_size")
        b = cx.builder
        pipe = _pipe_id(cx, call, pipe_id, 0, None, id)
        attrs = {"id": b.i64(pipe), "dir_mask": mask, "slot_size": b.i64(size)}
        if isinstance(slot_num, ast.AST) and cx.static(slot_num) is None:
            slot_num = None
        slots = None
        if slot_num is not None:
            slots = cx.static_int(slot_num, "slot_num")
            attrs["slot_num"] = b.i64(slots)
        local = None
        if local_slot_num is not None:
            local = cx.static_int(local_slot_num, "local_slot_num")
            if local <= 0 or (slots is not None and local > slots):
                raise cx.error(
                    local_slot_num, f"local_slot_num must be in [1, slot_num], got {local}"
                )
        for node, direction, keyword in (
            (c2v_consumer_buf, 1, "c2v_consumer_buf"),
            (v2c_consumer_buf, 2, "v2c_consumer_buf"),
        ):
            buffer = _consumer_buffer(cx, node, side, direction, mask_bits, keyword)
            held = local or slots
            if buffer is not None and buffer.size is not None and buffer.size < size * (held or 1):
                raise cx.error(
                    node,
                    f"'{buffer.name}' holds {buffer.size} bytes, less than "
                    f"{held or 1} slot(s) of {size} bytes",
                )
        cx.create("bp.initialize_pipe", [], [], attrs, call.node)
        return None

    lower.__name__ = what
    lower.__doc__ = f"""Sets up pipe `pipe_id` on the {side.name} side:
    `pl.{what}(dir_mask=1, slot_size=4096)`, or pypto's
    `pl.{what}(c2v_buf, v2c_buf, dir_mask=2, slot_size=4096, id=1)`.

    dir_mask: 1 (C2V: AIC pushes, AIV pops), 2 (V2C) or 3 (both).
    slot_size: the bytes of one slot, at least the largest tile pushed.
    slot_num: the slots per direction (default: the target's; more slots let
        the producer run further ahead).
    c2v_consumer_buf, v2c_consumer_buf: pypto's consumer buffers (the
        consumer's pl.reserve_buffer, the producer's pl.import_peer_buffer;
        0 or pl.const(0, ...) for a direction the pipe does not carry),
        checked for their pairing and size; the slots themselves are in GM.
    id: pypto's name for pipe_id. local_slot_num: checked (at most slot_num).

    Valid in {side.name} functions, before the pipe's first push or pop; the
    other half initializes the same pipe alike.
    """
    return operation(kinds=(side,))(lower)


aic_initialize_pipe = _initialize(FunctionType.AIC)
aiv_initialize_pipe = _initialize(FunctionType.AIV)


def _ring(cx, direction: str, pipe: int) -> dict:
    """The attributes naming one ring of a pipe: its direction and id."""
    return {"dir": cx.builder.pipe_dir(direction), "pipe": cx.builder.i64(pipe)}


def _pipe_id(cx, call, pipe_id, aiv_idx, split=None, pipe_id_alias=None) -> int:
    """The pipe a push/pop/free names (`pipe_id=`, or pypto's `id=`),
    after checking `split=` against the function's split mode."""
    index = cx.static_int(aiv_idx, "aiv_idx")
    if index != 0:
        raise cx.error(
            aiv_idx,
            "a pipe's AIV end is sub-block 0, or both sub-blocks when the function is "
            "split (attrs={'split': ...}); aiv_idx must be 0",
        )
    if split is not None:
        mode = cx.static_int(split, "split")
        if mode != cx.spec.split.value:
            names = {m.value: m.name for m in SplitMode}
            raise cx.error(
                split,
                f"split={mode} ({names.get(mode, 'not a pl.SplitMode')}) disagrees with the "
                f"function's split mode {cx.spec.split.name}; set "
                "@pl.function(attrs={'split': pl.SplitMode...}) on the function",
            )
    if pipe_id_alias is not None:
        if not (isinstance(pipe_id, int) and pipe_id == 0):
            raise cx.error(pipe_id_alias, "give the pipe as pipe_id= or id=, not both")
        pipe_id = pipe_id_alias
    return cx.static_int(pipe_id, "pipe_id")


def _push(side: FunctionType, direction: str):
    what = "tpush_to_aiv" if side is FunctionType.AIC else "tpush_to_aic"
    peer = "AIV" if side is FunctionType.AIC else "AIC"

    def lower(cx, call, tile, pipe_id=0, aiv_idx=0, split=None, id=None):  # noqa: A002 - pypto's keyword
        pipe = _pipe_id(cx, call, pipe_id, aiv_idx, split, id)
        value = cx.tile_arg(tile, f"pl.{what}'s tile")
        if side is FunctionType.AIV:
            value = vector_operand(cx, value, tile, f"pl.{what}'s tile")
        cx.create("bp.tpush", [value], [], _ring(cx, direction, pipe), call.node)
        return None

    lower.__name__ = what
    lower.__doc__ = f"""Pushes a tile to the {peer} half through pipe `pipe_id`:
    `pl.{what}(t)`. Waits while every slot is in use.

    tile: at most the pipe's slot_size bytes{"; a Vec tile" if side is FunctionType.AIV else ""}.
    aiv_idx: the AIV sub-block at the other end (0).
    split: the function's split mode as an int (0 NONE, 1 UP_DOWN, 2
        LEFT_RIGHT), pypto's spelling; checked against the function's.
    id: pypto's name for pipe_id.

    Valid in {side.name} functions of a group.
    """
    return operation(kinds=(side,))(lower)


tpush_to_aiv = _push(FunctionType.AIC, "c2v")
tpush_to_aic = _push(FunctionType.AIV, "v2c")


def _pop(side: FunctionType, direction: str):
    what = "tpop_from_aic" if side is FunctionType.AIV else "tpop_from_aiv"
    default_space = MemorySpace.Vec if side is FunctionType.AIV else MemorySpace.Mat
    free = "tfree_to_aic" if side is FunctionType.AIV else "tfree_to_aiv"

    def lower(cx, call, pipe_id=0, aiv_idx=0, split=None, id=None):  # noqa: A002 - pypto's keyword
        pipe = _pipe_id(cx, call, pipe_id, aiv_idx, split, id)
        expected = call.expected
        if isinstance(expected, TileType) and not expected.unknown:
            # bp-infer-pipe-types checks it against the pushes.
            tile = expected if expected.space else expected.with_space(default_space)
        else:
            # The type the peer pushes, once the peer is built (only this
            # function's peers in a group push into its pipes); else the
            # compiler's bp-infer-pipe-types infers it.
            popped = cx.builder.popped_type(cx.group_peers(), pipe, direction, default_space.value)
            tile = (
                cx.program.frontend_type(cx.builder.describe(popped))
                if popped is not None
                else TileType(None, None, default_space)
            )
        (result,) = cx.create(
            "bp.tpop", [], [tile], _ring(cx, direction, pipe), call.node, call.name
        )
        cx.popped.append((result, direction, pipe, call.node))
        return result

    lower.__name__ = what
    lower.__doc__ = f"""The next tile the other half pushed into pipe `pipe_id`, in
    {default_space.name} memory: `t = pl.{what}()`. Waits until one is there.

    Its type is what the peer pushes; annotate the assignment
    (`t: pl.Tile[[16, 16], pl.FP32] = pl.{what}()`) when the peer pushes
    several types, or when an operation needs the type while both halves
    pop (a scalar operand, pl.cast). The slot stays in use until pl.{free}().

    Valid in {side.name} functions of a group.
    """
    return operation(kinds=(side,))(lower)


tpop_from_aic = _pop(FunctionType.AIV, "c2v")
tpop_from_aiv = _pop(FunctionType.AIC, "v2c")


def _free(side: FunctionType, direction: str):
    what = "tfree_to_aic" if side is FunctionType.AIV else "tfree_to_aiv"
    pop = "tpop_from_aic" if side is FunctionType.AIV else "tpop_from_aiv"

    def lower(cx, call, tile=None, pipe_id=0, aiv_idx=0, split=None, id=None):  # noqa: A002 - pypto's keyword
        value = cx.expr(tile) if tile is not None else None
        if tile is not None and not isinstance(value, Value):
            tile, pipe_id = None, tile  # pl.{what}(pipe_id): the pipe given first
        pipe = _pipe_id(cx, call, pipe_id, aiv_idx, split, id)
        if tile is not None:
            popped = next((p for p in cx.popped if p[0].handle == value.handle), None)
            if popped is None:
                raise cx.error(
                    tile, f"pl.{what} frees a tile popped with pl.{pop}; this is not one"
                )
            if popped[1:3] != (direction, pipe):
                raise cx.error(tile, f"this tile was popped from pipe {popped[2]}, not pipe {pipe}")
        else:
            # The oldest slot of the ring still held.
            popped = next(
                (
                    p
                    for p in cx.popped
                    if p[1:3] == (direction, pipe) and p[0].handle not in cx.freed
                ),
                None,
            )
        if popped is not None:
            cx.freed[popped[0].handle] = cx.source.position(call.node)[0]
        cx.create("bp.tfree", [], [], _ring(cx, direction, pipe), call.node)
        return None

    lower.__name__ = what
    lower.__doc__ = f"""Frees the oldest slot popped from pipe `pipe_id` with pl.{pop}:
    `pl.{what}(t)`, with the popped tile (pypto's form), or
    `pl.{what}(pipe_id=...)`. The producer may push into the slot again;
    the tile must not be used after it.

    Valid in {side.name} functions of a group.
    """
    return operation(kinds=(side,))(lower)


tfree_to_aic = _free(FunctionType.AIV, "c2v")
tfree_to_aiv = _free(FunctionType.AIC, "v2c")
