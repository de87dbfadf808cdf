"""Where the frontend still spells MLIR syntax: attribute and symbol text
for `IRBuilder.create`."""

from __future__ import annotations

import math
import re
from typing import Optional

from blockpipe.language.types import DType

# bp.PipeDir values, as in PipeLayout.h.
PIPE_DIRS = {"c2v": "1 : i32", "v2c": "2 : i32"}

INT_BITS = {"i32": 32, "i64": 64, "index": 64}


# The bit patterns of +inf, -inf and NaN: MLIR spells a float attribute
# that is not finite in hexadecimal.
NON_FINITE_BITS = {
    "f32": (0x7F800000, 0xFF800000, 0x7FC00000),
    "f16": (0x7C00, 0xFC00, 0x7E00),
    "bf16": (0x7F80, 0xFF80, 0x7FC0),
}


# The magnitude from which a float rounds to infinity in each dtype (the
# largest finite value plus half its ulp).
OVERFLOW_AT = {"f32": 2.0**128 - 2.0**103, "f16": 65520.0, "bf16": 2.0**128 - 2.0**119}


def float_attr_text(value: float, dtype: DType) -> Optional[str]:
    """The MLIR attribute of a float constant; None for a finite value
    beyond the dtype's range."""
    value = float(value)
    if math.isfinite(value):
        if abs(value) >= OVERFLOW_AT[dtype.mlir]:
            return None
        # MLIR's float literal needs a '.': Python writes 1e-05 for 1.0e-05.
        mantissa, e, exponent = repr(value).partition("e")
        if "." not in mantissa:
            mantissa += ".0"
        return f"{mantissa}{e}{exponent} : {dtype.mlir}"
    pos_inf, neg_inf, nan = NON_FINITE_BITS[dtype.mlir]
    bits = nan if math.isnan(value) else pos_inf if value > 0 else neg_inf
    return f"0x{bits:X} : {dtype.mlir}"


def symbol_ref(name: str) -> str:
    """`@name`, quoted when the name is not a bare MLIR identifier (a Python
    identifier may hold letters beyond ASCII)."""
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_$.]*", name):
        return f"@{name}"
    return f"@{mlir_string(name)}"


def mlir_string(text: str) -> str:
    escaped = "".join(
        ch if 0x20 <= ord(ch) < 0x7F and ch not in '"\\' else "".join(f"\\{b:02X}" for b in ch.encode())
        for ch in text
    )
    return f'"{escaped}"'
