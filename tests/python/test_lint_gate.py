"""The lint gate can fail: scripts/format.sh --check, the check `ctest -L
lint` runs, rejects a mis-formatted C++ file, a mis-formatted Python file
and a lint finding, naming each file, and passes their formatted twins."""

import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
FORMAT = ROOT / "scripts" / "format.sh"

BAD = {
    "clang-format": ("bad.cpp", "int  main( ){return 0;}\n"),
    "ruff-format": ("bad.py", "x = {  'a':1 }\n"),
    "ruff-check": ("unused.py", "import os\n"),
}
GOOD = {
    "clang-format": ("good.cpp", "int main() { return 0; }\n"),
    "ruff-format": ("good.py", 'x = {"a": 1}\n'),
    "ruff-check": ("used.py", "import os\n\nprint(os.sep)\n"),
}


def check(*paths, tool=None):
    only = ["--only", tool] if tool else []
    return subprocess.run(
        [FORMAT, "--check", *only, *map(str, paths)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize("tool", sorted(BAD))
def test_a_bad_file_fails_its_check_and_is_named(tmp_path, tool):
    bad = write(tmp_path, *BAD[tool])
    good = write(tmp_path, *GOOD[tool])
    result = check(bad, good, tool=tool)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert str(bad) in output, output
    assert str(good) not in output, output
    assert f"failed: {tool}" in result.stderr, output
    assert bad.read_text() == BAD[tool][1], "--check changed the file"


def test_formatted_files_pass_every_check(tmp_path):
    paths = [write(tmp_path, *GOOD[tool]) for tool in sorted(GOOD)]
    result = check(*paths)
    assert result.returncode == 0, result.stdout + result.stderr


def test_without_check_the_script_fixes_what_it_checks(tmp_path):
    paths = [write(tmp_path, *BAD[tool]) for tool in ("clang-format", "ruff-format")]
    fixed = subprocess.run([FORMAT, *map(str, paths)], capture_output=True, text=True)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert [p.read_text() for p in paths] == [GOOD["clang-format"][1], GOOD["ruff-format"][1]]
    assert check(*paths).returncode == 0
