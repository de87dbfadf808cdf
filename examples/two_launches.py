"""Two launches of one mixed kernel with different core_num: 2 blocks over
the first half of the rows, 8 blocks over the second half. Each launch gets
its own pipe buffer, sized for its own block count."""

import re

import numpy as np

import blockpipe
import blockpipe.language as pl

ROWS, K, COLS, TILE_ROWS = 128, 32, 32, 8
HALF = 64


@pl.program
class TwoLaunches:
    @pl.function(type=pl.FunctionType.InCore)
    def scale_rows(
        self,
        x: pl.Tensor[[ROWS, K], pl.FP32],
        w: pl.Tensor[[K, COLS], pl.FP32],
        first: pl.Scalar[pl.INDEX],
        y: pl.InOut[pl.Tensor[[ROWS, COLS], pl.FP32]],
    ) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
        rows_per_block = HALF // pl.tile.get_block_num()
        base = first + pl.tile.get_block_idx() * rows_per_block
        for i in pl.range(rows_per_block // TILE_ROWS):
            row = base + i * TILE_ROWS
            acc = pl.matmul(pl.load(x, [row, 0], [TILE_ROWS, K]), pl.load(w, [0, 0], [K, COLS]))
            y = pl.store(pl.mul(acc, 2.0), [row, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[ROWS, K], pl.FP32],
        w: pl.Tensor[[K, COLS], pl.FP32],
        y: pl.InOut[pl.Tensor[[ROWS, COLS], pl.FP32]],
    ) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
        with pl.spmd(2):
            y = self.scale_rows(x, w, 0, y)
        with pl.spmd(8):
            y = self.scale_rows(x, w, HALF, y)
        return y


def main():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((ROWS, K), dtype=np.float32)
    w = rng.standard_normal((K, COLS), dtype=np.float32)
    y = np.zeros((ROWS, COLS), dtype=np.float32)
    compiled = blockpipe.compile(TwoLaunches)
    compiled(x, w, y)
    np.testing.assert_allclose(y, 2 * (x @ w), rtol=1e-5, atol=1e-4)
    # Each launch's pipe buffer is the kernel's per-block size (one named
    # constant) scaled by its own block count.
    orchestration = compiled.artifacts["orchestration/main.cpp"]
    per_block = compiled.manifest.orchestrations[0].launches[0].pipe_buffer_per_block_bytes
    name = re.search(rf"constexpr int64_t (\w+) = {per_block};", orchestration).group(1)
    assert f", {name} * 2);" in orchestration and f", {name} * 8);" in orchestration
    print("OK two_launches")


if __name__ == "__main__":
    main()
