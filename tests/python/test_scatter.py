"""Scatters (bp.scatter): pl.tile.scatter by flat index, pl.tensor.scatter
along the last dim and by mask pattern, pl.scatter_update of whole rows;
the last of several writes to one place stays; an index outside the
destination is a run-time error naming it, the outputs untouched."""

import numpy as np
import pytest

import located

import blockpipe
import blockpipe.language as pl

TARGETS = [dict(target="cpu-sim"), dict(target="cuda", device="cuda-emu")]


@pl.program
class Scatters:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(
        self,
        base: pl.Tensor[[8, 16], pl.FP32],
        vals: pl.Tensor[[8, 4], pl.FP32],
        flat: pl.Tensor[[8, 4], pl.INT32],
        cols: pl.Tensor[[8, 4], pl.INT32],
        rows: pl.Tensor[[2, 2], pl.INT32],
        a: pl.Out[pl.Tensor[[8, 16], pl.FP32]],
        b: pl.Out[pl.Tensor[[8, 16], pl.FP32]],
        c: pl.Out[pl.Tensor[[8, 16], pl.FP32]],
        d: pl.Out[pl.Tensor[[8, 16], pl.FP32]],
    ):
        t = pl.load(base, [0, 0], [8, 16])
        v = pl.load(vals, [0, 0], [8, 4])
        a = pl.store(pl.tile.scatter(t, v, pl.load(flat, [0, 0], [8, 4])), [0, 0], a)
        b = pl.store(
            pl.tensor.scatter(t, dim=-1, index=pl.load(cols, [0, 0], [8, 4]), src=v), [0, 0], b
        )
        half = pl.load(base, [0, 0], [8, 8])
        c = pl.store(
            pl.tensor.scatter(half, mask_pattern=pl.tile.MaskPattern.P1010, dst=t), [0, 0], c
        )
        four = pl.load(base, [4, 0], [4, 16])
        d = pl.store(pl.scatter_update(t, -2, pl.load(rows, [0, 0], [2, 2]), four), [0, 0], d)
        return a, b, c, d

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        base: pl.Tensor[[8, 16], pl.FP32],
        vals: pl.Tensor[[8, 4], pl.FP32],
        flat: pl.Tensor[[8, 4], pl.INT32],
        cols: pl.Tensor[[8, 4], pl.INT32],
        rows: pl.Tensor[[2, 2], pl.INT32],
        a: pl.Out[pl.Tensor[[8, 16], pl.FP32]],
        b: pl.Out[pl.Tensor[[8, 16], pl.FP32]],
        c: pl.Out[pl.Tensor[[8, 16], pl.FP32]],
        d: pl.Out[pl.Tensor[[8, 16], pl.FP32]],
    ):
        a, b, c, d = self.kernel(base, vals, flat, cols, rows, a, b, c, d)
        return a, b, c, d


def inputs(seed=5):
    rng = np.random.default_rng(seed)
    base = rng.standard_normal((8, 16)).astype(np.float32)
    vals = rng.standard_normal((8, 4)).astype(np.float32)
    flat = rng.integers(0, 128, (8, 4)).astype(np.int32)
    flat[7, 3] = flat[0, 0]  # two writes to one place: the last stays
    cols = np.stack([rng.permutation(16)[:4] for _ in range(8)]).astype(np.int32)
    rows = np.array([[6, 1], [3, 6]], np.int32)  # row 6 twice: the last stays
    outs = [np.zeros((8, 16), np.float32) for _ in range(4)]
    return base, vals, flat, cols, rows, outs


def expected(base, vals, flat, cols, rows):
    a = base.copy().reshape(-1)
    for k, at in enumerate(flat.reshape(-1)):
        a[at] = vals.reshape(-1)[k]
    b = base.copy()
    np.put_along_axis(b, cols.astype(np.int64), vals, axis=-1)
    c = base.copy()
    c[:, 1::2] = base[:, :8]
    d = base.copy()
    for k, r in enumerate(rows.reshape(-1)):
        d[r] = base[4 + k]
    return a.reshape(8, 16), b, c, d


@pytest.mark.parametrize("where", TARGETS, ids=["cpu-sim", "cuda-emu"])
def test_scatters_match_numpy(where):
    compiled = blockpipe.compile(Scatters, quiet=True, **where)
    base, vals, flat, cols, rows, outs = inputs()
    compiled(base, vals, flat, cols, rows, *outs)
    for got, want in zip(outs, expected(base, vals, flat, cols, rows)):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("where", TARGETS, ids=["cpu-sim", "cuda-emu"])
def test_an_index_outside_the_destination_fails_naming_it(where):
    compiled = blockpipe.compile(Scatters, quiet=True, **where)
    base, vals, flat, cols, rows, outs = inputs()
    rows[1, 0] = -2
    with pytest.raises(blockpipe.ExecutionError) as info:
        compiled(base, vals, flat, cols, rows, *outs)
    assert "index -2 at [1, 0] of the indices is outside the source's [0, 8)" in str(info.value)
    assert "test_scatter.py:" in str(info.value)
    for out in outs:
        np.testing.assert_array_equal(out, 0)


@pytest.mark.parametrize(
    "dtype,np_dtype", [(pl.INT8, np.int8), (pl.INT16, np.int16), (pl.FP16, np.float16)]
)
def test_a_row_update_of_each_dtype(dtype, np_dtype):
    @pl.jit
    def update(
        x: pl.Tensor[[32, 32], dtype],
        idx: pl.Tensor[[2, 8], pl.INT32],
        src: pl.Tensor[[16, 32], dtype],
        out: pl.Out[pl.Tensor[[32, 32], dtype]],
    ):
        with pl.at(level=pl.Level.CORE_GROUP):
            result = pl.tensor.scatter_update(x, -2, idx, src)
            out = pl.assemble(out, result, [0, 0])
        return out

    rng = np.random.default_rng(6)
    x = rng.integers(-100, 100, (32, 32)).astype(np_dtype)
    src = rng.integers(-100, 100, (16, 32)).astype(np_dtype)
    idx = rng.permutation(32)[:16].reshape(2, 8).astype(np.int32)
    out = np.zeros((32, 32), np_dtype)
    update(x, idx, src, out)
    want = x.copy()
    want[idx.reshape(-1)] = src
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize(
    "call,message",
    [
        (
            "pl.tile.scatter(t, t, pl.load(j, [0, 0], [2, 8]))",
            "the indices must have the source's shape",
        ),
        ("pl.tensor.scatter(t, dim=0, index=i, src=t)", "along the last dim"),
        ("pl.tensor.scatter(t, mask_pattern=1, dst=t)", r"dst must be \[16, 32\]"),
        ("pl.scatter_update(t, -1, i, t)", r"replaces rows \(dim=-2\)"),
        ("pl.scatter_update(t, -2, i, t)", r"one row index per source row \(16\)"),
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
        "        t = pl.load(x, [0, 0], [16, 16])\n"
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
    assert (info.value.file, info.value.line) == (source, 11)


def test_the_interpreter_scatters_as_compiled(monkeypatch):
    base, vals, flat, cols, rows, outs = inputs(seed=7)
    monkeypatch.setenv("BLOCKPIPE_INTERPRET", "1")
    interpreted = blockpipe.compile(Scatters)
    interpreted(base, vals, flat, cols, rows, *outs)
    for got, want in zip(outs, expected(base, vals, flat, cols, rows)):
        np.testing.assert_array_equal(got, want)
    flat[2, 2] = 128
    with pytest.raises(blockpipe.ExecutionError, match=r"index 128 at \[2, 2\]"):
        interpreted(base, vals, flat, cols, rows, *outs)


def test_the_scatters_build_with_nvcc_warning_free(tmp_path):
    import test_cuda_target

    if test_cuda_target.NVCC is None:
        pytest.skip("no CUDA toolkit (nvcc) on this machine")
    test_cuda_target.build_cuda(Scatters, tmp_path / "scatters")
