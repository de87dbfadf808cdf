"""Printing from a kernel (pl.print, and Python's print in a kernel): one
line per call and block, after "kernel 'k' block b: file.py:line:", in
block order on cpu-sim, through device printf on CUDA, the same text
interpreted; misuse at its line; pl.static_print at compile time."""

import numpy as np
import pytest

import blockpipe
import blockpipe.language as pl

T = pl.Tensor[[4, 8], pl.FP32]


@pl.program
class Rows:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: T, y: pl.Out[T]) -> T:
        b = pl.tile.get_block_idx()
        row = pl.load(x, [b, 0], [1, 8])
        pl.print("row", b, row)
        print(f"block {b} of {pl.tile.get_block_num()}", 2.5, sep="|")
        return pl.store(pl.mul(row, 2.0), [b, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: T, y: pl.Out[T]) -> T:
        with pl.spmd(4):
            y = self.kernel(x, y)
        return y


def _line_of(text: str) -> int:
    source = open(__file__).read().splitlines()
    return next(i for i, line in enumerate(source, 1) if text in line)


def expected(x) -> list:
    first, second = _line_of('pl.print("row", b, row)'), _line_of('print(f"block {b}')
    lines = []
    for b in range(4):
        row = "[[" + ", ".join(format(float(v), ".8g") for v in x[b]) + "]]"
        lines.append(f"kernel 'kernel' block {b}: test_print.py:{first}: row {b} {row}")
        lines.append(f"kernel 'kernel' block {b}: test_print.py:{second}: block {b} of 4|2.5")
    return lines


def data():
    x = np.arange(32, dtype=np.float32).reshape(4, 8) / 4 - 3
    x[1, 2], x[2, 3] = np.inf, np.nan
    return x


def test_cpu_sim_prints_each_block_in_order(capfd):
    compiled = blockpipe.compile(Rows, quiet=True)
    x = data()
    y = np.zeros_like(x)
    capfd.readouterr()
    compiled(x, y)
    out = capfd.readouterr().out.splitlines()
    assert out == expected(x)
    np.testing.assert_array_equal(y, x * 2)


def test_the_interpreter_prints_the_same(capfd, monkeypatch):
    monkeypatch.setenv("BLOCKPIPE_INTERPRET", "1")
    compiled = blockpipe.compile(Rows)
    x = data()
    capfd.readouterr()
    compiled(x, np.zeros_like(x))
    lines = [line for line in capfd.readouterr().out.splitlines() if "row" in line]
    assert lines == [line for line in expected(x) if " row " in line]


def test_cuda_prints_through_device_printf(capfd):
    compiled = blockpipe.compile(Rows, quiet=True, target="cuda", device="cuda-emu")
    x = data()
    capfd.readouterr()
    compiled(x, np.zeros_like(x))
    out = capfd.readouterr().out.splitlines()
    assert sorted(out) == sorted(expected(x))  # blocks may print in any order


def test_print_builds_with_nvcc_warning_free(tmp_path):
    import test_cuda_target

    if test_cuda_target.NVCC is None:
        pytest.skip("no CUDA toolkit (nvcc) on this machine")
    test_cuda_target.build_cuda(Rows, tmp_path / "rows")


@pl.program
class Mixed:
    """A group kernel: a print of a scalar runs once per block (on the
    vector half), a print of an Acc tile on the cube half."""

    @pl.function(type=pl.FunctionType.InCore)
    def kernel(
        self,
        a: pl.Tensor[[16, 16], pl.FP32],
        y: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
    ) -> pl.Tensor[[16, 16], pl.FP32]:
        t = pl.load(a, [0, 0], [16, 16], target_memory=pl.MemorySpace.Mat)
        c = pl.matmul(t, t)
        pl.print("step", 1)
        return pl.store(pl.add(pl.move(c, target_memory=pl.MemorySpace.Vec), 1.0), [0, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        a: pl.Tensor[[16, 16], pl.FP32],
        y: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
    ) -> pl.Tensor[[16, 16], pl.FP32]:
        y = self.kernel(a, y)
        return y


def test_a_scalar_print_in_a_group_kernel_prints_once(capfd):
    compiled = blockpipe.compile(Mixed, quiet=True)
    a = np.eye(16, dtype=np.float32)
    y = np.zeros_like(a)
    capfd.readouterr()
    compiled(a, y)
    out = [line for line in capfd.readouterr().out.splitlines() if "step" in line]
    line = _line_of('pl.print("step", 1)')
    assert len(out) == 1 and out[0].endswith(f"test_print.py:{line}: step 1")
    np.testing.assert_array_equal(y, a + 1)


def _misuse(body):
    @pl.program
    class Misuse:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(self, x: T, y: pl.Out[T]) -> T:
            return body(x, y)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: T, y: pl.Out[T]) -> T:
            y = self.kernel(x, y)
            return y

    return Misuse


def prints_a_tensor(x, y):
    pl.print("x", x)
    return pl.store(pl.load(x, [0, 0], [4, 8]), [0, 0], y)


def prints_to_a_file(x, y):
    print("x", file=None)
    return pl.store(pl.load(x, [0, 0], [4, 8]), [0, 0], y)


def prints_without_a_newline(x, y):
    print("x", end="")
    return pl.store(pl.load(x, [0, 0], [4, 8]), [0, 0], y)


@pytest.mark.parametrize(
    "body,message",
    [
        (prints_a_tensor, "prints strings, numbers, scalars and tiles, got"),
        (prints_to_a_file, "print in a kernel takes sep= only, not file="),
        (prints_without_a_newline, "print in a kernel takes sep= only, not end="),
    ],
)
def test_a_misused_print_is_an_error_at_its_line(body, message):
    with pytest.raises(blockpipe.CompileError, match=message) as info:
        blockpipe.compile(_misuse(body), quiet=True)
    assert info.value.line == body.__code__.co_firstlineno + 1


def test_static_print_shows_types_at_compile_time(capsys):
    @pl.program
    class Static:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(self, x: T, y: pl.Out[T]) -> T:
            t = pl.load(x, [0, 0], [4, 8])
            pl.static_print("loaded", t)
            return pl.store(t, [0, 0], y)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: T, y: pl.Out[T]) -> T:
            y = self.kernel(x, y)
            return y

    blockpipe.compile(Static, quiet=True)
    out = capsys.readouterr().out
    line = _line_of('pl.static_print("loaded", t)')
    assert f"test_print.py:{line}: loaded t: " in out
    assert "[4, 8]" in out and "FP32" in out
