"""pl.assemble of a tensor into a window of another in an orchestration
(pypto's orchestration-level tensor.assemble): a one-block kernel of its
own copies it, as a pl.at scope would."""

import numpy as np
import pytest

from located import expect_error

import blockpipe
import blockpipe.language as pl

X = pl.Tensor[[4, 16], pl.FP32]
OUT = pl.Tensor[[3, 4, 16], pl.FP32]


@pl.program
class Stack:
    @pl.function(type=pl.FunctionType.InCore)
    def shifted(self, x: X, b: pl.Scalar[pl.INDEX], y: pl.Out[X]) -> X:
        y = pl.store(pl.add(pl.load(x, [0, 0], [4, 16]), pl.cast(b, pl.FP32)), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: X, out: pl.Out[OUT]) -> OUT:
        for b in pl.range(3):
            chunk = pl.create_tensor([4, 16], dtype=pl.FP32)
            chunk = self.shifted(x, b, chunk)
            out = pl.assemble(out, chunk, [b, 0, 0])
        return out


@pl.program
class Halves:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, x: X, out: pl.Out[pl.Tensor[[4, 32], pl.FP32]]):
        with pl.at(level=pl.Level.CORE_GROUP):
            doubled = pl.add(x, x)
            out = pl.assemble(out, doubled, [0, 16])
        out = pl.assemble(out, x, [0, 0])  # outside the scope: a kernel of its own
        return out


@pytest.mark.parametrize("interpret", [False, True], ids=["compiled", "interpreted"])
def test_an_orchestration_assembles_tensors_into_windows(monkeypatch, interpret):
    if interpret:
        monkeypatch.setenv("BLOCKPIPE_INTERPRET", "1")
    x = np.random.default_rng(13).standard_normal((4, 16)).astype(np.float32)
    out = np.zeros((3, 4, 16), np.float32)
    blockpipe.compile(Stack, quiet=True)(x, out)
    np.testing.assert_allclose(out, np.stack([x, x + 1, x + 2]), rtol=1e-6)


def test_an_opaque_functions_assembly_outside_its_scopes():
    x = np.random.default_rng(14).standard_normal((4, 16)).astype(np.float32)
    out = np.zeros((4, 32), np.float32)
    blockpipe.compile(Halves, quiet=True)(x, out)
    np.testing.assert_allclose(out, np.concatenate([x, x + x], axis=1))


def test_an_assembly_of_another_dtype_is_an_error_at_its_line():
    def program():
        @pl.program
        class WrongDtype:
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: pl.Tensor[[4, 16], pl.FP16], out: pl.Out[OUT]) -> OUT:
                out = pl.assemble(out, x, [0, 0, 0])  # error: different dtypes: FP16 and FP32
                return out

        return WrongDtype

    expect_error(program, lambda p: blockpipe.compile(p, quiet=True))
