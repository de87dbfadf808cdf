"""pypto's partial combines, pl.tile.part_add / part_mul / part_max /
part_min: the op where both sources hold data, the first source where only
it does; against NumPy, with valid sizes known at run time."""

import numpy as np
import pytest

import located
from arrays import data

import blockpipe
import blockpipe.language as pl

TARGETS = [dict(target="cpu-sim"), dict(target="cuda", device="cuda-emu")]
M, N = 16, 32
REFERENCE = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}


def program(dtype):
    T = pl.Tensor[[M, N], dtype]
    R = pl.Scalar[pl.INDEX]

    @pl.program
    class Parts:
        @pl.function(type=pl.FunctionType.InCore)
        def k(
            self,
            x: T,
            y: T,
            rows: R,
            cols: R,
            add: pl.Out[T],
            mul: pl.Out[T],
            mx: pl.Out[T],
            mn: pl.Out[T],
        ) -> tuple[T, T, T, T]:
            a = pl.load(x, [0, 0], [M, N])
            b = pl.load(y, [0, 0], [M, N], valid_shape=[rows, cols])
            pl.store(pl.tile.part_add(a, b), [0, 0], add)
            pl.store(pl.part_mul(a, b), [0, 0], mul)
            pl.store(pl.tile.part_max(a, b), [0, 0], mx)
            pl.store(pl.tile.part_min(a, b), [0, 0], mn)
            return add, mul, mx, mn

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            x: T,
            y: T,
            rows: R,
            cols: R,
            add: pl.Out[T],
            mul: pl.Out[T],
            mx: pl.Out[T],
            mn: pl.Out[T],
        ) -> tuple[T, T, T, T]:
            add, mul, mx, mn = self.k(x, y, rows, cols, add, mul, mx, mn)
            return add, mul, mx, mn

    return Parts


@pytest.mark.parametrize("where", TARGETS, ids=["cpu-sim", "cuda-emu"])
@pytest.mark.parametrize("dtype,np_dtype", [(pl.FP32, np.float32), (pl.INT32, np.int32)])
def test_partial_combines_match_numpy(where, dtype, np_dtype):
    compiled = blockpipe.compile(program(dtype), quiet=True, **where)
    x, y = data((M, N), np_dtype), data((M, N), np_dtype, seed=1)
    for rows, cols in ((M, N), (5, N), (M, 9), (3, 20), (0, 0)):
        outs = compiled(x, y, rows, cols)
        for name, out in zip(REFERENCE, outs):
            want = x.copy()
            want[:rows, :cols] = REFERENCE[name](x, y)[:rows, :cols]
            np.testing.assert_array_equal(out, want, err_msg=f"part_{name} {rows}x{cols}")


def test_sources_of_two_dtypes_are_an_error_at_its_line():
    def factory():
        T = pl.Tensor[[M, N], pl.FP32]

        @pl.program
        class Mixed:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: T, y: pl.Out[T]) -> T:
                t = pl.load(x, [0, 0], [M, N])
                h = pl.cast(t, pl.FP16)
                r = pl.tile.part_add(t, h)  # error: sources must be tiles of one shape and dtype
                return pl.store(r, [0, 0], y)

        return Mixed

    located.expect_error(factory, lambda p: blockpipe.compile(p, quiet=True))
