"""pl.split_aiv regions: code written per AIV lane of a core group, each
lane on the half of a cube tile that `pl.aiv_shard` gives it, nested in
pl.range and pl.pipeline loops, sibling regions of different modes in one
kernel; run against numpy (a lane that did not run leaves its half of the
output unwritten), and misuse is a CompileError at the user's line."""

import numpy as np
import pytest

import located

import blockpipe
import blockpipe.language as pl

S = 32
MODES = [pl.SplitMode.UP_DOWN, pl.SplitMode.LEFT_RIGHT]


def rand(*shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed + sum(shape)).standard_normal(shape).astype(dtype)


def compile_quiet(program):
    return blockpipe.compile(program, quiet=True)


def nested(mode, loop, dtype=pl.FP32):
    """out = (a @ b) * 2 + 1, each lane storing its half, in a loop."""
    pipelined = loop == "pipeline"
    # The lane's half starts half a tile down (UP_DOWN) or across.
    down, across = (S // 2, 0) if mode is pl.SplitMode.UP_DOWN else (0, S // 2)

    @pl.program
    class Nested:
        @pl.function(type=pl.FunctionType.Opaque)
        def main(
            self,
            a: pl.Tensor[[S, S], dtype],
            b: pl.Tensor[[S, S], dtype],
            out: pl.Out[pl.Tensor[[S, S], pl.FP32]],
        ) -> pl.Tensor[[S, S], pl.FP32]:
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="qk"):
                a_l1 = pl.load(a, [0, 0], [S, S], target_memory=pl.MemorySpace.Mat)
                b_l1 = pl.load(b, [0, 0], [S, S], target_memory=pl.MemorySpace.Mat)
                qk = pl.matmul(
                    pl.move(a_l1, target_memory=pl.MemorySpace.Left),
                    pl.move(b_l1, target_memory=pl.MemorySpace.Right),
                )
                if not pipelined:
                    for _i in pl.range(2):
                        for aiv_id in pl.split_aiv(2, mode=mode):
                            scaled = pl.add(pl.mul(pl.aiv_shard(qk), 2.0), 1.0)
                            out = pl.store(scaled, [aiv_id * down, aiv_id * across], out)
                else:
                    for _i in pl.pipeline(2, stage=2):
                        for aiv_id in pl.split_aiv(2, mode=mode):
                            scaled = pl.add(pl.mul(pl.aiv_shard(qk), 2.0), 1.0)
                            out = pl.store(scaled, [aiv_id * down, aiv_id * across], out)
            return out

    return Nested


@pytest.mark.parametrize("loop", ["range", "pipeline"])
@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.name)
def test_region_nested_in_a_loop(mode, loop):
    a, b = rand(S, S), rand(S, S, seed=1)
    out = np.zeros((S, S), np.float32)
    compile_quiet(nested(mode, loop))(a, b, out)
    np.testing.assert_allclose(out, (a @ b) * 2 + 1, rtol=1e-4, atol=1e-4)


def test_region_in_16_bit():
    a, b = rand(S, S, dtype=np.float16), rand(S, S, seed=1, dtype=np.float16)
    out = np.zeros((S, S), np.float32)
    compile_quiet(nested(pl.SplitMode.LEFT_RIGHT, "range", pl.FP16))(a, b, out)
    ref = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(out, ref * 2 + 1, rtol=1e-3, atol=1e-3)


def multi_mode():
    @pl.program
    class MultiMode:
        @pl.function(type=pl.FunctionType.Opaque)
        def main(
            self,
            a: pl.Tensor[[S, S], pl.FP32],
            b: pl.Tensor[[S, S], pl.FP32],
            out_ud: pl.Out[pl.Tensor[[S, S], pl.FP32]],
            out_lr: pl.Out[pl.Tensor[[S, 2], pl.FP32]],
        ):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="qk"):
                a_l1 = pl.load(a, [0, 0], [S, S], target_memory=pl.MemorySpace.Mat)
                b_l1 = pl.load(b, [0, 0], [S, S], target_memory=pl.MemorySpace.Mat)
                a_left = pl.move(a_l1, target_memory=pl.MemorySpace.Left)
                b_right = pl.move(b_l1, target_memory=pl.MemorySpace.Right)
                qk = pl.matmul(a_left, b_right)
                for aiv_id in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
                    out_ud = pl.store(pl.exp(pl.aiv_shard(qk)), [aiv_id * (S // 2), 0], out_ud)
                qk2 = pl.matmul(a_left, b_right)
                for lane in pl.split_aiv(2, mode=pl.SplitMode.LEFT_RIGHT):
                    # Each lane sums its half of every row.
                    sums = pl.row_sum(pl.aiv_shard(qk2))
                    out_lr = pl.store(sums, [0, lane], out_lr)
            return out_ud, out_lr

    return MultiMode


def test_sibling_regions_of_different_modes():
    a, b = rand(S, S) / 4, rand(S, S, seed=1) / 4
    out_ud = np.zeros((S, S), np.float32)
    out_lr = np.zeros((S, 2), np.float32)
    compile_quiet(multi_mode())(a, b, out_ud, out_lr)
    ref = a.astype(np.float64) @ b
    np.testing.assert_allclose(out_ud, np.exp(ref), rtol=1e-4, atol=1e-5)
    halves = np.stack([ref[:, : S // 2].sum(axis=1), ref[:, S // 2 :].sum(axis=1)], axis=1)
    np.testing.assert_allclose(out_lr, halves, rtol=1e-4, atol=1e-4)


def region_over_blocks():
    @pl.program
    class Blocks:
        """Rows of x in blocks of S, x @ w per block, each lane its half."""

        @pl.function(type=pl.FunctionType.Opaque)
        def main(
            self,
            x: pl.Tensor[[4 * S, S], pl.FP32],
            w: pl.Tensor[[S, S], pl.FP32],
            y: pl.Out[pl.Tensor[[4 * S, S], pl.FP32]],
        ) -> pl.Tensor[[4 * S, S], pl.FP32]:
            for i in pl.spmd(4, name_hint="rows"):
                x_l1 = pl.load(x, [i * S, 0], [S, S], target_memory=pl.MemorySpace.Mat)
                w_l1 = pl.load(w, [0, 0], [S, S], target_memory=pl.MemorySpace.Mat)
                acc = pl.matmul(
                    pl.move(x_l1, target_memory=pl.MemorySpace.Left),
                    pl.move(w_l1, target_memory=pl.MemorySpace.Right),
                )
                for lane in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
                    y = pl.store(pl.relu(pl.aiv_shard(acc)), [i * S + lane * (S // 2), 0], y)
            return y

    return Blocks


def test_region_in_every_block_of_a_launch():
    x, w = rand(4 * S, S), rand(S, S, seed=1)
    y = np.zeros((4 * S, S), np.float32)
    compile_quiet(region_over_blocks())(x, w, y)
    np.testing.assert_allclose(y, np.maximum(x @ w, 0), rtol=1e-4, atol=1e-4)


def vector_work_outside():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.Opaque)
        def main(self, a: pl.Tensor[[S, S], pl.FP32], out: pl.Out[pl.Tensor[[S, S], pl.FP32]]):
            with pl.at(level=pl.Level.CORE_GROUP):
                qk = pl.matmul(
                    pl.load(a, [0, 0], [S, S], target_memory=pl.MemorySpace.Left),
                    pl.load(a, [0, 0], [S, S], target_memory=pl.MemorySpace.Right),
                )
                e = pl.exp(qk)  # error: vector work outside the regions would run on both lanes
                for lane in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
                    out = pl.store(pl.aiv_shard(e), [lane * (S // 2), 0], out)
            return out

    return P


def crossing_without_shard():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.Opaque)
        def main(self, a: pl.Tensor[[S, S], pl.FP32], out: pl.Out[pl.Tensor[[S, S], pl.FP32]]):
            with pl.at(level=pl.Level.CORE_GROUP):
                # error: without pl.aiv_shard
                qk = pl.matmul(
                    pl.load(a, [0, 0], [S, S], target_memory=pl.MemorySpace.Left),
                    pl.load(a, [0, 0], [S, S], target_memory=pl.MemorySpace.Right),
                )
                for lane in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
                    out = pl.store(pl.exp(qk), [lane * (S // 2), 0], out)
            return out

    return P


def shard_outside():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.Opaque)
        def main(self, a: pl.Tensor[[S, S], pl.FP32], out: pl.Out[pl.Tensor[[S, S], pl.FP32]]):
            with pl.at(level=pl.Level.CORE_GROUP):
                # error: pl.aiv_shard is only valid inside
                t = pl.aiv_shard(pl.load(a, [0, 0], [S, S]))
                out = pl.store(t, [0, 0], out)
            return out

    return P


def shard_in_task_parallel_region():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.Opaque)
        def main(self, a: pl.Tensor[[S, S], pl.FP32], out: pl.Out[pl.Tensor[[S, S], pl.FP32]]):
            with pl.at(level=pl.Level.CORE_GROUP):
                qk = pl.matmul(
                    pl.load(a, [0, 0], [S, S], target_memory=pl.MemorySpace.Left),
                    pl.load(a, [0, 0], [S, S], target_memory=pl.MemorySpace.Right),
                )
                for lane in pl.split_aiv(2, mode=pl.SplitMode.NONE):
                    # error: which blockpipe does not support
                    out = pl.store(pl.aiv_shard(qk), [0, 0], out)
            return out

    return P


def task_parallel():
    @pl.program
    class TaskParallel:
        """The lanes of a NONE region divide the rows unevenly (12 and 20)
        by their index, each running its own branch."""

        @pl.function(type=pl.FunctionType.Opaque)
        def main(
            self,
            a: pl.Tensor[[S, S], pl.FP32],
            b: pl.Tensor[[S, S], pl.FP32],
            total: pl.Out[pl.Tensor[[S, S], pl.FP32]],
        ) -> pl.Tensor[[S, S], pl.FP32]:
            with pl.at(level=pl.Level.CORE_GROUP):
                for lane in pl.split_aiv(2, mode=pl.SplitMode.NONE):
                    if lane == 0:
                        total = pl.store(
                            pl.add(pl.load(a, [0, 0], [12, S]), pl.load(b, [0, 0], [12, S])),
                            [0, 0],
                            total,
                        )
                    else:
                        total = pl.store(
                            pl.sub(pl.load(a, [12, 0], [20, S]), pl.load(b, [12, 0], [20, S])),
                            [12, 0],
                            total,
                        )
            return total

    return TaskParallel


def test_task_parallel_lanes_divide_work_by_their_index():
    a, b = rand(S, S), rand(S, S, seed=1)
    total = np.zeros((S, S), np.float32)
    compile_quiet(task_parallel())(a, b, total)
    np.testing.assert_allclose(total[:12], a[:12] + b[:12], rtol=1e-6)
    np.testing.assert_allclose(total[12:], a[12:] - b[12:], rtol=1e-6)


def three_lanes():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.Opaque)
        def main(self, a: pl.Tensor[[S, S], pl.FP32], out: pl.Out[pl.Tensor[[S, S], pl.FP32]]):
            with pl.at(level=pl.Level.CORE_GROUP):
                for lane in pl.split_aiv(3, mode=pl.SplitMode.UP_DOWN):  # error: n must be 2
                    out = pl.store(pl.exp(pl.load(a, [0, 0], [S, S])), [0, 0], out)
            return out

    return P


def nested_regions():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.Opaque)
        def main(self, a: pl.Tensor[[S, S], pl.FP32], out: pl.Out[pl.Tensor[[S, S], pl.FP32]]):
            with pl.at(level=pl.Level.CORE_GROUP):
                for lane in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
                    for inner in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):  # error: do not nest
                        out = pl.store(pl.exp(pl.load(a, [0, 0], [S, S])), [0, 0], out)
            return out

    return P


def helper_with_region(qk, out):
    for lane in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):  # the region
        out = pl.store(pl.aiv_shard(qk), [lane * (S // 2), 0], out)
    return out


def region_in_a_helper():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.Opaque)
        def main(self, a: pl.Tensor[[S, S], pl.FP32], out: pl.Out[pl.Tensor[[S, S], pl.FP32]]):
            with pl.at(level=pl.Level.CORE_GROUP):
                qk = pl.matmul(
                    pl.load(a, [0, 0], [S, S], target_memory=pl.MemorySpace.Left),
                    pl.load(a, [0, 0], [S, S], target_memory=pl.MemorySpace.Right),
                )
                out = helper_with_region(qk, out)
            return out

    return P


def test_region_in_a_helper_is_an_error_at_its_line():
    with pytest.raises(blockpipe.CompileError) as info:
        compile_quiet(region_in_a_helper())
    line = next(
        i for i, text in enumerate(open(__file__), 1) if text.rstrip().endswith("# the region")
    )
    assert "must be written in the kernel's own body" in info.value.message
    assert (info.value.file, info.value.line) == (__file__, line)


def region_and_split_scope():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.Opaque)
        def main(self, a: pl.Tensor[[S, S], pl.FP32], out: pl.Out[pl.Tensor[[S, S], pl.FP32]]):
            with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.UP_DOWN)]):
                # error: takes its split from them
                for lane in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
                    out = pl.store(pl.exp(pl.load(a, [0, 0], [S, S])), [0, 0], out)
            return out

    return P


def region_in_aiv_function():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.AIV)
        def k(self, a: pl.Tensor[[S, S], pl.FP32], out: pl.Out[pl.Tensor[[S, S], pl.FP32]]):
            # error: are written in pl.at(level=pl.Level.CORE_GROUP) scopes
            for lane in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
                out = pl.store(pl.exp(pl.load(a, [0, 0], [S, S])), [0, 0], out)
            return out

    return P


def pipeline_without_stage():
    @pl.program
    class P:
        @pl.function
        def k(self, a: pl.Tensor[[S, S], pl.FP32], out: pl.Out[pl.Tensor[[S, S], pl.FP32]]):
            for i in pl.pipeline(2):  # error: pl.pipeline needs stage=
                out = pl.store(pl.exp(pl.load(a, [0, 0], [S, S])), [0, 0], out)
            return out

    return P


def pipeline_stage_zero():
    @pl.program
    class P:
        @pl.function
        def k(self, a: pl.Tensor[[S, S], pl.FP32], out: pl.Out[pl.Tensor[[S, S], pl.FP32]]):
            for i in pl.pipeline(2, stage=0):  # error: stage must be a positive integer
                out = pl.store(pl.exp(pl.load(a, [0, 0], [S, S])), [0, 0], out)
            return out

    return P


@pytest.mark.parametrize(
    "factory",
    [
        vector_work_outside,
        crossing_without_shard,
        shard_outside,
        shard_in_task_parallel_region,
        three_lanes,
        nested_regions,
        region_and_split_scope,
        region_in_aiv_function,
        pipeline_without_stage,
        pipeline_stage_zero,
    ],
    ids=lambda f: f.__name__,
)
def test_misuse_is_an_error_at_the_line(factory):
    located.expect_error(factory, compile_quiet)


def test_pipeline_loop_carries_values():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.Opaque)
        def main(self, a: pl.Tensor[[4 * S, S], pl.FP32], out: pl.Out[pl.Tensor[[S, S], pl.FP32]]):
            with pl.at(level=pl.Level.CORE_GROUP):
                acc = pl.full([S, S], pl.FP32, 0.0)
                for i in pl.pipeline(0, 4 * S, S, stage=2):
                    acc = pl.add(acc, pl.load(a, [i, 0], [S, S]))
                out = pl.store(acc, [0, 0], out)
            return out

    a = rand(4 * S, S)
    out = np.zeros((S, S), np.float32)
    compile_quiet(P)(a, out)
    np.testing.assert_allclose(out, a.reshape(4, S, S).sum(axis=0), rtol=1e-5, atol=1e-5)
