"""`ops`: the tile library's vector loops on cpu-sim against NumPy on the
same data: an elementwise op (exp), a row reduction (row_sum), a gather
(torch.gather along the last dim) and a sort of each row (pypto's sort32
and two mrgsort merges, the values read back), each over a [ROWS, COLS]
FP32 tensor split into blocks of 64 rows (32 for the sort), one launch per call.

value: our throughput in GB/s (bytes read + written / the median call's
time, the call's copies in and out included); anchor: NumPy's (np.exp,
x.sum(axis=1), np.take_along_axis, np.sort along the rows) in the same
process. ratio = ours / NumPy's (higher is better). Each line names the
CPU's ISA extensions (`isa`) that decide which vector code both sides run.
"""

from __future__ import annotations

import importlib.util
import statistics
import time
from pathlib import Path

import numpy as np

import blockpipe
import blockpipe.language as pl

COLS = 256
BLOCK_ROWS = 64
SORT_ROWS = 32  # the pairs take twice the values' room


def _isa():
    spec = importlib.util.spec_from_file_location("bench_run", Path(__file__).with_name("run.py"))
    run_module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(run_module)
    return run_module.machine()["isa"]


def _programs(rows: int):
    blocks = rows // BLOCK_ROWS

    @pl.program
    class Exp:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(
            self, x: pl.Tensor[[rows, COLS], pl.FP32], y: pl.Out[pl.Tensor[[rows, COLS], pl.FP32]]
        ) -> pl.Tensor[[rows, COLS], pl.FP32]:
            r = pl.tile.get_block_idx() * BLOCK_ROWS
            return pl.store(pl.exp(pl.load(x, [r, 0], [BLOCK_ROWS, COLS])), [r, 0], y)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self, x: pl.Tensor[[rows, COLS], pl.FP32], y: pl.Out[pl.Tensor[[rows, COLS], pl.FP32]]
        ) -> pl.Tensor[[rows, COLS], pl.FP32]:
            with pl.spmd(blocks):
                y = self.kernel(x, y)
            return y

    @pl.program
    class RowSum:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(
            self, x: pl.Tensor[[rows, COLS], pl.FP32], y: pl.Out[pl.Tensor[[rows, 1], pl.FP32]]
        ) -> pl.Tensor[[rows, 1], pl.FP32]:
            r = pl.tile.get_block_idx() * BLOCK_ROWS
            return pl.store(pl.row_sum(pl.load(x, [r, 0], [BLOCK_ROWS, COLS])), [r, 0], y)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self, x: pl.Tensor[[rows, COLS], pl.FP32], y: pl.Out[pl.Tensor[[rows, 1], pl.FP32]]
        ) -> pl.Tensor[[rows, 1], pl.FP32]:
            with pl.spmd(blocks):
                y = self.kernel(x, y)
            return y

    @pl.program
    class Gather:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(
            self,
            x: pl.Tensor[[rows, COLS], pl.FP32],
            idx: pl.Tensor[[rows, COLS], pl.INT32],
            y: pl.Out[pl.Tensor[[rows, COLS], pl.FP32]],
        ) -> pl.Tensor[[rows, COLS], pl.FP32]:
            r = pl.tile.get_block_idx() * BLOCK_ROWS
            t = pl.load(x, [r, 0], [BLOCK_ROWS, COLS])
            i = pl.load(idx, [r, 0], [BLOCK_ROWS, COLS])
            return pl.store(pl.tensor.gather(t, dim=-1, index=i), [r, 0], y)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            x: pl.Tensor[[rows, COLS], pl.FP32],
            idx: pl.Tensor[[rows, COLS], pl.INT32],
            y: pl.Out[pl.Tensor[[rows, COLS], pl.FP32]],
        ) -> pl.Tensor[[rows, COLS], pl.FP32]:
            with pl.spmd(blocks):
                y = self.kernel(x, idx, y)
            return y

    @pl.program
    class Sort:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(
            self,
            x: pl.Tensor[[rows, COLS], pl.FP32],
            idx: pl.Tensor[[rows, COLS], pl.UINT32],
            y: pl.Out[pl.Tensor[[rows, COLS], pl.FP32]],
        ) -> pl.Tensor[[rows, COLS], pl.FP32]:
            r = pl.tile.get_block_idx() * SORT_ROWS
            t = pl.load(x, [r, 0], [SORT_ROWS, COLS])
            pairs = pl.tile.sort32(t, pl.load(idx, [r, 0], [SORT_ROWS, COLS]))
            pairs = pl.tile.mrgsort(pl.tile.mrgsort(pairs, block_len=64), block_len=256)
            values = pl.tile.gather_mask(pairs, mask_pattern=pl.tile.MaskPattern.P0101)
            return pl.store(values, [r, 0], y)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            x: pl.Tensor[[rows, COLS], pl.FP32],
            idx: pl.Tensor[[rows, COLS], pl.UINT32],
            y: pl.Out[pl.Tensor[[rows, COLS], pl.FP32]],
        ) -> pl.Tensor[[rows, COLS], pl.FP32]:
            with pl.spmd(rows // SORT_ROWS):
                y = self.kernel(x, idx, y)
            return y

    return Exp, RowSum, Gather, Sort


def _median_seconds(fn, repeats: int) -> float:
    fn()  # warm
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def run(quick: bool):
    rows = 1024 if quick else 8192
    repeats = 5 if quick else 20
    isa = _isa()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((rows, COLS), dtype=np.float32)
    idx = rng.integers(0, COLS, (rows, COLS)).astype(np.int32)
    y = np.zeros((rows, COLS), np.float32)
    sums = np.zeros((rows, 1), np.float32)
    order = np.tile(np.arange(COLS, dtype=np.uint32), (rows, 1))
    exp_p, sum_p, gather_p, sort_p = (blockpipe.compile(p, quiet=True) for p in _programs(rows))
    cases = [
        ("exp", lambda: exp_p(x, y), lambda: np.exp(x, out=y), 2 * x.nbytes, y, np.exp(x)),
        (
            "row_sum",
            lambda: sum_p(x, sums),
            lambda: np.sum(x, axis=1, keepdims=True, out=sums),
            x.nbytes + sums.nbytes,
            sums,
            x.sum(axis=1, keepdims=True),
        ),
        (
            "gather",
            lambda: gather_p(x, idx, y),
            lambda: np.take_along_axis(x, idx, axis=-1),
            2 * x.nbytes + idx.nbytes,
            y,
            np.take_along_axis(x, idx, axis=-1),
        ),
        (
            "sort",
            lambda: sort_p(x, order, y),
            lambda: np.sort(x, axis=1),
            2 * x.nbytes + order.nbytes,
            y,
            np.sort(x, axis=1)[:, ::-1],
        ),
    ]
    for case, ours, anchor, nbytes, result, want in cases:
        ours_s = _median_seconds(ours, repeats)
        ours()
        np.testing.assert_allclose(result, want, rtol=1e-5, atol=1e-4)  # measured what it says
        anchor_s = _median_seconds(anchor, repeats)
        yield {
            "bench": "ops",
            "case": f"{case} {rows}x{COLS} f32",
            "value": round(nbytes / ours_s / 1e9, 3),
            "unit": "GB/s",
            "anchor": "numpy",
            "anchor_value": round(nbytes / anchor_s / 1e9, 3),
            "ratio": round(anchor_s / ours_s, 3),
            "blocks": rows // (SORT_ROWS if case == "sort" else BLOCK_ROWS),
            "isa": isa,
        }
