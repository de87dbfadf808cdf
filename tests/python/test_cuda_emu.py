"""The cuda target run on cuda-emu: the generated CUDA and the CUDA tile
library built by the host compiler against the CPU emulation of CUDA and
run here, with no GPU and no nvcc, against numpy.

scripts/st_bundle.py --device cuda-emu runs the system tests' cases the
same way through bp-run (tests/st/CMakeLists.txt); this file covers what
bp-run cannot (pipelines) and the Python side of choosing the device.
"""

import functools
import importlib.util
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import test_compile
import test_split
import test_split_aiv

import blockpipe
import blockpipe.language as pl
from blockpipe.build import runtime_location
from blockpipe.compiler import _write_tree, compile_to_cpp

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))


def load(path: pathlib.Path):
    spec = importlib.util.spec_from_file_location(f"emu_example_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_every_example_runs_on_cuda_emu_and_matches_numpy(path, monkeypatch, capsys):
    """Each example's own numpy checks, with every program it compiles built
    for the cuda target and run on cuda-emu: pipelines over meshes of
    emulated GPUs included."""
    compiled = []
    real = blockpipe.compile

    def on_cuda_emu(program, *args, **kwargs):
        kwargs.update(target="cuda", device="cuda-emu", quiet=True)
        result = real(program, *args, **kwargs)
        compiled.append(result)
        return result

    monkeypatch.setattr(blockpipe, "compile", on_cuda_emu)
    load(path).main()
    assert capsys.readouterr().out.strip().startswith("OK")
    assert compiled and all(p.device == "cuda-emu" and p.target == "cuda" for p in compiled)
    # The kernels are the emulation's build: the table under its own name.
    symbols = subprocess.run(
        ["nm", "-D", "--defined-only", str(compiled[0].library_path)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert " bp_cuda_emu_kernel_table" in symbols, symbols


def on_emu(program):
    return blockpipe.compile(program, target="cuda", device="cuda-emu", quiet=True)


def rand(*shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


@pytest.mark.parametrize(
    "mode", [pl.SplitMode.UP_DOWN, pl.SplitMode.LEFT_RIGHT], ids=["up_down", "left_right"]
)
def test_split_pipes_carry_each_subblock_its_half(mode):
    """Both AIV subblocks (warp groups 1 and 2) push their half of each
    operand to the AIC half, and pop their half of each result."""
    a, b = rand(32, 32), rand(32, 32, seed=1)
    out = np.zeros((32, 32), np.float32)
    on_emu(test_split.vec_to_cube(mode))(a, b, out)
    np.testing.assert_allclose(out, (a + b) @ (a - b), rtol=1e-4, atol=1e-3)

    M, K, N = test_split.M, test_split.K, test_split.N
    a, b, c = rand(M, K, seed=2), rand(K, N, seed=3), rand(M, N, seed=4)
    expected = c + (a + 1) @ b
    on_emu(test_split.cube_to_vec(mode))(a, b, c)
    np.testing.assert_allclose(c, expected, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("dtype", [pl.FP16, pl.BF16], ids=["fp16", "bf16"])
def test_16_bit_matmuls_run_on_the_emulated_tensor_cores(dtype):
    """A 16-bit cube program: its matmul goes through WMMA fragments
    (16x16x16, 16-bit in, fp32 accumulate), emulated per warp."""
    import ml_dtypes

    np_dtype = np.float16 if dtype is pl.FP16 else ml_dtypes.bfloat16
    S = test_split_aiv.S
    a, b = rand(S, S, seed=5, dtype=np_dtype), rand(S, S, seed=6, dtype=np_dtype)
    out = np.zeros((S, S), np.float32)
    on_emu(test_split_aiv.nested(pl.SplitMode.UP_DOWN, "range", dtype))(a, b, out)
    reference = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(out, reference * 2 + 1, rtol=1e-3, atol=1e-3)


def test_the_device_must_run_the_target():
    with pytest.raises(ValueError) as info:
        blockpipe.compile(test_compile.Scale, target="cpu-sim", device="cuda-emu")
    assert (
        "device 'cuda-emu' does not run programs compiled for target 'cpu-sim'; "
        "those run on: cpu-sim" in str(info.value)
    ), str(info.value)
    with pytest.raises(ValueError) as info:
        blockpipe.compile(test_compile.Scale, target="cuda", device="cpu-sim")
    assert "those run on: cuda, cuda-emu" in str(info.value), str(info.value)


def test_blockpipe_cuda_emu_1_makes_cuda_programs_run_on_the_emulation(tmp_path):
    script = tmp_path / "run.py"
    script.write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(ROOT / 'tests' / 'python')!r})\n"
        "import numpy as np, blockpipe, test_compile\n"
        "p = blockpipe.compile(test_compile.Scale, target='cuda', quiet=True)\n"
        "x = np.arange(test_compile.ROWS * test_compile.COLS, dtype=np.float32)\n"
        "x = x.reshape(test_compile.ROWS, test_compile.COLS)\n"
        "y = np.zeros_like(x)\n"
        "p(x, 3.0, y)\n"
        "np.testing.assert_allclose(y, 3.0 * x)\n"
        "print(p.device)\n"
    )
    env = dict(os.environ, BLOCKPIPE_CUDA_EMU="1")
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip() == "cuda-emu", proc.stdout


def test_generated_cuda_builds_warning_free_for_cuda_emu(tmp_path):
    """The generated project's own CMakeLists.txt with -DBLOCKPIPE_CUDA_EMU=ON:
    the .cu files and the CUDA tile library compile with the host compiler,
    every warning an error, and need no CUDA toolkit."""
    files, _, _ = compile_to_cpp(
        test_split.cube_to_vec(pl.SplitMode.UP_DOWN), "cuda", project="emu_test"
    )
    source = tmp_path / "src"
    _write_tree(source, files)
    build = tmp_path / "build"
    for command in (
        [
            "cmake",
            "-S",
            str(source),
            "-B",
            str(build),
            "-G",
            "Ninja",
            "-DBLOCKPIPE_CUDA_EMU=ON",
            f"-Dblockpipe_DIR={runtime_location().cmake}",
            "-DCMAKE_CXX_FLAGS=-Werror",
        ],
        ["cmake", "--build", str(build)],
    ):
        proc = subprocess.run(command, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stdout + proc.stderr


@functools.cache
def _failing_program():
    @pl.program
    class OneBlockTooMany:
        @pl.function(type=pl.FunctionType.InCore)
        def k(
            self,
            x: pl.Tensor[[80, 16], pl.FP32],
            y: pl.Out[pl.Tensor[[80, 16], pl.FP32]],
        ) -> pl.Tensor[[80, 16], pl.FP32]:
            row = pl.tile.get_block_idx() * 16
            t = pl.load(x, [row, 0], [16, 16])
            return pl.store(t, [row, 0], y)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            x: pl.Tensor[[80, 16], pl.FP32],
            y: pl.Out[pl.Tensor[[80, 16], pl.FP32]],
        ) -> pl.Tensor[[80, 16], pl.FP32]:
            with pl.spmd(6):
                y = self.k(x, y)
            return y

    return OneBlockTooMany


def test_a_failing_block_names_its_line_and_leaves_outputs_untouched():
    program = blockpipe.compile(_failing_program(), target="cuda", device="cuda-emu", quiet=True)
    x = np.ones((80, 16), dtype=np.float32)
    y = np.full_like(x, 7.0)
    with pytest.raises(RuntimeError) as info:
        program(x, y)
    message = str(info.value)
    assert "kernel 'k' block 5" in message, message
    assert "test_cuda_emu.py:" in message and "window [80, 96)" in message, message
    assert program.device == "cuda-emu"
    np.testing.assert_array_equal(y, 7.0)
