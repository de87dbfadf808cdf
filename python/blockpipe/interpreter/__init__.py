"""Interpreter mode (BLOCKPIPE_INTERPRET=1), as Triton's TRITON_INTERPRET=1.

`blockpipe.compile(Program)` then checks the program as the compiler does
(the same CompileErrors at the same lines) but builds no C++: it returns an
InterpretedProgram, whose call runs the program's own Python functions with
each `pl.*` operation bound to NumPy. The orchestration runs once; each
kernel call runs the kernel once per block, in block order, with
`pl.tile.get_block_idx()` the block's index. Tiles are NumPy arrays (a
`Tile` subclass that also knows its valid shape), so a breakpoint in a
kernel (`breakpoint()`, pdb, an IDE's) stops there with the tiles in
hand. A mesh program runs its orchestration on each device, a thread per
device taking turns (interpreter.mesh); a Pipeline function runs its
stages one microbatch after the other. Elementwise operations and
reductions run the op table's NumPy
references; a construct the interpreter does not run is a CompileError
naming it at the user's line, never a different answer.
"""

from __future__ import annotations

import inspect
import os
from typing import Optional

from blockpipe.interpreter import runner  # noqa: F401 - interpreter.runner
from blockpipe.interpreter.state import (
    Tile,  # noqa: F401 - blockpipe.interpreter.Tile
    annotations_of,
)
from blockpipe.language.program import Program
from blockpipe.language.types import FunctionType, ParamDirection, ParamType

ENVIRONMENT = "BLOCKPIPE_INTERPRET"


def enabled() -> bool:
    """Whether programs are interpreted instead of built (BLOCKPIPE_INTERPRET=1)."""
    return os.environ.get(ENVIRONMENT) == "1"


class InterpretedProgram:
    """What `blockpipe.compile()` returns in interpreter mode: called like a
    CompiledProgram (positionally, by name, or without its Out arrays),
    it runs the program on NumPy: an orchestration on every device of a
    mesh of `devices` (axis 0 of each array is the device), a Pipeline
    function on its microbatches. Out/InOut arrays are written in place
    once the whole call succeeded; a call that fails leaves them as they
    were."""

    target = "interpret"

    def __init__(self, program: Program, devices: Optional[int] = None):
        self.program = program
        self.devices = devices or 1

    def __repr__(self) -> str:
        return f"<InterpretedProgram {self.program.name}>"

    def __call__(self, *args, **kwargs):
        return self.run(None, *args, **kwargs)

    def _entry(self, name: Optional[str]):
        """CompiledProgram's choice: `main`, the only pipeline, or the only
        orchestration."""
        functions = self.program.functions.items()
        orchestrations = {n: s for n, s in functions if s.kind is FunctionType.Orchestration}
        pipelines = {n: s for n, s in functions if s.kind is FunctionType.Pipeline}
        entries = {**orchestrations, **pipelines}
        if name is None:
            if "main" in entries:
                name = "main"
            elif len(pipelines) == 1:
                name = next(iter(pipelines))
            elif len(orchestrations) == 1 and not pipelines:
                name = next(iter(orchestrations))
            else:
                raise ValueError(
                    f"program {self.program.name} has orchestrations and pipelines "
                    f"{', '.join(entries) or '(none)'}; use .run(name, ...)"
                )
        if name not in entries:
            raise ValueError(
                f"program {self.program.name} has no orchestration or pipeline '{name}'"
            )
        return entries[name]

    def run(self, orchestration: Optional[str], *args, **kwargs):
        spec = self._entry(orchestration)
        fn = spec.pyfunc
        pipeline = spec.kind is FunctionType.Pipeline
        # A mesh call's arrays carry the device on axis 0; a pipeline's are whole.
        devices = self.devices if self.devices > 1 and not pipeline else None
        params = list(inspect.signature(fn).parameters.values())[1:]
        directions = _directions(fn, [p.name for p in params])
        label = f"{self.program.name}.{spec.name}"
        outs = [i for i, d in enumerate(directions) if d is not ParamDirection.In]
        # A call may leave out its Out arrays (not its InOut ones), as compiled.
        new = [i for i, d in enumerate(directions) if d is ParamDirection.Out]
        if not kwargs and new and len(args) == len(params) - len(new):
            args = _with_new_outputs(fn, params, new, args, devices)
        else:
            try:
                bound = inspect.signature(fn).bind(None, *args, **kwargs)
            except TypeError as error:
                raise ValueError(f"{label}: {error}") from None
            args = tuple(bound.args[1:])
        _check_arguments(fn, params, args, label, devices)
        writes = [d is not ParamDirection.In for d in directions]
        copies = tuple(runner.copy_arguments(list(args), writes))
        this = runner.Self(self.program)
        if pipeline:
            runner.run_pipeline(spec, copies, this)
        elif devices:
            runner.run_mesh(fn, copies, this, devices)
        else:
            runner.run_entry(fn, copies, this=this)
        runner.write_back(list(args), copies, writes)
        results = [args[i] for i in outs]
        if not results:
            return None
        return results[0] if len(results) == 1 else tuple(results)


def _directions(fn, names) -> list:
    found = annotations_of(fn)
    return [
        found[n].direction if isinstance(found.get(n), ParamType) else ParamDirection.In
        for n in names
    ]


def _check_arguments(fn, params, args, label: str, devices: Optional[int]) -> None:
    """A ValueError naming the parameter for an array whose dtype or fixed
    dims differ from its annotation (after the device axis of a mesh
    call), before anything runs (as compiled)."""
    import numpy as np

    from blockpipe.interpreter.state import numpy_dtype
    from blockpipe.language.types import TensorType

    found = annotations_of(fn)
    lead = [devices] if devices else []
    for p, value in zip(params, args):
        ann = found.get(p.name)
        ann = ann.inner if isinstance(ann, ParamType) else ann
        if not isinstance(ann, TensorType):
            continue
        if not isinstance(value, np.ndarray):
            raise ValueError(f"{label}: parameter '{p.name}' takes an array, got {value!r}")
        shape = lead + list(ann.shape)
        fixed = all(isinstance(d, int) for d in shape)
        wrong_devices = lead and value.shape[:1] != tuple(lead)
        if value.ndim != len(shape) or fixed and list(value.shape) != shape or wrong_devices:
            raise ValueError(
                f"{label}: parameter '{p.name}' must have shape {shape}, got {list(value.shape)}"
            )
        if value.dtype != numpy_dtype(ann.dtype):
            raise ValueError(
                f"{label}: parameter '{p.name}' must have dtype {numpy_dtype(ann.dtype)}, "
                f"got {value.dtype}"
            )


def _with_new_outputs(fn, params, outs, args, devices: Optional[int]) -> tuple:
    """`args` with zero arrays for the Out parameters left out (pypto's
    return style), with the device axis first on a mesh."""
    import numpy as np

    from blockpipe.interpreter.state import numpy_dtype

    found = annotations_of(fn)
    given = iter(args)
    values = []
    for i, p in enumerate(params):
        if i not in outs:
            values.append(next(given))
            continue
        inner = found[p.name].inner
        shape = getattr(inner, "shape", None)
        if shape is None or any(not isinstance(d, int) for d in shape):
            raise ValueError(
                f"output '{p.name}' has a dynamic shape, so a call must pass its array"
            )
        values.append(
            np.zeros(([devices] if devices else []) + list(shape), numpy_dtype(inner.dtype))
        )
    return tuple(values)


def run_jit(jit, args: tuple):
    """A call of the @pl.jit function `jit` on `args` (arrays, in
    parameter order), interpreted: checked by the compiler once per
    specialization, then its own function run on NumPy."""

    jit._compiled(list(args))  # the same CompileErrors, cached per specialization
    directions = jit._directions()
    writes = [d is not ParamDirection.In for d in directions]
    copies = runner.copy_arguments(list(args), writes)
    runner.run_entry(jit._fn, tuple(copies))
    runner.write_back(list(args), copies, writes)


def interpret(program: Program, target: str = "cpu-sim", devices: Optional[int] = None):
    """The InterpretedProgram of `program`, checked by the compiler's
    front end and passes first (no C++ is made or built)."""
    from blockpipe.compiler import compile_to_cpp
    from blockpipe.language.lowering import mesh_size

    compile_to_cpp(program, target, devices)
    return InterpretedProgram(program, mesh_size(program.functions, devices))
