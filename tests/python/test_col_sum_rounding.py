"""pl.col_sum rounds as pypto's TCOLSUM: row by row, each sum in the
tile's dtype; with a scratch tile, in a binary tree, each sum in the
dtype. FP16 and BF16 (where the order shows), FP32, against NumPy sums
made the same way here."""

import ml_dtypes
import numpy as np
import pytest

from targets import TARGETS, compile_at

import blockpipe.language as pl

DTYPES = {pl.FP16: np.float16, pl.BF16: ml_dtypes.bfloat16, pl.FP32: np.float32}
ROWS, COLS = 13, 16  # odd: the tree's odd last row


def sequential(x):
    total = x[0].copy()
    for row in x[1:]:
        total = (total + row).astype(x.dtype)
    return total[None]


def tree(x):
    level = x.copy()
    while len(level) > 1:
        half = len(level) // 2
        summed = (level[0 : 2 * half : 2] + level[1 : 2 * half : 2]).astype(x.dtype)
        if len(level) % 2:
            summed[0] = (summed[0] + level[-1]).astype(x.dtype)
        level = summed
    return level


def _program(dtype, scratch: bool):
    T = pl.Tensor[[ROWS, COLS], dtype]
    S = pl.Tensor[[1, COLS], dtype]

    @pl.program
    class Sums:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(self, x: T, y: pl.Out[S]) -> S:
            t = pl.load(x, [0, 0], [ROWS, COLS])
            if scratch:
                tmp = pl.tile.create([ROWS, COLS], dtype=dtype)
                s = pl.tile.col_sum(t, tmp)
            else:
                s = pl.tile.col_sum(t)
            return pl.store(s, [0, 0], y)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: T, y: pl.Out[S]) -> S:
            y = self.kernel(x, y)
            return y

    return Sums


@pytest.mark.parametrize("scratch", [False, True], ids=["sequential", "tree"])
@pytest.mark.parametrize("dtype", list(DTYPES), ids=[d.name for d in DTYPES])
@pytest.mark.parametrize("where", TARGETS)
def test_column_sums_round_each_step(where, dtype, scratch, monkeypatch):
    np_dtype = DTYPES[dtype]
    rng = np.random.default_rng(13)
    # Values whose sums lose bits in 16 bits: the orders give other sums.
    x = (rng.standard_normal((ROWS, COLS)) * 100 + 0.37).astype(np_dtype)
    want = tree(x) if scratch else sequential(x)
    if dtype is not pl.FP32:
        other = sequential(x) if scratch else tree(x)
        assert (other != want).any()  # the test tells the orders apart
    compiled = compile_at(_program(dtype, scratch), where, monkeypatch)
    y = np.zeros((1, COLS), np_dtype)
    compiled(x, y)
    np.testing.assert_array_equal(y.astype(np.float32), want.astype(np.float32))
