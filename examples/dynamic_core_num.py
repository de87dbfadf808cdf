"""core_num computed at run time from a tensor dimension: one block per 16
rows of an input whose row count is only known when the program runs. The
mixed kernel's pipe buffer is sized from that value."""

import numpy as np

import blockpipe
import blockpipe.language as pl

COLS, TILE_ROWS = 32, 16


@pl.program
class DynamicCoreNum:
    @pl.function(type=pl.FunctionType.InCore)
    def project(
        self,
        x: pl.Tensor[[pl.dynamic, COLS], pl.FP32],
        w: pl.Tensor[[COLS, COLS], pl.FP32],
        y: pl.Out[pl.Tensor[[pl.dynamic, COLS], pl.FP32]],
    ) -> pl.Tensor[[pl.dynamic, COLS], pl.FP32]:
        row = pl.tile.get_block_idx() * TILE_ROWS
        acc = pl.matmul(pl.load(x, [row, 0], [TILE_ROWS, COLS]), pl.load(w, [0, 0], [COLS, COLS]))
        return pl.store(pl.relu(acc), [row, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[pl.dynamic, COLS], pl.FP32],
        w: pl.Tensor[[COLS, COLS], pl.FP32],
        y: pl.Out[pl.Tensor[[pl.dynamic, COLS], pl.FP32]],
    ) -> pl.Tensor[[pl.dynamic, COLS], pl.FP32]:
        with pl.spmd(pl.tensor.dim(x, 0) // TILE_ROWS):
            y = self.project(x, w, y)
        return y


def main():
    rng = np.random.default_rng(2)
    compiled = blockpipe.compile(DynamicCoreNum)
    w = rng.standard_normal((COLS, COLS), dtype=np.float32)
    for rows in (16, 48, 160):
        x = rng.standard_normal((rows, COLS), dtype=np.float32)
        y = np.zeros((rows, COLS), dtype=np.float32)
        compiled(x, w, y)
        np.testing.assert_allclose(y, np.maximum(x @ w, 0), rtol=1e-5, atol=1e-4)
    print("OK dynamic_core_num")


if __name__ == "__main__":
    main()
