"""A launch may pass a tensor sized at run time to a kernel compiled for a
size (checked as it launches, naming the argument, the launch and the
parameter), and a tensor of a known size to a kernel parameter with
`pl.dynamic` dims (its size passed as the dynamic dim)."""

import numpy as np
import pytest

import blockpipe
import blockpipe.language as pl

M = pl.dynamic("M")


@pl.program
class Sized:
    @pl.function(type=pl.FunctionType.InCore)
    def fill(self, buf: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        return pl.store(pl.full([16, 64], dtype=pl.FP32, value=2.0), [0, 0], buf)

    @pl.function(type=pl.FunctionType.InCore)
    def scale(
        self,
        x: pl.Tensor[[M, 64], pl.FP32],
        buf: pl.Tensor[[16, 64], pl.FP32],
        y: pl.Out[pl.Tensor[[M, 64], pl.FP32]],
    ) -> pl.Tensor[[M, 64], pl.FP32]:
        row = pl.tile.get_block_idx() * 16
        t = pl.mul(pl.load(x, [row, 0], [16, 64]), pl.load(buf, [0, 0], [16, 64]))
        return pl.store(t, [row, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[64, 64], pl.FP32],
        width: pl.Scalar[pl.INDEX],
        y: pl.Out[pl.Tensor[[64, 64], pl.FP32]],
    ) -> pl.Tensor[[64, 64], pl.FP32]:
        # Sized at run time, given to kernels compiled for [16, 64].
        buf = pl.create_tensor([16, width], dtype=pl.FP32)
        buf = self.fill(buf)
        # x and y are [64, 64]: the kernel takes [M, 64].
        with pl.spmd(4):
            y = self.scale(x, buf, y)
        return y


def test_run_time_sized_and_static_tensors_meet_kernels_compiled_otherwise():
    compiled = blockpipe.compile(Sized, quiet=True)
    assert "rt::checkLaunchArgument(buf" in compiled.artifacts["orchestration/main.cpp"]
    x = np.random.default_rng(0).standard_normal((64, 64)).astype(np.float32)
    y = np.zeros_like(x)
    compiled(x, 64, y)
    np.testing.assert_allclose(y, 2 * x)


def test_a_run_time_size_the_kernel_was_not_compiled_for_fails_the_launch():
    compiled = blockpipe.compile(Sized, quiet=True)
    x = np.ones((64, 64), np.float32)
    y = np.zeros_like(x)
    with pytest.raises(blockpipe.ExecutionError) as info:
        compiled(x, 32, y)
    message = str(info.value)
    assert "argument 'buf' of the launch of 'fill' at " in message, message
    assert "test_launch_shapes.py:" in message and "(parameter 'buf')" in message, message
    assert "is 16x32, but the kernel was compiled for 16x64" in message, message
    assert not y.any()  # the call failed before any kernel wrote y


def test_a_known_size_that_disagrees_is_a_compile_error():
    @pl.program
    class Wrong:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16, 64], pl.FP32], y: pl.Out[pl.Tensor[[16, 64], pl.FP32]]):
            return pl.store(pl.load(x, [0, 0], [16, 64]), [0, 0], y)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16, 32], pl.FP32], y: pl.Out[pl.Tensor[[16, 64], pl.FP32]]):
            y = self.k(x, y)
            return y

    with pytest.raises(blockpipe.CompileError, match="argument of 'k' must be") as info:
        blockpipe.compile(Wrong, quiet=True)
    assert info.value.file.endswith("test_launch_shapes.py")
