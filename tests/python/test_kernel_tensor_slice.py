"""pl.tensor.slice in a kernel, or in a pl.at scope outlined into one:
the window read as a tile (as pl.slice there, as pypto converts it); it is
read, not written through."""

import numpy as np
import pytest

from located import expect_error

import blockpipe
import blockpipe.language as pl

X = pl.Tensor[[4, 64], pl.FP32]
H = pl.Tensor[[4, 32], pl.FP32]


@pl.program
class Halves:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: X, out: pl.Out[H]) -> H:
        left = pl.tensor.slice(x, shape=[4, 32], offset=[0, 0])
        right = pl.tensor.slice(x, [4, 32], [0, 32])
        out = pl.store(pl.sub(right, left), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: X, out: pl.Out[H]) -> H:
        out = self.kernel(x, out)
        return out


@pl.program
class ScopeHalves:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, x: X, out: pl.Out[H]) -> H:
        with pl.at(level=pl.Level.CORE_GROUP):
            left = pl.tensor.slice(x, shape=[4, 32], offset=[0, 0])
            right = pl.tensor.slice(x, shape=[4, 32], offset=[0, 32])
            out = pl.assemble(out, pl.add(left, right), [0, 0])
        return out


@pytest.mark.parametrize(
    "program, combine, interpret",
    [
        (Halves, lambda a, b: b - a, False),
        (Halves, lambda a, b: b - a, True),
        (ScopeHalves, lambda a, b: a + b, False),
    ],
    ids=["kernel", "kernel-interpreted", "scope"],
)
def test_a_kernels_tensor_slice_reads_the_window(monkeypatch, program, combine, interpret):
    if interpret:
        monkeypatch.setenv("BLOCKPIPE_INTERPRET", "1")
    x = np.random.default_rng(6).standard_normal((4, 64)).astype(np.float32)
    out = np.zeros((4, 32), np.float32)
    blockpipe.compile(program, quiet=True)(x, out)
    np.testing.assert_allclose(out, combine(x[:, :32], x[:, 32:]))


def test_a_kernels_tensor_slice_is_not_written_through():
    def program():
        @pl.program
        class WritesSlice:
            @pl.function(type=pl.FunctionType.InCore)
            def kernel(self, x: X, out: pl.Out[X]) -> X:
                window = pl.tensor.slice(out, [4, 32], [0, 0])
                t = pl.load(x, [0, 0], [4, 32])
                window = pl.store(t, [0, 0], window)  # error: must be a tensor
                return out

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: X, out: pl.Out[X]) -> X:
                out = self.kernel(x, out)
                return out

        return WritesSlice

    expect_error(program, lambda p: blockpipe.compile(p, quiet=True))
