"""pl.tile.extract(t, row, col, shape, target_memory=): a window of a Vec
(or Acc) tile, placed in Vec or Mat memory (pypto's TEXTRACT)."""

import numpy as np
import pytest

from located import expect_error

import blockpipe
import blockpipe.language as pl

VEC, MAT, LEFT, RIGHT = pl.Mem.Vec, pl.Mem.Mat, pl.Mem.Left, pl.Mem.Right


@pl.program
class ColumnScale:
    """pypto's column load: a strip transposed on chip, its row 0 extracted
    and reshaped to a column that scales each row of x."""

    @pl.function(type=pl.FunctionType.InCore)
    def kernel(
        self,
        x: pl.Tensor[[16, 32], pl.FP32],
        scale: pl.Tensor[[16, 8], pl.FP32],
        y: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
        window: pl.Out[pl.Tensor[[2, 4], pl.FP32]],
    ):
        strip = pl.load(scale, [0, 0], [16, 8])
        strip_t = pl.transpose(strip, axis1=0, axis2=1)
        row = pl.tile.extract(strip_t, 0, 0, [1, 16], target_memory=VEC)
        col = pl.reshape(row, [16, 1])
        y = pl.store(pl.row_expand_mul(pl.load(x, [0, 0], [16, 32]), col), [0, 0], y)
        inner = pl.tile.extract(strip, 3, 2, [2, 4], target_memory=VEC)
        window = pl.store(inner, [0, 0], window)
        return y, window

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[16, 32], pl.FP32],
        scale: pl.Tensor[[16, 8], pl.FP32],
        y: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
        window: pl.Out[pl.Tensor[[2, 4], pl.FP32]],
    ):
        y, window = self.kernel(x, scale, y, window)
        return y, window


@pl.program
class AccWindow:
    """A window of a matmul's Acc tile, moved to Mat and multiplied again."""

    @pl.function(type=pl.FunctionType.InCore)
    def kernel(
        self,
        a: pl.Tensor[[32, 16], pl.FP32],
        b: pl.Tensor[[16, 32], pl.FP32],
        e: pl.Tensor[[16, 8], pl.FP32],
        out: pl.Out[pl.Tensor[[16, 8], pl.FP32]],
    ):
        acc = pl.matmul(
            pl.load(a, [0, 0], [32, 16], target_memory=MAT),
            pl.load(b, [0, 0], [16, 32], target_memory=MAT),
        )
        part = pl.tile.extract(acc, 16, 8, [16, 16], target_memory=MAT)
        out = pl.store(pl.matmul(part, pl.load(e, [0, 0], [16, 8], target_memory=MAT)), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        a: pl.Tensor[[32, 16], pl.FP32],
        b: pl.Tensor[[16, 32], pl.FP32],
        e: pl.Tensor[[16, 8], pl.FP32],
        out: pl.Out[pl.Tensor[[16, 8], pl.FP32]],
    ):
        out = self.kernel(a, b, e, out)
        return out


@pytest.mark.parametrize("interpret", [False, True], ids=["compiled", "interpreted"])
def test_extract_of_a_vec_tile(monkeypatch, interpret):
    if interpret:
        monkeypatch.setenv("BLOCKPIPE_INTERPRET", "1")
    rng = np.random.default_rng(8)
    x = rng.standard_normal((16, 32)).astype(np.float32)
    scale = rng.standard_normal((16, 8)).astype(np.float32)
    y = np.zeros((16, 32), np.float32)
    window = np.zeros((2, 4), np.float32)
    blockpipe.compile(ColumnScale, quiet=True)(x, scale, y, window)
    np.testing.assert_allclose(y, x * scale[:, :1], rtol=1e-6)
    np.testing.assert_array_equal(window, scale[3:5, 2:6])


def test_extract_of_an_acc_tile_into_mat():
    rng = np.random.default_rng(9)
    a = rng.standard_normal((32, 16)).astype(np.float32)
    b = rng.standard_normal((16, 32)).astype(np.float32)
    e = rng.standard_normal((16, 8)).astype(np.float32)
    out = np.zeros((16, 8), np.float32)
    blockpipe.compile(AccWindow, quiet=True)(a, b, e, out)
    np.testing.assert_allclose(out, (a @ b)[16:32, 8:24] @ e, rtol=1e-4, atol=1e-4)


def test_extract_of_a_mat_tile_is_an_error_at_its_line():
    def program():
        @pl.program
        class MatWindow:
            @pl.function(type=pl.FunctionType.InCore)
            def kernel(
                self,
                a: pl.Tensor[[32, 16], pl.FP32],
                b: pl.Tensor[[16, 16], pl.FP32],
                out: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
            ):
                a_mat = pl.load(a, [0, 0], [32, 16], target_memory=MAT)
                # error: of a Mat tile (into Left or Right memory) it is not supported
                top = pl.tile.extract(a_mat, 0, 0, [16, 16], target_memory=LEFT)
                b_mat = pl.load(b, [0, 0], [16, 16], target_memory=MAT)
                out = pl.store(pl.matmul(top, b_mat), [0, 0], out)
                return out

        return MatWindow

    expect_error(program, lambda p: blockpipe.compile(p, quiet=True))
