"""Mixed kernels and explicit pipes over many block counts, pipe shapes and
launch options, all with the pipe sanitizer on."""

import re

import numpy as np
import pytest

import blockpipe
import blockpipe.language as pl

K, COLS, TILE = 32, 16, 16


def mixed_program(core_num: int, sync_start: bool = False):
    rows = core_num * TILE

    @pl.program
    class Mixed:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(
            self,
            x: pl.Tensor[[rows, K], pl.FP32],
            w: pl.Tensor[[K, COLS], pl.FP32],
            r: pl.Tensor[[rows, COLS], pl.FP32],
            y: pl.Out[pl.Tensor[[rows, COLS], pl.FP32]],
        ) -> pl.Tensor[[rows, COLS], pl.FP32]:
            row = pl.tile.get_block_idx() * TILE
            acc = pl.matmul(pl.load(x, [row, 0], [TILE, K]), pl.load(w, [0, 0], [K, COLS]))
            return pl.store(pl.add(acc, pl.load(r, [row, 0], [TILE, COLS])), [row, 0], y)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            x: pl.Tensor[[rows, K], pl.FP32],
            w: pl.Tensor[[K, COLS], pl.FP32],
            r: pl.Tensor[[rows, COLS], pl.FP32],
            y: pl.Out[pl.Tensor[[rows, COLS], pl.FP32]],
        ) -> pl.Tensor[[rows, COLS], pl.FP32]:
            with pl.spmd(core_num, sync_start=sync_start):
                y = self.kernel(x, w, r, y)
            return y

    return Mixed, rows


@pytest.mark.parametrize("core_num", [1, 2, 4, 8, 24, 48])
def test_mixed_kernel_core_num(core_num):
    program, rows = mixed_program(core_num)
    rng = np.random.default_rng(core_num)
    x = rng.standard_normal((rows, K), dtype=np.float32)
    w = rng.standard_normal((K, COLS), dtype=np.float32)
    r = rng.standard_normal((rows, COLS), dtype=np.float32)
    y = np.zeros((rows, COLS), dtype=np.float32)
    compiled = blockpipe.compile(program, quiet=True)
    compiled(x, w, r, y)
    np.testing.assert_allclose(y, x @ w + r, rtol=1e-5, atol=1e-4)
    launch = compiled.manifest.orchestrations[0].launches[0]
    assert launch.core_num == core_num
    # The buffer is the kernel's named per-block size times core_num.
    orchestration = compiled.artifacts["orchestration/main.cpp"]
    named = re.search(r"constexpr int64_t (\w+) = (\d+);", orchestration)
    assert named and int(named.group(2)) == launch.pipe_buffer_per_block_bytes
    assert re.search(
        rf'createPipeBuffer\(\s*"gm_pipe_buffer_0", {named.group(1)} \* {core_num}\);',
        orchestration,
    )


def test_sync_start():
    program, rows = mixed_program(8, sync_start=True)
    rng = np.random.default_rng(7)
    x = rng.standard_normal((rows, K), dtype=np.float32)
    w = rng.standard_normal((K, COLS), dtype=np.float32)
    r = np.zeros((rows, COLS), dtype=np.float32)
    y = np.zeros((rows, COLS), dtype=np.float32)
    compiled = blockpipe.compile(program, quiet=True)
    assert compiled.manifest.orchestrations[0].launches[0].sync_start is True
    compiled(x, w, r, y)
    np.testing.assert_allclose(y, x @ w, rtol=1e-5, atol=1e-4)


def pipes_program(core_num: int, slot_num):
    n = 16

    @pl.program
    class TwoPipes:
        @pl.function(type=pl.FunctionType.AIC)
        def cube(self, b: pl.Tensor[[n, n], pl.FP32]):
            pl.aic_initialize_pipe(dir_mask=2, slot_size=n * n * 4, slot_num=slot_num, pipe_id=0)
            pl.aic_initialize_pipe(dir_mask=1, slot_size=n * n * 4, slot_num=slot_num, pipe_id=1)
            rhs = pl.load(b, [0, 0], [n, n], target_memory=pl.MemorySpace.Mat)
            for i in pl.range(3):
                lhs = pl.tpop_from_aiv(pipe_id=0)
                prod = pl.matmul(lhs, rhs)
                pl.tfree_to_aiv(pipe_id=0)
                pl.tpush_to_aiv(prod, pipe_id=1)

        @pl.function(type=pl.FunctionType.AIV)
        def vector(
            self,
            a: pl.Tensor[[core_num * n, n], pl.FP32],
            out: pl.Out[pl.Tensor[[core_num * n, n], pl.FP32]],
        ) -> pl.Tensor[[core_num * n, n], pl.FP32]:
            pl.aiv_initialize_pipe(dir_mask=2, slot_size=n * n * 4, slot_num=slot_num, pipe_id=0)
            pl.aiv_initialize_pipe(dir_mask=1, slot_size=n * n * 4, slot_num=slot_num, pipe_id=1)
            row = pl.tile.get_block_idx() * n
            t = pl.load(a, [row, 0], [n, n])
            for i in pl.range(3):
                pl.tpush_to_aic(t, pipe_id=0)
                p: pl.Tile[[n, n], pl.FP32] = pl.tpop_from_aic(pipe_id=1)
                t = pl.add(p, 0.0)
                pl.tfree_to_aic(pipe_id=1)
            return pl.store(t, [row, 0], out)

        @pl.function(type=pl.FunctionType.Group)
        def group(
            self,
            a: pl.Tensor[[core_num * n, n], pl.FP32],
            b: pl.Tensor[[n, n], pl.FP32],
            out: pl.Out[pl.Tensor[[core_num * n, n], pl.FP32]],
        ) -> pl.Tensor[[core_num * n, n], pl.FP32]:
            self.cube(b)
            out = self.vector(a, out)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            a: pl.Tensor[[core_num * n, n], pl.FP32],
            b: pl.Tensor[[n, n], pl.FP32],
            out: pl.Out[pl.Tensor[[core_num * n, n], pl.FP32]],
        ) -> pl.Tensor[[core_num * n, n], pl.FP32]:
            with pl.spmd(core_num):
                out = self.group(a, b, out)
            return out

    return TwoPipes, n


@pytest.mark.parametrize("core_num,slot_num", [(1, None), (4, 1), (8, 2), (24, 3)])
def test_two_pipes_and_slot_num(core_num, slot_num):
    program, n = pipes_program(core_num, slot_num)
    rng = np.random.default_rng(core_num)
    a = rng.standard_normal((core_num * n, n), dtype=np.float32) * 0.3
    b = rng.standard_normal((n, n), dtype=np.float32) * 0.3
    out = np.zeros_like(a)
    compiled = blockpipe.compile(program, quiet=True)
    compiled(a, b, out)
    expected = np.concatenate([a[i * n : (i + 1) * n] @ b @ b @ b for i in range(core_num)])
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-5)
    kernel = next(k for k in compiled.manifest.kernels if k.name == "cube")
    pipes = kernel.pipe_layout.pipes
    assert [p.id for p in pipes] == [0, 1]
    slots = slot_num or 8
    assert all(p.slot_num == slots for p in pipes)
    assert kernel.pipe_layout.per_block_bytes == 2 * slots * n * n * 4


@pl.program
class HoldsTen:
    """The vector side adds ten matmul results newest first: it holds all ten
    popped tiles at once, so the pipe needs ten slots (the default is 8)."""

    @pl.function(type=pl.FunctionType.InCore)
    def kernel(
        self,
        x: pl.Tensor[[4 * TILE, K], pl.FP32],
        w: pl.Tensor[[K, COLS], pl.FP32],
        y: pl.Out[pl.Tensor[[4 * TILE, COLS], pl.FP32]],
    ) -> pl.Tensor[[4 * TILE, COLS], pl.FP32]:
        row = pl.tile.get_block_idx() * TILE
        a = pl.load(x, [row, 0], [TILE, K])
        b = pl.load(w, [0, 0], [K, COLS])
        m0 = pl.matmul(a, b)
        m1 = pl.matmul(a, b)
        m2 = pl.matmul(a, b)
        m3 = pl.matmul(a, b)
        m4 = pl.matmul(a, b)
        m5 = pl.matmul(a, b)
        m6 = pl.matmul(a, b)
        m7 = pl.matmul(a, b)
        m8 = pl.matmul(a, b)
        m9 = pl.matmul(a, b)
        s = pl.add(m9, m8)
        s = pl.add(s, m7)
        s = pl.add(s, m6)
        s = pl.add(s, m5)
        s = pl.add(s, m4)
        s = pl.add(s, m3)
        s = pl.add(s, m2)
        s = pl.add(s, m1)
        s = pl.add(s, m0)
        return pl.store(s, [row, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[4 * TILE, K], pl.FP32],
        w: pl.Tensor[[K, COLS], pl.FP32],
        y: pl.Out[pl.Tensor[[4 * TILE, COLS], pl.FP32]],
    ) -> pl.Tensor[[4 * TILE, COLS], pl.FP32]:
        with pl.spmd(4):
            y = self.kernel(x, w, y)
        return y


def test_vector_half_holding_more_tiles_than_the_default_slots():
    program = blockpipe.compile(HoldsTen, quiet=True)
    assert "slot_num(10)" in program.ir("bp-expand-mixed-kernel")
    rng = np.random.default_rng(10)
    x = rng.standard_normal((4 * TILE, K), dtype=np.float32)
    w = rng.standard_normal((K, COLS), dtype=np.float32)
    y = np.zeros((4 * TILE, COLS), dtype=np.float32)
    program(x, w, y)
    np.testing.assert_allclose(y, 10 * (x @ w), rtol=1e-4, atol=1e-3)
