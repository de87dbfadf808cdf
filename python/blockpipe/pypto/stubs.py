"""Stand-ins for pypto's Python API outside its language: `pypto.runtime`
(RunConfig, run, TensorSpec, ...), `pypto.ir.compile`, and the enums of
`pypto.backend` and the pass manager.

A program runs on blockpipe's `TARGET` (cpu-sim unless `pypto --target`
says otherwise); pypto's platform, backend and pass options are accepted
and have no effect. A name not stood in for here is `Missing`: naming it
works (imports, annotations, defaults), calling it is a SKIP naming it.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Dict, Optional

from blockpipe.language.unsupported import NotSupportedError

TARGET = "cpu-sim"


class Missing:
    """A pypto name blockpipe does not provide."""

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attr: str) -> Missing:
        if attr.startswith("_"):
            raise AttributeError(attr)
        return Missing(f"{self._name}.{attr}")

    def __call__(self, *args, **kwargs):
        raise NotSupportedError(f"blockpipe lacks {self._name}")

    def __getitem__(self, item) -> Missing:
        return self

    def __or__(self, other) -> Missing:
        return self

    __ror__ = __or__

    def __repr__(self) -> str:
        return f"<pypto's {self._name}: not in blockpipe>"


def missing(module: str, name: str):
    """What `module.name` is when blockpipe lacks it: an exception class for
    an exception's name (so `except X:` works), else a Missing."""
    if name.endswith(("Error", "Exception")):
        return type(name, (Exception,), {"__module__": module})
    return Missing(f"{module}.{name}")


class _ChoiceMeta(type):
    def __getattr__(cls, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        members = cls.__dict__["_members"]
        if name not in members:
            members[name] = cls(name)
        return members[name]


class Choice(metaclass=_ChoiceMeta):
    """A pypto enum whose members only select a choice blockpipe does not
    make (a backend, a strategy, a memory planner): any member name is one."""

    _members: Dict[str, Choice] = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._members = {}

    def __init__(self, name: str):
        self.name = self.value = name

    def __repr__(self) -> str:
        return f"{type(self).__name__}.{self.name}"


class BackendType(Choice):
    pass


class OptimizationStrategy(Choice):
    pass


class MemoryPlanner(Choice):
    pass


class PassDumpLevel(Choice):
    pass


class DiagnosticPhase(Choice):
    pass


class LogLevel(Choice):
    pass


class CoreType(Choice):
    pass


# ------------------------------------------------------------ pypto.runtime


@dataclasses.dataclass
class RunConfig:
    """pypto.runtime.RunConfig: its fields, so tests read and replace them;
    blockpipe uses `rtol` and `atol` (a test case's comparison)."""

    platform: str = "a2a3sim"
    device_id: int = 0
    rtol: float = 1e-5
    atol: float = 1e-5
    strategy: Any = None
    backend_type: Any = None
    dump_passes: Any = False
    save_kernels: bool = False
    save_kernels_dir: Optional[str] = None
    codegen_only: bool = False
    enable_chip_swimlane: Any = 0
    enable_dump_args: int = 0
    enable_pmu: int = 0
    enable_dep_gen: bool = False
    enable_scope_stats: bool = False
    compile_profiling: bool = False
    diagnostic_phase: Any = None
    disabled_diagnostics: Any = None
    golden_data_dir: Optional[str] = None
    aicpu_thread_num: Optional[int] = None
    ring_task_window: Any = None
    ring_heap: Any = None
    ring_dep_pool: Any = None
    distributed_config: Any = None
    analyze_auto_scopes_for_deps: bool = False
    memory_planner: Any = None
    dump_ptoas_passes: bool = False

    def __post_init__(self):
        if self.strategy is None:
            self.strategy = OptimizationStrategy.Default
        if self.backend_type is None:
            self.backend_type = BackendType.Ascend910B


@dataclasses.dataclass
class RunResult:
    __test__ = False

    passed: bool
    test_name: Optional[str] = None
    error: Optional[str] = None
    execution_time: Optional[float] = None
    profile: Optional[dict] = None

    def __str__(self) -> str:
        if self.passed:
            return f"PASS: {self.test_name}" if self.test_name else "PASS"
        return f"FAIL: {self.test_name or ''} - {self.error or ''}"


@dataclasses.dataclass
class ScalarSpec:
    name: str
    value: Any
    ctype: str = "int64"


@dataclasses.dataclass
class TensorSpec:
    """pypto.runtime.TensorSpec (a torch dtype; harness.TensorSpec has a
    DataType)."""

    name: str
    shape: list
    dtype: Any
    init_value: Any = None
    is_output: bool = False

    def create_tensor(self):
        return make_tensor(self.shape, self.dtype, self.init_value)


def make_tensor(shape, dtype, init_value):
    """A tensor as pypto's TensorSpec makes it: zeros for None, a constant,
    a given tensor cast, torch.randn/rand/zeros/ones called with the shape,
    any other callable called with no argument."""
    import torch

    shape = list(shape)
    if init_value is None:
        return torch.zeros(shape, dtype=dtype)
    if isinstance(init_value, (bool, int, float)):
        return torch.full(shape, init_value, dtype=dtype)
    if isinstance(init_value, torch.Tensor):
        return init_value.to(dtype=dtype)
    if callable(init_value):
        if init_value in (torch.randn, torch.rand, torch.zeros, torch.ones):
            return init_value(shape, dtype=dtype)
        return torch.as_tensor(init_value(), dtype=dtype)
    raise TypeError(f"unsupported init_value {init_value!r}")


def as_array(value, index: int = 0, dtype=None):
    """The NumPy array blockpipe runs on for a torch tensor (sharing its
    memory), viewed as `dtype` when it is another dtype of the same size
    (pypto keeps UINT32 data in an int32 tensor)."""
    import numpy as np

    from blockpipe.language.jit import _as_array

    array = _as_array(value, index)
    if isinstance(array, np.ndarray):
        array = np.asarray(array)
        if dtype is not None and array.dtype != dtype and array.dtype.itemsize == dtype.itemsize:
            array = array.view(dtype)
    return array


class _CompiledProgramType(type):
    def __instancecheck__(cls, obj) -> bool:
        # A @pl.jit function's cache holds blockpipe's own CompiledPrograms.
        from blockpipe.compiler import CompiledProgram as Compiled

        return type.__instancecheck__(cls, obj) or isinstance(obj, Compiled)


class CompiledProgram(metaclass=_CompiledProgramType):
    """What pypto's ir.compile and runtime.run return: called with torch
    tensors (outputs written in place) and pypto's `config=`. blockpipe's
    own CompiledProgram is an instance too."""

    def __init__(self, compiled, program=None):
        self.compiled = compiled
        self.program = program
        self.output_dir = str(compiled.output_dir)

    def __call__(self, *args, config: Any = None, **kwargs):
        arrays = [as_array(a, i) for i, a in enumerate(args)]
        result = self.compiled(*arrays, **kwargs)
        # pypto returns torch tensors (or the NumPy stand-in's): the outputs
        # it was given, or new ones for those left out.
        given = {id(array): arg for array, arg in zip(arrays, args)}

        def tensor(array):
            import sys

            import numpy as np

            if id(array) in given:
                return given[id(array)]
            torch = sys.modules.get("torch")
            from_numpy = getattr(torch, "from_numpy", None)
            return from_numpy(array) if from_numpy and isinstance(array, np.ndarray) else array

        return tuple(map(tensor, result)) if isinstance(result, tuple) else tensor(result)

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        raise NotSupportedError(f"blockpipe lacks pypto's CompiledProgram.{name}")


def compile(program, output_dir: Optional[str] = None, **options) -> CompiledProgram:  # noqa: A001 - pypto's name
    """pypto.ir.compile: blockpipe compiles `program` for TARGET (pypto's
    strategy, backend and pass options do not apply)."""
    import blockpipe

    return CompiledProgram(blockpipe.compile(program, target=TARGET, quiet=True), program)


def run(program, *tensors, config: Optional[RunConfig] = None) -> CompiledProgram:
    """pypto.runtime.run: compiles `program` and, given tensors, runs it."""
    compiled = compile(program)
    if tensors and not (config is not None and config.codegen_only):
        compiled(*tensors)
    return compiled


def _no_op(*args, **kwargs) -> None:
    return None


# The names each stood-in pypto module defines; any other name of a pypto
# module is `missing`.
MODULES: Dict[str, Dict[str, Any]] = {
    "pypto": {"LogLevel": LogLevel},
    "pypto.ir": {
        "compile": compile,
        "CoreType": CoreType,
        "OptimizationStrategy": OptimizationStrategy,
    },
    "pypto.ir.pass_manager": {
        "OptimizationStrategy": OptimizationStrategy,
        "PassDumpLevel": PassDumpLevel,
    },
    "pypto.ir.compiled_program": {"CompiledProgram": CompiledProgram},
    "pypto.backend": {
        "BackendType": BackendType,
        "set_backend_type": _no_op,
        "reset_for_testing": _no_op,
    },
    "pypto.pypto_core": {"LogLevel": LogLevel},
    "pypto.pypto_core.passes": {"MemoryPlanner": MemoryPlanner},
    "pypto.runtime": {
        "RunConfig": RunConfig,
        "RunResult": RunResult,
        "TensorSpec": TensorSpec,
        "ScalarSpec": ScalarSpec,
        "run": run,
    },
    "pypto.runtime.runner": {
        "RunConfig": RunConfig,
        "RunResult": RunResult,
        "run": run,
        "DiagnosticPhase": DiagnosticPhase,
    },
    "pypto.runtime.tensor_spec": {"TensorSpec": TensorSpec, "ScalarSpec": ScalarSpec},
}
