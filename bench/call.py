"""`call`: what one call of a compiled program costs from Python beyond its
work: a 1-block kernel y = x + 1 on a 32 x 32 f32 tile (4 KiB in, 4 KiB
out), called back to back, against numpy's ufunc `np.add(x, 1, out=y)` on
the same bytes. Value: microseconds per call (lower is better); ratio =
ours / numpy; `overhead_us` = ours - numpy, blockpipe's own cost per call
(argument checks, upload, launch, wait, download). Goal: overhead_us < 10.
"""

from __future__ import annotations

import statistics
import time

import numpy as np

import blockpipe
import blockpipe.language as pl

R = C = 32
T = pl.Tensor[[R, C], pl.FP32]


@pl.program
class AddOne:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: T, y: pl.Out[T]) -> T:
        t = pl.add(pl.load(x, [0, 0], [R, C]), 1.0)
        return pl.store(t, [0, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: T, y: pl.Out[T]) -> T:
        y = self.kernel(x, y)
        return y


def _per_call_us(fn, calls):
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls * 1e6


def run(quick: bool):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((R, C), dtype=np.float32)
    y = np.zeros_like(x)
    compiled = blockpipe.compile(AddOne, quiet=True)
    compiled(x, y)  # warm up and check
    np.testing.assert_array_equal(y, x + np.float32(1))
    rounds, calls = (5, 500) if quick else (11, 3000)
    ours, anchor = [], []
    for _ in range(rounds):  # alternating, so drift hits both alike
        ours.append(_per_call_us(lambda: compiled(x, y), calls))
        anchor.append(_per_call_us(lambda: np.add(x, 1, out=y), calls))
    ours_us, anchor_us = statistics.median(ours), statistics.median(anchor)
    yield {
        "bench": "call",
        "case": f"1 block, {R}x{C} f32 in and out",
        "value": round(ours_us, 3),
        "unit": "us/call",
        "anchor": "numpy np.add(x, 1, out=y)",
        "anchor_value": round(anchor_us, 3),
        "ratio": round(ours_us / anchor_us, 2),
        "overhead_us": round(ours_us - anchor_us, 3),
        "goal": "overhead_us < 10",
    }
