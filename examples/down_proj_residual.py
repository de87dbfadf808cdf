"""The flagship: a down projection plus residual, `y = x @ w + res`.

One incore kernel mixes cube work (the matmul) and vector work (the add);
the compiler splits it into an AIC half and an AIV half that pass the
accumulator through a GM pipe, and gives each of the 4 blocks its own slice
of the pipe buffer.
"""

import numpy as np

import blockpipe
import blockpipe.language as pl

ROWS, K, COLS, BLOCKS = 128, 64, 32, 4
TILE_ROWS = ROWS // BLOCKS


@pl.program
class DownProjResidual:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(
        self,
        x: pl.Tensor[[ROWS, K], pl.FP32],
        w: pl.Tensor[[K, COLS], pl.FP32],
        res: pl.Tensor[[ROWS, COLS], pl.FP32],
        out: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]],
    ) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
        row = pl.tile.get_block_idx() * TILE_ROWS
        a = pl.load(x, [row, 0], [TILE_ROWS, K], target_memory=pl.MemorySpace.Mat)
        b = pl.load(w, [0, 0], [K, COLS], target_memory=pl.MemorySpace.Mat)
        acc = pl.matmul(
            pl.move(a, target_memory=pl.MemorySpace.Left),
            pl.move(b, target_memory=pl.MemorySpace.Right),
        )  # cube
        y = pl.add(acc, pl.load(res, [row, 0], [TILE_ROWS, COLS]))  # vector
        return pl.store(y, [row, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[ROWS, K], pl.FP32],
        w: pl.Tensor[[K, COLS], pl.FP32],
        res: pl.Tensor[[ROWS, COLS], pl.FP32],
        out: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]],
    ) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
        with pl.spmd(BLOCKS):
            out = self.kernel(x, w, res, out)
        return out


def main():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((ROWS, K), dtype=np.float32)
    w = rng.standard_normal((K, COLS), dtype=np.float32)
    res = rng.standard_normal((ROWS, COLS), dtype=np.float32)
    out = np.zeros((ROWS, COLS), dtype=np.float32)
    compiled = blockpipe.compile(DownProjResidual)
    compiled(x, w, res, out)
    np.testing.assert_allclose(out, x @ w + res, rtol=1e-5, atol=1e-4)
    print("OK down_proj_residual")


if __name__ == "__main__":
    main()
