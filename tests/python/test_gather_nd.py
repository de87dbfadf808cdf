"""pl.tensor.gather's index form along any dim and of more than 2 dims, as
torch.gather: `out[i, j, k] = x[i, idx[i, j, k], k]` for dim=1, index no
larger than input but along dim; an index outside the input fails the
launch."""

import numpy as np
import pytest

from located import expect_error

import blockpipe
import blockpipe.language as pl


def _program(in_shape, idx_shape, dim, from_tile):
    """pl.tensor.gather(x, dim, idx) of a tensor x (or of x loaded whole
    when `from_tile`) and an index tile, stored whole."""
    zeros = [0] * len(in_shape)

    @pl.program
    class Along:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(
            self,
            x: pl.Tensor[in_shape, pl.FP32],
            idx: pl.Tensor[idx_shape, pl.INT32],
            out: pl.Out[pl.Tensor[idx_shape, pl.FP32]],
        ):
            i = pl.load(idx, zeros, idx_shape)
            if from_tile:
                src = pl.load(x, zeros, in_shape)
                got = pl.tensor.gather(src, dim=dim, index=i)
            else:
                got = pl.tensor.gather(x, dim=dim, index=i)
            out = pl.store(got, zeros, out)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            x: pl.Tensor[in_shape, pl.FP32],
            idx: pl.Tensor[idx_shape, pl.INT32],
            out: pl.Out[pl.Tensor[idx_shape, pl.FP32]],
        ):
            out = self.kernel(x, idx, out)
            return out

    return Along


CASES = {
    "rank3-last": ([2, 3, 16], [2, 3, 8], -1),
    "rank3-middle": ([2, 8, 8], [2, 3, 8], 1),
    "rank3-first": ([8, 2, 8], [3, 2, 8], -3),
    "rank3-smaller-index": ([4, 5, 16], [2, 3, 8], 1),
    "rank2-rows": ([16, 8], [4, 8], 0),
}


def _inputs(in_shape, idx_shape, dim):
    rng = np.random.default_rng(3)
    x = rng.standard_normal(in_shape).astype(np.float32)
    idx = rng.integers(0, in_shape[dim], idx_shape).astype(np.int32)
    return x, idx


def _expected(x, idx, dim):
    # torch.gather: the index's own coordinates elsewhere than along dim.
    window = x[
        tuple(slice(0, n) if d != dim % x.ndim else slice(None) for d, n in enumerate(idx.shape))
    ]
    return np.take_along_axis(window, idx.astype(np.int64), axis=dim)


@pytest.mark.parametrize("interpret", [False, True], ids=["compiled", "interpreted"])
@pytest.mark.parametrize("from_tile", [False, True], ids=["tensor", "tile"])
@pytest.mark.parametrize("case", list(CASES))
def test_gather_along_a_dim_matches_torch_gather(monkeypatch, case, from_tile, interpret):
    if interpret:
        monkeypatch.setenv("BLOCKPIPE_INTERPRET", "1")
    in_shape, idx_shape, dim = CASES[case]
    x, idx = _inputs(in_shape, idx_shape, dim)
    out = np.zeros(idx_shape, np.float32)
    blockpipe.compile(_program(in_shape, idx_shape, dim, from_tile), quiet=True)(x, idx, out)
    np.testing.assert_array_equal(out, _expected(x, idx, dim))


@pytest.mark.parametrize("interpret", [False, True], ids=["compiled", "interpreted"])
def test_an_index_outside_the_input_fails_the_launch(monkeypatch, interpret):
    if interpret:
        monkeypatch.setenv("BLOCKPIPE_INTERPRET", "1")
    in_shape, idx_shape, dim = CASES["rank3-middle"]
    x, idx = _inputs(in_shape, idx_shape, dim)
    idx[1, 2, 7] = 40  # row 40 of x[1]: past x's end
    out = np.zeros(idx_shape, np.float32)
    compiled = blockpipe.compile(_program(in_shape, idx_shape, dim, False), quiet=True)
    with pytest.raises(blockpipe.ExecutionError, match="outside"):
        compiled(x, idx, out)


def test_the_index_must_have_the_inputs_rank():
    def program():
        @pl.program
        class WrongRank:
            @pl.function(type=pl.FunctionType.InCore)
            def kernel(
                self,
                x: pl.Tensor[[2, 8, 8], pl.FP32],
                idx: pl.Tensor[[6, 8], pl.INT32],
                out: pl.Out[pl.Tensor[[6, 8], pl.FP32]],
            ):
                i = pl.load(idx, [0, 0], [6, 8])
                got = pl.tensor.gather(x, dim=1, index=i)  # error: must have input's rank, 3
                out = pl.store(got, [0, 0], out)
                return out

        return WrongRank

    expect_error(program, lambda p: blockpipe.compile(p, quiet=True))


def test_dim_must_be_one_of_the_inputs():
    def program():
        @pl.program
        class WrongDim:
            @pl.function(type=pl.FunctionType.InCore)
            def kernel(
                self,
                x: pl.Tensor[[2, 8, 8], pl.FP32],
                idx: pl.Tensor[[2, 8, 8], pl.INT32],
                out: pl.Out[pl.Tensor[[2, 8, 8], pl.FP32]],
            ):
                i = pl.load(idx, [0, 0, 0], [2, 8, 8])
                got = pl.tensor.gather(x, dim=3, index=i)  # error: dim is 3, outside input's 3
                out = pl.store(got, [0, 0, 0], out)
                return out

        return WrongDim

    expect_error(program, lambda p: blockpipe.compile(p, quiet=True))
