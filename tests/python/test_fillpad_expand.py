"""pl.tile.fillpad_expand (a tile's valid region at the top left of a larger
tile, the rest padded) and pl.tile.fillpad_inplace (pl.fillpad), against
NumPy, with valid sizes known at compile time and at run time."""

import numpy as np
import pytest

import located
from arrays import data

import blockpipe
import blockpipe.language as pl

TARGETS = [dict(target="cpu-sim"), dict(target="cuda", device="cuda-emu")]
R, C, BR, BC = 8, 16, 16, 32


def program(dtype):
    X, Y = pl.Tensor[[R, C], dtype], pl.Tensor[[BR, BC], dtype]
    Rows = pl.Scalar[pl.INDEX]

    @pl.program
    class Pads:
        @pl.function(type=pl.FunctionType.InCore)
        def k(
            self,
            x: X,
            rows: Rows,
            whole: pl.Out[Y],
            hi: pl.Out[Y],
            lo: pl.Out[Y],
            same: pl.Out[X],
        ) -> tuple[Y, Y, Y, X]:
            t = pl.load(x, [0, 0], [R, C])
            pl.store(pl.tile.fillpad_expand(t, [BR, BC]), [0, 0], whole)
            v = pl.load(x, [0, 0], [R, C], valid_shape=[rows, 10])
            big = pl.fillpad_expand(v, [BR, BC], pad_value=pl.PadValue.max)
            pl.store(big, [0, 0], hi)
            pl.store(pl.tile.fillpad_expand(v, [BR, BC], pad_value=pl.PadValue.min), [0, 0], lo)
            pl.store(pl.tile.fillpad_inplace(v, pad_value=pl.PadValue.max), [0, 0], same)
            return whole, hi, lo, same

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            x: X,
            rows: Rows,
            whole: pl.Out[Y],
            hi: pl.Out[Y],
            lo: pl.Out[Y],
            same: pl.Out[X],
        ) -> tuple[Y, Y, Y, X]:
            whole, hi, lo, same = self.k(x, rows, whole, hi, lo, same)
            return whole, hi, lo, same

    return Pads


def padded(x, rows, cols, shape, fill):
    out = np.full(shape, fill, x.dtype)
    out[:rows, :cols] = x[:rows, :cols]
    return out


@pytest.mark.parametrize("where", TARGETS, ids=["cpu-sim", "cuda-emu"])
@pytest.mark.parametrize("dtype,np_dtype", [(pl.FP32, np.float32), (pl.INT32, np.int32)])
def test_padding_matches_numpy(where, dtype, np_dtype):
    compiled = blockpipe.compile(program(dtype), quiet=True, **where)
    x = data((R, C), np_dtype)
    big, small = np.inf, -np.inf
    if np_dtype == np.int32:
        big, small = np.iinfo(np_dtype).max, np.iinfo(np_dtype).min
    for rows in (R, 3, 0):
        whole, hi, lo, same = compiled(x, rows)
        np.testing.assert_array_equal(whole, padded(x, R, C, (BR, BC), 0))
        np.testing.assert_array_equal(hi, padded(x, rows, 10, (BR, BC), big))
        np.testing.assert_array_equal(lo, padded(x, rows, 10, (BR, BC), small))
        np.testing.assert_array_equal(same, padded(x, rows, 10, (R, C), big))


def test_a_smaller_shape_is_an_error_at_its_line():
    def factory():
        X = pl.Tensor[[R, C], pl.FP32]

        @pl.program
        class Smaller:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: X, y: pl.Out[X]) -> X:
                t = pl.load(x, [0, 0], [R, C])
                # error: pl.fillpad_expand makes a 2-D tile at least as large
                e = pl.tile.fillpad_expand(t, [R, C - 1])
                return pl.store(e, [0, 0], y)

        return Smaller

    located.expect_error(factory, lambda p: blockpipe.compile(p, quiet=True))
