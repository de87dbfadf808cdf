"""pl.transpose of 2-D tiles against numpy (FP32, FP16, INT32, non-square),
a transposed vector tile as a matmul operand (K^T of attention, through a
pipe), inside an outlined pl.spmd scope, and its errors at the user's line."""

import numpy as np
import pytest

import located

import blockpipe
import blockpipe.language as pl


def rand(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if np.issubdtype(dtype, np.integer):
        return rng.integers(-1000, 1000, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("dtype", [pl.FP32, pl.FP16, pl.INT32])
def test_transpose_matches_numpy(dtype):
    @pl.program
    class T:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[64, 40], dtype], y: pl.Out[pl.Tensor[[40, 64], dtype]]):
            # Two blocks of rows, each transposed into a block of columns.
            r = pl.tile.get_block_idx() * 32
            t = pl.transpose(pl.load(x, [r, 0], [32, 40]), axis1=1, axis2=0)
            return pl.store(t, [0, r], y)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[64, 40], dtype], y: pl.Out[pl.Tensor[[40, 64], dtype]]):
            with pl.spmd(2):
                y = self.k(x, y)
            return y

    x = rand((64, 40), np.dtype(dtype.numpy))
    y = np.zeros((40, 64), x.dtype)
    blockpipe.compile(T)(x, y)
    np.testing.assert_array_equal(y, x.T)


def test_transposed_keys_feed_the_cube():
    """scores = q @ k^T with k loaded as [S, D] and transposed on the vector
    unit, then moved to the cube (vec -> mat -> right)."""

    @pl.program
    class Scores:
        @pl.function(type=pl.FunctionType.InCore)
        def k(
            self,
            q: pl.Tensor[[16, 32], pl.FP32],
            kk: pl.Tensor[[48, 32], pl.FP32],
            s: pl.Out[pl.Tensor[[16, 48], pl.FP32]],
        ):
            kt = pl.transpose(pl.load(kk, [0, 0], [48, 32]), 0, 1)
            return pl.store(pl.matmul(pl.load(q, [0, 0], [16, 32]), kt), [0, 0], s)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            q: pl.Tensor[[16, 32], pl.FP32],
            kk: pl.Tensor[[48, 32], pl.FP32],
            s: pl.Out[pl.Tensor[[16, 48], pl.FP32]],
        ):
            s = self.k(q, kk, s)
            return s

    q, k = rand((16, 32), np.float32, 1), rand((48, 32), np.float32, 2)
    s = np.zeros((16, 48), np.float32)
    compiled = blockpipe.compile(Scores)
    compiled(q, k, s)
    np.testing.assert_allclose(s, q @ k.T, rtol=1e-4, atol=1e-4)
    assert "bp.tpush v2c" in compiled.ir("final")  # the transposed tile crosses to the cube


def test_transpose_in_an_outlined_scope():
    """pypto's bidirectional form: out[m0:m0+16] = ((a + 1) @ b + 1)^T per block."""

    @pl.program
    class Bidirect:
        @pl.function(type=pl.FunctionType.Opaque)
        def main(
            self,
            a: pl.Tensor[[32, 64], pl.FP32],
            b: pl.Tensor[[64, 16], pl.FP32],
            out: pl.Tensor[[32, 16], pl.FP32],
        ) -> pl.Tensor[[32, 16], pl.FP32]:
            for ob in pl.spmd(2):
                m0 = ob * 16
                c = pl.add(pl.matmul(pl.add(pl.slice(a, [16, 64], [m0, 0]), 1.0), b), 1.0)
                out = pl.assemble(out, pl.transpose(c, axis1=0, axis2=1), [m0, 0])
            return out

    a, b = rand((32, 64), np.float32, 3), rand((64, 16), np.float32, 4)
    out = rand((32, 16), np.float32, 5)
    blockpipe.compile(Bidirect)(a, b, out)
    for m0 in (0, 16):
        np.testing.assert_allclose(
            out[m0 : m0 + 16], ((a[m0 : m0 + 16] + 1) @ b + 1).T, rtol=1e-4, atol=1e-4
        )


def same_axes():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
            t = pl.transpose(pl.load(x, [0, 0], [16, 16]), 1, -1)  # error: swaps two different axes
            return pl.store(t, [0, 0], y)

    return P


def one_dimensional():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16], pl.FP32], y: pl.Out[pl.Tensor[[16], pl.FP32]]):
            t = pl.transpose(pl.load(x, [0], [16]))  # error: pl.transpose transposes a 2-D tile
            return pl.store(t, [0], y)

    return P


@pytest.mark.parametrize("factory", [same_axes, one_dimensional])
def test_misuse_is_an_error_at_the_line(factory):
    located.expect_error(factory, lambda p: blockpipe.compile(p, quiet=True))
