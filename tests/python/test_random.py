"""pl.tile.random: Philox4x32 words, element e word e mod 4 of the block
of counter + e div 4, the same on cpu-sim, cuda-emu and in the
interpreter, checked against a Philox written here (itself checked
against Random123's known answers)."""

import numpy as np
import pytest

import blockpipe
import blockpipe.language as pl

TARGETS = [dict(target="cpu-sim"), dict(target="cuda", device="cuda-emu")]
MASK = 0xFFFFFFFF


def philox(counter, key, rounds):
    c0, c1, c2, c3 = counter
    k0, k1 = key
    for r in range(rounds):
        if r:
            k0, k1 = (k0 + 0x9E3779B9) & MASK, (k1 + 0xBB67AE85) & MASK
        p0, p1 = 0xD2511F53 * c0, 0xCD9E8D57 * c2
        c0, c1, c2, c3 = (p1 >> 32) ^ c1 ^ k0, p1 & MASK, (p0 >> 32) ^ c3 ^ k1, p0 & MASK
    return [c0, c1, c2, c3]


def expected(shape, key, counter, rounds, dtype=np.uint32):
    n = shape[0] * shape[1]
    base = sum(c << (32 * i) for i, c in enumerate(counter))
    words = []
    for step in range((n + 3) // 4):
        value = (base + step) % (1 << 128)
        words += philox([(value >> (32 * i)) & MASK for i in range(4)], key, rounds)
    return np.array(words[:n], np.uint32).view(dtype).reshape(shape)


def test_the_reference_gives_random123s_known_answers():
    assert philox([0, 0, 0, 0], (0, 0), 10) == [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]
    assert philox([MASK] * 4, (MASK, MASK), 10) == [0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD]


@pl.program
class Draws:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(
        self,
        seed: pl.Scalar[pl.INT32],
        a: pl.Out[pl.Tensor[[4, 256], pl.UINT32]],
        b: pl.Out[pl.Tensor[[8, 16], pl.INT32]],
    ):
        a = pl.store(pl.tile.random(0x1234, 0x5678, 1, 2, 3, 4, [4, 256]), [0, 0], a)
        t = pl.tile.random(seed, 7, 0xFFFFFFFF, 0xFFFFFFFF, 0, 9, [8, 16], dtype=pl.INT32, rounds=7)
        b = pl.store(t, [0, 0], b)
        return a, b

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        seed: pl.Scalar[pl.INT32],
        a: pl.Out[pl.Tensor[[4, 256], pl.UINT32]],
        b: pl.Out[pl.Tensor[[8, 16], pl.INT32]],
    ):
        a, b = self.kernel(seed, a, b)
        return a, b


def check(compiled):
    a = np.zeros((4, 256), np.uint32)
    b = np.zeros((8, 16), np.int32)
    compiled(-5, a, b)
    np.testing.assert_array_equal(a, expected((4, 256), (0x1234, 0x5678), (1, 2, 3, 4), 10))
    # A carry through the counter's low words; a negative seed mod 2**32.
    want = expected((8, 16), ((-5) & MASK, 7), (MASK, MASK, 0, 9), 7, np.int32)
    np.testing.assert_array_equal(b, want)


@pytest.mark.parametrize("where", TARGETS, ids=["cpu-sim", "cuda-emu"])
def test_tiles_match_the_reference(where):
    check(blockpipe.compile(Draws, quiet=True, **where))


def test_the_interpreter_draws_the_same(monkeypatch):
    monkeypatch.setenv("BLOCKPIPE_INTERPRET", "1")
    check(blockpipe.compile(Draws))


def test_other_rounds_are_an_error_at_the_line():
    @pl.program
    class Bad:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(self, a: pl.Out[pl.Tensor[[4, 16], pl.UINT32]]) -> pl.Tensor[[4, 16], pl.UINT32]:
            return pl.store(pl.tile.random(1, 2, 3, 4, 5, 6, [4, 16], rounds=8), [0, 0], a)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Out[pl.Tensor[[4, 16], pl.UINT32]]) -> pl.Tensor[[4, 16], pl.UINT32]:
            a = self.kernel(a)
            return a

    with pytest.raises(blockpipe.CompileError, match="runs 7 or 10 rounds, got 8") as info:
        blockpipe.compile(Bad, quiet=True)
    source = open(__file__).read().splitlines()[info.value.line - 1]
    assert "rounds=8" in source and info.value.file == __file__


def test_random_builds_with_nvcc_warning_free(tmp_path):
    import test_cuda_target

    if test_cuda_target.NVCC is None:
        pytest.skip("no CUDA toolkit (nvcc) on this machine")
    test_cuda_target.build_cuda(Draws, tmp_path / "draws")
