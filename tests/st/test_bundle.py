"""scripts/st_bundle.py turns system tests into cases that bp-run runs
where the compiler is not; its run.py passes them against the tests' numpy
references, and fails a case whose outputs or error differ."""

import json
import pathlib
import subprocess
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
TESTS = [
    "tests/st/test_examples.py::test_example[down_proj_residual]",
    "tests/st/test_examples.py::test_example[pipeline_mlp]",
    "tests/st/test_variations.py::test_two_pipes_and_slot_num[4-1]",
    "tests/st/test_errors.py",
]


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    out = tmp_path_factory.mktemp("bundle")
    subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "st_bundle.py"),
            "--target",
            "cpu-sim",
            "-o",
            str(out),
            *TESTS,
        ],
        check=True,
        cwd=ROOT,
        capture_output=True,
    )
    return out


def run_bundle(bundle, *args):
    return subprocess.run(
        [sys.executable, str(bundle / "run.py"), *args], capture_output=True, text=True
    )


def case_dir(bundle, part):
    return next(p for p in (bundle / "cases").iterdir() if part in p.name)


def test_the_cases_pass_against_the_tests_numpy_references(bundle, tmp_path):
    proc = run_bundle(bundle, "--json", str(tmp_path / "results.jsonl"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    by_case = {r["case"]: r for r in results}
    flagship = by_case["test_examples.py::test_example[down_proj_residual][0]"]
    assert flagship["status"] == "PASS" and "out vs numpy" in flagship["detail"], flagship
    two_pipes = by_case["test_variations.py::test_two_pipes_and_slot_num[4-1][0]"]
    assert two_pipes["status"] == "PASS", two_pipes
    error = by_case["test_errors.py::test_the_block_past_the_end_fails_naming_its_line[0]"]
    assert error["status"] == "PASS" and "block 5" in error["detail"], error
    # bp-run runs pipelines too: every pipeline_mlp case passes.
    pipelines = [r for r in results if "pipeline_mlp" in r["case"]]
    assert len(pipelines) == 3 and all(r["status"] == "PASS" for r in pipelines), pipelines
    assert f"{len(results)} passed, 0 failed, 0 skipped" in proc.stdout


def test_an_output_that_differs_fails_its_case(bundle):
    case = case_dir(bundle, "down_proj_residual")
    expected = dict(np.load(case / "expected.npz"))
    expected["out"] = expected["out"].copy()
    expected["out"][3, 5] += 1.0
    np.savez(case / "expected.npz", **expected)
    proc = run_bundle(bundle, "--filter", "down_proj_residual")
    assert proc.returncode == 1, proc.stdout
    assert (
        "FAIL test_examples.py::test_example[down_proj_residual][0]: 'out' differs from numpy "
        "at 1 of 4096 elements" in proc.stdout
    ), proc.stdout
    assert "first at (3, 5)" in proc.stdout, proc.stdout


def test_an_error_naming_another_block_fails_its_case(bundle):
    case = case_dir(bundle, "test_errors")
    description = json.loads((case / "case.json").read_text())
    description["error"]["blocks"] = ["block 4"]
    (case / "case.json").write_text(json.dumps(description))
    proc = run_bundle(bundle, "--filter", "test_errors")
    assert proc.returncode == 1, proc.stdout
    assert "the error does not name block 4" in proc.stdout, proc.stdout
