"""Stand-ins for the names of pypto's system-test harness
(`harness.core.harness`, `harness.core.test_runner`): a PTOTestCase is
compiled by blockpipe, run on its tensors and compared with its own
compute_expected, as pypto's TestRunner does on a board.
"""

from __future__ import annotations

import dataclasses
import enum
import time
from abc import ABC, abstractmethod
from typing import Any, Callable, Optional, Union

import numpy as np

from blockpipe.pypto import stubs
from blockpipe.pypto.stubs import BackendType, RunConfig, RunResult, ScalarSpec

SIM_PLATFORM_IDS = ("a2a3sim", "a5sim")
ONBOARD_PLATFORM_IDS = ("a2a3", "a5")
ALL_PLATFORM_IDS = (*SIM_PLATFORM_IDS, *ONBOARD_PLATFORM_IDS)


def _params(ids):
    try:
        import pytest
    except ImportError:  # pragma: no cover - pytest is a requirement
        return list(ids)
    return [pytest.param(p, id=p) for p in ids]


PLATFORMS = _params(ALL_PLATFORM_IDS)
SIM_PLATFORMS = _params(SIM_PLATFORM_IDS)
ONBOARD_PLATFORMS = _params(ONBOARD_PLATFORM_IDS)


def platform_to_backend(platform: str):
    if platform not in ALL_PLATFORM_IDS:
        raise ValueError(f"Unknown platform '{platform}'. Expected one of {ALL_PLATFORM_IDS}.")
    return BackendType.Ascend950 if platform.startswith("a5") else BackendType.Ascend910B


class DataType(enum.Enum):
    BF16 = "bf16"
    FP32 = "fp32"
    FP16 = "fp16"
    FP8E4M3FN = "fp8e4m3fn"
    FP8E8M0 = "fp8e8m0"
    FP4 = "fp4"
    INT32 = "int32"
    UINT32 = "uint32"
    INT16 = "int16"
    UINT16 = "uint16"
    INT8 = "int8"
    UINT8 = "uint8"
    INT64 = "int64"
    BOOL = "bool"

    @property
    def torch_dtype(self):
        """The torch dtype pypto keeps this type's data in: the unsigned
        types without a torch twin share the bits of the signed one."""
        import torch

        names = {
            "bf16": "bfloat16",
            "fp32": "float32",
            "fp16": "float16",
            "int32": "int32",
            "uint32": "int32",
            "int16": "int16",
            "uint16": "int16",
            "int8": "int8",
            "uint8": "uint8",
            "int64": "int64",
            "bool": "bool",
            "fp8e4m3fn": "float8_e4m3fn",
            "fp8e8m0": "float8_e8m0fnu",
            "fp4": "float4_e2m1fn_x2",
        }
        dtype = getattr(torch, names[self.value], None)
        if dtype is None:
            raise ValueError(f"PyTorch does not provide the dtype torch.{names[self.value]}")
        return dtype

    @property
    def numpy_dtype(self) -> Optional[np.dtype]:
        """The dtype blockpipe takes the data in (None: none of NumPy's)."""
        if self.value == "bf16":
            import ml_dtypes

            return np.dtype(ml_dtypes.bfloat16)
        numpy_names = {"fp32": "float32", "fp16": "float16", "bool": "bool"}
        name = numpy_names.get(self.value, self.value)
        return np.dtype(name) if hasattr(np, name) else None


@dataclasses.dataclass
class TensorSpec:
    name: str
    shape: list
    dtype: DataType
    init_value: Union[int, float, Callable, Any, None] = None
    is_output: bool = False


class PTOTestCase(ABC):
    """pypto's test case: a program, its tensors and the expected outputs."""

    def __init__(
        self,
        config: Optional[RunConfig] = None,
        *,
        platform: Optional[str] = None,
        backend_type: Any = None,
        strategy: Any = None,
        memory_planner: Any = None,
        enable_pypto_l0c_double_buffer: Optional[bool] = None,
    ):
        self.config = config or RunConfig()
        self._override_platform = platform
        self._override_backend = backend_type
        self._override_strategy = strategy
        self._override_memory_planner = memory_planner
        self._override_enable_pypto_l0c_double_buffer = enable_pypto_l0c_double_buffer
        self._tensor_specs: Optional[list] = None
        self._scalar_specs: Optional[list] = None

    @abstractmethod
    def get_name(self) -> str: ...

    @abstractmethod
    def define_tensors(self) -> list: ...

    @abstractmethod
    def get_program(self) -> Any: ...

    @abstractmethod
    def compute_expected(self, tensors: dict, params: Optional[dict] = None) -> None: ...

    def get_strategy(self):
        return self._override_strategy or stubs.OptimizationStrategy.Default

    def get_memory_planner(self):
        return self._override_memory_planner

    def get_enable_pypto_l0c_double_buffer(self):
        return self._override_enable_pypto_l0c_double_buffer

    def get_platform(self) -> Optional[str]:
        return self._override_platform

    def get_backend_type(self):
        if self._override_platform is not None:
            return platform_to_backend(self._override_platform)
        return self._override_backend or BackendType.Ascend910B

    def define_scalars(self) -> list:
        return []

    @property
    def tensor_specs(self) -> list:
        if self._tensor_specs is None:
            self._tensor_specs = self.define_tensors()
        return self._tensor_specs

    @property
    def scalar_specs(self) -> list:
        if self._scalar_specs is None:
            self._scalar_specs = self.define_scalars()
        return self._scalar_specs


def run_case(case: PTOTestCase) -> RunResult:
    """Compiles `case`'s program for blockpipe's target (a CompileError
    propagates: a SKIP), runs it on the case's tensors and compares each
    output with compute_expected within the case's rtol/atol; a golden
    NaN is a don't-care element, as in pypto's harness."""
    start = time.time()
    name = case.get_name()
    compiled = stubs.compile(case.get_program())
    specs = case.tensor_specs
    tensors = {s.name: stubs.make_tensor(s.shape, s.dtype.torch_dtype, s.init_value) for s in specs}
    expected = {n: t.clone() for n, t in tensors.items()}
    case.compute_expected(expected)
    arrays = [stubs.as_array(tensors[s.name], i, s.dtype.numpy_dtype) for i, s in enumerate(specs)]
    # pypto's harness copies each input to the device; a view (a transposed
    # or expanded index tensor) arrives there contiguous.
    arrays = [
        a if s.is_output or not isinstance(a, np.ndarray) else np.ascontiguousarray(a)
        for a, s in zip(arrays, specs)
    ]
    try:
        compiled.compiled(*arrays, *[s.value for s in case.scalar_specs])
    except Exception as error:  # noqa: BLE001 - pypto reports a failed run as a result
        return RunResult(False, name, f"{type(error).__name__}: {error}", time.time() - start)
    outs = [s.name for s in specs if s.is_output]
    rtol, atol = case.config.rtol, case.config.atol
    bad, worst = [], 0.0
    for out in outs:
        # In the tensor's own dtype, as the golden is: pypto keeps UINT16
        # data in an int16 tensor, which shares the array's bits.
        got = _float64(tensors[out])
        want = _float64(expected[out])
        care = ~np.isnan(want)
        close = np.isclose(got, want, rtol=rtol, atol=atol, equal_nan=True) | ~care
        if not close.all():
            bad.append(out)
            worst = max(worst, float(np.nanmax(np.abs(got - want)[care])))
    if bad:
        return RunResult(
            False,
            name,
            f"{', '.join(bad)} differ from compute_expected (max |diff| {worst:.3g})",
            time.time() - start,
        )
    return RunResult(True, name, f"{', '.join(outs)} equal compute_expected", time.time() - start)


def _float64(value) -> np.ndarray:
    array = stubs.as_array(value)
    return np.asarray(array).astype(np.float64)


class TestRunner:
    """pypto's `test_runner` fixture."""

    __test__ = False

    def __init__(self, config: Optional[RunConfig] = None):
        self.config = config or RunConfig()

    def run(self, test_case: PTOTestCase) -> RunResult:
        return run_case(test_case)


def is_hardware_available() -> bool:
    """No Ascend board here: blockpipe runs the simulator's cases."""
    return False


_last_device: dict = {"value": None}

MODULES = {
    "harness": {},
    "harness.core": {},
    "harness.core.harness": {},
    "harness.core.test_runner": {"TestRunner": TestRunner, "_last_device": _last_device},
    "harness.core.environment": {"is_hardware_available": is_hardware_available},
}
_NAMES = (
    "ALL_PLATFORM_IDS ONBOARD_PLATFORM_IDS SIM_PLATFORM_IDS PLATFORMS SIM_PLATFORMS "
    "ONBOARD_PLATFORMS DataType TensorSpec PTOTestCase platform_to_backend"
).split()
MODULES["harness.core.harness"].update({n: globals()[n] for n in _NAMES})
MODULES["harness.core.harness"]["ScalarSpec"] = ScalarSpec
MODULES["harness.core"].update(MODULES["harness.core.harness"])
MODULES["harness.core"].update(TestRunner=TestRunner, RunConfig=RunConfig, RunResult=RunResult)
