"""blockpipe.language: the pypto-style DSL (`import blockpipe.language as pl`)."""

from blockpipe.language.ops import *  # noqa: F401,F403
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
