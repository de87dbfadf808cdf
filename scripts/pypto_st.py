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

    def to(self, dtype=None, *args, **kwargs):
        return self.astype(dtype).view(_Tensor) if isinstance(dtype, np.dtype) else self


def _torch_module():
    torch = types.ModuleType("torch")
    torch.Tensor = _Tensor
    torch.float32, torch.float16, torch.int32, torch.int64 = (np.dtype(t) for t in (
        np.float32, np.float16, np.int32, np.int64))
    torch.bfloat16 = np.dtype(np.float32)  # compared in FP32
    torch.int16, torch.int8, torch.uint8, torch.bool = (np.dtype(t) for t in (np.int16, np.int8, np.uint8, bool))
    rng = np.random.default_rng(0)

    def shape_of(args):
        return tuple(args[0]) if len(args) == 1 and isinstance(args[0], (list, tuple)) else tuple(args)

    def made(values, dtype):
        return np.asarray(values, dtype=dtype or np.float32).view(_Tensor)

    torch.randn = lambda *s, dtype=None, **k: made(rng.standard_normal(shape_of(s)), dtype)
    torch.rand = lambda *s, dtype=None, **k: made(rng.random(shape_of(s)), dtype)
    torch.zeros = lambda *s, dtype=None, **k: made(np.zeros(shape_of(s)), dtype)
    torch.ones = lambda *s, dtype=None, **k: made(np.ones(shape_of(s)), dtype)
    torch.full = lambda s, v, dtype=None, **k: made(np.full(tuple(s), v), dtype)
    torch.tensor = lambda v, dtype=None, **k: made(v, dtype)
    torch.matmul = lambda a, b: np.matmul(a, b).view(_Tensor)
    for name in ("exp", "maximum", "minimum", "sqrt", "abs", "tanh", "log", "where"):
        setattr(torch, name, getattr(np, name))
    torch.sigmoid = lambda x: 1.0 / (1.0 + np.exp(-x))
    torch.relu = lambda x: np.maximum(x, 0)
    return torch


# ------------------------------------------------------- pypto's harness

class DataType(enum.Enum):
    FP32, FP16, BF16, INT32, INT64, INT16, INT8, UINT8, BOOL = (
        "fp32", "fp16", "bf16", "int32", "int64", "int16", "int8", "uint8", "bool")


_NUMPY = {"fp32": np.float32, "fp16": np.float16, "bf16": np.float32, "int32": np.int32,
          "int64": np.int64, "int16": np.int16, "int8": np.int8, "uint8": np.uint8, "bool": bool}


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

    mods = {"torch": _torch_module(), "pypto": types.ModuleType("pypto"),
            "pypto.language": blockpipe.language}
    harness = types.ModuleType("harness.core.harness")
    harness.DataType, harness.TensorSpec, harness.PTOTestCase = DataType, TensorSpec, PTOTestCase
    harness.PLATFORMS = ["a2a3sim"]
    mods["harness"], mods["harness.core"], mods["harness.core.harness"] = (
        types.ModuleType("harness"), types.ModuleType("harness.core"), harness)
    for name in ("pypto.ir", "pypto.ir.pass_manager", "pypto.backend", "pypto.runtime",
                 "pypto.runtime.runner"):
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
            value = np.asarray(init(spec.shape) if init not in (torch.randn, torch.rand) else init(*spec.shape))
        else:
            value = np.full(spec.shape, init)
        tensors[spec.name] = np.ascontiguousarray(value.astype(dtype)).view(_Tensor)
    return tensors


def run_file(path: str) -> int:
    import blockpipe

    spec = importlib.util.spec_from_file_location(f"pypto_st_{abs(hash(path))}", path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # noqa: BLE001 - report and go on with the next file
        print(f"SKIP {path}: cannot import ({type(exc).__name__}: {exc})")
        return 0
    failures = 0
    cases = [c for c in vars(module).values()
             if inspect.isclass(c) and issubclass(c, PTOTestCase) and c is not PTOTestCase
             and "get_program" in {n for k in c.__mro__ for n in vars(k)} and not inspect.isabstract(c)]
    if not cases:
        print(f"SKIP {path}: no PTOTestCase with a program (its tests use another harness)")
    for cls in cases:
        label = f"{path.rsplit('/', 1)[-1]}::{cls.__name__}"
        try:
            case = cls()
            program = case.get_program()
            compiled = blockpipe.compile(program, quiet=True)
        except Exception as exc:  # noqa: BLE001
            print(f"SKIP {label}: {type(exc).__name__}: {str(exc).splitlines()[0]}")
            continue
        tensors = _inputs(case)
        expected = {k: v.copy().view(_Tensor) for k, v in tensors.items()}
        scalars = [s.value for s in case.define_scalars()] if case.define_scalars() else []
        try:
            compiled(*tensors.values(), *scalars)
            case.compute_expected(expected)
        except Exception as exc:  # noqa: BLE001
            print(f"FAIL {label}: {type(exc).__name__}: {str(exc).splitlines()[0]}")
            traceback.print_exc()
            failures += 1
            continue
        outs = [s.name for s in case.define_tensors() if s.is_output]
        bad = [n for n in outs if not np.allclose(np.asarray(tensors[n], np.float64),
                                                   np.asarray(expected[n], np.float64), rtol=1e-3, atol=1e-3)]
        if bad:
            worst = max(float(np.max(np.abs(np.asarray(tensors[n], np.float64) - expected[n]))) for n in bad)
            print(f"FAIL {label}: {', '.join(bad)} differ from compute_expected (max |diff| {worst:.3g})")
            failures += 1
        else:
            print(f"ok   {label}: {', '.join(outs)} equal compute_expected")
    return failures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    _install_modules()
    return 1 if sum(run_file(f) for f in args.files) else 0


if __name__ == "__main__":
    sys.exit(main())
