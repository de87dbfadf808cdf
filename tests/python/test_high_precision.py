"""pypto's `high_precision=` on div, log, recip and rsqrt, tile and tensor
spellings: accepted as True or False known at compile time, with the same
results either way (blockpipe computes in full precision), checked against
numpy; a value that is not a compile-time bool, a scalar divisor and
integer division with high_precision=True are CompileErrors at the line."""

import numpy as np
import pytest

import located

import blockpipe
import blockpipe.language as pl

ROWS, COLS = 16, 32
NUMPY = {pl.FP32: np.float32, pl.FP16: np.float16}


def tile_program(dtype, precise):
    """y = [x / d, log(x), recip(x), rsqrt(x)] stacked by rows, each op
    spelled pl.tile.X(..., high_precision=precise)."""

    @pl.program
    class Tiles:
        @pl.function(type=pl.FunctionType.InCore)
        def k(
            self,
            x: pl.Tensor[[ROWS, COLS], dtype],
            d: pl.Tensor[[ROWS, COLS], dtype],
            y: pl.Out[pl.Tensor[[4 * ROWS, COLS], dtype]],
        ):
            t = pl.load(x, [0, 0], [ROWS, COLS])
            u = pl.load(d, [0, 0], [ROWS, COLS])
            y = pl.store(pl.tile.div(t, u, high_precision=precise), [0, 0], y)
            y = pl.store(pl.tile.log(t, high_precision=precise), [ROWS, 0], y)
            y = pl.store(pl.tile.recip(t, high_precision=precise), [2 * ROWS, 0], y)
            y = pl.store(pl.rsqrt(t, high_precision=precise), [3 * ROWS, 0], y)
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            x: pl.Tensor[[ROWS, COLS], dtype],
            d: pl.Tensor[[ROWS, COLS], dtype],
            y: pl.Out[pl.Tensor[[4 * ROWS, COLS], dtype]],
        ):
            y = self.k(x, d, y)
            return y

    return Tiles


def tensor_program(dtype, precise):
    """The same ops on tensors in a pl.at scope, as pypto's tests write them."""

    @pl.program
    class Tensors:
        @pl.function(type=pl.FunctionType.Opaque)
        def main(
            self,
            x: pl.Tensor[[ROWS, COLS], dtype],
            d: pl.Tensor[[ROWS, COLS], dtype],
            y: pl.Out[pl.Tensor[[4 * ROWS, COLS], dtype]],
        ):
            with pl.at(level=pl.Level.CORE_GROUP):
                y = pl.assemble(y, pl.div(x, d, high_precision=precise), [0, 0])
                y = pl.assemble(y, pl.log(x, high_precision=precise), [ROWS, 0])
                y = pl.assemble(y, pl.tensor.recip(x, high_precision=precise), [2 * ROWS, 0])
                y = pl.assemble(y, pl.tensor.rsqrt(x, high_precision=precise), [3 * ROWS, 0])
            return y

    return Tensors


def inputs(dtype):
    rng = np.random.default_rng(5)
    x = rng.uniform(0.1, 9.0, (ROWS, COLS)).astype(NUMPY[dtype])
    d = (rng.uniform(0.5, 4.0, (ROWS, COLS)) * rng.choice([-1, 1], (ROWS, COLS))).astype(
        NUMPY[dtype]
    )
    return x, d


def expected(x, d):
    """16-bit inputs computed in FP32 and rounded once."""
    a, b = x.astype(np.float32), d.astype(np.float32)
    rows = [a / b, np.log(a), 1.0 / a, 1.0 / np.sqrt(a)]
    return np.concatenate(rows).astype(x.dtype)


def run(program, x, d):
    y = np.zeros((4 * ROWS, COLS), x.dtype)
    blockpipe.compile(program, quiet=True)(x, d, y)
    return y


@pytest.mark.parametrize("make", [tile_program, tensor_program], ids=["tile", "tensor"])
@pytest.mark.parametrize("dtype,rtol", [(pl.FP32, 2e-6), (pl.FP16, 1e-3)], ids=["FP32", "FP16"])
def test_high_precision_gives_the_same_results(make, dtype, rtol):
    x, d = inputs(dtype)
    precise = run(make(dtype, True), x, d)
    default = run(make(dtype, False), x, d)
    np.testing.assert_allclose(
        precise.astype(np.float64), expected(x, d).astype(np.float64), rtol=rtol
    )
    assert np.array_equal(precise, default)


def build(program):
    blockpipe.compile(program, quiet=True)


def not_a_bool():
    @pl.program
    class Bad:
        @pl.function(type=pl.FunctionType.InCore)
        def k(
            self, f: pl.Tensor[[ROWS, COLS], pl.FP32], y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]
        ):
            t = pl.load(f, [0, 0], [ROWS, COLS])
            # error: pl.tile.log's high_precision must be True or False, known at compile time; got 1
            return pl.store(pl.tile.log(t, high_precision=1), [0, 0], y)

    return Bad


def not_known_at_compile_time():
    @pl.program
    class Bad:
        @pl.function(type=pl.FunctionType.InCore)
        def k(
            self,
            f: pl.Tensor[[ROWS, COLS], pl.FP32],
            flag: pl.Scalar[pl.BOOL],
            y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]],
        ):
            t = pl.load(f, [0, 0], [ROWS, COLS])
            # error: pl.rsqrt's high_precision must be True or False, known at compile time
            return pl.store(pl.rsqrt(t, high_precision=flag), [0, 0], y)

    return Bad


def scalar_divisor():
    @pl.program
    class Bad:
        @pl.function(type=pl.FunctionType.InCore)
        def k(
            self, f: pl.Tensor[[ROWS, COLS], pl.FP32], y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]
        ):
            t = pl.load(f, [0, 0], [ROWS, COLS])
            # error: pl.div(high_precision=True) needs two floating-point tiles
            return pl.store(pl.div(t, 2.0, high_precision=True), [0, 0], y)

    return Bad


def integer_division():
    @pl.program
    class Bad:
        @pl.function(type=pl.FunctionType.InCore)
        def k(
            self, x: pl.Tensor[[ROWS, COLS], pl.INT32], y: pl.Out[pl.Tensor[[ROWS, COLS], pl.INT32]]
        ):
            t = pl.load(x, [0, 0], [ROWS, COLS])
            # error: pl.tile.div(high_precision=True) needs two floating-point tiles
            return pl.store(pl.tile.div(t, t, high_precision=True), [0, 0], y)

    return Bad


@pytest.mark.parametrize(
    "factory", [not_a_bool, not_known_at_compile_time, scalar_divisor, integer_division]
)
def test_a_bad_high_precision_is_an_error_at_its_line(factory):
    located.expect_error(factory, build)
