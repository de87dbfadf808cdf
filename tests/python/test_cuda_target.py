"""target="cuda": programs compiled to CUDA C++ and built with nvcc here.

Every program below is compiled for the cuda target and its generated
project built with its own CMakeLists.txt, every warning an error on the
host and the device side. Running them needs a GPU and the runtime's CUDA
driver; without them the run is an error that says so. Without nvcc the
tests are skipped (reported as such).
"""

import importlib.util
import pathlib
import subprocess

import numpy as np
import pytest

import test_compile
import test_language_if
import test_split
import test_split_aiv

import blockpipe
import blockpipe.language as pl
from blockpipe import _core
from blockpipe.build import nvcc_path, runtime_location
from blockpipe.compiler import _write_tree, compile_to_cpp

ROOT = pathlib.Path(__file__).resolve().parents[2]
NVCC = nvcc_path()
requires_nvcc = pytest.mark.skipif(NVCC is None, reason="no CUDA toolkit (nvcc) on this machine")


def _example(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return next(v for v in vars(module).values() if isinstance(v, pl.Program))


def build_cuda(program, work: pathlib.Path):
    """The files of `program` compiled for cuda, after building them with
    -Werror; a failed build fails the test with nvcc's output."""
    files, _, _ = compile_to_cpp(program, "cuda", project="cuda_test")
    source = work / "src"
    _write_tree(source, files)
    build = work / "build"
    configure = [
        "cmake",
        "-S",
        str(source),
        "-B",
        str(build),
        "-G",
        "Ninja",
        "-DCMAKE_BUILD_TYPE=Release",
        f"-DCMAKE_CUDA_COMPILER={NVCC}",
        f"-Dblockpipe_DIR={runtime_location().cmake}",
        "-DCMAKE_CXX_FLAGS=-Werror",
        "-DCMAKE_CUDA_FLAGS=-Werror=all-warnings -Xcompiler=-Werror",
    ]
    for command in (configure, ["cmake", "--build", str(build)]):
        proc = subprocess.run(command, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    # Whatever the orchestration calls of the kernels is defined in the
    # library: no kernel symbol is left for the loader to find elsewhere.
    library = next(build.glob("lib*.so"))
    undefined = subprocess.run(
        ["nm", "-D", "--undefined-only", str(library)], capture_output=True, text=True, check=True
    ).stdout
    assert not [line for line in undefined.splitlines() if " bp_" in line], undefined
    return files


PROGRAMS = {
    "spmd_add": lambda: _example("spmd_add"),
    "down_proj_residual": lambda: _example("down_proj_residual"),
    "explicit_pipes": lambda: _example("explicit_pipes"),
    "dynamic_core_num": lambda: _example("dynamic_core_num"),
    "row_softmax": lambda: _example("row_softmax"),
    "if_else_in_a_loop": lambda: test_language_if.Accumulate,
    "split_vec_to_cube_left_right": lambda: test_split.vec_to_cube(pl.SplitMode.LEFT_RIGHT),
    "split_cube_to_vec_up_down": lambda: test_split.cube_to_vec(pl.SplitMode.UP_DOWN),
    "split_aiv_bf16": lambda: test_split_aiv.nested(pl.SplitMode.UP_DOWN, "range", pl.BF16),
}


@requires_nvcc
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_builds_warning_free_with_nvcc(tmp_path, name):
    files = build_cuda(PROGRAMS[name](), tmp_path)
    # Bodies are device functions in headers; each launchable kernel has a
    # .cu with its __global__ entry and launcher, listed in the table.
    bodies = [p for p in files if p.endswith(".cuh")]
    entries = [p for p in files if p.endswith(".cu")]
    assert bodies and entries, sorted(files)
    assert not [
        p
        for p in files
        if p.startswith("kernels/") and p.endswith(".cpp") and p != "kernels/kernel_table.cpp"
    ], sorted(files)
    for path in bodies:
        assert "__device__ inline int32_t" in files[path], files[path]
    table = files["kernels/kernel_table.cpp"]
    for path in entries:
        assert "__global__ void __launch_bounds__(" in files[path], files[path]
        launcher = files[path].split('extern "C" int32_t ')[1].split("(")[0]
        assert launcher in table, (launcher, table)


@requires_nvcc
def test_a_group_runs_its_halves_as_warp_groups_of_one_block(tmp_path):
    files = build_cuda(test_split.cube_to_vec(pl.SplitMode.UP_DOWN), tmp_path)
    entry = files["kernels/group/kernel.cu"]
    # AIC = warp group 0, AIV subblocks 0 and 1 = groups 1 and 2.
    assert "__launch_bounds__(384)" in entry, entry
    assert "tile::runHalf(bp_launch, BP_CORE_AIC, /*subblock=*/0" in entry, entry
    assert "tile::runHalf(bp_launch, BP_CORE_AIV, tile::group_index() - 1" in entry, entry
    assert "/*groups=*/3, /*subblocks=*/2" in entry, entry
    # Each block slices the pipe buffer by block_idx, by the per-block size
    # kernel_config.json records.

    config = _core.parse_manifest(files["kernel_config.json"])
    group = next(k for k in config.kernels if k.name == "kernel")
    per_block = group.pipe_layout.per_block_bytes
    assert f"static_cast<int64_t>(bp_ctx->block_idx) * {per_block};" in entry, entry


@requires_nvcc
def test_running_without_a_gpu_says_why(tmp_path):
    """Where there is a GPU, the program runs; elsewhere the call fails with
    the reason (no driver in this runtime, or no GPU) and the outputs stay
    untouched."""
    from blockpipe import _runtime

    program = blockpipe.compile(test_compile.Scale, output_dir=tmp_path, target="cuda", quiet=True)
    assert program.manifest.target == "cuda"
    assert program.library_path.is_file()
    x = np.arange(test_compile.ROWS * test_compile.COLS, dtype=np.float32).reshape(
        test_compile.ROWS, test_compile.COLS
    )
    y = np.full_like(x, 7.0)
    if "cuda" not in _runtime.drivers():
        reason = "needs driver 'cuda', which this runtime does not have"
    else:
        reason = "cuda device 0: no CUDA device is available"
    try:
        program(x, 2.0, y)
    except RuntimeError as e:
        assert reason in str(e), str(e)
        np.testing.assert_array_equal(y, 7.0)  # untouched
    else:
        np.testing.assert_allclose(y, x * 2.0, rtol=1e-6)


def test_shared_memory_beyond_a_block_is_an_error_at_the_kernel():
    # Eight K steps unrolled: 8 x 4 shared tiles of 16 KiB stay alive at
    # once, 512 KiB of Mat/Left/Right tiles for one warp group.
    steps = 8

    @pl.program
    class Big:
        @pl.function(type=pl.FunctionType.InCore)
        def big(
            self,
            a: pl.Tensor[[64, 64 * steps], pl.FP32],
            b: pl.Tensor[[64 * steps, 64], pl.FP32],
            c: pl.Out[pl.Tensor[[64, 64], pl.FP32]],
        ) -> pl.Tensor[[64, 64], pl.FP32]:
            acc = pl.full([64, 64], pl.FP32, 0.0)
            for k in range(steps):
                a_l1 = pl.load(a, [0, k * 64], [64, 64], target_memory=pl.MemorySpace.Mat)
                b_l1 = pl.load(b, [k * 64, 0], [64, 64], target_memory=pl.MemorySpace.Mat)
                acc = pl.matmul(
                    pl.move(a_l1, target_memory=pl.MemorySpace.Left),
                    pl.move(b_l1, target_memory=pl.MemorySpace.Right),
                    acc=acc,
                )
            return pl.store(acc, [0, 0], c)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            a: pl.Tensor[[64, 64 * steps], pl.FP32],
            b: pl.Tensor[[64 * steps, 64], pl.FP32],
            c: pl.Out[pl.Tensor[[64, 64], pl.FP32]],
        ) -> pl.Tensor[[64, 64], pl.FP32]:
            with pl.spmd(1):
                c = self.big(a, b, c)
            return c

    with pytest.raises(blockpipe.CompileError) as info:
        compile_to_cpp(Big, "cuda", project="big")
    message = str(info.value)
    assert "test_cuda_target.py" in message, message
    assert (
        "'big' needs 540928 bytes of shared memory per thread block on target 'cuda'" in message
    ), message
    assert "1 warp group, each with 524288 bytes of Mat/Left/Right tiles" in message, message
    assert "at most 232448" in message, message
    # On cpu-sim the same program compiles (its tiles are on a 4 MiB stack).
    compile_to_cpp(Big, "cpu-sim", project="big")
