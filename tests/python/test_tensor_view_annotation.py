"""`pl.TensorView(valid_shape=[...], layout=pl.TensorLayout.ND)` as the third
entry of a tensor annotation: the part of the tensor that holds data, so
that a load of the parameter reads only that part (pypto's rule: the
window's valid shape is the tensor's cut to it; a load's own valid_shape
stays unless the tensor's is provably smaller). Each program runs on
cpu-sim against NumPy; each misuse is a CompileError at the user's line."""

import numpy as np

import located

import blockpipe
import blockpipe.language as pl
from blockpipe.language.lowering import program_ir

V = pl.dynamic("V")
UNBOUND = pl.dynamic("UNBOUND")


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


@pl.program
class DeclaredValid:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(
        self,
        x: pl.Tensor[
            [16, 32], pl.FP32, pl.TensorView(valid_shape=[16, 20], layout=pl.TensorLayout.ND)
        ],
        copy: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
        sums: pl.Out[pl.Tensor[[16, 1], pl.FP32]],
        tail: pl.Out[pl.Tensor[[16, 1], pl.FP32]],
        asked: pl.Out[pl.Tensor[[16, 1], pl.FP32]],
    ):
        whole = pl.load(x, [0, 0], [16, 32])  # valid [16, 20]
        copy = pl.store(whole, [0, 0], copy)  # writes the valid part only
        sums = pl.store(pl.row_sum(whole), [0, 0], sums)
        right = pl.load(x, [0, 16], [16, 16])  # valid [16, 4]
        tail = pl.store(pl.row_sum(right), [0, 0], tail)
        wider = pl.load(x, [0, 0], [16, 32], valid_shape=[16, 24])  # the tensor's 20 is less
        asked = pl.store(pl.row_sum(wider), [0, 0], asked)
        return copy, sums, tail, asked

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[16, 32], pl.FP32],
        copy: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
        sums: pl.Out[pl.Tensor[[16, 1], pl.FP32]],
        tail: pl.Out[pl.Tensor[[16, 1], pl.FP32]],
        asked: pl.Out[pl.Tensor[[16, 1], pl.FP32]],
    ):
        copy, sums, tail, asked = self.kernel(x, copy, sums, tail, asked)
        return copy, sums, tail, asked


def test_loads_of_a_declared_tensor_read_its_valid_part():
    x = rand(16, 32)
    copy = np.zeros_like(x)
    sums, tail, asked = (np.zeros((16, 1), np.float32) for _ in range(3))
    blockpipe.compile(DeclaredValid)(x, copy, sums, tail, asked)
    expected = np.zeros_like(x)
    expected[:, :20] = x[:, :20]
    np.testing.assert_array_equal(copy, expected)
    np.testing.assert_allclose(sums[:, 0], x[:, :20].sum(1), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(tail[:, 0], x[:, 16:20].sum(1), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(asked[:, 0], x[:, :20].sum(1), rtol=1e-5, atol=1e-5)


@pl.program
class NamedValid:
    """V is the extent of `lens`, so the kernel knows it at run time."""

    @pl.function(type=pl.FunctionType.InCore)
    def kernel(
        self,
        x: pl.Tensor[[16, 32], pl.FP32, pl.TensorView(valid_shape=[16, V], layout=pl.ND)],
        lens: pl.Tensor[[V], pl.FP32],
        sums: pl.Out[pl.Tensor[[16, 1], pl.FP32]],
    ):
        t = pl.load(x, [0, 0], [16, 32])
        sums = pl.store(pl.row_sum(t), [0, 0], sums)
        return sums

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[16, 32], pl.FP32],
        lens: pl.Tensor[[V], pl.FP32],
        sums: pl.Out[pl.Tensor[[16, 1], pl.FP32]],
    ):
        sums = self.kernel(x, lens, sums)
        return sums


def test_a_named_valid_size_is_the_extent_of_that_dim():
    compiled = blockpipe.compile(NamedValid)
    x = rand(16, 32)
    for valid in (5, 12, 32):
        sums = np.zeros((16, 1), np.float32)
        compiled(x, np.zeros(valid, np.float32), sums)
        np.testing.assert_allclose(sums[:, 0], x[:, :valid].sum(1), rtol=1e-5, atol=1e-5)


@pl.program
class ViewWithValid:
    """pypto's 06_paged_attention_dynamic pattern: the orchestration's view
    says its valid part, the kernel declares it with an unbound name and its
    load says how much to read."""

    @pl.function(type=pl.FunctionType.InCore)
    def kernel(
        self,
        s: pl.Tensor[[16, 32], pl.FP32, pl.TensorView(valid_shape=[16, UNBOUND], layout=pl.ND)],
        valid_len: pl.Scalar[pl.INDEX],
        sums: pl.Out[pl.Tensor[[16, 1], pl.FP32]],
    ):
        t = pl.load(s, [0, 0], [16, 32], valid_shape=[16, valid_len])
        sums = pl.store(pl.row_sum(t), [0, 0], sums)
        return sums

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[32, 32], pl.FP32],
        valid_len: pl.Scalar[pl.INDEX],
        sums: pl.Out[pl.Tensor[[16, 1], pl.FP32]],
    ):
        window = pl.slice(x, [16, 32], [16, 0], valid_shape=[16, valid_len])
        sums = self.kernel(window, valid_len, sums)
        return sums


def test_a_view_with_a_valid_shape_feeds_a_declared_kernel():
    compiled = blockpipe.compile(ViewWithValid)
    x = rand(32, 32)
    for valid in (7, 30):
        sums = np.zeros((16, 1), np.float32)
        compiled(x, valid, sums)
        np.testing.assert_allclose(sums[:, 0], x[16:, :valid].sum(1), rtol=1e-5, atol=1e-5)


def test_a_layout_other_than_nd_is_an_error_naming_it():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(
                self,
                x: pl.Tensor[
                    [16, 32],
                    pl.FP32,
                    pl.TensorView(
                        valid_shape=[16, 20],
                        layout=pl.TensorLayout.DN,  # error: layout=pl.TensorLayout.DN) is not
                    ),
                ],
                y: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
            ):
                return pl.store(pl.load(x, [0, 0], [16, 32]), [0, 0], y)

        return P

    located.expect_error(make, program_ir)


def test_a_valid_shape_of_another_rank_is_an_error():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(
                self,
                x: pl.Tensor[
                    [16, 32],
                    pl.FP32,
                    pl.TensorView(
                        # error: valid_shape has 1 dimensions but the tensor has 2
                        valid_shape=[20],
                        layout=pl.TensorLayout.ND,
                    ),
                ],
                y: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
            ):
                return pl.store(pl.load(x, [0, 0], [16, 32]), [0, 0], y)

        return P

    located.expect_error(make, program_ir)


def test_a_valid_size_past_its_dim_is_an_error():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(
                self,
                x: pl.Tensor[
                    [16, 32],
                    pl.FP32,
                    pl.TensorView(
                        valid_shape=[16, 33],  # error: valid_shape size 33 is outside [0, 32]
                        layout=pl.TensorLayout.ND,
                    ),
                ],
                y: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
            ):
                return pl.store(pl.load(x, [0, 0], [16, 32]), [0, 0], y)

        return P

    located.expect_error(make, program_ir)


def test_a_valid_shape_without_layout_is_an_error():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(
                self,
                # error: pl.TensorView needs layout= when valid_shape is given
                x: pl.Tensor[[16, 32], pl.FP32, pl.TensorView(valid_shape=[16, 20])],
                y: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
            ):
                return pl.store(pl.load(x, [0, 0], [16, 32]), [0, 0], y)

        return P

    located.expect_error(make, program_ir)


def test_a_load_of_an_unknown_valid_size_needs_its_own():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(
                self,
                x: pl.Tensor[
                    [16, 32], pl.FP32, pl.TensorView(valid_shape=[16, UNBOUND], layout=pl.ND)
                ],
                y: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
            ):
                t = pl.load(x, [0, 0], [16, 32])  # error: give the load a valid_shape
                return pl.store(t, [0, 0], y)

        return P

    located.expect_error(make, program_ir)


def test_an_orchestration_view_valid_size_past_its_shape_is_an_error():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(
                self,
                x: pl.Tensor[[16, 32], pl.FP32],
                y: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
            ):
                return pl.store(pl.load(x, [0, 0], [16, 32]), [0, 0], y)

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(
                self,
                x: pl.Tensor[[32, 32], pl.FP32],
                y: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
            ):
                v = pl.slice(x, [16, 32], [0, 0], valid_shape=[16, 40])  # error: size 40 is outside
                y = self.k(v, y)
                return y

        return P

    located.expect_error(make, program_ir)
