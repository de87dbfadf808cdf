"""Interpreter mode (BLOCKPIPE_INTERPRET=1), as Triton's TRITON_INTERPRET=1.

`blockpipe.compile(Program)` then checks the program as the compiler does
(the same CompileErrors at the same lines) but builds no C++: it returns an
InterpretedProgram, whose call runs the program's own Python functions with
each `pl.*` operation bound to NumPy. The orchestration runs once; each
kernel call runs the kernel once per block, in block order, with
`pl.tile.get_block_idx()` the block's index. Tiles are NumPy arrays (a
`Tile` subclass that also knows its valid shape), so a breakpoint in a
kernel (`breakpoint()`, pdb, an IDE's) stops there with the tiles in
hand. Elementwise operations and reductions run the op table's NumPy
references; a construct the interpreter does not run is a CompileError
naming it at the user's line, never a different answer.
"""

from __future__ import annotations

import inspect
import os
from typing import Optional

from blockpipe.interpreter import runner  # noqa: F401 - interpreter.runner
from blockpipe.interpreter.state import Tile  # noqa: F401 - blockpipe.interpreter.Tile
from blockpipe.language.program import Program
from blockpipe.language.types import FunctionType, ParamDirection, ParamType

ENVIRONMENT = "BLOCKPIPE_INTERPRET"


def enabled() -> bool:
    """Whether programs are interpreted instead of built (BLOCKPIPE_INTERPRET=1)."""
    return os.environ.get(ENVIRONMENT) == "1"


class InterpretedProgram:
    """What `blockpipe.compile()` returns in interpreter mode: called like a
    CompiledProgram (positionally, by name, or without its Out arrays),
    it runs the program on NumPy. Out/InOut arrays are written in place
    once the whole call succeeded; a call that fails leaves them as they
    were."""

    target = "interpret"

    def __init__(self, program: Program):
        self.program = program

    def __repr__(self) -> str:
        return f"<InterpretedProgram {self.program.name}>"

    def __call__(self, *args, **kwargs):
        return self.run(None, *args, **kwargs)

    def _entry(self, name: Optional[str]):
        entries = {
            n: s for n, s in self.program.functions.items() if s.kind is FunctionType.Orchestration
        }
        if name is None:
            if "main" in entries:
                name = "main"
            elif len(entries) == 1:
                name = next(iter(entries))
            else:
                raise ValueError(
                    f"program {self.program.name} has orchestrations "
                    f"{', '.join(entries) or '(none)'}; use .run(name, ...)"
                )
        if name not in entries:
            others = [n for n, s in self.program.functions.items() if s.kind.name == "Pipeline"]
            if name in others:
                from blockpipe.interpreter.state import unsupported

                raise unsupported(f"the pipeline function '{name}'")
            raise ValueError(f"program {self.program.name} has no orchestration '{name}'")
        return entries[name]

    def run(self, orchestration: Optional[str], *args, **kwargs):

        spec = self._entry(orchestration)
        fn = spec.pyfunc
        params = list(inspect.signature(fn).parameters.values())[1:]
        directions = _directions(fn, [p.name for p in params])
        label = f"{self.program.name}.{spec.name}"
        outs = [i for i, d in enumerate(directions) if d is not ParamDirection.In]
        made = not kwargs and outs and len(args) == len(params) - len(outs)
        if made:
            args = _with_new_outputs(fn, params, outs, args)
        else:
            try:
                bound = inspect.signature(fn).bind(None, *args, **kwargs)
            except TypeError as error:
                raise ValueError(f"{label}: {error}") from None
            args = tuple(bound.args[1:])
        _check_arguments(fn, params, args, label)
        writes = [d is not ParamDirection.In for d in directions]
        copies = runner.copy_arguments(list(args), writes)
        runner.run_entry(fn, tuple(copies), this=runner.Self(self.program))
        runner.write_back(list(args), copies, writes)
        results = [args[i] for i in outs]
        if not results:
            return None
        return results[0] if len(results) == 1 else tuple(results)


def _annotations(fn) -> dict:
    try:
        return inspect.get_annotations(fn, eval_str=True)
    except Exception:  # noqa: BLE001 - a string annotation naming what is gone
        return dict(getattr(fn, "__annotations__", {}))


def _directions(fn, names) -> list:
    annotations = _annotations(fn)
    return [
        annotations[n].direction if isinstance(annotations.get(n), ParamType) else ParamDirection.In
        for n in names
    ]


def _check_arguments(fn, params, args, label: str) -> None:
    """A ValueError naming the parameter for an array whose dtype or fixed
    dims differ from its annotation, before anything runs (as compiled)."""
    import numpy as np

    from blockpipe.interpreter.state import numpy_dtype
    from blockpipe.language.types import TensorType

    annotations = _annotations(fn)
    for p, value in zip(params, args):
        ann = annotations.get(p.name)
        ann = ann.inner if isinstance(ann, ParamType) else ann
        if not isinstance(ann, TensorType):
            continue
        if not isinstance(value, np.ndarray):
            raise ValueError(f"{label}: parameter '{p.name}' takes an array, got {value!r}")
        shape = list(ann.shape)
        fixed = all(isinstance(d, int) for d in shape)
        if value.ndim != len(shape) or fixed and list(value.shape) != shape:
            raise ValueError(
                f"{label}: parameter '{p.name}' must have shape {shape}, got {list(value.shape)}"
            )
        if value.dtype != numpy_dtype(ann.dtype):
            raise ValueError(
                f"{label}: parameter '{p.name}' must have dtype {numpy_dtype(ann.dtype)}, "
                f"got {value.dtype}"
            )


def _with_new_outputs(fn, params, outs, args) -> tuple:
    """`args` with zero arrays for the Out parameters left out (pypto's
    return style)."""
    import numpy as np

    from blockpipe.interpreter.state import numpy_dtype

    annotations = _annotations(fn)
    given = iter(args)
    values = []
    for i, p in enumerate(params):
        if i not in outs:
            values.append(next(given))
            continue
        inner = annotations[p.name].inner
        shape = getattr(inner, "shape", None)
        if shape is None or any(not isinstance(d, int) for d in shape):
            raise ValueError(
                f"output '{p.name}' has a dynamic shape, so a call must pass its array"
            )
        values.append(np.zeros(shape, numpy_dtype(inner.dtype)))
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
    from blockpipe.interpreter.state import unsupported

    if devices is not None and devices > 1:
        raise unsupported("a mesh program (devices=)")
    compile_to_cpp(program, target, devices)
    return InterpretedProgram(program)
