"""Python `while` loops in kernels and orchestrations (scf.while): the names
the body reassigns are carried, the condition is read before every
iteration, and after the loop the names hold their last values."""

import numpy as np
import pytest

import blockpipe
import blockpipe.language as pl

TARGETS = [dict(target="cpu-sim"), dict(target="cuda", device="cuda-emu")]


@pl.program
class RowBlocks:
    """Adds row blocks while a run-time count allows, and sums them."""

    @pl.function(type=pl.FunctionType.InCore)
    def kernel(
        self,
        a: pl.Tensor[[256, 64], pl.FP32],
        b: pl.Tensor[[256, 64], pl.FP32],
        blocks: pl.Scalar[pl.INDEX],
        c: pl.Out[pl.Tensor[[256, 64], pl.FP32]],
        total: pl.Out[pl.Tensor[[64, 64], pl.FP32]],
    ):
        i: pl.Scalar[pl.INDEX] = 0
        acc = pl.full([64, 64], dtype=pl.FP32, value=0.0)
        while i < blocks:
            row = i * 64
            t = pl.add(pl.load(a, [row, 0], [64, 64]), pl.load(b, [row, 0], [64, 64]))
            out = pl.store(t, [row, 0], c)  # a tensor set in the body: c after the loop
            acc = pl.add(acc, t)
            i = i + 1
        total = pl.store(acc, [0, 0], total)
        return out, total

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        a: pl.Tensor[[256, 64], pl.FP32],
        b: pl.Tensor[[256, 64], pl.FP32],
        blocks: pl.Scalar[pl.INDEX],
        c: pl.Out[pl.Tensor[[256, 64], pl.FP32]],
        total: pl.Out[pl.Tensor[[64, 64], pl.FP32]],
    ):
        c, total = self.kernel(a, b, blocks, c, total)
        return c, total


@pytest.mark.parametrize("where", TARGETS, ids=["cpu-sim", "cuda-emu"])
def test_a_while_loop_in_a_kernel_carries_its_names(where):
    compiled = blockpipe.compile(RowBlocks, quiet=True, **where)
    assert "scf.while" in compiled.ir("final")
    rng = np.random.default_rng(0)
    a = rng.standard_normal((256, 64)).astype(np.float32)
    b = rng.standard_normal((256, 64)).astype(np.float32)
    for blocks in (0, 3, 4):
        c = np.zeros((256, 64), np.float32)
        total = np.zeros((64, 64), np.float32)
        compiled(a, b, blocks, c, total)
        rows = blocks * 64
        np.testing.assert_allclose(c[:rows], a[:rows] + b[:rows], rtol=1e-6)
        assert not c[rows:].any()  # rows the loop did not reach
        want = (a[:rows] + b[:rows]).reshape(blocks, 64, 64).sum(axis=0) if blocks else 0
        np.testing.assert_allclose(total, np.zeros((64, 64)) + want, rtol=1e-5, atol=1e-5)


def test_a_while_loop_in_an_orchestration_launches_until_done():
    @pl.program
    class Halving:
        @pl.function(type=pl.FunctionType.InCore)
        def double(
            self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]
        ) -> pl.Tensor[[16, 16], pl.FP32]:
            t = pl.load(y, [0, 0], [16, 16])
            return pl.store(pl.add(t, pl.load(x, [0, 0], [16, 16])), [0, 0], y)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            x: pl.Tensor[[16, 16], pl.FP32],
            n: pl.Scalar[pl.INDEX],
            y: pl.InOut[pl.Tensor[[16, 16], pl.FP32]],
        ) -> pl.Tensor[[16, 16], pl.FP32]:
            while n > 1:  # as many launches as n can be halved
                y = self.double(x, y)
                n = n // 2
            return y

    compiled = blockpipe.compile(Halving, quiet=True)
    x = np.ones((16, 16), np.float32)
    for n, launches in ((1, 0), (2, 1), (9, 3)):
        y = np.zeros((16, 16), np.float32)
        compiled(x, n, y)
        np.testing.assert_array_equal(y, launches * x)


def test_break_in_a_while_loop_is_an_error_at_its_line():
    @pl.program
    class Broken:
        @pl.function(type=pl.FunctionType.InCore)
        def k(
            self,
            x: pl.Tensor[[16, 16], pl.FP32],
            n: pl.Scalar[pl.INDEX],
            y: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
        ) -> pl.Tensor[[16, 16], pl.FP32]:
            t = pl.load(x, [0, 0], [16, 16])
            while n > 0:
                t = pl.add(t, t)
                break
            return pl.store(t, [0, 0], y)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            x: pl.Tensor[[16, 16], pl.FP32],
            n: pl.Scalar[pl.INDEX],
            y: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
        ) -> pl.Tensor[[16, 16], pl.FP32]:
            y = self.k(x, n, y)
            return y

    with pytest.raises(blockpipe.CompileError, match="'break' in a while loop") as info:
        blockpipe.compile(Broken, quiet=True)
    assert info.value.file.endswith("test_while.py") and info.value.line
