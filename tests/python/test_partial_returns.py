"""A kernel may return only some of the Out/InOut tensors it writes in
place, as in pypto: the others are written all the same, and its callers
see only the results it returns."""

import numpy as np
import pytest

from located import expect_error

import blockpipe
import blockpipe.language as pl

T = pl.Tensor[[16, 16], pl.FP32]


@pl.program
class ReturnsOne:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: T, doubled: pl.Out[T], squared: pl.InOut[T], summed: pl.Out[T]) -> T:
        t = pl.load(x, [0, 0], [16, 16])
        doubled = pl.store(pl.add(t, t), [0, 0], doubled)
        pl.store(pl.mul(t, t), [0, 0], squared)  # the statement form
        summed = pl.store(pl.add(t, 1.0), [0, 0], summed)
        return summed  # the last of three, alone

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: T, doubled: pl.Out[T], squared: pl.InOut[T], summed: pl.Out[T]) -> T:
        summed = self.kernel(x, doubled, squared, summed)
        return summed


@pl.program
class ReturnsTwoOfThree:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: T, a: pl.Out[T], b: pl.Out[T], c: pl.Out[T]):
        t = pl.load(x, [0, 0], [16, 16])
        a = pl.store(t, [0, 0], a)
        b = pl.store(pl.add(t, t), [0, 0], b)
        c = pl.store(pl.mul(t, t), [0, 0], c)
        return c, a  # out of order, b left out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: T, a: pl.Out[T], b: pl.Out[T], c: pl.Out[T]):
        c, a = self.kernel(x, a, b, c)
        # The results are the tensors returned, in the kernel's order.
        c = self.kernel(c, a, b, c)[0]
        return a, b, c


MODES = pytest.mark.parametrize("interpret", [False, True], ids=["compiled", "interpreted"])


def _x():
    return np.random.default_rng(2).standard_normal((16, 16)).astype(np.float32)


@MODES
def test_the_tensors_a_kernel_does_not_return_are_written(monkeypatch, interpret):
    if interpret:
        monkeypatch.setenv("BLOCKPIPE_INTERPRET", "1")
    x = _x()
    doubled, squared, summed = (np.zeros((16, 16), np.float32) for _ in range(3))
    blockpipe.compile(ReturnsOne, quiet=True)(x, doubled, squared, summed)
    np.testing.assert_allclose(doubled, x + x)
    np.testing.assert_allclose(squared, x * x)
    np.testing.assert_allclose(summed, x + 1.0)


@MODES
def test_callers_see_the_returned_tensors_in_the_kernels_order(monkeypatch, interpret):
    if interpret:
        monkeypatch.setenv("BLOCKPIPE_INTERPRET", "1")
    x = _x()
    a, b, c = (np.zeros((16, 16), np.float32) for _ in range(3))
    blockpipe.compile(ReturnsTwoOfThree, quiet=True)(x, a, b, c)
    # The second launch reads the first's c as its x.
    square = x * x
    np.testing.assert_allclose(a, square)
    np.testing.assert_allclose(b, square + square)
    np.testing.assert_allclose(c, square * square, rtol=1e-6)


def test_a_returned_input_is_an_error_at_the_return():
    def program():
        @pl.program
        class ReturnsInput:
            @pl.function(type=pl.FunctionType.InCore)
            def kernel(self, x: T, y: pl.Out[T]) -> T:
                y = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], y)
                return x  # error: is not the value of an Out/InOut parameter

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: T, y: pl.Out[T]) -> T:
                y = self.kernel(x, y)
                return y

        return ReturnsInput

    expect_error(program, lambda p: blockpipe.compile(p, quiet=True))
