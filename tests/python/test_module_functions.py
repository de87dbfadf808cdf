"""`@pl.function` kernels defined outside a `@pl.program` class (at module
level, or in the factory that makes the class), called by name from an
orchestration: each becomes a function of the program that calls it and is
launched, as in pypto (its examples/models/04_paged_attention.py). Plain
helpers stay inlined. Each program runs on cpu-sim against NumPy."""

import numpy as np
import pytest

import located

import blockpipe
import blockpipe.language as pl

V = pl.Tensor[[32, 64], pl.FP32]
ROW = pl.Tensor[[8, 64], pl.FP32]


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


@pl.function(type=pl.FunctionType.InCore)
def scale_add(x: V, y: V, out: pl.Out[V]) -> V:
    """out = 2 x + y, rows split over the launch's blocks."""
    row = pl.tile.get_block_idx() * 8
    t = pl.add(pl.mul(pl.load(x, [row, 0], [8, 64]), 2.0), pl.load(y, [row, 0], [8, 64]))
    return pl.store(t, [row, 0], out)


@pl.function(type=pl.FunctionType.InCore)
def bump(x: pl.InOut[V], k: pl.Scalar[pl.FP32]) -> V:
    """x += k, in place: the orchestration's tensor is the kernel's."""
    for r in pl.range(0, 32, 8):
        x = pl.store(pl.add(pl.load(x, [r, 0], [8, 64]), k), [r, 0], x)
    return x


@pl.program
class Chain:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: V, y: V, out: pl.Out[V]) -> V:
        t = pl.create_tensor([32, 64], dtype=pl.FP32)
        with pl.spmd(4):
            t = scale_add(x, y, t)
        t = bump(t, 1.5)
        with pl.spmd(4):
            out = scale_add(t, y, out)
        return out


@pl.program
class Single:
    """Another program launching the same kernel."""

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: V, out: pl.Out[V]) -> V:
        with pl.spmd(4):
            out = scale_add(x, x, out)
        return out


def test_module_kernel_is_launched_by_the_orchestration():
    x, y = rand(32, 64), rand(32, 64, seed=1)
    out = np.zeros_like(x)
    compiled = blockpipe.compile(Chain)
    compiled(x, y, out)
    np.testing.assert_allclose(out, 2 * (2 * x + y + 1.5) + y, rtol=1e-5, atol=1e-5)
    ir = compiled.ir("bp-verify-capacity")
    # Launched as functions of the program, not inlined into main.
    assert "bp.launch @scale_add" in ir and "bp.launch @bump" in ir
    assert ir.count("func.func @scale_add") == 1


def test_one_module_kernel_serves_two_programs():
    x, y = rand(32, 64, seed=2), rand(32, 64, seed=3)
    out1, out2 = np.zeros_like(x), np.zeros_like(x)
    blockpipe.compile(Chain)(x, y, out1)
    blockpipe.compile(Single)(x, out2)
    np.testing.assert_allclose(out1, 2 * (2 * x + y + 1.5) + y, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out2, 3 * x, rtol=1e-5, atol=1e-5)


def launch_twice(x, y, out):
    """A plain helper: inlined into the orchestration, its kernel calls
    launched."""
    with pl.spmd(4):
        out = scale_add(x, y, out)
    return bump(out, -0.5)


def build_program(factor: float):
    """pypto's way: kernels and program made by a factory; the kernel's
    constant comes from the factory's argument."""

    @pl.function(type=pl.FunctionType.InCore)
    def scaled(x: ROW, out: pl.Out[ROW]) -> ROW:
        return pl.store(pl.mul(pl.load(x, [0, 0], [8, 64]), factor), [0, 0], out)

    @pl.program
    class Factory:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: ROW, out: pl.Out[ROW]) -> ROW:
            out = scaled(x, out)
            return out

    return Factory


def test_kernel_made_by_a_factory():
    x = rand(8, 64, seed=4)
    for factor in (2.0, -3.0):
        out = np.zeros_like(x)
        blockpipe.compile(build_program(factor))(x, out)
        np.testing.assert_allclose(out, factor * x, rtol=1e-6)


@pl.program
class ThroughHelper:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: V, y: V, out: pl.Out[V]) -> V:
        out = launch_twice(x, y, out)
        return out


def test_kernels_called_in_an_inlined_helper_are_launched():
    x, y = rand(32, 64, seed=5), rand(32, 64, seed=6)
    out = np.zeros_like(x)
    compiled = blockpipe.compile(ThroughHelper)
    compiled(x, y, out)
    np.testing.assert_allclose(out, 2 * x + y - 0.5, rtol=1e-5, atol=1e-5)
    assert "bp.launch @bump" in compiled.ir("bp-verify-capacity")


def clashing_program():
    @pl.program
    class Clash:
        @pl.function(type=pl.FunctionType.InCore)
        def bump(self, x: pl.InOut[V], k: pl.Scalar[pl.FP32]) -> V:
            return x

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: V, out: pl.Out[V]) -> V:
            with pl.spmd(4):
                out = scale_add(x, x, out)
            out = bump(out, 1.0)  # error: and the program's function 'bump'
            return out

    return Clash


def test_a_module_kernel_named_like_a_method_is_an_error():
    located.expect_error(clashing_program, blockpipe.compile)


def bad_kernel_program():
    @pl.function(type=pl.FunctionType.InCore)
    def broken(x: ROW, out: pl.Out[ROW]) -> ROW:
        t = pl.load(x, [0, 0], [8, 64])
        return pl.store(pl.matmul(t, t), [0, 0], out)  # error: pl.matmul

    @pl.program
    class Broken:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: ROW, out: pl.Out[ROW]) -> ROW:
            out = broken(x, out)
            return out

    return Broken


def test_an_error_in_a_module_kernel_names_its_line():
    with pytest.raises(blockpipe.CompileError) as info:
        blockpipe.compile(bad_kernel_program())
    assert info.value.file == __file__
    assert info.value.line == located.marked_line(bad_kernel_program)[0]
