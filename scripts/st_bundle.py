"""Builds a bundle of the system tests for one target, to run where the
compiler is not (a machine with a GPU has neither MLIR nor this project's
Python environment):

    .venv/bin/python scripts/st_bundle.py --target cuda -o gpu-bundle
    # there (Python 3 with numpy, and the GPU's driver):
    python3 gpu-bundle/run.py

With `--device cuda-emu` the cuda programs are built for the CPU emulation
of CUDA and the bundle runs here, with this build's bp-run and runtime
(tests/st/CMakeLists.txt runs it so in every test run):

    .venv/bin/python scripts/st_bundle.py --target cuda --device cuda-emu \
        -o emu-bundle && .venv/bin/python emu-bundle/run.py

The system tests run here as usual, on cpu-sim, with the plugin
tests/st/bundle.py recording every program call of each passing test: the
program compiled for the target, the call's inputs, and what the test
checked of the outputs (its numpy reference and tolerances). The bundle
holds those cases, bp-run and the runtime library (bin/, lib/), and run.py
(tests/st/bundle_run.py). For a target other than cpu-sim, bp-run and the
runtime are built without MPI in build/rt (a GPU machine has no OpenMPI).
"""

import argparse
import os
import pathlib
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
# What a CUDA run must cover: every example, the flagship, explicit pipes
# both ways, dynamic core_num, waves of more blocks than SMs, a failing
# block's located error, and the mesh programs.
DEFAULT_TESTS = [
    "tests/st/test_examples.py",
    "tests/st/test_variations.py",
    "tests/st/test_errors.py",
    "tests/st/test_mesh.py",
]


def run(command, **kwargs):
    print("+ " + " ".join(str(c) for c in command), flush=True)
    subprocess.run([str(c) for c in command], check=True, **kwargs)


def runtime_build(device: str, build: pathlib.Path) -> pathlib.Path:
    """The build whose bin/bp-run and lib/libblockpipe_runtime.so go in the
    bundle: the project's own for a device of this machine (cpu-sim,
    cuda-emu), else a runtime-only one."""
    if device in ("cpu-sim", "cuda-emu"):
        return build
    rt = build / "rt"
    if not (rt / "build.ninja").is_file():
        run(
            [
                "cmake",
                "-S",
                ROOT / "runtime",
                "-B",
                rt,
                "-G",
                "Ninja",
                "-DCMAKE_BUILD_TYPE=Release",
                "-DBLOCKPIPE_WITH_MPI=OFF",
                "-DBLOCKPIPE_RUNTIME_TESTS=OFF",
            ]
        )
    run(["ninja", "-C", rt, "bp-run"])
    return rt


def copy_runtime(rt: pathlib.Path, out: pathlib.Path, programs):
    """Copies bp-run and the runtime library of build `rt` into out/bin and
    out/lib and strips them and the `programs`' libraries of their debug
    sections: a bundle travels (a device run carries at most 64 MiB)."""
    (out / "bin").mkdir(parents=True, exist_ok=True)
    (out / "lib").mkdir(exist_ok=True)
    shutil.copy2(rt / "bin" / "bp-run", out / "bin")
    for library in (rt / "lib").glob("libblockpipe_runtime.so*"):
        shutil.copy2(library, out / "lib", follow_symlinks=True)
    for binary in [out / "bin" / "bp-run", *(out / "lib").iterdir(), *programs]:
        run(["strip", "--strip-debug", binary])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="cuda")
    parser.add_argument(
        "--device", help="the device kind to build for (default: the target's; cuda-emu)"
    )
    parser.add_argument(
        "--run", action="store_true", help="then run the bundle here (its exit status)"
    )
    parser.add_argument("-o", "--output", required=True, type=pathlib.Path)
    parser.add_argument(
        "--build",
        type=pathlib.Path,
        default=pathlib.Path(os.environ.get("BLOCKPIPE_BUILD_DIR", ROOT / "build")),
    )
    parser.add_argument(
        "tests",
        nargs="*",
        default=DEFAULT_TESTS,
        help="system-test files or pytest node ids (default: %(default)s)",
    )
    args = parser.parse_args()

    out = args.output.resolve()
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    device = args.device or args.target
    rt = runtime_build(device, args.build.resolve())

    env = dict(
        os.environ,
        BLOCKPIPE_BUNDLE=str(out),
        BLOCKPIPE_BUNDLE_TARGET=args.target,
        BLOCKPIPE_BUNDLE_DEVICE=device,
        PYTHONPATH=os.pathsep.join(
            p for p in (str(ROOT / "tests" / "st"), os.environ.get("PYTHONPATH")) if p
        ),
    )
    env.setdefault("BLOCKPIPE_SANITIZE", "1")
    run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "bundle",
            *args.tests,
        ],
        cwd=ROOT,
        env=env,
    )

    copy_runtime(rt, out, list((out / "programs").glob("*/lib*.so")))
    shutil.copy2(ROOT / "tests" / "st" / "bundle_run.py", out / "run.py")
    (out / "target").write_text(args.target + "\n")
    (out / "device").write_text(device + "\n")
    cases = len(list((out / "cases").glob("*/case.json")))
    print(
        f"{out}: {cases} cases for target {args.target} on {device}; "
        f"run them with: python3 {out}/run.py",
        flush=True,
    )
    if args.run:
        return subprocess.run([sys.executable, str(out / "run.py")]).returncode
    return 0


if __name__ == "__main__":
    sys.exit(main())
