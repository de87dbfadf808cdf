"""A scalar operand of another dtype than its tile's, as pypto treats it:
tile-scalar ops convert the scalar to the tile's dtype (as pl.cast of a
scalar does: toward zero from a float, wrapping between integers), and
pl.sels takes a negative number for an unsigned tile as the signed integer
of its width. Against numpy; a float scalar of a bitwise op is a
CompileError at the line."""

import numpy as np
import pytest

import located

import blockpipe
import blockpipe.language as pl

ROWS, COLS = 8, 16
NUMPY = {pl.FP32: np.float32, pl.INT16: np.int16, pl.INT32: np.int32, pl.UINT8: np.uint8}


def subs_program(dtype, scalar_dtype, value):
    """y = [subs(x, s), adds(x, s)] with s = pl.const(value, scalar_dtype),
    tile spellings, then the tensor spelling in a pl.at scope."""

    @pl.program
    class Mixed:
        @pl.function(type=pl.FunctionType.InCore)
        def k(
            self, x: pl.Tensor[[ROWS, COLS], dtype], y: pl.Out[pl.Tensor[[2 * ROWS, COLS], dtype]]
        ):
            t = pl.load(x, [0, 0], [ROWS, COLS])
            s: pl.Scalar[scalar_dtype] = pl.const(value, scalar_dtype)
            y = pl.store(pl.tile.subs(t, s), [0, 0], y)
            y = pl.store(pl.adds(t, s), [ROWS, 0], y)
            return y

        @pl.function(type=pl.FunctionType.Opaque)
        def main(
            self,
            x: pl.Tensor[[ROWS, COLS], dtype],
            y: pl.Out[pl.Tensor[[2 * ROWS, COLS], dtype]],
            z: pl.Out[pl.Tensor[[ROWS, COLS], dtype]],
        ):
            y = self.k(x, y)
            with pl.at(level=pl.Level.CORE_GROUP):
                z = pl.assemble(z, pl.tensor.subs(x, pl.const(value, scalar_dtype)), [0, 0])
            return y, z

    return Mixed


@pytest.mark.parametrize(
    "dtype,scalar_dtype,value,converted",
    [
        (pl.FP32, pl.INT32, 2, 2.0),
        (pl.INT16, pl.FP32, 2.75, 2),  # toward zero
        (pl.INT16, pl.FP32, -2.75, -2),
        (pl.UINT8, pl.INT32, 300, 44),  # wraps at the tile's width
    ],
    ids=["FP32-INT32", "INT16-FP32", "INT16-FP32-negative", "UINT8-INT32"],
)
def test_a_scalar_takes_the_tiles_dtype(dtype, scalar_dtype, value, converted):
    numpy_dtype = NUMPY[dtype]
    x = (np.arange(ROWS * COLS).reshape(ROWS, COLS) % 50 + 60).astype(numpy_dtype)
    y = np.zeros((2 * ROWS, COLS), numpy_dtype)
    z = np.zeros((ROWS, COLS), numpy_dtype)
    blockpipe.compile(subs_program(dtype, scalar_dtype, value), quiet=True)(x, y, z)
    s = np.array(converted, numpy_dtype)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(y, np.concatenate([x - s, x + s]))
        np.testing.assert_array_equal(z, x - s)


def sels_program(dtype):
    @pl.program
    class Sels:
        @pl.function(type=pl.FunctionType.InCore)
        def k(
            self,
            x: pl.Tensor[[2, 16], dtype],
            m: pl.Tensor[[2, 4], pl.UINT8],
            y: pl.Out[pl.Tensor[[2, 16], dtype]],
        ):
            t = pl.load(x, [0, 0], [2, 16])
            mask = pl.load(m, [0, 0], [2, 4])
            tmp = pl.tile.create([1, 8], dtype=dtype)
            return pl.store(pl.tile.sels(mask, t, tmp, -3.0), [0, 0], y)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            x: pl.Tensor[[2, 16], dtype],
            m: pl.Tensor[[2, 4], pl.UINT8],
            y: pl.Out[pl.Tensor[[2, 16], dtype]],
        ):
            y = self.k(x, m, y)
            return y

    return Sels


@pytest.mark.parametrize(
    "dtype,numpy_dtype", [(pl.UINT32, np.uint32), (pl.UINT16, np.uint16)], ids=["U32", "U16"]
)
def test_sels_takes_a_negative_number_as_the_signed_integer_of_the_width(dtype, numpy_dtype):
    x = np.arange(32, dtype=numpy_dtype).reshape(2, 16) + 5
    m = np.full((2, 4), 0xAA, np.uint8)  # bits 1, 3, 5, 7: the odd columns
    y = np.zeros_like(x)
    blockpipe.compile(sels_program(dtype), quiet=True)(x, m, y)
    expected = np.full_like(x, np.iinfo(numpy_dtype).max - 2)  # -3's bits
    expected[:, 1::2] = x[:, 1::2]
    np.testing.assert_array_equal(y, expected)


def float_scalar_of_a_bitwise_op():
    @pl.program
    class Bad:
        @pl.function(type=pl.FunctionType.InCore)
        def k(
            self, x: pl.Tensor[[ROWS, COLS], pl.INT32], y: pl.Out[pl.Tensor[[ROWS, COLS], pl.INT32]]
        ):
            t = pl.load(x, [0, 0], [ROWS, COLS])
            s: pl.Scalar[pl.FP32] = pl.const(1.0, pl.FP32)
            # error: pl.shls's scalar is FP32 but the tile is INT32: pl.shls takes an integer
            return pl.store(pl.shls(t, s), [0, 0], y)

    return Bad


def test_a_float_scalar_of_a_bitwise_op_is_an_error_at_its_line():
    located.expect_error(float_scalar_of_a_bitwise_op, lambda p: blockpipe.compile(p, quiet=True))
