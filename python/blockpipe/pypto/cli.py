"""`python -m blockpipe pypto SCRIPT.py [ARGS]` and `python -m blockpipe
pypto-test FILE.py... [-k EXPR]`: the hook installed, pypto's checkout and
the files' directories on sys.path, then the script run as `__main__` or
the test files run by pytest with `plugin`; one line per case and a
pytest-style count; exit status 1 on a FAIL.
"""

from __future__ import annotations

import os
import pathlib
import re
import runpy
import sys
import tempfile
import time
from typing import List, Optional, Sequence

from blockpipe.pypto import hook, outcome, stubs


def checkout_root(path: pathlib.Path) -> Optional[pathlib.Path]:
    """The pypto checkout `path` lies in: the nearest directory above it
    with a pyproject.toml or python/pypto (where `examples` and `tests`
    are importable from)."""
    for directory in path.resolve().parents:
        if (directory / "pyproject.toml").is_file() or (directory / "python" / "pypto").is_dir():
            return directory
    return None


def _prepare(paths: Sequence[pathlib.Path], target: str) -> None:
    hook.install()
    stubs.TARGET = target
    front: List[str] = []
    for path in paths:
        root = checkout_root(path)
        here = path.resolve() if path.is_dir() else path.resolve().parent
        for directory in (here, root):
            if directory is not None and str(directory) not in front:
                front.append(str(directory))
    sys.path[:0] = [d for d in front if d not in sys.path]


def run_tests(
    files: Sequence[str],
    keyword: Optional[str],
    target: str,
    tracebacks: bool = False,
    reasons: bool = False,
) -> int:
    import pytest

    from blockpipe.pypto import plugin

    paths = [pathlib.Path(f) for f in files]
    absent = [str(p) for p in paths if not p.exists()]
    if absent:
        print(f"error: no such file: {', '.join(absent)}", file=sys.stderr)
        return 2
    _prepare(paths, target)
    roots = {checkout_root(p) or (p.resolve() if p.is_dir() else p.resolve().parent) for p in paths}
    rootdir = os.path.commonpath([str(r) for r in roots])
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    reporter = plugin.Reporter(show_tracebacks=tracebacks)
    start = time.time()
    with tempfile.TemporaryDirectory() as scratch:
        ini = pathlib.Path(scratch) / "pytest.ini"
        ini.write_text("[pytest]\n")
        args = [
            *map(str, paths),
            "-c",
            str(ini),
            "--rootdir",
            rootdir,
            "--noconftest",
            "--continue-on-collection-errors",
            "--import-mode=importlib",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:terminal",
            "-p",
            "no:warnings",
            "-p",
            "no:stepwise",
        ]
        if keyword:
            args += ["-k", keyword]
        code = pytest.main(args, plugins=[plugin, reporter])
    if reasons and reporter.reasons:
        print("-- SKIP and FAIL reasons, by cases --")
        print("\n".join(reporter.ranked_reasons()))
    print(reporter.summary(time.time() - start))
    if reporter.counts["failed"]:
        return 1
    return 2 if code in (pytest.ExitCode.USAGE_ERROR, pytest.ExitCode.INTERNAL_ERROR) else 0


def run_script(script: str, args: Sequence[str], target: str) -> int:
    """Runs a pypto script as `__main__`: ok when it ends (or exits 0),
    FAIL when it raises or exits otherwise, SKIP when blockpipe lacks what
    it uses."""
    path = pathlib.Path(script)
    if not path.is_file():
        print(f"error: {script}: no such file", file=sys.stderr)
        return 2
    _prepare([path], target)
    has_main = re.search(r"""__name__\s*==\s*["']__main__["']""", path.read_text()) is not None
    argv = sys.argv
    sys.argv = [str(path), *args]
    start = time.time()
    status, detail = "ok", ""
    try:
        runpy.run_path(str(path), run_name="__main__")
    except SystemExit as exit_:
        if exit_.code not in (None, 0):
            status, detail = outcome.FAIL, f"exit status {exit_.code}"
    except KeyboardInterrupt:
        raise
    except BaseException as error:  # noqa: BLE001 - the script's outcome is reported
        status, detail = outcome.classify(error)
        if status == outcome.FAIL:
            import traceback

            traceback.print_exc()
    finally:
        sys.argv = argv
    if status == "ok" and not has_main:
        detail = "no __main__ block: its definitions load, nothing runs"
    print(f"{'ok  ' if status == 'ok' else status} {script}" + (f": {detail}" if detail else ""))
    counts = {"ok": "1 passed", outcome.FAIL: "1 failed", outcome.SKIP: "1 skipped"}
    print(f"== {counts[status]} in {time.time() - start:.1f}s ==")
    return 1 if status == outcome.FAIL else 0
