"""scripts/pypto_st.py runs a test file written for pypto's harness
(`import pypto.language as pl`, PTOTestCase, TensorSpec, torch in
compute_expected) on blockpipe and compares with its compute_expected: a
right program is "ok", a wrong expectation is a FAIL with a non-zero exit.
Also: a kernel annotated `-> tuple[pl.Tensor[...], pl.Tensor[...]]`."""

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


def run(tmp_path, offset):
    path = tmp_path / "test_two_outputs.py"
    path.write_text(textwrap.dedent(CASE).replace("OFFSET", offset))
    return subprocess.run(
        [sys.executable, str(REPO / "scripts" / "pypto_st.py"), str(path)],
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_a_pypto_test_file_runs_and_agrees(tmp_path):
    result = run(tmp_path, "1.0")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "ok   test_two_outputs.py::TwoOutputsTest: s, t equal compute_expected" in result.stdout


def test_a_disagreement_fails(tmp_path):
    result = run(tmp_path, "2.0")
    assert result.returncode == 1, result.stdout + result.stderr
    assert (
        "FAIL test_two_outputs.py::TwoOutputsTest: s differ from compute_expected (max |diff| 1)"
        in result.stdout
    )
