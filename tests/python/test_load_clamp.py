"""pl.load(clamp=True): a window running off the end of the tensor reads
what exists (its valid shape cut at the tensor's end), zero elsewhere, and
pl.store writes back only that; without clamp the same window is an error."""

import numpy as np
import pytest

import blockpipe
import blockpipe.language as pl


def _program(rows, clamp):
    @pl.program
    class Edge:
        @pl.function(type=pl.FunctionType.InCore)
        def k(
            self,
            x: pl.Tensor[[rows, 24], pl.FP32],
            y: pl.Out[pl.Tensor[[rows, 24], pl.FP32]],
            s: pl.Out[pl.Tensor[[32, 1], pl.FP32]],
        ) -> tuple[pl.Tensor[[rows, 24], pl.FP32], pl.Tensor[[32, 1], pl.FP32]]:
            r = pl.tile.get_block_idx() * 16
            # A 16 x 32 window at row r: past the 24 columns always, past
            # the rows in the last block.
            t = pl.load(x, [r, 0], [16, 32], clamp=clamp)
            y = pl.store(pl.add(t, 1.0), [r, 0], y)
            s = pl.store(pl.row_sum(t), [r, 0], s)
            return y, s

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            x: pl.Tensor[[rows, 24], pl.FP32],
            y: pl.Out[pl.Tensor[[rows, 24], pl.FP32]],
            s: pl.Out[pl.Tensor[[32, 1], pl.FP32]],
        ) -> tuple[pl.Tensor[[rows, 24], pl.FP32], pl.Tensor[[32, 1], pl.FP32]]:
            with pl.spmd(2):
                y, s = self.k(x, y, s)
            return y, s

    return Edge


@pytest.mark.parametrize(
    "where", [dict(target="cpu-sim"), dict(target="cuda", device="cuda-emu")], ids=["cpu", "emu"]
)
def test_a_clamped_load_reads_what_exists(where):
    compiled = blockpipe.compile(_program(24, True), quiet=True, **where)
    x = np.random.default_rng(0).standard_normal((24, 24)).astype(np.float32)
    y = np.full((24, 24), 7.0, np.float32)
    s = np.full((32, 1), 7.0, np.float32)
    compiled(x, y, s)
    np.testing.assert_allclose(y, x + 1.0, rtol=1e-6)
    # Rows 24..31 lie past the tensor: their sums are not stored.
    np.testing.assert_allclose(s[:24, 0], x.sum(axis=1), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(s[24:], 7.0)


def test_the_same_window_without_clamp_is_an_error():
    with pytest.raises(blockpipe.CompileError, match="larger than tensor"):
        blockpipe.compile(_program(24, False), quiet=True)


def test_clamp_must_be_a_bool():
    @pl.jit
    def bad(x: pl.Tensor[[8, 8], pl.FP32], y: pl.Out[pl.Tensor[[8, 8], pl.FP32]]):
        with pl.at(level=pl.Level.CORE_GROUP):
            y = pl.store(pl.load(x, [0, 0], [8, 8], clamp=1), [0, 0], y)
        return y

    z = np.zeros((8, 8), np.float32)
    with pytest.raises(blockpipe.CompileError, match="clamp must be True or False, got 1"):
        bad(z, z)
