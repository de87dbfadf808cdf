"""pypto's pl.prefetch.* cache hints: checked, and the program's values
unchanged (blockpipe's targets have no L2 to warm); misuse at its line."""

import numpy as np
import pytest

import blockpipe
import blockpipe.language as pl

T = pl.Tensor[[1, 128], pl.FP32]


@pl.program
class Prefetching:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: T, out: pl.Out[T]) -> T:
        ctx = pl.prefetch.make_context()
        evt = pl.prefetch.async_prefetch(a, ctx)
        session = pl.prefetch.session(ctx)
        pl.prefetch.wait(evt, session)
        return pl.store(pl.load(a, [0, 0], [1, 128]), [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: T, out: pl.Out[T]) -> T:
        out = self.kernel(a, out)
        return out


@pytest.mark.parametrize("interpret", [False, True], ids=["cpu-sim", "interpreted"])
def test_a_prefetch_changes_no_value(interpret, monkeypatch):
    if interpret:
        monkeypatch.setenv("BLOCKPIPE_INTERPRET", "1")
    compiled = blockpipe.compile(Prefetching, quiet=True)
    a = np.random.default_rng(18).standard_normal((1, 128)).astype(np.float32)
    out = np.zeros_like(a)
    compiled(a, out)
    np.testing.assert_array_equal(out, a)


def _misuse(body):
    @pl.program
    class Misuse:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(self, a: T, out: pl.Out[T]) -> T:
            return body(a, out)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: T, out: pl.Out[T]) -> T:
            out = self.kernel(a, out)
            return out

    return Misuse


def prefetches_a_tile(a, out):
    evt = pl.prefetch.async_prefetch(pl.load(a, [0, 0], [1, 128]), pl.prefetch.make_context())
    return pl.store(pl.load(a, [0, 0], [1, 128]), [0, 0], out)


def waits_on_a_context(a, out):
    pl.prefetch.wait(pl.prefetch.make_context(), pl.prefetch.make_context())
    return pl.store(pl.load(a, [0, 0], [1, 128]), [0, 0], out)


@pytest.mark.parametrize(
    "body,message",
    [
        (prefetches_a_tile, "pl.prefetch.async_prefetch's tensor"),
        (waits_on_a_context, "expected a pl.prefetch event"),
    ],
)
def test_a_misused_prefetch_is_an_error_at_its_line(body, message):
    with pytest.raises(blockpipe.CompileError, match=message) as info:
        blockpipe.compile(_misuse(body), quiet=True)
    assert info.value.line == body.__code__.co_firstlineno + 1
