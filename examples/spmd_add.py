"""Elementwise add over 4 blocks: each block adds its own 32 rows."""

import numpy as np

import blockpipe
import blockpipe.language as pl

ROWS, COLS, BLOCKS = 128, 64, 4
TILE_ROWS = ROWS // BLOCKS


@pl.program
class SpmdAdd:
    @pl.function(type=pl.FunctionType.InCore)
    def add(
        self,
        a: pl.Tensor[[ROWS, COLS], pl.FP32],
        b: pl.Tensor[[ROWS, COLS], pl.FP32],
        c: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]],
    ) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
        row = pl.tile.get_block_idx() * TILE_ROWS
        x = pl.load(a, [row, 0], [TILE_ROWS, COLS])
        y = pl.load(b, [row, 0], [TILE_ROWS, COLS])
        return pl.store(pl.add(x, y), [row, 0], c)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        a: pl.Tensor[[ROWS, COLS], pl.FP32],
        b: pl.Tensor[[ROWS, COLS], pl.FP32],
        c: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]],
    ) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
        with pl.spmd(BLOCKS):
            c = self.add(a, b, c)
        return c


def main():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((ROWS, COLS), dtype=np.float32)
    b = rng.standard_normal((ROWS, COLS), dtype=np.float32)
    c = np.zeros_like(a)
    blockpipe.compile(SpmdAdd)(a, b, c)
    np.testing.assert_allclose(c, a + b, rtol=1e-6)
    print("OK spmd_add")


if __name__ == "__main__":
    main()
