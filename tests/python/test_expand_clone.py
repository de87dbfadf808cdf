"""pypto's pl.expand_clone(x, y) in an InCore function: the 3-D tensor x
copied into y, its one dimension of 1 (if any) repeated, against numpy;
shapes it cannot clone into are CompileErrors at the line."""

import numpy as np
import pytest

import located

import blockpipe
import blockpipe.language as pl

B, N, K = 4, 8, 16
INPUT_SHAPES = {"none": [B, N, K], "dim0": [1, N, K], "dim1": [B, 1, K], "dim2": [B, N, 1]}


def clone_program(shape, dtype, spelling):
    @pl.program
    class Clone:
        @pl.function(type=pl.FunctionType.InCore)
        def k(
            self, x: pl.Tensor[shape, dtype], y: pl.Out[pl.Tensor[[B, N, K], dtype]]
        ) -> pl.Tensor[[B, N, K], dtype]:
            out: pl.Tensor[[B, N, K], dtype] = spelling(x, y)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self, x: pl.Tensor[shape, dtype], y: pl.Out[pl.Tensor[[B, N, K], dtype]]
        ) -> pl.Tensor[[B, N, K], dtype]:
            y = self.k(x, y)
            return y

    return Clone


@pytest.mark.parametrize("case", list(INPUT_SHAPES))
@pytest.mark.parametrize(
    "dtype,numpy_dtype", [(pl.FP32, np.float32), (pl.INT32, np.int32)], ids=["FP32", "INT32"]
)
def test_the_input_is_repeated_along_its_dimension_of_one(case, dtype, numpy_dtype):
    shape = INPUT_SHAPES[case]
    x = (np.arange(np.prod(shape)).reshape(shape) - 7).astype(numpy_dtype)
    if dtype is pl.FP32:
        x[..., 0] = -0.0  # copied, not computed: the sign of zero stays
    y = np.full((B, N, K), 99, numpy_dtype)
    blockpipe.compile(clone_program(shape, dtype, pl.expand_clone), quiet=True)(x, y)
    expected = np.broadcast_to(x, (B, N, K))
    np.testing.assert_array_equal(y, expected)
    assert np.array_equal(np.signbit(y), np.signbit(expected))


def test_pl_tensor_expand_clone_is_the_same():
    shape = INPUT_SHAPES["dim1"]
    x = np.random.default_rng(2).standard_normal(shape).astype(np.float32)
    y = np.zeros((B, N, K), np.float32)
    blockpipe.compile(clone_program(shape, pl.FP32, pl.tensor.expand_clone), quiet=True)(x, y)
    np.testing.assert_array_equal(y, np.repeat(x, N, axis=1))


def two_dims_of_one():
    @pl.program
    class Bad:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[B, 1, 1], pl.FP32], y: pl.Out[pl.Tensor[[B, N, K], pl.FP32]]):
            # error: pl.expand_clone repeats at most one dimension of size 1 of its input
            return pl.expand_clone(x, y)

    return Bad


def not_one():
    @pl.program
    class Bad:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[B, 2, K], pl.FP32], y: pl.Out[pl.Tensor[[B, N, K], pl.FP32]]):
            # error: [4, 2, 16] cannot become [4, 8, 16]
            return pl.expand_clone(x, y)

    return Bad


def two_dimensional():
    @pl.program
    class Bad:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[1, K], pl.FP32], y: pl.Out[pl.Tensor[[N, K], pl.FP32]]):
            # error: pl.expand_clone copies a 3-D tensor into a 3-D target
            return pl.expand_clone(x, y)

    return Bad


def another_dtype():
    @pl.program
    class Bad:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[B, N, 1], pl.FP16], y: pl.Out[pl.Tensor[[B, N, K], pl.FP32]]):
            # error: pl.expand_clone's input and target
            return pl.expand_clone(x, y)

    return Bad


def in_an_orchestration():
    @pl.program
    class Bad:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[B, N, 1], pl.FP32], y: pl.Out[pl.Tensor[[B, N, K], pl.FP32]]):
            # error: pl.expand_clone
            y = pl.expand_clone(x, y)
            return y

    return Bad


@pytest.mark.parametrize(
    "factory", [two_dims_of_one, not_one, two_dimensional, another_dtype, in_an_orchestration]
)
def test_a_shape_it_cannot_clone_into_is_an_error_at_its_line(factory):
    located.expect_error(factory, lambda p: blockpipe.compile(p, quiet=True))
