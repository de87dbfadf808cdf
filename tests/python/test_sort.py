"""pypto's sorts: pl.tile.sort32 ((value, index) pairs sorted in runs of
32), pl.tile.mrgsort (four sorted lists merged, block_len known at compile
or run time; 2 to 4 sorted tiles merged) and pl.tile.gather_mask (the
values or the indices back), against a NumPy stable sort."""

import numpy as np
import pytest

from targets import TARGETS, compile_at

import blockpipe
import blockpipe.language as pl


def reference(values, indices, run):
    """Each run of `run` (value, index) pairs by value, larger first, NaN
    first, equal values in order."""
    out_v, out_i = values.copy(), indices.copy()
    for r in range(values.shape[0]):
        for begin in range(0, values.shape[1], run):
            v = values[r, begin : begin + run]
            key = np.where(np.isnan(v), -np.inf, -v)
            order = np.lexsort((key, ~np.isnan(v)))
            out_v[r, begin : begin + run] = v[order]
            out_i[r, begin : begin + run] = indices[r, begin : begin + run][order]
    return out_v, out_i


def _sort32(index_dtype):
    """sort32 of a [4, 64] FP32 tile, its indices of `index_dtype`."""

    @pl.program
    class Sort32Of:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(
            self,
            src: pl.Tensor[[4, 64], pl.FP32],
            idx: pl.Tensor[[4, 64], index_dtype],
            pairs: pl.Out[pl.Tensor[[4, 128], pl.FP32]],
        ) -> pl.Tensor[[4, 128], pl.FP32]:
            s = pl.tile.sort32(pl.load(src, [0, 0], [4, 64]), pl.load(idx, [0, 0], [4, 64]))
            return pl.store(s, [0, 0], pairs)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            src: pl.Tensor[[4, 64], pl.FP32],
            idx: pl.Tensor[[4, 64], index_dtype],
            pairs: pl.Out[pl.Tensor[[4, 128], pl.FP32]],
        ) -> pl.Tensor[[4, 128], pl.FP32]:
            pairs = self.kernel(src, idx, pairs)
            return pairs

    return Sort32Of


@pytest.mark.parametrize("where", TARGETS)
def test_int32_indices_keep_their_bits(where, monkeypatch):
    compiled = compile_at(_sort32(pl.INT32), where, monkeypatch)
    rng = np.random.default_rng(17)
    src = rng.standard_normal((4, 64)).astype(np.float32)
    idx = rng.integers(np.iinfo(np.int32).min, np.iinfo(np.int32).max, (4, 64), dtype=np.int32)
    pairs = np.zeros((4, 128), np.float32)
    compiled(src, idx, pairs)
    values, indices = reference(src, idx, 32)
    np.testing.assert_array_equal(pairs[:, 0::2], values)
    np.testing.assert_array_equal(pairs.view(np.int32)[:, 1::2], indices)


@pytest.mark.parametrize("where", TARGETS)
def test_sort32_pairs_values_with_their_indices_in_runs_of_32(where, monkeypatch):
    compiled = compile_at(_sort32(pl.UINT32), where, monkeypatch)
    rng = np.random.default_rng(7)
    src = rng.integers(-5, 5, (4, 64)).astype(np.float32)  # many ties
    src[0, 3], src[1, 40], src[2, 0] = np.nan, np.inf, -np.inf
    idx = rng.permutation(4 * 64).astype(np.uint32).reshape(4, 64)
    pairs = np.zeros((4, 128), np.float32)
    compiled(src, idx, pairs)
    values, indices = reference(src, idx, 32)
    np.testing.assert_array_equal(pairs[:, 0::2], values)
    np.testing.assert_array_equal(pairs.view(np.uint32)[:, 1::2], indices)


@pl.program
class FullSort:
    """sort32, then merges with block_len 64 and 256 (a run-time value in
    a loop), then the values and indices read back."""

    @pl.function(type=pl.FunctionType.InCore)
    def kernel(
        self,
        src: pl.Tensor[[2, 512], pl.FP32],
        idx: pl.Tensor[[2, 512], pl.UINT32],
        vals: pl.Out[pl.Tensor[[2, 512], pl.FP32]],
        ids: pl.Out[pl.Tensor[[2, 512], pl.UINT32]],
    ):
        s = pl.tile.sort32(pl.load(src, [0, 0], [2, 512]), pl.load(idx, [0, 0], [2, 512]))
        for i, (t,) in pl.range(2, init_values=(s,)):
            merged = pl.tile.mrgsort(t, block_len=1 << (6 + 2 * i))
            result = pl.yield_(merged)
        vals = pl.store(
            pl.tile.gather_mask(result, mask_pattern=pl.tile.MaskPattern.P0101), [0, 0], vals
        )
        bits = pl.tile.gather_mask(
            result, mask_pattern=pl.tile.MaskPattern.P1010, output_dtype=pl.UINT32
        )
        ids = pl.store(bits, [0, 0], ids)
        return vals, ids

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        src: pl.Tensor[[2, 512], pl.FP32],
        idx: pl.Tensor[[2, 512], pl.UINT32],
        vals: pl.Out[pl.Tensor[[2, 512], pl.FP32]],
        ids: pl.Out[pl.Tensor[[2, 512], pl.UINT32]],
    ):
        vals, ids = self.kernel(src, idx, vals, ids)
        return vals, ids


@pytest.mark.parametrize("where", TARGETS)
def test_merges_with_a_run_time_block_len_sort_the_rows(where, monkeypatch):
    compiled = compile_at(FullSort, where, monkeypatch)
    rng = np.random.default_rng(8)
    src = rng.standard_normal((2, 512)).astype(np.float32)
    src[1, :100] = 0.5  # ties across the lists merged
    idx = np.tile(np.arange(512, dtype=np.uint32), (2, 1))
    vals = np.zeros((2, 512), np.float32)
    ids = np.zeros((2, 512), np.uint32)
    compiled(src, idx, vals, ids)
    values, indices = reference(src, idx, 512)
    np.testing.assert_array_equal(vals, values)
    np.testing.assert_array_equal(ids, indices)


@pl.program
class TwoWay:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(
        self,
        src: pl.Tensor[[1, 128], pl.FP32],
        idx: pl.Tensor[[1, 128], pl.UINT32],
        pairs: pl.Out[pl.Tensor[[1, 256], pl.FP32]],
    ) -> pl.Tensor[[1, 256], pl.FP32]:
        left = pl.tile.sort32(pl.load(src, [0, 0], [1, 32]), pl.load(idx, [0, 0], [1, 32]))
        right = pl.tile.sort32(pl.load(src, [0, 32], [1, 96]), pl.load(idx, [0, 32], [1, 96]))
        right = pl.tile.mrgsort(right, block_len=64)
        both = pl.tile.mrgsort(left, right, tmp=left)
        return pl.store(both, [0, 0], pairs)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        src: pl.Tensor[[1, 128], pl.FP32],
        idx: pl.Tensor[[1, 128], pl.UINT32],
        pairs: pl.Out[pl.Tensor[[1, 256], pl.FP32]],
    ) -> pl.Tensor[[1, 256], pl.FP32]:
        pairs = self.kernel(src, idx, pairs)
        return pairs


@pytest.mark.parametrize("where", TARGETS)
def test_sorted_tiles_of_other_lengths_merge_into_one(where, monkeypatch):
    compiled = compile_at(TwoWay, where, monkeypatch)
    rng = np.random.default_rng(9)
    src = rng.standard_normal((1, 128)).astype(np.float32)
    idx = np.arange(128, dtype=np.uint32).reshape(1, 128)
    pairs = np.zeros((1, 256), np.float32)
    compiled(src, idx, pairs)
    values, indices = reference(src, idx, 128)
    np.testing.assert_array_equal(pairs[:, 0::2], values)
    np.testing.assert_array_equal(pairs.view(np.uint32)[:, 1::2], indices)


@pl.program
class RunTimeLength:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(
        self,
        pairs: pl.Tensor[[1, 128], pl.FP32],
        out: pl.Out[pl.Tensor[[1, 128], pl.FP32]],
        length: pl.Scalar[pl.INDEX],
    ) -> pl.Tensor[[1, 128], pl.FP32]:
        merged = pl.tile.mrgsort(pl.load(pairs, [0, 0], [1, 128]), block_len=length)
        return pl.store(merged, [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        pairs: pl.Tensor[[1, 128], pl.FP32],
        out: pl.Out[pl.Tensor[[1, 128], pl.FP32]],
        length: pl.Scalar[pl.INDEX],
    ) -> pl.Tensor[[1, 128], pl.FP32]:
        out = self.kernel(pairs, out, length)
        return out


@pytest.mark.parametrize("where", ["cpu-sim", "cuda-emu"])
def test_a_block_len_below_one_fails_the_launch_at_its_line(where, monkeypatch):
    compiled = compile_at(RunTimeLength, where, monkeypatch)
    pairs = np.zeros((1, 128), np.float32)
    out = np.full((1, 128), 3.0, np.float32)
    with pytest.raises(blockpipe.ExecutionError, match="block_len must be positive") as info:
        compiled(pairs, out, 0)
    assert "test_sort.py:" in str(info.value)
    assert (out == 3.0).all()  # outputs untouched


def _misuse(body):
    @pl.program
    class Misuse:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(
            self, x: pl.Tensor[[1, 64], pl.FP32], out: pl.Out[pl.Tensor[[1, 128], pl.FP32]]
        ) -> pl.Tensor[[1, 128], pl.FP32]:
            return body(pl.load(x, [0, 0], [1, 64]), out)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self, x: pl.Tensor[[1, 64], pl.FP32], out: pl.Out[pl.Tensor[[1, 128], pl.FP32]]
        ) -> pl.Tensor[[1, 128], pl.FP32]:
            out = self.kernel(x, out)
            return out

    return Misuse


def float_indices(t, out):
    return pl.store(pl.tile.sort32(t, t), [0, 0], out)


def zero_block_len(t, out):
    merged = pl.tile.mrgsort(pl.tile.sort32(t, pl.cast(t, pl.INT32)), block_len=0)
    return pl.store(merged, [0, 0], out)


def no_block_len(t, out):
    merged = pl.tile.mrgsort(pl.tile.sort32(t, pl.cast(t, pl.INT32)))
    return pl.store(merged, [0, 0], out)


@pytest.mark.parametrize(
    "body,message",
    [
        (float_indices, "pl.tile.sort32's idx must be a UINT32 or INT32 tile"),
        (zero_block_len, "block_len must be positive, got 0"),
        (no_block_len, "pl.tile.mrgsort needs block_len="),
    ],
)
def test_a_misused_sort_is_an_error_at_its_line(body, message):
    with pytest.raises(blockpipe.CompileError, match=message) as info:
        blockpipe.compile(_misuse(body), quiet=True)
    assert info.value.line == body.__code__.co_firstlineno + 1


def test_sorts_build_with_nvcc_warning_free(tmp_path):
    import test_cuda_target

    if test_cuda_target.NVCC is None:
        pytest.skip("no CUDA toolkit (nvcc) on this machine")
    test_cuda_target.build_cuda(FullSort, tmp_path / "sort")
