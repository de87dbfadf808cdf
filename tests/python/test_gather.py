"""Gathers (bp.gather): pl.mgather's rows and elements of a GM tensor under
each out-of-range rule, pl.tile.gather of a tile's elements, pl.tensor.gather
along the last dim and by mask pattern; an index outside its source with no
rule is a run-time error naming it, the outputs untouched."""

import numpy as np
import pytest

import located

import blockpipe
import blockpipe.language as pl

TARGETS = [dict(target="cpu-sim"), dict(target="cuda", device="cuda-emu")]
ROWS, COLS, R = 64, 32, 16


def row_gather(dtype, oob: str, valid: int = R):
    @pl.program
    class RowGather:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(
            self,
            mem: pl.Tensor[[ROWS, COLS], dtype],
            idx: pl.Tensor[[1, R], pl.INT32],
            out: pl.InOut[pl.Tensor[[R, COLS], dtype]],
        ) -> pl.Tensor[[R, COLS], dtype]:
            i = pl.load(idx, [0, 0], [1, R], valid_shape=[1, valid])
            rows = pl.tile.mgather(mem, i, coalesce="row", gather_oob=oob)
            return pl.store(rows, [0, 0], out)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            mem: pl.Tensor[[ROWS, COLS], dtype],
            idx: pl.Tensor[[1, R], pl.INT32],
            out: pl.InOut[pl.Tensor[[R, COLS], dtype]],
        ) -> pl.Tensor[[R, COLS], dtype]:
            out = self.kernel(mem, idx, out)
            return out

    return RowGather


def expected_rows(mem, idx, oob, valid):
    u = idx.reshape(-1)[:valid].astype(np.int64) & 0xFFFFFFFF
    n = mem.shape[0]
    out = np.zeros((R, mem.shape[1]), mem.dtype)
    if oob == "clamp":
        out[:valid] = mem[np.minimum(u, n - 1)]
    elif oob == "wrap":
        out[:valid] = mem[u % n]
    elif oob == "zero":
        inside = u < n
        out[:valid][inside] = mem[u[inside]]
    else:
        out[:valid] = mem[u]
    return out


OUTSIDE = np.array([[-1, 64, 65, 7, 80, 0, 18, 55, 4, 70, 13, 47, 8, 38, 22, 60]], np.int32)
INSIDE = np.array([[63, 2, 41, 7, 31, 0, 18, 55, 4, 29, 13, 47, 8, 38, 22, 60]], np.int32)


@pytest.mark.parametrize("where", TARGETS, ids=["cpu-sim", "cuda-emu"])
@pytest.mark.parametrize("oob", ["undefined", "clamp", "wrap", "zero"])
def test_row_gather_follows_each_out_of_range_rule(where, oob):
    compiled = blockpipe.compile(row_gather(pl.FP32, oob), quiet=True, **where)
    mem = np.random.default_rng(1).standard_normal((ROWS, COLS)).astype(np.float32)
    idx = INSIDE if oob == "undefined" else OUTSIDE
    out = np.zeros((R, COLS), np.float32)
    compiled(mem, idx, out)
    np.testing.assert_array_equal(out, expected_rows(mem, idx, oob, R))


@pytest.mark.parametrize(
    "dtype,np_dtype",
    [
        (pl.INT8, np.int8),
        (pl.UINT16, np.uint16),
        (pl.INT32, np.int32),
        (pl.BF16, None),
        (pl.FP16, np.float16),
    ],
)
def test_row_gather_of_each_dtype_with_a_valid_shape(dtype, np_dtype):
    if np_dtype is None:
        np_dtype = pytest.importorskip("ml_dtypes").bfloat16
    compiled = blockpipe.compile(row_gather(dtype, "undefined", valid=9), quiet=True)
    mem = (np.arange(ROWS * COLS) % 97).reshape(ROWS, COLS).astype(np_dtype)
    idx = INSIDE.copy()
    idx[0, 9:] = 1000  # outside the valid shape: never read
    out = np.full((R, COLS), 3, np_dtype)
    compiled(mem, idx, out)
    want = expected_rows(mem, idx, "undefined", 9)
    want[9:] = 3  # the rows past the valid shape are not stored
    np.testing.assert_array_equal(out, want)


@pl.program
class ElementGather:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(
        self,
        mem: pl.Tensor[[256], pl.FP16],
        idx: pl.Tensor[[8, 32], pl.INT32],
        wrapped: pl.Out[pl.Tensor[[8, 32], pl.FP16]],
        zeroed: pl.Out[pl.Tensor[[8, 32], pl.FP16]],
    ):
        i = pl.load(idx, [0, 0], [8, 32])
        wrapped = pl.store(pl.mgather(mem, i, coalesce="elem", gather_oob="wrap"), [0, 0], wrapped)
        zeroed = pl.store(pl.mgather(mem, i, coalesce=1, gather_oob=3), [0, 0], zeroed)
        return wrapped, zeroed

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        mem: pl.Tensor[[256], pl.FP16],
        idx: pl.Tensor[[8, 32], pl.INT32],
        wrapped: pl.Out[pl.Tensor[[8, 32], pl.FP16]],
        zeroed: pl.Out[pl.Tensor[[8, 32], pl.FP16]],
    ):
        wrapped, zeroed = self.kernel(mem, idx, wrapped, zeroed)
        return wrapped, zeroed


@pytest.mark.parametrize("where", TARGETS, ids=["cpu-sim", "cuda-emu"])
def test_element_gather_wraps_and_zeroes(where):
    compiled = blockpipe.compile(ElementGather, quiet=True, **where)
    mem = np.random.default_rng(2).standard_normal(256).astype(np.float16)
    mem[5] = np.inf
    mem[6] = np.nan
    idx = (np.arange(256, dtype=np.int32) * 7 - 40).reshape(8, 32)
    idx[0, :4] = [-1, 256, 5, 6]
    wrapped = np.zeros((8, 32), np.float16)
    zeroed = np.zeros((8, 32), np.float16)
    compiled(mem, idx, wrapped, zeroed)
    u = idx.astype(np.int64) & 0xFFFFFFFF
    np.testing.assert_array_equal(wrapped, mem[u % 256])
    np.testing.assert_array_equal(zeroed, np.where(u < 256, mem[np.minimum(u, 255)], 0))


@pl.program
class TileGathers:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(
        self,
        x: pl.Tensor[[8, 16], pl.FP32],
        flat: pl.Tensor[[4, 8], pl.INT32],
        cols: pl.Tensor[[8, 8], pl.INT32],
        a: pl.Out[pl.Tensor[[4, 8], pl.FP32]],
        b: pl.Out[pl.Tensor[[8, 8], pl.FP32]],
        even: pl.Out[pl.Tensor[[8, 8], pl.FP32]],
        third: pl.Out[pl.Tensor[[8, 4], pl.FP32]],
    ):
        t = pl.load(x, [0, 0], [8, 16])
        a = pl.store(pl.tile.gather(t, pl.load(flat, [0, 0], [4, 8]), t), [0, 0], a)
        b = pl.store(pl.tensor.gather(t, dim=-1, index=pl.load(cols, [0, 0], [8, 8])), [0, 0], b)
        even = pl.store(pl.tensor.gather(x, mask_pattern=pl.tile.MaskPattern.P0101), [0, 0], even)
        third = pl.store(pl.gather(t, mask_pattern=pl.tile.MaskPattern.P0100), [0, 0], third)
        return a, b, even, third

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[8, 16], pl.FP32],
        flat: pl.Tensor[[4, 8], pl.INT32],
        cols: pl.Tensor[[8, 8], pl.INT32],
        a: pl.Out[pl.Tensor[[4, 8], pl.FP32]],
        b: pl.Out[pl.Tensor[[8, 8], pl.FP32]],
        even: pl.Out[pl.Tensor[[8, 8], pl.FP32]],
        third: pl.Out[pl.Tensor[[8, 4], pl.FP32]],
    ):
        a, b, even, third = self.kernel(x, flat, cols, a, b, even, third)
        return a, b, even, third


def tile_gather_inputs(seed=3):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((8, 16)).astype(np.float32)
    flat = rng.integers(0, 128, (4, 8)).astype(np.int32)
    cols = rng.integers(0, 16, (8, 8)).astype(np.int32)
    outs = [np.zeros(s, np.float32) for s in [(4, 8), (8, 8), (8, 8), (8, 4)]]
    return x, flat, cols, outs


@pytest.mark.parametrize("where", TARGETS, ids=["cpu-sim", "cuda-emu"])
def test_tile_gathers_match_numpy(where):
    compiled = blockpipe.compile(TileGathers, quiet=True, **where)
    x, flat, cols, (a, b, even, third) = tile_gather_inputs()
    compiled(x, flat, cols, a, b, even, third)
    np.testing.assert_array_equal(a, x.reshape(-1)[flat])
    np.testing.assert_array_equal(b, np.take_along_axis(x, cols, axis=-1))
    np.testing.assert_array_equal(even, x[:, 0::2])
    np.testing.assert_array_equal(third, x[:, 2::4])


@pytest.mark.parametrize("where", TARGETS, ids=["cpu-sim", "cuda-emu"])
def test_an_index_outside_the_source_fails_naming_it(where):
    compiled = blockpipe.compile(TileGathers, quiet=True, **where)
    x, flat, cols, outs = tile_gather_inputs()
    cols[5, 3] = 16  # one past the row's end
    before = [o.copy() for o in outs]
    with pytest.raises(blockpipe.ExecutionError) as info:
        compiled(x, flat, cols, *outs)
    message = str(info.value)
    assert "index 16 at [5, 3] of the indices is outside the source's [0, 16)" in message
    assert "test_gather.py:" in message and "kernel" in message
    for out, old in zip(outs, before):
        np.testing.assert_array_equal(out, old)


def test_a_negative_row_index_fails_and_is_read_as_unsigned():
    compiled = blockpipe.compile(row_gather(pl.FP32, "undefined"), quiet=True)
    mem = np.zeros((ROWS, COLS), np.float32)
    idx = INSIDE.copy()
    idx[0, 4] = -1
    out = np.ones((R, COLS), np.float32)
    with pytest.raises(blockpipe.ExecutionError, match=r"index -1 at \[0, 4\].*\[0, 64\)"):
        compiled(mem, idx, out)
    np.testing.assert_array_equal(out, 1)


@pytest.mark.parametrize(
    "call,message",
    [
        ("pl.tile.mgather(x, i, coalesce='col')", "coalesce must be one of 'row', 'elem'"),
        ("pl.tile.mgather(x, i, gather_oob='saturate')", "gather_oob must be one of"),
        ("pl.tile.mgather(x, pl.load(x, [0, 0], [1, 16]))", "must be a tile of integers"),
        ("pl.tile.mgather(x, pl.load(j, [0, 0], [2, 8]))", r"takes a \[1, R\] or \[R, 1\]"),
        ("pl.tensor.gather(x, dim=2, index=i)", "dim is 2, outside input's 2 dims"),
        ("pl.tensor.gather(x, mask_pattern=9)", "mask_pattern must be 1..7"),
        ("pl.tensor.gather(x, mask_pattern=1, output_dtype=pl.INT16)", "of the same size"),
    ],
)
def test_misuse_is_an_error_at_its_line(tmp_path, call, message):
    module, source = located.module_from(
        tmp_path,
        "import blockpipe.language as pl\n\n\n"
        "@pl.program\n"
        "class P:\n"
        "    @pl.function(type=pl.FunctionType.InCore)\n"
        "    def k(self, x: pl.Tensor[[16, 16], pl.FP32], j: pl.Tensor[[2, 8], pl.INT32],\n"
        "          y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:\n"
        "        i = pl.load(j, [0, 0], [1, 8])\n"
        f"        t = {call}\n"
        "        return pl.store(t, [0, 0], y)\n\n"
        "    @pl.function(type=pl.FunctionType.Orchestration)\n"
        "    def main(self, x: pl.Tensor[[16, 16], pl.FP32], j: pl.Tensor[[2, 8], pl.INT32],\n"
        "             y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:\n"
        "        y = self.k(x, j, y)\n"
        "        return y\n",
    )
    with pytest.raises(blockpipe.CompileError, match=message) as info:
        blockpipe.compile(module.P, quiet=True)
    assert (info.value.file, info.value.line) == (source, 10)


def test_the_interpreter_gathers_as_compiled(monkeypatch):
    x, flat, cols, outs = tile_gather_inputs(seed=4)
    compiled = blockpipe.compile(TileGathers, quiet=True)
    compiled(x, flat, cols, *outs)
    monkeypatch.setenv("BLOCKPIPE_INTERPRET", "1")
    interpreted = blockpipe.compile(TileGathers)
    again = [np.zeros_like(o) for o in outs]
    interpreted(x, flat, cols, *again)
    for a, b in zip(outs, again):
        np.testing.assert_array_equal(a, b)
    cols[0, 0] = -3
    with pytest.raises(blockpipe.ExecutionError, match=r"index -3 at \[0, 0\]"):
        interpreted(x, flat, cols, *again)


def test_a_mat_gather_feeds_a_matmul():
    valid = [12, 32]  # a list of the program's Python, indexed in the kernel

    @pl.program
    class MatGather:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(
            self,
            mem: pl.Tensor[[ROWS, COLS], pl.FP16],
            idx: pl.Tensor[[1, R], pl.INT32],
            eye: pl.Tensor[[R, R], pl.FP16],
            out: pl.Out[pl.Tensor[[8, COLS], pl.FP32]],
        ) -> pl.Tensor[[8, COLS], pl.FP32]:
            rows = pl.tile.mgather(
                mem, idx, gather_oob="clamp", target_memory=pl.Mem.Mat, valid_shape=valid
            )
            e = pl.load(eye, [0, 0], [R, R], valid_shape=[R, valid[0]], target_memory=pl.Mem.Mat)
            product = pl.matmul(e, rows)
            return pl.store(pl.tile.slice(product, [8, COLS], [0, 0]), [0, 0], out)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            mem: pl.Tensor[[ROWS, COLS], pl.FP16],
            idx: pl.Tensor[[1, R], pl.INT32],
            eye: pl.Tensor[[R, R], pl.FP16],
            out: pl.Out[pl.Tensor[[8, COLS], pl.FP32]],
        ) -> pl.Tensor[[8, COLS], pl.FP32]:
            out = self.kernel(mem, idx, eye, out)
            return out

    compiled = blockpipe.compile(MatGather, quiet=True)
    mem = (np.arange(ROWS * COLS) % 53).reshape(ROWS, COLS).astype(np.float16)
    out = np.zeros((8, COLS), np.float32)
    compiled(mem, OUTSIDE, np.eye(R, dtype=np.float16), out)
    gathered = expected_rows(mem, OUTSIDE, "clamp", R).astype(np.float32)
    gathered[12:] = 0  # outside the valid shape: padded before the matmul
    np.testing.assert_array_equal(out, gathered[:8])


def test_the_gathers_build_with_nvcc_warning_free(tmp_path):
    """Each form, with its run-time check, built for the GPU with -Werror."""
    import test_cuda_target

    if test_cuda_target.NVCC is None:
        pytest.skip("no CUDA toolkit (nvcc) on this machine")
    test_cuda_target.build_cuda(TileGathers, tmp_path / "tile")
    test_cuda_target.build_cuda(ElementGather, tmp_path / "elements")
    test_cuda_target.build_cuda(row_gather(pl.INT8, "undefined", valid=9), tmp_path / "rows")
