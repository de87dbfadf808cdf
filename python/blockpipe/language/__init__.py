"""blockpipe.language: the pypto-style DSL (`import blockpipe.language as pl`).

The operations (`pl.load`, `pl.matmul`, `pl.tpush_to_aiv`, ...) are documented
functions grouped by area in `blockpipe.language.ops`; `help(pl.load)` shows
one."""

from blockpipe.language.ops import TOP_LEVEL as _TOP_LEVEL
from blockpipe.language.ops import tensor, tile  # noqa: F401
from blockpipe.language.program import Program, function, program  # noqa: F401
from blockpipe.language.types import (  # noqa: F401
    BF16,
    FP16,
    FP32,
    INDEX,
    INT32,
    INT64,
    DType,
    FunctionType,
    InOut,
    MemorySpace,
    Out,
    Scalar,
    Tensor,
    Tile,
    dynamic,
)

globals().update(_TOP_LEVEL)
