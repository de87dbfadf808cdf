"""pypto's names that blockpipe lacks: defining a program that uses one never
fails (no AttributeError or TypeError while the module or class is
defined); compiling it is a CompileError naming the name at the user's line,
and the file's other programs compile and run. Unknown names that are not
pypto's stay AttributeErrors."""

import numpy as np
import pytest

import located

import blockpipe
import blockpipe.language as pl
from blockpipe.language.unsupported import NotSupportedError


def build(program):
    return blockpipe.compile(program, quiet=True)


def uses_system_ffts():
    @pl.program
    class Ffts:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
            t = pl.load(x, [0, 0], [16, 16])
            pl.system.set_ffts(x)  # error: pl.system.set_ffts is not supported by blockpipe
            return pl.store(t, [0, 0], y)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
            y = self.k(x, y)
            return y

    return Ffts


def uses_a_reserved_buffer():
    @pl.program
    class Reserve:
        @pl.function(type=pl.FunctionType.AIV)
        def k(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
            v = pl.addc(x, x, x)  # error: pl.addc is not supported by blockpipe
            return pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], y)

    return Reserve


def uses_function_attrs():
    @pl.program
    class Dual:
        # error: pl.function(attrs=...) is not supported
        @pl.function(type=pl.FunctionType.AIV, attrs={"split_aiv": True})
        def k(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
            return pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], y)

    return Dual


def uses_a_host_scope():
    @pl.program
    class At:
        @pl.function(type=pl.FunctionType.Opaque)
        def k(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
            # error: pl.at(level=pl.Level.HOST) is not supported by blockpipe
            with pl.at(level=pl.Level.HOST):
                y = pl.assemble(y, pl.exp(x), [0, 0])
            return y

    return At


def uses_an_int4_tensor():
    @pl.program
    class Int4:
        @pl.function(type=pl.FunctionType.InCore)
        def k(
            self,
            x: pl.Tensor[[16, 16], pl.INT4],  # error: pl.INT4 is not supported by blockpipe
            y: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
        ):
            return pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], y)

    return Int4


@pytest.mark.parametrize(
    "factory",
    [
        uses_system_ffts,
        uses_a_reserved_buffer,
        uses_function_attrs,
        uses_a_host_scope,
        uses_an_int4_tensor,
    ],
)
def test_a_pypto_name_blockpipe_lacks_is_an_error_at_its_line(factory):
    factory()  # defining the program does not fail
    located.expect_error(factory, build)


def test_the_other_programs_of_the_file_still_compile_and_run():
    # Defined next to programs that use pypto names blockpipe lacks.
    for factory in (uses_system_ffts, uses_a_reserved_buffer, uses_a_host_scope):
        factory()

    @pl.program
    class Sigmoid:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
            t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.load(x, [0, 0], [16, 16])
            return pl.store(pl.sigmoid(t), [0, 0], y)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
            y = self.k(x, y)
            return y

    x = np.linspace(-4, 4, 256, dtype=np.float32).reshape(16, 16)
    y = np.zeros_like(x)
    build(Sigmoid)(x, y)
    np.testing.assert_allclose(y, 1 / (1 + np.exp(-x.astype(np.float64))), rtol=1e-6)


def test_a_function_decorated_with_a_lacking_pl_jit_kind_raises_when_called():
    # pl.jit itself is supported (test_jit.py); pl.jit.host is not.
    @pl.jit.host
    def double(x):
        return x * 2

    with pytest.raises(
        NotSupportedError, match="pl.jit.host is not supported by blockpipe: 'double' cannot run"
    ):
        double(np.ones(4))


def test_names_pypto_does_not_have_stay_attribute_errors():
    with pytest.raises(AttributeError, match="has no attribute 'lod'"):
        pl.lod  # noqa: B018 - the attribute access is the test
    with pytest.raises(AttributeError):
        pl.FunctionType.Opaqe  # noqa: B018 - the attribute access is the test
    assert pl.Mem.Vec is pl.MemorySpace.Vec
