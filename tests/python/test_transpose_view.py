"""pypto's `pl.tile.transpose_view`: a Mat tile read as its transpose by the
matmul it feeds (q @ k^T from k's rows), and the errors where a view is
read otherwise."""

import numpy as np
import pytest

import blockpipe
import blockpipe.language as pl

TARGETS = [dict(target="cpu-sim"), dict(target="cuda", device="cuda-emu")]


@pl.program
class QKt:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(
        self,
        q: pl.Tensor[[16, 64], pl.FP32],
        k: pl.Tensor[[32, 64], pl.FP32],
        s: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
        u: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
    ):
        q_l1 = pl.load(q, [0, 0], [16, 64], target_memory=pl.MemorySpace.Mat)
        k_nat = pl.load(k, [0, 0], [32, 64], target_memory=pl.MemorySpace.Mat)
        k_t = pl.tile.transpose_view(k_nat)  # [64, 32]
        q_l0 = pl.move(q_l1, target_memory=pl.MemorySpace.Left)
        k_l0 = pl.move(k_t, target_memory=pl.MemorySpace.Right)
        s = pl.store(pl.matmul(q_l0, k_l0), [0, 0], s)  # q @ k^T
        # A view of a view is the tile again; b_trans on a view flips back.
        k_again = pl.tile.transpose_view(pl.tile.transpose_view(k_nat))
        twice = pl.matmul(q_l0, pl.move(k_again, target_memory=pl.MemorySpace.Right), b_trans=True)
        u = pl.store(twice, [0, 0], u)
        return s, u

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        q: pl.Tensor[[16, 64], pl.FP32],
        k: pl.Tensor[[32, 64], pl.FP32],
        s: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
        u: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
    ):
        s, u = self.kernel(q, k, s, u)
        return s, u


@pytest.mark.parametrize("where", TARGETS, ids=["cpu-sim", "cuda-emu"])
def test_a_transposed_view_is_the_matmuls_transposed_right_operand(where):
    compiled = blockpipe.compile(QKt, quiet=True, **where)
    assert "transposed" in compiled.ir("final")
    rng = np.random.default_rng(0)
    q = rng.standard_normal((16, 64)).astype(np.float32)
    k = rng.standard_normal((32, 64)).astype(np.float32)
    s = np.zeros((16, 32), np.float32)
    u = np.zeros((16, 32), np.float32)
    compiled(q, k, s, u)
    np.testing.assert_allclose(s, q @ k.T, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(u, q @ k.T, rtol=1e-5, atol=1e-5)


def _program(body):
    """A kernel whose body ends in `body(k_view, out)`; the error is at the
    line of the misuse."""

    @pl.program
    class Misuse:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(
            self, k: pl.Tensor[[32, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 32], pl.FP32]]
        ) -> pl.Tensor[[64, 32], pl.FP32]:
            k_t = pl.tile.transpose_view(
                pl.load(k, [0, 0], [32, 64], target_memory=pl.MemorySpace.Mat)
            )
            return body(k_t, out)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self, k: pl.Tensor[[32, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 32], pl.FP32]]
        ) -> pl.Tensor[[64, 32], pl.FP32]:
            out = self.kernel(k, out)
            return out

    return Misuse


def stores_the_view(k_t, out):
    return pl.store(k_t, [0, 0], out)


def moves_the_view_to_vec(k_t, out):
    vec = pl.move(k_t, target_memory=pl.MemorySpace.Vec)
    return pl.store(vec, [0, 0], out)


@pytest.mark.parametrize(
    "body,message",
    [
        (stores_the_view, "pl.store's tile cannot be a pl.tile.transpose_view"),
        (moves_the_view_to_vec, "a pl.tile.transpose_view moves to Left or Right memory only"),
    ],
)
def test_a_view_read_otherwise_is_an_error_at_its_line(body, message):
    with pytest.raises(blockpipe.CompileError, match=message) as info:
        blockpipe.compile(_program(body), quiet=True)
    assert info.value.file.endswith("test_transpose_view.py")
    assert info.value.line == body.__code__.co_firstlineno + 1
