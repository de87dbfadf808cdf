"""Printing from a kernel, as Triton users do: `pl.print("row", i, t)` (or
Python's own `print` in a kernel) writes one line per block at run time:
on cpu-sim each block's lines come out when its launch ends, in block
order, after "kernel 'k' block 3: f.py:12:"; on CUDA through device
printf. Strings and numbers known at compile time are text; index values,
scalars and tiles are printed as they are then. `pl.static_print` (pypto's)
prints at compile time what the compiler knows of its arguments.
"""

from __future__ import annotations

import ast
import inspect
import sys

from blockpipe.language.ops import operation
from blockpipe.language.types import ScalarType, TileType
from blockpipe.language.values import KERNEL_KINDS, TransposedView, Value, describe

_SIGNATURE = inspect.Signature(
    [
        inspect.Parameter("args", inspect.Parameter.VAR_POSITIONAL),
        inspect.Parameter("sep", inspect.Parameter.KEYWORD_ONLY, default=" "),
    ]
)


@operation(name="print", kinds=KERNEL_KINDS, signature=_SIGNATURE)
def print_(cx, call, **arguments):
    """Prints one line from every block that runs it: `pl.print("row", i,
    tile)`. Arguments are separated by a space, as print's; a string or a
    number known at compile time is text, an index value, a scalar or a
    tile is written as it is at run time (integers in decimal, floats with
    8 significant digits, a tile as nested brackets, the first and last 3
    entries of each longer dimension of a tile of more than 1000). On
    cpu-sim the lines of a launch reach stdout when it ends, in block
    order, each after "kernel 'k' block 3: file.py:12:"; on CUDA through
    device printf (lines of blocks printing at once may interleave).
    Python's print in a kernel is the same. Valid in InCore, AIC and AIV
    functions.
    """
    raise AssertionError("lowered by lower_print")  # variadic: see calls.py


def lower_print(cx, node: ast.Call):
    """pl.print / print(...) in a kernel: a bp.print of the texts between
    the run-time values."""
    cx.require_kind(node, "print", KERNEL_KINDS)
    sep = " "
    for keyword in node.keywords:
        if keyword.arg == "sep":
            sep = cx.static(keyword.value)
            if not isinstance(sep, str):
                raise cx.error(keyword.value, f"print's sep must be a string, got {sep!r}")
        elif keyword.arg == "end" and cx.static(keyword.value) == "\n":
            continue
        else:
            raise cx.error(
                keyword.value if keyword.arg else node,
                f"print in a kernel takes sep= only, not {keyword.arg or '**'}= (each call "
                "prints one line to the launch's output)",
            )
    texts, operands = [""], []
    for k, arg in enumerate(node.args):
        if k:
            texts[-1] += sep
        for piece in _pieces(cx, arg):
            if isinstance(piece, str):
                texts[-1] += piece
            else:
                operands.append(piece)
                texts.append("")
    cx.create("bp.print", operands, [], {"texts": cx.builder.strings(texts)}, node)


def _pieces(cx, arg):
    """The texts and run-time values `arg` prints as (an f-string is
    several)."""
    if isinstance(arg, ast.Starred):
        raise cx.error(arg, "print in a kernel takes its arguments one by one, not *args")
    if isinstance(arg, ast.JoinedStr):
        for part in arg.values:
            if isinstance(part, ast.FormattedValue):
                if part.format_spec is not None or part.conversion != -1:
                    raise cx.error(
                        part, "an f-string in a kernel's print takes {value} with no format"
                    )
                yield from _pieces(cx, part.value)
            else:
                yield str(part.value)
        return
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        yield arg.value
        return
    value = cx.expr(arg)
    if isinstance(value, (str, int, float, bool)):
        yield str(value)
        return
    if isinstance(value, TransposedView):
        value = value.tile
    if isinstance(value, Value) and isinstance(value.type, (ScalarType, TileType)):
        yield value
        return
    raise cx.error(
        arg,
        f"print in a kernel prints strings, numbers, scalars and tiles, got {describe(value)}"
        " (a tensor: load the window to print first)",
    )


@operation(name="static_print", signature=_SIGNATURE)
def static_print(cx, call, **arguments):
    """pypto's `pl.static_print(x, "label", ...)`: prints, while the
    program compiles, what the compiler knows of each argument (a tile's
    or tensor's type, a number), after the file and line; nothing happens
    at run time."""
    raise AssertionError("lowered by lower_static_print")  # variadic: see calls.py


def lower_static_print(cx, node: ast.Call):
    parts = []
    for arg in node.args:
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            parts.append(arg.value)
            continue
        value = cx.expr(arg)
        parts.append(
            f"{ast.unparse(arg)}: {value.type}" if isinstance(value, Value) else repr(value)
        )
    line, _ = cx.source.position(node)
    print(f"{cx.source.file}:{line}: {' '.join(parts)}", file=sys.stdout)


# ------------------------------------------------------------ prefetching
#
# pypto's pl.prefetch.* warm the L2 cache with a GM region ahead of its
# loads: a hint that changes no value. blockpipe's targets have no such
# cache to warm, so the calls are checked and do nothing.

PREFETCH_KINDS = KERNEL_KINDS


class PrefetchHandle:
    """What pl.prefetch.make_context, async_prefetch and session return: a
    name the other prefetch calls take, nothing at run time."""

    def __init__(self, what: str):
        self.what = what

    def __repr__(self) -> str:
        return f"<pl.prefetch {self.what}>"


def _handle(cx, node, what: str) -> PrefetchHandle:
    value = cx.expr(node)
    if not isinstance(value, PrefetchHandle) or value.what != what:
        raise cx.error(node, f"expected a pl.prefetch {what}, got {describe(value)}")
    return value


@operation(name="prefetch.make_context", kinds=PREFETCH_KINDS)
def prefetch_make_context(cx, call):
    """pypto's prefetch context: `ctx = pl.prefetch.make_context()`.
    The pl.prefetch calls warm a cache blockpipe's targets lack, so they
    change nothing; their arguments are checked. Valid in InCore, AIC and
    AIV functions."""
    return PrefetchHandle("context")


@operation(name="prefetch.async_prefetch", kinds=PREFETCH_KINDS)
def prefetch_async_prefetch(cx, call, tensor, ctx):
    """`evt = pl.prefetch.async_prefetch(a, ctx)`: starts warming the L2
    cache with the GM tensor `a` (a tensor, not a tile), an event to wait
    for. No effect here: see pl.prefetch.make_context. Valid in InCore,
    AIC and AIV functions."""
    cx.tensor_arg(tensor, "pl.prefetch.async_prefetch's tensor")
    _handle(cx, ctx, "context")
    return PrefetchHandle("event")


@operation(name="prefetch.session", kinds=PREFETCH_KINDS)
def prefetch_session(cx, call, ctx):
    """`session = pl.prefetch.session(ctx)`: the session pl.prefetch.wait
    waits in. No effect here: see pl.prefetch.make_context. Valid in
    InCore, AIC and AIV functions."""
    _handle(cx, ctx, "context")
    return PrefetchHandle("session")


@operation(name="prefetch.wait", kinds=PREFETCH_KINDS)
def prefetch_wait(cx, call, evt, session):
    """`pl.prefetch.wait(evt, session)`: waits until the prefetch `evt`
    landed. Returns at once here (nothing was in flight). Valid in InCore,
    AIC and AIV functions."""
    _handle(cx, evt, "event")
    _handle(cx, session, "session")
