"""A matmul's left operand read transposed: `a_trans=True` or a
pl.tile.transpose_view moved to Left memory (pypto's A^T @ B), alone, with
a transposed right operand, in a K-split matmul larger than L0, and per
batch of pl.batch_matmul."""

import ml_dtypes
import numpy as np
import pytest

import blockpipe
import blockpipe.language as pl

TARGETS = [dict(target="cpu-sim"), dict(target="cuda", device="cuda-emu")]
MAT = pl.MemorySpace.Mat


@pl.program
class Transposed:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(
        self,
        a: pl.Tensor[[64, 16], pl.FP32],
        b: pl.Tensor[[64, 32], pl.FP32],
        bt: pl.Tensor[[32, 64], pl.FP32],
        view: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
        flag: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
        both: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
    ):
        a_nat = pl.load(a, [0, 0], [64, 16], target_memory=MAT)  # [K, M]
        b_l1 = pl.load(b, [0, 0], [64, 32], target_memory=MAT)
        a_l0 = pl.move(pl.tile.transpose_view(a_nat), target_memory=pl.MemorySpace.Left)
        b_l0 = pl.move(b_l1, target_memory=pl.MemorySpace.Right)
        view = pl.store(pl.matmul(a_l0, b_l0), [0, 0], view)  # a^T @ b
        flag = pl.store(pl.matmul(a_nat, b_l1, a_trans=True), [0, 0], flag)
        bt_l1 = pl.load(bt, [0, 0], [32, 64], target_memory=MAT)
        both = pl.store(pl.matmul(a_nat, bt_l1, a_trans=True, b_trans=True), [0, 0], both)
        return view, flag, both

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        a: pl.Tensor[[64, 16], pl.FP32],
        b: pl.Tensor[[64, 32], pl.FP32],
        bt: pl.Tensor[[32, 64], pl.FP32],
        view: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
        flag: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
        both: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
    ):
        view, flag, both = self.kernel(a, b, bt, view, flag, both)
        return view, flag, both


@pytest.mark.parametrize("where", TARGETS, ids=["cpu-sim", "cuda-emu"])
def test_the_left_operand_read_transposed(where):
    compiled = blockpipe.compile(Transposed, quiet=True, **where)
    rng = np.random.default_rng(1)
    a = rng.standard_normal((64, 16)).astype(np.float32)
    b = rng.standard_normal((64, 32)).astype(np.float32)
    bt = rng.standard_normal((32, 64)).astype(np.float32)
    outs = [np.zeros((16, 32), np.float32) for _ in range(3)]
    compiled(a, b, bt, *outs)
    np.testing.assert_allclose(outs[0], a.T @ b, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(outs[1], a.T @ b, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(outs[2], a.T @ bt.T, rtol=1e-5, atol=1e-4)


def _half(dtype):
    acc = pl.INT32 if dtype is pl.INT8 else pl.FP32

    # [K, M] = [32, 16] FP16/BF16: the CUDA library's WMMA path (multiples of
    # 16); INT8: its exact loop, accumulating in INT32.
    @pl.program
    class Half:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(
            self,
            a: pl.Tensor[[32, 16], dtype],
            b: pl.Tensor[[32, 16], dtype],
            c: pl.Out[pl.Tensor[[16, 16], acc]],
        ):
            a_l1 = pl.load(a, [0, 0], [32, 16], target_memory=MAT)
            b_l1 = pl.load(b, [0, 0], [32, 16], target_memory=MAT)
            c = pl.store(pl.matmul(a_l1, b_l1, a_trans=True), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            a: pl.Tensor[[32, 16], dtype],
            b: pl.Tensor[[32, 16], dtype],
            c: pl.Out[pl.Tensor[[16, 16], acc]],
        ):
            c = self.kernel(a, b, c)
            return c

    return Half


@pytest.mark.parametrize("dtype", [pl.FP16, pl.BF16, pl.INT8])
def test_narrow_operands_read_transposed(dtype):
    Half = _half(dtype)
    np_dtype = {pl.FP16: np.float16, pl.BF16: ml_dtypes.bfloat16, pl.INT8: np.int8}[dtype]
    rng = np.random.default_rng(2)
    # Small integers: exact in 16 bits and in any order of the sums.
    a = rng.integers(-3, 4, (32, 16)).astype(np.float32)
    b = rng.integers(-3, 4, (32, 16)).astype(np.float32)
    for where in TARGETS:
        compiled = blockpipe.compile(Half, quiet=True, **where)
        c = np.zeros((16, 16), np.int32 if dtype is pl.INT8 else np.float32)
        compiled(a.astype(np_dtype), b.astype(np_dtype), c)
        np.testing.assert_array_equal(c, (a.T @ b).astype(c.dtype))


@pl.program
class LargeTransposed:
    """[K, M] = [512, 64] FP32 is 128 KiB, more than Left's 64 KiB on
    cpu-sim: bp-split-matmul multiplies it in K-chunks of the transposed
    operand."""

    @pl.function(type=pl.FunctionType.InCore)
    def kernel(
        self,
        a: pl.Tensor[[512, 64], pl.FP32],
        b: pl.Tensor[[512, 32], pl.FP32],
        c: pl.Out[pl.Tensor[[64, 32], pl.FP32]],
    ):
        a_l1 = pl.load(a, [0, 0], [512, 64], target_memory=MAT)
        b_l1 = pl.load(b, [0, 0], [512, 32], target_memory=MAT)
        c = pl.store(pl.matmul(a_l1, b_l1, a_trans=True), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        a: pl.Tensor[[512, 64], pl.FP32],
        b: pl.Tensor[[512, 32], pl.FP32],
        c: pl.Out[pl.Tensor[[64, 32], pl.FP32]],
    ):
        c = self.kernel(a, b, c)
        return c


def test_a_transposed_left_operand_larger_than_l0_is_split_by_k():
    compiled = blockpipe.compile(LargeTransposed, quiet=True)
    assert "scf.for" in compiled.ir("bp-split-matmul")
    rng = np.random.default_rng(3)
    a = rng.standard_normal((512, 64)).astype(np.float32)
    b = rng.standard_normal((512, 32)).astype(np.float32)
    c = np.zeros((64, 32), np.float32)
    compiled(a, b, c)
    np.testing.assert_allclose(c, a.T @ b, rtol=1e-4, atol=1e-3)


@pl.program
class BatchTransposed:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(
        self,
        a: pl.Tensor[[3, 32, 16], pl.FP32],
        b: pl.Tensor[[3, 32, 8], pl.FP32],
        c: pl.Out[pl.Tensor[[3, 16, 8], pl.FP32]],
    ):
        a_t = pl.tile.transpose_view(pl.load(a, [0, 0, 0], [3, 32, 16], target_memory=MAT))
        b_t = pl.load(b, [0, 0, 0], [3, 32, 8], target_memory=MAT)
        c = pl.store(pl.batch_matmul(a_t, b_t), [0, 0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        a: pl.Tensor[[3, 32, 16], pl.FP32],
        b: pl.Tensor[[3, 32, 8], pl.FP32],
        c: pl.Out[pl.Tensor[[3, 16, 8], pl.FP32]],
    ):
        c = self.kernel(a, b, c)
        return c


@pytest.mark.parametrize("where", TARGETS, ids=["cpu-sim", "cuda-emu"])
def test_a_batched_left_operand_read_transposed(where):
    compiled = blockpipe.compile(BatchTransposed, quiet=True, **where)
    rng = np.random.default_rng(4)
    a = rng.standard_normal((3, 32, 16)).astype(np.float32)
    b = rng.standard_normal((3, 32, 8)).astype(np.float32)
    c = np.zeros((3, 16, 8), np.float32)
    compiled(a, b, c)
    np.testing.assert_allclose(c, np.swapaxes(a, 1, 2) @ b, rtol=1e-5, atol=1e-4)


def test_inner_dimensions_of_a_transposed_left_operand_are_checked_at_the_line():
    @pl.program
    class Mismatch:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(
            self,
            a: pl.Tensor[[16, 64], pl.FP32],
            b: pl.Tensor[[64, 32], pl.FP32],
            c: pl.Out[pl.Tensor[[64, 32], pl.FP32]],
        ):
            a_l1 = pl.load(a, [0, 0], [16, 64], target_memory=MAT)
            b_l1 = pl.load(b, [0, 0], [64, 32], target_memory=MAT)
            product = pl.matmul(a_l1, b_l1, a_trans=True)
            c = pl.store(product, [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            a: pl.Tensor[[16, 64], pl.FP32],
            b: pl.Tensor[[64, 32], pl.FP32],
            c: pl.Out[pl.Tensor[[64, 32], pl.FP32]],
        ):
            c = self.kernel(a, b, c)
            return c

    with pytest.raises(blockpipe.CompileError, match=r"\(transposed\)") as info:
        blockpipe.compile(Mismatch, quiet=True)
    source = open(__file__).read().splitlines()
    line = next(i for i, text in enumerate(source, 1) if "product = pl.matmul(a_l1" in text)
    assert info.value.line == line


def test_transposed_left_operands_build_with_nvcc_warning_free(tmp_path):
    import test_cuda_target

    if test_cuda_target.NVCC is None:
        pytest.skip("no CUDA toolkit (nvcc) on this machine")
    test_cuda_target.build_cuda(Transposed, tmp_path / "transposed")
    test_cuda_target.build_cuda(_half(pl.FP16), tmp_path / "half")  # tensor cores
