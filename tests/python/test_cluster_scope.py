"""`with pl.cluster():` (pypto's co-scheduling of AIC and AIV kernels on one
physical cluster) changes nothing blockpipe computes: its body runs as if
the `with` were not there, around launches in an orchestration, around
pl.at scopes in an Opaque or @pl.jit function and inside a kernel. Each
program runs on cpu-sim against NumPy; each misuse is a CompileError at the
user's line."""

import numpy as np
import pytest

import located

import blockpipe
import blockpipe.language as pl
from blockpipe.language.lowering import program_ir


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


@pl.program
class ClusteredLaunches:
    @pl.function(type=pl.FunctionType.InCore)
    def scale(
        self,
        x: pl.Tensor[[32, 16], pl.FP32],
        y: pl.Out[pl.Tensor[[32, 16], pl.FP32]],
    ) -> pl.Tensor[[32, 16], pl.FP32]:
        row = pl.tile.get_block_idx() * 8
        out = pl.store(pl.mul(pl.load(x, [row, 0], [8, 16]), 3.0), [row, 0], y)
        return out

    @pl.function(type=pl.FunctionType.InCore)
    def shift(
        self,
        y: pl.Tensor[[32, 16], pl.FP32],
        z: pl.Out[pl.Tensor[[32, 16], pl.FP32]],
    ) -> pl.Tensor[[32, 16], pl.FP32]:
        with pl.cluster():  # inside a kernel too
            t = pl.add(pl.load(y, [0, 0], [32, 16]), 1.0)
        out = pl.store(t, [0, 0], z)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[32, 16], pl.FP32],
        y: pl.Out[pl.Tensor[[32, 16], pl.FP32]],
        z: pl.Out[pl.Tensor[[32, 16], pl.FP32]],
    ) -> tuple[pl.Tensor[[32, 16], pl.FP32], pl.Tensor[[32, 16], pl.FP32]]:
        with pl.cluster():
            with pl.spmd(core_num=4):
                y = self.scale(x, y)
        with pl.cluster(name_hint="tail"):
            z = self.shift(y, z)
        return y, z


def test_cluster_around_launches_and_in_a_kernel_runs_its_body():
    x = rand(32, 16)
    y, z = np.zeros_like(x), np.zeros_like(x)
    blockpipe.compile(ClusteredLaunches)(x, y, z)
    np.testing.assert_allclose(y, 3 * x, rtol=1e-6)
    np.testing.assert_allclose(z, 3 * x + 1, rtol=1e-6)


@pl.jit
def clustered_scopes(x: pl.Tensor, tmp: pl.Out[pl.Tensor], out: pl.Out[pl.Tensor]):
    with pl.cluster():
        with pl.at(level=pl.Level.CORE_GROUP):
            tmp[:] = pl.exp(x)
    for i in pl.range(2):
        with pl.cluster(name_hint="rows"):
            with pl.at(level=pl.Level.CORE_GROUP):
                t = pl.load(tmp, [i * 8, 0], [8, 16])
                out = pl.store(pl.mul(t, 2.0), [i * 8, 0], out)
    return tmp, out


def test_cluster_around_at_scopes_runs_its_body():
    x = rand(16, 16)
    tmp, out = np.zeros_like(x), np.zeros_like(x)
    clustered_scopes(x, tmp, out)
    np.testing.assert_allclose(out, 2 * np.exp(x), rtol=1e-5)


@pl.program
class ClusteredOpaque:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(
        self,
        x: pl.Tensor[[16, 16], pl.FP32],
        out: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
    ) -> pl.Tensor[[16, 16], pl.FP32]:
        with pl.cluster():
            with pl.at(level=pl.Level.CORE_GROUP):
                out = pl.store(pl.sub(pl.load(x, [0, 0], [16, 16]), 0.5), [0, 0], out)
        return out


def test_cluster_in_an_opaque_function_runs_its_body():
    x = rand(16, 16)
    out = np.zeros_like(x)
    blockpipe.compile(ClusteredOpaque)(x, out)
    np.testing.assert_allclose(out, x - 0.5, rtol=1e-6)


def test_cluster_as_name_is_an_error():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(
                self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]
            ) -> pl.Tensor[[16, 16], pl.FP32]:
                with pl.cluster() as c:  # error: 'with pl.cluster(...) as ...' is not supported
                    y = self.k(x, y)
                return y

            @pl.function(type=pl.FunctionType.InCore)
            def k(
                self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]
            ) -> pl.Tensor[[16, 16], pl.FP32]:
                return pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], y)

        return P

    located.expect_error(make, program_ir)


def test_cluster_positional_argument_is_an_error():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(
                self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]
            ) -> pl.Tensor[[16, 16], pl.FP32]:
                with pl.cluster("c0"):  # error: pl.cluster takes no positional arguments
                    y = self.k(x, y)
                return y

            @pl.function(type=pl.FunctionType.InCore)
            def k(
                self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]
            ) -> pl.Tensor[[16, 16], pl.FP32]:
                return pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], y)

        return P

    located.expect_error(make, program_ir)


@pytest.mark.parametrize(
    "kind", [pl.FunctionType.Opaque, pl.FunctionType.Orchestration, pl.FunctionType.InCore]
)
def test_cluster_bad_keyword_is_an_error_in_every_kind(kind):
    def make():
        @pl.program
        class P:
            @pl.function(type=kind)
            def main(
                self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]
            ) -> pl.Tensor[[16, 16], pl.FP32]:
                with pl.cluster(core_num=2):  # error: pl.cluster has no argument core_num
                    y = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], y)
                return y

        return P

    located.expect_error(make, program_ir)


def test_cluster_name_hint_must_be_an_identifier_literal():
    def make():
        hint = "c0"

        @pl.jit
        def entry(x: pl.Tensor, out: pl.Out[pl.Tensor]):
            with pl.cluster(name_hint=hint):  # error: name_hint must be a string literal
                with pl.at(level=pl.Level.CORE_GROUP):
                    out[:] = pl.exp(x)
            return out

        return entry

    x = rand(16, 16)
    located.expect_error(make, lambda fn: fn.compile(x, np.zeros_like(x)))


def test_cluster_as_an_expression_is_an_error():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def main(
                self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]
            ) -> pl.Tensor[[16, 16], pl.FP32]:
                c = pl.cluster()  # error: pl.cluster is valid as 'with pl.cluster():'
                return pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], y)

        return P

    located.expect_error(make, program_ir)


def test_cluster_outside_a_blockpipe_function_raises():
    with pytest.raises(NotImplementedError, match="pl.cluster is only valid inside"):
        with pl.cluster():
            pass
