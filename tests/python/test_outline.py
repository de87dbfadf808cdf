"""pypto's tensor-level scopes: `pl.FunctionType.Opaque` functions whose
`with pl.at(level=pl.Level.CORE_GROUP):` and `for i in pl.spmd(n):` bodies
work on tensors (`pl.add(a, b)` on tensors, `pl.slice`, `pl.assemble`), a
vector result as a matmul operand (vec -> mat -> left through a pipe), run
against numpy; misuse is a CompileError at the user's line."""

import numpy as np
import pytest

import located

import blockpipe
import blockpipe.language as pl

M, K, N, NB = 32, 64, 256, 64


def rand(*shape, seed=0):
    return np.random.default_rng(seed + sum(shape)).standard_normal(shape).astype(np.float32)


@pl.program
class VecToCube:
    """(a + b) @ (a - b): both matmul operands are vector results."""

    @pl.function(type=pl.FunctionType.Opaque)
    def main(
        self,
        a: pl.Tensor[[32, 32], pl.FP32],
        b: pl.Tensor[[32, 32], pl.FP32],
        output: pl.Out[pl.Tensor[[32, 32], pl.FP32]],
    ) -> pl.Tensor[[32, 32], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            s = pl.add(a, b)
            d = pl.sub(a, b)
            output = pl.assemble(output, pl.matmul(s, d), [0, 0])
        return output


@pl.program
class Accumulate:
    """c += (a + 1) @ b over column blocks: c is a plain tensor the scope
    assigns, so it is written (InOut)."""

    @pl.function(type=pl.FunctionType.Opaque)
    def main(
        self,
        a: pl.Tensor[[M, K], pl.FP32],
        b: pl.Tensor[[K, N], pl.FP32],
        c: pl.Tensor[[M, N], pl.FP32],
    ) -> pl.Tensor[[M, N], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.NONE)]):
            for cb in pl.range(0, N // NB // 2):
                for ci in pl.range(0, 2):
                    n0 = (cb * 2 + ci) * NB
                    prev = pl.slice(c, [M, NB], [0, n0])
                    a1 = pl.add(a, 1.0)
                    c = pl.assemble(
                        c, pl.add(prev, pl.matmul(a1, pl.slice(b, [K, NB], [0, n0]))), [0, n0]
                    )
        return c


@pl.program
class Blocks:
    """One block per 16 rows: the pl.spmd variable is the block index, and
    the kernel is named by name_hint."""

    @pl.function(type=pl.FunctionType.Opaque)
    def main(
        self,
        a: pl.Tensor[[64, 32], pl.FP32],
        w: pl.Tensor[[32, 16], pl.FP32],
        out: pl.Out[pl.Tensor[[64, 16], pl.FP32]],
    ) -> pl.Tensor[[64, 16], pl.FP32]:
        for blk in pl.spmd(4, name_hint="rows"):
            r = blk * 16
            x = pl.mul(pl.slice(a, [16, 32], [r, 0]), 2.0)
            y = pl.relu(pl.matmul(x, w))
            out = pl.assemble(out, y, [r, 0])
        return out


@pl.program
class TwoScopes:
    """Two scopes in order; the second reads what the first wrote."""

    @pl.function(type=pl.FunctionType.Opaque)
    def main(
        self,
        a: pl.Tensor[[16, 16], pl.FP32],
        t: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
        out: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
    ):
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.assemble(t, pl.exp(a), [0, 0])
        with pl.at(level=pl.Level.CORE_GROUP):
            out = pl.assemble(out, pl.add(t, a), [0, 0])
        return t, out


def test_vector_results_feed_the_cube():
    a, b = rand(32, 32), rand(32, 32, seed=1)
    out = np.zeros((32, 32), np.float32)
    blockpipe.compile(VecToCube)(a, b, out)
    np.testing.assert_allclose(out, (a + b) @ (a - b), rtol=1e-4, atol=1e-4)


def test_an_assigned_input_is_written_back():
    a, b, c = rand(M, K), rand(K, N, seed=2), rand(M, N, seed=3)
    expected = c + (a + 1) @ b
    compiled = blockpipe.compile(Accumulate)
    result = compiled(a, b, c)
    np.testing.assert_allclose(c, expected, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(result, expected, rtol=1e-4, atol=1e-4)
    ir = compiled.ir()
    assert "@main_incore_0" in ir and "core_num(1)" in ir


def test_spmd_scope_runs_one_kernel_per_block():
    a, w = rand(64, 32), rand(32, 16, seed=4)
    out = np.zeros((64, 16), np.float32)
    compiled = blockpipe.compile(Blocks)
    compiled(a, w, out)
    np.testing.assert_allclose(out, np.maximum((2 * a) @ w, 0), rtol=1e-4, atol=1e-4)
    assert "bp.launch @rows" in compiled.ir() and "core_num(4)" in compiled.ir()


def test_scopes_run_in_order():
    a = rand(16, 16)
    t, out = np.zeros_like(a), np.zeros_like(a)
    blockpipe.compile(TwoScopes)(a, t, out)
    np.testing.assert_allclose(t, np.exp(a), rtol=1e-5)
    np.testing.assert_allclose(out, np.exp(a) + a, rtol=1e-5, atol=1e-6)


SLOT_SHAPE = [32, 32]


def slots_program(variant):
    """exp(a @ b) with the pipe between matmul and exp sized by the scope's
    optimizations (pl.at's arguments are read from the source, so each
    variant is written out)."""
    T = pl.Tensor[SLOT_SHAPE, pl.FP32]

    if variant == "cross_core_slot":

        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Opaque)
            def main(self, a: T, b: T, out: pl.Out[T]) -> T:
                with pl.at(
                    level=pl.Level.CORE_GROUP, optimizations=[pl.cross_core_slot(slot_num=5)]
                ):
                    out = pl.assemble(out, pl.exp(pl.matmul(a, b)), [0, 0])
                return out
    elif variant == "split_and_slots":

        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Opaque)
            def main(self, a: T, b: T, out: pl.Out[T]) -> T:
                with pl.at(
                    level=pl.Level.CORE_GROUP,
                    optimizations=[pl.split(pl.SplitMode.UP_DOWN), pl.cross_core_slot(slot_num=3)],
                ):
                    out = pl.assemble(out, pl.exp(pl.matmul(a, b)), [0, 0])
                return out
    elif variant == "split_slot_num":

        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Opaque)
            def main(self, a: T, b: T, out: pl.Out[T]) -> T:
                with pl.at(
                    level=pl.Level.CORE_GROUP,
                    optimizations=[pl.split(pl.SplitMode.LEFT_RIGHT, slot_num=6)],
                ):
                    out = pl.assemble(out, pl.exp(pl.matmul(a, b)), [0, 0])
                return out
    else:

        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Opaque)
            def main(self, a: T, b: T, out: pl.Out[T]) -> T:
                with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.NONE)]):
                    out = pl.assemble(out, pl.exp(pl.matmul(a, b)), [0, 0])
                return out

    return P


@pytest.mark.parametrize(
    "variant,slots",
    [("cross_core_slot", 5), ("split_and_slots", 3), ("split_slot_num", 6), ("default", None)],
)
def test_scope_slot_num_sizes_the_pipe(variant, slots):
    a, b = rand(32, 32) / 8, rand(32, 32, seed=1) / 8
    out = np.zeros((32, 32), np.float32)
    compiled = blockpipe.compile(slots_program(variant))
    compiled(a, b, out)
    np.testing.assert_allclose(out, np.exp(a @ b), rtol=1e-4, atol=1e-5)
    inits = [line for line in compiled.ir("final").splitlines() if "bp.initialize_pipe" in line]
    assert len(inits) == 2
    # The ring is slots x a 32x32 f32 tile in the pipe buffer (without
    # slot_num: the target's default for one direction, 8).
    for line in inits:
        assert ("slot_num(" not in line) if slots is None else (f"slot_num({slots})" in line)
        assert f"!bp.tensor<{(slots or 8) * 32 * 32 * 4}xi8>" in line


def compile_quiet(program):
    return blockpipe.compile(program, quiet=True)


def opaque_without_scope():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.Opaque)  # error: has no scope to run
        def main(self, a: pl.Tensor[[16, 16], pl.FP32]):
            return

    return P


def scope_at_host_level():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.Opaque)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
            with pl.at(level=pl.Level.HOST):  # error: pl.at(level=pl.Level.HOST) is not supported
                o = pl.assemble(o, pl.exp(a), [0, 0])
            return o

    return P


def scope_writes_a_local_scalar():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.Opaque)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
            n = pl.tensor.dim(a, 0) + pl.tensor.dim(o, 1)
            with pl.at(level=pl.Level.CORE_GROUP):  # error: is written: a tensor, got
                n = n + 1
                o = pl.assemble(o, pl.add(a, a), [0, 0])
            return o

    return P


def scope_window_too_big():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.Opaque)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
            with pl.at(level=pl.Level.CORE_GROUP):
                x = pl.slice(a, [16, 16, 1], [0, 0])  # error: pl.slice's shape has 3 dimensions
                o = pl.assemble(o, x, [0, 0])
            return o

    return P


def at_inside_a_kernel():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32], o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
            # error: pl.at scopes are outlined at the top level
            with pl.at(level=pl.Level.CORE_GROUP):
                o = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], o)
            return o

    return P


def name_taken():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.InCore)
        def main_incore_0(
            self, a: pl.Tensor[[16, 16], pl.FP32], o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]
        ):
            o = pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], o)
            return o

        @pl.function(type=pl.FunctionType.Opaque)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
            with pl.at(level=pl.Level.CORE_GROUP):  # error: would be named 'main_incore_0'
                o = pl.assemble(o, pl.exp(a), [0, 0])
            return o

    return P


def slots_above_the_target():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.Opaque)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
            # error: slot_num 65 is more than the 64 slots a ring may have on target 'cpu-sim'
            with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.cross_core_slot(slot_num=65)]):
                o = pl.assemble(o, pl.exp(pl.matmul(a, a)), [0, 0])
            return o

    return P


def slots_given_twice():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.Opaque)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
            with pl.at(
                level=pl.Level.CORE_GROUP,
                optimizations=[
                    pl.split(pl.SplitMode.NONE, slot_num=2),
                    # error: gives slot_num twice
                    pl.cross_core_slot(slot_num=4),
                ],
            ):
                o = pl.assemble(o, pl.exp(a), [0, 0])
            return o

    return P


def slots_not_positive():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.Opaque)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
            # error: pl.cross_core_slot's slot_num must be a positive integer
            with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.cross_core_slot(slot_num=0)]):
                o = pl.assemble(o, pl.exp(a), [0, 0])
            return o

    return P


def cross_core_slot_in_a_kernel():
    @pl.program
    class P:
        @pl.function
        def k(self, a: pl.Tensor[[16, 16], pl.FP32], o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
            pl.cross_core_slot(slot_num=2)  # error: only valid in pl.at(..., optimizations=[...])
            return pl.store(pl.load(a, [0, 0], [16, 16]), [0, 0], o)

    return P


@pytest.mark.parametrize(
    "factory",
    [
        opaque_without_scope,
        scope_at_host_level,
        scope_writes_a_local_scalar,
        scope_window_too_big,
        at_inside_a_kernel,
        name_taken,
        slots_above_the_target,
        slots_given_twice,
        slots_not_positive,
        cross_core_slot_in_a_kernel,
    ],
)
def test_misuse_is_an_error_at_the_line(factory):
    located.expect_error(factory, compile_quiet)


def test_a_failing_scope_leaves_outputs_untouched():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.Opaque)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], o: pl.Tensor[[16, 16], pl.FP32]):
            with pl.at(level=pl.Level.CORE_GROUP):
                o = pl.assemble(
                    o, pl.exp(pl.slice(a, [16, 16], [pl.tile.get_block_idx() + 4, 0])), [0, 0]
                )
            return o

    o = np.full((16, 16), 7.0, np.float32)
    with pytest.raises(
        blockpipe.RuntimeError if hasattr(blockpipe, "RuntimeError") else Exception
    ) as info:
        blockpipe.compile(P, quiet=True)(rand(16, 16), o)
    assert "test_outline.py" in str(info.value)
    assert (o == 7.0).all()
