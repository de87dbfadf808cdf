"""Outputs left unwritten: a compile-time warning at the launch when its
store windows are known (rows or columns named), none when the launches
cover the tensor or when the windows depend on run-time values."""

import pathlib
import warnings

import numpy as np
import pytest

import blockpipe
import blockpipe.language as pl


def line_of(text: str) -> int:
    lines = pathlib.Path(__file__).read_text().splitlines()
    return 1 + next(i for i, line in enumerate(lines) if text in line)


def make_rows_program(blocks: int):
    @pl.program
    class Rows:
        @pl.function
        def body(self, x: pl.Tensor[[80, 16], pl.FP32],
                 y: pl.Out[pl.Tensor[[80, 16], pl.FP32]]) -> pl.Tensor[[80, 16], pl.FP32]:
            row = pl.tile.get_block_idx() * 16
            return pl.store(pl.exp(pl.load(x, [row, 0], [16, 16])), [row, 0], y)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[80, 16], pl.FP32],
                 y: pl.Out[pl.Tensor[[80, 16], pl.FP32]]) -> pl.Tensor[[80, 16], pl.FP32]:
            for i in pl.spmd(blocks):
                y = self.body(x, y)  # the launch of Rows
            return y

    return Rows


def compile_collecting(program, tmp_path):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compiled = blockpipe.compile(program, output_dir=tmp_path, quiet=True)
    return compiled, [w for w in caught if issubclass(w.category, blockpipe.CompileWarning)]


def test_rows_left_unwritten_warn_at_the_launch(tmp_path):
    program, caught = compile_collecting(make_rows_program(4), tmp_path / "four")
    assert len(caught) == 1, [str(w.message) for w in caught]
    warning = caught[0]
    assert str(warning.message) == (
        "launch of 'body' over 4 blocks leaves rows 64:80 of output 'y' (80x16) unwritten")
    assert pathlib.Path(warning.filename).name == "test_output_coverage.py"
    assert warning.lineno == line_of("y = self.body(x, y)  # the launch of Rows")
    # The program still runs: rows 64:80 keep what the caller passed.
    x = np.random.default_rng(0).standard_normal((80, 16)).astype(np.float32)
    y = np.full((80, 16), 3.0, dtype=np.float32)
    program(x, y)
    np.testing.assert_allclose(y[:64], np.exp(x[:64]), rtol=1e-6)
    assert (y[64:] == 3.0).all()


def test_launches_covering_the_output_do_not_warn(tmp_path):
    _, caught = compile_collecting(make_rows_program(5), tmp_path / "five")
    assert caught == []


@pl.program
class Halves:
    """Two launches writing the columns of one output between them; the
    second one leaves columns 12:16 unwritten in the ragged variant."""

    @pl.function
    def left(self, x: pl.Tensor[[32, 16], pl.FP32],
             y: pl.Out[pl.Tensor[[32, 16], pl.FP32]]) -> pl.Tensor[[32, 16], pl.FP32]:
        row = pl.tile.get_block_idx() * 16
        return pl.store(pl.load(x, [row, 0], [16, 8]), [row, 0], y)

    @pl.function
    def right(self, x: pl.Tensor[[32, 16], pl.FP32],
              y: pl.Out[pl.Tensor[[32, 16], pl.FP32]]) -> pl.Tensor[[32, 16], pl.FP32]:
        row = pl.tile.get_block_idx() * 16
        return pl.store(pl.load(x, [row, 8], [16, 4]), [row, 8], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 16], pl.FP32],
             y: pl.Out[pl.Tensor[[32, 16], pl.FP32]]) -> pl.Tensor[[32, 16], pl.FP32]:
        for i in pl.spmd(2):
            y = self.left(x, y)  # first of Halves
        for i in pl.spmd(2):
            y = self.right(x, y)  # second of Halves
        return y


def test_a_chain_of_launches_is_judged_together(tmp_path):
    _, caught = compile_collecting(Halves, tmp_path / "halves")
    assert len(caught) == 1
    message = str(caught[0].message)
    assert message.startswith("the 2 launches writing 'y' leave columns 12:16 of output 'y' (32x16) "
                              "unwritten"), message
    assert caught[0].lineno == line_of("y = self.right(x, y)  # second of Halves")
    first = line_of("y = self.left(x, y)  # first of Halves")
    assert f"test_output_coverage.py:{first}:" in message and "also written by this launch of 'left'" in message


@pl.program
class ByOffset:
    """Windows from a scalar known only at run time: not decided at compile
    time (the sanitizer's business), so no warning."""

    @pl.function
    def body(self, x: pl.Tensor[[80, 16], pl.FP32], y: pl.Out[pl.Tensor[[80, 16], pl.FP32]],
             base: pl.Scalar[pl.INDEX]) -> pl.Tensor[[80, 16], pl.FP32]:
        row = base + pl.tile.get_block_idx() * 16
        return pl.store(pl.load(x, [row, 0], [16, 16]), [row, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[80, 16], pl.FP32], y: pl.Out[pl.Tensor[[80, 16], pl.FP32]],
             base: pl.Scalar[pl.INDEX]) -> pl.Tensor[[80, 16], pl.FP32]:
        for i in pl.spmd(4):
            y = self.body(x, y, base)
        return y


def test_windows_known_only_at_run_time_do_not_warn(tmp_path):
    _, caught = compile_collecting(ByOffset, tmp_path / "offset")
    assert caught == []


def test_the_warning_can_be_made_an_error(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error", blockpipe.CompileWarning)
        with pytest.raises(blockpipe.CompileWarning, match="rows 64:80"):
            blockpipe.compile(make_rows_program(4), output_dir=tmp_path / "err", quiet=True)
