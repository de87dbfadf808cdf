"""Building a generated C++ project into a shared library, cached.

The cache key covers everything that decides the binary: the generated
sources, the build flags, the C++ compiler, and the runtime the library links
against. A cached entry records the SHA-256 of its library; an entry whose
library no longer matches is rebuilt. Concurrent builds of the same key are
serialised by a file lock and published by an atomic rename.

The build runs the compile and link commands CMake would run for the
generated project, learned once per toolchain (toolchain.py): every
translation unit in parallel, the runtime headers precompiled, no configure
step. BLOCKPIPE_BUILD_SYSTEM=cmake configures and builds the generated
project with CMake instead, as users do for their own host builds.

The cache lives in `$BLOCKPIPE_CACHE_DIR`, else `~/.cache/blockpipe`.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Dict, Optional

from blockpipe import toolchain
from blockpipe.errors import BuildError

# cpu-sim programs run where they are built: tune for this CPU (the cache key
# includes it).
BUILD_FLAGS = ("-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_CXX_FLAGS=-march=native")
_CACHE_FORMAT = 1
_fingerprints: Dict[str, str] = {}
# What this process did: libraries it built, and those it found in the cache
# (another process, e.g. another rank of an MPI job, built them).
stats = {"built": 0, "cached": 0}


@dataclass(frozen=True)
class RuntimeLocation:
    """Where the runtime generated programs link against is: its library
    directory, its headers and its CMake package."""

    lib: pathlib.Path
    include: pathlib.Path
    cmake: pathlib.Path


def _package_dir() -> pathlib.Path:
    return pathlib.Path(__file__).resolve().parent


def runtime_location() -> RuntimeLocation:
    """`$BLOCKPIPE_BUILD_DIR`'s build tree when set; else the runtime
    installed inside the package (`pip install .`); else the source tree's
    build/ (the development flow of scripts/setup.sh)."""
    if "BLOCKPIPE_BUILD_DIR" not in os.environ:
        package = _package_dir()
        if (package / "lib" / "cmake" / "blockpipe" / "blockpipeConfig.cmake").is_file():
            return RuntimeLocation(
                package / "lib", package / "include", package / "lib" / "cmake" / "blockpipe"
            )
    build = pathlib.Path(os.environ.get("BLOCKPIPE_BUILD_DIR", _package_dir().parents[1] / "build"))
    return RuntimeLocation(
        build / "lib",
        _package_dir().parents[1] / "runtime" / "include",
        build / "cmake" / "blockpipe",
    )


def cache_root() -> pathlib.Path:
    default = pathlib.Path.home() / ".cache" / "blockpipe"
    return pathlib.Path(os.environ.get("BLOCKPIPE_CACHE_DIR", default))


def _file_fingerprint(path: pathlib.Path) -> str:
    """SHA-256 of a file, remembered per (path, size, mtime)."""
    stat = path.stat()
    memo = f"{path}:{stat.st_size}:{stat.st_mtime_ns}"
    if memo not in _fingerprints:
        _fingerprints[memo] = hashlib.sha256(path.read_bytes()).hexdigest()
    return _fingerprints[memo]


def _compiler_identity() -> str:
    cxx = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++") or "c++"
    path = pathlib.Path(shutil.which(cxx) or cxx)
    memo = f"cxx:{path}"
    if memo not in _fingerprints:
        try:
            version = subprocess.run(
                [str(path), "--version"], capture_output=True, text=True, timeout=30
            ).stdout.splitlines()[0]
        except (OSError, subprocess.SubprocessError, IndexError):
            version = "unknown"
        _fingerprints[memo] = f"{path.resolve() if path.exists() else path} {version}"
    return _fingerprints[memo]


def nvcc_path() -> Optional[str]:
    """The CUDA compiler a generated cuda project builds with (its CMake
    looks in the same places), if this machine has one."""
    found = os.environ.get("CUDACXX") or shutil.which("nvcc")
    if found is None and pathlib.Path("/usr/local/cuda/bin/nvcc").is_file():
        found = "/usr/local/cuda/bin/nvcc"
    return found


def _nvcc_identity() -> str:
    if "nvcc" not in _fingerprints:
        nvcc = nvcc_path()
        version = "none"
        if nvcc:
            try:
                version = (
                    subprocess.run([nvcc, "--version"], capture_output=True, text=True, timeout=30)
                    .stdout.strip()
                    .splitlines()[-1]
                )
            except (OSError, subprocess.SubprocessError, IndexError):
                version = "unknown"
        _fingerprints["nvcc"] = f"{nvcc} {version}"
    return _fingerprints["nvcc"]


def _cpu_identity() -> str:
    """Generated code is built for this CPU (-march=native)."""
    if "cpu" not in _fingerprints:
        text = ""
        try:
            text = pathlib.Path("/proc/cpuinfo").read_text()
        except OSError:
            pass
        model = next((line for line in text.splitlines() if line.startswith("model name")), "")
        flags = next((line for line in text.splitlines() if line.startswith("flags")), "")
        _fingerprints["cpu"] = hashlib.sha256(
            f"{os.uname().machine}\n{model}\n{flags}".encode()
        ).hexdigest()
    return _fingerprints["cpu"]


def _runtime_identity(runtime: RuntimeLocation) -> str:
    libs = sorted(runtime.lib.glob("libblockpipe_runtime.so*"))
    if not libs:
        raise BuildError(
            f"the blockpipe runtime is not built in {runtime.lib} "
            "(run scripts/setup.sh, or set BLOCKPIPE_BUILD_DIR)"
        )
    parts = [_file_fingerprint(lib) for lib in libs if lib.is_file() and not lib.is_symlink()]
    # Every header, named or not by extension (cuda-emu's `cuda/atomic`).
    headers = runtime.include
    for header in sorted(p for p in headers.rglob("*") if p.is_file()):
        parts.append(f"{header.relative_to(headers)}:{_file_fingerprint(header)}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def cache_key(files: Dict[str, str], emulated: bool = False) -> str:
    digest = hashlib.sha256()
    key = {
        "format": _CACHE_FORMAT,
        # kernel_config.json describes the library but is not built into it
        # (programs that differ only in a pipeline's microbatches share one).
        "files": {
            path: hashlib.sha256(text.encode()).hexdigest()
            for path, text in sorted(files.items())
            if path != "kernel_config.json"
        },
        "flags": BUILD_FLAGS,
        "compiler": _compiler_identity(),
        "cpu": _cpu_identity(),
        "runtime": _runtime_identity(runtime_location()),
    }
    if emulated:
        key["cuda_emu"] = True  # the host compiler's, against the emulation
    elif any(path.endswith(".cu") for path in files):
        key["nvcc"] = _nvcc_identity()  # a cuda program's kernels are nvcc's
    digest.update(json.dumps(key, sort_keys=True).encode())
    return digest.hexdigest()[:32]


class _Progress:
    """One status line on stderr while a build runs, only on a terminal."""

    def __init__(self, quiet: Optional[bool]):
        self.enabled = (not quiet) if quiet is not None else sys.stderr.isatty()
        if os.environ.get("BLOCKPIPE_QUIET"):
            self.enabled = False

    def show(self, text: str) -> None:
        if self.enabled:
            sys.stderr.write("\r\x1b[K" + text)
            sys.stderr.flush()

    def done(self) -> None:
        if self.enabled:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()


def _valid_entry(entry: pathlib.Path, library_name: str) -> Optional[pathlib.Path]:
    manifest = entry / "manifest.json"
    library = entry / library_name
    try:
        recorded = json.loads(manifest.read_text())["sha256"]
    except (OSError, ValueError, KeyError):
        return None
    if not library.is_file() or hashlib.sha256(library.read_bytes()).hexdigest() != recorded:
        return None
    return library


def build_library(
    source_dir: pathlib.Path,
    files: Dict[str, str],
    project: str,
    quiet: Optional[bool] = None,
    emulated: bool = False,
) -> pathlib.Path:
    """The shared library built from `source_dir` (whose content is `files`),
    from the cache when an intact entry exists. `emulated`: a cuda program's
    kernels built by the host compiler for the cuda-emu device."""
    library_name = f"lib{project}.so"
    key = cache_key(files, emulated)
    root = cache_root()
    entry = root / "builds" / key
    library = _valid_entry(entry, library_name)
    if library is not None:
        stats["cached"] += 1
        return library

    (root / "locks").mkdir(parents=True, exist_ok=True)
    with open(root / "locks" / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        library = _valid_entry(entry, library_name)  # built while we waited
        if library is not None:
            stats["cached"] += 1
            return library
        if entry.exists():
            shutil.rmtree(entry, ignore_errors=True)  # corrupted: rebuild
        progress = _Progress(quiet)
        (root / "tmp").mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=root / "tmp") as tmp:
            build = pathlib.Path(tmp) / "build"
            start = time.monotonic()
            _build_into(build, source_dir, files, project, emulated, progress)
            progress.done()
            built = build / library_name
            if not built.is_file():
                raise BuildError(f"building {project} produced no {library_name}")
            staging = pathlib.Path(tmp) / "entry"
            staging.mkdir()
            shutil.copy2(built, staging / library_name)
            (staging / "manifest.json").write_text(
                json.dumps(
                    {
                        "sha256": hashlib.sha256((staging / library_name).read_bytes()).hexdigest(),
                        "project": project,
                        "seconds": round(time.monotonic() - start, 3),
                    }
                )
            )
            entry.parent.mkdir(parents=True, exist_ok=True)
            os.replace(staging, entry)
            stats["built"] += 1
    library = _valid_entry(entry, library_name)
    if library is None:
        raise BuildError(f"the cache entry {entry} is unreadable right after it was built")
    return library


def variant(files: Dict[str, str], emulated: bool) -> str:
    if emulated:
        return "cuda-emu"
    return "cuda" if any(path.endswith(".cu") for path in files) else "cpu"


def probe(files: Dict[str, str], emulated: bool = False) -> toolchain.Probe:
    """CMake's commands for projects like this one (see toolchain.py)."""
    kind = variant(files, emulated)
    identities = {"cxx": _compiler_identity(), "cpu": _cpu_identity()}
    if kind == "cuda":
        identities["nvcc"] = _nvcc_identity()
    return toolchain.probe(cache_root(), runtime_location().cmake, BUILD_FLAGS, kind, identities)


def cmake_target(files: Dict[str, str]) -> str:
    """The generated project's library target (its -D<target>_EXPORTS)."""
    match = re.search(r"^add_library\((\S+) SHARED$", files["CMakeLists.txt"], re.M)
    if match is None:
        raise BuildError("the generated CMakeLists.txt declares no shared library")
    return match.group(1)


def _build_into(build: pathlib.Path, source_dir, files, project: str, emulated: bool, progress):
    """Builds `lib<project>.so` in `build`: with the commands CMake would
    run (toolchain.py), or with CMake itself under
    BLOCKPIPE_BUILD_SYSTEM=cmake."""
    if os.environ.get("BLOCKPIPE_BUILD_SYSTEM") == "cmake":
        _cmake_build(source_dir, build, project, emulated, progress)
        return
    progress.show(f"blockpipe: compiling {project} (C++) ...")
    build.mkdir()
    toolchain.build(
        cache_root(),
        probe(files, emulated),
        source_dir,
        files,
        cmake_target(files),
        f"lib{project}.so",
        build,
        # The probe's key has the compiler, the CPU, the flags and the
        # variant; the runtime's headers are the rest.
        object_context=_runtime_identity(runtime_location()),
    )


def _cmake_build(source_dir, build: pathlib.Path, project: str, emulated: bool, progress):
    """The generated project built as a user builds it (configure, then
    build): BLOCKPIPE_BUILD_SYSTEM=cmake."""
    progress.show(f"blockpipe: configuring {project} ...")
    toolchain.run(
        [
            "cmake",
            "-S",
            str(source_dir),
            "-B",
            str(build),
            "-G",
            "Ninja",
            f"-Dblockpipe_DIR={runtime_location().cmake}",
            *BUILD_FLAGS,
            *(["-DBLOCKPIPE_CUDA_EMU=ON"] if emulated else []),
        ],
        project,
    )
    progress.show(f"blockpipe: compiling {project} (C++) ...")
    toolchain.run(["cmake", "--build", str(build)], project)
