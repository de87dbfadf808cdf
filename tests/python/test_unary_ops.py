"""The unary functions pl.recip, pl.rsqrt, pl.log, pl.tanh and pl.sigmoid on
FP32, FP16 and BF16 tiles, run on the simulator against numpy (16-bit tiles
computed in FP32 and rounded once), with their IEEE edge values; an integer
tile is a CompileError at the user's line."""

import numpy as np
import pytest

import located

import blockpipe
import blockpipe.language as pl

ROWS, COLS = 16, 32
OPS = ("recip", "rsqrt", "log", "tanh", "sigmoid")

REFERENCE = {
    "recip": lambda x: 1.0 / x,
    "rsqrt": lambda x: 1.0 / np.sqrt(x),
    "log": np.log,
    "tanh": np.tanh,
    "sigmoid": lambda x: 1.0 / (1.0 + np.exp(-x)),
}


def unary_program(dtype):
    """One 16-row block per op: y[8 * i:] = op_i(x)."""

    @pl.program
    class Unary:
        @pl.function(type=pl.FunctionType.InCore)
        def k(
            self, x: pl.Tensor[[ROWS, COLS], dtype], y: pl.Out[pl.Tensor[[5 * ROWS, COLS], dtype]]
        ):
            t = pl.load(x, [0, 0], [ROWS, COLS])
            y = pl.store(pl.recip(t), [0, 0], y)
            y = pl.store(pl.rsqrt(t), [ROWS, 0], y)
            y = pl.store(pl.log(t), [2 * ROWS, 0], y)
            y = pl.store(pl.tanh(t), [3 * ROWS, 0], y)
            y = pl.store(pl.sigmoid(t), [4 * ROWS, 0], y)
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self, x: pl.Tensor[[ROWS, COLS], dtype], y: pl.Out[pl.Tensor[[5 * ROWS, COLS], dtype]]
        ):
            y = self.k(x, y)
            return y

    return Unary


def numpy_dtype(dtype):
    if dtype is pl.BF16:
        return pytest.importorskip("ml_dtypes").bfloat16
    return {pl.FP32: np.float32, pl.FP16: np.float16}[dtype]


@pytest.mark.parametrize(
    "dtype,rtol", [(pl.FP32, 2e-6), (pl.FP16, 1e-3), (pl.BF16, 8e-3)], ids=["FP32", "FP16", "BF16"]
)
def test_unary_functions_match_numpy(dtype, rtol):
    np_dtype = numpy_dtype(dtype)
    rng = np.random.default_rng(14)
    # Positive inputs for recip, rsqrt and log, spread over several decades.
    x = (10.0 ** rng.uniform(-2, 2, (ROWS, COLS))).astype(np_dtype)
    y = np.zeros((5 * ROWS, COLS), np_dtype)
    blockpipe.compile(unary_program(dtype), quiet=True)(x, y)
    wide = x.astype(np.float64)
    for i, op in enumerate(OPS):
        expected = REFERENCE[op](wide).astype(np_dtype).astype(np.float64)
        got = y[i * ROWS : (i + 1) * ROWS].astype(np.float64)
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=1e-30, err_msg=op)


def test_edge_values_follow_ieee():
    x = np.full((ROWS, COLS), 1.0, np.float32)
    edges = [0.0, -0.0, -1.0, np.inf, -np.inf, np.nan, -100.0, 100.0, -1e4, 1e-30]
    x[0, : len(edges)] = edges
    y = np.zeros((5 * ROWS, COLS), np.float32)
    blockpipe.compile(unary_program(pl.FP32), quiet=True)(x, y)
    with np.errstate(all="ignore"):
        for i, op in enumerate(OPS):
            expected = REFERENCE[op](x.astype(np.float64)).astype(np.float32)
            np.testing.assert_allclose(y[i * ROWS], expected[0], rtol=2e-6, err_msg=op)
    # sigmoid of large negative inputs is a tiny positive number, not NaN.
    assert y[4 * ROWS, 8] == 0.0 and not np.isnan(y[4 * ROWS, 8])
    assert y[4 * ROWS, 6] > 0.0


@pytest.mark.parametrize("op", OPS)
def test_an_integer_tile_is_an_error_at_the_line(op):
    def factory():
        function = getattr(pl, op)

        @pl.program
        class IntUnary:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: pl.Tensor[[8, 8], pl.INT32], y: pl.Out[pl.Tensor[[8, 8], pl.INT32]]):
                t = pl.load(x, [0, 0], [8, 8])
                # error: needs a floating-point tile, got INT32
                return pl.store(function(t), [0, 0], y)

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: pl.Tensor[[8, 8], pl.INT32], y: pl.Out[pl.Tensor[[8, 8], pl.INT32]]):
                y = self.k(x, y)
                return y

        return IntUnary

    error = located.expect_error(factory, lambda p: blockpipe.compile(p, quiet=True))
    assert f"pl.{op}" in error.message, error.message
