"""pl.paged_gather: rows of a paged pool through a block table (pypto's),
into Mat (a matmul operand) or Vec memory; a page or row outside its
tensor fails the launch."""

import numpy as np
import pytest

from located import expect_error

import blockpipe
import blockpipe.language as pl

PAGE, PAGES, HIDDEN, N = 8, 8, 32, 8
ROWS = PAGE * PAGES


def _vec_program(col_off=0, size=HIDDEN):
    @pl.program
    class Paged:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(
            self,
            pool: pl.Tensor[[ROWS, HIDDEN], pl.FP32],
            idx: pl.Tensor[[N], pl.INT32],
            table: pl.Tensor[[PAGES], pl.INT32],
            out: pl.Out[pl.Tensor[[N, size], pl.FP32]],
        ):
            rows = pl.paged_gather(
                pool,
                idx,
                table,
                block_size=PAGE,
                size=size,
                max_indices=N,
                space=pl.Mem.Vec,
                col_off=col_off,
            )
            out = pl.store(rows, [0, 0], out)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            pool: pl.Tensor[[ROWS, HIDDEN], pl.FP32],
            idx: pl.Tensor[[N], pl.INT32],
            table: pl.Tensor[[PAGES], pl.INT32],
            out: pl.Out[pl.Tensor[[N, size], pl.FP32]],
        ):
            out = self.kernel(pool, idx, table, out)
            return out

    return Paged


@pl.program
class PagedMatmul:
    """q @ kv, kv gathered into Mat memory (the default space)."""

    @pl.function(type=pl.FunctionType.InCore)
    def kernel(
        self,
        q: pl.Tensor[[16, N], pl.FP32],
        pool: pl.Tensor[[ROWS, HIDDEN], pl.FP32],
        idx: pl.Tensor[[1, N], pl.INT32],
        table: pl.Tensor[[PAGES], pl.INT32],
        out: pl.Out[pl.Tensor[[16, HIDDEN], pl.FP32]],
    ):
        kv = pl.tensor.paged_gather(
            pool, idx, table, block_size=PAGE, size=HIDDEN, max_indices=N, is_b_matrix=True
        )
        out = pl.store(
            pl.matmul(pl.load(q, [0, 0], [16, N], target_memory=pl.Mem.Mat), kv), [0, 0], out
        )
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        q: pl.Tensor[[16, N], pl.FP32],
        pool: pl.Tensor[[ROWS, HIDDEN], pl.FP32],
        idx: pl.Tensor[[1, N], pl.INT32],
        table: pl.Tensor[[PAGES], pl.INT32],
        out: pl.Out[pl.Tensor[[16, HIDDEN], pl.FP32]],
    ):
        out = self.kernel(q, pool, idx, table, out)
        return out


def _inputs():
    rng = np.random.default_rng(11)
    pool = rng.standard_normal((ROWS, HIDDEN)).astype(np.float32)
    table = rng.permutation(PAGES).astype(np.int32)
    idx = rng.integers(0, ROWS, N).astype(np.int32)
    return pool, idx, table


def _expected(pool, idx, table):
    return pool[table[idx // PAGE] * PAGE + idx % PAGE]


@pytest.mark.parametrize("interpret", [False, True], ids=["compiled", "interpreted"])
@pytest.mark.parametrize("col_off, size", [(0, HIDDEN), (8, 16)], ids=["whole-rows", "columns"])
def test_paged_gather_into_vec(monkeypatch, interpret, col_off, size):
    if interpret:
        monkeypatch.setenv("BLOCKPIPE_INTERPRET", "1")
    pool, idx, table = _inputs()
    out = np.zeros((N, size), np.float32)
    blockpipe.compile(_vec_program(col_off, size), quiet=True)(pool, idx, table, out)
    np.testing.assert_array_equal(out, _expected(pool, idx, table)[:, col_off : col_off + size])


def test_paged_gather_into_mat_feeds_a_matmul():
    pool, idx, table = _inputs()
    q = np.random.default_rng(12).standard_normal((16, N)).astype(np.float32)
    out = np.zeros((16, HIDDEN), np.float32)
    blockpipe.compile(PagedMatmul, quiet=True)(q, pool, idx.reshape(1, N), table, out)
    np.testing.assert_allclose(out, q @ _expected(pool, idx, table), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("interpret", [False, True], ids=["compiled", "interpreted"])
def test_a_page_outside_the_table_fails_the_launch(monkeypatch, interpret):
    if interpret:
        monkeypatch.setenv("BLOCKPIPE_INTERPRET", "1")
    pool, idx, table = _inputs()
    idx[2] = ROWS + PAGE  # page PAGES + 1: past the table
    out = np.zeros((N, HIDDEN), np.float32)
    with pytest.raises(blockpipe.ExecutionError, match="outside"):
        blockpipe.compile(_vec_program(), quiet=True)(pool, idx, table, out)


def test_indices_must_be_max_indices_rows():
    def program():
        @pl.program
        class TooFew:
            @pl.function(type=pl.FunctionType.InCore)
            def kernel(
                self,
                pool: pl.Tensor[[ROWS, HIDDEN], pl.FP32],
                idx: pl.Tensor[[4], pl.INT32],
                table: pl.Tensor[[PAGES], pl.INT32],
                out: pl.Out[pl.Tensor[[N, HIDDEN], pl.FP32]],
            ):
                rows = pl.paged_gather(
                    pool,
                    idx,  # error: indices are max_indices=8 INT32 rows
                    table,
                    block_size=PAGE,
                    size=HIDDEN,
                    max_indices=N,
                    space=pl.Mem.Vec,
                )
                out = pl.store(rows, [0, 0], out)
                return out

        return TooFew

    expect_error(program, lambda p: blockpipe.compile(p, quiet=True))
