"""pypto's pl.mscatter: a tile's elements written into a GM tensor at flat
indices, the rest of the tensor kept; an index outside fails the launch
at the call's line with the tensor untouched; a launch of several blocks
scattering into one tensor is warned of."""

import warnings

import numpy as np
import pytest

from targets import TARGETS, compile_at

import blockpipe
import blockpipe.language as pl

DTYPES = {pl.FP32: np.float32, pl.FP16: np.float16, pl.INT32: np.int32, pl.INT16: np.int16}


def _scattering(dtype, blocks=1):
    @pl.program
    class Scattering:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(
            self,
            src: pl.Tensor[[4, 16], dtype],
            idx: pl.Tensor[[4, 16], pl.INT32],
            out: pl.InOut[pl.Tensor[[128], dtype]],
        ) -> pl.Tensor[[128], dtype]:
            s = pl.load(src, [0, 0], [4, 16])
            i = pl.load(idx, [0, 0], [4, 16])
            out = pl.mscatter(s, i, out)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            src: pl.Tensor[[4, 16], dtype],
            idx: pl.Tensor[[4, 16], pl.INT32],
            out: pl.InOut[pl.Tensor[[128], dtype]],
        ) -> pl.Tensor[[128], dtype]:
            with pl.spmd(blocks):
                out = self.kernel(src, idx, out)
            return out

    return Scattering


@pytest.mark.parametrize("dtype", list(DTYPES), ids=[d.name for d in DTYPES])
@pytest.mark.parametrize("where", TARGETS)
def test_elements_land_at_their_indices_and_the_rest_stays(dtype, where, monkeypatch):
    np_dtype = DTYPES[dtype]
    compiled = compile_at(_scattering(dtype), where, monkeypatch)
    rng = np.random.default_rng(10)
    src = rng.integers(-100, 100, (4, 16)).astype(np_dtype)
    idx = rng.integers(0, 128, (4, 16)).astype(np.int32)  # repeats: the last one stays
    out = np.full(128, 7, np_dtype)
    expected = out.copy()
    for k, at in enumerate(idx.reshape(-1)):
        expected[at] = src.reshape(-1)[k]
    compiled(src, idx, out)
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("where", ["cpu-sim", "cuda-emu"])
def test_an_index_outside_the_tensor_fails_with_it_untouched(where, monkeypatch):
    compiled = compile_at(_scattering(pl.FP32), where, monkeypatch)
    src = np.ones((4, 16), np.float32)
    idx = np.zeros((4, 16), np.int32)
    idx[2, 5] = 128
    out = np.full(128, 7.0, np.float32)
    with pytest.raises(blockpipe.ExecutionError, match=r"index 128 at \[2, 5\]") as info:
        compiled(src, idx, out)
    assert "test_mscatter.py:" in str(info.value)
    assert (out == 7.0).all()


def test_blocks_scattering_into_one_tensor_are_warned_of():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        blockpipe.compile(_scattering(pl.FP32, blocks=2), quiet=True)
    assert any("both write element" in str(w.message) for w in caught)


def test_a_src_of_another_dtype_is_an_error_at_its_line():
    @pl.program
    class Mixed:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(
            self,
            src: pl.Tensor[[4, 16], pl.FP16],
            idx: pl.Tensor[[4, 16], pl.INT32],
            out: pl.Out[pl.Tensor[[128], pl.FP32]],
        ) -> pl.Tensor[[128], pl.FP32]:
            s = pl.load(src, [0, 0], [4, 16])
            out = pl.mscatter(s, pl.load(idx, [0, 0], [4, 16]), out)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            src: pl.Tensor[[4, 16], pl.FP16],
            idx: pl.Tensor[[4, 16], pl.INT32],
            out: pl.Out[pl.Tensor[[128], pl.FP32]],
        ) -> pl.Tensor[[128], pl.FP32]:
            out = self.kernel(src, idx, out)
            return out

    with pytest.raises(blockpipe.CompileError, match="the source holds FP16") as info:
        blockpipe.compile(Mixed, quiet=True)
    source = open(__file__).read().splitlines()
    assert info.value.line == next(
        i for i, text in enumerate(source, 1) if "out = pl.mscatter(s, pl.load" in text
    )
