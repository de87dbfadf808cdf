"""pl.matmul_acc(acc, a, b, init_cond=c): where c holds, the product starts
the accumulation afresh (acc's content unread), else it is added to acc —
pypto's split-K idiom without a peeled first step. A run-time condition is
an if over the two forms; a compile-time one picks one."""

import numpy as np
import pytest

from located import expect_error

import blockpipe
import blockpipe.language as pl

MAT, LEFT, RIGHT, ACC = (
    pl.MemorySpace.Mat,
    pl.MemorySpace.Left,
    pl.MemorySpace.Right,
    pl.MemorySpace.Acc,
)
M, K, N, KT = 32, 128, 16, 32
STALE = 7.0  # the accumulator's content before the loop: a fresh start must not read it


def _split_k(fresh_at):
    """A K loop accumulating into an Acc tile of STALEs, starting afresh on
    the step whose k0 is `fresh_at` (a run-time comparison)."""

    @pl.program
    class SplitK:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(
            self,
            a: pl.Tensor[[M, K], pl.FP32],
            b: pl.Tensor[[K, N], pl.FP32],
            c: pl.Out[pl.Tensor[[M, N], pl.FP32]],
        ):
            acc = pl.full([M, N], dtype=pl.FP32, value=STALE, target_memory=ACC)
            for k0 in pl.range(0, K, KT):
                a_l0 = pl.move(pl.load(a, [0, k0], [M, KT], target_memory=MAT), target_memory=LEFT)
                b_l0 = pl.move(pl.load(b, [k0, 0], [KT, N], target_memory=MAT), target_memory=RIGHT)
                acc = pl.matmul_acc(acc, a_l0, b_l0, init_cond=(k0 == fresh_at))
            c = pl.store(acc, [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            a: pl.Tensor[[M, K], pl.FP32],
            b: pl.Tensor[[K, N], pl.FP32],
            c: pl.Out[pl.Tensor[[M, N], pl.FP32]],
        ):
            c = self.kernel(a, b, c)
            return c

    return SplitK


def _once(fresh):
    """One product into an Acc tile of STALEs, init_cond=`fresh` (a bool
    known at compile time)."""

    @pl.program
    class Once:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(
            self,
            a: pl.Tensor[[M, KT], pl.FP32],
            b: pl.Tensor[[KT, N], pl.FP32],
            c: pl.Out[pl.Tensor[[M, N], pl.FP32]],
        ):
            acc = pl.full([M, N], dtype=pl.FP32, value=STALE, target_memory=ACC)
            a_l1 = pl.load(a, [0, 0], [M, KT], target_memory=MAT)
            b_l1 = pl.load(b, [0, 0], [KT, N], target_memory=MAT)
            acc = pl.tile.matmul_acc(acc, a_l1, b_l1, init_cond=fresh)
            c = pl.store(acc, [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            a: pl.Tensor[[M, KT], pl.FP32],
            b: pl.Tensor[[KT, N], pl.FP32],
            c: pl.Out[pl.Tensor[[M, N], pl.FP32]],
        ):
            c = self.kernel(a, b, c)
            return c

    return Once


def _run(program, k, monkeypatch, interpret):
    if interpret:
        monkeypatch.setenv("BLOCKPIPE_INTERPRET", "1")
    rng = np.random.default_rng(5)
    a = rng.standard_normal((M, k)).astype(np.float32)
    b = rng.standard_normal((k, N)).astype(np.float32)
    c = np.zeros((M, N), np.float32)
    blockpipe.compile(program, quiet=True)(a, b, c)
    return a, b, c


MODES = pytest.mark.parametrize("interpret", [False, True], ids=["compiled", "interpreted"])


@MODES
@pytest.mark.parametrize(
    "fresh_at, from_step",
    [(0, 0), (K - KT, K - KT), (-1, None)],
    ids=["first-step", "last-step", "never"],
)
def test_a_run_time_init_cond_starts_afresh_where_it_holds(
    monkeypatch, interpret, fresh_at, from_step
):
    a, b, c = _run(_split_k(fresh_at), K, monkeypatch, interpret)
    if from_step is None:
        expected = STALE + a @ b
    else:
        expected = a[:, from_step:] @ b[from_step:, :]
    np.testing.assert_allclose(c, expected, rtol=1e-4, atol=1e-4)


@MODES
@pytest.mark.parametrize("fresh", [True, False])
def test_a_compile_time_init_cond_picks_one_form(monkeypatch, interpret, fresh):
    a, b, c = _run(_once(fresh), KT, monkeypatch, interpret)
    np.testing.assert_allclose(c, a @ b + (0 if fresh else STALE), rtol=1e-4, atol=1e-4)


def test_init_cond_must_be_a_condition():
    def program():
        @pl.program
        class BadCondition:
            @pl.function(type=pl.FunctionType.InCore)
            def kernel(
                self,
                a: pl.Tensor[[M, KT], pl.FP32],
                b: pl.Tensor[[KT, N], pl.FP32],
                c: pl.Out[pl.Tensor[[M, N], pl.FP32]],
            ):
                acc = pl.full([M, N], dtype=pl.FP32, value=0.0, target_memory=ACC)
                a_l1 = pl.load(a, [0, 0], [M, KT], target_memory=MAT)
                b_l1 = pl.load(b, [0, 0], [KT, N], target_memory=MAT)
                # error: init_cond is a condition
                acc = pl.matmul_acc(acc, a_l1, b_l1, init_cond=a_l1)
                c = pl.store(acc, [0, 0], c)
                return c

        return BadCondition

    expect_error(program, lambda p: blockpipe.compile(p, quiet=True))
