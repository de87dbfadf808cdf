"""A vector kernel split up_down (pl.split) whose tiles have one row: the
split has nothing to divide, so one subblock runs all of it (pypto's sort
programs split that way); a tile of two rows or more is divided as
before."""

import numpy as np
import pytest

import blockpipe
import blockpipe.language as pl


def _program(rows):
    T = pl.Tensor[[rows, 64], pl.FP32]

    @pl.program
    class Split:
        @pl.function(type=pl.FunctionType.Opaque)
        def main(self, x: T, y: pl.Out[T]) -> T:
            with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.UP_DOWN)]):
                t = pl.load(x, [0, 0], [rows, 64])
                cols = pl.tile.gather_mask(t, mask_pattern=pl.tile.MaskPattern.P1111)
                y = pl.store(pl.add(cols, 1.0), [0, 0], y)
            return y

    return Split


@pytest.mark.parametrize("where", [dict(target="cpu-sim"), dict(target="cuda", device="cuda-emu")])
def test_tiles_of_one_row_run_on_one_subblock(where):
    compiled = blockpipe.compile(_program(1), quiet=True, **where)
    x = np.arange(64, dtype=np.float32).reshape(1, 64)
    y = np.zeros_like(x)
    compiled(x, y)
    np.testing.assert_array_equal(y, x + 1)


def test_tiles_of_two_rows_are_still_divided():
    # The gather moves elements across the halves: refused as before.
    with pytest.raises(blockpipe.CompileError, match="moves elements between the halves"):
        blockpipe.compile(_program(2), quiet=True)
