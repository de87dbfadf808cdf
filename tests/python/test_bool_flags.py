"""`pl.Scalar[pl.BOOL]` parameters: a flag a kernel branches on. An integer
passed for one (pypto's `is_first = pl.yield_(1)`) is its truth."""

import numpy as np
import pytest

import blockpipe
import blockpipe.language as pl


@pl.program
class Flags:
    @pl.function(type=pl.FunctionType.InCore)
    def pick(
        self,
        a: pl.Tensor[[16, 16], pl.FP32],
        first: pl.Scalar[pl.BOOL],
        y: pl.InOut[pl.Tensor[[16, 16], pl.FP32]],
    ) -> pl.Tensor[[16, 16], pl.FP32]:
        t = pl.load(a, [0, 0], [16, 16])
        if first:
            y = pl.store(t, [0, 0], y)
        else:
            y = pl.store(pl.add(t, pl.load(y, [0, 0], [16, 16])), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        a: pl.Tensor[[16, 16], pl.FP32],
        n: pl.Scalar[pl.INDEX],
        y: pl.InOut[pl.Tensor[[16, 16], pl.FP32]],
    ) -> pl.Tensor[[16, 16], pl.FP32]:
        for i in pl.range(n):
            if i == 0:
                is_first = pl.yield_(1)
            else:
                is_first = pl.yield_(0)
            y = self.pick(a, is_first, y)  # an INDEX flag for a BOOL parameter
        return y


def test_an_integer_flag_is_its_truth():
    compiled = blockpipe.compile(Flags, quiet=True)
    a = np.random.default_rng(0).standard_normal((16, 16)).astype(np.float32)
    y = np.full((16, 16), 100.0, np.float32)  # overwritten by the first launch
    compiled(a, 3, y)
    np.testing.assert_allclose(y, 3 * a, rtol=1e-6)


@pytest.mark.parametrize("flag,want", [(True, 1.0), (False, 101.0), (1, 1.0), (0, 101.0)])
def test_a_bool_parameter_takes_python_truth_values(flag, want):
    @pl.jit
    def pick(a: pl.Tensor[[16, 16], pl.FP32], first: pl.Scalar[pl.BOOL], y: pl.InOut[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(a, [0, 0], [16, 16])
            if first:
                y = pl.store(t, [0, 0], y)
            else:
                y = pl.store(pl.add(t, pl.load(y, [0, 0], [16, 16])), [0, 0], y)
        return y

    a = np.ones((16, 16), np.float32)
    y = np.full((16, 16), 100.0, np.float32)
    pick(a, flag, y)
    np.testing.assert_array_equal(y, np.full((16, 16), want, np.float32))
    with pytest.raises((TypeError, ValueError), match="first"):
        pick(a, 2, y)  # not a truth value
