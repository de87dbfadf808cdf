"""The operations of blockpipe.language, grouped by area: `memory` (GM <->
tiles, moves), `vector`, `cube`, `pipes` (between the halves of a group),
`orchestration` (launches, loops, block identity) and `p2p` (between the
devices of a mesh).

Each operation is a Python function with the DSL's signature and
documentation (`help(pl.load)`); the compiler recognises it inside
`@pl.function` bodies and lowers it with the implementation it was defined
with. Calling one from ordinary Python is an error, except while a program
is interpreted (BLOCKPIPE_INTERPRET=1, blockpipe.interpreter): then the
interpreter runs it on NumPy.
"""

from __future__ import annotations

import ast
import functools
import inspect
import types as _types
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Tuple


@dataclass
class Call:
    """Where an operation is called: the call's AST node, the name it is
    assigned to (for readable IR) and the type an annotation expects."""

    node: ast.Call
    name: Optional[str]
    expected: Any


class Op:
    """A DSL operation: its public signature and its lowering.

    `impl(cx, call, **arguments)` gets the function's lowering, the `Call`,
    and each argument as written (an AST node) or its default."""

    def __init__(
        self,
        impl: Callable,
        qualname: str,
        kinds: Optional[Tuple] = None,
        signature: Optional[inspect.Signature] = None,
    ):
        self.impl = impl
        self.qualname = qualname
        self.kinds = kinds
        if signature is None:
            signature = inspect.Signature(list(inspect.signature(impl).parameters.values())[2:])
        params = list(signature.parameters.values())
        self.signature = signature
        self.required = tuple(p.name for p in params if p.default is inspect.Parameter.empty)
        self.optional = {
            p.name: p.default for p in params if p.default is not inspect.Parameter.empty
        }

    def lower(self, cx, node: ast.Call, name: Optional[str], expected):
        if self.kinds is not None:
            cx.require_kind(node, self.qualname, self.kinds)
        arguments = cx.bind_args(self.qualname, node, self.required, self.optional)
        return self.impl(cx, Call(node, name, expected), **arguments)

    def __repr__(self) -> str:
        return f"<blockpipe operation pl.{self.qualname}>"


# Every operation by qualified name ("load", "tile.get_block_idx"), and
# the public function that stands for it.
OPS: Dict[str, Op] = {}
PUBLIC: Dict[str, Callable] = {}

# While blockpipe.interpreter runs a program: its `run(op, arguments)`,
# which every public function hands its call to (one place, not a NumPy
# twin of each operation).
INTERPRETER: ContextVar[Optional[Callable]] = ContextVar("blockpipe_interpreter", default=None)


def operation(
    name: Optional[str] = None,
    kinds: Optional[Tuple] = None,
    signature: Optional[inspect.Signature] = None,
):
    """Declares a DSL operation. The decorated `impl(cx, call, ...)` lowers
    it; the returned public function has the signature after `call` (or
    `signature`, for an `impl(cx, call, **arguments)`) and the docstring,
    and raises when called outside a blockpipe function. `kinds`: the
    function kinds it is valid in, checked before its arguments."""

    def declare(impl: Callable) -> Callable:
        qualname = name or impl.__name__
        op = Op(impl, qualname, kinds, signature)
        OPS[qualname] = op

        @functools.wraps(impl)
        def public(*args, **kwargs):
            run = INTERPRETER.get()
            if run is not None:
                return run(op, args, kwargs)
            raise RuntimeError(
                f"pl.{qualname} can only be used inside a @pl.function of a @pl.program"
            )

        public.__name__ = qualname.rsplit(".", 1)[-1]
        public.__qualname__ = qualname
        public.__module__ = "blockpipe.language"
        public.__signature__ = op.signature
        del public.__wrapped__  # help() shows the public signature, not impl's
        public.__bp_op__ = op
        PUBLIC[qualname] = public
        return public

    return declare


def op_of(value) -> Optional[Op]:
    """The operation a public function such as `pl.load` stands for."""
    return getattr(value, "__bp_op__", None)


def names_in(namespace) -> List[str]:
    """The public names of the DSL namespace `namespace` (pl, pl.tile, ...),
    for "did you mean"."""
    return [n for n in dir(namespace) if not n.startswith("_")]


# Importing the areas fills OPS; `table` makes the op table's operations.
import blockpipe.language.ops.scalar  # noqa: E402,F401 - fills OPS
import blockpipe.language.ops.scratch  # noqa: E402,F401 - fills OPS
from blockpipe.language.ops import (  # noqa: E402,F401 - they fill OPS
    activation,
    creation,  # noqa: E402,F401 - fills OPS
    cube,
    debugging,
    expand_clone,
    gather,
    gather_row,
    memory,
    orchestration,
    p2p,
    packed_masks,
    padding,
    partial,
    pipes,
    reinterpret,
    scatter,
    sort,
    table,
    vector,
    write,
)
from blockpipe.language.types import MaskPattern  # noqa: E402 - pl.tile.MaskPattern


def _namespace(prefix: str) -> _types.SimpleNamespace:
    return _types.SimpleNamespace(
        **{
            qualname[len(prefix) :]: public
            for qualname, public in PUBLIC.items()
            if qualname.startswith(prefix)
        }
    )


class _System(_types.SimpleNamespace):
    """pl.system: pypto's names it lacks are Unsupported, reported where a
    program uses them."""

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        from blockpipe.language.unsupported import Unsupported

        return Unsupported(f"pl.system.{name}")


# pypto spells these operations `pl.tile.X` as well as `pl.X`: the same
# operation under both names.
TILE_SPELLINGS = (
    "assemble",
    "slice",
    "concat",
    "load",
    "store",
    "move",
    "cast",
    "matmul",
    "matmul_acc",
    "batch_matmul",
    "reshape",
    "transpose",
    "expands",
    *(
        f"{axis}_expand{op}"
        for axis in ("row", "col")
        for op in ("", "_add", "_sub", "_mul", "_div", "_max", "_min", "_expdif")
    ),
)
for _name in TILE_SPELLINGS:
    OPS.setdefault(f"tile.{_name}", OPS[_name])
    PUBLIC.setdefault(f"tile.{_name}", PUBLIC[_name])

tile = _namespace("tile.")
tile.MaskPattern = MaskPattern
tensor = _namespace("tensor.")
prefetch = _namespace("prefetch.")
system = _System(**vars(_namespace("system.")))
# The operations named directly under pl.
TOP_LEVEL = {qualname: public for qualname, public in PUBLIC.items() if "." not in qualname}
