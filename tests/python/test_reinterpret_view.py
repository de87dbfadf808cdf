"""pl.reinterpret_view (bp.bitcast): a tile's bytes, row-major, read as
another dtype, wider or narrower, on cpu-sim and cuda-emu and interpreted,
against NumPy's view of the same bytes."""

import numpy as np
import pytest

import blockpipe
import blockpipe.language as pl

TARGETS = [dict(target="cpu-sim"), dict(target="cuda", device="cuda-emu")]


@pl.program
class Views:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(
        self,
        x: pl.Tensor[[8, 32], pl.FP32],
        narrow: pl.Out[pl.Tensor[[8, 64], pl.INT16]],
        wide: pl.Out[pl.Tensor[[16, 16], pl.INT32]],
        bytes_: pl.Out[pl.Tensor[[8, 128], pl.UINT8]],
    ):
        t = pl.load(x, [0, 0], [8, 32])
        halves = pl.reinterpret_view(t, pl.INT16)
        narrow = pl.store(halves, [0, 0], narrow)
        wide = pl.store(pl.tile.reinterpret_view(halves, pl.INT32, shape=[16, 16]), [0, 0], wide)
        bytes_ = pl.store(pl.reinterpret_view(t, pl.UINT8), [0, 0], bytes_)
        return narrow, wide, bytes_

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[8, 32], pl.FP32],
        narrow: pl.Out[pl.Tensor[[8, 64], pl.INT16]],
        wide: pl.Out[pl.Tensor[[16, 16], pl.INT32]],
        bytes_: pl.Out[pl.Tensor[[8, 128], pl.UINT8]],
    ):
        narrow, wide, bytes_ = self.kernel(x, narrow, wide, bytes_)
        return narrow, wide, bytes_


def run(compiled):
    x = np.random.default_rng(10).standard_normal((8, 32)).astype(np.float32)
    x[0, :3] = [np.nan, np.inf, -0.0]
    outs = [np.zeros((8, 64), np.int16), np.zeros((16, 16), np.int32), np.zeros((8, 128), np.uint8)]
    compiled(x, *outs)
    np.testing.assert_array_equal(outs[0], x.view(np.int16))
    np.testing.assert_array_equal(outs[1], x.view(np.int32).reshape(16, 16))
    np.testing.assert_array_equal(outs[2], x.view(np.uint8))


@pytest.mark.parametrize("where", TARGETS, ids=["cpu-sim", "cuda-emu"])
def test_views_read_the_same_bytes(where):
    run(blockpipe.compile(Views, quiet=True, **where))


def test_the_interpreter_reads_the_same_bytes(monkeypatch):
    monkeypatch.setenv("BLOCKPIPE_INTERPRET", "1")
    run(blockpipe.compile(Views))


def test_a_shape_of_other_bytes_is_an_error_at_its_line():
    @pl.program
    class Bad:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(
            self, x: pl.Tensor[[8, 32], pl.FP32], y: pl.Out[pl.Tensor[[8, 32], pl.INT16]]
        ) -> pl.Tensor[[8, 32], pl.INT16]:
            t = pl.load(x, [0, 0], [8, 32])
            return pl.store(pl.reinterpret_view(t, pl.INT16, shape=[8, 32]), [0, 0], y)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self, x: pl.Tensor[[8, 32], pl.FP32], y: pl.Out[pl.Tensor[[8, 32], pl.INT16]]
        ) -> pl.Tensor[[8, 32], pl.INT16]:
            y = self.kernel(x, y)
            return y

    with pytest.raises(blockpipe.CompileError, match=r"holds 512 bytes; the tile holds 1024"):
        blockpipe.compile(Bad, quiet=True)


def test_views_build_with_nvcc_warning_free(tmp_path):
    import test_cuda_target

    if test_cuda_target.NVCC is None:
        pytest.skip("no CUDA toolkit (nvcc) on this machine")
    test_cuda_target.build_cuda(Views, tmp_path / "views")
