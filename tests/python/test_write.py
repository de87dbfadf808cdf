"""pypto's pl.write: one element of a tensor or a tile set to a scalar
(assigned, or as a statement that updates the destination), against
numpy; a value of another dtype is a CompileError at the line."""

import numpy as np
import pytest

import located

import blockpipe
import blockpipe.language as pl

ROWS, COLS = 8, 16


def write_program(dtype):
    @pl.program
    class Writes:
        @pl.function(type=pl.FunctionType.InCore)
        def k(
            self,
            v: pl.Tensor[[4], dtype],
            table: pl.InOut[pl.Tensor[[ROWS, COLS], dtype]],
            flat: pl.InOut[pl.Tensor[[COLS], dtype]],
            y: pl.Out[pl.Tensor[[ROWS, COLS], dtype]],
        ):
            tile = pl.tile.full([ROWS, COLS], dtype=dtype, value=-7)
            for r in pl.range(4):
                s: pl.Scalar[dtype] = pl.read(v, [r])
                pl.write(tile, [r, r + 1], s)  # a statement: updates the tile
                table = pl.tensor.write(table, [ROWS - 1, r * 2], s)
                pl.write(flat, r + 3, s)
            tile = pl.tile.write(tile, [ROWS - 1, COLS - 1], 5)
            y = pl.store(tile, [0, 0], y)
            return table, flat, y

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            v: pl.Tensor[[4], dtype],
            table: pl.InOut[pl.Tensor[[ROWS, COLS], dtype]],
            flat: pl.InOut[pl.Tensor[[COLS], dtype]],
            y: pl.Out[pl.Tensor[[ROWS, COLS], dtype]],
        ):
            table, flat, y = self.k(v, table, flat, y)
            return table, flat, y

    return Writes


@pytest.mark.parametrize(
    "dtype,numpy_dtype", [(pl.FP32, np.float32), (pl.INT32, np.int32)], ids=["FP32", "INT32"]
)
def test_write_sets_one_element(dtype, numpy_dtype):
    v = np.array([11, -12, 13, -14], numpy_dtype)
    table = np.arange(ROWS * COLS).reshape(ROWS, COLS).astype(numpy_dtype)
    flat = np.zeros(COLS, numpy_dtype)
    y = np.zeros((ROWS, COLS), numpy_dtype)
    want_table, want_flat = table.copy(), flat.copy()
    want_y = np.full((ROWS, COLS), -7, numpy_dtype)
    for r in range(4):
        want_y[r, r + 1] = v[r]
        want_table[ROWS - 1, r * 2] = v[r]
        want_flat[r + 3] = v[r]
    want_y[ROWS - 1, COLS - 1] = 5
    blockpipe.compile(write_program(dtype), quiet=True)(v, table, flat, y)
    np.testing.assert_array_equal(table, want_table)
    np.testing.assert_array_equal(flat, want_flat)
    np.testing.assert_array_equal(y, want_y)


def another_dtype():
    @pl.program
    class Bad:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, v: pl.Tensor[[4], pl.INT32], y: pl.InOut[pl.Tensor[[ROWS, COLS], pl.FP32]]):
            s: pl.Scalar[pl.INT32] = pl.read(v, [0])
            y = pl.write(y, [0, 0], s)  # error: pl.write's value is INT32 but the destination
            return y

    return Bad


def not_a_destination():
    @pl.program
    class Bad:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, v: pl.Tensor[[4], pl.FP32], y: pl.InOut[pl.Tensor[[ROWS, COLS], pl.FP32]]):
            s: pl.Scalar[pl.FP32] = pl.read(v, [0])
            # error: pl.write's destination must be a tensor or a tile
            s = pl.write(s, [0, 0], 1.0)
            return y

    return Bad


@pytest.mark.parametrize("factory", [another_dtype, not_a_destination])
def test_a_bad_write_is_an_error_at_its_line(factory):
    located.expect_error(factory, lambda p: blockpipe.compile(p, quiet=True))
