#!/usr/bin/env python3
"""Runs blockpipe's benchmarks and prints one JSON object per result line.

    .venv/bin/python bench/run.py [--quick] [--build-dir DIR] [NAME...]

A benchmark NAME is either
  * a C++ executable `bench_NAME` in the build's bin/ directory (built by
    runtime/CMakeLists.txt from bench/NAME/), run with `--quick` when asked;
    it prints the JSON lines itself (or exits 77 when it cannot run here,
    e.g. without a GPU: reported as skipped), or
  * a Python module `bench/NAME.py` or package `bench/NAME/__init__.py` that
    defines `run(quick: bool) -> Iterable[dict]`.
With no NAME every benchmark found is run. Each line carries at least
bench, case, value, unit, anchor, anchor_value and ratio (ours / anchor,
measured in the same process run; see each benchmark for which way is
better). Exits non-zero when a benchmark fails or a NAME is unknown.
"""

import argparse
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH_DIR = ROOT / "bench"
REQUIRED = ("bench", "case", "value", "unit", "anchor", "anchor_value", "ratio")


def cpp_benchmarks(bin_dir):
    found = {}
    if bin_dir.is_dir():
        for path in sorted(bin_dir.glob("bench_*")):
            if path.is_file() and os.access(path, os.X_OK):
                found[path.name[len("bench_") :]] = path
    return found


def python_benchmarks():
    found = {}
    for path in sorted(BENCH_DIR.iterdir()):
        if path.suffix == ".py" and path.name not in ("run.py",) and not path.name.startswith("_"):
            found[path.stem] = path
        elif path.is_dir() and (path / "__init__.py").is_file():
            found[path.name] = path / "__init__.py"
    return found


def check(line, name):
    missing = [key for key in REQUIRED if key not in line]
    if missing:
        raise ValueError(f"benchmark {name}: result lacks {missing}: {line}")
    return line


# A C++ benchmark that cannot run here (e.g. no GPU) exits with this after
# saying why on stderr.
SKIPPED = 77


class Skipped(Exception):
    pass


def run_cpp(name, path, quick):
    command = [str(path)] + (["--quick"] if quick else [])
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    for raw in proc.stdout:
        raw = raw.strip()
        if raw.startswith("{"):
            yield check(json.loads(raw), name)
    if proc.wait() == SKIPPED:
        raise Skipped(f"benchmark {name} skipped (see above)")
    if proc.returncode != 0:
        raise RuntimeError(f"benchmark {name}: {path} exited {proc.returncode}")


def run_python(name, path, quick):
    spec = importlib.util.spec_from_file_location(f"bench_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for line in module.run(quick=quick):
        yield check(dict(line), name)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", metavar="NAME")
    parser.add_argument("--quick", action="store_true", help="fewer repetitions, for smoke tests")
    parser.add_argument(
        "--build-dir",
        type=Path,
        default=ROOT / "build",
        help="build tree whose bin/ holds bench_* (default: build)",
    )
    parser.add_argument("--list", action="store_true", help="list benchmarks")
    args = parser.parse_args(argv)

    cpp = cpp_benchmarks(args.build_dir / "bin")
    py = python_benchmarks()
    available = sorted(set(cpp) | set(py))
    if args.list:
        for name in available:
            print(name, "(c++)" if name in cpp else "(python)")
        return 0
    names = args.names or available
    unknown = [n for n in names if n not in cpp and n not in py]
    if unknown:
        print(
            f"unknown benchmark(s) {unknown}; available: {available} "
            f"(C++ ones are built into {args.build_dir / 'bin'})",
            file=sys.stderr,
        )
        return 2

    status = 0
    for name in names:
        try:
            lines = (
                run_cpp(name, cpp[name], args.quick)
                if name in cpp
                else run_python(name, py[name], args.quick)
            )
            for line in lines:
                print(json.dumps(line), flush=True)
        except Skipped as skipped:
            print(skipped, file=sys.stderr)
        except Exception as error:  # report and go on with the others
            print(f"benchmark {name} failed: {error}", file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
