"""Row softmax over 4 blocks: y[i] = exp(x[i] - max(x[i])) / sum(...).

The row maximum and row sum are Mx1 tiles; subtracting and dividing by
them broadcasts each row's value along that row.
"""

import numpy as np

import blockpipe
import blockpipe.language as pl

ROWS, COLS, BLOCKS = 64, 128, 4
TILE_ROWS = ROWS // BLOCKS


@pl.program
class RowSoftmax:
    @pl.function(type=pl.FunctionType.InCore)
    def softmax(
        self, x: pl.Tensor[[ROWS, COLS], pl.FP32], y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]
    ) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
        row = pl.tile.get_block_idx() * TILE_ROWS
        t = pl.load(x, [row, 0], [TILE_ROWS, COLS])
        e = pl.exp(pl.sub(t, pl.row_max(t)))
        return pl.store(pl.div(e, pl.row_sum(e)), [row, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self, x: pl.Tensor[[ROWS, COLS], pl.FP32], y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]
    ) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
        with pl.spmd(BLOCKS):
            y = self.softmax(x, y)
        return y


def main():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((ROWS, COLS), dtype=np.float32) * 4
    y = np.zeros_like(x)
    blockpipe.compile(RowSoftmax)(x, y)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)
    print("OK row_softmax")


if __name__ == "__main__":
    main()
