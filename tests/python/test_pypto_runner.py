"""`python -m blockpipe pypto-test` runs a test file written for pypto's
harness (`import pypto.language as pl`, PTOTestCase, TensorSpec, torch in
compute_expected, pytest marks and pypto's fixtures) on blockpipe and
compares with its compute_expected: a right program is "ok", a wrong
expectation is a FAIL with a non-zero exit, what blockpipe lacks is a SKIP
naming it. `python -m blockpipe pypto` runs a pypto script as __main__.
Also: a kernel annotated `-> tuple[pl.Tensor[...], pl.Tensor[...]]`."""

import os
import pathlib
import subprocess
import sys
import textwrap

REPO = pathlib.Path(__file__).resolve().parents[2]

CASE = """
from typing import Any

import pypto.language as pl
import torch
from harness.core.harness import DataType, PTOTestCase, TensorSpec


@pl.program
class TwoOutputs:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[32, 16], pl.FP32], s: pl.Out[pl.Tensor[[32, 16], pl.FP32]],
          t: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> tuple[pl.Tensor[[32, 16], pl.FP32],
                                                              pl.Tensor[[16, 32], pl.FP32]]:
        r = pl.tile.get_block_idx() * 16
        x = pl.load(a, [r, 0], [16, 16])
        s = pl.store(pl.add(x, 1.0), [r, 0], s)
        t = pl.store(pl.transpose(x, axis1=0, axis2=1), [0, r], t)
        return s, t

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[32, 16], pl.FP32], s: pl.Out[pl.Tensor[[32, 16], pl.FP32]],
             t: pl.Out[pl.Tensor[[16, 32], pl.FP32]]):
        with pl.spmd(2):
            s, t = self.k(a, s, t)
        return s, t


class Unfinished(PTOTestCase):
    # Abstract (no compute_expected): not a case.

    def get_name(self) -> str:
        return "unfinished"


class TwoOutputsTest(PTOTestCase):
    __test__ = False

    def get_name(self) -> str:
        return "two_outputs"

    def define_tensors(self) -> list[TensorSpec]:
        return [
            TensorSpec("a", [32, 16], DataType.FP32, init_value=torch.randn),
            TensorSpec("s", [32, 16], DataType.FP32, is_output=True),
            TensorSpec("t", [16, 32], DataType.FP32, is_output=True),
        ]

    def get_program(self) -> Any:
        return TwoOutputs

    def compute_expected(self, tensors, params=None):
        tensors["s"][:] = tensors["a"] + OFFSET
        tensors["t"][:] = tensors["a"].t()
"""

# A pypto checkout in miniature: pyproject.toml at the root, a program in
# examples/ that tests import as `from examples...`.
KERNELS = """
import pypto.language as pl


@pl.program
class AddOne:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 16], pl.FP32],
          b: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        return pl.store(pl.add(pl.load(a, [0, 0], [16, 16]), 1.0), [0, 0], b)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
        with pl.spmd(1):
            b = self.k(a, b)
        return b
"""

SUITE = """
import sys
from abc import abstractmethod

import pytest
import torch
from examples.kernels import AddOne
from harness.core.harness import (
    ONBOARD_PLATFORMS, PLATFORMS, DataType, PTOTestCase, TensorSpec,
)

SEEN_INIT_ARGS = []


def pytest_generate_tests(metafunc):
    # As pypto's cross-core tests do: the backend from --platform.
    if "backend_type" in metafunc.fixturenames:
        platform = metafunc.config.getoption("--platform")
        metafunc.parametrize("backend_type", [platform], ids=[platform])


def four():
    SEEN_INIT_ARGS.append("called")
    return torch.full([16, 16], 4.0)


class AddOneBase(PTOTestCase):
    @abstractmethod
    def offset(self): ...

    def get_name(self):
        return "add_one"

    def define_tensors(self):
        return [
            TensorSpec("a", [16, 16], DataType.FP32, init_value=four),
            TensorSpec("b", [16, 16], DataType.FP32, is_output=True),
        ]

    def get_program(self):
        return AddOne

    def compute_expected(self, tensors, params=None):
        tensors["b"][:] = tensors["a"] + self.offset()


class AddOneRight(AddOneBase):
    def offset(self):
        return 1.0


class AddOneWrong(AddOneBase):
    def offset(self):
        return 3.0


class TestAddOne:
    @pytest.mark.parametrize("platform", PLATFORMS)
    @pytest.mark.parametrize("case", [AddOneRight, pytest.param(AddOneWrong, marks=pytest.mark.xfail)],
                             ids=["right", "wrong"])
    def test_cases(self, test_runner, platform, case):
        result = test_runner.run(case(platform=platform))
        assert result.passed, result.error
        assert SEEN_INIT_ARGS

    @pytest.mark.parametrize("platform", ONBOARD_PLATFORMS)
    def test_config(self, test_config, platform, backend_type):
        assert backend_type == "a2a3"
        assert test_config.rtol > 0 and test_config.platform
        assert DataType.UINT16.torch_dtype == torch.int16
        assert isinstance(DataType.UINT32.torch_dtype, torch.dtype)

    @pytest.mark.skip(reason="not today")
    def test_skipped(self):
        raise AssertionError("a skipped test ran")

    @pytest.mark.skipif(sys.maxsize > 0, reason="always")
    def test_skipped_if(self):
        raise AssertionError("a skipif test ran")

    def test_lacks(self):
        import pypto.language as pl

        pl.not_a_pypto_name_either

    def test_missing_runtime_name(self):
        from pypto.runtime import ChipWorker

        ChipWorker()
"""

SKIPPED_MODULE = """
import pytest

pytest.skip("needs a board")


def test_never():
    raise AssertionError("ran")
"""

LACKING_MODULE = """
import pypto.language as pl

pl.no_such_op_in_pypto_or_blockpipe


def test_never():
    pass
"""


def blockpipe(*args, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "blockpipe", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "python"), *sys.path])},
    )


def run(tmp_path, offset):
    path = tmp_path / "test_two_outputs.py"
    path.write_text(textwrap.dedent(CASE).replace("OFFSET", offset))
    return blockpipe("pypto-test", path)


def test_a_pypto_test_file_runs_and_agrees(tmp_path):
    result = run(tmp_path, "1.0")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "ok   test_two_outputs.py::TwoOutputsTest: s, t equal compute_expected" in result.stdout
    assert "== 1 passed in " in result.stdout


def test_a_disagreement_fails(tmp_path):
    result = run(tmp_path, "2.0")
    assert result.returncode == 1, result.stdout + result.stderr
    assert (
        "FAIL test_two_outputs.py::TwoOutputsTest: s differ from compute_expected (max |diff| 1)"
        in result.stdout
    )


UNSIGNED = """
import pypto.language as pl
import torch
from harness.core.harness import DataType, PTOTestCase, TensorSpec


@pl.program
class Not16:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[8, 16], pl.UINT16], out: pl.Out[pl.Tensor[[8, 16], pl.UINT16]]):
        return pl.store(pl.tile.not_(pl.load(a, [0, 0], [8, 16])), [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[8, 16], pl.UINT16], out: pl.Out[pl.Tensor[[8, 16], pl.UINT16]]):
        out = self.k(a, out)
        return out


class NotTest(PTOTestCase):
    __test__ = False

    def get_name(self) -> str:
        return "not16"

    def define_tensors(self) -> list[TensorSpec]:
        return [
            TensorSpec("a", [8, 16], DataType.UINT16,
                       init_value=lambda: torch.arange(128, dtype=torch.int16).reshape(8, 16) * 500),
            TensorSpec("out", [8, 16], DataType.UINT16, is_output=True),
        ]

    def get_program(self):
        return Not16

    def compute_expected(self, tensors, params=None):
        tensors["out"][:] = torch.bitwise_not(tensors["a"])


def test_not(test_runner):
    assert test_runner.run(NotTest()).passed
"""


def test_an_unsigned_output_compares_with_its_golden_bit_for_bit(tmp_path):
    # pypto keeps UINT16 data in an int16 tensor; the golden is computed
    # there, so the output is compared in that dtype, not as uint16 values.
    path = tmp_path / "test_not16.py"
    path.write_text(UNSIGNED)
    result = blockpipe("pypto-test", path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "ok   test_not16.py::test_not" in result.stdout


def checkout(tmp_path):
    root = tmp_path / "pypto"
    (root / "examples").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[project]\nname = 'pypto'\n")
    (root / "examples" / "__init__.py").write_text("")
    (root / "examples" / "kernels.py").write_text(KERNELS)
    tests = root / "tests" / "st"
    tests.mkdir(parents=True)
    for name, text in (
        ("test_suite.py", SUITE),
        ("test_skipped_module.py", SKIPPED_MODULE),
        ("test_lacking_module.py", LACKING_MODULE),
    ):
        (tests / name).write_text(text)
    return root


def lines(stdout):
    return [line for line in stdout.splitlines() if line[:4] in ("ok  ", "FAIL", "SKIP")]


def test_a_suite_runs_with_pypto_fixtures_marks_and_one_case_per_platform_set(tmp_path):
    root = checkout(tmp_path)
    # Run from elsewhere: the checkout root comes from the file's place.
    result = blockpipe(
        "pypto-test", *sorted((root / "tests" / "st").glob("test_*.py")), cwd=tmp_path
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert sorted(lines(result.stdout)) == sorted(
        [
            "SKIP test_lacking_module.py: cannot import "
            "(blockpipe lacks pl.no_such_op_in_pypto_or_blockpipe)",
            "SKIP test_skipped_module.py: cannot import (needs a board)",
            "ok   test_suite.py::TestAddOne::test_cases[right]",
            "SKIP test_suite.py::TestAddOne::test_cases[wrong]: expected to fail",
            "ok   test_suite.py::TestAddOne::test_config",
            "SKIP test_suite.py::TestAddOne::test_skipped: not today",
            "SKIP test_suite.py::TestAddOne::test_skipped_if: always",
            "SKIP test_suite.py::TestAddOne::test_lacks: blockpipe lacks pl.not_a_pypto_name_either",
            "SKIP test_suite.py::TestAddOne::test_missing_runtime_name: "
            "blockpipe lacks pypto.runtime.ChipWorker",
        ]
    ), result.stdout
    assert "== 2 passed, 6 skipped, 1 xfailed in " in result.stdout


def test_reasons_are_ranked_by_cases(tmp_path):
    root = checkout(tmp_path)
    suite = root / "tests" / "st" / "test_suite.py"
    result = blockpipe("pypto-test", suite, "-k", "skipped or lacks", "--reasons")
    assert result.returncode == 0, result.stdout + result.stderr
    ranked = result.stdout.split("-- SKIP and FAIL reasons, by cases --\n")[1].splitlines()
    assert ranked[:-1] == [
        "    1 SKIP not today",
        "    1 SKIP always",
        "    1 SKIP blockpipe lacks pl.not_a_pypto_name_either",
    ], result.stdout
    assert ranked[-1].startswith("== 3 skipped in ")


def test_k_selects_cases_as_pytest_does(tmp_path):
    root = checkout(tmp_path)
    suite = root / "tests" / "st" / "test_suite.py"
    result = blockpipe("pypto-test", suite, "-k", "test_config or (right and not wrong)")
    assert result.returncode == 0, result.stdout + result.stderr
    assert lines(result.stdout) == [
        "ok   test_suite.py::TestAddOne::test_cases[right]",
        "ok   test_suite.py::TestAddOne::test_config",
    ], result.stdout


SCRIPT = """
import sys

import pypto.language as pl
import torch
from pypto.runtime import RunConfig, run
from examples.kernels import AddOne

if __name__ == "__main__":
    a = torch.full((16, 16), float(sys.argv[1]), dtype=torch.float32)
    b = torch.zeros((16, 16), dtype=torch.float32)
    run(AddOne, a, b, config=RunConfig(platform="a2a3sim"))
    assert torch.allclose(b, a + 1.0), f"max diff {(b - a - 1.0).abs().max().item()}"
    assert float(sys.argv[1]) != 13.0, "unlucky"
    print("OK")
"""


def test_a_pypto_script_runs_as_main(tmp_path):
    root = checkout(tmp_path)
    script = root / "examples" / "add_one.py"
    script.write_text(SCRIPT)
    result = blockpipe("pypto", script, "2.5")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "OK\n" in result.stdout
    assert f"ok   {script}" in result.stdout and "== 1 passed in " in result.stdout
    failed = blockpipe("pypto", script, "13")
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert f"FAIL {script}: AssertionError: unlucky" in failed.stdout


def test_a_script_using_what_blockpipe_lacks_is_a_skip(tmp_path):
    script = tmp_path / "worker.py"
    script.write_text("from pypto.runtime import ChipWorker\n\nChipWorker().init()\n")
    result = blockpipe("pypto", script)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"SKIP {script}: blockpipe lacks pypto.runtime.ChipWorker" in result.stdout
