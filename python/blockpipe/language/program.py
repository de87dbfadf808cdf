"""`@pl.program` and `@pl.function`: collecting a program's functions."""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Optional

from blockpipe.language.types import FunctionType, SplitMode
from blockpipe.language.unsupported import Unsupported, unsupported_in


@dataclass
class FunctionSpec:
    """A method marked with `@pl.function`."""

    pyfunc: Callable
    kind: FunctionType
    device: Optional[int] = None
    microbatches: Optional[int] = None
    schedule: Optional[str] = None
    # A pypto feature its decorator asks for that blockpipe lacks: compiling
    # the program is then an error at the decorator.
    unsupported: Optional[str] = None
    # An InCore function, or a kernel outlined from a scope
    # (blockpipe.language.outline): a tensor used where a tile is expected
    # is loaded whole.
    tensor_ops: bool = False
    # `attrs={"split": mode}`: the vector half runs on both AIV sub-blocks.
    split: SplitMode = SplitMode.NONE
    # `pl.cross_core_slot(slot_num=n)` of the scope it was outlined from: the
    # slots of the pipe between its cube and vector work.
    slot_num: Optional[int] = None
    # `attrs={"dual_aiv_dispatch": True}`: pypto runs it on both AIV
    # sub-blocks alike; blockpipe on sub-block 0 (see `function`).
    dual_aiv_dispatch: bool = False
    # Its parsed source, for a function not read from a method of a class
    # (@pl.jit's); else read from `pyfunc`.
    source: Any = None

    @property
    def name(self) -> str:
        return self.pyfunc.__name__


def function(
    _fn: Optional[Callable] = None,
    *,
    type: FunctionType = FunctionType.InCore,  # noqa: A002 - pypto's keyword
    device: Optional[int] = None,
    microbatches: Optional[int] = None,
    schedule: Optional[str] = None,
    attrs: Optional[dict] = None,
    level: Any = None,
    role: Any = None,
    strict_ssa: Any = None,
):
    """Marks a method of a `@pl.program` class as a blockpipe function.

    `device=i` places an orchestration on device i of the mesh (a pipeline
    stage). A `Pipeline` function runs its stages on `microbatches`
    microbatches in the order `schedule` ("gpipe", the default, or
    "interleaved" when a device holds several stages) gives.

    `attrs={"split": pl.SplitMode.UP_DOWN}` (or LEFT_RIGHT) on a kernel runs
    its vector half on both AIV sub-blocks of the core group, each on half
    the rows (columns) of every vector tile; the code is written for whole
    tiles and `pl.tile.get_subblock_idx()` says which half runs.
    `attrs={"dual_aiv_dispatch": True}` (pypto's: both AIV sub-blocks run an
    unsplit vector function, each computing all of it, the cube taking
    sub-block 0's pushes) is accepted: blockpipe runs such a function once
    per block, on sub-block 0, which computes the same; such a function
    may not call `pl.tile.get_subblock_idx()` (pypto's second lane would
    see 1), a CompileError at the call.

    pypto's other `attrs=`, `level=`, `role=`, `strict_ssa=` are accepted
    here; compiling the program is then a CompileError naming them at the
    decorator."""
    unsupported = unsupported_in(type)
    split = SplitMode.NONE
    dual = False
    if isinstance(attrs, dict) and set(attrs) <= {"split", "dual_aiv_dispatch"}:
        split = attrs.get("split", SplitMode.NONE)
        if not isinstance(split, SplitMode):
            raise TypeError(
                f"pl.function(attrs={{'split': ...}}) takes a pl.SplitMode, got {split!r}"
            )
        if type in (FunctionType.Orchestration, FunctionType.Pipeline):
            raise TypeError(
                f"pl.function(attrs={attrs!r}) is for kernels (InCore, AIC, AIV, Group), "
                f"not {type.name} functions"
            )
        if not isinstance(attrs.get("dual_aiv_dispatch", False), bool):
            raise TypeError("pl.function(attrs={'dual_aiv_dispatch': ...}) takes True or False")
        dual = attrs.get("dual_aiv_dispatch", False)
        attrs = None
    for keyword, value in (
        ("attrs", attrs),
        ("level", level),
        ("role", role),
        ("strict_ssa", strict_ssa),
    ):
        if unsupported is None and value is not None:
            unsupported = unsupported_in(value) or Unsupported(f"pl.function({keyword}=...)")
    if unsupported is not None:

        def defer(fn: Callable) -> Callable:
            fn.__bp_function__ = FunctionSpec(
                fn, FunctionType.InCore, unsupported=unsupported.message
            )
            return fn

        return defer(_fn) if _fn is not None else defer
    if not isinstance(type, FunctionType):
        raise TypeError(f"pl.function(type=...) takes a pl.FunctionType, got {type!r}")
    if device is not None and type is not FunctionType.Orchestration:
        raise TypeError("pl.function(device=...) is only for orchestration functions")
    for keyword, value in (("microbatches", microbatches), ("schedule", schedule)):
        if value is not None and type is not FunctionType.Pipeline:
            raise TypeError(f"pl.function({keyword}=...) is only for pipeline functions")
    for keyword, value in (("device", device), ("microbatches", microbatches)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise TypeError(f"pl.function({keyword}=...) takes an int, got {value!r}")
    if schedule is not None and not isinstance(schedule, str):
        raise TypeError(f"pl.function(schedule=...) takes a string, got {schedule!r}")

    def mark(fn: Callable) -> Callable:
        fn.__bp_function__ = FunctionSpec(
            fn,
            type,
            device,
            microbatches,
            schedule,
            split=split,
            dual_aiv_dispatch=dual,
            # pypto's InCore functions take tensor-level ops too.
            tensor_ops=type is FunctionType.InCore,
        )
        return fn

    return mark(_fn) if _fn is not None else mark


@dataclass
class Program:
    """A `@pl.program` class: its functions in definition order."""

    name: str
    cls: type
    functions: Dict[str, FunctionSpec] = field(default_factory=dict)
    source_file: str = "<unknown>"
    # The local names of the function that defined the class (a program
    # made in a factory): string annotations may name them.
    scope: Dict[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:
        kinds = ", ".join(f"{n}: {f.kind.name}" for n, f in self.functions.items())
        return f"<blockpipe program {self.name} ({kinds})>"


def program(cls: type) -> Program:
    """Turns a class whose methods are `@pl.function`s into a Program."""
    if not inspect.isclass(cls):
        raise TypeError("@pl.program decorates a class")
    functions = {}
    for name, member in cls.__dict__.items():
        spec = getattr(member, "__bp_function__", None)
        if spec is not None:
            functions[name] = spec
    if not functions:
        raise TypeError(f"program {cls.__name__} has no @pl.function methods")
    try:
        source_file = inspect.getsourcefile(cls) or "<unknown>"
    except (TypeError, OSError):  # python -c, exec: no file; compile() says so
        source_file = "<unknown>"
    caller = inspect.currentframe().f_back
    scope = (
        dict(caller.f_locals) if caller is not None and caller.f_code.co_name != "<module>" else {}
    )
    del caller
    return Program(cls.__name__, cls, functions, source_file, scope)
