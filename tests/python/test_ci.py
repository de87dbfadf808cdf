"""`pl.tile.ci` (and its spellings pl.tile.arange, pl.tensor.ci,
pl.arange): an integer sequence in a [1, N] tile, ascending or descending
from a start known at compile or run time, wrapping at the dtype's width."""

import numpy as np
import pytest

import blockpipe
import blockpipe.language as pl

TARGETS = [dict(target="cpu-sim"), dict(target="cuda", device="cuda-emu")]
N = 32


@pl.program
class Sequences:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(
        self,
        start: pl.Scalar[pl.INT32],
        up: pl.Out[pl.Tensor[[1, N], pl.INT32]],
        down: pl.Out[pl.Tensor[[1, N], pl.INT16]],
        wrapped: pl.Out[pl.Tensor[[1, N], pl.UINT8]],
    ):
        up = pl.store(pl.tile.ci(start, [1, N], dtype=pl.INT32), [0, 0], up)
        down = pl.store(pl.tile.arange(5, [1, N], dtype=pl.INT16, descending=True), [0, 0], down)
        wrapped = pl.store(pl.tile.ci(250, [1, N], dtype=pl.UINT8), [0, 0], wrapped)
        return up, down, wrapped

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        start: pl.Scalar[pl.INT32],
        up: pl.Out[pl.Tensor[[1, N], pl.INT32]],
        down: pl.Out[pl.Tensor[[1, N], pl.INT16]],
        wrapped: pl.Out[pl.Tensor[[1, N], pl.UINT8]],
    ):
        up, down, wrapped = self.kernel(start, up, down, wrapped)
        return up, down, wrapped


@pytest.mark.parametrize("where", TARGETS, ids=["cpu-sim", "cuda-emu"])
def test_sequences_match_numpy(where):
    compiled = blockpipe.compile(Sequences, quiet=True, **where)
    up = np.zeros((1, N), np.int32)
    down = np.zeros((1, N), np.int16)
    wrapped = np.zeros((1, N), np.uint8)
    compiled(-7, up, down, wrapped)
    np.testing.assert_array_equal(up[0], np.arange(-7, -7 + N, dtype=np.int32))
    np.testing.assert_array_equal(down[0], 5 - np.arange(N, dtype=np.int16))
    np.testing.assert_array_equal(wrapped[0], (250 + np.arange(N)).astype(np.uint8))


def test_the_tensor_spelling_in_a_scope():
    @pl.jit
    def seq(out: pl.Out[pl.Tensor[[1, N], pl.INT32]]):
        with pl.at(level=pl.Level.CORE_GROUP):
            s = pl.tensor.ci(N - 1, [1, N], dtype=pl.INT32, descending=True)
            out = pl.assemble(out, s, [0, 0])
        return out

    out = np.zeros((1, N), np.int32)
    seq(out)
    np.testing.assert_array_equal(out[0], np.arange(N - 1, -1, -1, dtype=np.int32))


@pytest.mark.parametrize(
    "call,message",
    [
        ("pl.tile.ci(0, [2, 32])", "pl.tile.ci fills one row: its shape is [1, N] or [N]"),
        ("pl.tile.ci(0, [1, 32], dtype=pl.FP32)", "pl.tile.ci's dtype must be an integer dtype"),
        ("pl.tile.ci(0.5, [1, 32])", "pl.tile.ci's start must be an integer"),
    ],
)
def test_misuse_is_an_error_at_its_line(tmp_path, call, message):
    source = tmp_path / "misuse.py"
    source.write_text(
        "import blockpipe.language as pl\n\n\n"
        "@pl.program\n"
        "class P:\n"
        "    @pl.function(type=pl.FunctionType.InCore)\n"
        "    def k(self, y: pl.Out[pl.Tensor[[1, 32], pl.INT32]]) -> pl.Tensor[[1, 32], pl.INT32]:\n"
        f"        return pl.store({call}, [0, 0], y)\n\n"
        "    @pl.function(type=pl.FunctionType.Orchestration)\n"
        "    def main(self, y: pl.Out[pl.Tensor[[1, 32], pl.INT32]]) -> pl.Tensor[[1, 32], pl.INT32]:\n"
        "        y = self.k(y)\n"
        "        return y\n"
    )
    import importlib.util

    spec = importlib.util.spec_from_file_location("misuse", source)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with pytest.raises(blockpipe.CompileError, match=message.replace("[", r"\[")) as info:
        blockpipe.compile(module.P, quiet=True)
    assert (info.value.file, info.value.line) == (str(source), 8)
