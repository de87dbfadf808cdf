"""`compile`: how long blockpipe takes to compile each example.

Cases per example: frontend + passes + codegen (no C++ build), and a
warm-cache `blockpipe.compile()` (everything, the C++ build found in the
cache). One cold C++ build (empty cache) is reported for the flagship. The
anchor, measured in the same run, is CPython's own `compile()` of the
example's source file: ratio = ours / anchor (lower is better). Goals: the
flagship's frontend + passes + codegen <= 50 ms, a warm compile <= 10 ms
(`goal_ms`).
"""

from __future__ import annotations

import functools
import importlib.util
import os
import pathlib
import statistics
import tempfile
import time

import blockpipe
from blockpipe.compiler import compile_to_cpp
from blockpipe.language.program import Program

EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / "examples"
FLAGSHIP = "down_proj_residual"


def _median_ms(fn, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def _programs():
    for path in sorted(EXAMPLES.glob("*.py")):
        spec = importlib.util.spec_from_file_location(f"bench_example_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        for value in vars(module).values():
            if isinstance(value, Program):
                yield path, value


def _front_to_cpp(program):
    return compile_to_cpp(program, "cpu-sim", project=program.name.lower())


def _line(case, value, anchor_value, goal=None):
    line = {
        "bench": "compile",
        "case": case,
        "value": round(value, 3),
        "unit": "ms",
        "anchor": "CPython compile() of the example source",
        "anchor_value": round(anchor_value, 3),
        "ratio": round(value / anchor_value, 2),
    }
    if goal is not None:
        line["goal_ms"] = goal
    return line


def run(quick: bool):
    repeats = 5 if quick else 21
    for path, program in _programs():
        source = path.read_text()
        anchor = _median_ms(functools.partial(compile, source, str(path), "exec"), repeats)
        front = _median_ms(functools.partial(_front_to_cpp, program), repeats)
        flagship = path.stem == FLAGSHIP
        yield _line(
            f"{path.stem}: frontend+passes+codegen", front, anchor, 50 if flagship else None
        )
        blockpipe.compile(program, quiet=True)  # fill the cache
        warm = _median_ms(functools.partial(blockpipe.compile, program, quiet=True), repeats)
        yield _line(f"{path.stem}: warm-cache compile()", warm, anchor, 10 if flagship else None)
        if flagship:
            with tempfile.TemporaryDirectory() as cache:
                previous = os.environ.get("BLOCKPIPE_CACHE_DIR")
                os.environ["BLOCKPIPE_CACHE_DIR"] = cache
                try:
                    start = time.perf_counter()
                    blockpipe.compile(program, quiet=True)
                    cold = (time.perf_counter() - start) * 1e3
                finally:
                    if previous is None:
                        del os.environ["BLOCKPIPE_CACHE_DIR"]
                    else:
                        os.environ["BLOCKPIPE_CACHE_DIR"] = previous
            yield _line(f"{path.stem}: cold compile() with C++ build", cold, anchor)
