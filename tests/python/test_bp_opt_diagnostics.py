"""bp-opt on every malformed input of tests/lit (each split of every
`-verify-diagnostics` test, run with that test's passes), and bp-translate on
every case of tests/lit/Codegen/invalid-*.mlir (each `//--- <name>` part, as
split-file cuts them): a clean `file:line:col: error:` and exit status 1,
never a crash."""

import pathlib
import re
import subprocess

import pytest

LIT_DIR = pathlib.Path(__file__).resolve().parents[1] / "lit"
SPLIT = re.compile(r"^// -----$", re.MULTILINE)
RUN_LINE = re.compile(r"^// RUN: bp-opt (.*)$", re.MULTILINE)
SPLIT_FILE_PART = re.compile(r"^//--- (\S+)\n", re.MULTILINE)


def pass_flags(text: str):
    """The bp-opt flags of the file's RUN line, less the test-only ones."""
    match = RUN_LINE.search(text)
    if not match:
        return []
    return [
        f
        for f in match.group(1).split()
        if f.startswith("-") and f.lstrip("-") not in ("split-input-file", "verify-diagnostics")
    ]


def malformed_cases():
    for path in sorted(LIT_DIR.rglob("*.mlir")):
        text = path.read_text()
        if "-verify-diagnostics" not in text:
            continue
        for index, chunk in enumerate(SPLIT.split(text)):
            if "expected-error" in chunk:
                yield pytest.param(
                    path, index, chunk, pass_flags(text), id=f"{path.relative_to(LIT_DIR)}#{index}"
                )


@pytest.mark.parametrize("path,index,chunk,flags", list(malformed_cases()))
def test_malformed_input_reports_file_line_col(bp_opt, tmp_path, path, index, chunk, flags):
    case = tmp_path / f"{path.stem}_{index}.mlir"
    case.write_text(chunk)
    proc = subprocess.run(
        [str(bp_opt), *flags, str(case)], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 1, proc.stderr
    first = proc.stderr.splitlines()[0]
    assert re.match(re.escape(str(case)) + r":\d+:\d+: error: ", first), first
    assert proc.stdout == ""


def test_cases_were_found():
    assert len(list(malformed_cases())) >= 50


def codegen_cases():
    for path in sorted((LIT_DIR / "Codegen").glob("invalid-*.mlir")):
        parts = SPLIT_FILE_PART.split(path.read_text())
        for name, chunk in zip(parts[1::2], parts[2::2]):
            yield pytest.param(path, name, chunk, id=f"{path.relative_to(LIT_DIR)}#{name}")


@pytest.fixture(scope="session")
def bp_translate(build_dir):
    path = build_dir / "bin" / "bp-translate"
    assert path.exists(), f"{path} is not built"
    return path


@pytest.mark.parametrize("path,name,chunk", list(codegen_cases()))
def test_codegen_error_reports_file_line_col(bp_translate, tmp_path, path, name, chunk):
    case = tmp_path / name
    case.write_text(chunk)
    proc = subprocess.run(
        [str(bp_translate), "--bp-to-cpp", "-o", "-", str(case)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1, proc.stderr
    first = proc.stderr.splitlines()[0]
    # `codegen: `: the dialect accepted the case, codegen rejected it.
    assert re.match(re.escape(str(case)) + r":\d+:\d+: error: codegen: ", first), first
    assert proc.stdout == ""


def test_codegen_cases_were_found():
    assert len(list(codegen_cases())) >= 40
