"""pypto's pl.MemRef placement hints in tile annotations are accepted and
not used: every tile keeps storage of its own, so a slot picked at run time
(`ring[i % 2]`) needs no value known at compile time."""

import numpy as np

from located import expect_error

import blockpipe
import blockpipe.language as pl

RING = pl.MemRef(slots=2)
SCRATCH = pl.MemRef()


@pl.program
class PingPong:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(
        self, x: pl.Tensor[[64, 32], pl.FP32], y: pl.Out[pl.Tensor[[64, 32], pl.FP32]]
    ) -> pl.Tensor[[64, 32], pl.FP32]:
        for i in pl.range(4):
            t: pl.Tile[[16, 32], pl.FP32, RING[i % 2], pl.Mem.Vec] = pl.load(
                x, [i * 16, 0], [16, 32]
            )
            u: pl.Tile[[16, 32], pl.FP32, SCRATCH, pl.Mem.Vec] = pl.exp(t)
            y = pl.store(pl.add(u, t), [i * 16, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self, x: pl.Tensor[[64, 32], pl.FP32], y: pl.Out[pl.Tensor[[64, 32], pl.FP32]]
    ) -> pl.Tensor[[64, 32], pl.FP32]:
        y = self.kernel(x, y)
        return y


def test_memref_hints_are_accepted_and_every_tile_keeps_its_value():
    x = np.random.default_rng(9).standard_normal((64, 32)).astype(np.float32)
    y = np.zeros_like(x)
    blockpipe.compile(PingPong, quiet=True)(x, y)
    np.testing.assert_allclose(y, np.exp(x) + x, rtol=2e-6, atol=1e-6)


@pl.program
class InlineSlots:
    """pypto's inline spelling, two slots co-live: each tile keeps its own
    value though both name one MemRef."""

    @pl.function(type=pl.FunctionType.InCore)
    def kernel(
        self,
        a: pl.Tensor[[64, 32], pl.FP32],
        b: pl.Tensor[[64, 32], pl.FP32],
        y: pl.Out[pl.Tensor[[64, 32], pl.FP32]],
    ) -> pl.Tensor[[64, 32], pl.FP32]:
        for i in pl.range(4):
            lo: pl.Tile[[16, 32], pl.FP32, pl.MemRef("ub", slots=2)[i % 2], pl.Mem.Vec] = pl.load(
                a, [i * 16, 0], [16, 32]
            )
            hi: pl.Tile[[16, 32], pl.FP32, pl.MemRef("ub", slots=2)[(i + 1) % 2], pl.Mem.Vec] = (
                pl.load(b, [i * 16, 0], [16, 32])
            )
            y = pl.store(pl.sub(lo, hi), [i * 16, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        a: pl.Tensor[[64, 32], pl.FP32],
        b: pl.Tensor[[64, 32], pl.FP32],
        y: pl.Out[pl.Tensor[[64, 32], pl.FP32]],
    ) -> pl.Tensor[[64, 32], pl.FP32]:
        y = self.kernel(a, b, y)
        return y


def test_an_inline_memref_with_a_slot_picked_at_run_time():
    rng = np.random.default_rng(10)
    a = rng.standard_normal((64, 32)).astype(np.float32)
    b = rng.standard_normal((64, 32)).astype(np.float32)
    y = np.zeros_like(a)
    blockpipe.compile(InlineSlots, quiet=True)(a, b, y)
    np.testing.assert_array_equal(y, a - b)


def test_the_rest_of_a_memref_annotation_still_counts():
    def program():
        @pl.program
        class WrongShape:
            @pl.function(type=pl.FunctionType.InCore)
            def kernel(
                self,
                a: pl.Tensor[[64, 32], pl.FP32],
                y: pl.Out[pl.Tensor[[64, 32], pl.FP32]],
            ) -> pl.Tensor[[64, 32], pl.FP32]:
                for i in pl.range(4):
                    # error: Tile[[16, 32], FP32
                    t: pl.Tile[[16, 16], pl.FP32, pl.MemRef("ub", slots=2)[i % 2], pl.Mem.Vec] = (
                        pl.load(a, [i * 16, 0], [16, 32])
                    )
                    y = pl.store(t, [i * 16, 0], y)
                return y

        return WrongShape

    expect_error(program, lambda p: blockpipe.compile(p, quiet=True))
