"""pypto's kernel-driven paged gather: pl.create_l1 makes an accumulator that
pl.gather_row fills with windows of a GM tensor, at offsets and with valid
sizes known at run time; only the valid part is written. Against NumPy,
also through a matmul that reads the accumulator on the cube unit."""

import numpy as np
import pytest

import located
from arrays import data

import blockpipe
import blockpipe.language as pl

R = pl.Scalar[pl.INDEX]
POOL, ROWS, COLS = 64, 16, 32


def build(program):
    return blockpipe.compile(program, quiet=True)


@pl.program
class Window:
    """A [16, 32] accumulator painted from pool rows 32.., then a window of
    [WR, WC] from (sr, sc) written at (dr, dc), of which [vr, vc] is valid."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self,
        pool: pl.Tensor[[POOL, COLS], pl.FP32],
        dr: R,
        dc: R,
        sr: R,
        sc: R,
        vr: R,
        vc: R,
        out: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]],
    ) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
        kv = pl.create_l1([ROWS, COLS], pl.FP32)
        kv = pl.gather_row(kv, pool, [0, 0], [32, 0], [ROWS, COLS])
        kv = pl.gather_row(kv, pool, [dr, dc], [sr, sc], [8, 16], valid_shape=[vr, vc])
        return pl.store(kv, [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        pool: pl.Tensor[[POOL, COLS], pl.FP32],
        dr: R,
        dc: R,
        sr: R,
        sc: R,
        vr: R,
        vc: R,
        out: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]],
    ) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
        return self.k(pool, dr, dc, sr, sc, vr, vc, out)


def window_reference(pool, dr, dc, sr, sc, vr, vc):
    want = pool[32 : 32 + ROWS].copy()
    want[dr : dr + vr, dc : dc + vc] = pool[sr : sr + vr, sc : sc + vc]
    return want


@pytest.mark.parametrize(
    "dr,dc,sr,sc,vr,vc",
    [
        (0, 0, 0, 0, 8, 16),  # all of the window
        (3, 5, 7, 2, 5, 11),  # a part, inside the accumulator
        (12, 20, 60, 16, 4, 12),  # the window runs past both ends; its valid part does not
        (16, 32, 0, 0, 0, 0),  # nothing, at the very end
        (0, 0, 63, 31, 1, 1),  # one element, the pool's last
    ],
)
def test_only_the_valid_part_of_the_window_is_written(dr, dc, sr, sc, vr, vc):
    pool = data((POOL, COLS), np.float32)
    out = np.zeros((ROWS, COLS), np.float32)
    build(Window)(pool, dr, dc, sr, sc, vr, vc, out)
    np.testing.assert_array_equal(out, window_reference(pool, dr, dc, sr, sc, vr, vc))


def test_a_valid_part_past_the_accumulator_fails_the_launch_at_its_line():
    pool = data((POOL, COLS), np.float32)
    out = np.zeros((ROWS, COLS), np.float32)
    with pytest.raises(RuntimeError, match=r"test_gather_row.py:\d+"):
        build(Window)(pool, 12, 0, 0, 0, 5, 16, out)  # rows 12..17 of 16
    assert not out.any()


HEAD, KROWS, PAGES = 64, 32, 256


@pl.program
class TwoRuns:
    """pypto's two runs split at a run-time row r1, read back through a
    matmul by the identity on the cube unit (as pypto's test does)."""

    @pl.function(type=pl.FunctionType.Opaque)
    def main(
        self,
        src: pl.Tensor[[PAGES, HEAD], pl.FP16],
        n: pl.Tensor[[1], pl.INT32],
        eye: pl.Tensor[[KROWS, KROWS], pl.FP16],
        out: pl.Out[pl.Tensor[[KROWS, HEAD], pl.FP32]],
    ) -> pl.Tensor[[KROWS, HEAD], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            r1 = pl.cast(pl.read(n, [0]), pl.INDEX)
            kv = pl.create_l1([KROWS, HEAD], pl.FP16)
            kv = pl.gather_row(kv, src, [0, 0], [0, 0], [KROWS, HEAD], valid_shape=[r1, HEAD])
            kv = pl.gather_row(
                kv, src, [r1, 0], [128, 0], [KROWS, HEAD], valid_shape=[KROWS - r1, HEAD]
            )
            result = pl.matmul(eye, kv, out_dtype=pl.FP32)
            out = pl.assemble(out, result, [0, 0])
        return out


@pytest.mark.parametrize("r1", [1, 13, 31, 32])
def test_two_runs_split_at_a_run_time_row_through_a_matmul(r1):
    src = (np.arange(PAGES * HEAD) % 1000).reshape(PAGES, HEAD).astype(np.float16)
    eye = np.eye(KROWS, dtype=np.float16)
    out = np.zeros((KROWS, HEAD), np.float32)
    build(TwoRuns)(src, np.array([r1], np.int32), eye, out)
    want = np.concatenate([src[:r1], src[128 : 128 + KROWS - r1]]).astype(np.float32)
    np.testing.assert_array_equal(out, want)


@pl.program
class Paged:
    """The paged gather pypto's docstring shows: row r of the accumulator
    is pool row table[r], one [1, HEAD] gather per row in a loop."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self,
        pool: pl.Tensor[[PAGES, HEAD], pl.FP16],
        table: pl.Tensor[[KROWS], pl.INT32],
        out: pl.Out[pl.Tensor[[KROWS, HEAD], pl.FP16]],
    ) -> pl.Tensor[[KROWS, HEAD], pl.FP16]:
        kv = pl.create_l1([KROWS, HEAD], pl.FP16)
        for r in pl.range(KROWS):
            phys = pl.cast(pl.read(table, [r]), pl.INDEX)
            kv = pl.gather_row(kv, pool, [r, 0], [phys, 0], [1, HEAD])
        return pl.store(kv, [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        pool: pl.Tensor[[PAGES, HEAD], pl.FP16],
        table: pl.Tensor[[KROWS], pl.INT32],
        out: pl.Out[pl.Tensor[[KROWS, HEAD], pl.FP16]],
    ) -> pl.Tensor[[KROWS, HEAD], pl.FP16]:
        return self.k(pool, table, out)


def test_a_paged_gather_row_by_row():
    pool = data((PAGES, HEAD), np.float16)
    table = np.random.default_rng(3).permutation(PAGES)[:KROWS].astype(np.int32)
    out = np.zeros((KROWS, HEAD), np.float16)
    build(Paged)(pool, table, out)
    np.testing.assert_array_equal(out, pool[table])


def test_a_transposing_gather_is_an_error_at_its_line():
    def factory():
        @pl.program
        class Bad:
            @pl.function(type=pl.FunctionType.InCore)
            def k(
                self,
                pool: pl.Tensor[[POOL, COLS], pl.FP32],
                out: pl.Out[pl.Tensor[[COLS, ROWS], pl.FP32]],
            ) -> pl.Tensor[[COLS, ROWS], pl.FP32]:
                kv = pl.create_l1([COLS, ROWS], pl.FP32)
                # error: transpose=True) (pypto's ZN layout for a b_trans operand) is not supported
                kv = pl.gather_row(kv, pool, [0, 0], [0, 0], [1, COLS], transpose=True)
                return pl.store(kv, [0, 0], out)

        return Bad

    located.expect_error(factory, build)


def test_a_source_of_another_dtype_is_an_error_at_its_line():
    def factory():
        @pl.program
        class Bad:
            @pl.function(type=pl.FunctionType.InCore)
            def k(
                self,
                half: pl.Tensor[[POOL, COLS], pl.FP16],
                out: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]],
            ) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
                kv = pl.create_l1([ROWS, COLS], pl.FP32)
                kv = pl.gather_row(kv, half, [0, 0], [0, 0], [1, COLS])  # error: src and dst
                return pl.store(kv, [0, 0], out)

        return Bad

    located.expect_error(factory, build)


def test_a_tensor_as_the_accumulator_is_an_error_at_its_line():
    def factory():
        @pl.program
        class Bad:
            @pl.function(type=pl.FunctionType.InCore)
            def k(
                self,
                pool: pl.Tensor[[POOL, COLS], pl.FP32],
                out: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]],
            ) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
                # error: dst must be a tile (from pl.create_l1)
                kv = pl.gather_row(out, pool, [0, 0], [0, 0], [1, COLS])
                return pl.store(kv, [0, 0], out)

        return Bad

    located.expect_error(factory, build)


def test_a_valid_size_past_the_window_is_an_error_at_its_line():
    def factory():
        @pl.program
        class Bad:
            @pl.function(type=pl.FunctionType.InCore)
            def k(
                self,
                pool: pl.Tensor[[POOL, COLS], pl.FP32],
                out: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]],
            ) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
                kv = pl.create_l1([ROWS, COLS], pl.FP32)
                # error: valid_shape size 3 is outside [0, 2]
                kv = pl.gather_row(kv, pool, [0, 0], [0, 0], [2, COLS], valid_shape=[3, COLS])
                return pl.store(kv, [0, 0], out)

        return Bad

    located.expect_error(factory, build)
