"""The command line (`python -m blockpipe`) and the names of what it builds."""

import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from blockpipe import _core

ROOT = pathlib.Path(__file__).resolve().parents[2]

PROGRAM_C = textwrap.dedent("""
    import numpy as np
    import blockpipe.language as pl

    @pl.program
    class C:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16, 16], pl.FP32],
              y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            return pl.store(pl.add(pl.load(x, [0, 0], [16, 16]), 1.0), [0, 0], y)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16, 16], pl.FP32],
                 y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            with pl.spmd(1):
                y = self.k(x, y)
            return y
""")


def blockpipe_cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "blockpipe", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_run_calls_main(tmp_path):
    result = blockpipe_cli("run", ROOT / "examples" / "spmd_add.py")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().startswith("OK")


def test_run_without_main_is_an_error(tmp_path):
    script = tmp_path / "no_main.py"
    script.write_text(PROGRAM_C)
    result = blockpipe_cli("run", script)
    assert result.returncode == 2
    assert f"{script} has no main() function" in result.stderr


def test_a_program_named_like_libc_gets_its_own_library_name(tmp_path):
    script = tmp_path / "c_program.py"
    script.write_text(PROGRAM_C)
    result = blockpipe_cli("compile", script, "-o", tmp_path / "out")
    assert result.returncode == 0, result.stderr
    config = _core.parse_manifest((tmp_path / "out" / "kernel_config.json").read_text())
    assert config.project == "c"
    assert config.library == "c_program"
    assert "libc_program.so" in result.stdout

    # And it runs, loaded by that name.
    sys.path.insert(0, str(tmp_path))
    try:
        from c_program import C

        import blockpipe

        compiled = blockpipe.compile(C, output_dir=tmp_path / "again", quiet=True)
        assert compiled.library_path.name == "libc_program.so"
        x = np.arange(256, dtype=np.float32).reshape(16, 16)
        y = np.zeros_like(x)
        compiled(x, y)
        np.testing.assert_array_equal(y, x + 1)
    finally:
        sys.path.remove(str(tmp_path))


def test_compile_for_the_cuda_target(tmp_path):
    from blockpipe.build import nvcc_path

    script = tmp_path / "c_program.py"
    script.write_text(PROGRAM_C)
    result = blockpipe_cli("compile", script, "-o", tmp_path / "tpu", "--target", "tpu")
    assert result.returncode == 2
    assert "error: unknown target 'tpu'; available: cpu-sim, cuda" in result.stderr, result.stderr
    if nvcc_path() is None:
        pytest.skip("no CUDA toolkit (nvcc) on this machine to build the cuda project")
    result = blockpipe_cli("compile", script, "-o", tmp_path / "out", "--target", "cuda")
    assert result.returncode == 0, result.stderr
    assert (
        _core.parse_manifest((tmp_path / "out" / "kernel_config.json").read_text()).target == "cuda"
    )
    assert (tmp_path / "out" / "kernels" / "incore" / "k.cu").is_file()
