"""pypto's pl.tile.read: one element of a Vec tile as a scalar (bp.element),
here a row index read from an index tile and an element picked by the
block; an index outside the tile fails the launch at its line, or the
compile when it is a number."""

import numpy as np
import pytest

from targets import TARGETS, compile_at

import blockpipe
import blockpipe.language as pl


@pl.program
class Reads:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(
        self,
        index: pl.Tensor[[1, 8], pl.INT32],
        src: pl.Tensor[[4, 32], pl.FP32],
        dst: pl.InOut[pl.Tensor[[32, 32], pl.FP32]],
        picked: pl.Out[pl.Tensor[[4, 4], pl.FP32]],
        col: pl.Scalar[pl.INDEX],
    ):
        b = pl.tile.get_block_idx()
        row = pl.tile.read(pl.load(index, [0, 0], [1, 8]), [0, b])
        values = pl.load(src, [b, 0], [1, 32])
        dst = pl.store(values, [pl.cast(row, pl.INDEX), 0], dst)
        v = pl.tile.read(values, col)  # pypto's flat form, of a tile of one row
        picked = pl.store(pl.full([1, 4], dtype=pl.FP32, value=0.0) + v, [b, 0], picked)
        return dst, picked

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        index: pl.Tensor[[1, 8], pl.INT32],
        src: pl.Tensor[[4, 32], pl.FP32],
        dst: pl.InOut[pl.Tensor[[32, 32], pl.FP32]],
        picked: pl.Out[pl.Tensor[[4, 4], pl.FP32]],
        col: pl.Scalar[pl.INDEX],
    ):
        with pl.spmd(4):
            dst, picked = self.kernel(index, src, dst, picked, col)
        return dst, picked


@pytest.mark.parametrize("where", TARGETS)
def test_elements_read_from_tiles(where, monkeypatch):
    compiled = compile_at(Reads, where, monkeypatch)
    rng = np.random.default_rng(19)
    index = np.array([[7, 2, 30, 11, 0, 0, 0, 0]], np.int32)
    src = rng.standard_normal((4, 32)).astype(np.float32)
    dst = np.zeros((32, 32), np.float32)
    picked = np.zeros((4, 4), np.float32)
    compiled(index, src, dst, picked, 5)
    want = np.zeros((32, 32), np.float32)
    want[index[0, :4]] = src
    np.testing.assert_array_equal(dst, want)
    np.testing.assert_array_equal(picked, np.repeat(src[:, 5:6], 4, axis=1))


@pl.program
class Picks:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(
        self,
        x: pl.Tensor[[1, 32], pl.FP32],
        y: pl.Out[pl.Tensor[[1, 4], pl.FP32]],
        col: pl.Scalar[pl.INDEX],
    ) -> pl.Tensor[[1, 4], pl.FP32]:
        v = pl.tile.read(pl.load(x, [0, 0], [1, 32]), col)
        return pl.store(pl.full([1, 4], dtype=pl.FP32, value=0.0) + v, [0, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[1, 32], pl.FP32],
        y: pl.Out[pl.Tensor[[1, 4], pl.FP32]],
        col: pl.Scalar[pl.INDEX],
    ) -> pl.Tensor[[1, 4], pl.FP32]:
        y = self.kernel(x, y, col)
        return y


@pytest.mark.parametrize("where", ["cpu-sim", "cuda-emu"])
def test_an_index_outside_the_tile_fails_at_its_line(where, monkeypatch):
    compiled = compile_at(Picks, where, monkeypatch)
    x = np.arange(32, dtype=np.float32).reshape(1, 32)
    y = np.full((1, 4), 3.0, np.float32)
    compiled(x, y, 31)
    assert (y == 31.0).all()
    y[:] = 3.0
    with pytest.raises(blockpipe.ExecutionError, match="read of a tile at test_tile_read.py:") as e:
        compiled(x, y, 32)
    assert "index 32 of dimension 1 is outside the tile's [0, 32)" in str(e.value), e.value
    assert (y == 3.0).all()


def test_a_number_outside_the_tile_is_an_error_at_its_line():
    @pl.program
    class Outside:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(
            self, x: pl.Tensor[[2, 8], pl.FP32], y: pl.Out[pl.Tensor[[2, 8], pl.FP32]]
        ) -> pl.Tensor[[2, 8], pl.FP32]:
            t = pl.load(x, [0, 0], [2, 8])
            v = pl.tile.read(t, [2, 0])
            return pl.store(t + v, [0, 0], y)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self, x: pl.Tensor[[2, 8], pl.FP32], y: pl.Out[pl.Tensor[[2, 8], pl.FP32]]
        ) -> pl.Tensor[[2, 8], pl.FP32]:
            y = self.kernel(x, y)
            return y

    with pytest.raises(blockpipe.CompileError, match="outside the tile") as info:
        blockpipe.compile(Outside, quiet=True)
    source = open(__file__).read().splitlines()
    assert info.value.line == next(
        i for i, text in enumerate(source, 1) if "v = pl.tile.read(t, [2, 0])" in text
    )


@pytest.mark.parametrize("where", ["cpu-sim", "cuda-emu"])
def test_blocks_starting_after_a_failure_skip_together(where, monkeypatch):
    # Blocks 1-3 may start while block 0 fails: on CUDA each group skips its
    # body as one (its threads split at a barrier before), so the launch
    # reports block 0's error.
    compiled = compile_at(Reads, where, monkeypatch)
    index = np.zeros((1, 8), np.int32)
    src = np.ones((4, 32), np.float32)
    dst = np.full((32, 32), 3.0, np.float32)
    picked = np.full((4, 4), 3.0, np.float32)
    for _ in range(3):
        with pytest.raises(blockpipe.ExecutionError, match="read of a tile at test_tile_read.py:"):
            compiled(index, src, dst, picked, 32)
        assert (dst == 3.0).all() and (picked == 3.0).all()
