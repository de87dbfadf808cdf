"""`blockpipe.compile()`: a `@pl.program` to a runnable CompiledProgram.

Stages: lower the Python AST to bp IR, run the pass pipeline, emit C++,
write the output directory, build it (cached), and load it on a device when
first called.
"""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import re
from typing import Dict, List, Optional, Tuple

import numpy as np

from blockpipe import errors
from blockpipe.build import build_library, cache_root

# The dtype table as Python reads it (dtypes.py); the names stay importable
# from here.
from blockpipe.dtypes import (  # noqa: F401
    _DTYPES,
    _FLOAT_SCALARS,
    _INT_LIMITS,
    _numpy_dtype,
    array_dtype_names,
    dtype_of_array,
)
from blockpipe.errors import CompileError, execution_error
from blockpipe.language.program import Program


class CompiledProgram:
    """A compiled program: its artifacts, its IR after each pass, and a
    callable that runs an orchestration on numpy arrays."""

    def __init__(
        self,
        program: Program,
        output_dir: pathlib.Path,
        artifacts: Dict[str, str],
        library: pathlib.Path,
        target: str,
        devices: Optional[int],
        dumps: Optional[Tuple[str, List[Tuple[str, str]]]] = None,
        named_dims: Optional[dict] = None,
        device: Optional[str] = None,
    ):
        self.program = program
        # Per function, its parameters' pl.dynamic("M") dims, which must
        # agree at call time.
        self._named_dims = named_dims or {}
        self.output_dir = output_dir
        self.artifacts = artifacts
        self.library_path = library
        self.target = target
        # The device kind that runs it: the target's own, or cuda-emu for a
        # cuda program built for the CPU emulation of CUDA.
        self.device = device or target
        self._requested_devices = devices
        # (input IR, [(pass, IR after it), ...]): printed only when asked for
        # (dump_passes, or ir() / passes later, which compile once more).
        self._dumps = dumps
        from blockpipe import _core

        # kernel_config.json, read by the runtime's one reader.
        self.manifest = _core.parse_manifest(artifacts["kernel_config.json"])
        self._orchestrations = {o.name: o for o in self.manifest.orchestrations}
        # Pipelines run their stages (orchestrations placed on devices) on
        # microbatches; their arrays are whole (no device axis).
        self._pipelines = {p.name: p for p in self.manifest.pipelines}
        # A mesh program runs on `devices` devices; its arrays carry the
        # device on axis 0.
        self.devices = self.manifest.mesh.devices
        self._device = None
        self._mesh = None
        self._library = None
        self._plans: Dict[Optional[str], _CallPlan] = {}
        # The single-device entry's calls in one step, once run made one.
        self._call = None
        self._arities: Dict[Optional[str], int] = {}

    # ------------------------------------------------------------------ IR

    def _ir_dumps(self) -> Tuple[str, List[Tuple[str, str]]]:
        if self._dumps is None:
            _, input_ir, pass_ir = compile_to_cpp(
                self.program, self.target, self._requested_devices, capture=True
            )
            self._dumps = (input_ir, pass_ir)
        return self._dumps

    @property
    def passes(self) -> List[str]:
        return [name for name, _ in self._ir_dumps()[1]]

    def ir(self, after_pass: Optional[str] = None) -> str:
        """The IR before any pass (`None` or "input"), after a pass (its flag,
        with or without the `bp-` prefix), or after the last one ("final")."""
        input_ir, pass_ir = self._ir_dumps()
        if after_pass in (None, "input"):
            return input_ir
        if after_pass == "final":
            return pass_ir[-1][1] if pass_ir else input_ir
        wanted = after_pass if after_pass.startswith("bp-") else "bp-" + after_pass
        for name, text in pass_ir:
            if name == wanted:
                return text
        raise KeyError(f"no pass '{after_pass}'; the pipeline ran {', '.join(self.passes)}")

    # ----------------------------------------------------------------- run

    def _entry(self, name: Optional[str]):
        entries = {**self._orchestrations, **self._pipelines}
        if name is None:
            if "main" in entries:
                name = "main"
            elif len(self._pipelines) == 1:
                name = next(iter(self._pipelines))
            elif len(self._orchestrations) == 1 and not self._pipelines:
                name = next(iter(self._orchestrations))
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

    def _positional(self, orchestration: Optional[str], args: tuple, kwargs: dict) -> tuple:
        """`args` with the keyword arguments in their parameters' places;
        ValueError naming the parameter for a name it does not have, one
        given twice, or one left without a value. Called with exactly the
        parameters that are not Out (pypto's return style), the Out ones
        are made here (zeros) and the call returns them."""
        entry = self._entry(orchestration)
        names = [p.name for p in entry.signature]
        label = f"{self.program.name}.{entry.name}"
        outs = [i for i, p in enumerate(entry.signature) if p.kind == "tensor" and p.dir == "out"]
        if outs and not kwargs and len(args) == len(names) - len(outs):
            # Made as the caller's arrays are (an ndarray subclass stays one).
            kind = next((type(a) for a in args if isinstance(a, np.ndarray)), np.ndarray)
            given = iter(args)
            return tuple(
                self._new_output(label, p).view(kind) if i in outs else next(given)
                for i, p in enumerate(entry.signature)
            )
        return bind_by_name(label, names, args, kwargs)

    def _new_output(self, label: str, param) -> np.ndarray:
        """A zero array for Out parameter `param` of a return-style call (a
        mesh program's with the device axis first)."""
        if any(dim is None for dim in param.shape):
            raise ValueError(
                f"{label}: output '{param.name}' has a dynamic shape, so a call must pass its array"
            )
        shape = ((self.devices,) if self.devices > 1 and not self._pipelines else ()) + tuple(
            param.shape
        )
        return np.zeros(shape, _numpy_dtype(param.dtype))

    def _arity(self, orchestration: Optional[str]) -> int:
        arity = self._arities.get(orchestration)
        if arity is None:
            arity = self._arities[orchestration] = len(self._entry(orchestration).signature)
        return arity

    # pypto's CompiledProgram metadata, of the entry a plain call runs.

    @property
    def param_names(self) -> List[str]:
        """The names of the entry's parameters, in order."""
        return [p.name for p in self._entry(None).signature]

    @property
    def output_indices(self) -> List[int]:
        """The positions of the entry's Out tensor parameters (those a call
        may leave out, to have them made and returned)."""
        return [
            i
            for i, p in enumerate(self._entry(None).signature)
            if p.kind == "tensor" and p.dir == "out"
        ]

    @property
    def has_return(self) -> bool:
        """Whether the entry's function returns values (its Out/InOut
        tensors, bp-normalize-return-order's order)."""
        import ast

        from blockpipe.language.source import parse_function

        spec = self.program.functions.get(self._entry(None).name)
        if spec is None:
            return False
        tree = parse_function(spec, self.program.source_file).tree
        return any(isinstance(n, ast.Return) and n.value is not None for n in ast.walk(tree))

    def _outs(self, orchestration: Optional[str]) -> int:
        """The number of Out tensors of `orchestration`."""
        return sum(
            p.kind == "tensor" and p.dir == "out" for p in self._entry(orchestration).signature
        )

    def _complete(self, orchestration: Optional[str], args: tuple, kwargs: dict) -> tuple:
        """The arguments of a call given by name, or without its Out arrays;
        pypto's `config=` (a RunConfig, unless the entry has a parameter of
        that name) is dropped: blockpipe runs on the target it compiled
        for."""
        if "config" in kwargs and all(
            p.name != "config" for p in self._entry(orchestration).signature
        ):
            kwargs = {k: v for k, v in kwargs.items() if k != "config"}
        if kwargs or len(args) == self._arity(orchestration) - self._outs(orchestration):
            return self._positional(orchestration, args, kwargs)
        return args

    def __call__(self, *args, **kwargs):
        """Runs the program's `main`, its only pipeline, or its only
        orchestration. Arguments go by position or by parameter name; the
        Out arrays may be left out (pypto's return style): they are made
        and returned."""
        if kwargs or len(args) < self._arity(None):
            args = self._complete(None, args, kwargs)
        call = self._call
        if call is not None:
            return call(args)
        return self.run(None, *args)

    def run(self, orchestration: Optional[str], *args, **kwargs):
        """Runs `orchestration` (or a pipeline) on `args`; Out/InOut arrays
        are written in place, once the whole call succeeded, and returned
        (one array, a tuple, or None).

        Under mpirun a mesh or Pipeline call is collective: every rank makes
        it with the same arguments, runs its devices' part, and ends with
        the whole Out arrays (see blockpipe.distributed)."""
        if kwargs or len(args) < self._arity(orchestration):
            args = self._complete(orchestration, args, kwargs)
        plan = self._plans.get(orchestration)
        if plan is None:
            plan = self._plans[orchestration] = _CallPlan(self, self._entry(orchestration))
        entry, pipeline, mesh = plan.entry, plan.pipeline, plan.mesh
        prepared = plan.check.prepare(args)
        if plan.named_dims:
            self._check_named_dims(entry.name, args, 1 if mesh else 0)
        _runtime = plan.runtime
        if self._library is None:
            self._library = _runtime.Library(str(self.library_path))
        runtime_params = plan.runtime_params
        if (mesh or pipeline) and self._mesh is None:
            from blockpipe import distributed

            # Under mpirun each rank opens the same mesh and hosts a share
            # of its devices.
            self._mesh = _runtime.Mesh(
                self.devices,
                label=self.program.name,
                transport=distributed.transport(),
                target=self.device,
            )
        if pipeline:
            _runtime.run_pipeline(
                self._mesh,
                self._library,
                self.artifacts["kernel_config.json"],
                entry.name,
                runtime_params,
                prepared,
            )
        elif mesh:
            _runtime.run_mesh_orchestration(
                self._mesh, self._library, entry.symbol, runtime_params, prepared
            )
        else:
            if self._device is None:
                # A device of the target the program was compiled for: the
                # runtime says so when it has no driver for it.
                self._device = _runtime.Device(label=self.program.name, target=self.device)
            _runtime.run_orchestration(
                self._device, self._library, entry.symbol, runtime_params, prepared
            )
            if orchestration is None and not plan.named_dims:
                self._call = _runtime.Call(
                    self._device,
                    self._library,
                    entry.symbol,
                    runtime_params,
                    plan.check,
                    plan.outs,
                    errors.warn_runtime,
                )
        warnings = _runtime.take_warnings()
        if warnings:
            errors.warn_runtime(warnings)
        outs = [args[i] for i in plan.outs]
        if not outs:
            return None
        return outs[0] if len(outs) == 1 else tuple(outs)

    def _check_named_dims(self, name: str, args, axis0: int) -> None:
        """Dims named alike (pl.dynamic("M")) must have one extent."""
        seen: Dict[str, Tuple[str, int, int]] = {}
        for index, pname, names in self._named_dims.get(name, ()):
            for axis, dim in enumerate(names):
                if dim is None:
                    continue
                extent = int(args[index].shape[axis0 + axis])
                first = seen.setdefault(dim, (pname, axis, extent))
                if first[2] != extent:
                    raise ValueError(
                        f"dimension '{dim}' is {first[2]} in parameter '{first[0]}' (axis "
                        f"{first[1]}) but {extent} in parameter '{pname}' (axis {axis}); "
                        "dims named alike must agree"
                    )

    def transfer_counters(self) -> Dict[str, int]:
        """What the mesh's channels moved so far: bytes device to device
        (within a process), bytes through a host buffer, bytes that crossed
        from another MPI rank, transfers and channels created. Under MPI
        they are this rank's (`rank`): what its devices received, each
        transfer counted once, by the rank receiving it; sum them over the
        ranks for the job's."""
        from blockpipe import distributed

        counters = {
            "device_to_device_bytes": 0,
            "host_staged_bytes": 0,
            "cross_rank_bytes": 0,
            "transfers": 0,
            "channels_created": 0,
        }
        if self._mesh is not None:
            counters.update(self._mesh.counters())
        counters["rank"] = distributed.rank()
        return counters

    def __repr__(self) -> str:
        return f"<CompiledProgram {self.program.name} at {self.output_dir}>"


class _CallPlan:
    """What every call of one entry needs, worked out at its first call: the
    runtime's parameter list, the Out arrays to return, and the check of the
    arguments (the runtime's ArgCheck, which raises ValueError naming the
    parameter)."""

    def __init__(self, program: CompiledProgram, entry):
        from blockpipe import _runtime

        execution_error()  # what a failed call raises, with its docstring
        self.entry = entry
        self.params = entry.signature
        self.pipeline = entry.name in program._pipelines
        self.mesh = program.devices > 1 and not self.pipeline
        self.runtime = _runtime
        self.runtime_params = _runtime.ParamList(
            [
                _runtime.Param(
                    p.name, p.kind == "tensor", p.dtype, p.dir, p.written_whole, p.in_place
                )
                for p in self.params
            ]
        )
        self.named_dims = bool(program._named_dims.get(entry.name))
        self.outs = [i for i, p in enumerate(self.params) if p.kind == "tensor" and p.dir != "in"]
        specs = []
        for p in self.params:
            limits = _INT_LIMITS.get(p.dtype)
            specs.append(
                {
                    "name": p.name,
                    "tensor": p.kind == "tensor",
                    "dtype": p.dtype,
                    "numpy": _numpy_dtype(p.dtype),
                    "shape": list(p.shape),
                    "output": p.dir != "in",
                    "is_float": p.dtype in _FLOAT_SCALARS,
                    "limits": limits,
                }
            )
        self.check = _runtime.ArgCheck(
            f"{program.program.name}.{entry.name}", specs, program.devices if self.mesh else 0
        )


def _write_tree(output_dir: pathlib.Path, files: Dict[str, str]) -> None:
    """Writes files whose content changed (keeps timestamps stable)."""
    for rel, text in files.items():
        path = output_dir / rel
        if path.is_file() and path.read_text() == text:
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        # Unique per process and host: ranks of an MPI job may share the
        # directory.
        tmp = path.with_name(path.name + f".tmp{os.uname().nodename}.{os.getpid()}")
        tmp.write_text(text)
        os.replace(tmp, path)


def _project_name(name: str) -> str:
    snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()
    snake = re.sub(r"[^a-z0-9_]", "_", snake).strip("_") or "program"
    return snake if not snake[0].isdigit() else "p_" + snake


def compile_to_cpp(
    program: Program,
    target: str,
    devices: Optional[int] = None,
    project: Optional[str] = None,
    capture: bool = False,
    named_dims: Optional[dict] = None,
) -> Tuple[Dict[str, str], Optional[str], List[Tuple[str, str]]]:
    """One compile session: lowers `program`, runs the pass pipeline on the
    module in place and, given a `project` name, emits its C++ files. With
    `capture`, also the input IR and the IR after each pass (with
    locations); otherwise no IR text is printed at all.
    Returns (files, input IR, [(pass, IR), ...])."""
    from blockpipe import _core
    from blockpipe.language.lowering import lower_program

    session = lower_program(program, _core, devices=devices, named_dims=named_dims)
    input_ir = session.text(True) if capture else None
    pass_ir = session.run_pipeline(target, capture_each_pass=capture, print_locations=True)
    errors.warn(session.warnings())
    files = dict(session.emit_cpp(project)) if project is not None else {}
    return files, input_ir, pass_ir


# The device kinds that run each target's programs; the first is the default.
DEVICES = {"cpu-sim": ("cpu-sim",), "cuda": ("cuda", "cuda-emu")}


def _device_for(target: str, device: Optional[str]) -> str:
    """The device kind a `target` program is built for: `device` when given,
    else cuda-emu for cuda under BLOCKPIPE_CUDA_EMU=1, else the target's."""
    kinds = DEVICES.get(target, (target,))
    if device is None:
        if target == "cuda" and os.environ.get("BLOCKPIPE_CUDA_EMU") == "1":
            return "cuda-emu"
        return kinds[0]
    if device not in kinds:
        raise ValueError(
            f"device '{device}' does not run programs compiled for target '{target}'; "
            f"those run on: {', '.join(kinds)}"
        )
    return device


def compile(
    program: Program,
    output_dir: Optional[os.PathLike] = None,
    target: str = "cpu-sim",
    dump_passes: bool = False,
    quiet: Optional[bool] = None,
    devices: Optional[int] = None,
    device: Optional[str] = None,
) -> CompiledProgram:
    """Compiles a `@pl.program` and builds it; see CompiledProgram.

    `devices=N` compiles a mesh program: its orchestration runs on each of N
    devices (`pl.device_id()` says which), transfers between them go through
    `pl.send`/`pl.recv`/`pl.collective_permute`, and every array passed to
    it carries the device on axis 0.

    `output_dir` receives the generated project (default: a directory in the
    cache named after the program's content). With `dump_passes` the IR after
    each pass is written to `passes/NN_<pass>.mlir` as well. `quiet`
    silences the build status line (default: shown only on a terminal).
    Errors in the program raise CompileError at the user's line.

    `device` is the kind of device that will run it: the target's own (the
    default), or for target "cuda" also "cuda-emu", the CUDA target's code
    built by the host compiler against a CPU emulation of CUDA (a test
    vehicle: no GPU needed, no timing that means anything; the default
    under BLOCKPIPE_CUDA_EMU=1).
    """
    if not isinstance(program, Program):
        raise TypeError(f"blockpipe.compile takes a @pl.program class, got {program!r}")
    from blockpipe import _core

    if devices is not None and (
        isinstance(devices, bool) or not isinstance(devices, int) or devices < 1
    ):
        raise ValueError(f"devices must be a positive integer, got {devices!r}")
    if target not in _core.bundled_targets():
        raise ValueError(
            f"unknown target '{target}'; available: {', '.join(_core.bundled_targets())}"
        )
    device = _device_for(target, device)
    from blockpipe import interpreter

    if interpreter.enabled():
        # BLOCKPIPE_INTERPRET=1: checked as compiled, run in Python on NumPy.
        return interpreter.interpret(program, target, devices)
    project = _project_name(program.name)
    named_dims: dict = {}
    files, input_ir, pass_ir = compile_to_cpp(
        program, target, devices, project, capture=dump_passes, named_dims=named_dims
    )
    artifacts = dict(files)
    if dump_passes:
        for index, (name, text) in enumerate(pass_ir, start=1):
            artifacts[f"passes/{index:02d}_{name}.mlir"] = text
        artifacts["passes/00_input.mlir"] = input_ir
    if output_dir is None:
        digest = hashlib.sha256(json.dumps(sorted(artifacts.items())).encode()).hexdigest()[:16]
        out = cache_root() / "programs" / f"{project}-{digest}"
    else:
        out = pathlib.Path(output_dir)
    _write_tree(out, artifacts)
    # Codegen may adjust the name for C++ (a program called `Div` builds
    # namespace and library `div_`, clear of the C library's div).
    from blockpipe import _core

    library_project = _core.parse_manifest(files["kernel_config.json"]).library
    library = build_library(out, files, library_project, quiet=quiet, emulated=device == "cuda-emu")
    return CompiledProgram(
        program,
        out.resolve(),
        artifacts,
        library,
        target,
        devices,
        (input_ir, pass_ir) if dump_passes else None,
        named_dims,
        device,
    )


__all__ = ["compile", "CompiledProgram", "CompileError"]


def bind_by_name(label: str, names: list, args: tuple, kwargs: dict, excess=ValueError) -> tuple:
    """`args` with `kwargs` in their parameters' places, for a call of
    `label` whose parameters are `names`: a ValueError naming a parameter
    it does not have, one given twice, or one left without a value (and
    `excess` for more arguments than parameters)."""
    if len(args) > len(names):
        raise excess(f"{label} takes {len(names)} arguments ({', '.join(names)}), got {len(args)}")
    missing = object()
    values = list(args) + [missing] * (len(names) - len(args))
    for name, value in kwargs.items():
        if name not in names:
            raise ValueError(
                f"{label} has no parameter '{name}'; its parameters: {', '.join(names)}"
            )
        index = names.index(name)
        if values[index] is not missing:
            raise ValueError(
                f"{label}: parameter '{name}' is given twice (by position and by name)"
            )
        values[index] = value
    absent = [n for n, v in zip(names, values) if v is missing]
    if absent:
        raise ValueError(
            f"{label}: no argument for parameter{'s' if len(absent) > 1 else ''} "
            + ", ".join(f"'{n}'" for n in absent)
        )
    return tuple(values)
