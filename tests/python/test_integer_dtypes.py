"""INT8, INT16, UINT8, UINT16 and UINT32 through the whole stack: parameters,
tiles, casts and scalar operands, with NumPy's integer semantics (wrap-around,
unsigned comparisons and shifts, saturating float -> integer casts), on
cpu-sim and cuda-emu. The op table's per-dtype test (test_op_table.py) covers
every table op on every dtype; this file covers what lies outside the table."""

import numpy as np
import pytest

import blockpipe
import blockpipe.language as pl

M, N = 8, 16
TARGETS = [dict(target="cpu-sim"), dict(target="cuda", device="cuda-emu")]


def compile_on(program, where):
    return blockpipe.compile(program, quiet=True, **where)


@pytest.mark.parametrize("where", TARGETS, ids=["cpu-sim", "cuda-emu"])
def test_unsigned_scalar_operands_and_wrap_around(where):
    @pl.program
    class U8:
        @pl.function(type=pl.FunctionType.InCore)
        def k(
            self,
            x: pl.Tensor[[M, N], pl.UINT8],
            y: pl.Out[pl.Tensor[[3 * M, N], pl.UINT8]],
        ) -> pl.Tensor[[3 * M, N], pl.UINT8]:
            t = pl.load(x, [0, 0], [M, N])
            y = pl.store(pl.adds(t, 200), [0, 0], y)  # 200 is in UINT8's range
            y = pl.store(pl.maximums(t, 128), [M, 0], y)  # an unsigned maximum
            y = pl.store(pl.shrs(t, 1), [2 * M, 0], y)  # a logical shift
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            x: pl.Tensor[[M, N], pl.UINT8],
            y: pl.Out[pl.Tensor[[3 * M, N], pl.UINT8]],
        ) -> pl.Tensor[[3 * M, N], pl.UINT8]:
            y = self.k(x, y)
            return y

    x = np.random.default_rng(0).integers(0, 256, (M, N)).astype(np.uint8)
    x[0, :3] = [0, 255, 128]
    y = np.zeros((3 * M, N), np.uint8)
    compile_on(U8, where)(x, y)
    np.testing.assert_array_equal(y[:M], x + np.uint8(200))  # wraps past 255
    np.testing.assert_array_equal(y[M : 2 * M], np.maximum(x, np.uint8(128)))
    np.testing.assert_array_equal(y[2 * M :], x >> np.uint8(1))


@pytest.mark.parametrize("where", TARGETS, ids=["cpu-sim", "cuda-emu"])
def test_casts_wrap_between_integers_and_saturate_from_floats(where):
    @pl.program
    class Casts:
        @pl.function(type=pl.FunctionType.InCore)
        def k(
            self,
            f: pl.Tensor[[M, N], pl.FP32],
            i: pl.Tensor[[M, N], pl.INT32],
            u: pl.Tensor[[M, N], pl.UINT32],
            to_i8: pl.Out[pl.Tensor[[M, N], pl.INT8]],
            to_u16: pl.Out[pl.Tensor[[M, N], pl.UINT16]],
            wrapped: pl.Out[pl.Tensor[[M, N], pl.INT16]],
            back: pl.Out[pl.Tensor[[M, N], pl.FP32]],
        ):
            tf = pl.load(f, [0, 0], [M, N])
            ti = pl.load(i, [0, 0], [M, N])
            tu = pl.load(u, [0, 0], [M, N])
            to_i8 = pl.store(pl.cast(tf, pl.INT8), [0, 0], to_i8)
            to_u16 = pl.store(pl.cast(tf, pl.UINT16), [0, 0], to_u16)
            wrapped = pl.store(pl.cast(ti, pl.INT16), [0, 0], wrapped)
            back = pl.store(pl.cast(tu, pl.FP32), [0, 0], back)
            return to_i8, to_u16, wrapped, back

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            f: pl.Tensor[[M, N], pl.FP32],
            i: pl.Tensor[[M, N], pl.INT32],
            u: pl.Tensor[[M, N], pl.UINT32],
            to_i8: pl.Out[pl.Tensor[[M, N], pl.INT8]],
            to_u16: pl.Out[pl.Tensor[[M, N], pl.UINT16]],
            wrapped: pl.Out[pl.Tensor[[M, N], pl.INT16]],
            back: pl.Out[pl.Tensor[[M, N], pl.FP32]],
        ):
            to_i8, to_u16, wrapped, back = self.k(f, i, u, to_i8, to_u16, wrapped, back)
            return to_i8, to_u16, wrapped, back

    rng = np.random.default_rng(1)
    f = (rng.standard_normal((M, N)) * 300).astype(np.float32)
    f[0, :6] = [np.nan, np.inf, -np.inf, 1e10, -1e10, -2.7]
    i = rng.integers(-(2**31), 2**31 - 1, (M, N)).astype(np.int32)
    u = rng.integers(0, 2**32, (M, N), dtype=np.uint64).astype(np.uint32)
    u[0, 0] = 2**32 - 1
    outs = [np.zeros((M, N), d) for d in (np.int8, np.uint16, np.int16, np.float32)]
    compile_on(Casts, where)(f, i, u, *outs)

    def saturate(values, dtype):
        info = np.iinfo(dtype)
        clean = np.where(np.isnan(values), 0, values)
        return np.clip(np.trunc(clean), info.min, info.max).astype(dtype)

    np.testing.assert_array_equal(outs[0], saturate(f, np.int8))
    np.testing.assert_array_equal(outs[1], saturate(f, np.uint16))
    np.testing.assert_array_equal(outs[2], i.astype(np.int16))  # NumPy's astype wraps
    np.testing.assert_array_equal(outs[3], u.astype(np.float32))  # unsigned, not -1.0


@pytest.mark.parametrize("where", TARGETS, ids=["cpu-sim", "cuda-emu"])
def test_narrow_reductions_and_comparisons(where):
    @pl.program
    class Narrow:
        @pl.function(type=pl.FunctionType.InCore)
        def k(
            self,
            a: pl.Tensor[[M, N], pl.INT8],
            u: pl.Tensor[[M, N], pl.UINT32],
            v: pl.Tensor[[M, N], pl.UINT32],
            sums: pl.Out[pl.Tensor[[M, 1], pl.INT8]],
            less: pl.Out[pl.Tensor[[M, N], pl.UINT32]],
        ):
            sums = pl.store(pl.row_sum(pl.load(a, [0, 0], [M, N])), [0, 0], sums)
            lt = pl.cmp(pl.load(u, [0, 0], [M, N]), pl.load(v, [0, 0], [M, N]), cmp_type=2)
            less = pl.store(lt, [0, 0], less)
            return sums, less

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            a: pl.Tensor[[M, N], pl.INT8],
            u: pl.Tensor[[M, N], pl.UINT32],
            v: pl.Tensor[[M, N], pl.UINT32],
            sums: pl.Out[pl.Tensor[[M, 1], pl.INT8]],
            less: pl.Out[pl.Tensor[[M, N], pl.UINT32]],
        ):
            sums, less = self.k(a, u, v, sums, less)
            return sums, less

    rng = np.random.default_rng(2)
    a = rng.integers(-128, 128, (M, N)).astype(np.int8)
    a[0] = 127  # sums past 127 wrap around
    u = rng.integers(0, 2**32, (M, N), dtype=np.uint64).astype(np.uint32)
    v = rng.integers(0, 2**32, (M, N), dtype=np.uint64).astype(np.uint32)
    sums = np.zeros((M, 1), np.int8)
    less = np.zeros((M, N), np.uint32)
    compile_on(Narrow, where)(a, u, v, sums, less)
    np.testing.assert_array_equal(sums, a.sum(axis=1, keepdims=True).astype(np.int8))
    np.testing.assert_array_equal(less, (u < v).astype(np.uint32))


def test_a_scalar_out_of_an_unsigned_range_is_an_error_at_its_line():
    @pl.program
    class Bad:
        @pl.function(type=pl.FunctionType.InCore)
        def k(
            self, x: pl.Tensor[[M, N], pl.UINT8], y: pl.Out[pl.Tensor[[M, N], pl.UINT8]]
        ) -> pl.Tensor[[M, N], pl.UINT8]:
            t = pl.load(x, [0, 0], [M, N])
            return pl.store(pl.adds(t, 256), [0, 0], y)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self, x: pl.Tensor[[M, N], pl.UINT8], y: pl.Out[pl.Tensor[[M, N], pl.UINT8]]
        ) -> pl.Tensor[[M, N], pl.UINT8]:
            y = self.k(x, y)
            return y

    with pytest.raises(blockpipe.CompileError, match="256 is out of range for UINT8") as info:
        blockpipe.compile(Bad, quiet=True)
    assert info.value.file.endswith("test_integer_dtypes.py") and info.value.line


def test_integer_arrays_are_checked_by_dtype():
    @pl.jit
    def double(x: pl.Tensor[[M, N], pl.INT16], y: pl.Out[pl.Tensor[[M, N], pl.INT16]]):
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(x, [0, 0], [M, N])
            y = pl.store(pl.add(t, t), [0, 0], y)
        return y

    x = np.arange(M * N, dtype=np.int16).reshape(M, N) * 300
    y = np.zeros_like(x)
    double(x, y)
    np.testing.assert_array_equal(y, x + x)  # wraps past 32767
    with pytest.raises(
        ValueError, match="parameter 'x' of 'double' must have dtype int16, got uint16"
    ):
        double(x.astype(np.uint16), y)


def test_an_unsigned_scalar_parameter_is_an_error_naming_it():
    @pl.program
    class Unsigned:
        @pl.function(type=pl.FunctionType.InCore)
        def k(
            self,
            x: pl.Tensor[[M, N], pl.UINT8],
            s: pl.Scalar[pl.UINT8],
            y: pl.Out[pl.Tensor[[M, N], pl.UINT8]],
        ) -> pl.Tensor[[M, N], pl.UINT8]:
            return pl.store(pl.adds(pl.load(x, [0, 0], [M, N]), s), [0, 0], y)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self, x: pl.Tensor[[M, N], pl.UINT8], y: pl.Out[pl.Tensor[[M, N], pl.UINT8]]
        ) -> pl.Tensor[[M, N], pl.UINT8]:
            y = self.k(x, 3, y)
            return y

    with pytest.raises(blockpipe.CompileError, match="parameter 's' of 'k' is a pl.Scalar"):
        blockpipe.compile(Unsigned, quiet=True)


def test_a_narrow_signed_scalar_widens_at_a_call():
    @pl.program
    class Widen:
        @pl.function(type=pl.FunctionType.InCore)
        def k(
            self,
            x: pl.Tensor[[M, N], pl.INT32],
            s: pl.Scalar[pl.INT32],
            y: pl.Out[pl.Tensor[[M, N], pl.INT32]],
        ) -> pl.Tensor[[M, N], pl.INT32]:
            return pl.store(pl.adds(pl.load(x, [0, 0], [M, N]), s), [0, 0], y)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            x: pl.Tensor[[M, N], pl.INT32],
            s: pl.Scalar[pl.INT8],
            y: pl.Out[pl.Tensor[[M, N], pl.INT32]],
        ) -> pl.Tensor[[M, N], pl.INT32]:
            y = self.k(x, s, y)  # INT8 -> INT32, sign-extended
            return y

    compiled = blockpipe.compile(Widen, quiet=True)
    x = np.arange(M * N, dtype=np.int32).reshape(M, N)
    y = np.zeros_like(x)
    compiled(x, -100, y)
    np.testing.assert_array_equal(y, x - 100)
