"""examples/host: a program of one's own (CMake, find_package(blockpipe))
builds the generated C++ of the flagship and runs it; its output matches
numpy."""

import os
import pathlib
import subprocess
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]


def run(*cmd, **kwargs):
    result = subprocess.run(
        [str(c) for c in cmd], capture_output=True, text=True, timeout=600, **kwargs
    )
    assert result.returncode == 0, f"{cmd}:\n{result.stdout}\n{result.stderr}"
    return result.stdout


def test_host_example_builds_and_matches_numpy(tmp_path):
    build_dir = pathlib.Path(os.environ.get("BLOCKPIPE_BUILD_DIR", ROOT / "build"))
    generated = tmp_path / "generated"
    run(
        sys.executable,
        "-m",
        "blockpipe",
        "compile",
        ROOT / "examples" / "down_proj_residual.py",
        "-o",
        generated,
    )
    host_build = tmp_path / "build-host"
    run(
        "cmake",
        "-S",
        ROOT / "examples" / "host",
        "-B",
        host_build,
        "-G",
        "Ninja",
        f"-DBLOCKPIPE_PROGRAM_DIR={generated}",
        f"-Dblockpipe_DIR={build_dir / 'cmake' / 'blockpipe'}",
        "-DCMAKE_CXX_FLAGS=-Werror",
    )
    run("ninja", "-C", host_build)
    host = host_build / "down_proj_host"

    # Built-in inputs, checked by the example itself, with the sanitizer on.
    assert "OK down_proj_host" in run(host, env=dict(os.environ, BLOCKPIPE_SANITIZE="1"))

    # Inputs from numpy, the output compared with numpy.
    rng = np.random.default_rng(7)
    x = rng.standard_normal((128, 64), dtype=np.float32)
    w = rng.standard_normal((64, 32), dtype=np.float32)
    res = rng.standard_normal((128, 32), dtype=np.float32)
    for name, array in (("x", x), ("w", w), ("res", res)):
        array.tofile(tmp_path / f"{name}.bin")
    run(host, tmp_path)
    out = np.fromfile(tmp_path / "out.bin", dtype=np.float32).reshape(128, 32)
    np.testing.assert_allclose(out, x @ w + res, rtol=1e-5, atol=1e-4)

    # A short input file is an error naming it, not a wrong answer.
    (tmp_path / "w.bin").write_bytes(w.tobytes()[:100])
    result = subprocess.run([str(host), str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert result.returncode == 1
    assert "w.bin' does not hold 2048 float32 values" in result.stderr
