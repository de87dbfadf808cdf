"""pl.tile.gatherb: 32-byte blocks of a tile at byte offsets, for each
dtype's element size; the valid shape follows the offsets'; a block past
the source's end fails the launch; interpreted as compiled."""

import numpy as np
import pytest

import blockpipe
import blockpipe.language as pl

TARGETS = [dict(target="cpu-sim"), dict(target="cuda", device="cuda-emu")]
ROWS, BLOCKS = 4, 8


def gatherb_program(dtype, cols, valid=(ROWS, BLOCKS)):
    per = 32 // {pl.INT8: 1, pl.UINT8: 1, pl.FP16: 2, pl.INT16: 2, pl.FP32: 4, pl.INT32: 4}[dtype]
    out_cols = BLOCKS * per
    valid_rows, valid_blocks = valid

    @pl.program
    class Blocks:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(
            self,
            src: pl.Tensor[[1, cols], dtype],
            offset: pl.Tensor[[ROWS, BLOCKS], pl.UINT32],
            out: pl.InOut[pl.Tensor[[ROWS, out_cols], dtype]],
        ) -> pl.Tensor[[ROWS, out_cols], dtype]:
            s = pl.load(src, [0, 0], [1, cols])
            o = pl.load(offset, [0, 0], [ROWS, BLOCKS], valid_shape=[valid_rows, valid_blocks])
            return pl.store(pl.tile.gatherb(s, o), [0, 0], out)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            src: pl.Tensor[[1, cols], dtype],
            offset: pl.Tensor[[ROWS, BLOCKS], pl.UINT32],
            out: pl.InOut[pl.Tensor[[ROWS, out_cols], dtype]],
        ) -> pl.Tensor[[ROWS, out_cols], dtype]:
            out = self.kernel(src, offset, out)
            return out

    return Blocks, per


def expected(src, offsets, valid, fill):
    data = src.reshape(-1).view(np.uint8)
    per = 32 // src.dtype.itemsize
    out = np.full((ROWS, BLOCKS * per), fill, src.dtype)
    for i in range(valid[0]):
        for j in range(valid[1]):
            start = int(offsets[i, j]) & ~31
            out[i, j * per : (j + 1) * per] = data[start : start + 32].view(src.dtype)
    return out


@pytest.mark.parametrize("where", TARGETS, ids=["cpu-sim", "cuda-emu"])
@pytest.mark.parametrize("dtype", [pl.INT8, pl.FP16, pl.INT32, pl.FP32])
def test_blocks_of_each_element_size(where, dtype):
    np_dtype = np.dtype(dtype.numpy)
    cols = ROWS * BLOCKS * 32 // np_dtype.itemsize
    program, per = gatherb_program(dtype, cols)
    compiled = blockpipe.compile(program, quiet=True, **where)
    src = (np.arange(cols) % 101 - 50).astype(np_dtype).reshape(1, cols)
    rng = np.random.default_rng(8)
    offsets = (rng.permutation(ROWS * BLOCKS) * 32).astype(np.uint32).reshape(ROWS, BLOCKS)
    offsets[0, 0] += 7  # the low 5 bits name no block
    out = np.zeros((ROWS, BLOCKS * per), np_dtype)
    compiled(src, offsets, out)
    np.testing.assert_array_equal(out, expected(src, offsets, (ROWS, BLOCKS), 0))


def test_the_valid_shape_follows_the_offsets():
    cols = ROWS * BLOCKS * 8
    program, per = gatherb_program(pl.FP32, cols, valid=(3, 5))
    compiled = blockpipe.compile(program, quiet=True)
    src = np.arange(cols, dtype=np.float32).reshape(1, cols)
    offsets = (np.arange(ROWS * BLOCKS)[::-1] * 32).astype(np.uint32).reshape(ROWS, BLOCKS)
    offsets[3, 6] = 1 << 30  # outside the valid shape: never read
    out = np.full((ROWS, BLOCKS * per), -1, np.float32)
    compiled(src, offsets, out)
    np.testing.assert_array_equal(out, expected(src, offsets, (3, 5), -1))


@pytest.mark.parametrize("interpret", [False, True], ids=["compiled", "interpreted"])
def test_a_block_past_the_end_fails(monkeypatch, interpret):
    if interpret:
        monkeypatch.setenv("BLOCKPIPE_INTERPRET", "1")
    cols = ROWS * BLOCKS * 8
    program, per = gatherb_program(pl.FP32, cols)
    compiled = (
        blockpipe.compile(program, quiet=True) if not interpret else blockpipe.compile(program)
    )
    src = np.arange(cols, dtype=np.float32).reshape(1, cols)
    offsets = np.zeros((ROWS, BLOCKS), np.uint32)
    offsets[2, 1] = ROWS * BLOCKS * 32  # one block past the end
    out = np.zeros((ROWS, BLOCKS * per), np.float32)
    with pytest.raises(blockpipe.ExecutionError, match=r"index 256 at \[2, 8\].*\[0, 256\)"):
        compiled(src, offsets, out)
    np.testing.assert_array_equal(out, 0)


@pytest.mark.parametrize("interpret", [False, True], ids=["compiled", "interpreted"])
def test_another_output_dtype_reads_the_same_bytes(monkeypatch, interpret):
    if interpret:
        monkeypatch.setenv("BLOCKPIPE_INTERPRET", "1")

    @pl.program
    class Reinterpret:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(
            self,
            src: pl.Tensor[[1, 64], pl.INT16],
            offset: pl.Tensor[[1, 2], pl.UINT32],
            out: pl.Out[pl.Tensor[[1, 16], pl.INT32]],
        ) -> pl.Tensor[[1, 16], pl.INT32]:
            s = pl.load(src, [0, 0], [1, 64])
            o = pl.load(offset, [0, 0], [1, 2])
            return pl.store(pl.tile.gatherb(s, o, output_dtype=pl.INT32), [0, 0], out)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            src: pl.Tensor[[1, 64], pl.INT16],
            offset: pl.Tensor[[1, 2], pl.UINT32],
            out: pl.Out[pl.Tensor[[1, 16], pl.INT32]],
        ) -> pl.Tensor[[1, 16], pl.INT32]:
            out = self.kernel(src, offset, out)
            return out

    compiled = (
        blockpipe.compile(Reinterpret) if interpret else blockpipe.compile(Reinterpret, quiet=True)
    )
    src = (np.arange(64, dtype=np.int16) * 977 - 30000).reshape(1, 64)
    offsets = np.array([[96, 32]], np.uint32)
    out = np.zeros((1, 16), np.int32)
    compiled(src, offsets, out)
    data = src.view(np.uint8).reshape(-1)
    want = np.concatenate([data[96:128], data[32:64]]).view(np.int32).reshape(1, 16)
    np.testing.assert_array_equal(out, want)
