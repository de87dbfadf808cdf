"""The reductions added to the op table beyond sum, max and min: row_prod,
col_prod, col_min, and the arg reductions row_argmax / row_argmin /
col_argmax / col_argmin (INT32 indices, NumPy's tie and NaN rules), with
valid shapes, on cpu-sim and cuda-emu against NumPy. (test_op_table runs
each op on every dtype it takes.)"""

import numpy as np
import pytest

import blockpipe
import blockpipe.language as pl

TARGETS = [dict(target="cpu-sim"), dict(target="cuda", device="cuda-emu")]


@pytest.mark.parametrize("where", TARGETS, ids=["cpu", "emu"])
@pytest.mark.parametrize("dtype", [pl.FP32, pl.FP16])
def test_arg_reductions_of_a_valid_region(where, dtype):
    @pl.program
    class Args:
        @pl.function(type=pl.FunctionType.InCore)
        def k(
            self,
            x: pl.Tensor[[16, 32], dtype],
            rmax: pl.Out[pl.Tensor[[16, 1], pl.INT32]],
            rmin: pl.Out[pl.Tensor[[16, 1], pl.INT32]],
            cmax: pl.Out[pl.Tensor[[1, 32], pl.INT32]],
            cmin: pl.Out[pl.Tensor[[1, 32], pl.INT32]],
        ) -> tuple[
            pl.Tensor[[16, 1], pl.INT32],
            pl.Tensor[[16, 1], pl.INT32],
            pl.Tensor[[1, 32], pl.INT32],
            pl.Tensor[[1, 32], pl.INT32],
        ]:
            t = pl.load(x, [0, 0], [16, 32], valid_shape=[12, 20])
            tmp = pl.create_tile([16, 32], dtype=dtype, target_memory=pl.MemorySpace.Vec)
            rmax = pl.store(pl.tile.row_argmax(t, tmp), [0, 0], rmax)
            rmin = pl.store(pl.row_argmin(t), [0, 0], rmin)
            cmax = pl.store(pl.col_argmax(t), [0, 0], cmax)
            cmin = pl.store(pl.tile.col_argmin(t, tmp), [0, 0], cmin)
            return rmax, rmin, cmax, cmin

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            x: pl.Tensor[[16, 32], dtype],
            rmax: pl.Out[pl.Tensor[[16, 1], pl.INT32]],
            rmin: pl.Out[pl.Tensor[[16, 1], pl.INT32]],
            cmax: pl.Out[pl.Tensor[[1, 32], pl.INT32]],
            cmin: pl.Out[pl.Tensor[[1, 32], pl.INT32]],
        ) -> tuple[
            pl.Tensor[[16, 1], pl.INT32],
            pl.Tensor[[16, 1], pl.INT32],
            pl.Tensor[[1, 32], pl.INT32],
            pl.Tensor[[1, 32], pl.INT32],
        ]:
            rmax, rmin, cmax, cmin = self.k(x, rmax, rmin, cmax, cmin)
            return rmax, rmin, cmax, cmin

    np_dtype = np.float16 if dtype is pl.FP16 else np.float32
    rng = np.random.default_rng(1)
    x = rng.permutation(16 * 32).reshape(16, 32).astype(np_dtype)
    x[1, 3] = x[1, 5] = 1000  # a tie: the first column wins
    x[2, 7] = np.nan  # a NaN: it is the extremum, as in NumPy
    x[:, 25] = 2000  # outside the valid columns: never chosen
    outs = [np.full(s, -1, np.int32) for s in ((16, 1), (16, 1), (1, 32), (1, 32))]
    blockpipe.compile(Args, quiet=True, **where)(x, *outs)
    v = x[:12, :20].astype(np.float32)
    np.testing.assert_array_equal(outs[0][:12, 0], np.argmax(v, axis=1))
    np.testing.assert_array_equal(outs[1][:12, 0], np.argmin(v, axis=1))
    np.testing.assert_array_equal(outs[2][0, :20], np.argmax(v, axis=0))
    np.testing.assert_array_equal(outs[3][0, :20], np.argmin(v, axis=0))
    # Outside the valid region nothing is stored.
    assert (outs[0][12:] == -1).all() and (outs[2][0, 20:] == -1).all()
    assert outs[0][1, 0] == 3 and outs[0][2, 0] == 7


def test_an_arg_reduction_of_an_integer_tile_is_an_error():
    @pl.jit
    def bad(x: pl.Tensor[[8, 8], pl.INT32], y: pl.Out[pl.Tensor[[8, 1], pl.INT32]]):
        with pl.at(level=pl.Level.CORE_GROUP):
            y = pl.store(pl.row_argmax(pl.load(x, [0, 0], [8, 8])), [0, 0], y)
        return y

    with pytest.raises(blockpipe.CompileError, match="pl.row_argmax needs a floating-point tile"):
        bad(np.zeros((8, 8), np.int32), np.zeros((8, 1), np.int32))


def test_products_and_column_minimum_of_a_valid_region():
    @pl.jit
    def reduce(
        x: pl.Tensor[[8, 16], pl.FP32],
        rp: pl.Out[pl.Tensor[[8, 1], pl.FP32]],
        cp: pl.Out[pl.Tensor[[1, 16], pl.FP32]],
        cm: pl.Out[pl.Tensor[[1, 16], pl.FP32]],
    ):
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(x, [0, 0], [8, 16], valid_shape=[6, 10])
            rp = pl.store(pl.row_prod(t), [0, 0], rp)
            cp = pl.store(pl.col_prod(t), [0, 0], cp)
            cm = pl.store(pl.col_min(t), [0, 0], cm)
        return rp, cp, cm

    x = np.random.default_rng(2).uniform(0.5, 1.5, (8, 16)).astype(np.float32)
    rp = np.zeros((8, 1), np.float32)
    cp = np.zeros((1, 16), np.float32)
    cm = np.zeros((1, 16), np.float32)
    reduce(x, rp, cp, cm)
    v = x[:6, :10]
    np.testing.assert_allclose(rp[:6, 0], v.prod(axis=1), rtol=1e-5)
    np.testing.assert_allclose(cp[0, :10], v.prod(axis=0), rtol=1e-5)
    np.testing.assert_array_equal(cm[0, :10], v.min(axis=0))
