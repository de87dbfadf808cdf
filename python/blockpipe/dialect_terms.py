"""The compiler's diagnostics in the DSL's words.

The verifiers and passes speak the `bp` dialect: "'bp.sub' op ...",
"!bp.tile<16x64xf32, left>", "#bp<kind incore>", "arith.constant ops". A
kernel author wrote `pl.sub`, `pl.Tile[[16, 64], pl.FP32, pl.Left]` and
`pl.FunctionType.InCore`; `to_dsl` rewrites a message into those terms.
blockpipe.errors applies it to every diagnostic that becomes a
CompileError or a CompileWarning. The IR itself (`compiled.ir()`, pass
dumps) stays IR.

Only spellings no Python identifier can take are rewritten: they hold a
dot, a quote, `!` or `#` (a user's `bp_sub` or `tile` stays as it is).
"""

from __future__ import annotations

import functools
import re
from typing import Callable, Dict, List, Optional, Tuple

# bp ops with no pl function of the same name: what the user wrote for them.
_BP_OP_WORDS = {
    "extract": "the tile window (t[...] or pl.slice)",
    "insert": "the tile assembly (pl.assemble or t[...] = ...)",
    "select": "pl.sel",
    "launch": "the kernel call",
    "stage": "the stage call",
    "tensor_create": "pl.create_tensor",
    "tensor_view": "pl.slice",
    "initialize_pipe": "the pipe's initialization",
    "tpush": "the pipe push (pl.tpush_to_aic or pl.tpush_to_aiv)",
    "tpop": "the pipe pop (pl.tpop_from_aic or pl.tpop_from_aiv)",
    "tfree": "the pipe free (pl.tfree_to_aic or pl.tfree_to_aiv)",
}

# Ops of MLIR's own dialects that Python statements lower to.
_UPSTREAM_OP_WORDS = {
    "func.func": "the function",
    "func.call": "the call",
    "func.return": "the return statement",
    "scf.for": "the for loop",
    "scf.while": "the while loop",
    "scf.if": "the if",
    "scf.yield": "the value a loop or if body ends with",
    "scf.condition": "the while loop's condition",
}

# Function attributes: the pl.function argument that sets each.
_FUNCTION_ATTRS = {
    "kind": "type",
    "device": "device",
    "microbatches": "microbatches",
    "schedule": "schedule",
    "split": "split",
    "slot_num": "slot_num",
}

# Whole phrases of the passes' messages that name IR constructs.
_PHRASES: List[Tuple[str, str]] = [
    ("a func.func with a bp.kind attribute", "a @pl.function"),
    ("must be arith.constant ops", "must be constants known at compile time"),
    ("only scf.for loops and scf.if between", "only for loops and ifs between"),
    ("a condition (scf.if)", "a condition (an if)"),
    ("launch kernels and groups with bp.launch", "launch kernels and groups by calling them"),
    ("a #bp<kind ...>", "a pl.FunctionType"),
    ("on a func.func", "on a function"),
    ("a func.func parameter", "a function's parameter"),
    ("of 'arith.cmpf'", "of a floating-point comparison"),
]

_NOT_AFTER = r"(?<![\w.])"
_OP = re.compile(_NOT_AFTER + r"'(bp|func|scf|arith)\.(\w+)'( op\b)?")
_TYPE = re.compile(r"!bp\.(tile|tensor)<([^<>]*)>")
_ENUM_ATTR = re.compile(r"#bp<(\w+) ([\w?|]+)>")
_SHAPED = re.compile(r"((?:(?:\d+|\?)x)*)(\w+)")
_BARE_UPSTREAM_OP = re.compile(_NOT_AFTER + r"(func\.(?:func|call|return)|scf\.\w+)(?![\w.])")


def to_dsl(message: str) -> str:
    """`message` with the dialect's terms replaced by the DSL's."""
    for phrase, words in _PHRASES:
        message = message.replace(phrase, words)
    message = _TYPE.sub(_type_words, message)
    message = _ENUM_ATTR.sub(_enum_attr_words, message)
    message = _OP.sub(_op_words, message)
    return _BARE_UPSTREAM_OP.sub(
        lambda m: _UPSTREAM_OP_WORDS.get(m.group(1), m.group(0)).removeprefix("the "), message
    )


def _op_words(match: re.Match) -> str:
    dialect, name, is_op = match.groups()
    if dialect == "bp":
        if not is_op and name in _FUNCTION_ATTRS:
            return f"pl.function's {_FUNCTION_ATTRS[name]}"
        words = _bp_op_names().get(name)
        if words is None:
            return match.group(0) if not is_op else f"the {name} operation"
        return words
    qualified = f"{dialect}.{name}"
    if qualified in _UPSTREAM_OP_WORDS:
        words = _UPSTREAM_OP_WORDS[qualified]
        return words if is_op else words.removeprefix("the ")
    if dialect == "arith":
        return "the arithmetic" if is_op else "arithmetic"
    return match.group(0)


@functools.cache
def _bp_op_names() -> Dict[str, str]:
    """Each bp op mnemonic's name in the DSL: the op table's pl name, the
    pl operation of that name (plain, tile., tensor. or system.), or words."""
    import blockpipe.language  # noqa: F401  (fills OPS)
    from blockpipe.language.op_table import RECORDS
    from blockpipe.language.ops import OPS

    names = dict(_BP_OP_WORDS)
    for mnemonic, record in RECORDS.items():
        names[mnemonic] = f"pl.{record['pl_name']}"
    for qualname in OPS:
        mnemonic = qualname.rsplit(".", 1)[-1]
        names.setdefault(mnemonic, f"pl.{qualname}")
    return names


def _type_words(match: re.Match) -> str:
    kind, body = match.groups()
    spelled = _spell_tile(body) if kind == "tile" else _spell_tensor(body)
    return match.group(0) if spelled is None else spelled


def _shape_and_dtype(text: str):
    """`16x?x64xf32` as ((16, dynamic, 64), FP32), or None."""
    from blockpipe.language import types

    parsed = _SHAPED.fullmatch(text.strip())
    dtype = _dtypes().get(parsed.group(2)) if parsed else None
    if dtype is None:
        return None
    dims = parsed.group(1).split("x")[:-1]
    shape = tuple(types.dynamic if dim == "?" else int(dim) for dim in dims)
    return shape, dtype


def _spell_tile(body: str) -> Optional[str]:
    from blockpipe.language.types import MemorySpace, TileType

    shape_text, _, space_text = body.rpartition(",")
    space = next((s for s in MemorySpace if s.value == space_text.strip()), None)
    if shape_text.strip() == "*":
        return str(TileType(None, None, space))
    parsed = _shape_and_dtype(shape_text)
    return None if parsed is None else str(TileType(parsed[0], parsed[1], space))


def _spell_tensor(body: str) -> Optional[str]:
    from blockpipe.language.types import TensorType

    parsed = _shape_and_dtype(body)
    return None if parsed is None else str(TensorType(*parsed))


@functools.cache
def _dtypes() -> dict:
    """The pl dtype of each MLIR element type ("f32": FP32)."""
    from blockpipe import _core
    from blockpipe.language import types

    table = {d["mlir"]: getattr(types, d["enumerator"], None) for d in _core.dtypes()}
    table["index"] = types.INDEX
    return {mlir: dtype for mlir, dtype in table.items() if dtype is not None}


def _enum_attr_words(match: re.Match) -> str:
    words = _ENUM_WORDS.get(match.group(1))
    return match.group(0) if words is None else words(match.group(2))


def _enum_member(enum_name: str, value: str) -> str:
    from blockpipe.language import types

    enum = getattr(types, enum_name)
    member = next((m for m in enum if m.value == value), None)
    return f"pl.{enum_name}.{member.name}" if member else f"pl.{enum_name}"


_ENUM_WORDS: Dict[str, Callable[[str], str]] = {
    "kind": lambda value: _enum_member("FunctionType", value),
    "memory_space": lambda value: _enum_member("MemorySpace", value),
    "dir": lambda value: {"in": "an input", "out": "pl.Out", "inout": "pl.InOut"}.get(
        value, "a direction"
    ),
}
