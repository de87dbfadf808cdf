"""Tile and tensor windows and reshapes (pl.reshape, pl.slice and
pl.assemble of tiles, x[a:b, ...] subscripts, 3-D tensors), row/column
broadcasts (row_expand_*, col_expand_*, expands), matmul with b_trans= and
a 16-bit out_dtype=, and helpers inlined at their call; against numpy."""

import numpy as np
import pytest

import located
from arrays import DTYPES, data

import blockpipe
import blockpipe.language as pl


def windows(dtype):
    @pl.program
    class Windows:
        @pl.function
        def kernel(
            self,
            x: pl.Tensor[[16, 32], dtype],
            r: pl.Out[pl.Tensor[[32, 16], dtype]],
            s: pl.Out[pl.Tensor[[8, 8], dtype]],
            a: pl.Out[pl.Tensor[[16, 32], dtype]],
        ):
            t = pl.load(x, [0, 0], [16, 32])
            pl.store(pl.reshape(t, [32, 16]), [0, 0], r)
            k = pl.tile.get_block_idx()
            w = pl.slice(t, [8, 8], [4, k * 8 + 8])  # a run-time offset
            pl.store(w, [0, 0], s)
            u = t[0:8, 0:8]  # subscript of a tile
            t2 = pl.assemble(t, u, [8, 24])
            t2[0:8, 0:8] = w
            a[:, :] = t2
            return r, s, a

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            x: pl.Tensor[[16, 32], dtype],
            r: pl.Out[pl.Tensor[[32, 16], dtype]],
            s: pl.Out[pl.Tensor[[8, 8], dtype]],
            a: pl.Out[pl.Tensor[[16, 32], dtype]],
        ):
            return self.kernel(x, r, s, a)

    return Windows


@pytest.mark.parametrize("dtype,np_dtype", DTYPES, ids=lambda d: getattr(d, "name", ""))
def test_reshape_slice_assemble_of_tiles(dtype, np_dtype):
    x = data((16, 32), np_dtype)
    r, s, a = np.zeros((32, 16), np_dtype), np.zeros((8, 8), np_dtype), np.zeros((16, 32), np_dtype)
    blockpipe.compile(windows(dtype), quiet=True)(x, r, s, a)
    np.testing.assert_array_equal(r, x.reshape(32, 16))
    np.testing.assert_array_equal(s, x[4:12, 8:16])
    want = x.copy()
    want[8:16, 24:32] = x[0:8, 0:8]
    want[0:8, 0:8] = x[4:12, 8:16]
    np.testing.assert_array_equal(a, want)


@pl.program
class Batched:
    """Windows of a 3-D tensor by subscripts, one batch row per block."""

    @pl.function
    def kernel(
        self, x: pl.Tensor[[4, 16, 32], pl.FP32], out: pl.Out[pl.Tensor[[4, 16, 32], pl.FP32]]
    ):
        b = pl.tile.get_block_idx()
        t = x[b : b + 1, :, :]
        out[b : b + 1, :, 0:16] = t[:, 16:32] * 2.0
        out[b, :, 16:32] = t[:, 0:16]
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self, x: pl.Tensor[[4, 16, 32], pl.FP32], out: pl.Out[pl.Tensor[[4, 16, 32], pl.FP32]]
    ):
        with pl.spmd(4):
            out = self.kernel(x, out)
        return out


def test_windows_of_a_3d_tensor_by_subscript():
    x = data((4, 16, 32), np.float32)
    out = np.zeros_like(x)
    blockpipe.compile(Batched, quiet=True)(x, out)
    np.testing.assert_array_equal(out, np.concatenate([x[:, :, 16:] * 2, x[:, :, :16]], axis=2))


def expand(dtype):
    @pl.program
    class Expand:
        @pl.function
        def kernel(
            self,
            x: pl.Tensor[[16, 32], dtype],
            rv: pl.Tensor[[16, 1], dtype],
            cv: pl.Tensor[[1, 32], dtype],
            o: pl.Out[pl.Tensor[[8, 16, 32], dtype]],
        ):
            t = pl.load(x, [0, 0], [16, 32])
            r = pl.load(rv, [0, 0], [16, 1])
            c = pl.load(cv, [0, 0], [1, 32])
            o[0, :, :] = pl.row_expand_add(t, r)
            o[1, :, :] = pl.row_expand_sub(t, r)
            o[2, :, :] = pl.row_expand_mul(t, r)
            o[3, :, :] = pl.col_expand_mul(t, c)
            o[4, :, :] = pl.col_expand_sub(t, c)
            o[5, :, :] = pl.row_expand(t, r)
            o[6, :, :] = pl.col_expand(t, c)
            o[7, :, :] = pl.expands(t, 3)
            return o

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            x: pl.Tensor[[16, 32], dtype],
            rv: pl.Tensor[[16, 1], dtype],
            cv: pl.Tensor[[1, 32], dtype],
            o: pl.Out[pl.Tensor[[8, 16, 32], dtype]],
        ):
            return self.kernel(x, rv, cv, o)

    return Expand


@pytest.mark.parametrize("dtype,np_dtype", DTYPES, ids=lambda d: getattr(d, "name", ""))
def test_row_and_column_expansions(dtype, np_dtype):
    x, rv, cv = data((16, 32), np_dtype), data((16, 1), np_dtype, 1), data((1, 32), np_dtype, 2)
    o = np.zeros((8, 16, 32), np_dtype)
    blockpipe.compile(expand(dtype), quiet=True)(x, rv, cv, o)
    want = [
        x + rv,
        x - rv,
        x * rv,
        x * cv,
        x - cv,
        np.broadcast_to(rv, x.shape),
        np.broadcast_to(cv, x.shape),
        np.full(x.shape, 3),
    ]
    for i, w in enumerate(want):
        np.testing.assert_array_equal(o[i], w.astype(np_dtype), err_msg=f"case {i}")


def expand_div_and_expdif():
    @pl.program
    class P:
        @pl.function
        def kernel(
            self,
            x: pl.Tensor[[16, 32], pl.FP32],
            rv: pl.Tensor[[16, 1], pl.FP32],
            o: pl.Out[pl.Tensor[[2, 16, 32], pl.FP32]],
        ):
            t = pl.load(x, [0, 0], [16, 32])
            r = pl.load(rv, [0, 0], [16, 1])
            o[0, :, :] = pl.row_expand_div(t, r)
            o[1, :, :] = pl.row_expand_expdif(t, pl.row_max(t))
            return o

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            x: pl.Tensor[[16, 32], pl.FP32],
            rv: pl.Tensor[[16, 1], pl.FP32],
            o: pl.Out[pl.Tensor[[2, 16, 32], pl.FP32]],
        ):
            return self.kernel(x, rv, o)

    return P


def test_row_expand_div_and_expdif():
    x, rv = data((16, 32), np.float32), data((16, 1), np.float32, 1) + 4.0
    o = np.zeros((2, 16, 32), np.float32)
    blockpipe.compile(expand_div_and_expdif(), quiet=True)(x, rv, o)
    np.testing.assert_allclose(o[0], x / rv, rtol=1e-6)
    np.testing.assert_allclose(o[1], np.exp(x - x.max(axis=1, keepdims=True)), rtol=1e-5)


def matmul_variants(dtype):
    @pl.program
    class Matmuls:
        @pl.function
        def kernel(
            self,
            a: pl.Tensor[[16, 32], dtype],
            b: pl.Tensor[[24, 32], dtype],
            c: pl.Tensor[[32, 24], dtype],
            out: pl.Out[pl.Tensor[[16, 24], pl.FP32]],
            low: pl.Out[pl.Tensor[[16, 24], dtype]],
        ):
            qa = pl.load(a, [0, 0], [16, 32])
            kt = pl.load(b, [0, 0], [24, 32])
            acc = pl.matmul(qa, kt, b_trans=True)  # a @ b^T
            acc = pl.matmul_acc(acc, pl.load(a, [0, 0], [16, 32]), pl.load(c, [0, 0], [32, 24]))
            out = pl.store(acc, [0, 0], out)
            low = pl.store(
                pl.matmul(
                    pl.load(a, [0, 0], [16, 32]), pl.load(c, [0, 0], [32, 24]), out_dtype=dtype
                ),
                [0, 0],
                low,
            )
            return out, low

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            a: pl.Tensor[[16, 32], dtype],
            b: pl.Tensor[[24, 32], dtype],
            c: pl.Tensor[[32, 24], dtype],
            out: pl.Out[pl.Tensor[[16, 24], pl.FP32]],
            low: pl.Out[pl.Tensor[[16, 24], dtype]],
        ):
            return self.kernel(a, b, c, out, low)

    return Matmuls


@pytest.mark.parametrize(
    "dtype,np_dtype", [(pl.FP16, np.float16), (pl.BF16, None)], ids=["FP16", "BF16"]
)
def test_matmul_b_trans_and_16_bit_out_dtype(dtype, np_dtype):
    if np_dtype is None:
        import ml_dtypes

        np_dtype = ml_dtypes.bfloat16
    a, b, c = (
        data(s, np.float32, i).astype(np_dtype)
        for i, s in enumerate([(16, 32), (24, 32), (32, 24)])
    )
    out, low = np.zeros((16, 24), np.float32), np.zeros((16, 24), np_dtype)
    blockpipe.compile(matmul_variants(dtype), quiet=True)(a, b, c, out, low)
    a64, b64, c64 = (v.astype(np.float64) for v in (a, b, c))
    np.testing.assert_allclose(out, a64 @ b64.T + a64 @ c64, rtol=1e-4, atol=1e-4)
    # The FP32 sum rounded once to the 16-bit type.
    np.testing.assert_array_equal(low, (a64 @ c64).astype(np.float32).astype(np_dtype))


def scale(t, factor):
    """A plain helper: inlined where it is called."""
    doubled = t * factor
    return doubled + t


@pl.inline
def add_and_max(a, b):
    return a + b, pl.maximum(a, b)


def rows(n):
    return n // 2


@pl.program
class Helpers:
    @pl.function
    def kernel(self, x: pl.Tensor[[16, 32], pl.FP32], o: pl.Out[pl.Tensor[[3, 8, 32], pl.FP32]]):
        t = pl.load(x, [0, 0], [rows(16), 32])
        s = scale(t, 2.0)
        p, m = add_and_max(s, t)
        o[0, :, :] = s
        o[1, :, :] = p
        o[2, :, :] = m
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32], o: pl.Out[pl.Tensor[[3, 8, 32], pl.FP32]]):
        return self.kernel(x, o)


def test_helpers_are_inlined():
    x = data((16, 32), np.float32)
    o = np.zeros((3, 8, 32), np.float32)
    blockpipe.compile(Helpers, quiet=True)(x, o)
    t = x[:8]
    s = t * 2 + t
    np.testing.assert_allclose(o[0], s, rtol=1e-6)
    np.testing.assert_allclose(o[1], s + t, rtol=1e-6)
    np.testing.assert_allclose(o[2], np.maximum(s, t), rtol=1e-6)


def bad_slice():
    @pl.program
    class P:
        @pl.function
        def kernel(self, a: pl.Tensor[[16, 16], pl.FP32], o: pl.Out[pl.Tensor[[8, 8], pl.FP32]]):
            t = pl.load(a, [0, 0], [16, 16])
            # error: outside the tile's size 16
            return pl.store(pl.slice(t, [8, 8], [0, 12]), [0, 0], o)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], o: pl.Out[pl.Tensor[[8, 8], pl.FP32]]):
            return self.kernel(a, o)

    return P


def bad_reshape():
    @pl.program
    class P:
        @pl.function
        def kernel(self, a: pl.Tensor[[16, 16], pl.FP32], o: pl.Out[pl.Tensor[[8, 16], pl.FP32]]):
            t = pl.load(a, [0, 0], [16, 16])
            # error: cannot make [8, 16] (128 elements)
            return pl.store(pl.reshape(t, [8, 16]), [0, 0], o)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], o: pl.Out[pl.Tensor[[8, 16], pl.FP32]]):
            return self.kernel(a, o)

    return P


def bad_row_vector():
    @pl.program
    class P:
        @pl.function
        def kernel(self, a: pl.Tensor[[16, 16], pl.FP32], o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
            t = pl.load(a, [0, 0], [16, 16])
            # error: row vector must be [16, 1]
            return pl.store(pl.row_expand_mul(t, t[0:1, :]), [0, 0], o)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
            return self.kernel(a, o)

    return P


def bad_window_size():
    @pl.program
    class P:
        @pl.function
        def kernel(self, a: pl.Tensor[[16, 16], pl.FP32], o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
            k = pl.tile.get_block_idx()
            # error: a window's size must be a positive number known at compile time
            t = a[k : k * 2, :]
            return pl.store(t, [0, 0], o)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
            return self.kernel(a, o)

    return P


def bad_matmul_out_dtype():
    @pl.program
    class P:
        @pl.function
        def kernel(self, a: pl.Tensor[[16, 16], pl.FP32], o: pl.Out[pl.Tensor[[16, 16], pl.INT32]]):
            t = pl.matmul(
                pl.load(a, [0, 0], [16, 16]),
                pl.load(a, [0, 0], [16, 16]),
                # error: its result is FP32, or FP16/BF16 for float operands
                out_dtype=pl.INT32,
            )
            return pl.store(t, [0, 0], o)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], o: pl.Out[pl.Tensor[[16, 16], pl.INT32]]):
            return self.kernel(a, o)

    return P


def broken_helper(t):
    return pl.reshape(t, [3, 5])  # error: cannot make [3, 5]


def bad_helper():
    @pl.program
    class P:
        @pl.function
        def kernel(self, a: pl.Tensor[[16, 16], pl.FP32], o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
            return pl.store(broken_helper(pl.load(a, [0, 0], [16, 16])), [0, 0], o)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
            return self.kernel(a, o)

    return P


def too_many_live_tiles():
    @pl.program
    class P:
        @pl.function
        def kernel(
            self, x: pl.Tensor[[128, 384], pl.FP32], o: pl.Out[pl.Tensor[[128, 128], pl.FP32]]
        ):
            a = pl.load(x, [0, 0], [128, 128])
            b = pl.load(x, [0, 128], [128, 128])
            c = pl.load(x, [0, 256], [128, 128])
            s = a + b  # error: the 4 tiles in vec memory live here need 262144 bytes together
            return pl.store(s + c + a, [0, 0], o)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self, x: pl.Tensor[[128, 384], pl.FP32], o: pl.Out[pl.Tensor[[128, 128], pl.FP32]]
        ):
            return self.kernel(x, o)

    return P


@pytest.mark.parametrize(
    "factory",
    [
        bad_slice,
        bad_reshape,
        bad_row_vector,
        bad_window_size,
        bad_matmul_out_dtype,
        too_many_live_tiles,
    ],
)
def test_misuse_is_an_error_at_the_line(factory):
    located.expect_error(factory, lambda p: blockpipe.compile(p, quiet=True))


def test_an_error_in_a_helper_names_the_helpers_line_and_the_call():
    import inspect

    from blockpipe import CompileError

    with pytest.raises(CompileError) as info:
        blockpipe.compile(bad_helper(), quiet=True)
    err = info.value
    lines, first = inspect.getsourcelines(broken_helper)
    assert (err.file, err.line) == (__file__, first + 1), str(err)
    assert "cannot make [3, 5]" in err.message and "in 'broken_helper', inlined at" in err.message
