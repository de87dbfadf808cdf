"""An FP32 Acc tile stored (or atomically added) into an FP16 or BF16
tensor is rounded to it once, as pypto's cube output conversion: a cast in
Vec memory, so not in an AIC function. Other dtype mismatches stay
errors."""

import ml_dtypes
import numpy as np
import pytest

from located import expect_error

import blockpipe
import blockpipe.language as pl

MAT = pl.Mem.Mat


def _program(dtype, atomic):
    add = pl.AtomicType.Add if atomic else pl.AtomicType.None_

    @pl.program
    class Rounded:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(
            self,
            a: pl.Tensor[[16, 32], pl.FP32],
            b: pl.Tensor[[32, 16], pl.FP32],
            c: pl.InOut[pl.Tensor[[16, 16], dtype]],
        ):
            acc = pl.matmul(
                pl.load(a, [0, 0], [16, 32], target_memory=MAT),
                pl.load(b, [0, 0], [32, 16], target_memory=MAT),
            )
            c = pl.store(acc, [0, 0], c, atomic=add)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            a: pl.Tensor[[16, 32], pl.FP32],
            b: pl.Tensor[[32, 16], pl.FP32],
            c: pl.InOut[pl.Tensor[[16, 16], dtype]],
        ):
            c = self.kernel(a, b, c)
            return c

    return Rounded


@pytest.mark.parametrize("interpret", [False, True], ids=["compiled", "interpreted"])
@pytest.mark.parametrize("atomic", [False, True], ids=["store", "atomic-add"])
@pytest.mark.parametrize(
    "dtype, np_dtype, ulp",
    [(pl.BF16, ml_dtypes.bfloat16, 2.0**-7), (pl.FP16, np.float16, 2.0**-10)],
    ids=["bf16", "fp16"],
)
def test_an_fp32_product_rounds_into_a_half_tensor(
    monkeypatch, interpret, atomic, dtype, np_dtype, ulp
):
    if interpret:
        monkeypatch.setenv("BLOCKPIPE_INTERPRET", "1")
    rng = np.random.default_rng(10)
    a = rng.standard_normal((16, 32)).astype(np.float32)
    b = rng.standard_normal((32, 16)).astype(np.float32)
    base = rng.standard_normal((16, 16)).astype(np_dtype)
    c = base.copy()
    blockpipe.compile(_program(dtype, atomic), quiet=True)(a, b, c)
    assert c.dtype == np_dtype
    product = a @ b
    expected = product + (base.astype(np.float32) if atomic else 0)
    # Rounded once to the tensor's dtype (twice with an atomic add).
    bound = (2 if atomic else 1) * ulp * np.maximum(np.abs(expected), 1.0)
    assert np.all(np.abs(c.astype(np.float32) - expected) <= bound)
    if not atomic:
        np.testing.assert_array_equal(c, product.astype(np_dtype))


def test_an_aic_function_cannot_round_an_acc_tile():
    def program():
        @pl.program
        class Cube:
            @pl.function(type=pl.FunctionType.AIC)
            def kernel(
                self,
                a: pl.Tensor[[16, 32], pl.FP32],
                b: pl.Tensor[[32, 16], pl.FP32],
                c: pl.Out[pl.Tensor[[16, 16], pl.BF16]],
            ):
                acc = pl.matmul(
                    pl.load(a, [0, 0], [16, 32], target_memory=MAT),
                    pl.load(b, [0, 0], [32, 16], target_memory=MAT),
                )
                c = pl.store(acc, [0, 0], c)  # error: which an AIC function lacks
                return c

        return Cube

    expect_error(program, lambda p: blockpipe.compile(p, quiet=True))


def test_a_vec_tile_of_another_dtype_is_still_an_error():
    def program():
        @pl.program
        class VecMismatch:
            @pl.function(type=pl.FunctionType.InCore)
            def kernel(
                self,
                x: pl.Tensor[[16, 16], pl.FP32],
                c: pl.Out[pl.Tensor[[16, 16], pl.BF16]],
            ):
                t = pl.load(x, [0, 0], [16, 16])
                c = pl.store(t, [0, 0], c)  # error: have different dtypes: FP32 and BF16
                return c

        return VecMismatch

    expect_error(program, lambda p: blockpipe.compile(p, quiet=True))
