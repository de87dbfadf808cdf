"""pl.concat (and pl.tile.concat): the columns of one Vec tile then those
of another; pl.tile.assemble: pypto's spelling of pl.assemble into a tile."""

import numpy as np
import pytest

import blockpipe
import blockpipe.language as pl


@pl.jit
def joined(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [16, 8])
        tb = pl.load(b, [0, 0], [16, 24])
        both = pl.concat(ta, tb)  # [16, 32]
        both = pl.tile.assemble(
            both, pl.tile.concat(tb, ta), [0, 0]
        )  # the same 32 columns, swapped
        out = pl.store(both, [0, 0], out)
    return out


@pytest.mark.parametrize("dtype", [np.float32, np.int16])
def test_concat_and_tile_assemble_match_numpy(dtype):
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((16, 8)) * 100).astype(dtype)
    b = (rng.standard_normal((16, 24)) * 100).astype(dtype)
    out = np.zeros((16, 32), dtype)
    joined(a, b, out)
    np.testing.assert_array_equal(out, np.concatenate([b, a], axis=1))


def test_concat_of_tiles_with_other_row_counts_is_an_error_at_its_line():
    @pl.jit
    def bad(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            both = pl.concat(pl.load(a, [0, 0], [16, 8]), pl.load(b, [0, 0], [8, 8]))
            out = pl.store(both, [0, 0], out)
        return out

    with pytest.raises(blockpipe.CompileError, match="pl.concat joins the columns of 2-D tiles"):
        bad(
            np.zeros((16, 8), np.float32),
            np.zeros((8, 8), np.float32),
            np.zeros((16, 16), np.float32),
        )


def test_a_window_the_size_of_a_tiles_valid_shape_takes_its_valid_region():
    @pl.jit
    def narrow(src: pl.Tensor[[16, 8], pl.FP32], out: pl.InOut[pl.Tensor[[32, 4], pl.FP32]]):
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.set_validshape(pl.load(src, [0, 0], [16, 8]), 16, 4)
            out[8:24, 0:4] = t  # a [16, 4] window of a 4-column tensor
        return out

    src = np.arange(16 * 8, dtype=np.float32).reshape(16, 8)
    out = np.full((32, 4), -1.0, np.float32)
    narrow(src, out)
    want = np.full((32, 4), -1.0, np.float32)
    want[8:24] = src[:, :4]
    np.testing.assert_array_equal(out, want)
