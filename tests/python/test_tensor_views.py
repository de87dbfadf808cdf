"""`pl.slice` / `pl.tensor.slice` of a tensor in an orchestration: a view
sharing the tensor's memory, given to launches that read and write it
(pypto's paged attention takes its query, key, value and output blocks
so). The view's window is checked when the orchestration runs."""

import numpy as np
import pytest

import blockpipe
import blockpipe.language as pl

TARGETS = [dict(target="cpu-sim"), dict(target="cuda", device="cuda-emu")]


@pl.program
class Blocks:
    @pl.function(type=pl.FunctionType.InCore)
    def double(
        self, x: pl.Tensor[[16, 64], pl.FP32], y: pl.Out[pl.Tensor[[16, 64], pl.FP32]]
    ) -> pl.Tensor[[16, 64], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 64])
        return pl.store(pl.add(t, t), [0, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[64, 64], pl.FP32],
        blocks: pl.Scalar[pl.INDEX],
        y: pl.InOut[pl.Tensor[[64, 64], pl.FP32]],
    ) -> pl.Tensor[[64, 64], pl.FP32]:
        for i in pl.range(blocks):
            xi = pl.slice(x, [16, 64], [i * 16, 0])
            yi = pl.tensor.slice(y, [16, 64], [i * 16, 0])
            yi = self.double(xi, yi)  # writes y's rows through the view
        return y


@pytest.mark.parametrize("where", TARGETS, ids=["cpu-sim", "cuda-emu"])
def test_launches_read_and_write_through_views(where):
    compiled = blockpipe.compile(Blocks, quiet=True, **where)
    assert "bp.tensor_view" in compiled.ir("final")
    x = np.random.default_rng(0).standard_normal((64, 64)).astype(np.float32)
    y = np.full_like(x, 7.0)
    compiled(x, 3, y)
    np.testing.assert_array_equal(y[:48], 2 * x[:48])
    np.testing.assert_array_equal(y[48:], 7.0)  # rows no view covered keep their values


@pl.program
class Sized:
    """A view whose size is known at run time (a row count read from the
    input), given to a kernel with a pl.dynamic dim."""

    @pl.function(type=pl.FunctionType.InCore)
    def negate(
        self,
        x: pl.Tensor[[pl.dynamic("R"), 32], pl.FP32],
        y: pl.Out[pl.Tensor[[pl.dynamic("R"), 32], pl.FP32]],
    ):
        rows = pl.tensor.dim(x, 0)
        t = pl.load(x, [0, 0], [16, 32], valid_shape=[rows, 32])
        return pl.store(pl.neg(t), [0, 0], y)  # its valid rows only

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[64, 32], pl.FP32],
        start: pl.Scalar[pl.INDEX],
        rows: pl.Scalar[pl.INDEX],
        y: pl.InOut[pl.Tensor[[64, 32], pl.FP32]],
    ) -> pl.Tensor[[64, 32], pl.FP32]:
        xv = pl.slice(x, [rows, 32], [start, 0])
        yv = pl.slice(y, [rows, 32], [start, 0])
        yv = self.negate(xv, yv)
        return y


def test_a_view_sized_at_run_time():
    compiled = blockpipe.compile(Sized, quiet=True)
    x = np.random.default_rng(1).standard_normal((64, 32)).astype(np.float32)
    y = np.zeros_like(x)
    compiled(x, 10, 5, y)
    want = np.zeros_like(x)
    want[10:15] = -x[10:15]
    np.testing.assert_array_equal(y, want)


@pytest.mark.parametrize(
    "start,rows,message",
    [
        (60, 8, "the window [8, 32] at [60, 0] of 'x' [64, 32] is outside the tensor in dim 0"),
        (0, 17, "the window [17, 32] at [0, 0] of 'x' [64, 32]"),
    ],
)
def test_a_view_outside_its_tensor_fails_the_call_at_its_line(start, rows, message):
    compiled = blockpipe.compile(Sized, quiet=True)
    x = np.ones((64, 32), np.float32)
    y = np.zeros_like(x)
    with pytest.raises(blockpipe.ExecutionError) as info:
        compiled(x, start, rows, y)
    text = str(info.value)
    if rows > 16:
        # Inside the tensor, but more rows than the kernel's tile: the
        # kernel's own load check reports it.
        assert "negate" in text, text
    else:
        assert "view 'xv' of 'x' at test_tensor_views.py:" in text and message in text, text
    assert not y.any()


def test_a_view_that_is_not_whole_rows_is_an_error_at_its_line():
    @pl.program
    class Columns:
        @pl.function(type=pl.FunctionType.InCore)
        def copy(
            self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]
        ) -> pl.Tensor[[16, 16], pl.FP32]:
            return pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], y)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self, x: pl.Tensor[[16, 64], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]
        ) -> pl.Tensor[[16, 16], pl.FP32]:
            xv = pl.slice(x, [16, 16], [0, 16])  # columns 16:32 of every row
            y = self.copy(xv, y)
            return y

    compiled = blockpipe.compile(Columns, quiet=True)
    with pytest.raises(
        blockpipe.ExecutionError, match="is not contiguous: a view keeps whole rows"
    ):
        compiled(np.ones((16, 64), np.float32), np.zeros((16, 16), np.float32))


def test_a_view_of_an_input_cannot_be_written():
    @pl.program
    class ReadOnly:
        @pl.function(type=pl.FunctionType.InCore)
        def fill(self, y: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
            return pl.store(pl.full([16, 64], dtype=pl.FP32, value=1.0), [0, 0], y)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self, x: pl.Tensor[[64, 64], pl.FP32], y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]
        ) -> pl.Tensor[[64, 64], pl.FP32]:
            xv = pl.slice(x, [16, 64], [0, 0])
            xv = self.fill(xv)
            return y

    with pytest.raises(blockpipe.CompileError, match="'fill' writes its Out parameter 'y'") as info:
        blockpipe.compile(ReadOnly, quiet=True)
    assert info.value.file.endswith("test_tensor_views.py")
