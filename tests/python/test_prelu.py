"""pl.tile.prelu(x, slope, tmp): x where x > 0, else slope * x, composed
from pl.cmp, pl.mul and pl.where; against NumPy."""

import numpy as np
import pytest

import located
from arrays import data

import blockpipe
import blockpipe.language as pl

TARGETS = [dict(target="cpu-sim"), dict(target="cuda", device="cuda-emu")]
M, N = 16, 64


def program(dtype):
    T = pl.Tensor[[M, N], dtype]

    @pl.program
    class Prelu:
        @pl.function(type=pl.FunctionType.InCore)
        def k(
            self, x: T, s: T, rows: pl.Scalar[pl.INDEX], full: pl.Out[T], part: pl.InOut[T]
        ) -> tuple[T, T]:
            xt = pl.load(x, [0, 0], [M, N])
            st = pl.load(s, [0, 0], [M, N])
            tmp = pl.create_tile([1, 32], dtype=pl.UINT8, target_memory=pl.MemorySpace.Vec)
            pl.store(pl.tile.prelu(xt, st, tmp), [0, 0], full)
            xv = pl.load(x, [0, 0], [M, N], valid_shape=[rows, 37])
            sv = pl.load(s, [0, 0], [M, N], valid_shape=[rows, 37])
            pl.store(pl.prelu(xv, sv, tmp), [0, 0], part)
            return full, part

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self, x: T, s: T, rows: pl.Scalar[pl.INDEX], full: pl.Out[T], part: pl.InOut[T]
        ) -> tuple[T, T]:
            full, part = self.k(x, s, rows, full, part)
            return full, part

    return Prelu


@pytest.mark.parametrize("where", TARGETS, ids=["cpu-sim", "cuda-emu"])
@pytest.mark.parametrize(
    "dtype,np_dtype", [(pl.FP32, np.float32), (pl.FP16, np.float16), (pl.INT32, np.int32)]
)
def test_prelu_matches_numpy(where, dtype, np_dtype):
    compiled = blockpipe.compile(program(dtype), quiet=True, **where)
    x = data((M, N), np_dtype)
    x[0, :4] = 0  # 0 is not > 0: slope * 0
    s = data((M, N), np_dtype, seed=1)
    full = np.zeros((M, N), np_dtype)
    part = np.full((M, N), 7, np_dtype)
    compiled(x, s, 9, full, part)
    want = np.where(x > 0, x, s * x)
    np.testing.assert_array_equal(full, want)
    np.testing.assert_array_equal(part[:9, :37], want[:9, :37])
    assert (part[9:] == 7).all() and (part[:, 37:] == 7).all()


def test_a_slope_of_another_dtype_is_an_error_at_its_line():
    def factory():
        T = pl.Tensor[[M, N], pl.FP32]

        @pl.program
        class Mixed:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: T, y: pl.Out[T]) -> T:
                t = pl.load(x, [0, 0], [M, N])
                s = pl.cast(t, pl.FP16)
                r = pl.tile.prelu(t, s, t)  # error: pl.prelu's slope must be a tile of
                return pl.store(r, [0, 0], y)

        return Mixed

    located.expect_error(factory, lambda p: blockpipe.compile(p, quiet=True))
