"""`kernel`: the flagship down-projection + residual, y = x @ w + res, at
1024, 2048 and 4096 cubed f32 (1024 only with --quick), against numpy's
`x @ w + res` in the same process.

numpy comes from PyPI, so its matmul is OpenBLAS (printed in the `blas`
field); both sides use the machine's cores (OpenBLAS's threads, the
runtime's core groups on the same cores). ratio = our GFLOP/s / numpy's
(higher is better; goal >= 0.9). `peak_fraction` relates our GFLOP/s to this
CPU's peak, cores x FMA lanes x 2 x clock, with the clock read from
/proc/cpuinfo and the FMA width from its flags.
"""

from __future__ import annotations

import os
import re
import statistics
import time

import numpy as np

import blockpipe
import blockpipe.language as pl

SIZES = (1024, 2048, 4096)  # M = N = K
TM, TK, TN = 64, 64, 128


def make_program(size: int):
    """The flagship at size x size x size, size // TM blocks of TM rows."""
    M = N = K = size
    BLOCKS = M // TM

    @pl.program
    class DownProjLarge:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(
            self,
            x: pl.Tensor[[M, K], pl.FP32],
            w: pl.Tensor[[K, N], pl.FP32],
            res: pl.Tensor[[M, N], pl.FP32],
            out: pl.Out[pl.Tensor[[M, N], pl.FP32]],
        ) -> pl.Tensor[[M, N], pl.FP32]:
            row = pl.tile.get_block_idx() * TM
            for j in pl.range(N // TN):
                col = j * TN
                acc = pl.matmul(pl.load(x, [row, 0], [TM, TK]), pl.load(w, [0, col], [TK, TN]))
                for k in pl.range(1, K // TK):
                    acc = pl.matmul(
                        pl.load(x, [row, k * TK], [TM, TK]),
                        pl.load(w, [k * TK, col], [TK, TN]),
                        acc=acc,
                    )
                y = pl.add(acc, pl.load(res, [row, col], [TM, TN]))
                out = pl.store(y, [row, col], out)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            x: pl.Tensor[[M, K], pl.FP32],
            w: pl.Tensor[[K, N], pl.FP32],
            res: pl.Tensor[[M, N], pl.FP32],
            out: pl.Out[pl.Tensor[[M, N], pl.FP32]],
        ) -> pl.Tensor[[M, N], pl.FP32]:
            with pl.spmd(BLOCKS):
                out = self.kernel(x, w, res, out)
            return out

    return DownProjLarge


def blas_name() -> str:
    try:
        config = np.show_config(mode="dicts")
        return config["Build Dependencies"]["blas"]["name"]
    except Exception:  # older numpy
        return "unknown"


def cpu_peak_gflops() -> tuple:
    cores = os.cpu_count() or 1
    mhz, flags = 0.0, ""
    try:
        text = open("/proc/cpuinfo").read()
        mhz = max(float(m) for m in re.findall(r"cpu MHz\s*:\s*([\d.]+)", text))
        flags = re.search(r"flags\s*:\s*(.*)", text).group(1).split()
    except (OSError, ValueError, AttributeError):
        pass
    lanes = 16 if "avx512f" in flags else 8 if "avx2" in flags else 4
    fma_units = 2  # two FMA pipes per core on current x86 server cores
    return (
        cores * lanes * 2 * fma_units * mhz / 1e3,
        f"{cores} cores x {lanes} f32 lanes x 2 FMA units x 2 flops x {mhz:.0f} MHz",
    )


def _times(fn, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


# OpenBLAS's worker threads spin (sched_yield) for a while after each call
# before they sleep: measured right after numpy, our threads would share the
# 2 cores with them. Each side is therefore timed in its own block of calls,
# blocks alternate, and before each block of ours the BLAS threads are given
# time to park (their default spin is 2^28 cycles, about 0.1 s). The anchor's
# blocks start after the same pause: on these VMs the calls right after an
# idle spell run slower (numpy's own median went from 11.5-11.8 ms to
# 12.9-13.5 ms at 1024^3 when its blocks followed the pause), so only one
# side pausing would tilt the ratio.
_BLAS_PARK_SECONDS = 0.3


def _alternating_medians(ours_fn, anchor_fn, rounds, per_round):
    ours, anchor = [], []
    for _ in range(rounds):
        time.sleep(_BLAS_PARK_SECONDS)
        ours += _times(ours_fn, per_round)
        time.sleep(_BLAS_PARK_SECONDS)
        anchor += _times(anchor_fn, per_round)
    return statistics.median(ours), statistics.median(anchor)


def run(quick: bool):
    peak, peak_formula = cpu_peak_gflops()
    for size in SIZES[:1] if quick else SIZES:
        yield _run_size(size, quick, peak, peak_formula)


def _run_size(size, quick, peak, peak_formula):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((size, size), dtype=np.float32)
    w = rng.standard_normal((size, size), dtype=np.float32)
    res = rng.standard_normal((size, size), dtype=np.float32)
    out = np.zeros((size, size), dtype=np.float32)
    compiled = blockpipe.compile(make_program(size), quiet=True)
    compiled(x, w, res, out)  # warm up and check
    np.testing.assert_allclose(out, x @ w + res, rtol=1e-3, atol=1e-2 * (size / 1024) ** 0.5)
    # About the same time per size: calls grow as size^3.
    rounds, per_round = (3, 5) if quick else (5, max(1, 10 * (1024 // size) ** 3))
    ours, anchor = _alternating_medians(
        lambda: compiled(x, w, res, out), lambda: x @ w + res, rounds, per_round
    )
    flops = 2.0 * size**3
    ours_gflops, anchor_gflops = flops / ours / 1e9, flops / anchor / 1e9
    return {
        "bench": "kernel",
        "case": f"down_proj_residual {size}x{size}x{size} f32, {size // TM} blocks",
        "value": round(ours_gflops, 2),
        "unit": "GFLOP/s",
        "anchor": f"numpy x @ w + res ({blas_name()})",
        "anchor_value": round(anchor_gflops, 2),
        "ratio": round(ours_gflops / anchor_gflops, 3),
        "goal": ">= 0.9",
        "seconds": round(ours, 4),
        "anchor_seconds": round(anchor, 4),
        "blas": blas_name(),
        "peak_gflops": round(peak, 1),
        "peak_formula": peak_formula,
        "peak_fraction": round(ours_gflops / peak, 4) if peak else None,
    }
