"""A pytest plugin that turns system tests into a bundle of cases that run
where the compiler is not (scripts/st_bundle.py drives it).

With BLOCKPIPE_BUNDLE=DIR and BLOCKPIPE_BUNDLE_TARGET=TARGET, each passing
test's program calls become cases in DIR/cases/: the program compiled for
TARGET (DIR/programs/), the call's arguments (inputs.npz, scalars) and what
the test checked of its outputs: the numpy reference the test compared with
(np.testing.assert_allclose / assert_array_equal, with the test's own
tolerances), or, for an output the test did not compare whole, cpu-sim's
result. A call the test expected to fail at run time is a case that must
fail alike: the block and the user's file:line its message names.
DIR/run.py (tests/st/bundle_run.py) runs the cases with bp-run, needing
only numpy.
"""

import json
import os
import pathlib
import re
import shutil

import numpy as np
import pytest

BUNDLE = os.environ.get("BLOCKPIPE_BUNDLE")
TARGET = os.environ.get("BLOCKPIPE_BUNDLE_TARGET", "cpu-sim")
DEVICE = os.environ.get("BLOCKPIPE_BUNDLE_DEVICE") or TARGET


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_")[:120]


def _storable(array: np.ndarray) -> np.ndarray:
    """bf16 (ml_dtypes) as the bits bp-run reads and writes."""
    if array.dtype.name == "bfloat16":
        return array.view(np.uint16)
    return array


def _as_float(array: np.ndarray) -> np.ndarray:
    array = np.asarray(array)
    if array.dtype.name == "bfloat16":
        return array.astype(np.float32)
    return array


class Recorder:
    def __init__(self, root: pathlib.Path, target: str, device: str):
        self.root = root
        self.target = target
        self.device = device
        # id(CompiledProgram) -> (the program, its dir, why it cannot run
        # there); the program is kept so that its id stays its own.
        self.programs = {}
        self.test = None
        self.cases = []  # this test's cases, written when it passes
        self.outputs = {}  # id(array) -> (case, param name), the latest call writing it

    # -------------------------------------------------------------- programs

    def program_dir(self, compiled):
        known = self.programs.get(id(compiled))
        if known:
            return known[1:]
        from blockpipe.compiler import compile as compile_program

        name = _slug(f"{self.test}-{compiled.program.name}-{len(self.programs)}")
        where = self.root / "programs" / name
        reason = None
        if self.target == compiled.target and self.device == compiled.device:
            where.mkdir(parents=True, exist_ok=True)
            shutil.copy2(compiled.output_dir / "kernel_config.json", where)
            shutil.copy2(compiled.library_path, where)
        else:
            try:
                there = compile_program(
                    compiled.program,
                    output_dir=where,
                    target=self.target,
                    device=self.device,
                    quiet=True,
                    devices=compiled._requested_devices,
                )
            except Exception as e:  # a program the target cannot take: a skipped case
                reason = f"does not compile for {self.target}: {str(e).splitlines()[0]}"
            else:
                if there.library_path.parent != where:
                    shutil.copy2(there.library_path, where)
        self.programs[id(compiled)] = (compiled, where, reason)
        return where, reason

    # ----------------------------------------------------------------- calls

    def call(self, compiled, orchestration, args, run):
        entry = compiled._entry(orchestration)
        params = entry.signature
        where, reason = self.program_dir(compiled)
        case = {
            "name": f"{self.test}[{len(self.cases)}]",
            "program": os.path.relpath(where, self.root),
            "entry": entry.name,
            "scalars": {},
            "checks": {},
            "skip": reason,
            # bp-run's outputs are read back by dtype (bf16 comes as uint16).
            "dtypes": {p.name: p.dtype for p in params},
        }
        inputs = {}
        for param, arg in zip(params, args):
            if param.kind != "tensor":
                case["scalars"][param.name] = arg.item() if isinstance(arg, np.generic) else arg
            elif isinstance(arg, np.ndarray):
                inputs[param.name] = _storable(np.array(arg))
        case["inputs"] = inputs
        try:
            result = run()
        except RuntimeError as e:
            message = str(e)
            case["error"] = {
                "blocks": sorted(set(re.findall(r"\bblock \d+", message))),
                "places": sorted(set(re.findall(r"[\w.-]+\.py:\d+", message))),
                "message": message,
            }
            self.cases.append(case)
            raise
        case["results"] = {}
        for param, arg in zip(params, args):
            if param.kind == "tensor" and param.dir != "in":
                case["results"][param.name] = np.array(_as_float(arg))
                self.outputs[id(arg)] = (case, param.name)
        self.cases.append(case)
        return result

    def checked(self, actual, desired, rtol, atol):
        found = self.outputs.get(id(actual))
        if found is None:
            return
        case, name = found
        reference = np.broadcast_to(_as_float(np.asarray(desired)), np.shape(actual))
        case["checks"][name] = {
            "reference": np.array(reference),
            "rtol": float(rtol),
            "atol": float(atol),
        }

    # ---------------------------------------------------------------- output

    def flush(self):
        for case in self.cases:
            directory = self.root / "cases" / _slug(case["name"])
            directory.mkdir(parents=True, exist_ok=True)
            arrays = dict(case.pop("inputs"))
            expected = {}
            checks = {}
            for name, result in case.pop("results", {}).items():
                check = case["checks"].get(name)
                if check is not None:
                    expected[name] = check["reference"]
                    checks[name] = {
                        "against": "numpy",
                        "rtol": check["rtol"],
                        "atol": check["atol"],
                    }
                else:
                    expected[name] = result
                    checks[name] = {"against": "cpu-sim"}
            case["checks"] = checks
            np.savez(directory / "inputs.npz", **arrays)
            if expected:
                np.savez(directory / "expected.npz", **expected)
            (directory / "case.json").write_text(json.dumps(case, indent=1) + "\n")
        self.cases = []
        self.outputs = {}


_recorder = Recorder(pathlib.Path(BUNDLE), TARGET, DEVICE) if BUNDLE else None


def pytest_configure(config):
    if _recorder is None:
        return
    from blockpipe.compiler import CompiledProgram

    run = CompiledProgram.run

    def recording_run(self, orchestration, *args):
        if _recorder.test is None:
            return run(self, orchestration, *args)
        return _recorder.call(self, orchestration, args, lambda: run(self, orchestration, *args))

    CompiledProgram.run = recording_run

    allclose = np.testing.assert_allclose
    array_equal = np.testing.assert_array_equal

    def recording_allclose(actual, desired, rtol=1e-07, atol=0, *args, **kwargs):
        allclose(actual, desired, rtol, atol, *args, **kwargs)
        _recorder.checked(actual, desired, rtol, atol)

    def recording_array_equal(x, y, *args, **kwargs):
        array_equal(x, y, *args, **kwargs)
        _recorder.checked(x, y, 0.0, 0.0)

    np.testing.assert_allclose = recording_allclose
    np.testing.assert_array_equal = recording_array_equal


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    if _recorder is None:
        yield
        return
    _recorder.test = item.nodeid.rsplit("/", 1)[-1]
    _recorder.cases = []
    _recorder.outputs = {}
    outcome = yield
    _recorder.test = None
    if outcome.excinfo is None:
        _recorder.flush()
    else:
        _recorder.cases = []
