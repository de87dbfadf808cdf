"""An explicit AIC/AIV group with a bidirectional pipe: the vector core
computes exp(a) and sends it to the cube core, which multiplies it by b and
sends the product back; the vector core adds exp(a) and stores."""

import numpy as np

import blockpipe
import blockpipe.language as pl

N, BLOCKS = 16, 4


@pl.program
class ExplicitPipes:
    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, b: pl.Tensor[[N, N], pl.FP32]):
        pl.aic_initialize_pipe(dir_mask=3, slot_size=N * N * 4, slot_num=2)
        rhs = pl.load(b, [0, 0], [N, N], target_memory=pl.MemorySpace.Mat)
        lhs = pl.tpop_from_aiv()
        prod = pl.matmul(lhs, rhs)
        pl.tfree_to_aiv()
        pl.tpush_to_aiv(prod)

    @pl.function(type=pl.FunctionType.AIV)
    def vector(
        self,
        a: pl.Tensor[[BLOCKS * N, N], pl.FP32],
        out: pl.Out[pl.Tensor[[BLOCKS * N, N], pl.FP32]],
    ) -> pl.Tensor[[BLOCKS * N, N], pl.FP32]:
        pl.aiv_initialize_pipe(dir_mask=3, slot_size=N * N * 4, slot_num=2)
        row = pl.tile.get_block_idx() * N
        e = pl.exp(pl.load(a, [row, 0], [N, N]))
        pl.tpush_to_aic(e)
        prod: pl.Tile[[N, N], pl.FP32] = pl.tpop_from_aic()
        s = pl.add(prod, e)
        pl.tfree_to_aic()
        return pl.store(s, [row, 0], out)

    @pl.function(type=pl.FunctionType.Group)
    def group(
        self,
        a: pl.Tensor[[BLOCKS * N, N], pl.FP32],
        b: pl.Tensor[[N, N], pl.FP32],
        out: pl.Out[pl.Tensor[[BLOCKS * N, N], pl.FP32]],
    ) -> pl.Tensor[[BLOCKS * N, N], pl.FP32]:
        self.cube(b)
        out = self.vector(a, out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        a: pl.Tensor[[BLOCKS * N, N], pl.FP32],
        b: pl.Tensor[[N, N], pl.FP32],
        out: pl.Out[pl.Tensor[[BLOCKS * N, N], pl.FP32]],
    ) -> pl.Tensor[[BLOCKS * N, N], pl.FP32]:
        with pl.spmd(BLOCKS):
            out = self.group(a, b, out)
        return out


def main():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((BLOCKS * N, N), dtype=np.float32) * 0.5
    b = rng.standard_normal((N, N), dtype=np.float32)
    out = np.zeros_like(a)
    blockpipe.compile(ExplicitPipes)(a, b, out)
    e = np.exp(a)
    expected = np.concatenate([e[i * N : (i + 1) * N] @ b for i in range(BLOCKS)]) + e
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)
    print("OK explicit_pipes")


if __name__ == "__main__":
    main()
