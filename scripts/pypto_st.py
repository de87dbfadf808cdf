"""Runs pypto's runtime system tests (tests/st/runtime/... of a pypto
checkout) on blockpipe's cpu-sim, unmodified: `pypto.language` is
blockpipe.language, and the few harness names the tests import (PTOTestCase,
TensorSpec, DataType, RunConfig, ...) are stood in for here. Each test case's
program is compiled and run on its inputs and compared with its own
compute_expected, evaluated on numpy through a small stand-in for the torch
calls such tests make (torch itself is not needed).

    .venv/bin/python scripts/pypto_st.py PYPTO_CHECKOUT/tests/st/runtime/cross_core/*.py

Prints one line per test case (ok / FAIL / SKIP and why) and exits non-zero
when a case compiled and ran but disagreed with its expected values."""

from __future__ import annotations

import argparse
import enum
import importlib.util
import inspect
import sys
import traceback
import types

import numpy as np

# ------------------------------------------------------- torch, on numpy


class _Tensor(np.ndarray):
    def float(self):
        return self.astype(np.float32).view(_Tensor)

    def clone(self):
        return self.copy().view(_Tensor)

    def t(self):
        return self.T

    def numpy(self):
        return np.asarray(self)

    def contiguous(self):
        return self

    def sum(self, dim=None, keepdim=False, **kwargs):  # noqa: A003 - torch's name
        return np.sum(np.asarray(self), axis=dim, keepdims=keepdim).view(_Tensor)

    def reciprocal(self):
        return (1.0 / np.asarray(self)).view(_Tensor)

    def item(self):
        return np.asarray(self).item()

    def to(self, dtype=None, *args, **kwargs):
        return self.astype(dtype).view(_Tensor) if isinstance(dtype, np.dtype) else self


def _torch_module():
    torch = types.ModuleType("torch")
    torch.Tensor = _Tensor
    torch.float32, torch.float16, torch.int32, torch.int64 = (
        np.dtype(t) for t in (np.float32, np.float16, np.int32, np.int64)
    )
    try:
        import ml_dtypes

        torch.bfloat16 = np.dtype(ml_dtypes.bfloat16)
    except ImportError:  # pragma: no cover - ml_dtypes is a dependency
        torch.bfloat16 = np.dtype(np.float32)  # compared in FP32
    torch.int16, torch.int8, torch.uint8, torch.bool = (
        np.dtype(t) for t in (np.int16, np.int8, np.uint8, bool)
    )
    rng = np.random.default_rng(0)

    def shape_of(args):
        return (
            tuple(args[0]) if len(args) == 1 and isinstance(args[0], (list, tuple)) else tuple(args)
        )

    def made(values, dtype):
        return np.asarray(values, dtype=dtype or np.float32).view(_Tensor)

    torch.randn = lambda *s, dtype=None, **k: made(rng.standard_normal(shape_of(s)), dtype)
    torch.rand = lambda *s, dtype=None, **k: made(rng.random(shape_of(s)), dtype)
    torch.zeros = lambda *s, dtype=None, **k: made(np.zeros(shape_of(s)), dtype)
    torch.ones = lambda *s, dtype=None, **k: made(np.ones(shape_of(s)), dtype)
    torch.full = lambda s, v, dtype=None, **k: made(np.full(tuple(s), v), dtype)
    torch.tensor = lambda v, dtype=None, **k: made(v, dtype)
    torch.matmul = lambda a, b: np.matmul(a, b).view(_Tensor)
    torch.empty = torch.zeros
    torch.manual_seed = lambda seed: None

    def assert_close(actual, expected, rtol=1e-5, atol=1e-8, **kwargs):
        np.testing.assert_allclose(
            np.asarray(actual, np.float64), np.asarray(expected, np.float64), rtol=rtol, atol=atol
        )

    torch.testing = types.SimpleNamespace(assert_close=assert_close)
    torch.allclose = lambda a, b, rtol=1e-5, atol=1e-8, **k: bool(
        np.allclose(np.asarray(a, np.float64), np.asarray(b, np.float64), rtol=rtol, atol=atol)
    )
    for name in ("exp", "maximum", "minimum", "sqrt", "abs", "tanh", "log", "where"):
        setattr(torch, name, getattr(np, name))
    torch.sigmoid = lambda x: 1.0 / (1.0 + np.exp(-x))
    torch.relu = lambda x: np.maximum(x, 0)
    return torch


# ------------------------------------------------------- pypto's harness


class DataType(enum.Enum):
    FP32, FP16, BF16, INT32, INT64, INT16, INT8, UINT8, BOOL = (
        "fp32",
        "fp16",
        "bf16",
        "int32",
        "int64",
        "int16",
        "int8",
        "uint8",
        "bool",
    )


_NUMPY = {
    "fp32": np.float32,
    "fp16": np.float16,
    "bf16": np.float32,
    "int32": np.int32,
    "int64": np.int64,
    "int16": np.int16,
    "int8": np.int8,
    "uint8": np.uint8,
    "bool": bool,
}
try:
    import ml_dtypes

    _NUMPY["bf16"] = ml_dtypes.bfloat16
except ImportError:  # pragma: no cover - ml_dtypes is a dependency
    pass


class TensorSpec:
    def __init__(self, name, shape, dtype, init_value=None, is_output=False):
        self.name, self.shape, self.dtype = name, list(shape), dtype
        self.init_value, self.is_output = init_value, is_output


class PTOTestCase:
    __test__ = False

    def __init__(self, config=None, *, platform=None, backend_type=None, strategy=None, **kwargs):
        self.config = config

    def define_scalars(self):
        return []


class _AnyMeta(type):
    def __getattr__(cls, name):
        return cls


class _Anything(metaclass=_AnyMeta):
    """Stands for harness names whose value does not matter here (a class:
    annotations such as `RunConfig | None` work on it)."""

    def __init__(self, *args, **kwargs):
        pass

    def __getattr__(self, name):
        return _Anything


def _install_modules():
    import blockpipe.language

    mods = {
        "torch": _torch_module(),
        "pypto": types.ModuleType("pypto"),
        "pypto.language": blockpipe.language,
    }
    harness = types.ModuleType("harness.core.harness")
    harness.DataType, harness.TensorSpec, harness.PTOTestCase = DataType, TensorSpec, PTOTestCase
    harness.PLATFORMS = ["a2a3sim"]
    mods["harness"], mods["harness.core"], mods["harness.core.harness"] = (
        types.ModuleType("harness"),
        types.ModuleType("harness.core"),
        harness,
    )
    for name in (
        "pypto.ir",
        "pypto.ir.pass_manager",
        "pypto.backend",
        "pypto.runtime",
        "pypto.runtime.runner",
    ):
        module = types.ModuleType(name)
        module.__path__ = []
        module.OptimizationStrategy = module.BackendType = module.RunConfig = _Anything
        mods[name] = module
    mods["pypto"].language = blockpipe.language
    sys.modules.update(mods)


# ------------------------------------------------------------ running


def _inputs(case):
    torch = sys.modules["torch"]
    tensors = {}
    for spec in case.define_tensors():
        dtype = np.dtype(_NUMPY[spec.dtype.value])
        init = spec.init_value
        if init is None:
            value = np.zeros(spec.shape, dtype)
        elif callable(init):
            value = np.asarray(
                init(spec.shape) if init not in (torch.randn, torch.rand) else init(*spec.shape)
            )
        else:
            value = np.full(spec.shape, init)
        tensors[spec.name] = np.ascontiguousarray(value.astype(dtype)).view(_Tensor)
    return tensors


class _Result:
    """What pypto's test_runner.run(case) returns."""

    def __init__(self, passed: bool, error: str = ""):
        self.passed, self.error = passed, error


def _run_case(case) -> _Result:
    """Compiles (a CompileError propagates), runs and checks one case."""
    import blockpipe

    compiled = blockpipe.compile(case.get_program(), quiet=True)
    tensors = _inputs(case)
    expected = {k: v.copy().view(_Tensor) for k, v in tensors.items()}
    scalars = [s.value for s in case.define_scalars()] if case.define_scalars() else []
    compiled(*tensors.values(), *scalars)
    case.compute_expected(expected)
    outs = [s.name for s in case.define_tensors() if s.is_output]

    def compared(n):
        # pypto's harness skips what compute_expected marks NaN (left
        # undefined by design, e.g. outside a valid shape).
        got, want = np.asarray(tensors[n], np.float64), np.asarray(expected[n], np.float64)
        keep = ~np.isnan(want)
        return got[keep], want[keep]

    bad = [n for n in outs if not np.allclose(*compared(n), rtol=1e-3, atol=1e-3)]
    if bad:
        worst = max(float(np.max(np.abs(np.subtract(*compared(n))))) for n in bad)
        return _Result(
            False, f"{', '.join(bad)} differ from compute_expected (max |diff| {worst:.3g})"
        )
    return _Result(True, f"{', '.join(outs)} equal compute_expected")


class _TestRunner:
    """pypto's `test_runner` fixture: runs a case, noting its class."""

    def __init__(self):
        self.ran = set()

    def run(self, case) -> _Result:
        self.ran.add(type(case))
        return _run_case(case)


def run_file(path: str) -> int:
    from blockpipe import CompileError

    spec = importlib.util.spec_from_file_location(f"pypto_st_{abs(hash(path))}", path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # noqa: BLE001 - report and go on with the next file
        print(f"SKIP {path}: cannot import ({type(exc).__name__}: {exc})")
        return 0
    failures = 0
    cases = [
        c
        for c in vars(module).values()
        if inspect.isclass(c)
        and issubclass(c, PTOTestCase)
        and c is not PTOTestCase
        and "get_program" in {n for k in c.__mro__ for n in vars(k)}
        and not inspect.isabstract(c)
    ]
    suites = [
        c
        for c in vars(module).values()
        if inspect.isclass(c) and c.__name__.startswith("Test") and c.__module__ == module.__name__
    ]
    if not cases and not suites:
        print(f"SKIP {path}: no PTOTestCase with a program and no Test class")
    runner = _TestRunner()
    for suite in suites:
        failures += _run_suite(path, suite, runner)
    # The cases no Test class ran, each as its own test.
    for cls in cases:
        if cls in runner.ran:
            continue
        label = f"{path.rsplit('/', 1)[-1]}::{cls.__name__}"
        try:
            result = _run_case(cls())
        except CompileError as exc:
            print(f"SKIP {label}: {type(exc).__name__}: {str(exc).splitlines()[0]}")
            continue
        except Exception as exc:  # noqa: BLE001 - report and go on with the next case
            print(f"FAIL {label}: {type(exc).__name__}: {str(exc).splitlines()[0]}")
            traceback.print_exc()
            failures += 1
            continue
        print(f"{'ok  ' if result.passed else 'FAIL'} {label}: {result.error}")
        failures += not result.passed
    return failures


def _run_suite(path: str, suite, runner: _TestRunner) -> int:
    """pytest-style tests (a Test class, test_ methods taking pypto's
    `test_config` fixture, None here: blockpipe runs on cpu-sim, and its
    `test_runner`)."""
    import itertools

    fixtures = {"test_config": None, "test_runner": runner, "backend_type": None}
    failures = 0
    for name in sorted(n for n in vars(suite) if n.startswith("test_")):
        method = getattr(suite(), name)
        params = inspect.signature(method).parameters
        # pytest.mark.parametrize'd arguments, each combination a case.
        grid = {}
        for mark in getattr(method, "pytestmark", []):
            if mark.name == "parametrize":
                names = (
                    [n.strip() for n in mark.args[0].split(",")]
                    if isinstance(mark.args[0], str)
                    else list(mark.args[0])
                )
                # A pytest.param's values are in .values.
                rows = [
                    tuple(v.values)
                    if hasattr(v, "marks")
                    else (tuple(v) if len(names) > 1 else (v,))
                    for v in mark.args[1]
                ]
                grid[tuple(names)] = rows
        if set(params) - set(fixtures) - {n for names in grid for n in names}:
            print(
                f"SKIP {path.rsplit('/', 1)[-1]}::{suite.__name__}::{name}: needs fixtures "
                f"{sorted(set(params) - set(fixtures))}"
            )
            continue
        for combo in itertools.product(*grid.values()) if grid else [()]:
            kwargs = {k: v for k, v in fixtures.items() if k in params}
            for names, values in zip(grid, combo):
                kwargs.update(zip(names, values))
            shown = [getattr(v, "__name__", str(v)) for k, v in kwargs.items() if k not in fixtures]
            suffix = "[" + "-".join(shown) + "]" if shown else ""
            failures += _run_test(
                f"{path.rsplit('/', 1)[-1]}::{suite.__name__}::{name}{suffix}", method, kwargs
            )
    return failures


def _run_test(label: str, method, kwargs) -> int:
    from blockpipe import CompileError
    from blockpipe.language.unsupported import NotSupportedError

    try:
        method(**kwargs)
    except (CompileError, NotSupportedError) as exc:
        print(f"SKIP {label}: {type(exc).__name__}: {str(exc).splitlines()[0]}")
        return 0
    except Exception as exc:  # noqa: BLE001 - report and go on with the next case
        print(f"FAIL {label}: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
        traceback.print_exc()
        return 1
    print(f"ok   {label}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    _install_modules()
    return 1 if sum(run_file(f) for f in args.files) else 0


if __name__ == "__main__":
    sys.exit(main())
