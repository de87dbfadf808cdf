"""pl.tile.tri(..., valid_shape=[r, c]): the mask holds only its valid
region, which pl.store writes; sizes known at compile time or at run time."""

import numpy as np
import pytest

import located

import blockpipe
import blockpipe.language as pl

TARGETS = [dict(target="cpu-sim"), dict(target="cuda", device="cuda-emu")]
M, N = 16, 32


def expected(rows, cols, diagonal, upper, fill):
    """What the output holds: the mask of a rows x cols tile in its corner
    (np.tri / np.triu of the valid region), `fill` elsewhere."""
    out = np.full((M, N), fill, np.float32)
    ones = np.ones((rows, cols), np.float32)
    out[:rows, :cols] = np.triu(ones, diagonal) if upper else np.tril(ones, diagonal)
    return out


@pl.program
class Masks:
    @pl.function(type=pl.FunctionType.InCore)
    def fixed(self, out: pl.InOut[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, N], pl.FP32]:
        t = pl.tile.tri(2, [M, N], valid_shape=[9, 21], dtype=pl.FP32)
        return pl.store(t, [0, 0], out)

    @pl.function(type=pl.FunctionType.InCore)
    def dynamic(
        self,
        rows: pl.Scalar[pl.INDEX],
        cols: pl.Scalar[pl.INDEX],
        diagonal: pl.Scalar[pl.INT32],
        out: pl.InOut[pl.Tensor[[M, N], pl.FP32]],
    ) -> pl.Tensor[[M, N], pl.FP32]:
        t = pl.tri(diagonal, [M, N], valid_shape=[rows, cols], dtype=pl.FP32, upper=True)
        return pl.store(pl.mul(t, 2.0), [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        rows: pl.Scalar[pl.INDEX],
        cols: pl.Scalar[pl.INDEX],
        diagonal: pl.Scalar[pl.INT32],
        a: pl.InOut[pl.Tensor[[M, N], pl.FP32]],
        b: pl.InOut[pl.Tensor[[M, N], pl.FP32]],
    ):
        a = self.fixed(a)
        b = self.dynamic(rows, cols, diagonal, b)
        return a, b


@pytest.mark.parametrize("where", TARGETS, ids=["cpu-sim", "cuda-emu"])
def test_only_the_valid_region_is_written(where):
    compiled = blockpipe.compile(Masks, quiet=True, **where)
    for rows, cols, diagonal in ((5, 30, -1), (16, 7, 3), (0, 4, 0)):
        a = np.full((M, N), -5.0, np.float32)
        b = np.full((M, N), -5.0, np.float32)
        compiled(rows, cols, diagonal, a, b)
        np.testing.assert_array_equal(a, expected(9, 21, 2, False, -5.0))
        want = expected(rows, cols, diagonal, True, -5.0)
        want[:rows, :cols] *= 2
        np.testing.assert_array_equal(b, want)


def test_a_valid_shape_of_none_is_the_whole_tile():
    valid = None

    @pl.program
    class Whole:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, out: pl.Out[pl.Tensor[[M, N], pl.INT32]]) -> pl.Tensor[[M, N], pl.INT32]:
            return pl.store(pl.tile.tri(0, [M, N], valid_shape=valid), [0, 0], out)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, out: pl.Out[pl.Tensor[[M, N], pl.INT32]]) -> pl.Tensor[[M, N], pl.INT32]:
            out = self.k(out)
            return out

    out = blockpipe.compile(Whole, quiet=True)()
    np.testing.assert_array_equal(out, np.tri(M, N, 0, dtype=np.int32))


def test_a_valid_size_outside_the_tile_is_an_error_at_its_line():
    def program():
        @pl.program
        class Outside:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, out: pl.Out[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, N], pl.FP32]:
                # error: pl.tile.tri's valid_shape size 17 is outside [0, 16]
                t = pl.tile.tri(0, [M, N], valid_shape=[M + 1, N], dtype=pl.FP32)
                return pl.store(t, [0, 0], out)

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, out: pl.Out[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, N], pl.FP32]:
                out = self.k(out)
                return out

        return Outside

    located.expect_error(program, lambda p: blockpipe.compile(p, quiet=True))


@pytest.mark.parametrize("where", TARGETS, ids=["cpu-sim", "cuda-emu"])
@pytest.mark.parametrize("dtype", [pl.INT16, pl.UINT16, pl.FP16, pl.BF16, pl.INT32, pl.FP32])
def test_a_mask_of_each_dtype_stored_directly(where, dtype):
    """A constant diagonal, stored as made: the 16-bit masks once came out
    with whole rows of ones (a GCC 12 AVX-512 miscompile of the fill)."""

    @pl.program
    class Direct:
        @pl.function(type=pl.FunctionType.InCore)
        def k(
            self,
            lower: pl.InOut[pl.Tensor[[M, N], dtype]],
            upper: pl.InOut[pl.Tensor[[M, N], dtype]],
        ):
            lower = pl.store(pl.tile.tri(0, [M, N], dtype=dtype), [0, 0], lower)
            upper = pl.store(pl.tile.tri(-3, [M, N], dtype=dtype, upper=True), [0, 0], upper)
            return lower, upper

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            lower: pl.InOut[pl.Tensor[[M, N], dtype]],
            upper: pl.InOut[pl.Tensor[[M, N], dtype]],
        ):
            lower, upper = self.k(lower, upper)
            return lower, upper

    compiled = blockpipe.compile(Direct, quiet=True, **where)
    np_dtype = np.float32 if dtype is pl.BF16 else dtype.numpy
    lower = np.full((M, N), 7, np.float32 if dtype is pl.BF16 else np_dtype)
    upper = lower.copy()
    if dtype is pl.BF16:
        bf16 = pytest.importorskip("ml_dtypes").bfloat16
        lower, upper = lower.astype(bf16), upper.astype(bf16)
    compiled(lower, upper)
    ones = np.ones((M, N), np.float32)
    np.testing.assert_array_equal(lower.astype(np.float32), np.tril(ones, 0))
    np.testing.assert_array_equal(upper.astype(np.float32), np.triu(ones, -3))
