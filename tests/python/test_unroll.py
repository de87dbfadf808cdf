"""Python loops over values known at compile time (range() of constants, a
list or tuple of integers) are unrolled, as Python would run them; against
numpy. A loop too long to unroll is a CompileError at the line."""

import numpy as np
import pytest

import located

import blockpipe
import blockpipe.language as pl

PARTS = 4


@pl.program
class Unrolled:
    @pl.function
    def kernel(
        self,
        x: pl.Tensor[[64, 16], pl.FP32],
        y: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
        z: pl.Out[pl.Tensor[[64, 16], pl.FP32]],
    ):
        acc = pl.load(x, [0, 0], [16, 16])
        for i in range(1, PARTS):
            acc = pl.add(acc, pl.mul(pl.load(x, [i * 16, 0], [16, 16]), i + 1.0))
        pl.store(acc, [0, 0], y)
        for row in [48, 0, 32, 16]:
            pl.store(pl.exp(pl.load(x, [row, 0], [16, 16])), [row, 0], z)
        return y, z

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[64, 16], pl.FP32],
        y: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
        z: pl.Out[pl.Tensor[[64, 16], pl.FP32]],
    ):
        y, z = self.kernel(x, y, z)
        return y, z


def test_unrolled_loops():
    x = np.random.default_rng(0).standard_normal((64, 16)).astype(np.float32)
    y, z = np.zeros((16, 16), np.float32), np.zeros_like(x)
    blockpipe.compile(Unrolled, quiet=True)(x, y, z)
    expected = sum(x[i * 16 : (i + 1) * 16] * (i + 1) for i in range(PARTS))
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(z, np.exp(x), rtol=1e-6)


def too_long():
    @pl.program
    class P:
        @pl.function
        def kernel(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
            t = pl.load(x, [0, 0], [16, 16])
            for i in range(100000):  # error: this loop would be unrolled 100000 times
                t = pl.add(t, 1.0)
            return pl.store(t, [0, 0], y)

    return P


def test_a_loop_too_long_to_unroll_is_an_error():
    located.expect_error(too_long, lambda p: blockpipe.compile(p, quiet=True))


@pl.program
class PyptoUnroll:
    """pypto's pl.unroll: the same repetition, spelled pl.unroll (a
    negative step too), with scalar writes to constant positions."""

    @pl.function
    def kernel(
        self,
        x: pl.Tensor[[64, 16], pl.FP32],
        v: pl.Tensor[[8], pl.FP32],
        y: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
        t: pl.InOut[pl.Tensor[[4, 8], pl.FP32]],
    ):
        acc = pl.load(x, [0, 0], [16, 16])
        for i in pl.unroll(1, PARTS):
            acc = pl.add(acc, pl.mul(pl.load(x, [i * 16, 0], [16, 16]), i + 1.0))
        pl.store(acc, [0, 0], y)
        for k in pl.unroll(1, -1, -1):
            for r in pl.unroll(4):
                s: pl.Scalar[pl.FP32] = pl.read(v, [k * 4 + r])
                t = pl.write(t, [r, k], s)
        return y, t

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[64, 16], pl.FP32],
        v: pl.Tensor[[8], pl.FP32],
        y: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
        t: pl.InOut[pl.Tensor[[4, 8], pl.FP32]],
    ):
        y, t = self.kernel(x, v, y, t)
        return y, t


def test_pl_unroll_repeats_the_body_once_per_value():
    x = np.random.default_rng(1).standard_normal((64, 16)).astype(np.float32)
    v = np.arange(8, dtype=np.float32) + 0.5
    y, t = np.zeros((16, 16), np.float32), np.full((4, 8), -1.0, np.float32)
    blockpipe.compile(PyptoUnroll, quiet=True)(x, v, y, t)
    expected = sum(x[i * 16 : (i + 1) * 16] * (i + 1) for i in range(PARTS))
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-5)
    want = np.full((4, 8), -1.0, np.float32)
    want[:, :2] = v.reshape(2, 4).T
    np.testing.assert_array_equal(t, want)


def unroll_of_a_run_time_bound():
    @pl.program
    class P:
        @pl.function
        def kernel(
            self,
            x: pl.Tensor[[16, 16], pl.FP32],
            n: pl.Scalar[pl.INT32],
            y: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
        ):
            t = pl.load(x, [0, 0], [16, 16])
            # error: pl.unroll's bounds must be integers known at compile time
            for i in pl.unroll(n):
                t = pl.add(t, 1.0)
            return pl.store(t, [0, 0], y)

    return P


def unroll_with_init_values():
    @pl.program
    class P:
        @pl.function
        def kernel(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
            t = pl.load(x, [0, 0], [16, 16])
            # error: pl.unroll takes no argument 'init_values'
            for i, (u,) in pl.unroll(4, init_values=(t,)):
                u = pl.add(u, 1.0)
            return pl.store(t, [0, 0], y)

    return P


def unroll_step_zero():
    @pl.program
    class P:
        @pl.function
        def kernel(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
            t = pl.load(x, [0, 0], [16, 16])
            for i in pl.unroll(0, 4, 0):  # error: pl.unroll's step must not be zero
                t = pl.add(t, 1.0)
            return pl.store(t, [0, 0], y)

    return P


@pytest.mark.parametrize(
    "factory", [unroll_of_a_run_time_bound, unroll_with_init_values, unroll_step_zero]
)
def test_a_bad_pl_unroll_is_an_error_at_its_line(factory):
    located.expect_error(factory, lambda p: blockpipe.compile(p, quiet=True))
