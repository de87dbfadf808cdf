"""bp-run: a compiled program run by the runtime alone from .npy/.npz files.

Programs are compiled and built here (`python -m blockpipe compile`, which
leaves kernel_config.json and the library side by side), then run by
`build/bin/bp-run` in a process with neither the compiler nor Python's
packages; its outputs are compared with numpy.
"""

import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

import blockpipe
import blockpipe.language as pl
from blockpipe import _core

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("BLOCKPIPE_BUILD_DIR", ROOT / "build"))
BP_RUN = BUILD / "bin" / "bp-run"


def compile_example(name, out):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "blockpipe",
            "compile",
            str(ROOT / "examples" / f"{name}.py"),
            "-o",
            str(out),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert list(out.glob("lib*.so")), sorted(p.name for p in out.iterdir())
    return out


def bp_run(*args, expect=0):
    # The runtime alone: no Python path, no compiler on the way.
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    proc = subprocess.run([str(BP_RUN), *map(str, args)], capture_output=True, text=True, env=env)
    assert proc.returncode == expect, proc.stdout + proc.stderr
    return proc.stderr


def test_runs_an_example_from_an_npz(tmp_path):
    program = compile_example("down_proj_residual", tmp_path / "prog")
    rng = np.random.default_rng(3)

    sig = _core.parse_manifest((program / "kernel_config.json").read_text()).orchestrations[0]
    shapes = {p.name: tuple(p.shape) for p in sig.signature}
    x = rng.standard_normal(shapes["x"], dtype=np.float32)
    w = rng.standard_normal(shapes["w"], dtype=np.float32)
    res = rng.standard_normal(shapes["res"], dtype=np.float32)
    np.savez(tmp_path / "in.npz", x=x, w=w, res=res)
    log = bp_run(
        program, "--inputs", tmp_path / "in.npz", "--outputs", tmp_path / "out.npz", "--repeat", 3
    )
    assert "bp-run: main on cpu-sim device 0: 3 runs, median" in log, log
    out = np.load(tmp_path / "out.npz")
    assert sorted(out.files) == ["out"]
    np.testing.assert_allclose(out["out"], x @ w + res, rtol=1e-4, atol=1e-4)


def test_takes_npy_files_and_compressed_npz_and_writes_a_directory(tmp_path):
    program = compile_example("spmd_add", tmp_path / "prog")
    rng = np.random.default_rng(4)
    a = rng.standard_normal((128, 64), dtype=np.float32)
    b = rng.standard_normal((128, 64), dtype=np.float32)
    np.savez_compressed(tmp_path / "a.npz", a=a)
    np.save(tmp_path / "b.npy", b)
    bp_run(
        program,
        "--inputs",
        tmp_path / "a.npz",
        "--input",
        f"b={tmp_path / 'b.npy'}",
        "--outputs",
        tmp_path / "out",
    )
    np.testing.assert_allclose(np.load(tmp_path / "out" / "c.npy"), a + b, rtol=1e-6)


@pl.program
class Shifted:
    @pl.function(type=pl.FunctionType.InCore)
    def shift(
        self,
        x: pl.Tensor[[64, 32], pl.FP32],
        first: pl.Scalar[pl.INDEX],
        s: pl.Scalar[pl.FP32],
        y: pl.Out[pl.Tensor[[32, 32], pl.FP32]],
    ) -> pl.Tensor[[32, 32], pl.FP32]:
        row = pl.tile.get_block_idx() * 16
        t = pl.load(x, [first + row, 0], [16, 32])
        return pl.store(pl.mul(t, s), [row, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[64, 32], pl.FP32],
        first: pl.Scalar[pl.INDEX],
        s: pl.Scalar[pl.FP32],
        y: pl.Out[pl.Tensor[[32, 32], pl.FP32]],
    ) -> pl.Tensor[[32, 32], pl.FP32]:
        with pl.spmd(2):
            y = self.shift(x, first, s, y)
        return y


@pytest.fixture(scope="module")
def shifted(tmp_path_factory):
    out = tmp_path_factory.mktemp("shifted")
    compiled = blockpipe.compile(Shifted, output_dir=out, quiet=True)
    return out, compiled.library_path


def test_scalars_and_a_failing_block(shifted, tmp_path):
    program, library = shifted
    x = np.arange(64 * 32, dtype=np.float32).reshape(64, 32)
    np.save(tmp_path / "x.npy", x)
    bp_run(
        program,
        "--library",
        library,
        "--input",
        f"x={tmp_path / 'x.npy'}",
        "--scalar",
        "first=16",
        "--scalar",
        "s=0.5",
        "--outputs",
        tmp_path / "out.npz",
    )
    np.testing.assert_array_equal(np.load(tmp_path / "out.npz")["y"], x[16:48] * 0.5)
    # Rows 40..71 are outside x: block 1's window fails, naming the line.
    (tmp_path / "out.npz").unlink()
    log = bp_run(
        program,
        "--library",
        library,
        "--input",
        f"x={tmp_path / 'x.npy'}",
        "--scalar",
        "first=40",
        "--scalar",
        "s=1",
        "--outputs",
        tmp_path / "out.npz",
        expect=1,
    )
    assert "kernel 'shift' block 1" in log, log
    assert "test_bp_run.py:" in log, log
    assert not (tmp_path / "out.npz").exists()  # nothing written


def test_bad_arguments_name_what_is_wrong(shifted, tmp_path):
    program, library = shifted
    np.save(tmp_path / "x.npy", np.zeros((64, 32), np.float32))
    np.save(tmp_path / "x64.npy", np.zeros((64, 32), np.float64))
    np.save(tmp_path / "x_small.npy", np.zeros((32, 32), np.float32))
    base = [program, "--library", library, "--scalar", "first=0", "--scalar", "s=1"]
    cases = {
        "parameter 'x' is not given": base,
        "parameter 'x' is fp32 (.npy '<f4'), the array given is '<f8'": base
        + ["--input", f"x={tmp_path / 'x64.npy'}"],
        "parameter 'x' must have shape 64x32, the array given has 32x32": base
        + ["--input", f"x={tmp_path / 'x_small.npy'}"],
        "input 'z': main has no tensor parameter of that name (parameters: x, first, s, y)": base
        + ["--input", f"x={tmp_path / 'x.npy'}", "--input", f"z={tmp_path / 'x.npy'}"],
        "--scalar first=1.5: not an integer (parameter 'first' is int64)": [
            program,
            "--library",
            library,
            "--input",
            f"x={tmp_path / 'x.npy'}",
            "--scalar",
            "first=1.5",
            "--scalar",
            "s=1",
        ],
        "no orchestration 'other' (it has: main)": base + ["--entry", "other"],
    }
    for message, args in cases.items():
        log = bp_run(*args, expect=2)
        assert message in log, (message, log)


def test_a_program_runs_only_on_its_target(shifted, tmp_path):
    program, library = shifted
    np.save(tmp_path / "x.npy", np.zeros((64, 32), np.float32))
    log = bp_run(
        program,
        "--library",
        library,
        "--target",
        "cuda",
        "--input",
        f"x={tmp_path / 'x.npy'}",
        "--scalar",
        "first=0",
        "--scalar",
        "s=1",
        expect=1,
    )
    # No GPU here, or (with one) a program compiled for cpu-sim.
    assert "cuda device 0" in log or "needs driver 'cuda'" in log, log


@pl.program
class Accumulate:
    @pl.function(type=pl.FunctionType.InCore)
    def accumulate(
        self, x: pl.Tensor[[32, 32], pl.FP32], y: pl.InOut[pl.Tensor[[32, 32], pl.FP32]]
    ) -> pl.Tensor[[32, 32], pl.FP32]:
        row = pl.tile.get_block_idx() * 16
        t = pl.add(pl.load(y, [row, 0], [16, 32]), pl.load(x, [row, 0], [16, 32]))
        return pl.store(t, [row, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self, x: pl.Tensor[[32, 32], pl.FP32], y: pl.InOut[pl.Tensor[[32, 32], pl.FP32]]
    ) -> pl.Tensor[[32, 32], pl.FP32]:
        with pl.spmd(2):
            y = self.accumulate(x, y)
        return y


def test_resident_tensors_stay_on_the_device_across_repeats(tmp_path):
    compiled = blockpipe.compile(Accumulate, output_dir=tmp_path / "prog", quiet=True)
    program = compiled.output_dir
    rng = np.random.default_rng(5)
    x = rng.standard_normal((32, 32), dtype=np.float32)
    y = rng.standard_normal((32, 32), dtype=np.float32)
    np.savez(tmp_path / "in.npz", x=x, y=y)
    args = [
        program,
        "--library",
        compiled.library_path,
        "--inputs",
        tmp_path / "in.npz",
        "--repeat",
        4,
    ]
    # Each run starts from the inputs given...
    bp_run(*args, "--outputs", tmp_path / "fresh.npz")
    np.testing.assert_allclose(np.load(tmp_path / "fresh.npz")["y"], y + x, rtol=1e-6)
    # ...while resident ones keep the device's tensors: the InOut y
    # accumulates four times, and only the launches are timed.
    log = bp_run(*args, "--resident", "--outputs", tmp_path / "resident.npz")
    assert "bp-run: main on cpu-sim device 0: 4 runs, median" in log, log
    np.testing.assert_allclose(np.load(tmp_path / "resident.npz")["y"], y + 4 * x, rtol=1e-5)


def test_help_describes_every_option():
    """Each option of the usage lines has a line of its own in --help."""
    proc = subprocess.run([str(BP_RUN), "--help"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    usage, _, described = proc.stdout.partition("\n\n")
    options = set(re.findall(r"--[a-z]+", usage))
    assert len(options) >= 12, usage
    lines = [line.strip() for line in described.splitlines()]
    for option in sorted(options):
        assert any(
            line.startswith(option + " ") or line.startswith(f"-h, {option}") for line in lines
        ), f"{option} is not described:\n{described}"
    assert "BLOCKPIPE_CUDA_EMU" in described and "Exit status" in described, described


@pytest.mark.parametrize("placement", ["2_stages", "interleaved"])
def test_runs_a_compiled_pipeline_like_the_python_call(tmp_path, placement):
    """examples/pipeline_mlp.py's pipelines, run by bp-run from the manifest
    (stages, schedule, split and resident parameters) with the runtime's
    pipeline runner, the same one the Python call uses."""
    import importlib.util
    import shutil

    spec = importlib.util.spec_from_file_location("pipeline_mlp", ROOT / "examples/pipeline_mlp.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    if placement == "2_stages":
        program, weights = example.two_stage_mlp(), 2
    else:
        program, weights = example.four_stage_mlp((0, 1, 0, 1), schedule="interleaved"), 4
    compiled = blockpipe.compile(program, output_dir=tmp_path / "prog", quiet=True)
    shutil.copy2(compiled.library_path, tmp_path / "prog" / compiled.library_path.name)

    rng = np.random.default_rng(5)
    x = rng.standard_normal((example.MICROBATCHES * example.ROWS, example.WIDTH), dtype=np.float32)
    w = [rng.standard_normal((example.WIDTH, example.WIDTH), dtype=np.float32) / 8]
    w += [rng.standard_normal(w[0].shape, dtype=np.float32) / 8 for _ in range(weights - 1)]
    expected = np.zeros_like(x)
    compiled(x, *w, expected)
    np.testing.assert_allclose(expected, example.reference(x, w), rtol=1e-5, atol=1e-4)

    names = ["x"] + [f"w{i}" for i in range(weights)]
    np.savez(tmp_path / "in.npz", **dict(zip(names, [x, *w])))
    log = bp_run(
        tmp_path / "prog", "--inputs", tmp_path / "in.npz", "--outputs", tmp_path / "out.npz"
    )
    assert "forward on a pipeline over" in log, log
    np.testing.assert_array_equal(np.load(tmp_path / "out.npz")["y"], expected)


def test_a_pipeline_is_not_run_resident(tmp_path):
    import importlib.util

    spec = importlib.util.spec_from_file_location("pipeline_mlp", ROOT / "examples/pipeline_mlp.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    blockpipe.compile(example.two_stage_mlp(), output_dir=tmp_path / "prog", quiet=True)
    log = bp_run(tmp_path / "prog", "--resident", expect=2)
    assert "--resident runs a program of one device" in log, log
