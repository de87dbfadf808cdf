"""The operations of blockpipe.language.

They exist to be recognised by the compiler inside `@pl.function` bodies;
calling one from ordinary Python is an error.
"""

from __future__ import annotations

import types as _types


class Intrinsic:
    """A DSL operation such as `pl.load`; its meaning is in the lowering."""

    def __init__(self, qualname: str):
        self.qualname = qualname

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            f"pl.{self.qualname} can only be used inside a @pl.function of a @pl.program"
        )

    def __repr__(self) -> str:
        return f"<blockpipe intrinsic pl.{self.qualname}>"


_NAMES = [
    # data movement
    "load", "store", "move",
    # vector compute
    "add", "sub", "mul", "div", "maximum", "minimum",
    "exp", "sqrt", "relu", "neg", "abs",
    "row_sum", "row_max", "cast", "full",
    # cube compute
    "matmul",
    # control and orchestration
    "range", "spmd", "create_tensor",
    # transfers between the devices of a mesh
    "device_id", "send", "recv", "collective_permute",
    # explicit pipes
    "aic_initialize_pipe", "aiv_initialize_pipe",
    "tpush_to_aiv", "tpop_from_aic", "tfree_to_aic",
    "tpush_to_aic", "tpop_from_aiv", "tfree_to_aiv",
]

INTRINSICS = {name: Intrinsic(name) for name in _NAMES}
globals().update(INTRINSICS)

tile = _types.SimpleNamespace(
    get_block_idx=Intrinsic("tile.get_block_idx"),
    get_block_num=Intrinsic("tile.get_block_num"),
    get_subblock_idx=Intrinsic("tile.get_subblock_idx"),
)
tensor = _types.SimpleNamespace(dim=Intrinsic("tensor.dim"))

for _ns in (tile, tensor):
    for _name, _op in vars(_ns).items():
        INTRINSICS[_op.qualname] = _op

__all__ = sorted(_NAMES) + ["tile", "tensor", "Intrinsic", "INTRINSICS"]
