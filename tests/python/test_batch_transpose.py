"""pl.transpose of a tile of more than 2 dims swaps its last two axes,
batch by batch (pypto's `pl.transpose(t, axis1=1, axis2=2)` of a
[B, R, C] tile); other axes are an error at the call."""

import numpy as np
import pytest

from located import expect_error

import blockpipe
import blockpipe.language as pl


def _program(shape, axes):
    swapped = [*shape[:-2], shape[-1], shape[-2]]
    zeros = [0] * len(shape)
    first, second = axes

    @pl.program
    class Swap:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(self, x: pl.Tensor[shape, pl.FP32], out: pl.Out[pl.Tensor[swapped, pl.FP32]]):
            t = pl.load(x, zeros, shape)
            out = pl.store(pl.transpose(t, axis1=first, axis2=second), zeros, out)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[shape, pl.FP32], out: pl.Out[pl.Tensor[swapped, pl.FP32]]):
            out = self.kernel(x, out)
            return out

    return Swap


@pytest.mark.parametrize("interpret", [False, True], ids=["compiled", "interpreted"])
@pytest.mark.parametrize(
    "shape, axes",
    [([4, 24, 8], (1, 2)), ([4, 24, 8], (-1, -2)), ([2, 3, 8, 16], (3, 2))],
    ids=["3-D", "3-D-negative", "4-D"],
)
def test_the_last_two_axes_swap_in_every_batch(monkeypatch, interpret, shape, axes):
    if interpret:
        monkeypatch.setenv("BLOCKPIPE_INTERPRET", "1")
    x = np.random.default_rng(16).standard_normal(shape).astype(np.float32)
    out = np.zeros([*shape[:-2], shape[-1], shape[-2]], np.float32)
    blockpipe.compile(_program(shape, axes), quiet=True)(x, out)
    np.testing.assert_array_equal(out, np.swapaxes(x, -1, -2))


def test_a_batch_axis_does_not_swap():
    def program():
        @pl.program
        class BatchAxis:
            @pl.function(type=pl.FunctionType.InCore)
            def kernel(
                self,
                x: pl.Tensor[[4, 24, 8], pl.FP32],
                out: pl.Out[pl.Tensor[[24, 4, 8], pl.FP32]],
            ):
                t = pl.load(x, [0, 0, 0], [4, 24, 8])
                flipped = pl.transpose(t, axis1=0, axis2=1)  # error: swaps its last two axes
                out = pl.store(flipped, [0, 0, 0], out)
                return out

        return BatchAxis

    expect_error(program, lambda p: blockpipe.compile(p, quiet=True))
