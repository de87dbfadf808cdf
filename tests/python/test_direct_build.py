"""Programs are built without configuring their CMake project: with the
commands a probe learned from CMake once (blockpipe/toolchain.py). These
tests hold those commands to CMake's own for real generated projects, and
check the precompiled header's invalidation, the object cache and a compile
error's report."""

import json
import pathlib
import shlex
import shutil
import subprocess
import sys

import numpy as np
import pytest

import blockpipe
import blockpipe.language as pl
from blockpipe import build, toolchain
from blockpipe.compiler import _write_tree, compile_to_cpp
from blockpipe.errors import BuildError
from blockpipe.language.program import Program

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples"))

import down_proj_residual  # noqa: E402
import pipeline_mlp  # noqa: E402

FLAGSHIP = next(v for v in vars(down_proj_residual).values() if isinstance(v, Program))


def _generate(program, tmp_path, target="cpu-sim"):
    files, _, _ = compile_to_cpp(program, target, project=program.name.lower())
    src = tmp_path / "src"
    _write_tree(src, files)
    return src, files


def _cmake_commands(src, tmp_path, emulated=False):
    """What CMake itself runs for the generated project: each compile
    (compile_commands.json) and the link (the build's last command)."""
    out = tmp_path / "cmake-build"
    subprocess.run(
        [
            "cmake",
            "-S",
            str(src),
            "-B",
            str(out),
            "-G",
            "Ninja",
            f"-Dblockpipe_DIR={build.runtime_location().cmake}",
            "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON",
            *build.BUILD_FLAGS,
            *(["-DBLOCKPIPE_CUDA_EMU=ON"] if emulated else []),
        ],
        check=True,
        capture_output=True,
    )
    entries = json.loads((out / "compile_commands.json").read_text())
    commands = subprocess.run(
        ["ninja", "-C", str(out), "-t", "commands"], check=True, capture_output=True, text=True
    ).stdout.splitlines()
    link = shlex.split(commands[-1].removeprefix(": && ").removesuffix(" && :"))
    return entries, link


@pytest.mark.parametrize(
    "program, target, emulated",
    [
        (FLAGSHIP, "cpu-sim", False),
        (pipeline_mlp.four_stage_mlp(), "cpu-sim", False),
        (FLAGSHIP, "cuda", True),
        (pipeline_mlp.two_stage_mlp(), "cuda", True),
    ],
    ids=["flagship", "four_stages", "flagship-cuda-emu", "two_stages-cuda-emu"],
)
def test_direct_commands_are_cmakes(program, target, emulated, tmp_path):
    src, files = _generate(program, tmp_path, target)
    entries, cmake_link = _cmake_commands(src, tmp_path, emulated)
    probe = build.probe(files, emulated)
    target_name = build.cmake_target(files)
    sources, stages = toolchain.project_sources(files)
    assert sorted(str(src / s) for s in sources) == sorted(e["file"] for e in entries)
    for entry in entries:
        cmake = shlex.split(entry["command"])
        obj = cmake[cmake.index("-o") + 1]
        ours = probe.compile_command(entry["file"], obj, str(src), target_name, stages)
        assert ours == cmake
    objects = [f"CMakeFiles/{target_name}.dir/{s}.o" for s in sources]
    library = pathlib.Path(cmake_link[cmake_link.index("-o") + 1]).name
    assert probe.link_command(objects, library) == cmake_link


def _private_runtime(tmp_path):
    """A CMake package like the runtime's, over a copy of its headers."""
    runtime = build.runtime_location()
    config = (runtime.cmake / "blockpipeConfig.cmake").read_text()
    include = next(
        line.split('"')[1]
        for line in config.splitlines()
        if "INTERFACE_INCLUDE_DIRECTORIES" in line and '"' in line
    )
    copy = tmp_path / "include"
    subprocess.run(["cp", "-r", include, str(copy)], check=True)
    package = tmp_path / "package"
    package.mkdir()
    (package / "blockpipeConfig.cmake").write_text(config.replace(include, str(copy)))
    return package, copy


def test_an_edited_runtime_header_means_a_new_precompiled_header(tmp_path):
    package, include = _private_runtime(tmp_path)
    cache = tmp_path / "cache"
    probe = toolchain.probe(cache, package, build.BUILD_FLAGS, "cpu", {"test": 1})
    assert str(include) in " ".join(probe.compile[".cpp"])
    headers = ("blockpipe/Runtime/KernelABI.h",)
    first = toolchain.precompiled_header(cache, probe, headers, ".cpp")
    assert first is not None and first.with_suffix(".h.gch").is_file()
    assert toolchain.precompiled_header(cache, probe, headers, ".cpp") == first

    # A translation unit compiled with it reads the .gch, not the text.
    source = tmp_path / "tu.cpp"
    source.write_text('#include "blockpipe/Runtime/KernelABI.h"\nint f() { return 0; }\n')
    command = probe.compile_command(str(source), str(tmp_path / "tu.o"), str(tmp_path), "t", ())
    at = command.index("-o")
    command[at:at] = ["-include", str(first), "-H"]
    trace = subprocess.run(command, check=True, capture_output=True, text=True).stderr
    assert trace.startswith(f"! {first}.gch"), trace

    header = include / "blockpipe" / "Runtime" / "KernelABI.h"
    header.write_text(header.read_text() + "\n// edited\n")
    second = toolchain.precompiled_header(cache, probe, headers, ".cpp")
    assert second is not None and second != first
    assert first.with_suffix(".h.gch").is_file()  # a process may still read it


def test_a_compile_error_is_a_build_error_with_the_compilers_output(tmp_path):
    src, files = _generate(FLAGSHIP, tmp_path)
    broken = "kernels/aiv/kernel_aiv.cpp"
    files[broken] = files[broken].replace("namespace {", "namespace { int broken = nothing;", 1)
    _write_tree(src, files)
    with pytest.raises(BuildError) as error:
        build.build_library(src, files, "down_proj_residual", quiet=True)
    message = str(error.value)
    assert message.startswith("building the C++ of down_proj_residual failed:")
    assert "kernel_aiv.cpp" in message and "nothing’ was not declared" in message
    assert "kernel_aic.cpp" not in message.split("$", 1)[0]


def test_cmake_build_is_still_there(tmp_path, monkeypatch):
    """BLOCKPIPE_BUILD_SYSTEM=cmake builds the generated project with
    CMake, as a user would; the library works the same."""
    monkeypatch.setenv("BLOCKPIPE_BUILD_SYSTEM", "cmake")
    monkeypatch.setenv("BLOCKPIPE_CACHE_DIR", str(tmp_path / "cache"))
    program = pipeline_mlp.two_stage_mlp(microbatches=2)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2 * pipeline_mlp.ROWS, pipeline_mlp.WIDTH), dtype=np.float32)
    w = [rng.standard_normal((64, 64), dtype=np.float32) / 8 for _ in range(2)]
    y = np.zeros_like(x)
    blockpipe.compile(program, quiet=True)(x, *w, y)
    np.testing.assert_allclose(y, pipeline_mlp.reference(x, w), rtol=1e-5, atol=1e-4)
    assert not (tmp_path / "cache" / "toolchains").exists()


T = pl.Tensor[[16, 16], pl.FP32]


def _two_kernels(factor):
    """Two kernels: `twice` the same whatever the factor, `scale` not."""

    @pl.program
    class TwoKernels:
        @pl.function(type=pl.FunctionType.InCore)
        def twice(self, x: T, y: pl.Out[T]) -> T:
            t = pl.load(x, [0, 0], [16, 16])
            return pl.store(pl.add(t, t), [0, 0], y)

        @pl.function(type=pl.FunctionType.InCore)
        def scale(self, x: T, y: pl.Out[T]) -> T:
            t = pl.load(x, [0, 0], [16, 16])
            return pl.store(pl.mul(t, factor), [0, 0], y)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: T, y: pl.Out[T]) -> T:
            d = pl.create_tensor([16, 16], dtype=pl.FP32)
            d = self.twice(x, d)
            y = self.scale(d, y)
            return y

    return TwoKernels


def _compiles(monkeypatch):
    """The compiler's runs on translation units, from now on."""
    seen = []
    real = subprocess.run

    def run(command, *args, **kwargs):
        if isinstance(command, list) and "-c" in command and "c++-header" not in command:
            seen.append(pathlib.Path(command[command.index("-c") + 1]).name)
        return real(command, *args, **kwargs)

    monkeypatch.setattr(toolchain.subprocess, "run", run)
    return seen


def _check(compiled, factor):
    x = np.random.default_rng(factor).standard_normal((16, 16), dtype=np.float32)
    y = np.zeros_like(x)
    compiled(x, y)
    np.testing.assert_allclose(y, (x + x) * np.float32(factor), rtol=1e-6)


def test_a_program_differing_in_one_kernel_compiles_only_that_one(tmp_path, monkeypatch):
    monkeypatch.setenv("BLOCKPIPE_CACHE_DIR", str(tmp_path / "cache"))
    seen = _compiles(monkeypatch)
    _check(blockpipe.compile(_two_kernels(3.0), quiet=True), 3)
    first = sorted(seen)
    assert first == ["kernel_table.cpp", "main.cpp", "scale.cpp", "twice.cpp"], first
    seen.clear()
    _check(blockpipe.compile(_two_kernels(5.0), quiet=True), 5)
    assert seen == ["scale.cpp"], seen


def test_programs_of_other_names_share_their_objects(tmp_path, monkeypatch):
    """Their commands differ in the CMake target's export macro, which no
    source reads; of their sources only the orchestration's namespace
    differs."""
    monkeypatch.setenv("BLOCKPIPE_CACHE_DIR", str(tmp_path / "cache"))
    seen = _compiles(monkeypatch)
    program = _two_kernels(3.0)
    for project in ("first_name", "second_name"):
        src = tmp_path / project
        files, _, _ = compile_to_cpp(program, "cpu-sim", project=project)
        _write_tree(src, files)
        assert f"-D{project}_EXPORTS" in build.probe(files).compile_command(
            str(src / "x.cpp"), "x.o", str(src), build.cmake_target(files), ()
        )
        assert build.build_library(src, files, project, quiet=True).is_file()
    assert sorted(seen[:4]) == ["kernel_table.cpp", "main.cpp", "scale.cpp", "twice.cpp"], seen
    assert seen[4:] == ["main.cpp"], seen


def test_a_damaged_cached_object_is_compiled_again(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("BLOCKPIPE_CACHE_DIR", str(cache))
    seen = _compiles(monkeypatch)
    blockpipe.compile(_two_kernels(3.0), quiet=True)
    objects = sorted((cache / "objects").rglob("*.o"))
    assert len(objects) == 4, objects
    damaged = max(objects, key=lambda p: p.stat().st_size)
    damaged.write_bytes(b"\0" * damaged.stat().st_size)
    shutil.rmtree(cache / "builds")  # the library is built again, from the objects
    seen.clear()
    _check(blockpipe.compile(_two_kernels(3.0), quiet=True), 3)
    assert len(seen) == 1, seen
    assert damaged.read_bytes() != b"\0" * damaged.stat().st_size
