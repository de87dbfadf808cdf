"""Split modes: a kernel's vector half on both AIV sub-blocks of its core
group, each on half the rows (UP_DOWN) or columns (LEFT_RIGHT) of every
vector tile, through pl.at(optimizations=[pl.split(mode)]) scopes and
@pl.function(attrs={"split": mode}) kernels; run against numpy, the trace
shows both sub-blocks busy, and what a split cannot divide is a
CompileError at the user's line."""

import json
import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import located

import blockpipe
import blockpipe.language as pl

M, K, N, NB = 32, 64, 128, 32
MODES = [pl.SplitMode.UP_DOWN, pl.SplitMode.LEFT_RIGHT]


def rand(*shape, seed=0):
    return np.random.default_rng(seed + sum(shape)).standard_normal(shape).astype(np.float32)


def compile_quiet(program):
    return blockpipe.compile(program, quiet=True)


def vec_to_cube(mode):
    @pl.program
    class VecToCube:
        """(a + b) @ (a - b): each sub-block computes half of both operands,
        the cube pops them joined."""

        @pl.function(type=pl.FunctionType.Opaque)
        def main(
            self,
            a: pl.Tensor[[32, 32], pl.FP32],
            b: pl.Tensor[[32, 32], pl.FP32],
            output: pl.Out[pl.Tensor[[32, 32], pl.FP32]],
        ) -> pl.Tensor[[32, 32], pl.FP32]:
            with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(mode)]):
                s = pl.add(a, b)
                d = pl.sub(a, b)
                output = pl.assemble(output, pl.matmul(s, d), [0, 0])
            return output

    return VecToCube


def cube_to_vec(mode):
    @pl.program
    class CubeToVec:
        """c += (a + 1) @ b over column blocks on 2 blocks: a mixed kernel
        split by its attrs, vector -> cube -> vector, each sub-block adding
        its half."""

        @pl.function(attrs={"split": mode})
        def kernel(
            self,
            a: pl.Tensor[[M, K], pl.FP32],
            b: pl.Tensor[[K, N], pl.FP32],
            c: pl.InOut[pl.Tensor[[M, N], pl.FP32]],
        ) -> pl.Tensor[[M, N], pl.FP32]:
            a1 = pl.add(pl.load(a, [0, 0], [M, K]), 1.0)
            for j in pl.range(0, N // NB // 2):
                n0 = (pl.tile.get_block_idx() * (N // NB // 2) + j) * NB
                prev = pl.load(c, [0, n0], [M, NB])
                c = pl.store(pl.add(prev, pl.matmul(a1, pl.load(b, [0, n0], [K, NB]))), [0, n0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            a: pl.Tensor[[M, K], pl.FP32],
            b: pl.Tensor[[K, N], pl.FP32],
            c: pl.InOut[pl.Tensor[[M, N], pl.FP32]],
        ) -> pl.Tensor[[M, N], pl.FP32]:
            for i in pl.spmd(2):
                c = self.kernel(a, b, c)
            return c

    return CubeToVec


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.name)
def test_vector_operands_of_a_matmul(mode):
    a, b = rand(32, 32), rand(32, 32, seed=1)
    out = np.zeros((32, 32), np.float32)
    compile_quiet(vec_to_cube(mode))(a, b, out)
    np.testing.assert_allclose(out, (a + b) @ (a - b), rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.name)
def test_round_trip_over_blocks(mode):
    a, b, c = rand(M, K), rand(K, N, seed=1), rand(M, N, seed=2)
    expected = c + (a + 1) @ b
    compile_quiet(cube_to_vec(mode))(a, b, c)
    np.testing.assert_allclose(c, expected, rtol=1e-4, atol=1e-3)


def explicit_halves(mode):
    @pl.program
    class Halves:
        """pypto's explicit form: AIC and AIV functions with attrs split,
        the AIV code written for whole tiles and stored at [0, 0]."""

        @pl.function(type=pl.FunctionType.AIC, attrs={"split": mode})
        def cube(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32]):
            pl.aic_initialize_pipe(dir_mask=1, slot_size=16 * 16 * 4)
            acc = pl.matmul(
                pl.load(a, [0, 0], [16, 16], target_memory=pl.MemorySpace.Left),
                pl.load(b, [0, 0], [16, 16], target_memory=pl.MemorySpace.Right),
            )
            pl.tpush_to_aiv(acc, split=mode.value)

        @pl.function(type=pl.FunctionType.AIV, attrs={"split": mode})
        def vector(
            self,
            a: pl.Tensor[[16, 16], pl.FP32],
            b: pl.Tensor[[16, 16], pl.FP32],
            out: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
        ) -> pl.Tensor[[16, 16], pl.FP32]:
            pl.aiv_initialize_pipe(dir_mask=1, slot_size=16 * 16 * 4)
            t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tpop_from_aic(split=mode.value)
            if pl.tile.get_subblock_idx() == 1:
                half = pl.add(t, 1.0)
            else:
                half = pl.add(t, 0.0)
            pl.tfree_to_aic(t)
            return pl.store(half, [0, 0], out)

        @pl.function(type=pl.FunctionType.Group, attrs={"split": mode})
        def group(
            self,
            a: pl.Tensor[[16, 16], pl.FP32],
            b: pl.Tensor[[16, 16], pl.FP32],
            out: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
        ) -> pl.Tensor[[16, 16], pl.FP32]:
            self.cube(a, b)
            return self.vector(a, b, out)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            a: pl.Tensor[[16, 16], pl.FP32],
            b: pl.Tensor[[16, 16], pl.FP32],
            out: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
        ) -> pl.Tensor[[16, 16], pl.FP32]:
            return self.group(a, b, out)

    return Halves


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.name)
def test_explicit_halves_see_their_subblock_index(mode):
    a, b = rand(16, 16), rand(16, 16, seed=1)
    out = np.zeros((16, 16), np.float32)
    compile_quiet(explicit_halves(mode))(a, b, out)
    # Sub-block 1 took the bottom rows (UP_DOWN) or right columns.
    index = np.zeros((16, 16), np.float32)
    if mode is pl.SplitMode.UP_DOWN:
        index[8:, :] = 1
    else:
        index[:, 8:] = 1
    np.testing.assert_allclose(out, a @ b + index, rtol=1e-4, atol=1e-3)


@pl.program
class VectorOnly:
    """A kernel with vector work only runs as an AIV kernel on both
    sub-blocks; a 1-row bias tile stays whole on each, and row sums of the
    top and bottom rows come from their own sub-block."""

    @pl.function(attrs={"split": pl.SplitMode.UP_DOWN})
    def kernel(
        self,
        x: pl.Tensor[[64, 32], pl.FP32],
        bias: pl.Tensor[[1, 32], pl.FP32],
        y: pl.Out[pl.Tensor[[64, 32], pl.FP32]],
        s: pl.Out[pl.Tensor[[64, 1], pl.FP32]],
    ):
        row = pl.tile.get_block_idx() * 16
        t = pl.add(pl.load(x, [row, 0], [16, 32]), pl.load(bias, [0, 0], [1, 32]))
        pl.store(t, [row, 0], y)
        pl.store(pl.row_sum(t), [row, 0], s)
        return y, s

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[64, 32], pl.FP32],
        bias: pl.Tensor[[1, 32], pl.FP32],
        y: pl.Out[pl.Tensor[[64, 32], pl.FP32]],
        s: pl.Out[pl.Tensor[[64, 1], pl.FP32]],
    ):
        for i in pl.spmd(4):
            y, s = self.kernel(x, bias, y, s)
        return y, s


def test_vector_only_kernel_runs_on_both_subblocks():
    x, bias = rand(64, 32), rand(1, 32, seed=1)
    y, s = np.zeros((64, 32), np.float32), np.zeros((64, 1), np.float32)
    compile_quiet(VectorOnly)(x, bias, y, s)
    np.testing.assert_allclose(y, x + bias, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(s, (x + bias).sum(axis=1, keepdims=True), rtol=1e-4, atol=1e-4)


TRACE_SCRIPT = textwrap.dedent("""
    import sys
    sys.path[:0] = [{tests!r}]
    import numpy as np
    import blockpipe, blockpipe.language as pl, blockpipe.trace
    from test_split import vec_to_cube, rand
    a, b = rand(32, 32), rand(32, 32, seed=1)
    out = np.zeros((32, 32), np.float32)
    blockpipe.compile(vec_to_cube(pl.SplitMode.UP_DOWN), quiet=True)(a, b, out)
    np.testing.assert_allclose(out, (a + b) @ (a - b), rtol=1e-4, atol=1e-3)
    blockpipe.trace.flush(sys.argv[1])
""")


def test_trace_shows_both_subblocks_busy(tmp_path):
    script = tmp_path / "split.py"
    script.write_text(TRACE_SCRIPT.format(tests=str(pathlib.Path(__file__).parent)))
    result = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "trace.json")],
        capture_output=True,
        text=True,
        timeout=600,
        env=dict(os.environ, BLOCKPIPE_TRACE=str(tmp_path / "exit.json")),
    )
    assert result.returncode == 0, result.stdout + result.stderr
    trace = json.loads((tmp_path / "trace.json").read_text())
    blocks = [e for e in trace["traceEvents"] if e.get("cat") == "block"]
    # Lanes: 0 the AIC, 1 and 2 the AIV sub-blocks 0 and 1.
    lanes = {e["tid"] % 4: e for e in blocks}
    assert sorted(lanes) == [0, 1, 2], blocks
    assert {lanes[1]["args"]["subblock"], lanes[2]["args"]["subblock"]} == {0, 1}
    assert all(lanes[lane]["args"]["core"] == "AIV" and lanes[lane]["dur"] > 0 for lane in (1, 2))


def row_sum_left_right():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.Opaque)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], o: pl.Out[pl.Tensor[[16, 1], pl.FP32]]):
            with pl.at(
                level=pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.LEFT_RIGHT)]
            ):
                # error: a row reduction would see half of each row
                o = pl.assemble(o, pl.row_sum(pl.exp(a)), [0, 0])
            return o

    return P


def odd_rows():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.Opaque)
        def main(self, a: pl.Tensor[[15, 16], pl.FP32], o: pl.Out[pl.Tensor[[15, 16], pl.FP32]]):
            with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.UP_DOWN)]):
                o = pl.assemble(o, pl.exp(a), [0, 0])  # error: a tile of 15 rows cannot be halved
            return o

    return P


def transpose_split():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.Opaque)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
            with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.UP_DOWN)]):
                # error: a transpose swaps the halves
                o = pl.assemble(o, pl.transpose(pl.exp(a), 0, 1), [0, 0])
            return o

    return P


def push_split_disagrees():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.AIC)
        def cube(self, a: pl.Tensor[[16, 16], pl.FP32]):
            pl.aic_initialize_pipe(dir_mask=1, slot_size=1024)
            acc = pl.matmul(
                pl.load(a, [0, 0], [16, 16], target_memory=pl.MemorySpace.Left),
                pl.load(a, [0, 0], [16, 16], target_memory=pl.MemorySpace.Right),
            )
            # error: split=1 (UP_DOWN) disagrees with the function's split mode NONE
            pl.tpush_to_aiv(acc, split=1)

    return P


def tfree_of_another_tile():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.AIV)
        def vector(self, a: pl.Tensor[[16, 16], pl.FP32], o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
            pl.aiv_initialize_pipe(dir_mask=1, slot_size=1024)
            t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tpop_from_aic()
            u = pl.exp(t)
            pl.tfree_to_aic(u)  # error: pl.tfree_to_aic frees a tile popped with pl.tpop_from_aic
            return pl.store(u, [0, 0], o)

    return P


def reshape_columns_left_right():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.Opaque)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], o: pl.Out[pl.Tensor[[256, 1], pl.FP32]]):
            with pl.at(
                level=pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.LEFT_RIGHT)]
            ):
                # error: not whole runs of its elements
                o = pl.assemble(o, pl.reshape(pl.exp(a), [256, 1]), [0, 0])
            return o

    return P


def reshaped_halves_meet_columns():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.Opaque)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
            with pl.at(
                level=pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.LEFT_RIGHT)]
            ):
                x = pl.exp(a)
                col = pl.reshape(pl.col_sum(x), [16, 1])
                # error: halves lie along different axes
                o = pl.assemble(o, pl.row_expand_mul(x, col), [0, 0])
            return o

    return P


def normalize_rows(mode):
    @pl.program
    class NormalizeRows:
        """y[i, :] = x[i, :] / sum_j x[i, j], the reciprocal taken on the
        row sums reshaped to one row and back (pypto's rms_norm layout), in
        a kernel split by rows; a matmul makes it a group."""

        @pl.function(type=pl.FunctionType.Opaque)
        def main(
            self,
            x: pl.Tensor[[16, 64], pl.FP32],
            w: pl.Tensor[[16, 16], pl.FP32],
            y: pl.Out[pl.Tensor[[16, 64], pl.FP32]],
            z: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
        ):
            with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(mode)]):
                z = pl.assemble(z, pl.matmul(w, w), [0, 0])
                t = pl.exp(x)
                sums = pl.reshape(pl.row_sum(t), [1, 16])
                inverse = pl.reshape(pl.recip(sums), [16, 1])
                y = pl.assemble(y, pl.row_expand_mul(t, inverse), [0, 0])
            return y, z

    return NormalizeRows


@pytest.mark.parametrize("mode", [pl.SplitMode.NONE, pl.SplitMode.UP_DOWN], ids=lambda m: m.name)
def test_a_reshape_moves_the_halves(mode):
    x, w = rand(16, 64) / 4, rand(16, 16, seed=1)
    y, z = np.zeros((16, 64), np.float32), np.zeros((16, 16), np.float32)
    compile_quiet(normalize_rows(mode))(x, w, y, z)
    e = np.exp(x.astype(np.float64))
    np.testing.assert_allclose(y, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(z, w @ w, rtol=1e-4, atol=1e-4)


def column_sums_as_a_column():
    @pl.program
    class P:
        """The column sums of exp(x) (split by columns) reshaped to a
        column: each sub-block holds half of its rows."""

        @pl.function(type=pl.FunctionType.Opaque)
        def main(self, x: pl.Tensor[[8, 32], pl.FP32], o: pl.Out[pl.Tensor[[32, 1], pl.FP32]]):
            with pl.at(
                level=pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.LEFT_RIGHT)]
            ):
                o = pl.assemble(o, pl.reshape(pl.col_sum(pl.exp(x)), [32, 1]), [0, 0])
            return o

    return P


def test_a_reshape_of_a_split_row_is_a_split_column():
    x = rand(8, 32) / 4
    o = np.zeros((32, 1), np.float32)
    compile_quiet(column_sums_as_a_column())(x, o)
    np.testing.assert_allclose(o[:, 0], np.exp(x.astype(np.float64)).sum(axis=0), rtol=1e-5)


@pytest.mark.parametrize(
    "factory",
    [
        row_sum_left_right,
        odd_rows,
        transpose_split,
        push_split_disagrees,
        tfree_of_another_tile,
        reshape_columns_left_right,
        reshaped_halves_meet_columns,
    ],
)
def test_what_a_split_cannot_divide_is_an_error_at_the_line(factory):
    located.expect_error(factory, compile_quiet)


def test_split_is_for_kernels():
    with pytest.raises(TypeError, match="is for kernels"):
        pl.function(type=pl.FunctionType.Orchestration, attrs={"split": pl.SplitMode.UP_DOWN})
    with pytest.raises(TypeError, match="takes a pl.SplitMode"):
        pl.function(attrs={"split": 1})
