"""What a new user tripped on first, each now a clear answer: numpy's
default float64 into @pl.jit, programs defined under `python -c`, keyword
arguments, the public run-time error class, and `blockpipe.trace` after a
plain `import blockpipe`."""

import json
import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

import blockpipe
import blockpipe.language as pl

ROOT = pathlib.Path(__file__).resolve().parents[2]
ROWS, COLS = 32, 16
T = pl.Tensor[[ROWS, COLS], pl.FP32]


@pl.program
class Scale:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: T, s: pl.Scalar[pl.FP32], y: pl.Out[T]) -> T:
        row = pl.tile.get_block_idx() * 16
        return pl.store(pl.mul(pl.load(x, [row, 0], [16, COLS]), s), [row, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: T, s: pl.Scalar[pl.FP32], y: pl.Out[T]) -> T:
        with pl.spmd(ROWS // 16):
            y = self.k(x, s, y)
        return y


@pl.jit
def add(a: T, b: T, out: pl.Out[T]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.add(a, b)
    return out


@pytest.fixture(scope="module")
def scale():
    return blockpipe.compile(Scale, quiet=True)


def test_float64_into_jit_is_a_value_error_naming_the_parameter():
    a = np.ones((ROWS, COLS))  # numpy's default: float64
    with pytest.raises(ValueError) as info:
        add(a, a, np.zeros_like(a))
    # As a compiled program's call says it: the one dtype the parameter takes.
    assert str(info.value) == "parameter 'a' of 'add' must have dtype float32, got float64"
    ok = np.ones((ROWS, COLS), np.float32)
    for dtype in (np.int8, np.uint64, np.complex64, np.bool_):
        with pytest.raises(
            ValueError,
            match=f"parameter 'b' of 'add' must have dtype float32, got {np.dtype(dtype)}$",
        ):
            add(ok, ok.astype(dtype), np.zeros_like(ok))


@pl.jit
def twice(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.add(a, a)
    return out


def test_a_dtype_no_program_takes_into_shapeless_jit_parameters():
    """Without an annotation the argument gives the dtype: one blockpipe
    lacks is the error naming it and the dtypes arrays may have (bool is a
    scalar's only: it used to reach the C++ build and fail there)."""
    for dtype in (np.float64, np.complex64, np.bool_):
        a = np.ones((ROWS, COLS), dtype)
        with pytest.raises(ValueError) as info:
            twice(a, np.zeros((ROWS, COLS), np.float32))
        message = str(info.value)
        assert message.startswith("parameter 'a' of 'twice' must have one of the dtypes "), message
        assert message.endswith(f", got {np.dtype(dtype)}") and "float32, " in message, message
        assert "bool" not in message.split(", got")[0], message


def test_arguments_by_name_are_checked_like_positional_ones(scale):
    x = np.arange(ROWS * COLS, dtype=np.float32).reshape(ROWS, COLS)
    y = np.zeros_like(x)
    assert scale(x=x, s=3.0, y=y) is y
    np.testing.assert_array_equal(y, 3 * x)
    y[:] = 0
    scale.run("main", x, y=y, s=2.0)
    np.testing.assert_array_equal(y, 2 * x)
    with pytest.raises(
        ValueError, match="Scale.main has no parameter 'z'; its parameters: x, s, y"
    ):
        scale(x=x, s=1.0, z=y)
    with pytest.raises(ValueError, match="parameter 'x' is given twice"):
        scale(x, x=x, s=1.0, y=y)
    with pytest.raises(ValueError, match="no argument for parameter 'y'"):
        scale(x=x, s=1.0)
    with pytest.raises(ValueError, match="parameter 'y' must have dtype float32, got float64"):
        scale(x=x, s=1.0, y=np.zeros((ROWS, COLS)))


def test_jit_arguments_by_name_are_checked_as_a_compiled_programs():
    a = np.arange(ROWS * COLS, dtype=np.float32).reshape(ROWS, COLS)
    out = np.zeros_like(a)
    assert add(a, out=out, b=a) is out
    np.testing.assert_array_equal(out, 2 * a)
    out[:] = 0
    add.compile(b=a, a=a, out=out).run("add", a, a, out)
    np.testing.assert_array_equal(out, 2 * a)
    with pytest.raises(ValueError, match="'add' has no parameter 'c'; its parameters: a, b, out"):
        add(a, a, c=out)
    with pytest.raises(ValueError, match="'add': parameter 'a' is given twice"):
        add(a, a=a, b=a, out=out)
    with pytest.raises(ValueError, match="'add': no argument for parameters 'b', 'out'$"):
        add(a=a)
    with pytest.raises(ValueError, match="parameter 'out' of 'add' must have dtype float32"):
        add(a, a, out=out.astype(np.float64))


def test_a_failed_call_raises_the_public_execution_error(scale):
    x = np.ones((ROWS, COLS), np.float32)
    y = np.full_like(x, 7.0)
    bad = np.ones((COLS, ROWS), np.float32).T  # the right shape, not C-contiguous
    with pytest.raises(ValueError):
        scale(bad, 1.0, y)

    @pl.program
    class PastTheEnd:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: T, y: pl.Out[T]) -> T:
            row = pl.tile.get_block_idx() * 16
            return pl.store(pl.load(x, [row + 16, 0], [16, COLS]), [row, 0], y)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: T, y: pl.Out[T]) -> T:
            with pl.spmd(2):
                y = self.k(x, y)
            return y

    program = blockpipe.compile(PastTheEnd, quiet=True)
    with pytest.raises(blockpipe.ExecutionError) as info:
        program(x, y)
    assert isinstance(info.value, RuntimeError)
    assert type(info.value).__module__ == "blockpipe"
    assert type(info.value).__name__ == "ExecutionError"
    doc = " ".join(type(info.value).__doc__.split())  # its own, for help()
    assert "The message names the kernel, the block and the line" in doc, doc
    assert "Out and InOut arrays keep what was passed in" in doc, doc
    assert "kernel 'k' block 1" in str(info.value), str(info.value)
    np.testing.assert_array_equal(y, 7.0)


def _python_c(script: str, cwd) -> str:
    """`python -c script` in `cwd`, with this checkout's blockpipe."""
    path = os.pathsep.join([str(ROOT / "python"), os.environ.get("PYTHONPATH", "")])
    proc = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": path},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def test_a_program_defined_under_python_c_compiles_from_the_command(tmp_path):
    """Python keeps the text of `python -c` only in sys.orig_argv; blockpipe
    reads the program's functions from there, and an error quotes the
    line."""
    source = (pathlib.Path(__file__).read_text().split("@pl.program\n")[1]).split("\n\n\n")[0]
    header = (
        "import numpy as np, blockpipe, blockpipe.language as pl\n"
        f"ROWS, COLS = {ROWS}, {COLS}\n"
        "T = pl.Tensor[[ROWS, COLS], pl.FP32]\n"
    )
    run = (
        "x = np.ones((ROWS, COLS), np.float32)\n"
        "print(blockpipe.compile(Scale, quiet=True)(x, 2.0, np.zeros_like(x)).sum())\n"
    )
    out = _python_c(header + "@pl.program\n" + source + "\n" + run, tmp_path)
    assert out.split() == [str(2.0 * ROWS * COLS)], out
    out = _python_c(
        header
        + "@pl.jit\n"
        + "def twice(a: T, out: pl.Out[T]):\n"
        + "    with pl.at(level=pl.Level.CORE_GROUP):\n"
        + "        out[:] = pl.add(a, pl.lod(a))\n"
        + "    return out\n"
        + "try:\n"
        + "    twice(np.ones((ROWS, COLS), np.float32), np.zeros((ROWS, COLS), np.float32))\n"
        + "except blockpipe.CompileError as e:\n"
        + "    print(e)\n",
        tmp_path,
    )
    assert "<string>:7:" in out and "pl.lod" in out, out
    assert "out[:] = pl.add(a, pl.lod(a))" in out, out  # the excerpt, from the command


def test_a_program_exec_ed_without_its_text_says_what_is_needed(tmp_path):
    source = (pathlib.Path(__file__).read_text().split("@pl.program\n")[1]).split("\n\n\n")[0]
    script = (
        "import blockpipe, blockpipe.language as pl\n"
        f"ROWS, COLS = {ROWS}, {COLS}\n"
        "T = pl.Tensor[[ROWS, COLS], pl.FP32]\n"
        f"exec({('@pl.program' + chr(10) + source)!r})\n"
        "try:\n"
        "    blockpipe.compile(Scale, quiet=True)\n"
        "except blockpipe.CompileError as e:\n"
        "    print('CompileError:', e)\n"
    )
    # Under `python -c` too: the exec()'d text is not the command's.
    out = _python_c(script, tmp_path)
    assert "cannot read the source of function 'k'" in out, out
    assert "exec()" in out and "define the program in a .py file" in out, out
    assert "linecache" in out, out  # the other way out


def test_trace_and_the_other_submodules_after_a_plain_import():
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "import blockpipe\n"
            "blockpipe.trace.flush\n"
            "print(blockpipe.build.runtime_location().cmake.name, "
            "blockpipe.ExecutionError.__name__)\n",
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["blockpipe", "ExecutionError"], proc.stdout
    with pytest.raises(AttributeError, match="has no attribute 'tracing'"):
        blockpipe.tracing  # noqa: B018


def test_every_blockpipe_name_the_docs_use_after_a_plain_import():
    """What README.md and docs/ write as `blockpipe.X.Y` works after
    `import blockpipe` alone (a module the last name is, such as
    blockpipe.language.lowering, is imported by name), and the import
    still loads neither the compiler nor the language until they are
    used."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    names = set()
    for page in pages:
        for line in page.read_text().splitlines():
            if not re.match(r"\s*(import|from) ", line):  # an import names modules anyway
                names |= set(re.findall(r"\bblockpipe(?:\.[A-Za-z_]\w*)+", line))
    assert {"blockpipe.trace.flush", "blockpipe.language.ops"} <= names, names
    script = (
        "import sys, blockpipe\n"
        "print(sorted(m for m in sys.modules if m.startswith('blockpipe')))\n"
        "assert blockpipe.language.FP32 and blockpipe.compiler.CompiledProgram\n"
        # The longest first: a bare module name imports it by name.
        f"for name in {sorted(names, reverse=True)!r}:\n"
        "    value, parts = blockpipe, name.split('.')\n"
        "    for i, part in enumerate(parts[1:], 1):\n"
        "        if i == len(parts) - 1 and not hasattr(value, part):\n"
        "            __import__(name)  # a module named as such\n"
        "        value = getattr(value, part)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "python")},
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[0] == "['blockpipe', 'blockpipe.errors']", proc.stdout


@pl.program
class Misspelt:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: T, y: pl.Out[T]) -> T:
        return pl.store(pl.lod(x, [0, 0], [16, COLS]), [0, 0], y)  # error: 'pl.lod'


def _frames(error: BaseException):
    import traceback

    return [frame.filename for frame in traceback.extract_tb(error.__traceback__)]


def test_a_compile_error_shows_the_users_frames_only(monkeypatch):
    """As JAX filters its own frames: the traceback ends at the user's call;
    BLOCKPIPE_TRACEBACK=full shows blockpipe's too."""
    package = str(pathlib.Path(blockpipe.__file__).parent)
    with pytest.raises(blockpipe.CompileError) as info:
        blockpipe.compile(Misspelt, quiet=True)
    assert "test_first_steps.py" in str(info.value) and "pl.lod" in str(info.value)
    frames = _frames(info.value)
    # The user's frames, then only the filter's raise (whose line says how
    # to see everything).
    assert frames[:-1] == [__file__] and frames[-1].endswith("blockpipe/errors.py"), frames
    monkeypatch.setenv("BLOCKPIPE_TRACEBACK", "full")
    with pytest.raises(blockpipe.CompileError) as info:
        blockpipe.compile(Misspelt, quiet=True)
    assert len([f for f in _frames(info.value) if f.startswith(package)]) > 3


def test_device_info_tells_what_programs_are_checked_against():
    spec = json.loads((ROOT / "runtime" / "specs" / "cuda.json").read_text())
    info = blockpipe.device_info("cuda")
    assert info == spec
    assert info["local_memory_bytes"]["left"] == spec["local_memory_bytes"]["left"]
    cpu = blockpipe.device_info()
    assert cpu["name"] == "cpu-sim" and cpu["core_groups"] > 0, cpu
    assert set(cpu["local_memory_bytes"]) == {"vec", "mat", "left", "right", "acc"}, cpu
    with pytest.raises(ValueError, match="unknown target 'tpu'; available: cpu-sim, cuda"):
        blockpipe.device_info("tpu")
