"""pypto's packed row vector for pl.tile.row_expand_add: an [M, 32 / itemsize]
row-major carrier, one 32-byte block of lanes per row, repeated across the
destination row (out[i, j] = t[i, j] + v[i, j mod W]); and the pl.tensor.X
spellings of the row and column broadcasts. Against NumPy, with valid sizes
known at run time."""

import numpy as np
import pytest

import located
from arrays import data

import blockpipe
import blockpipe.language as pl


def build(program):
    return blockpipe.compile(program, quiet=True)


def packed_program(dtype, m, n, lanes):
    T = pl.Tensor[[m, n], dtype]
    V = pl.Tensor[[m, lanes], dtype]
    R = pl.Scalar[pl.INDEX]

    @pl.program
    class Packed:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: T, v: V, rows: R, cols: R, y: pl.InOut[T]) -> T:
            t = pl.load(x, [0, 0], [m, n], valid_shape=[rows, cols])
            w = pl.load(v, [0, 0], [m, lanes], valid_shape=[rows, lanes])
            return pl.store(pl.tile.row_expand_add(t, w), [0, 0], y)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: T, v: V, rows: R, cols: R, y: pl.InOut[T]) -> T:
            return self.k(x, v, rows, cols, y)

    return Packed


def packed_reference(x, v, rows, cols):
    lanes = v.shape[1]
    repeated = np.tile(v, (1, -(-x.shape[1] // lanes)))[:, : x.shape[1]]
    want = np.full_like(x, 7)
    want[:rows, :cols] = (x + repeated)[:rows, :cols]
    return want


@pytest.mark.parametrize(
    "dtype,np_dtype,m,n",
    [
        (pl.FP32, np.float32, 32, 64),
        (pl.FP16, np.float16, 16, 128),
        (pl.INT16, np.int16, 16, 192),
        (pl.INT8, np.int8, 32, 64),
        (pl.FP32, np.float32, 8, 20),  # 20 columns: the last block is cut
    ],
)
def test_a_packed_row_vector_repeats_its_lanes(dtype, np_dtype, m, n):
    lanes = 32 // np.dtype(np_dtype).itemsize
    compiled = build(packed_program(dtype, m, n, lanes))
    x = data((m, n), np_dtype)
    # Distinct lanes, so that a carrier read as [M, 1] (lane 0 only) fails.
    v = (data((m, lanes), np_dtype, seed=1) % 20).astype(np_dtype)
    for rows, cols in ((m, n), (m - 3, n - 5), (1, 1)):
        y = np.full((m, n), 7, np_dtype)
        compiled(x, v, rows, cols, y)
        np.testing.assert_array_equal(y, packed_reference(x, v, rows, cols), f"{rows}x{cols}")


def test_tensor_spellings_broadcast_in_a_scope():
    @pl.jit
    def expand(
        x: pl.Tensor[[16, 32], pl.FP32],
        r: pl.Tensor[[16, 1], pl.FP32],
        c: pl.Tensor[[1, 32], pl.FP32],
        add: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
        mul: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
    ):
        with pl.at(level=pl.Level.CORE_GROUP):
            a = pl.tensor.row_expand_add(x, r)
            add = pl.assemble(add, a, [0, 0])
            b = pl.tensor.col_expand_mul(x, c)
            mul = pl.assemble(mul, b, [0, 0])
        return add, mul

    x, r, c = data((16, 32), np.float32), data((16, 1), np.float32), data((1, 32), np.float32)
    add, mul = np.zeros_like(x), np.zeros_like(x)
    expand(x, r, c, add, mul)
    np.testing.assert_array_equal(add, x + r)
    np.testing.assert_array_equal(mul, x * c)


def test_a_row_vector_of_another_width_is_an_error_naming_both_forms():
    def factory():
        @pl.program
        class Narrow:
            @pl.function(type=pl.FunctionType.InCore)
            def k(
                self,
                x: pl.Tensor[[32, 64], pl.FP32],
                v: pl.Tensor[[32, 4], pl.FP32],
                y: pl.Out[pl.Tensor[[32, 64], pl.FP32]],
            ) -> pl.Tensor[[32, 64], pl.FP32]:
                t = pl.load(x, [0, 0], [32, 64])
                w = pl.load(v, [0, 0], [32, 4])
                # error: must be [32, 1] (or [32, 8], one 32-byte block per row)
                r = pl.tile.row_expand_add(t, w)
                return pl.store(r, [0, 0], y)

        return Narrow

    located.expect_error(factory, build)


def test_only_row_expand_add_takes_a_packed_vector():
    def factory():
        @pl.program
        class Packed:
            @pl.function(type=pl.FunctionType.InCore)
            def k(
                self,
                x: pl.Tensor[[32, 64], pl.FP32],
                v: pl.Tensor[[32, 8], pl.FP32],
                y: pl.Out[pl.Tensor[[32, 64], pl.FP32]],
            ) -> pl.Tensor[[32, 64], pl.FP32]:
                t = pl.load(x, [0, 0], [32, 64])
                w = pl.load(v, [0, 0], [32, 8])
                r = pl.row_expand_mul(t, w)  # error: row vector must be [32, 1] for a tile
                return pl.store(r, [0, 0], y)

        return Packed

    located.expect_error(factory, build)
