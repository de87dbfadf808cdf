"""Atomic-add stores: pl.store(..., atomic=pl.AtomicType.Add) and
pl.assemble(..., atomic=...) add each element into GM as one atomic
read-modify-write, so the blocks of a launch may add into the same window
(pypto's split-K matmul). Neither the compiler's race warning nor the
sanitizer reports them."""

import os
import subprocess
import sys
import textwrap
import warnings

import ml_dtypes
import numpy as np
import pytest

from targets import TARGETS, compile_at

import blockpipe
import blockpipe.language as pl

DTYPES = {
    pl.FP32: np.float32,
    pl.FP16: np.float16,
    pl.BF16: ml_dtypes.bfloat16,
    pl.INT32: np.int32,
    pl.INT16: np.int16,
    pl.INT8: np.int8,
    pl.UINT8: np.uint8,
}


def _summing(dtype):
    T = pl.Tensor[[4, 16, 32], dtype]
    S = pl.Tensor[[16, 32], dtype]

    @pl.program
    class Summing:
        @pl.function(type=pl.FunctionType.InCore)
        def add(self, x: T, out: pl.InOut[S]) -> S:
            b = pl.tile.get_block_idx()
            part = pl.reshape(pl.load(x, [b, 0, 0], [1, 16, 32]), [16, 32])
            return pl.store(part, [0, 0], out, atomic=pl.AtomicType.Add)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: T, out: pl.InOut[S]) -> S:
            with pl.spmd(4):
                out = self.add(x, out)
            return out

    return Summing


@pytest.mark.parametrize("dtype", list(DTYPES), ids=[d.name for d in DTYPES])
@pytest.mark.parametrize("where", TARGETS)
def test_blocks_add_into_one_window(dtype, where, monkeypatch):
    np_dtype = DTYPES[dtype]
    rng = np.random.default_rng(5)
    if np_dtype in (np.float32, np.float16, ml_dtypes.bfloat16):
        # Small integers: every order of the adds gives the same sum.
        x = rng.integers(-8, 8, (4, 16, 32)).astype(np_dtype)
    else:
        info = np.iinfo(np_dtype)
        x = rng.integers(info.min, info.max, (4, 16, 32), endpoint=True).astype(np_dtype)
        x[0, 0, 0] = info.max  # sums wrap at the type's width
    start = np.ones((16, 32), np_dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no race warning for atomic adds
        compiled = compile_at(_summing(dtype), where, monkeypatch)
    out = start.copy()
    compiled(x, out)
    floats = (np.float32, np.float16, ml_dtypes.bfloat16)
    expected = start.astype(np.int64 if np_dtype not in floats else np_dtype)
    for part in x:
        expected = expected + part
    np.testing.assert_array_equal(out, expected.astype(np_dtype))


SCRIPT = textwrap.dedent("""
    import os, sys
    os.environ["BLOCKPIPE_SANITIZE"] = "1"
    sys.path.insert(0, os.path.dirname(sys.argv[1]))
    import numpy as np
    import blockpipe
    import blockpipe.language as pl
    from test_atomic_store import _summing
    compiled = blockpipe.compile(_summing(pl.FP32), quiet=True)
    x = np.ones((4, 16, 32), np.float32)
    out = np.zeros((16, 32), np.float32)
    compiled(x, out)
    assert (out == 4).all(), out
    print("CLEAN")
""")


def test_the_sanitizer_does_not_report_atomic_adds(tmp_path):
    script = tmp_path / "run.py"
    script.write_text(SCRIPT)
    result = subprocess.run(
        [sys.executable, str(script), os.path.abspath(__file__)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert "CLEAN" in result.stdout, result.stdout + result.stderr


@pl.program
class SplitK:
    """Each of 4 blocks multiplies one K-quarter and adds its partial
    product into c."""

    @pl.function(type=pl.FunctionType.InCore)
    def part(
        self,
        a: pl.Tensor[[32, 256], pl.FP32],
        b: pl.Tensor[[256, 16], pl.FP32],
        c: pl.InOut[pl.Tensor[[32, 16], pl.FP32]],
    ) -> pl.Tensor[[32, 16], pl.FP32]:
        k0 = pl.tile.get_block_idx() * 64
        a_k = pl.load(a, [0, k0], [32, 64], target_memory=pl.MemorySpace.Mat)
        b_k = pl.load(b, [k0, 0], [64, 16], target_memory=pl.MemorySpace.Mat)
        return pl.assemble(c, pl.matmul(a_k, b_k), [0, 0], atomic=pl.AtomicType.Add)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        a: pl.Tensor[[32, 256], pl.FP32],
        b: pl.Tensor[[256, 16], pl.FP32],
        c: pl.InOut[pl.Tensor[[32, 16], pl.FP32]],
    ) -> pl.Tensor[[32, 16], pl.FP32]:
        with pl.spmd(4):
            c = self.part(a, b, c)
        return c


@pytest.mark.parametrize("where", TARGETS)
def test_a_split_k_matmul_adds_its_partial_products(where, monkeypatch):
    compiled = compile_at(SplitK, where, monkeypatch)
    rng = np.random.default_rng(6)
    a = rng.standard_normal((32, 256)).astype(np.float32)
    b = rng.standard_normal((256, 16)).astype(np.float32)
    c = np.zeros((32, 16), np.float32)
    compiled(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-3)


def _misuse(body):
    @pl.program
    class Misuse:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(
            self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]
        ) -> pl.Tensor[[16, 16], pl.FP32]:
            return body(pl.load(x, [0, 0], [16, 16]), out)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]
        ) -> pl.Tensor[[16, 16], pl.FP32]:
            out = self.kernel(x, out)
            return out

    return Misuse


def an_unknown_mode(t, out):
    return pl.store(t, [0, 0], out, atomic=2)


def into_a_tile(t, out):
    return pl.store(pl.assemble(t, t, [0, 0], atomic=pl.AtomicType.Add), [0, 0], out)


@pytest.mark.parametrize(
    "body,message",
    [
        (an_unknown_mode, "pl.store's atomic must be pl.AtomicType.None_ or pl.AtomicType.Add"),
        (into_a_tile, "pl.assemble adds atomically into GM tensors, not into tiles"),
    ],
)
def test_a_misused_atomic_is_an_error_at_its_line(body, message):
    with pytest.raises(blockpipe.CompileError, match=message) as info:
        blockpipe.compile(_misuse(body), quiet=True)
    assert info.value.line == body.__code__.co_firstlineno + 1


@pytest.mark.parametrize("dtype", [pl.FP32, pl.FP16, pl.INT8])
def test_atomic_adds_build_with_nvcc_warning_free(dtype, tmp_path):
    import test_cuda_target

    if test_cuda_target.NVCC is None:
        pytest.skip("no CUDA toolkit (nvcc) on this machine")
    test_cuda_target.build_cuda(_summing(dtype), tmp_path / "summing")


@pytest.mark.parametrize("dtype", [pl.FP16, pl.BF16])
def test_an_fp32_product_adds_into_a_16_bit_tensor(dtype):
    import ml_dtypes

    np_dtype = np.float16 if dtype is pl.FP16 else ml_dtypes.bfloat16

    @pl.program
    class Narrow:
        @pl.function(type=pl.FunctionType.InCore)
        def part(
            self,
            a: pl.Tensor[[16, 64], pl.FP32],
            b: pl.Tensor[[64, 16], pl.FP32],
            c: pl.InOut[pl.Tensor[[16, 16], dtype]],
        ) -> pl.Tensor[[16, 16], dtype]:
            k0 = pl.tile.get_block_idx() * 32
            a_k = pl.load(a, [0, k0], [16, 32], target_memory=pl.MemorySpace.Mat)
            b_k = pl.load(b, [k0, 0], [32, 16], target_memory=pl.MemorySpace.Mat)
            return pl.assemble(c, pl.matmul(a_k, b_k), [0, 0], atomic=pl.AtomicType.Add)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            a: pl.Tensor[[16, 64], pl.FP32],
            b: pl.Tensor[[64, 16], pl.FP32],
            c: pl.InOut[pl.Tensor[[16, 16], dtype]],
        ) -> pl.Tensor[[16, 16], dtype]:
            with pl.spmd(2):
                c = self.part(a, b, c)
            return c

    rng = np.random.default_rng(12)
    # Small integers: each partial sum and the total exact in 16 bits.
    a = rng.integers(-2, 3, (16, 64)).astype(np.float32)
    b = rng.integers(-2, 3, (64, 16)).astype(np.float32)
    c = np.zeros((16, 16), np_dtype)
    blockpipe.compile(Narrow, quiet=True)(a, b, c)
    np.testing.assert_array_equal(c.astype(np.float32), a @ b)
