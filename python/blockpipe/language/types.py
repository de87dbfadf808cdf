"""The user-visible types of blockpipe.language: dtypes, memory spaces,
function kinds, and the annotations `Tensor`, `Tile`, `Scalar`, `Out`,
`InOut`."""

from __future__ import annotations

import enum
import numbers
from dataclasses import dataclass, field
from typing import Optional, Tuple, Union

from blockpipe.language.unsupported import PYPTO_MEMBERS, Unsupported, unsupported_in


@dataclass(frozen=True)
class DType:
    """An element type: its name in the DSL (the dtype table's enumerator),
    in numpy, and its size in bytes."""

    name: str
    numpy: str
    is_float: bool
    bytes: int = field(default=0, compare=False)

    def __repr__(self) -> str:
        return f"pl.{self.name}"


def _table() -> dict:
    """The target library's dtype table (blockpipe/Target/DType.h), by
    enumerator."""
    from blockpipe import _core

    return {
        d["enumerator"]: DType(d["enumerator"], d["numpy"], d["is_float"], d["bytes"])
        for d in _core.dtypes()
    }


_TABLE = _table()
FP32 = _TABLE["FP32"]
FP16 = _TABLE["FP16"]
BF16 = _TABLE["BF16"]
INT32 = _TABLE["INT32"]
INT64 = _TABLE["INT64"]
INT8 = _TABLE["INT8"]
INT16 = _TABLE["INT16"]
UINT8 = _TABLE["UINT8"]
UINT16 = _TABLE["UINT16"]
UINT32 = _TABLE["UINT32"]
# A flag: scalars only (pl.Scalar[pl.BOOL], a condition); an integer passed
# for it is its truth (nonzero).
BOOL = _TABLE["BOOL"]
# A loop counter or size: the DSL's own scalar type, carried as int64.
INDEX = DType("INDEX", INT64.numpy, False, INT64.bytes)

DTYPES = (FP32, FP16, BF16, INT8, INT16, INT32, INT64, UINT8, UINT16, UINT32, INDEX)

# An unsigned dtype's scalars are computed on as the signed integer of its
# width (the bits are the same; the tile's dtype says how they are read).
_SIGNLESS = {UINT8: INT8, UINT16: INT16, UINT32: INT32}


def is_unsigned(dtype: DType) -> bool:
    """Whether `dtype` is an unsigned integer (UINT8, UINT16, UINT32)."""
    return dtype in _SIGNLESS


def signless(dtype: DType) -> DType:
    """The dtype a scalar holding an element of `dtype` has in the IR: the
    dtype itself, or the signed integer of an unsigned one's width."""
    return _SIGNLESS.get(dtype, dtype)


class _Dynamic:
    """A dimension whose size is known only at run time (`pl.dynamic`).
    `pl.dynamic("M")` names it (pypto's form): dims with one name, in the
    parameters of one function, must agree when it is called."""

    def __repr__(self) -> str:
        return "pl.dynamic"

    def __call__(self, name: str) -> NamedDim:
        if not isinstance(name, str) or not name.isidentifier():
            raise TypeError(f"pl.dynamic(name) takes an identifier, got {name!r}")
        return NamedDim(name)


class _DimArithmetic:
    """`M * 2`, `M + N`, ... of dynamic dimensions: a dynamic dimension
    (pypto's composite dims), unnamed: blockpipe checks its extent at run
    time like any dynamic dim's, not the expression."""

    def _composite(self, op: str, other, reflected: bool = False) -> CompositeDim:
        if isinstance(other, bool) or not isinstance(other, (int, _DimArithmetic)):
            return NotImplemented
        left, right = (other, self) if reflected else (self, other)
        return CompositeDim(f"({left!r} {op} {right!r})")

    def __add__(self, other):
        return self._composite("+", other)

    def __radd__(self, other):
        return self._composite("+", other, True)

    def __sub__(self, other):
        return self._composite("-", other)

    def __rsub__(self, other):
        return self._composite("-", other, True)

    def __mul__(self, other):
        return self._composite("*", other)

    def __rmul__(self, other):
        return self._composite("*", other, True)

    def __floordiv__(self, other):
        return self._composite("//", other)

    def __rfloordiv__(self, other):
        return self._composite("//", other, True)


@dataclass(frozen=True)
class NamedDim(_DimArithmetic):
    """`pl.dynamic("M")`: a dynamic dimension with a name."""

    name: str

    def __repr__(self) -> str:
        return f"pl.dynamic({self.name!r})"


@dataclass(frozen=True)
class CompositeDim(_DimArithmetic):
    """A dimension computed from dynamic ones, `M * 2`: dynamic."""

    text: str

    def __repr__(self) -> str:
        return self.text


dynamic = _Dynamic()

Dim = Union[int, _Dynamic]


class MemorySpace(enum.Enum):
    Vec = "vec"
    Mat = "mat"
    Left = "left"
    Right = "right"
    Acc = "acc"


class _PyptoEnum(enum.EnumMeta):
    """pypto's members that blockpipe lacks are Unsupported, not
    AttributeErrors while a program is defined."""

    def __getattr__(cls, name):
        if name in cls.__dict__.get("_member_map_", {}):
            return cls._member_map_[name]
        if name in PYPTO_MEMBERS.get(cls.__name__, ()):
            return Unsupported(f"pl.{cls.__name__}.{name}")
        raise AttributeError(f"type object {cls.__name__!r} has no attribute {name!r}")


class FunctionType(enum.Enum, metaclass=_PyptoEnum):
    InCore = "incore"
    AIC = "aic"
    AIV = "aiv"
    Group = "group"
    Orchestration = "orchestration"
    Pipeline = "pipeline"
    # pypto's function whose work is in pl.at(level=pl.Level.CORE_GROUP) or
    # pl.spmd scopes on tensors: it becomes an orchestration launching one
    # InCore kernel per scope (blockpipe.language.outline).
    Opaque = "opaque"


class Level(enum.Enum, metaclass=_PyptoEnum):
    """pypto's levels of the machine for `pl.at(level=...)`; blockpipe
    outlines CORE_GROUP scopes (the others are a CompileError naming them)."""

    AIV = "aiv"
    AIC = "aic"
    CORE_GROUP = "core_group"
    CHIP_DIE = "chip_die"
    CHIP = "chip"
    HOST = "host"
    CLUSTER_0 = "cluster_0"
    CLUSTER_1 = "cluster_1"


class SplitMode(enum.Enum, metaclass=_PyptoEnum):
    """How a mixed kernel's vector half is shared by the two AIV sub-blocks
    of a core group: NONE (sub-block 0 does it all), UP_DOWN (each takes half
    the rows), LEFT_RIGHT (half the columns)."""

    NONE = 0
    UP_DOWN = 1
    LEFT_RIGHT = 2


class PadValue(enum.Enum, metaclass=_PyptoEnum):
    """What a tile holds outside its valid shape (pl.slice's pad_value,
    pl.fillpad): zero, or the dtype's largest (max) or lowest (min) value;
    null (no padding asked for) is zero in blockpipe."""

    null = "null"
    zero = "zero"
    max = "max"
    min = "min"


class MemRef:
    """pypto's `pl.MemRef(...)`: where the Ascend memory planner puts
    tiles (`pl.Tile[[64, 64], pl.FP32, scratch, pl.Mem.Vec]`, one of
    `slots=N` picked by `ring[i % 2]`). It is accepted and not used:
    blockpipe gives every tile storage of its own, so tiles placed in one
    MemRef do not overwrite each other (a program that reads a tile after
    another was written into the same place sees its own value)."""

    def __init__(self, *args, slots=None, **kwargs):
        self.slots = slots

    def __getitem__(self, slot):
        return self  # any slot: the same hint


class AtomicType(enum.IntEnum):
    """How pl.store and pl.assemble write GM (`atomic=`): None_ overwrites,
    Add adds each element into the one there as one atomic
    read-modify-write (blocks of a launch may add into the same elements)."""

    None_ = 0
    Add = 1


class MaskPattern(enum.IntEnum):
    """pypto's column patterns for the mask form of pl.tensor.gather: read
    right to left, bit k selects column k of every group of 2 or 4 (P0101
    the even columns, P1010 the odd ones, P0001 ... P1000 one column of
    every four, P1111 all)."""

    P0101 = 1
    P1010 = 2
    P0001 = 3
    P0010 = 4
    P0100 = 5
    P1000 = 6
    P1111 = 7


class TileView:
    """The 4th entry of a tile annotation, `pl.Tile[[16, 16], pl.FP32,
    pl.Mem.Vec, pl.TileView(valid_shape=[rows, cols])]`: the part of the
    tile that holds data (numbers, or the function's index values); see
    pl.tile.set_validshape. pypto's layout fields are not supported."""

    def __init__(self, valid_shape=None, **layout):
        self.valid_shape = valid_shape
        self.layout = layout


class TensorLayout(enum.Enum, metaclass=_PyptoEnum):
    """pypto's layouts of a GM tensor (`pl.TensorView(layout=...)`); blockpipe's
    tensors are ND (row-major), the others are a CompileError naming them."""

    ND = "nd"
    DN = "dn"
    NZ = "nz"
    MX_A_ZZ = "mx_a_zz"
    MX_B_NN = "mx_b_nn"


class TensorView:
    """The 3rd entry of a tensor annotation, `pl.Tensor[[Q, B], pl.FP32,
    pl.TensorView(valid_shape=[Q, V], layout=pl.TensorLayout.ND)]`: the part
    of the tensor that holds data, sizes that are numbers or `pl.dynamic`
    names. A pl.load of such a parameter reads only that part
    (blockpipe.language.tensor_valid). pypto's stride= and pad= are not
    supported."""

    def __init__(self, stride=None, layout=None, valid_shape=None, pad=None):
        self.stride = stride
        self.layout = layout
        self.valid_shape = valid_shape
        self.pad = pad


@dataclass(frozen=True)
class Split:
    """`pl.split(mode)`, an entry of `pl.at(..., optimizations=[...])`."""

    mode: SplitMode
    slot_num: Optional[int] = None


class ParamDirection(enum.Enum):
    In = "in"
    Out = "out"
    InOut = "inout"


@dataclass(frozen=True)
class TensorType:
    """A tensor in global memory: `pl.Tensor[[128, 64], pl.FP32]`."""

    shape: Tuple[Dim, ...]
    dtype: DType
    # The pl.dynamic("M") name of each dim (None: unnamed); not part of the
    # type, which has pl.dynamic there.
    dim_names: Tuple[Optional[str], ...] = field(default=(), compare=False)
    # A parameter's pl.TensorView, checked where the function is lowered;
    # not part of the type.
    view: Optional[TensorView] = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        return f"Tensor[{list(self.shape)}, {self.dtype.name}]"


@dataclass(frozen=True)
class TileType:
    """A tile in an on-chip memory: `pl.Tile[[16, 16], pl.FP32]`. A tile
    popped from a pipe whose pushes are not built yet has neither shape nor
    dtype until the compiler's bp-infer-pipe-types pass infers them."""

    shape: Optional[Tuple[int, ...]]
    dtype: Optional[DType]
    space: Optional[MemorySpace] = None

    @property
    def unknown(self) -> bool:
        """Whether its shape and dtype are still to be inferred."""
        return self.dtype is None

    def with_space(self, space: MemorySpace) -> TileType:
        return TileType(self.shape, self.dtype, space)

    def __str__(self) -> str:
        space = f", {self.space.name}" if self.space else ""
        if self.unknown:
            return f"Tile[?{space}]"
        return f"Tile[{list(self.shape)}, {self.dtype.name}{space}]"


@dataclass(frozen=True)
class ScalarType:
    """A scalar value: `pl.Scalar[pl.INDEX]`."""

    dtype: DType

    def __str__(self) -> str:
        return f"Scalar[{self.dtype.name}]"


class ShapelessTensor:
    """A parameter annotated `pl.Tensor` (or `pl.Out[pl.Tensor]`) without
    shape or dtype: a @pl.jit function's call gives them (its arguments'),
    and a @pl.jit.incore one's each call site (its arguments' types)."""

    def __repr__(self) -> str:
        return "pl.Tensor"

    __str__ = __repr__


SHAPELESS = ShapelessTensor()


class CapturedValue:
    """A kernel parameter for a name a scope reads from its function (a
    tensor it created, a loop variable): the value's type at the launch,
    a tensor's or a scalar's."""

    def __repr__(self) -> str:
        return "a captured value"

    __str__ = __repr__


CAPTURED = CapturedValue()


@dataclass(frozen=True)
class ParamType:
    """`pl.Out[...]` / `pl.InOut[...]` around a tensor type (or SHAPELESS)."""

    direction: ParamDirection
    inner: Union[TensorType, ShapelessTensor, CapturedValue]


def _check_shape(shape, allow_dynamic: bool, what: str) -> Tuple[Dim, ...]:
    if not isinstance(shape, (list, tuple)) or not shape:
        raise TypeError(f"{what} shape must be a non-empty list, got {shape!r}")
    dims = []
    for d in shape:
        if d is dynamic and allow_dynamic:
            dims.append(d)
        elif isinstance(d, numbers.Integral) and not isinstance(d, bool) and d > 0:
            dims.append(int(d))  # also a numpy integer, such as np.prod(...)
        else:
            raise TypeError(
                f"{what} dimensions must be positive integers"
                f"{' or pl.dynamic' if allow_dynamic else ''}, got {d!r}"
            )
    return tuple(dims)


def _check_dtype(dtype, what: str) -> DType:
    if not isinstance(dtype, DType):
        raise TypeError(
            f"{what} dtype must be one of pl.FP32, pl.FP16, pl.BF16, pl.INT32, "
            f"pl.INT64, pl.INDEX, got {dtype!r}"
        )
    return dtype


class _TensorFactory:
    def __getitem__(self, item) -> TensorType:
        if (found := unsupported_in(item)) is not None:
            return found  # reported where the program is compiled
        view = None
        if isinstance(item, tuple) and len(item) == 3 and isinstance(item[2], TensorView):
            item, view = item[:2], item[2]
        elif isinstance(item, tuple) and len(item) == 3 and isinstance(item[2], TensorLayout):
            # pypto's layout marker, `pl.Tensor[[M, N], pl.FP32, pl.DN]`
            if item[2] is not TensorLayout.ND:
                return Unsupported(f"pl.TensorLayout.{item[2].name} as a tensor's layout")
            item = item[:2]
        if not isinstance(item, tuple) or len(item) != 2:
            raise TypeError("use pl.Tensor[[dims...], dtype]")
        shape, dtype = item
        names = (
            tuple(d.name if isinstance(d, NamedDim) else None for d in shape)
            if isinstance(shape, (list, tuple))
            else ()
        )
        if isinstance(shape, (list, tuple)):
            shape = [dynamic if isinstance(d, (NamedDim, CompositeDim)) else d for d in shape]
        return TensorType(
            _check_shape(shape, True, "Tensor"),
            _check_dtype(dtype, "Tensor"),
            names if any(names) else (),
            view,
        )


class _TileFactory:
    def __getitem__(self, item) -> TileType:
        if (found := unsupported_in(item)) is not None:
            return found  # reported where the program is compiled
        if isinstance(item, tuple):
            item = tuple(entry for entry in item if not isinstance(entry, MemRef))
        if isinstance(item, tuple) and len(item) == 4 and isinstance(item[3], TileView):
            # The frontend reads a view from the annotation of an assignment
            # (its sizes may be values known at run time); anywhere else a
            # valid shape would be lost.
            if item[3].valid_shape is not None or item[3].layout:
                return Unsupported("pl.TileView(...) outside the annotation of an assignment")
            item = item[:3]
        if not isinstance(item, tuple) or len(item) not in (2, 3):
            raise TypeError("use pl.Tile[[dims...], dtype] or pl.Tile[[dims...], dtype, space]")
        shape, dtype = item[0], item[1]
        space = item[2] if len(item) == 3 else None
        if space is not None and not isinstance(space, MemorySpace):
            raise TypeError(f"Tile memory space must be a pl.MemorySpace, got {space!r}")
        return TileType(_check_shape(shape, False, "Tile"), _check_dtype(dtype, "Tile"), space)


class _ScalarFactory:
    def __getitem__(self, dtype) -> ScalarType:
        if (found := unsupported_in(dtype)) is not None:
            return found  # reported where the program is compiled
        return ScalarType(_check_dtype(dtype, "Scalar"))


class _DirectionFactory:
    def __init__(self, direction: ParamDirection):
        self.direction = direction

    def __getitem__(self, inner) -> ParamType:
        if (found := unsupported_in(inner)) is not None:
            return found  # reported where the program is compiled
        if inner is Tensor:  # `pl.Out[pl.Tensor]`: shaped by the call
            return ParamType(self.direction, SHAPELESS)
        if not isinstance(inner, TensorType):
            raise TypeError(f"pl.{self.direction.name}[...] takes a pl.Tensor, got {inner!r}")
        return ParamType(self.direction, inner)


Tensor = _TensorFactory()
Tile = _TileFactory()
Scalar = _ScalarFactory()
Out = _DirectionFactory(ParamDirection.Out)
InOut = _DirectionFactory(ParamDirection.InOut)


def param_annotation(ann):
    """A parameter's annotation in the form the lowering reads: a bare
    `pl.Tensor` is SHAPELESS, a bare dtype (`scale: pl.FP32`, pypto's
    spelling) a scalar of it."""
    if ann is Tensor:
        return SHAPELESS
    if isinstance(ann, DType):
        return ScalarType(ann)
    return ann


def is_shapeless(ann) -> bool:
    """Whether a parameter annotated `ann` takes its type from its call."""
    ann = param_annotation(ann)
    if isinstance(ann, ParamType):
        ann = ann.inner
    return ann is SHAPELESS or ann is CAPTURED
