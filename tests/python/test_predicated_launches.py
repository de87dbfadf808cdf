"""pypto's task-naming launches: `pl.spmd_submit(..., core_num=, deps=,
predicate=)` and `with pl.spmd(n, deps=, predicate=) as tid:` run their
kernels on n blocks when the predicate (read when the orchestration reaches
it) holds, and leave their outputs as they were when it does not; `t[i, j]`
of a tensor in an orchestration is that element."""

import numpy as np
import pytest

import blockpipe
import blockpipe.language as pl

R, C = 32, 16


@pl.program
class Gated:
    @pl.function(type=pl.FunctionType.InCore)
    def fill(self, x: pl.Out[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
        row = pl.tile.get_block_idx() * 16
        return pl.store(pl.full([16, C], dtype=pl.FP32, value=5.0), [row, 0], x)

    @pl.function(type=pl.FunctionType.InCore)
    def double(
        self, x: pl.Tensor[[R, C], pl.FP32], y: pl.Out[pl.Tensor[[R, C], pl.FP32]]
    ) -> pl.Tensor[[R, C], pl.FP32]:
        t = pl.load(x, [0, 0], [R, C])
        return pl.store(pl.add(t, t), [0, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        gate: pl.Tensor[[2], pl.INT32],
        x: pl.InOut[pl.Tensor[[R, C], pl.FP32]],
        y: pl.InOut[pl.Tensor[[R, C], pl.FP32]],
    ) -> tuple[pl.Tensor[[R, C], pl.FP32], pl.Tensor[[R, C], pl.FP32]]:
        with pl.manual_scope():
            x, fill_tid = pl.spmd_submit(self.fill, x, core_num=2, predicate=(gate[0] > 0))
            with pl.spmd(1, deps=[fill_tid], predicate=(gate[1] != 0)) as double_tid:
                y = self.double(x, y)
        return x, y


@pytest.mark.parametrize("gate", [(0, 0), (1, 0), (0, 1), (3, -1)])
def test_each_launch_runs_where_its_predicate_holds(gate):
    compiled = blockpipe.compile(Gated, quiet=True)
    x = np.ones((R, C), np.float32)
    y = np.full((R, C), -1.0, np.float32)
    compiled(np.array(gate, np.int32), x, y)
    want_x = np.full((R, C), 5.0 if gate[0] > 0 else 1.0, np.float32)
    want_y = 2 * want_x if gate[1] != 0 else np.full((R, C), -1.0, np.float32)
    np.testing.assert_array_equal(x, want_x)
    np.testing.assert_array_equal(y, want_y)


def test_spmd_submit_needs_core_num():
    @pl.program
    class NoCores:
        @pl.function(type=pl.FunctionType.InCore)
        def fill(self, x: pl.Out[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
            return pl.store(pl.full([R, C], dtype=pl.FP32, value=5.0), [0, 0], x)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Out[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
            x, tid = pl.spmd_submit(self.fill, x)
            return x

    with pytest.raises(blockpipe.CompileError, match="pl.spmd_submit is valid as") as info:
        blockpipe.compile(NoCores, quiet=True)
    assert info.value.file.endswith("test_predicated_launches.py")
