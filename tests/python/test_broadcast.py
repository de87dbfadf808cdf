"""Column broadcast: a 1xN tile (a gamma or bias vector) as the second
operand of pl.add/sub/mul/div/maximum/minimum over an MxN tile applies its
column j to every row's column j, next to the Mx1 row broadcast. Run on the
simulator and compared with numpy; a shape that is neither is a clean
CompileError at the user's line."""

import numpy as np
import pytest

import located

import blockpipe
import blockpipe.language as pl


def build(program):
    return blockpipe.compile(program, quiet=True)


def expect_error(program_factory):
    return located.expect_error(program_factory, build)


ROWS, COLS, BLOCK = 64, 48, 16
EPS = 1e-6


@pl.program
class RMSNorm:
    """y = x / sqrt(mean(x * x) + eps) * gamma, gamma 1xN; the row mean an
    Mx1 tile, the gamma a 1xN one, both broadcast back over the block."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self,
        x: pl.Tensor[[ROWS, COLS], pl.FP32],
        g: pl.Tensor[[1, COLS], pl.FP32],
        y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]],
    ):
        r = pl.tile.get_block_idx() * BLOCK
        t = pl.load(x, [r, 0], [BLOCK, COLS])
        gamma = pl.load(g, [0, 0], [1, COLS])
        ms = pl.mul(pl.row_sum(pl.mul(t, t)), 1.0 / COLS)
        rstd = pl.div(1.0, pl.sqrt(pl.add(ms, EPS)))
        return pl.store(pl.mul(pl.mul(t, rstd), gamma), [r, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[ROWS, COLS], pl.FP32],
        g: pl.Tensor[[1, COLS], pl.FP32],
        y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]],
    ):
        with pl.spmd(ROWS // BLOCK):
            y = self.k(x, g, y)
        return y


def rms_norm(x, gamma):
    return x / np.sqrt((x * x).mean(axis=1, keepdims=True) + EPS) * gamma


def test_rms_norm_with_a_gamma_vector():
    rng = np.random.default_rng(21)
    x = rng.standard_normal((ROWS, COLS), dtype=np.float32) * 2 + 0.5
    g = rng.standard_normal((1, COLS), dtype=np.float32)
    y = np.zeros_like(x)
    build(RMSNorm)(x, g, y)
    np.testing.assert_allclose(y, rms_norm(x, g), rtol=1e-5, atol=1e-5)


@pl.program
class ColumnOps:
    """Every binary op with a 1xN second operand on FP16 and FP32 tiles, the
    operator forms, a scalar on the left, and gamma written first (an Mx1
    tile too); one 24-row block of y per result."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self,
        x: pl.Tensor[[24, 40], pl.FP16],
        v: pl.Tensor[[1, 40], pl.FP16],
        y: pl.Out[pl.Tensor[[9 * 24, 40], pl.FP32]],
    ):
        t = pl.load(x, [0, 0], [24, 40])
        g = pl.load(v, [0, 0], [1, 40])
        f = pl.cast(t, pl.FP32)
        gf = pl.cast(g, pl.FP32)
        y = pl.store(pl.cast(pl.add(t, g), pl.FP32), [0, 0], y)
        y = pl.store(pl.cast(pl.sub(t, g), pl.FP32), [24, 0], y)
        y = pl.store(pl.div(f, gf), [48, 0], y)
        y = pl.store(pl.maximum(f, gf), [72, 0], y)
        y = pl.store(pl.minimum(f, gf), [96, 0], y)
        y = pl.store(gf * f - gf, [120, 0], y)  # gamma first; 1xN - 1xN
        y = pl.store(2.0 - pl.add(gf, f), [144, 0], y)  # scalar on the left
        y = pl.store(1.0 / (f * gf), [168, 0], y)
        y = pl.store(pl.mul(pl.row_max(f), f), [192, 0], y)  # Mx1 first
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[24, 40], pl.FP16],
        v: pl.Tensor[[1, 40], pl.FP16],
        y: pl.Out[pl.Tensor[[9 * 24, 40], pl.FP32]],
    ):
        y = self.k(x, v, y)
        return y


def test_every_binary_op_with_a_column_vector():
    rng = np.random.default_rng(22)
    x = rng.standard_normal((24, 40)).astype(np.float16)
    v = (rng.uniform(0.5, 2, (1, 40)) * rng.choice([-1, 1], (1, 40))).astype(np.float16)
    y = np.zeros((9 * 24, 40), np.float32)
    build(ColumnOps)(x, v, y)
    y = y.reshape(9, 24, 40)
    f, g = x.astype(np.float32), v.astype(np.float32)
    half = lambda a: a.astype(np.float16).astype(np.float32)  # noqa: E731 - a one-line local helper
    np.testing.assert_array_equal(y[0], half(f + g))
    np.testing.assert_array_equal(y[1], half(f - g))
    np.testing.assert_allclose(y[2], f / g, rtol=1e-6)
    np.testing.assert_array_equal(y[3], np.maximum(f, g))
    np.testing.assert_array_equal(y[4], np.minimum(f, g))
    np.testing.assert_allclose(y[5], g * f - g, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(y[6], 2.0 - (g + f), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(y[7], 1.0 / (f * g), rtol=1e-5)
    np.testing.assert_allclose(y[8], f.max(axis=1, keepdims=True) * f, rtol=1e-6)


@pl.program
class Bf16Gamma:
    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self,
        x: pl.Tensor[[32, 24], pl.BF16],
        v: pl.Tensor[[1, 24], pl.BF16],
        y: pl.Out[pl.Tensor[[32, 24], pl.BF16]],
    ):
        row = pl.tile.get_block_idx() * 16
        t = pl.mul(pl.load(x, [row, 0], [16, 24]), pl.load(v, [0, 0], [1, 24]))
        return pl.store(t, [row, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[32, 24], pl.BF16],
        v: pl.Tensor[[1, 24], pl.BF16],
        y: pl.Out[pl.Tensor[[32, 24], pl.BF16]],
    ):
        with pl.spmd(2):
            y = self.k(x, v, y)
        return y


def test_bf16_times_a_bf16_gamma():
    bf16 = pytest.importorskip("ml_dtypes").bfloat16
    rng = np.random.default_rng(24)
    x = rng.standard_normal((32, 24)).astype(bf16)
    v = rng.standard_normal((1, 24)).astype(bf16)
    y = np.zeros((32, 24), bf16)
    build(Bf16Gamma)(x, v, y)
    want = (x.astype(np.float32) * v.astype(np.float32)).astype(bf16)
    np.testing.assert_array_equal(y.astype(np.float32), want.astype(np.float32))


@pl.program
class MatmulTimesGamma:
    """A mixed kernel: the matmul result (cube) times a gamma loaded on the
    vector side, plus a 1xN bias that is itself a matmul result (ones(1, K)
    @ w, the column sums of w) crossing from the cube to the vector half."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self,
        x: pl.Tensor[[32, 32], pl.FP16],
        w: pl.Tensor[[32, 24], pl.FP16],
        ones: pl.Tensor[[1, 32], pl.FP16],
        g: pl.Tensor[[1, 24], pl.FP32],
        y: pl.Out[pl.Tensor[[32, 24], pl.FP32]],
    ):
        row = pl.tile.get_block_idx() * 16
        b = pl.load(w, [0, 0], [32, 24])
        acc = pl.matmul(pl.load(x, [row, 0], [16, 32]), b)
        colsum = pl.matmul(pl.load(ones, [0, 0], [1, 32]), b)
        gamma = pl.load(g, [0, 0], [1, 24])
        return pl.store(pl.add(pl.mul(acc, gamma), colsum), [row, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[32, 32], pl.FP16],
        w: pl.Tensor[[32, 24], pl.FP16],
        ones: pl.Tensor[[1, 32], pl.FP16],
        g: pl.Tensor[[1, 24], pl.FP32],
        y: pl.Out[pl.Tensor[[32, 24], pl.FP32]],
    ):
        with pl.spmd(2):
            y = self.k(x, w, ones, g, y)
        return y


def test_matmul_result_times_gamma_in_a_mixed_kernel():
    rng = np.random.default_rng(23)
    x = rng.standard_normal((32, 32)).astype(np.float16)
    w = (rng.standard_normal((32, 24)) * 0.3).astype(np.float16)
    ones = np.ones((1, 32), np.float16)
    g = rng.standard_normal((1, 24), dtype=np.float32)
    y = np.zeros((32, 24), np.float32)
    build(MatmulTimesGamma)(x, w, ones, g, y)
    wf = w.astype(np.float32)
    expected = (x.astype(np.float32) @ wf) * g + wf.sum(axis=0, keepdims=True)
    np.testing.assert_allclose(y, expected, rtol=1e-3, atol=1e-3)


def test_gamma_of_the_wrong_width():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(
                self,
                x: pl.Tensor[[16, 32], pl.FP32],
                g: pl.Tensor[[1, 33], pl.FP32],
                y: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
            ):
                t = pl.load(x, [0, 0], [16, 32])
                gamma = pl.load(g, [0, 0], [1, 33])
                # error: pl.mul operand shapes differ: [16, 32] and [1, 33]; the second operand may also be [16, 1] (broadcast along rows) or [1, 32] (broadcast along columns)
                z = pl.mul(t, gamma)
                return pl.store(z, [0, 0], y)

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(
                self,
                x: pl.Tensor[[16, 32], pl.FP32],
                g: pl.Tensor[[1, 33], pl.FP32],
                y: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
            ):
                y = self.k(x, g, y)
                return y

        return P

    expect_error(make)


@pl.program
class BroadcastFirst:
    """The broadcast operand first in non-commutative ops: gamma - x,
    row_sum(x) / x, row_max(x) - x."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self,
        x: pl.Tensor[[16, 32], pl.FP32],
        g: pl.Tensor[[1, 32], pl.FP32],
        y: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
        z: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
        w: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
    ):
        t = pl.load(x, [0, 0], [16, 32])
        gamma = pl.load(g, [0, 0], [1, 32])
        pl.store(pl.sub(gamma, t), [0, 0], y)
        pl.store(pl.row_sum(t) / t, [0, 0], z)
        pl.store(pl.row_max(t) - t, [0, 0], w)
        return y, z, w

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[16, 32], pl.FP32],
        g: pl.Tensor[[1, 32], pl.FP32],
        y: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
        z: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
        w: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
    ):
        y, z, w = self.k(x, g, y, z, w)
        return y, z, w


def test_broadcast_operand_first_in_a_non_commutative_op():
    rng = np.random.default_rng(3)
    x = (rng.random((16, 32)) + 0.5).astype(np.float32)
    g = rng.standard_normal((1, 32)).astype(np.float32)
    y, z, w = (np.zeros_like(x) for _ in range(3))
    build(BroadcastFirst)(x, g, y, z, w)
    np.testing.assert_array_equal(y, g - x)
    np.testing.assert_allclose(z, x.sum(axis=1, keepdims=True) / x, rtol=1e-5)
    np.testing.assert_array_equal(w, x.max(axis=1, keepdims=True) - x)


def test_a_first_operand_that_does_not_broadcast():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(
                self,
                x: pl.Tensor[[16, 32], pl.FP32],
                g: pl.Tensor[[1, 33], pl.FP32],
                y: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
            ):
                t = pl.load(x, [0, 0], [16, 32])
                gamma = pl.load(g, [0, 0], [1, 33])
                z = pl.sub(gamma, t)  # error: pl.sub operand shapes differ: [1, 33] and [16, 32]
                return pl.store(z, [0, 0], y)

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(
                self,
                x: pl.Tensor[[16, 32], pl.FP32],
                g: pl.Tensor[[1, 33], pl.FP32],
                y: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
            ):
                y = self.k(x, g, y)
                return y

        return P

    expect_error(make)
