#!/usr/bin/env python3
"""Runs blockpipe's benchmarks and prints one JSON object per result line.

    .venv/bin/python bench/run.py [--quick] [--build-dir DIR] [--save [PATH]] [NAME...]

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

--save also writes the lines to a JSON-lines file (default
bench/results/DATE-COMMIT.jsonl), after a header line naming the machine,
the load and the commit (run_header); PATH must end in .jsonl.
"""

import argparse
import datetime
import importlib.util
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH_DIR = ROOT / "bench"
REQUIRED = ("bench", "case", "value", "unit", "anchor", "anchor_value", "ratio")
RESULTS_DIR = BENCH_DIR / "results"
# The CPU features that choose the generated kernels' and the anchors' code paths.
ISA_FLAGS = (
    "sse4_2 avx avx2 fma f16c avx512f avx512bw avx512vl avx512_bf16 avx512_fp16 amx_tile asimd sve"
).split()


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


def machine(cpuinfo=Path("/proc/cpuinfo")):
    """The CPU model, the ISA_FLAGS it has, and the core count."""
    model, flags = None, set()
    try:
        text = cpuinfo.read_text()
    except OSError:
        text = ""
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key = key.strip()
        if key == "model name" and model is None:
            model = value.strip()
        elif key in ("flags", "Features") and not flags:
            flags = set(value.split())
    return {
        "cpu_model": model,
        "isa": [f for f in ISA_FLAGS if f in flags],
        "cores": os.cpu_count(),
    }


def git_commit(root=ROOT):
    """HEAD's short hash, with -dirty when tracked files differ from it; None outside git."""
    env = dict(os.environ, GIT_OPTIONAL_LOCKS="0")  # a status must not take the index lock

    def git(*args):
        return subprocess.run(
            ["git", *args], cwd=root, env=env, capture_output=True, text=True, check=True
        ).stdout.strip()

    try:
        head = git("rev-parse", "--short", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.CalledProcessError):
        return None
    return head + ("-dirty" if dirty else "")


def run_header(command, load_start, load_end, note=None, date=None):
    """The first line of a results file: what ran, where, on which commit.

    load_start and load_end are os.getloadavg() before and after the run."""
    return {
        "kind": "run",
        "date": date or datetime.date.today().isoformat(),
        "commit": git_commit(),
        **machine(),
        "load_avg": {
            "start": [round(x, 2) for x in load_start],
            "end": [round(x, 2) for x in load_end],
        },
        "command": command,
        "note": note,
    }


def default_save_path(header, directory=None):
    """bench/results/DATE-COMMIT.jsonl, or DATE-COMMIT-N.jsonl when that exists."""
    directory = RESULTS_DIR if directory is None else directory
    stem = f"{header['date']}-{header['commit'] or 'unknown'}"
    path, n = directory / f"{stem}.jsonl", 2
    while path.exists():
        path, n = directory / f"{stem}-{n}.jsonl", n + 1
    return path


def save(path, header, results):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as out:
        for line in (header, *results):
            out.write(json.dumps(line) + "\n")


def read_results(path):
    """(header, result lines) of a file written by save()."""
    with open(path) as lines:
        header, *results = [json.loads(line) for line in lines if line.strip()]
    return header, results


# --save without a PATH.
DEFAULT_SAVE = ""


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    load_start = os.getloadavg()
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
    parser.add_argument(
        "--save",
        nargs="?",
        const=DEFAULT_SAVE,
        metavar="PATH",
        help="also write the results, after a header naming the machine and commit, to PATH "
        "(a .jsonl file; default bench/results/DATE-COMMIT.jsonl)",
    )
    parser.add_argument("--note", help="a note for the saved header (what else ran, ...)")
    args = parser.parse_args(argv)
    if args.save and not args.save.endswith(".jsonl"):
        # `--save kernel`: argparse took a benchmark NAME for the optional PATH.
        args.names.insert(0, args.save)
        args.save = DEFAULT_SAVE

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
    results = []
    try:
        for name in names:
            try:
                lines = (
                    run_cpp(name, cpp[name], args.quick)
                    if name in cpp
                    else run_python(name, py[name], args.quick)
                )
                for line in lines:
                    print(json.dumps(line), flush=True)
                    results.append(line)
            except Skipped as skipped:
                print(skipped, file=sys.stderr)
            except Exception as error:  # report and go on with the others
                print(f"benchmark {name} failed: {error}", file=sys.stderr)
                status = 1
    finally:  # what was measured is kept, even when interrupted
        if args.save is not None:
            command = shlex.join(["bench/run.py", *argv])
            header = run_header(command, load_start, os.getloadavg(), args.note)
            path = Path(args.save) if args.save else default_save_path(header)
            save(path, header, results)
            print(f"saved {len(results)} results to {path}", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
