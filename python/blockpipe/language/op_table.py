"""The op table (compiler/include/blockpipe/Dialect/BPOpTable.td) as the
compiler core exports it: one record per op, keyed by its mnemonic ("exp").

Each record says the op's class (unary, binary, scalar, row_reduction,
col_reduction, row_arg_reduction, col_arg_reduction), the element types it takes, the tile-library functor it
applies, its NumPy reference, its Python names and parameters, and its
documentation. The frontend makes `pl.X`, `pl.tile.X` and `pl.tensor.X` from
it (blockpipe.language.ops.table); tests and tools read the NumPy
references from it."""

from __future__ import annotations

from typing import Dict, FrozenSet, Optional

from blockpipe import _core

RECORDS: Dict[str, dict] = {record["name"][len("bp.") :]: record for record in _core.op_table()}

ELEMENTWISE_CLASSES = frozenset(("unary", "binary", "scalar"))
REDUCTION_CLASSES = frozenset(
    ("row_reduction", "col_reduction", "row_arg_reduction", "col_arg_reduction")
)
# Reductions over each row (the last dimension); the others reduce columns.
ROW_REDUCTION_CLASSES = frozenset(("row_reduction", "row_arg_reduction"))
# Reductions whose result is where the extremum is (INT32), not a value.
ARG_REDUCTION_CLASSES = frozenset(("row_arg_reduction", "col_arg_reduction"))

# The ops whose result holds, element for element, what their operands
# hold there ("bp.exp", ...).
ELEMENTWISE: FrozenSet[str] = frozenset(
    record["name"] for record in RECORDS.values() if record["class"] in ELEMENTWISE_CLASSES
)


def record(op: str) -> Optional[dict]:
    """The record of the op `op` ("exp" or "bp.exp"), or None."""
    return RECORDS.get(op[len("bp.") :] if op.startswith("bp.") else op)


def dtype_rule(op: str) -> str:
    """The element types `op` takes: "any", "float" or "integer"."""
    found = record(op)
    return found["dtypes"] if found else "any"


def allows(op: str, dtype) -> bool:
    """Whether `op` takes tiles of the pl dtype `dtype`."""
    rule = dtype_rule(op)
    return rule == "any" or (rule == "float") == dtype.is_float


def check_dtype(cx, op: str, dtype, node) -> None:
    """A CompileError at `node` unless `op` takes tiles of `dtype`."""
    if allows(op, dtype):
        return
    kind = "a floating-point" if dtype_rule(op) == "float" else "an integer"
    raise cx.error(node, f"pl.{record(op)['pl_name']} needs {kind} tile, got {dtype.name}")


def numpy_reference(op: str):
    """The op's NumPy reference as a function of x (and y): what the
    op's tests compare with."""
    import numpy as np

    code = compile(record(op)["numpy"], f"<numpy reference of bp.{op}>", "eval")
    return lambda x, y=None: eval(code, {"np": np}, {"x": x, "y": y})
