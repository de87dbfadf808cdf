"""Tiles of more than 2 dimensions (up to 8): loads and stores of N-D
windows, elementwise ops with their broadcasts, reductions over the last
dimension, and batched matmuls, against NumPy on cpu-sim and cuda-emu
(bp-flatten-tiles makes them 2-D tiles of merged rows)."""

import numpy as np
import pytest

import blockpipe
import blockpipe.language as pl

TARGETS = [dict(target="cpu-sim"), dict(target="cuda", device="cuda-emu")]
IDS = ["cpu-sim", "cuda-emu"]


@pytest.mark.parametrize("where", TARGETS, ids=IDS)
def test_a_4d_window_takes_elementwise_ops_and_row_reductions(where):
    # Each block takes a [2, 3, 8, 16] window of a [4, 3, 8, 16] tensor at
    # batch 2 * block: y = exp(x - rowmax(x)) * w + 1, and s = rowsum(y).
    @pl.program
    class Softish:
        @pl.function(type=pl.FunctionType.InCore)
        def k(
            self,
            x: pl.Tensor[[4, 3, 8, 16], pl.FP32],
            w: pl.Tensor[[1, 1, 1, 16], pl.FP32],
            y: pl.Out[pl.Tensor[[4, 3, 8, 16], pl.FP32]],
            s: pl.Out[pl.Tensor[[4, 3, 8, 1], pl.FP32]],
        ) -> tuple[pl.Tensor[[4, 3, 8, 16], pl.FP32], pl.Tensor[[4, 3, 8, 1], pl.FP32]]:
            b = pl.tile.get_block_idx() * 2
            t = pl.load(x, [b, 0, 0, 0], [2, 3, 8, 16])
            m = pl.row_max(t)
            e = pl.exp(pl.row_expand_sub(t, m))
            # A [1, 16] row of w broadcast down every row of every batch.
            r = pl.add(pl.mul(e, pl.load(w, [0, 0, 0, 0], [1, 1, 1, 16])), 1.0)
            y = pl.store(r, [b, 0, 0, 0], y)
            s = pl.store(pl.row_sum(r), [b, 0, 0, 0], s)
            return y, s

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            x: pl.Tensor[[4, 3, 8, 16], pl.FP32],
            w: pl.Tensor[[1, 1, 1, 16], pl.FP32],
            y: pl.Out[pl.Tensor[[4, 3, 8, 16], pl.FP32]],
            s: pl.Out[pl.Tensor[[4, 3, 8, 1], pl.FP32]],
        ) -> tuple[pl.Tensor[[4, 3, 8, 16], pl.FP32], pl.Tensor[[4, 3, 8, 1], pl.FP32]]:
            with pl.spmd(2):
                y, s = self.k(x, w, y, s)
            return y, s

    compiled = blockpipe.compile(Softish, quiet=True, **where)
    flat = compiled.ir("flatten-tiles")
    # The [2, 3, 8, 16] tile is a [48, 16] one, loaded and stored batch by batch.
    assert "2x3x8x16" not in flat and "!bp.tile<48x16xf32" in flat
    assert "!bp.tile<8x16xf32" in flat and "scf.for" in flat
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 3, 8, 16)).astype(np.float32)
    w = rng.standard_normal((1, 1, 1, 16)).astype(np.float32)
    y = np.zeros_like(x)
    s = np.zeros((4, 3, 8, 1), np.float32)
    compiled(x, w, y, s)
    want = np.exp(x - x.max(axis=-1, keepdims=True)) * w + 1
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(s, want.sum(axis=-1, keepdims=True), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("where", TARGETS, ids=IDS)
def test_a_3d_integer_tile_wraps_and_reshapes(where):
    @pl.program
    class Twice:
        @pl.function(type=pl.FunctionType.InCore)
        def k(
            self,
            x: pl.Tensor[[2, 4, 32], pl.INT16],
            out: pl.Out[pl.Tensor[[8, 32], pl.INT16]],
        ) -> pl.Tensor[[8, 32], pl.INT16]:
            t = pl.load(x, [0, 0, 0], [2, 4, 32])
            # [2, 4, 32] is [8, 32] row-major: a reshape keeps the order.
            return pl.store(pl.reshape(pl.add(t, t), [8, 32]), [0, 0], out)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            x: pl.Tensor[[2, 4, 32], pl.INT16],
            out: pl.Out[pl.Tensor[[8, 32], pl.INT16]],
        ) -> pl.Tensor[[8, 32], pl.INT16]:
            out = self.k(x, out)
            return out

    x = (np.arange(2 * 4 * 32).reshape(2, 4, 32) * 200).astype(np.int16)
    out = np.zeros((8, 32), np.int16)
    blockpipe.compile(Twice, quiet=True, **where)(x, out)
    # NumPy's int16 wraps around as the tile's does.
    np.testing.assert_array_equal(out, (x + x).reshape(8, 32))


def _batch_program(lhs, rhs, out, b_trans=False, view=False):
    """A kernel computing out = lhs @ rhs (rhs^T with b_trans or view) of
    whole [..]-shaped tensors."""
    zeros_l, zeros_r, zeros_o = [0] * len(lhs), [0] * len(rhs), [0] * len(out)

    @pl.program
    class Batched:
        @pl.function(type=pl.FunctionType.InCore)
        def k(
            self,
            a: pl.Tensor[lhs, pl.FP32],
            b: pl.Tensor[rhs, pl.FP32],
            c: pl.Out[pl.Tensor[out, pl.FP32]],
        ) -> pl.Tensor[out, pl.FP32]:
            ta = pl.load(a, zeros_l, lhs, target_memory=pl.MemorySpace.Mat)
            tb = pl.load(b, zeros_r, rhs, target_memory=pl.MemorySpace.Mat)
            if view:
                tc = pl.batch_matmul(ta, pl.tile.transpose_view(tb))
            else:
                tc = pl.batch_matmul(ta, tb, b_trans=b_trans)
            return pl.store(tc, zeros_o, c)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            a: pl.Tensor[lhs, pl.FP32],
            b: pl.Tensor[rhs, pl.FP32],
            c: pl.Out[pl.Tensor[out, pl.FP32]],
        ) -> pl.Tensor[out, pl.FP32]:
            c = self.k(a, b, c)
            return c

    return Batched


@pytest.mark.parametrize("where", TARGETS, ids=IDS)
@pytest.mark.parametrize(
    "lhs, rhs, b_trans, view",
    [
        ((4, 16, 32), (4, 32, 8), False, False),
        ((2, 3, 16, 32), (2, 3, 32, 16), False, False),
        # rhs broadcast over lhs's batches, and a missing batch dim.
        ((2, 3, 16, 32), (1, 3, 32, 16), False, False),
        ((3, 16, 32), (32, 16), False, False),
        # rhs given as [..., N, K].
        ((2, 16, 32), (2, 8, 32), True, False),
        ((2, 16, 32), (2, 8, 32), False, True),
    ],
    ids=["3d", "4d", "broadcast", "2d-rhs", "b_trans", "transpose_view"],
)
def test_batch_matmul_equals_numpy(where, lhs, rhs, b_trans, view):
    rt = rhs[:-2] + (rhs[-1], rhs[-2]) if (b_trans or view) else rhs
    out = np.broadcast_shapes(lhs[:-2], rhs[:-2]) + (lhs[-2], rt[-1])
    compiled = blockpipe.compile(
        _batch_program(list(lhs), list(rhs), list(out), b_trans, view), quiet=True, **where
    )
    flat = compiled.ir("flatten-tiles")
    assert "bp.batch_matmul" not in flat and flat.count("bp.matmul") == 1
    rng = np.random.default_rng(3)
    a = rng.standard_normal(lhs).astype(np.float32)
    b = rng.standard_normal(rhs).astype(np.float32)
    c = np.zeros(out, np.float32)
    compiled(a, b, c)
    bb = np.swapaxes(b, -1, -2) if (b_trans or view) else b
    np.testing.assert_allclose(c, a @ bb, rtol=1e-4, atol=1e-4)


def test_pl_matmul_of_3d_tiles_is_a_batched_matmul():
    @pl.jit
    def bmm(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            ta = pl.load(a, [0, 0, 0], [2, 16, 16])
            tb = pl.load(b, [0, 0, 0], [2, 16, 16])
            c = pl.store(pl.matmul(ta, tb), [0, 0, 0], c)
        return c

    rng = np.random.default_rng(4)
    a = rng.standard_normal((2, 16, 16)).astype(np.float32)
    b = rng.standard_normal((2, 16, 16)).astype(np.float32)
    c = np.zeros((2, 16, 16), np.float32)
    bmm(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def _error_of(body):
    with pytest.raises(blockpipe.CompileError) as info:
        body()
    return str(info.value)


def test_a_column_reduction_of_a_3d_tile_is_an_error_at_its_line():
    @pl.jit
    def cols(x: pl.Tensor[[2, 8, 16], pl.FP32], out: pl.Out[pl.Tensor[[2, 1, 16], pl.FP32]]):
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(x, [0, 0, 0], [2, 8, 16])
            out = pl.store(pl.col_sum(t), [0, 0, 0], out)  # the line
        return out

    x = np.zeros((2, 8, 16), np.float32)
    out = np.zeros((2, 1, 16), np.float32)
    message = _error_of(lambda: cols(x, out))
    assert "pl.col_sum reduces the columns of a 2-D tile, got [2, 8, 16]" in message
    assert "test_nd_tiles.py" in message
    assert not out.any()


def test_a_batched_matmul_of_computed_tiles_is_an_error_at_its_line():
    @pl.program
    class Computed:
        @pl.function(type=pl.FunctionType.InCore)
        def k(
            self,
            a: pl.Tensor[[2, 16, 16], pl.FP32],
            c: pl.Out[pl.Tensor[[2, 16, 16], pl.FP32]],
        ) -> pl.Tensor[[2, 16, 16], pl.FP32]:
            ta = pl.load(a, [0, 0, 0], [2, 16, 16], target_memory=pl.MemorySpace.Mat)
            tv = pl.add(pl.load(a, [0, 0, 0], [2, 16, 16]), 1.0)
            td = pl.batch_matmul(tv, ta)  # the line
            return pl.store(td, [0, 0, 0], c)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            a: pl.Tensor[[2, 16, 16], pl.FP32],
            c: pl.Out[pl.Tensor[[2, 16, 16], pl.FP32]],
        ) -> pl.Tensor[[2, 16, 16], pl.FP32]:
            c = self.k(a, c)
            return c

    message = _error_of(lambda: blockpipe.compile(Computed, quiet=True))
    assert "operands must be tiles loaded whole from GM" in message
    assert "test_nd_tiles.py" in message


def test_batch_dims_that_do_not_broadcast_are_an_error():
    @pl.jit
    def bad(
        a: pl.Tensor[[2, 16, 16], pl.FP32],
        b: pl.Tensor[[3, 16, 16], pl.FP32],
        c: pl.Out[pl.Tensor[[2, 16, 16], pl.FP32]],
    ):
        with pl.at(level=pl.Level.CORE_GROUP):
            ta = pl.load(a, [0, 0, 0], [2, 16, 16])
            tb = pl.load(b, [0, 0, 0], [3, 16, 16])
            c = pl.store(pl.batch_matmul(ta, tb), [0, 0, 0], c)
        return c

    z = np.zeros((2, 16, 16), np.float32)
    message = _error_of(lambda: bad(z, np.zeros((3, 16, 16), np.float32), z))
    assert "batch dimensions [2] and [3] do not broadcast" in message


def test_a_window_of_nine_dimensions_is_an_error():
    shape = [2] * 9

    @pl.jit
    def deep(x: pl.Tensor[shape, pl.FP32], out: pl.Out[pl.Tensor[shape, pl.FP32]]):
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(x, [0, 0, 0, 0, 0, 0, 0, 0, 0], shape)
            out = pl.store(t, [0, 0, 0, 0, 0, 0, 0, 0, 0], out)
        return out

    z = np.zeros(shape, np.float32)
    assert "tiles have 1 to 8 dimensions, got [2, 2, 2, 2, 2, 2, 2, 2, 2]" in _error_of(
        lambda: deep(z, z)
    )


def test_tensor_level_batch_matmul_in_an_incore_function():
    """pypto's tensor-level form: pl.matmul of whole tensors in an InCore
    function (a tensor where a tile is expected is loaded whole), the result
    annotated as a tensor and assembled into the output; [128, 512] x
    [512, 128] per batch overflows Left and Right and is split further
    (bp-split-matmul on each batch's matmul)."""

    @pl.program
    class TensorLevel:
        @pl.function(type=pl.FunctionType.InCore)
        def k(
            self,
            a: pl.Tensor[[2, 64, 512], pl.FP32],
            b: pl.Tensor[[2, 128, 512], pl.FP32],
            c: pl.Out[pl.Tensor[[2, 64, 128], pl.FP32]],
        ) -> pl.Tensor[[2, 64, 128], pl.FP32]:
            m: pl.Tensor[[2, 64, 128], pl.FP32] = pl.matmul(a, b, b_trans=True, out_dtype=pl.FP32)
            return pl.assemble(c, m, [0, 0, 0])

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            a: pl.Tensor[[2, 64, 512], pl.FP32],
            b: pl.Tensor[[2, 128, 512], pl.FP32],
            c: pl.Out[pl.Tensor[[2, 64, 128], pl.FP32]],
        ) -> pl.Tensor[[2, 64, 128], pl.FP32]:
            c = self.k(a, b, c)
            return c

    compiled = blockpipe.compile(TensorLevel, quiet=True)
    split = compiled.ir("split-matmul")
    assert "!bp.tile<64x512xf32" not in split and split.count("bp.matmul") == 1
    rng = np.random.default_rng(5)
    a = rng.standard_normal((2, 64, 512)).astype(np.float32)
    b = rng.standard_normal((2, 128, 512)).astype(np.float32)
    c = np.zeros((2, 64, 128), np.float32)
    compiled(a, b, c)
    np.testing.assert_allclose(c, a @ np.swapaxes(b, 1, 2), rtol=1e-4, atol=1e-3)
