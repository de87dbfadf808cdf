"""P2P: tensors between the devices of a mesh, in orchestration functions of a
program compiled with `blockpipe.compile(..., devices=N)`.

`source_target_pairs` are StableHLO's: a list of [source, target] device
pairs known at compile time; each device sends to at most one target and
receives from at most one source per op. `channel` tells apart transfers
between the same devices (StableHLO's channel handle)."""

from __future__ import annotations

import ast
from typing import Any, Dict, List, Tuple

from blockpipe.language.ops import operation
from blockpipe.language.types import FunctionType
from blockpipe.language.values import same_type

ORCHESTRATION = (FunctionType.Orchestration,)


@operation(kinds=ORCHESTRATION)
def device_id(cx, call):
    """The index of the device running this orchestration (0 .. N - 1), an
    index value.

    Example::

        if pl.device_id() == 0: ...
    """
    (result,) = cx.create("bp.device_id", [], None, {}, call.node, call.name)
    return result


@operation(kinds=ORCHESTRATION)
def send(cx, call, tensor, source_target_pairs, channel=0):
    """Sends `tensor` from each pair's source device to its target:
    `pl.send(x, [[0, 1]])`. The target receives it with pl.recv on the same
    pairs and channel.

    Example::

        pl.send(h, [[0, 1], [1, 2]], channel=1)
    """
    t = cx.tensor_arg(tensor, "pl.send's tensor")
    cx.create(
        "bp.send",
        [t],
        [],
        transfer_attrs(cx, "send", source_target_pairs, channel, call.node),
        call.node,
        call.name,
    )
    return None


@operation(kinds=ORCHESTRATION)
def recv(cx, call, tensor, source_target_pairs, channel=0):
    """Receives into `tensor` what each pair's source sent with pl.send, and
    returns it: `h = pl.recv(h, [[0, 1]])`. `tensor` must be writable (an
    Out/InOut parameter or a tensor made with pl.create_tensor) and shaped
    like what is sent.
    """
    dest = cx.tensor_arg(tensor, "pl.recv's tensor")
    cx.check_writable(dest, tensor, "pl.recv writes into")
    (result,) = cx.create(
        "bp.recv",
        [dest],
        None,
        transfer_attrs(cx, "recv", source_target_pairs, channel, call.node),
        call.node,
        call.name,
    )
    return result


@operation(kinds=ORCHESTRATION)
def collective_permute(cx, call, tensor, out, source_target_pairs, channel=0):
    """Every pair's source sends `tensor`, every target receives it into
    `out` (StableHLO's collective_permute); returns `out`. A device that is
    no pair's target gets zeros in `out`.

    Example::

        # a ring over 4 devices
        out = pl.collective_permute(x, out, [[0, 1], [1, 2], [2, 3], [3, 0]])
    """
    t = cx.tensor_arg(tensor, "pl.collective_permute's tensor")
    dest = cx.tensor_arg(out, "pl.collective_permute's out")
    if not same_type(t.type, dest.type):
        raise cx.error(
            out, f"pl.collective_permute's out must be {t.type} like its tensor, got {dest.type}"
        )
    cx.check_writable(dest, out, "pl.collective_permute writes into")
    (result,) = cx.create(
        "bp.collective_permute",
        [t, dest],
        None,
        transfer_attrs(cx, "collective_permute", source_target_pairs, channel, call.node),
        call.node,
        call.name,
    )
    return result


def transfer_attrs(cx, what: str, pairs_node, channel_node, node) -> Dict[str, Any]:
    """source_target_pairs and channel of a transfer, as attributes."""
    if cx.program.devices is None:
        raise cx.error(
            node,
            f"pl.{what} moves tensors between the devices of a mesh; compile "
            "the program for one with blockpipe.compile(..., devices=N)",
        )
    pairs = static_pairs(cx, pairs_node, what)
    channel = cx.static_int(channel_node, f"pl.{what}'s channel")
    if channel < 0:
        raise cx.error(channel_node, f"pl.{what}'s channel must be >= 0, got {channel}")
    return {
        "source_target_pairs": cx.builder.pairs(pairs),
        "channel_handle": cx.builder.channel(channel),
    }


def static_pairs(cx, node, what: str) -> List[Tuple[int, int]]:
    """A compile-time list of [source, target] device pairs."""
    value = node
    if isinstance(node, ast.Name) and node.id not in cx.env and node.id in cx.source.globals:
        value = cx.source.globals[node.id]
    items = value.elts if isinstance(value, (ast.List, ast.Tuple)) else value
    if not isinstance(items, (list, tuple)):
        raise cx.error(
            node,
            f"pl.{what}'s source_target_pairs must be a list of "
            "[source, target] device pairs known at compile time",
        )
    pairs = []
    for item in items:
        elts = item.elts if isinstance(item, (ast.List, ast.Tuple)) else item
        if not isinstance(elts, (list, tuple)) or len(elts) != 2:
            raise cx.error(
                item if isinstance(item, ast.AST) else node,
                f"each of pl.{what}'s source_target_pairs is a [source, target] pair",
            )
        pair = tuple(cx.static_int(e, "a device id") if isinstance(e, ast.AST) else e for e in elts)
        if not all(isinstance(d, int) and not isinstance(d, bool) for d in pair):
            raise cx.error(node, f"pl.{what}'s device ids must be integers, got {list(pair)}")
        if not all(-(2**63) <= d < 2**63 for d in pair):
            raise cx.error(node, f"pl.{what}'s device ids {list(pair)} are not devices of the mesh")
        pairs.append(pair)
    return pairs
