"""Matmuls larger than the Left, Right or Acc memories run in chunks
(bp-split-matmul, pypto's automatic L0 tiling): the results equal NumPy's,
and the split shows in the IR after the pass."""

import numpy as np
import pytest

import blockpipe
import blockpipe.language as pl

TARGETS = [dict(target="cpu-sim"), dict(target="cuda", device="cuda-emu")]


@pytest.mark.parametrize("where", TARGETS, ids=["cpu-sim", "cuda-emu"])
def test_a_matmul_too_large_for_left_acc_runs_in_k_and_n_chunks(where):
    # [256, 128] x [128, 256] in FP32: 128 KiB of Left (64 KiB on cpu-sim
    # and cuda) and a 256 KiB result (Acc holds 128 KiB).
    @pl.program
    class Big:
        @pl.function(type=pl.FunctionType.InCore)
        def k(
            self,
            a: pl.Tensor[[256, 128], pl.FP32],
            b: pl.Tensor[[128, 256], pl.FP32],
            c: pl.Out[pl.Tensor[[256, 256], pl.FP32]],
        ) -> pl.Tensor[[256, 256], pl.FP32]:
            la = pl.load(a, [0, 0], [256, 128], target_memory=pl.MemorySpace.Mat)
            lb = pl.load(b, [0, 0], [128, 256], target_memory=pl.MemorySpace.Mat)
            return pl.store(pl.matmul(la, lb), [0, 0], c)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            a: pl.Tensor[[256, 128], pl.FP32],
            b: pl.Tensor[[128, 256], pl.FP32],
            c: pl.Out[pl.Tensor[[256, 256], pl.FP32]],
        ) -> pl.Tensor[[256, 256], pl.FP32]:
            c = self.k(a, b, c)
            return c

    compiled = blockpipe.compile(Big, quiet=True, **where)
    split = compiled.ir("split-matmul")
    assert split.count("scf.for") == 2 and split.count("bp.store") == 1
    assert "256x128xf32, left" not in split
    if where["target"] == "cpu-sim":
        # A loop over N in chunks of 128 (256 x 128 f32 is 128 KiB of Acc),
        # each chunk a loop over K in chunks of 64 (256 x 64 f32 is 64 KiB
        # of Left) and stored as soon as it is done. (cuda's memories are
        # half as large: chunks of 64 and 32.)
        assert "!bp.tile<256x64xf32, left>" in split
        assert "!bp.tile<64x128xf32, right>" in split and "!bp.tile<256x128xf32, acc>" in split
    rng = np.random.default_rng(0)
    a = rng.standard_normal((256, 128)).astype(np.float32)
    b = rng.standard_normal((128, 256)).astype(np.float32)
    c = np.zeros((256, 256), np.float32)
    compiled(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def test_a_tensor_matmul_in_a_scope_is_split_too():
    """pypto's form: `pl.matmul` of whole tensors in a pl.at scope, the
    result assembled into the output; K = 512 overflows Left and Right."""

    @pl.jit
    def split_k(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="split_k"):
            c = pl.matmul(a, b, out_dtype=pl.FP32)
            out = pl.assemble(out, c, [0, 0])
        return out

    rng = np.random.default_rng(1)
    a = rng.standard_normal((128, 512)).astype(np.float32)
    b = rng.standard_normal((512, 128)).astype(np.float32)
    out = np.zeros((128, 128), np.float32)
    split_k(a, b, out)
    np.testing.assert_allclose(out, a @ b, rtol=1e-4, atol=1e-3)


def test_a_matmul_that_fits_is_not_split():
    @pl.jit
    def small(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            out = pl.assemble(out, pl.matmul(a, b, out_dtype=pl.FP32), [0, 0])
        return out

    a = np.ones((64, 64), np.float32)
    out = np.zeros((64, 64), np.float32)
    small(a, a, out)
    np.testing.assert_allclose(out, a @ a)
    (compiled,) = small._cache.values()
    assert "scf.for" not in compiled.ir("split-matmul")
