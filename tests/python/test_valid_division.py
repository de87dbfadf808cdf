"""An integer division (or remainder, or shift) of tiles with a valid
shape: what lies outside the valid region is no data, so it must not fail
the run-time divisor check, while a zero divisor inside it does."""

import numpy as np
import pytest

import blockpipe
import blockpipe.language as pl

T = pl.Tensor[[8, 16], pl.INT32]


@pl.program
class Tail:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: T, b: T, q: pl.Out[T], s: pl.Out[T]):
        x = pl.load(a, [0, 0], [8, 16], valid_shape=[8, 10])
        y = pl.load(b, [0, 0], [8, 16], valid_shape=[8, 10])
        q = pl.store(pl.div(x, y), [0, 0], q)
        s = pl.store(pl.shl(x, y), [0, 0], s)
        return q, s

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: T, b: T, q: pl.Out[T], s: pl.Out[T]):
        q, s = self.kernel(a, b, q, s)
        return q, s


@pytest.mark.parametrize("where", [dict(target="cpu-sim"), dict(target="cuda", device="cuda-emu")])
def test_the_tail_outside_the_valid_shape_is_not_checked(where):
    compiled = blockpipe.compile(Tail, quiet=True, **where)
    rng = np.random.default_rng(11)
    a = rng.integers(-1000, 1000, (8, 16)).astype(np.int32)
    b = rng.integers(1, 8, (8, 16)).astype(np.int32)
    b[:, 10:] = 0  # no divisor, no shift: outside the valid shape
    q = np.full((8, 16), -5, np.int32)
    s = np.full((8, 16), -5, np.int32)
    compiled(a, b, q, s)
    want_q = np.trunc(a[:, :10] / b[:, :10]).astype(np.int32)  # C's division
    np.testing.assert_array_equal(q[:, :10], want_q)
    np.testing.assert_array_equal(s[:, :10], a[:, :10] << b[:, :10])
    assert (q[:, 10:] == -5).all() and (s[:, 10:] == -5).all()  # only the valid region
    b[3, 4] = 0  # a zero divisor inside the valid shape still fails
    with pytest.raises(blockpipe.ExecutionError, match="a divisor is zero"):
        compiled(a, b, q, s)
