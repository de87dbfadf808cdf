"""blockpipe.language: the pypto-style DSL (`import blockpipe.language as pl`).

The operations (`pl.load`, `pl.matmul`, `pl.tpush_to_aiv`, ...) are documented
functions grouped by area in `blockpipe.language.ops`; `help(pl.load)` shows
one."""

from blockpipe.language.jit import inline, jit  # noqa: F401 - re-exported as pl.<name>
from blockpipe.language.ops import TOP_LEVEL as _TOP_LEVEL
from blockpipe.language.ops import prefetch, system, tensor, tile  # noqa: F401 - re-exported as pl.<name>
from blockpipe.language.program import Program, function, program  # noqa: F401 - re-exported as pl.<name>
from blockpipe.language.rewrites import (  # noqa: F401 - re-exported as pl.<name>
    manual_scope,
    spmd_submit,
    submit,
    yield_,
)
from blockpipe.language.transparent_scopes import cluster  # noqa: F401 - re-exported as pl.<name>
from blockpipe.language.types import (  # noqa: F401 - re-exported as pl.<name>
    BF16,
    BOOL,
    FP16,
    FP32,
    INDEX,
    INT8,
    INT16,
    INT32,
    INT64,
    UINT8,
    UINT16,
    UINT32,
    AtomicType,
    DType,
    FunctionType,
    InOut,
    Level,
    MemorySpace,
    MemRef,
    Out,
    PadValue,
    Scalar,
    SplitMode,
    Tensor,
    TensorLayout,
    TensorView,
    Tile,
    TileView,
    dynamic,
)
from blockpipe.language.unsupported import PYPTO_NAMES as _PYPTO_NAMES
from blockpipe.language.unsupported import Unsupported as _Unsupported

globals().update(_TOP_LEVEL)

# pypto's short aliases: pl.Mem.Vec, pl.ND
Mem = MemorySpace
ND, DN, NZ = TensorLayout.ND, TensorLayout.DN, TensorLayout.NZ
MX_A_ZZ, MX_B_NN = TensorLayout.MX_A_ZZ, TensorLayout.MX_B_NN


def __getattr__(name: str):
    # pypto's names blockpipe lacks: a CompileError where a program uses
    # them, not an AttributeError while it is defined.
    if name in _PYPTO_NAMES:
        return _Unsupported(f"pl.{name}")
    raise AttributeError(f"module 'blockpipe.language' has no attribute {name!r}")
