"""Outputs left unwritten: a compile-time warning at the launch when its
store windows are known (rows or columns named), none when the launches
cover the tensor or when the windows depend on run-time values."""

import pathlib
import warnings

import numpy as np
import pytest

import blockpipe
import blockpipe.language as pl
from blockpipe import _core


def line_of(text: str) -> int:
    lines = pathlib.Path(__file__).read_text().splitlines()
    return 1 + next(i for i, line in enumerate(lines) if text in line)


def make_rows_program(blocks: int):
    @pl.program
    class Rows:
        @pl.function
        def body(
            self, x: pl.Tensor[[80, 16], pl.FP32], y: pl.Out[pl.Tensor[[80, 16], pl.FP32]]
        ) -> pl.Tensor[[80, 16], pl.FP32]:
            row = pl.tile.get_block_idx() * 16
            return pl.store(pl.exp(pl.load(x, [row, 0], [16, 16])), [row, 0], y)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self, x: pl.Tensor[[80, 16], pl.FP32], y: pl.Out[pl.Tensor[[80, 16], pl.FP32]]
        ) -> pl.Tensor[[80, 16], pl.FP32]:
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
        "launch of 'body' over 4 blocks leaves rows 64:80 of output 'y' (80x16) unwritten"
    )
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
    def left(
        self, x: pl.Tensor[[32, 16], pl.FP32], y: pl.Out[pl.Tensor[[32, 16], pl.FP32]]
    ) -> pl.Tensor[[32, 16], pl.FP32]:
        row = pl.tile.get_block_idx() * 16
        return pl.store(pl.load(x, [row, 0], [16, 8]), [row, 0], y)

    @pl.function
    def right(
        self, x: pl.Tensor[[32, 16], pl.FP32], y: pl.Out[pl.Tensor[[32, 16], pl.FP32]]
    ) -> pl.Tensor[[32, 16], pl.FP32]:
        row = pl.tile.get_block_idx() * 16
        return pl.store(pl.load(x, [row, 8], [16, 4]), [row, 8], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self, x: pl.Tensor[[32, 16], pl.FP32], y: pl.Out[pl.Tensor[[32, 16], pl.FP32]]
    ) -> pl.Tensor[[32, 16], pl.FP32]:
        for i in pl.spmd(2):
            y = self.left(x, y)  # first of Halves
        for i in pl.spmd(2):
            y = self.right(x, y)  # second of Halves
        return y


def test_a_chain_of_launches_is_judged_together(tmp_path):
    _, caught = compile_collecting(Halves, tmp_path / "halves")
    assert len(caught) == 1
    message = str(caught[0].message)
    assert message.startswith(
        "the 2 launches writing 'y' leave columns 12:16 of output 'y' (32x16) unwritten"
    ), message
    assert caught[0].lineno == line_of("y = self.right(x, y)  # second of Halves")
    first = line_of("y = self.left(x, y)  # first of Halves")
    assert (
        f"test_output_coverage.py:{first}:" in message
        and "also written by this launch of 'left'" in message
    )


@pl.program
class ByOffset:
    """Windows from a scalar known only at run time: not decided at compile
    time (the sanitizer's business), so no warning."""

    @pl.function
    def body(
        self,
        x: pl.Tensor[[80, 16], pl.FP32],
        y: pl.Out[pl.Tensor[[80, 16], pl.FP32]],
        base: pl.Scalar[pl.INDEX],
    ) -> pl.Tensor[[80, 16], pl.FP32]:
        row = base + pl.tile.get_block_idx() * 16
        return pl.store(pl.load(x, [row, 0], [16, 16]), [row, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[80, 16], pl.FP32],
        y: pl.Out[pl.Tensor[[80, 16], pl.FP32]],
        base: pl.Scalar[pl.INDEX],
    ) -> pl.Tensor[[80, 16], pl.FP32]:
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


# --- at run time: BLOCKPIPE_SANITIZE=1 ------------------------------------


def run_collecting(program, *args):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        program(*args)
    return [w for w in caught if issubclass(w.category, blockpipe.SanitizerWarning)]


@pytest.fixture
def sanitize(monkeypatch):
    monkeypatch.setenv("BLOCKPIPE_SANITIZE", "1")


def test_the_sanitizer_reports_rows_left_at_run_time(sanitize, tmp_path):
    program = blockpipe.compile(ByOffset, output_dir=tmp_path / "offset", quiet=True)
    x = np.random.default_rng(1).standard_normal((80, 16)).astype(np.float32)
    y = np.full((80, 16), 3.0, dtype=np.float32)
    caught = run_collecting(program, x, y, 8)
    assert [str(w.message) for w in caught] == [
        "sanitizer: output 'y' (80x16 fp32): rows 0:8, 72:80 never written by kernel 'body' (1 launch)"
    ]
    assert pathlib.Path(caught[0].filename).name == "test_output_coverage.py"
    # What the kernel wrote is there; the rest is what the caller passed.
    np.testing.assert_array_equal(y[8:72], x[8:72])
    assert (y[:8] == 3.0).all() and (y[72:] == 3.0).all()
    # Another offset, other rows.
    caught = run_collecting(program, x, np.zeros_like(x), 16)
    assert [str(w.message) for w in caught] == [
        "sanitizer: output 'y' (80x16 fp32): rows 0:16 never written by kernel 'body' (1 launch)"
    ]


R = pl.dynamic("R")


@pl.program
class Chunks:
    """Launches over chunks of rows, each from a scalar offset: only all of
    them together write every row."""

    @pl.function
    def body(
        self,
        x: pl.Tensor[[R, 16], pl.FP16],
        y: pl.Out[pl.Tensor[[R, 16], pl.FP16]],
        base: pl.Scalar[pl.INDEX],
    ) -> pl.Tensor[[R, 16], pl.FP16]:
        row = base + pl.tile.get_block_idx() * 16
        return pl.store(pl.load(x, [row, 0], [16, 16]), [row, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[R, 16], pl.FP16],
        y: pl.Out[pl.Tensor[[R, 16], pl.FP16]],
        chunks: pl.Scalar[pl.INDEX],
    ) -> pl.Tensor[[R, 16], pl.FP16]:
        for c in pl.range(0, chunks * 32, 32):
            for i in pl.spmd(2):
                y = self.body(x, y, c)
        return y


def test_the_launches_of_a_call_are_judged_together(sanitize, tmp_path):
    program = blockpipe.compile(Chunks, output_dir=tmp_path / "chunks", quiet=True)
    x = np.random.default_rng(2).standard_normal((128, 16)).astype(np.float16)
    y = np.zeros_like(x)
    assert run_collecting(program, x, y, 4) == []
    np.testing.assert_array_equal(y, x)
    y = np.full_like(x, 5)
    caught = run_collecting(program, x, y, 3)
    assert [str(w.message) for w in caught] == [
        "sanitizer: output 'y' (128x16 fp16): rows 96:128 never written by kernel 'body' (3 launches)"
    ]
    np.testing.assert_array_equal(y[:96], x[:96])
    assert (y[96:] == 5).all()


@pl.program
class ReadsPartial:
    """A temporary written in part, then read by the next launch."""

    @pl.function
    def half(
        self,
        x: pl.Tensor[[32, 16], pl.FP32],
        t: pl.Out[pl.Tensor[[32, 16], pl.FP32]],
        rows: pl.Scalar[pl.INDEX],
    ) -> pl.Tensor[[32, 16], pl.FP32]:
        return pl.store(pl.load(x, [0, 0], [16, 16]), [rows - 16, 0], t)

    @pl.function
    def copy(
        self, t: pl.Tensor[[32, 16], pl.FP32], y: pl.Out[pl.Tensor[[32, 16], pl.FP32]]
    ) -> pl.Tensor[[32, 16], pl.FP32]:
        row = pl.tile.get_block_idx() * 16
        return pl.store(pl.load(t, [row, 0], [16, 16]), [row, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[32, 16], pl.FP32],
        y: pl.Out[pl.Tensor[[32, 16], pl.FP32]],
        rows: pl.Scalar[pl.INDEX],
    ) -> pl.Tensor[[32, 16], pl.FP32]:
        t = pl.create_tensor([32, 16], dtype=pl.FP32)
        for i in pl.spmd(1):
            t = self.half(x, t, rows)
        for i in pl.spmd(2):
            y = self.copy(t, y)
        return y


def test_a_read_of_unwritten_rows_is_reported_before_the_reader(sanitize, tmp_path):
    program = blockpipe.compile(ReadsPartial, output_dir=tmp_path / "reads", quiet=True)
    x = np.random.default_rng(3).standard_normal((32, 16)).astype(np.float32)
    y = np.full((32, 16), 2.0, dtype=np.float32)
    caught = run_collecting(program, x, y, 16)
    assert [str(w.message) for w in caught] == [
        "sanitizer: output 't' (32x16 fp32): rows 16:32 never written by kernel 'half' (1 launch) "
        "before kernel 'copy' read it"
    ]
    # The reader saw the tensor's own (zero) rows, not the sanitizer's pattern.
    np.testing.assert_array_equal(y[:16], x[:16])
    assert (y[16:] == 0).all()


def test_without_the_sanitizer_nothing_is_reported(monkeypatch, tmp_path):
    monkeypatch.setenv("BLOCKPIPE_SANITIZE", "0")
    program = blockpipe.compile(ByOffset, output_dir=tmp_path / "quiet", quiet=True)
    x = np.ones((80, 16), dtype=np.float32)
    assert run_collecting(program, x, np.zeros_like(x), 8) == []


@pl.program
class ReadsItsOutput:
    """A kernel that reads back what it stored into its Out tensor: the launch
    passes it read-write, so the sanitizer leaves its contents alone."""

    @pl.function
    def twice(
        self, x: pl.Tensor[[32, 16], pl.FP32], y: pl.Out[pl.Tensor[[32, 16], pl.FP32]]
    ) -> pl.Tensor[[32, 16], pl.FP32]:
        row = pl.tile.get_block_idx() * 16
        y = pl.store(pl.load(x, [row, 0], [16, 16]), [row, 0], y)
        again = pl.load(y, [row, 0], [16, 16])
        return pl.store(pl.add(again, again), [row, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self, x: pl.Tensor[[32, 16], pl.FP32], y: pl.Out[pl.Tensor[[32, 16], pl.FP32]]
    ) -> pl.Tensor[[32, 16], pl.FP32]:
        for i in pl.spmd(2):
            y = self.twice(x, y)
        return y


def test_an_output_the_kernel_reads_is_passed_read_write(sanitize, tmp_path):
    program = blockpipe.compile(ReadsItsOutput, output_dir=tmp_path / "rw", quiet=True)
    assert "rt::Arg::inout(y)" in program.artifacts["orchestration/main.cpp"]
    x = np.random.default_rng(4).standard_normal((32, 16)).astype(np.float32)
    y = np.zeros_like(x)
    assert run_collecting(program, x, y) == []
    np.testing.assert_allclose(y, 2 * x, rtol=1e-6)
    # A kernel that only writes its output passes it write-only.
    rows = blockpipe.compile(make_rows_program(5), output_dir=tmp_path / "w", quiet=True)
    assert "rt::Arg::out(y)" in rows.artifacts["orchestration/main.cpp"]


def test_an_output_written_whole_is_marked_and_its_old_contents_never_matter(tmp_path):
    # kernel_config.json tells callers which outputs the launches write
    # whole (they are then not uploaded): 5 blocks cover y, 4 do not.

    def written_whole(directory):
        config = _core.parse_manifest(next(directory.rglob("kernel_config.json")).read_text())
        main = next(o for o in config.orchestrations if o.name == "main")
        return {p.name: p.written_whole for p in main.signature}

    five, _ = compile_collecting(make_rows_program(5), tmp_path / "five")
    assert written_whole(tmp_path / "five") == {"x": False, "y": True}
    compile_collecting(make_rows_program(4), tmp_path / "four")
    assert written_whole(tmp_path / "four") == {"x": False, "y": False}
    x = np.random.default_rng(1).standard_normal((80, 16)).astype(np.float32)
    for old in (np.nan, 3.0):
        y = np.full((80, 16), old, dtype=np.float32)
        five(x, y)
        np.testing.assert_allclose(y, np.exp(x), rtol=1e-6)
