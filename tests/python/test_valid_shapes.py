"""Valid shapes (tiles holding data in their leading rows and columns only)
and scalar reads of tensors, against numpy: loads at a tensor's edge, stores
of the valid region only, reductions, matmuls and pl.fillpad over it, its
halves on the two AIV sub-blocks of a split kernel, and the errors."""

import numpy as np
import pytest

import located
from arrays import DTYPES, data

import blockpipe
import blockpipe.language as pl

SENTINEL = 77


def edge_rows(dtype):
    """40 rows in tiles of 16: the last block's tile holds 8."""

    @pl.program
    class EdgeRows:
        @pl.function
        def kernel(self, x: pl.Tensor[[40, 32], dtype], y: pl.Out[pl.Tensor[[40, 32], dtype]]):
            r = pl.tile.get_block_idx() * 16
            rows = min(40 - r, 16)
            t = pl.load(x, [r, 0], [16, 32], valid_shape=[rows, 32])
            y = pl.store(pl.add(t, t), [r, 0], y)
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[40, 32], dtype], y: pl.Out[pl.Tensor[[40, 32], dtype]]):
            with pl.spmd(3):
                y = self.kernel(x, y)
            return y

    return EdgeRows


@pytest.mark.parametrize("dtype,np_dtype", DTYPES, ids=lambda d: getattr(d, "name", ""))
def test_a_load_at_the_edge_reads_and_writes_only_the_valid_rows(dtype, np_dtype):
    x = data((40, 32), np_dtype)
    y = np.zeros((40, 32), np_dtype)
    blockpipe.compile(edge_rows(dtype), quiet=True)(x, y)
    np.testing.assert_array_equal(y, x + x)


def reductions(dtype):
    @pl.program
    class Reductions:
        @pl.function
        def kernel(
            self,
            x: pl.Tensor[[16, 32], dtype],
            n: pl.Scalar[pl.INDEX],
            s: pl.Out[pl.Tensor[[16, 1], dtype]],
            hi: pl.Out[pl.Tensor[[16, 1], dtype]],
            lo: pl.Out[pl.Tensor[[16, 1], dtype]],
            c: pl.Out[pl.Tensor[[1, 32], dtype]],
            whole: pl.Out[pl.Tensor[[16, 32], dtype]],
        ):
            t = pl.tile.set_validshape(pl.load(x, [0, 0], [16, 32]), 12, n)
            s = pl.store(pl.row_sum(t), [0, 0], s)  # 12 valid rows of 1
            hi = pl.store(pl.row_max(t), [0, 0], hi)
            lo = pl.store(pl.row_min(t), [0, 0], lo)
            c = pl.store(pl.col_max(t), [0, 0], c)  # 1 row of n valid columns
            whole = pl.store(pl.fillpad(t, pl.PadValue.min), [0, 0], whole)
            return s, hi, lo, c, whole

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            x: pl.Tensor[[16, 32], dtype],
            n: pl.Scalar[pl.INDEX],
            s: pl.Out[pl.Tensor[[16, 1], dtype]],
            hi: pl.Out[pl.Tensor[[16, 1], dtype]],
            lo: pl.Out[pl.Tensor[[16, 1], dtype]],
            c: pl.Out[pl.Tensor[[1, 32], dtype]],
            whole: pl.Out[pl.Tensor[[16, 32], dtype]],
        ):
            return self.kernel(x, n, s, hi, lo, c, whole)

    return Reductions


@pytest.mark.parametrize("dtype,np_dtype", DTYPES, ids=lambda d: getattr(d, "name", ""))
def test_reductions_and_fillpad_see_only_the_valid_region(dtype, np_dtype):
    x = data((16, 32), np_dtype)
    n = 5
    outs = [
        np.full(shape, SENTINEL, np_dtype)
        for shape in ((16, 1), (16, 1), (16, 1), (1, 32), (16, 32))
    ]
    blockpipe.compile(reductions(dtype), quiet=True)(x, n, *outs)
    s, hi, lo, c, whole = outs
    v = x[:12, :n]
    if np.issubdtype(np_dtype, np.integer):
        np.testing.assert_array_equal(s[:12, 0], v.sum(axis=1))
    else:
        np.testing.assert_allclose(
            s[:12, 0].astype(np.float32), v.astype(np.float32).sum(axis=1), rtol=1e-2, atol=1e-2
        )
    np.testing.assert_array_equal(hi[:12, 0], v.max(axis=1))
    np.testing.assert_array_equal(lo[:12, 0], v.min(axis=1))
    np.testing.assert_array_equal(c[0, :n], v.max(axis=0))
    for out in (s, hi, lo):
        assert (out[12:] == SENTINEL).all()  # rows outside: left as they were
    assert (c[0, n:] == SENTINEL).all()
    lowest = -np.inf if not np.issubdtype(np_dtype, np.integer) else np.iinfo(np_dtype).min
    want = np.full((16, 32), lowest, np_dtype)
    want[:12, :n] = v
    np.testing.assert_array_equal(whole, want)  # fillpad: all of it valid


@pl.program
class ValidK:
    """A matmul over a K the tensors hold only in part: 24 of 32 rows of w,
    read with pl.slice(valid_shape=), the rest zero."""

    @pl.function
    def kernel(
        self,
        x: pl.Tensor[[16, 32], pl.FP32],
        w: pl.Tensor[[24, 16], pl.FP32],
        y: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
    ):
        a = pl.tile.set_validshape(pl.load(x, [0, 0], [16, 32]), 16, 24)
        b = pl.slice(w, [32, 16], [0, 0], valid_shape=[24, 16])
        y = pl.store(pl.matmul(a, b), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[16, 32], pl.FP32],
        w: pl.Tensor[[24, 16], pl.FP32],
        y: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
    ):
        return self.kernel(x, w, y)


def test_a_matmul_multiplies_only_the_valid_k():
    x, w = data((16, 32), np.float32), data((24, 16), np.float32, seed=1)
    x[:, 24:] = np.nan  # outside the valid shape: never used
    y = np.zeros((16, 16), np.float32)
    blockpipe.compile(ValidK, quiet=True)(x, w, y)
    np.testing.assert_allclose(y, x[:, :24] @ w, rtol=1e-4, atol=1e-4)


@pl.program
class SplitValid:
    """A pushed Acc tile, popped with a run-time valid shape on both AIV
    sub-blocks of a split UP_DOWN kernel (each takes its half of the valid
    rows)."""

    @pl.function(type=pl.FunctionType.AIC, attrs={"split": pl.SplitMode.UP_DOWN})
    def cube(
        self,
        a: pl.Tensor[[16, 16], pl.FP32],
        b: pl.Tensor[[16, 16], pl.FP32],
        y: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
        rows: pl.Scalar[pl.INDEX],
        cols: pl.Scalar[pl.INDEX],
    ):
        pl.aic_initialize_pipe(dir_mask=1, slot_size=1024)
        pl.tpush_to_aiv(
            pl.matmul(pl.load(a, [0, 0], [16, 16]), pl.load(b, [0, 0], [16, 16])), split=1
        )

    @pl.function(type=pl.FunctionType.AIV, attrs={"split": pl.SplitMode.UP_DOWN})
    def vector(
        self,
        a: pl.Tensor[[16, 16], pl.FP32],
        b: pl.Tensor[[16, 16], pl.FP32],
        y: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
        rows: pl.Scalar[pl.INDEX],
        cols: pl.Scalar[pl.INDEX],
    ):
        pl.aiv_initialize_pipe(dir_mask=1, slot_size=1024)
        t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[rows, cols])] = (
            pl.tpop_from_aic(split=1)
        )
        u = pl.mul(t, 2.0)
        pl.tfree_to_aic(t)
        y = pl.store(u, [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Group, attrs={"split": pl.SplitMode.UP_DOWN})
    def group(
        self,
        a: pl.Tensor[[16, 16], pl.FP32],
        b: pl.Tensor[[16, 16], pl.FP32],
        y: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
        rows: pl.Scalar[pl.INDEX],
        cols: pl.Scalar[pl.INDEX],
    ):
        self.cube(a, b, y, rows, cols)
        return self.vector(a, b, y, rows, cols)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        a: pl.Tensor[[16, 16], pl.FP32],
        b: pl.Tensor[[16, 16], pl.FP32],
        shape: pl.Tensor[[2], pl.INT64],
        y: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
    ):
        rows: pl.Scalar[pl.INDEX] = pl.tensor.read(shape, [0])  # read by the orchestration
        cols: pl.Scalar[pl.INDEX] = pl.tensor.read(shape, [1])
        return self.group(a, b, y, rows, cols)


@pytest.mark.parametrize("rows,cols", [(16, 16), (11, 5), (8, 16), (3, 1), (0, 4)])
def test_split_halves_each_take_their_part_of_the_valid_rows(rows, cols):
    a, b = data((16, 16), np.float32), data((16, 16), np.float32, seed=1)
    y = np.full((16, 16), SENTINEL, np.float32)
    blockpipe.compile(SplitValid, quiet=True)(a, b, np.array([rows, cols], np.int64), y)
    want = np.full((16, 16), SENTINEL, np.float32)
    want[:rows, :cols] = 2 * (a @ b)[:rows, :cols]
    np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-4)


@pl.program
class Reads:
    """pl.read of single elements in a kernel: per-row weights."""

    @pl.function
    def kernel(
        self,
        x: pl.Tensor[[4, 64], pl.FP32],
        w: pl.Tensor[[4, 3], pl.FP32],
        y: pl.Out[pl.Tensor[[4, 64], pl.FP32]],
    ):
        for r in pl.range(4):
            row = pl.load(x, [r, 0], [1, 64])
            scale = pl.read(w, [r, 2])
            y = pl.store(pl.mul(row, scale), [r, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[4, 64], pl.FP32],
        w: pl.Tensor[[4, 3], pl.FP32],
        y: pl.Out[pl.Tensor[[4, 64], pl.FP32]],
    ):
        return self.kernel(x, w, y)


def test_a_kernel_reads_single_elements():
    x, w = data((4, 64), np.float32), data((4, 3), np.float32, seed=2)
    y = np.zeros((4, 64), np.float32)
    blockpipe.compile(Reads, quiet=True)(x, w, y)
    np.testing.assert_array_equal(y, x * w[:, 2:3])


@pl.program
class ReadsByIndex:
    """pypto's one-dimensional form, `pl.read(table, i)`: a row picked by a
    table of indices."""

    @pl.function
    def kernel(
        self,
        x: pl.Tensor[[4, 64], pl.FP32],
        table: pl.Tensor[[4], pl.INT32],
        y: pl.Out[pl.Tensor[[4, 64], pl.FP32]],
    ):
        for r in pl.range(4):
            src = pl.cast(pl.read(table, r), pl.INDEX)
            y = pl.store(pl.load(x, [src, 0], [1, 64]), [r, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[4, 64], pl.FP32],
        table: pl.Tensor[[4], pl.INT32],
        y: pl.Out[pl.Tensor[[4, 64], pl.FP32]],
    ):
        return self.kernel(x, table, y)


def test_a_one_dimensional_read_takes_the_index_itself():
    x = data((4, 64), np.float32)
    table = np.array([2, 0, 3, 1], np.int32)
    y = np.zeros((4, 64), np.float32)
    blockpipe.compile(ReadsByIndex, quiet=True)(x, table, y)
    np.testing.assert_array_equal(y, x[table])


@pl.program
class ReadOutOfBounds:
    @pl.function
    def kernel(
        self,
        x: pl.Tensor[[4, 8], pl.FP32],
        i: pl.Scalar[pl.INDEX],
        y: pl.Out[pl.Tensor[[4, 8], pl.FP32]],
    ):
        v = pl.read(x, [i, 0])
        y = pl.store(pl.mul(pl.load(x, [0, 0], [4, 8]), v), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[4, 8], pl.FP32],
        i: pl.Scalar[pl.INDEX],
        y: pl.Out[pl.Tensor[[4, 8], pl.FP32]],
    ):
        return self.kernel(x, i, y)


def test_a_read_outside_the_tensor_fails_at_its_line():
    y = np.zeros((4, 8), np.float32)
    compiled = blockpipe.compile(ReadOutOfBounds, quiet=True)
    with pytest.raises(
        RuntimeError, match=r"read of 'x' at test_valid_shapes.py:\d+: dim 0 window \[4, 5\)"
    ):
        compiled(np.ones((4, 8), np.float32), 4, y)
    assert not y.any()  # outputs untouched


@pl.program
class ValidTooLarge:
    @pl.function
    def kernel(
        self,
        x: pl.Tensor[[16, 16], pl.FP32],
        n: pl.Scalar[pl.INDEX],
        y: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
    ):
        t = pl.load(x, [0, 0], [16, 16], valid_shape=[n, 16])
        y = pl.store(t, [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[16, 16], pl.FP32],
        n: pl.Scalar[pl.INDEX],
        y: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
    ):
        return self.kernel(x, n, y)


def test_a_valid_size_beyond_the_tile_fails_the_launch_at_its_line():
    y = np.zeros((16, 16), np.float32)
    compiled = blockpipe.compile(ValidTooLarge, quiet=True)
    with pytest.raises(
        RuntimeError,
        match=r"valid shape of the load at test_valid_shapes.py:\d+: dim 0 is 17, "
        r"outside the tile's \[0, 16\]",
    ):
        compiled(np.ones((16, 16), np.float32), 17, y)
    assert not y.any()


def constant_valid_out_of_range():
    @pl.program
    class Bad:
        @pl.function
        def kernel(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
            # error: pl.load's valid_shape size 20 is outside [0, 16]
            t = pl.load(x, [0, 0], [16, 16], valid_shape=[20, 16])
            return pl.store(t, [0, 0], y)

    return Bad


def reshape_of_a_valid_tile():
    @pl.program
    class Bad:
        @pl.function
        def kernel(
            self,
            x: pl.Tensor[[16, 16], pl.FP32],
            n: pl.Scalar[pl.INDEX],
            y: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
        ):
            t = pl.tile.set_validshape(pl.load(x, [0, 0], [16, 16]), n, 16)
            # error: reshape of a tile with a valid_shape ([a run-time value, 16]) is not supported by blockpipe: pl.fillpad the tile first
            u = pl.reshape(t, [16, 16])
            return pl.store(u, [0, 0], y)

    return Bad


def two_valid_shapes_in_a_loop():
    @pl.program
    class Bad:
        @pl.function
        def kernel(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
            t = pl.load(x, [0, 0], [16, 16])
            for i in pl.range(2):  # error: 't' has a different valid_shape where control flow joins
                t = pl.tile.set_validshape(pl.add(t, t), 8, 16)
            return pl.store(t, [0, 0], y)

    return Bad


def a_tileview_with_layout():
    @pl.program
    class Bad:
        @pl.function
        def kernel(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
            t: pl.Tile[
                [16, 16],
                pl.FP32,
                pl.Mem.Vec,
                # error: pl.TileView(fractal=...) is not supported by blockpipe
                pl.TileView(valid_shape=[8, 8], fractal=512),
            ] = pl.load(x, [0, 0], [16, 16])
            return pl.store(t, [0, 0], y)

    return Bad


@pytest.mark.parametrize(
    "factory", [constant_valid_out_of_range, reshape_of_a_valid_tile, two_valid_shapes_in_a_loop]
)
def test_errors_name_the_line(factory):
    located.expect_error(factory, lambda p: blockpipe.compile(p, quiet=True))


def test_a_tileview_error_names_the_annotation():
    with pytest.raises(
        blockpipe.CompileError, match=r"pl.TileView\(fractal=...\) is not supported by blockpipe"
    ):
        blockpipe.compile(a_tileview_with_layout(), quiet=True)
