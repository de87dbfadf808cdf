"""pypto's named dynamic dims: `pl.dynamic("M")` is a dynamic dim whose
extent, wherever the name appears in one function's parameters, must agree
when the function is called (else a ValueError naming both parameters,
outputs untouched); the program is compiled once for every extent."""

import numpy as np
import pytest

import blockpipe
import blockpipe.language as pl

M = pl.dynamic("M")
K = pl.dynamic("K")


@pl.program
class Rows:
    @pl.function
    def k(
        self,
        x: pl.Tensor[[M, 16], pl.FP32],
        w: pl.Tensor[[K, 16], pl.FP32],
        y: pl.Out[pl.Tensor[[M, 16], pl.FP32]],
    ) -> pl.Tensor[[M, 16], pl.FP32]:
        row = pl.tile.get_block_idx() * 16
        t = pl.add(pl.load(x, [row, 0], [16, 16]), pl.load(w, [0, 0], [1, 16]))
        return pl.store(t, [row, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[M, 16], pl.FP32],
        w: pl.Tensor[[K, 16], pl.FP32],
        y: pl.Out[pl.Tensor[[M, 16], pl.FP32]],
    ) -> pl.Tensor[[M, 16], pl.FP32]:
        for i in pl.spmd(pl.tensor.dim(x, 0) // 16):
            y = self.k(x, w, y)
        return y


def test_named_dims_take_any_extent_that_agrees():
    program = blockpipe.compile(Rows, quiet=True)
    rng = np.random.default_rng(0)
    for rows, ks in ((32, 1), (64, 3)):
        x = rng.standard_normal((rows, 16)).astype(np.float32)
        w = rng.standard_normal((ks, 16)).astype(np.float32)
        y = np.zeros_like(x)
        program(x, w, y)
        np.testing.assert_allclose(y, x + w[:1], rtol=1e-6)


def test_named_dims_that_disagree_are_a_value_error_naming_both():
    program = blockpipe.compile(Rows, quiet=True)
    x = np.ones((32, 16), np.float32)
    y = np.full((48, 16), 5.0, np.float32)
    with pytest.raises(
        ValueError,
        match=r"dimension 'M' is 32 in parameter 'x' \(axis 0\) but 48 in "
        r"parameter 'y' \(axis 0\)",
    ):
        program(x, np.ones((1, 16), np.float32), y)
    assert (y == 5.0).all()


def test_a_dim_name_is_an_identifier():
    with pytest.raises(TypeError, match="takes an identifier"):
        pl.dynamic("not a name")
    assert pl.Tensor[[M, 16], pl.FP32] == pl.Tensor[[pl.dynamic, 16], pl.FP32]
