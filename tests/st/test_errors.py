"""A block that fails at run time fails the call with an error naming the
kernel, the block and the user's line, and leaves the outputs untouched."""

import pathlib
import re

import numpy as np
import pytest

import blockpipe
import blockpipe.language as pl

ROWS, TILE, BLOCKS = 80, 16, 6  # five tiles of rows for six blocks


@pl.program
class OneBlockTooMany:
    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self, x: pl.Tensor[[ROWS, 16], pl.FP32], y: pl.Out[pl.Tensor[[ROWS, 16], pl.FP32]]
    ) -> pl.Tensor[[ROWS, 16], pl.FP32]:
        row = pl.tile.get_block_idx() * TILE
        t = pl.load(x, [row, 0], [TILE, 16])
        return pl.store(pl.mul(t, 2.0), [row, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self, x: pl.Tensor[[ROWS, 16], pl.FP32], y: pl.Out[pl.Tensor[[ROWS, 16], pl.FP32]]
    ) -> pl.Tensor[[ROWS, 16], pl.FP32]:
        with pl.spmd(BLOCKS):
            y = self.k(x, y)
        return y


def test_the_block_past_the_end_fails_naming_its_line():
    program = blockpipe.compile(OneBlockTooMany, quiet=True)
    x = np.arange(ROWS * 16, dtype=np.float32).reshape(ROWS, 16)
    y = np.full((ROWS, 16), 7.0, dtype=np.float32)
    lines = pathlib.Path(__file__).read_text().splitlines()
    load_line = 1 + next(i for i, line in enumerate(lines) if "t = pl.load(x, [row, 0]" in line)
    with pytest.raises(RuntimeError) as info:
        program(x, y)
    message = str(info.value)
    assert re.search(
        rf"kernel 'k' block 5: load from 'x' at test_errors.py:{load_line}: "
        r"dim 0 window \[80, 96\) is outside the tensor's \[0, 80\)",
        message,
    ), message
    np.testing.assert_array_equal(y, np.full((ROWS, 16), 7.0, dtype=np.float32))
