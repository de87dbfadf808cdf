"""pypto's names that blockpipe does not provide yet.

A program written for pypto may use one: `pl.jit`, `pl.system.syncall()`,
`pl.reserve_buffer(...)`. Using it is a CompileError naming it
at the user's line when that program is compiled, never an AttributeError
while the module or the class is defined: a file with several programs
loses only those that use it. Other unknown names stay AttributeErrors (with
"did you mean" inside a function).
"""

from __future__ import annotations

from typing import Callable, Optional

# pypto's names directly under `pl` (its `pypto.language`), and the
# DSL entry points its system tests use; those blockpipe defines shadow
# these.
PYPTO_NAMES = frozenset(
    """
    function inline program InlineFunction parse parser loads parse_program
    loads_program Tensor Tile Scalar Tuple DynVar InOut IntLike Out dynamic
    const range parallel unroll while_ yield_ cond static_print static_assert
    incore auto_incore cluster tile system tensor add sub mul div maximum exp
    cast reshape transpose slice matmul row_max row_sum row_min row_expand
    row_expand_add row_expand_sub row_expand_mul row_expand_div col_expand
    col_expand_mul col_expand_div col_expand_sub expands neg recip read write
    create_tile fillpad load store move sqrt rsqrt log abs relu matmul_acc
    matmul_bias gemv gemv_acc gemv_bias minimum min sum max cmp cmps rem rems
    and_ ands or_ ors xor xors shl shls shr shrs maxs mins prelu not_ addc
    subc addsc subsc lrelu sel sels AUTO ImportedBuffer ReservedBuffer
    tpush_to_aiv tpush_to_aic tpop_from_aic tpop_from_aiv aic_initialize_pipe
    aiv_initialize_pipe reserve_buffer import_peer_buffer tfree_to_aic
    tfree_to_aiv create_tensor assemble dim FunctionType ForKind Level MemRef
    Role Mem MemorySpace PipeType TensorLayout TileLayout TilePad ND
    DN NZ FP4 FP8E4M3FN FP8E5M2 FP16 FP32 BF16 HF4 HF8 INT4 INT8 INT16 INT32
    INT64 UINT4 UINT8 UINT16 UINT32 UINT64 BOOL INDEX
    jit at split SplitMode Level split_aiv aiv_shard aic_gather pipeline
""".split()
)

# Members of pypto's enums that blockpipe's enums of the same name lack.
PYPTO_MEMBERS: dict = {}


class NotSupportedError(NotImplementedError):
    """Raised when a pypto name blockpipe lacks is used outside a blockpipe
    function (inside one, the compiler reports it as a CompileError)."""


class Unsupported:
    """Stands for the pypto name `name` wherever Python evaluates it while a
    module or class is defined: its attributes, items and calls are more of
    the same; a function it decorated raises when called."""

    def __init__(self, name: str, decorated: Optional[Callable] = None):
        self._name = name
        self._decorated = decorated

    @property
    def message(self) -> str:
        return f"{self._name} is not supported by blockpipe"

    def __getattr__(self, attr: str) -> Unsupported:
        # Private names are never pypto's API, and tools probe for them
        # (pytest's fixture markers, copy, pickle).
        if attr.startswith("_"):
            raise AttributeError(attr)
        return Unsupported(f"{self._name}.{attr}")

    def __getitem__(self, item) -> Unsupported:
        return self

    def __call__(self, *args, **kwargs):
        if self._decorated is not None:
            raise NotSupportedError(f"{self.message}: '{self._decorated.__name__}' cannot run")
        if len(args) == 1 and not kwargs and callable(args[0]) and hasattr(args[0], "__name__"):
            return Unsupported(self._name, decorated=args[0])  # used as a decorator
        return self

    def __repr__(self) -> str:
        return f"<{self.message}>"


def unsupported_in(value) -> Optional[Unsupported]:
    """The first Unsupported in `value` (itself, or inside a list, tuple or
    dict), if any."""
    if isinstance(value, Unsupported):
        return value
    if isinstance(value, dict):
        value = list(value.keys()) + list(value.values())
    if isinstance(value, (list, tuple)):
        for item in value:
            found = unsupported_in(item)
            if found is not None:
                return found
    return None
