"""Comparisons, selection, triangular masks and the remaining reductions
(row_min, col_sum, col_max), against numpy; and attention with a causal mask
(QK^T, mask, softmax, PV) over several blocks."""

import numpy as np
import pytest

import located
from arrays import DTYPES, data

import blockpipe
import blockpipe.language as pl


def reductions(dtype):
    @pl.program
    class Reductions:
        @pl.function
        def kernel(
            self,
            x: pl.Tensor[[16, 32], dtype],
            mn: pl.Out[pl.Tensor[[16, 1], dtype]],
            cs: pl.Out[pl.Tensor[[1, 32], dtype]],
            cm: pl.Out[pl.Tensor[[1, 32], dtype]],
        ):
            t = pl.load(x, [0, 0], [16, 32])
            pl.store(pl.row_min(t), [0, 0], mn)
            pl.store(pl.col_sum(t), [0, 0], cs)
            pl.store(pl.col_max(t), [0, 0], cm)
            return mn, cs, cm

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            x: pl.Tensor[[16, 32], dtype],
            mn: pl.Out[pl.Tensor[[16, 1], dtype]],
            cs: pl.Out[pl.Tensor[[1, 32], dtype]],
            cm: pl.Out[pl.Tensor[[1, 32], dtype]],
        ):
            mn, cs, cm = self.kernel(x, mn, cs, cm)
            return mn, cs, cm

    return Reductions


@pytest.mark.parametrize("dtype,np_dtype", DTYPES, ids=lambda d: getattr(d, "name", ""))
def test_row_min_col_sum_col_max(dtype, np_dtype):
    x = data((16, 32), np_dtype)
    mn = np.zeros((16, 1), np_dtype)
    cs, cm = np.zeros((1, 32), np_dtype), np.zeros((1, 32), np_dtype)
    blockpipe.compile(reductions(dtype), quiet=True)(x, mn, cs, cm)
    np.testing.assert_array_equal(mn, x.min(axis=1, keepdims=True))
    np.testing.assert_array_equal(cm, x.max(axis=0, keepdims=True))
    tol = 1e-2 if np_dtype == np.float16 else 1e-5
    np.testing.assert_allclose(
        cs.astype(np.float64),
        x.astype(np.float64).sum(axis=0, keepdims=True),
        rtol=tol,
        atol=tol * 10,
    )


def comparisons(dtype, cmp_type):
    @pl.program
    class Comparisons:
        @pl.function
        def kernel(
            self,
            a: pl.Tensor[[16, 16], dtype],
            b: pl.Tensor[[16, 16], dtype],
            m: pl.Out[pl.Tensor[[16, 16], dtype]],
            s: pl.Out[pl.Tensor[[16, 16], dtype]],
        ):
            ta = pl.load(a, [0, 0], [16, 16])
            tb = pl.load(b, [0, 0], [16, 16])
            mask = pl.cmp(ta, tb, cmp_type=cmp_type)
            pl.store(mask, [0, 0], m)
            # Where a > 0, a; elsewhere b + b.
            pl.store(pl.where(pl.cmp(ta, 0, cmp_type=4), ta, pl.add(tb, tb)), [0, 0], s)
            return m, s

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            a: pl.Tensor[[16, 16], dtype],
            b: pl.Tensor[[16, 16], dtype],
            m: pl.Out[pl.Tensor[[16, 16], dtype]],
            s: pl.Out[pl.Tensor[[16, 16], dtype]],
        ):
            m, s = self.kernel(a, b, m, s)
            return m, s

    return Comparisons


NUMPY_CMP = [np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal]


@pytest.mark.parametrize("cmp_type", range(6))
@pytest.mark.parametrize(
    "dtype,np_dtype", [DTYPES[0], DTYPES[2]], ids=lambda d: getattr(d, "name", "")
)
def test_cmp_and_where(dtype, np_dtype, cmp_type):
    a, b = data((16, 16), np_dtype), data((16, 16), np_dtype, seed=1)
    b[::3] = a[::3]  # some equal elements
    m, s = np.zeros_like(a), np.zeros_like(a)
    blockpipe.compile(comparisons(dtype, cmp_type), quiet=True)(a, b, m, s)
    np.testing.assert_array_equal(m, NUMPY_CMP[cmp_type](a, b).astype(np_dtype))
    np.testing.assert_array_equal(s, np.where(a > 0, a, b + b))


@pl.program
class Triangles:
    """Masks whose diagonal comes from the block index; the UP_DOWN kernel
    builds each half of its tile on its own sub-block."""

    @pl.function
    def lower(self, out: pl.Out[pl.Tensor[[32, 24], pl.FP32]]):
        b = pl.tile.get_block_idx()
        pl.store(pl.tile.tri(b * 16 - 4, [16, 24], dtype=pl.FP32), [b * 16, 0], out)
        return out

    @pl.function
    def upper(self, out: pl.Out[pl.Tensor[[16, 16], pl.INT32]]):
        pl.store(pl.tile.tri(2, [16, 16], upper=True), [0, 0], out)
        return out

    @pl.function(attrs={"split": pl.SplitMode.UP_DOWN})
    def halves(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
        t = pl.load(x, [0, 0], [16, 16])
        pl.store(pl.where(pl.tile.tri(0, [16, 16], dtype=pl.FP32), t, -1.0), [0, 0], out)
        return out

    @pl.function(attrs={"split": pl.SplitMode.LEFT_RIGHT})
    def columns(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
        t = pl.load(x, [0, 0], [16, 16])
        pl.store(pl.where(pl.tile.tri(1, [16, 16], dtype=pl.FP32), t, -1.0), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[16, 16], pl.FP32],
        lo: pl.Out[pl.Tensor[[32, 24], pl.FP32]],
        up: pl.Out[pl.Tensor[[16, 16], pl.INT32]],
        h: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
        c: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
    ):
        for i in pl.spmd(2):
            lo = self.lower(lo)
        up = self.upper(up)
        h = self.halves(x, h)
        c = self.columns(x, c)
        return lo, up, h, c


def test_triangular_masks():
    x = data((16, 16), np.float32)
    lo, up = np.zeros((32, 24), np.float32), np.zeros((16, 16), np.int32)
    h, c = np.zeros((16, 16), np.float32), np.zeros((16, 16), np.float32)
    blockpipe.compile(Triangles, quiet=True)(x, lo, up, h, c)
    np.testing.assert_array_equal(lo, np.tri(32, 24, -4, dtype=np.float32))
    np.testing.assert_array_equal(up, np.triu(np.ones((16, 16), np.int32), 2))
    np.testing.assert_array_equal(h, np.where(np.tri(16, 16, 0) > 0, x, -1.0))
    np.testing.assert_array_equal(c, np.where(np.tri(16, 16, 1) > 0, x, -1.0))


S, D, BQ = 64, 32, 16


@pl.program
class CausalAttention:
    """softmax(mask(Q K^T / sqrt(D))) V, one block per 16 query rows: block b
    sees keys 0 .. 16b + 15 (the mask's diagonal is its first query row)."""

    @pl.function
    def attention(
        self,
        q: pl.Tensor[[S, D], pl.FP32],
        k: pl.Tensor[[S, D], pl.FP32],
        v: pl.Tensor[[S, D], pl.FP32],
        out: pl.Out[pl.Tensor[[S, D], pl.FP32]],
    ):
        q0 = pl.tile.get_block_idx() * BQ
        qt = pl.load(q, [q0, 0], [BQ, D])
        kt = pl.transpose(pl.load(k, [0, 0], [S, D]), 0, 1)
        scores = pl.mul(pl.matmul(qt, kt), 1.0 / (D**0.5))
        masked = pl.where(pl.tile.tri(q0, [BQ, S], dtype=pl.FP32), scores, -1e30)
        e = pl.exp(pl.sub(masked, pl.row_max(masked)))
        p = pl.div(e, pl.row_sum(e))
        pl.store(pl.matmul(p, pl.load(v, [0, 0], [S, D])), [q0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        q: pl.Tensor[[S, D], pl.FP32],
        k: pl.Tensor[[S, D], pl.FP32],
        v: pl.Tensor[[S, D], pl.FP32],
        out: pl.Out[pl.Tensor[[S, D], pl.FP32]],
    ):
        for i in pl.spmd(S // BQ):
            out = self.attention(q, k, v, out)
        return out


def test_causal_attention_over_blocks():
    q, k, v = (data((S, D), np.float32, seed=s) for s in range(3))
    out = np.zeros((S, D), np.float32)
    blockpipe.compile(CausalAttention, quiet=True)(q, k, v, out)
    scores = q @ k.T / np.sqrt(D)
    scores = np.where(np.tri(S, S) > 0, scores, -np.inf)
    p = np.exp(scores - scores.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(out, p @ v, rtol=1e-4, atol=1e-4)


@pl.program
class PyptoSpellings:
    """pypto's tile-level spellings: cmps with a scalar, sel with a scratch
    tile, sels with a scalar."""

    @pl.function
    def kernel(
        self,
        a: pl.Tensor[[16, 16], pl.FP32],
        b: pl.Tensor[[16, 16], pl.FP32],
        o: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
        p: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
    ):
        ta = pl.load(a, [0, 0], [16, 16])
        tb = pl.load(b, [0, 0], [16, 16])
        m = pl.tile.cmps(ta, 0.5, cmp_type=3)
        pl.store(pl.tile.sel(m, ta, tb, tb), [0, 0], o)
        pl.store(pl.tile.sels(pl.tile.cmp(ta, tb, cmp_type=5), ta, tb, -2.0), [0, 0], p)
        return o, p

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        a: pl.Tensor[[16, 16], pl.FP32],
        b: pl.Tensor[[16, 16], pl.FP32],
        o: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
        p: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
    ):
        o, p = self.kernel(a, b, o, p)
        return o, p


def test_pypto_spellings():
    a, b = data((16, 16), np.float32), data((16, 16), np.float32, seed=1)
    o, p = np.zeros_like(a), np.zeros_like(a)
    blockpipe.compile(PyptoSpellings, quiet=True)(a, b, o, p)
    np.testing.assert_array_equal(o, np.where(a <= 0.5, a, b))
    np.testing.assert_array_equal(p, np.where(a >= b, a, -2.0))


def bad_cmp_type():
    @pl.program
    class P:
        @pl.function
        def kernel(self, a: pl.Tensor[[16, 16], pl.FP32], o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
            t = pl.load(a, [0, 0], [16, 16])
            return pl.store(pl.cmp(t, t, cmp_type=9), [0, 0], o)  # error: cmp_type must be 0 (EQ)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
            return self.kernel(a, o)

    return P


def mask_shape():
    @pl.program
    class P:
        @pl.function
        def kernel(self, a: pl.Tensor[[16, 16], pl.FP32], o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
            t = pl.load(a, [0, 0], [16, 16])
            m = pl.tile.tri(0, [8, 16], dtype=pl.FP32)
            # error: the mask is [8, 16] but the tiles are [16, 16]
            return pl.store(pl.where(m, t, 0.0), [0, 0], o)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
            return self.kernel(a, o)

    return P


@pytest.mark.parametrize("factory", [bad_cmp_type, mask_shape])
def test_misuse_is_an_error_at_the_line(factory):
    located.expect_error(factory, lambda p: blockpipe.compile(p, quiet=True))
