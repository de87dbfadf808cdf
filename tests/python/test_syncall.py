"""pl.system.syncall: a barrier of every block of a sync_start launch (what
a block stored before it, every block sees after it); against numpy, and
the errors at the user's line."""

import numpy as np
import pytest

import located

import blockpipe
import blockpipe.language as pl

ROWS = 16


def rotate(blocks: int, sync_start: bool = True):
    @pl.program
    class Rotate:
        @pl.function
        def kernel(
            self,
            x: pl.Tensor[[blocks * ROWS, 64], pl.FP32],
            tmp: pl.Out[pl.Tensor[[blocks * ROWS, 64], pl.FP32]],
            out: pl.Out[pl.Tensor[[blocks * ROWS, 64], pl.FP32]],
        ):
            b = pl.tile.get_block_idx()
            n = pl.tile.get_block_num()
            tmp = pl.store(pl.mul(pl.load(x, [b * ROWS, 0], [ROWS, 64]), 2.0), [b * ROWS, 0], tmp)
            pl.system.syncall()
            # The next block's rows: stored by another block, before the barrier.
            nxt = (b + 1) % n
            out = pl.store(
                pl.add(pl.load(tmp, [nxt * ROWS, 0], [ROWS, 64]), 1.0), [b * ROWS, 0], out
            )
            return tmp, out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            x: pl.Tensor[[blocks * ROWS, 64], pl.FP32],
            tmp: pl.Out[pl.Tensor[[blocks * ROWS, 64], pl.FP32]],
            out: pl.Out[pl.Tensor[[blocks * ROWS, 64], pl.FP32]],
        ):
            with pl.spmd(blocks, sync_start=sync_start):
                # error: without sync_start: its blocks must all run at once
                tmp, out = self.kernel(x, tmp, out)
            return tmp, out

    return Rotate


@pytest.mark.parametrize("blocks", [2, 4, 8])
def test_blocks_see_what_others_stored_before_the_barrier(blocks):
    x = np.random.default_rng(blocks).standard_normal((blocks * ROWS, 64)).astype(np.float32)
    tmp, out = np.zeros_like(x), np.zeros_like(x)
    compiled = blockpipe.compile(rotate(blocks), quiet=True)
    for _ in range(3):  # the barrier opens again for the next launch
        compiled(x, tmp, out)
        np.testing.assert_array_equal(tmp, 2 * x)
        np.testing.assert_array_equal(out, np.roll(2 * x, -ROWS, axis=0) + 1)


def test_a_launch_without_sync_start_is_a_compile_error():
    line, _ = located.marked_line(rotate)
    with pytest.raises(blockpipe.CompileError) as info:
        blockpipe.compile(rotate(4, sync_start=False), quiet=True)
    assert (
        "calls pl.system.syncall (a barrier of all its blocks), without sync_start"
        in info.value.message
    )
    assert info.value.line == line, str(info.value)


@pl.program
class TooMany:
    @pl.function
    def kernel(self, x: pl.Tensor[[4, 64], pl.FP32], out: pl.Out[pl.Tensor[[4, 64], pl.FP32]]):
        pl.system.syncall(core_type="aiv_only")
        return pl.store(pl.load(x, [0, 0], [4, 64]), [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[4, 64], pl.FP32],
        n: pl.Scalar[pl.INDEX],
        out: pl.Out[pl.Tensor[[4, 64], pl.FP32]],
    ):
        with pl.spmd(n, sync_start=True):
            out = self.kernel(x, out)
        return out


def test_more_blocks_than_core_groups_fail_the_launch():
    out = np.zeros((4, 64), np.float32)
    compiled = blockpipe.compile(TooMany, quiet=True)
    with pytest.raises(RuntimeError, match="sync_start"):
        compiled(np.ones((4, 64), np.float32), 100000, out)
    assert not out.any()
    compiled(np.ones((4, 64), np.float32), 2, out)
    assert (out == 1).all()


def a_barrier_across_both_halves():
    @pl.program
    class Mix:
        @pl.function
        def kernel(self, x: pl.Tensor[[4, 64], pl.FP32], out: pl.Out[pl.Tensor[[4, 64], pl.FP32]]):
            # error: a barrier across both halves is not supported by blockpipe
            pl.system.syncall(core_type="mix")
            return pl.store(pl.load(x, [0, 0], [4, 64]), [0, 0], out)

    return Mix


def an_unknown_system_name():
    @pl.program
    class Ffts:
        @pl.function
        def kernel(self, x: pl.Tensor[[4, 64], pl.FP32], out: pl.Out[pl.Tensor[[4, 64], pl.FP32]]):
            pl.system.set_ffts(x)  # error: pl.system.set_ffts is not supported by blockpipe
            return pl.store(pl.load(x, [0, 0], [4, 64]), [0, 0], out)

    return Ffts


@pytest.mark.parametrize("factory", [a_barrier_across_both_halves, an_unknown_system_name])
def test_errors_name_the_line(factory):
    located.expect_error(factory, lambda p: blockpipe.compile(p, quiet=True))
