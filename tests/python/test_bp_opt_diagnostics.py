"""bp-opt on every malformed input of tests/lit (each split of every
`-verify-diagnostics` test, run with that test's passes): a clean
`file:line:col: error:` and exit status 1, never a crash."""

import pathlib
import re
import subprocess

import pytest

LIT_DIR = pathlib.Path(__file__).resolve().parents[1] / "lit"
SPLIT = re.compile(r"^// -----$", re.MULTILINE)
RUN_LINE = re.compile(r"^// RUN: bp-opt (.*)$", re.MULTILINE)


def pass_flags(text: str):
    """The bp-opt flags of the file's RUN line, less the test-only ones."""
    match = RUN_LINE.search(text)
    if not match:
        return []
    return [f for f in match.group(1).split()
            if f.startswith("-") and f.lstrip("-") not in ("split-input-file", "verify-diagnostics")]


def malformed_cases():
    for path in sorted(LIT_DIR.rglob("*.mlir")):
        text = path.read_text()
        if "-verify-diagnostics" not in text:
            continue
        for index, chunk in enumerate(SPLIT.split(text)):
            if "expected-error" in chunk:
                yield pytest.param(path, index, chunk, pass_flags(text),
                                   id=f"{path.relative_to(LIT_DIR)}#{index}")


@pytest.mark.parametrize("path,index,chunk,flags", list(malformed_cases()))
def test_malformed_input_reports_file_line_col(bp_opt, tmp_path, path, index, chunk, flags):
    case = tmp_path / f"{path.stem}_{index}.mlir"
    case.write_text(chunk)
    proc = subprocess.run([str(bp_opt), *flags, str(case)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1, proc.stderr
    first = proc.stderr.splitlines()[0]
    assert re.match(re.escape(str(case)) + r":\d+:\d+: error: ", first), first
    assert proc.stdout == ""


def test_cases_were_found():
    assert len(list(malformed_cases())) >= 50
