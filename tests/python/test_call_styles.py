"""pypto's ways of calling a compiled program: the return style (the Out
arrays left out, made by the call and returned) and `config=` (a pypto
RunConfig, which blockpipe accepts and does not need)."""

import numpy as np
import pytest

import blockpipe
import blockpipe.language as pl

ROWS, COLS = 32, 16
T = pl.Tensor[[ROWS, COLS], pl.FP32]
M = pl.dynamic("M")


@pl.program
class AddScale:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: T, b: T, s: pl.Scalar[pl.FP32], y: pl.Out[T]) -> T:
        row = pl.tile.get_block_idx() * 16
        t = pl.add(pl.load(a, [row, 0], [16, COLS]), pl.load(b, [row, 0], [16, COLS]))
        return pl.store(pl.mul(t, s), [row, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: T, b: T, s: pl.Scalar[pl.FP32], y: pl.Out[T]) -> T:
        with pl.spmd(ROWS // 16):
            y = self.k(a, b, s, y)
        return y


@pl.program
class Dynamic:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[M, COLS], pl.FP32], y: pl.Out[pl.Tensor[[M, COLS], pl.FP32]]):
        return pl.store(pl.load(x, [0, 0], [16, COLS]), [0, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[M, COLS], pl.FP32], y: pl.Out[pl.Tensor[[M, COLS], pl.FP32]]):
        y = self.k(x, y)
        return y


@pl.program
class NamedConfig:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, config: T, y: pl.Out[T]) -> T:
        return pl.store(pl.load(config, [0, 0], [ROWS, COLS]), [0, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, config: T, y: pl.Out[T]) -> T:
        y = self.k(config, y)
        return y


@pytest.fixture(scope="module")
def add_scale():
    return blockpipe.compile(AddScale, quiet=True)


def inputs():
    rng = np.random.default_rng(0)
    return (rng.standard_normal((ROWS, COLS)).astype(np.float32) for _ in range(2))


def test_the_out_arrays_left_out_are_made_and_returned(add_scale):
    a, b = inputs()
    y = add_scale(a, b, 2.0)
    assert isinstance(y, np.ndarray) and y.shape == (ROWS, COLS) and y.dtype == np.float32
    np.testing.assert_allclose(y, (a + b) * 2.0, rtol=1e-6)
    # The same through run(), and a second call makes a new array.
    again = add_scale.run("main", a, b, 3.0)
    assert again is not y
    np.testing.assert_allclose(again, (a + b) * 3.0, rtol=1e-6)


class Tagged(np.ndarray):
    """An ndarray subclass, as torch stand-ins are."""


def test_made_outputs_are_of_the_callers_array_type(add_scale):
    a, b = inputs()
    y = add_scale(a.view(Tagged), b.view(Tagged), 1.0)
    assert type(y) is Tagged
    np.testing.assert_allclose(y, a + b, rtol=1e-6)


def test_config_is_accepted_and_changes_nothing(add_scale):
    a, b = inputs()
    y = np.zeros_like(a)
    assert add_scale(a, b, 2.0, y, config=object()) is y
    np.testing.assert_allclose(y, (a + b) * 2.0, rtol=1e-6)
    np.testing.assert_allclose(add_scale(a, b, 1.0, config=None), a + b, rtol=1e-6)


def test_a_parameter_named_config_takes_it():
    (x, _) = inputs()
    compiled = blockpipe.compile(NamedConfig, quiet=True)
    y = np.zeros_like(x)
    compiled(config=x, y=y)
    np.testing.assert_array_equal(y, x)


def test_other_argument_counts_still_name_what_is_missing(add_scale):
    a, _ = inputs()
    with pytest.raises(ValueError, match="takes 4 arguments"):
        add_scale(a, a)


def test_an_output_of_dynamic_shape_must_be_passed():
    compiled = blockpipe.compile(Dynamic, quiet=True)
    x = np.ones((16, COLS), np.float32)
    with pytest.raises(ValueError, match="output 'y' has a dynamic shape"):
        compiled(x)
    y = np.zeros_like(x)
    compiled(x, y)
    np.testing.assert_array_equal(y, x)
