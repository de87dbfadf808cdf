"""Building a generated project without configuring it: the compile and
link commands CMake would run, learned once per toolchain.

The generated CMakeLists.txt stays the one description of how a program is
built (users build it into their own host binaries). Configuring it costs a
third of a second per program, so `probe()` configures, once per
(runtime package, compiler, flags, variant), a stand-in project of the same
shape (`_probe_project`, which mirrors codegen's EmitCMake.cpp) and keeps
CMake's command lines as templates: `compile_commands.json` for each kind of
source, `ninja -t commands` for the link. A program then builds with those
commands, every translation unit (kernels, orchestrations, pipeline stages)
in its own process, in parallel, then one link.
tests/python/test_direct_build.py proves the commands equal those of
CMake's own build of generated projects.

With GCC, the runtime headers a translation unit includes (the tile
library, the orchestration API) come from a precompiled header: built once
per (probe, header set) into the cache, found by GCC as `bp_pch.h.gch` next
to the `bp_pch.h` given to `-include`. Its directory is named after the
content of every header it was built from (its dependency list), so an
edited runtime header means a new one.

Each translation unit's object is cached too (`objects/` of the cache),
keyed by its command (the program's own directories and names left out),
its source, the program's headers it includes and what the caller says
decides the rest (the runtime's headers, the compiler, the CPU): a program that shares
a kernel or a stage with one built before, or differs from it in one
kernel, compiles only what is new.
"""

from __future__ import annotations

import concurrent.futures
import fcntl
import hashlib
import json
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

from blockpipe.errors import BuildError

_PROBE_FORMAT = 1
_OBJECT_FORMAT = 1
PROBE = "bp_probe"  # the stand-in project's name
STAGE = "bp_probe_stage"  # its one pipeline stage
_SOURCES = {".cpp": "kernels/probe.cpp", ".cu": "kernels/probe.cu"}
_memo: Dict[str, object] = {}


def _probe_project(cuda: bool) -> Dict[str, str]:
    """The stand-in: what EmitCMake.cpp writes for a program named PROBE
    with one kernel source of each kind and one pipeline stage."""
    sources = "\n".join(f"  {_SOURCES[ext]}" for ext in ([".cpp", ".cu"] if cuda else [".cpp"]))
    top = ["cmake_minimum_required(VERSION 3.20)"]
    if cuda:
        top += [
            'option(BLOCKPIPE_CUDA_EMU "Build the kernels for cuda-emu" OFF)',
            "if(BLOCKPIPE_CUDA_EMU)",
            f"  project({PROBE} LANGUAGES CXX)",
            "else()",
            "  if(NOT DEFINED CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX} AND",
            "     EXISTS /usr/local/cuda/bin/nvcc)",
            "    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)",
            "  endif()",
            "  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)",
            "    set(CMAKE_CUDA_ARCHITECTURES 90-real 90-virtual)",
            "  endif()",
            f"  project({PROBE} LANGUAGES CXX CUDA)",
            "endif()",
        ]
    else:
        top.append(f"project({PROBE} LANGUAGES CXX)")
    top += [
        "set(CMAKE_CXX_STANDARD 17)",
        "set(CMAKE_CXX_STANDARD_REQUIRED ON)",
    ]
    if cuda:
        top += ["set(CMAKE_CUDA_STANDARD 17)", "set(CMAKE_CUDA_STANDARD_REQUIRED ON)"]
    top += [
        "if(NOT CMAKE_BUILD_TYPE AND NOT CMAKE_CONFIGURATION_TYPES)",
        "  set(CMAKE_BUILD_TYPE Release)",
        "endif()",
        "find_package(blockpipe REQUIRED CONFIG)",
    ]
    if cuda:
        top += ["if(NOT BLOCKPIPE_CUDA_EMU)", "  find_package(CUDAToolkit REQUIRED)", "endif()"]
    top += [
        f"add_library({PROBE} SHARED\n{sources}\n)",
        f"target_include_directories({PROBE} PUBLIC ${{CMAKE_CURRENT_SOURCE_DIR}}/orchestration)",
    ]
    if cuda:
        top += [
            f"target_include_directories({PROBE} PRIVATE ${{CMAKE_CURRENT_SOURCE_DIR}})",
            "if(BLOCKPIPE_CUDA_EMU)",
            f"  set_source_files_properties({_SOURCES['.cu']} PROPERTIES LANGUAGE CXX)",
            f"  target_link_libraries({PROBE} PUBLIC blockpipe::runtime PRIVATE blockpipe::cuda_emu)",
            f"  target_compile_options({PROBE} PRIVATE -Wall -Wextra)",
            "else()",
            f"  target_link_libraries({PROBE} PUBLIC blockpipe::runtime PRIVATE CUDA::cudart_static)",
            f"  target_compile_options({PROBE} PRIVATE",
            "    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra>",
            "    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>)",
            "endif()",
        ]
    else:
        top += [
            f"target_link_libraries({PROBE} PUBLIC blockpipe::runtime)",
            f"target_compile_options({PROBE} PRIVATE -Wall -Wextra)",
        ]
    top += [
        f"add_subdirectory(stages/{STAGE})",
        'file(WRITE "${CMAKE_BINARY_DIR}/bp_compiler_id.txt" "${CMAKE_CXX_COMPILER_ID}")',
    ]
    stage = (
        f"target_sources({PROBE} PRIVATE {STAGE}.cpp)\n"
        f"target_include_directories({PROBE} PUBLIC ${{CMAKE_CURRENT_SOURCE_DIR}})\n"
    )
    files = {"CMakeLists.txt": "\n".join(top) + "\n", f"stages/{STAGE}/CMakeLists.txt": stage}
    for path in [*_SOURCES.values(), f"stages/{STAGE}/{STAGE}.cpp"]:
        files[path] = ""
    return files


@dataclass(frozen=True)
class Probe:
    """CMake's commands for the stand-in, as templates (token lists)."""

    directory: str  # where the stand-in's sources were
    compile: Dict[str, List[str]]  # source extension -> command
    objects: Dict[str, str]  # source extension -> the object it wrote
    link: List[str]
    compiler_id: str
    key: str

    def compile_command(
        self,
        source: str,
        object_: str,
        src_dir: str,
        target: str,
        stages: Sequence[str],
        ext: Optional[str] = None,
    ) -> List[str]:
        """The command CMake runs for `source` (under `src_dir`, a program
        whose CMake target is `target`) writing `object_`; `ext`: as for a
        source of that kind."""
        ext = ext or pathlib.PurePath(source).suffix
        template = self.compile[ext]
        probe_source = f"{self.directory}/{_SOURCES[ext]}"
        out = []
        for token in template:
            if token == probe_source:
                out.append(source)
            elif token == self.objects[ext]:
                out.append(object_)
            else:
                out.extend(self._program_token(token, src_dir, target, stages))
        return out

    def _program_token(self, token: str, src_dir: str, target: str, stages) -> List[str]:
        if f"stages/{STAGE}" in token:
            return [
                self._program_token(token.replace(STAGE, stage), src_dir, target, ())[0]
                for stage in stages
            ]
        return [token.replace(self.directory, src_dir).replace(PROBE, target)]

    def link_command(self, objects: Sequence[str], library: str) -> List[str]:
        out: List[str] = []
        probe_objects = set(self.objects.values()) | {self._stage_object()}
        for token in self.link:
            if token in probe_objects:
                if not any(o in out for o in objects):
                    out.extend(objects)
            else:
                out.append(token.replace(f"lib{PROBE}.so", library))
        return out

    def _stage_object(self) -> str:
        return self.objects[".cpp"].replace(_SOURCES[".cpp"], f"stages/{STAGE}/{STAGE}.cpp")

    def program_specific(self, token: str) -> bool:
        """Whether a compile token depends on the program (its own include
        directories, its export macro): left out of a precompiled header."""
        return self.directory in token or PROBE in token


def _identity(command: Sequence[str]) -> str:
    memo = "version:" + " ".join(command)
    if memo not in _memo:
        try:
            text = subprocess.run(command, capture_output=True, text=True, timeout=30).stdout
            _memo[memo] = text.strip().splitlines()[0]
        except (OSError, subprocess.SubprocessError, IndexError):
            _memo[memo] = "unknown"
    return _memo[memo]


def probe_key(package: pathlib.Path, flags: Sequence[str], variant: str, identities) -> str:
    """What decides CMake's commands: its version, the runtime's CMake
    package (files and place), the flags, the compilers, the variant."""
    files = {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(package.glob("*.cmake"))
    }
    key = {
        "format": _PROBE_FORMAT,
        "cmake": _identity(["cmake", "--version"]),
        "package": str(package),
        "package_files": files,
        "flags": list(flags),
        "variant": variant,
        "identities": identities,
        "project": _probe_project(variant != "cpu"),
    }
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:32]


def probe(root: pathlib.Path, package: pathlib.Path, flags, variant: str, identities) -> Probe:
    """The stand-in's commands for `variant` ("cpu", "cuda-emu", "cuda"),
    from the cache or configured now."""
    key = probe_key(package, flags, variant, identities)
    if key in _memo:
        return _memo[key]
    entry = root / "toolchains" / key / "probe.json"
    if not entry.is_file():
        with _locked(root, f"probe-{key}"):
            if not entry.is_file():
                _configure(root, entry, package, flags, variant)
    data = json.loads(entry.read_text())
    result = Probe(
        data["directory"],
        data["compile"],
        data["objects"],
        data["link"],
        data["compiler_id"],
        key,
    )
    _memo[key] = result
    return result


def _configure(root, entry: pathlib.Path, package, flags, variant: str) -> None:
    (root / "tmp").mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=root / "tmp") as tmp:
        src = pathlib.Path(tmp) / "src"
        build = pathlib.Path(tmp) / "build"
        for path, text in _probe_project(variant != "cpu").items():
            (src / path).parent.mkdir(parents=True, exist_ok=True)
            (src / path).write_text(text)
        command = [
            "cmake",
            "-S",
            str(src),
            "-B",
            str(build),
            "-G",
            "Ninja",
            f"-Dblockpipe_DIR={package}",
            "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON",
            *flags,
            *(["-DBLOCKPIPE_CUDA_EMU=ON"] if variant == "cuda-emu" else []),
        ]
        run(command, "the toolchain probe")
        entries = json.loads((build / "compile_commands.json").read_text())
        compile_, objects = {}, {}
        for item in entries:
            for ext, source in _SOURCES.items():
                if item["file"] == str(src / source):
                    if item["directory"] != str(build):
                        raise BuildError(f"toolchain probe: unexpected directory in {item}")
                    tokens = shlex.split(item["command"])
                    compile_[ext] = tokens
                    objects[ext] = tokens[tokens.index("-o") + 1]
        link = _link_command(build)
        data = {
            "directory": str(src),
            "compile": compile_,
            "objects": objects,
            "link": link,
            "compiler_id": (build / "bp_compiler_id.txt").read_text().strip(),
        }
        entry.parent.mkdir(parents=True, exist_ok=True)
        staged = entry.with_suffix(".tmp")
        staged.write_text(json.dumps(data, indent=1))
        os.replace(staged, entry)


def _link_command(build: pathlib.Path) -> List[str]:
    """The one command after the compiles: the link, as `: && LINK && :`."""
    text = subprocess.run(
        ["ninja", "-C", str(build), "-t", "commands", PROBE],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    last = text.splitlines()[-1]
    match = re.fullmatch(r": && (.*) && :", last)
    if not match or "&&" in match.group(1) or ";" in match.group(1):
        raise BuildError(f"toolchain probe: a link step it does not understand:\n{text}")
    return shlex.split(match.group(1))


# ------------------------------------------------------- precompiled header

_INCLUDE = re.compile(r'^\s*#\s*include\s*["<]([^">]+)[">]', re.MULTILINE)


def _includes(source: str, files: Dict[str, str]) -> Tuple[Tuple[str, ...], Tuple[str, ...]]:
    """The runtime headers (`blockpipe/...`) `source` includes, directly or
    through the program's own headers, in order; and those headers of the
    program."""
    found: List[str] = []
    seen: List[str] = []

    def visit(path: str) -> None:
        if path in seen:
            return
        seen.append(path)
        here = pathlib.PurePosixPath(path).parent
        for name in _INCLUDE.findall(files.get(path, "")):
            if name.startswith("blockpipe/"):
                if name not in found:
                    found.append(name)
                continue
            for candidate in (str(here / name), name, f"orchestration/{name}"):
                if candidate in files:
                    visit(candidate)
                    break

    visit(source)
    return tuple(found), tuple(seen[1:])


def runtime_includes(source: str, files: Dict[str, str]) -> Tuple[str, ...]:
    """The runtime headers (`blockpipe/...`) `source` includes, directly or
    through the program's own headers, in order."""
    return _includes(source, files)[0]


def _fingerprint(path: str) -> str:
    stat = os.stat(path)
    memo = f"file:{path}:{stat.st_size}:{stat.st_mtime_ns}"
    if memo not in _memo:
        with open(path, "rb") as f:
            _memo[memo] = hashlib.sha256(f.read()).hexdigest()
    return _memo[memo]


def _deps_digest(deps: Sequence[str]) -> Optional[str]:
    try:
        text = "\n".join(f"{d}:{_fingerprint(d)}" for d in deps)
    except OSError:
        return None
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def precompiled_header(root: pathlib.Path, probe_: Probe, headers: Tuple[str, ...], ext: str):
    """The `bp_pch.h` to `-include` (its `.gch` beside it) for a
    translation unit of kind `ext` that includes `headers`; None where GCC
    is not its compiler or the header does not build."""
    if probe_.compiler_id != "GNU" or not headers:
        return None
    name = hashlib.sha256(json.dumps([probe_.key, headers, ext]).encode()).hexdigest()[:24]
    base = root / "toolchains" / probe_.key
    deps_file = base / f"pch-{name}.deps"

    def current() -> Optional[pathlib.Path]:
        try:
            deps = json.loads(deps_file.read_text())
        except (OSError, ValueError):
            return None
        digest = _deps_digest(deps)
        entry = base / f"pch-{name}-{digest}"
        return entry / "bp_pch.h" if digest and (entry / "bp_pch.h.gch").is_file() else None

    found = current()
    if found is not None:
        return found
    with _locked(root, f"pch-{name}"):
        found = current()
        if found is None:
            found = _build_pch(root, probe_, headers, ext, base, name, deps_file)
    return found


def _build_pch(root, probe_: Probe, headers, ext: str, base: pathlib.Path, name: str, deps_file):
    (root / "tmp").mkdir(parents=True, exist_ok=True)
    staging = pathlib.Path(tempfile.mkdtemp(dir=root / "tmp"))
    try:
        header = staging / "bp_pch.h"
        header.write_text("".join(f'#include "{h}"\n' for h in headers))
        command = [
            t
            for t in probe_.compile_command(
                str(header), str(staging / "bp_pch.h.gch"), probe_.directory, PROBE, (), ext
            )
            if not probe_.program_specific(t)
        ]
        at = command.index(str(header))
        command[at:at] = ["-x", "c++-header"]
        command += ["-MD", "-MF", str(staging / "deps.d")]
        proc = subprocess.run(command, capture_output=True, text=True)
        if proc.returncode != 0:
            return None  # the translation units will say why
        deps = [
            d
            for d in shlex.split(
                (staging / "deps.d").read_text().replace("\\\n", " ").split(":", 1)[1]
            )
            if d != str(header)
        ]
        (staging / "deps.d").unlink()
        entry = base / f"pch-{name}-{_deps_digest(deps)}"
        base.mkdir(parents=True, exist_ok=True)
        if not entry.exists():
            os.replace(staging, entry)
        staged_deps = deps_file.with_suffix(".tmp")
        staged_deps.write_text(json.dumps(deps))
        os.replace(staged_deps, deps_file)
        return entry / "bp_pch.h"
    finally:
        shutil.rmtree(staging, ignore_errors=True)


# ------------------------------------------------------------------- build


def build(
    root: pathlib.Path,
    probe_: Probe,
    src_dir: pathlib.Path,
    files: Dict[str, str],
    target: str,
    library: str,
    out_dir: pathlib.Path,
    use_pch: bool = True,
    object_context: Optional[str] = None,
) -> pathlib.Path:
    """Compiles every source of the generated project in `src_dir` (each
    in its own process, as many at once as there are CPUs) and links
    `out_dir/library`. With `object_context` (what decides an object
    besides its command, source and the program's headers: the runtime's
    headers, the compiler, the CPU), objects come from and go to the
    cache."""
    sources, stages = project_sources(files)
    objects = _ObjectCache(root, probe_, src_dir, files, target, object_context)
    jobs = []
    # The longest first (by text, a fair guess), so no CPU idles at the end.
    for source in sorted(sources, key=lambda s: -len(files[s])):
        obj = out_dir / "obj" / (source + ".o")
        obj.parent.mkdir(parents=True, exist_ok=True)
        command = probe_.compile_command(
            str(src_dir / source), str(obj), str(src_dir), target, stages
        )
        key = objects.key(source, obj, command)
        if not objects.fetch(key, obj):
            jobs.append((source, obj, command, key))
    workers = max(1, min(len(jobs), os.cpu_count() or 1))

    def compile_one(job):
        source, obj, command, key = job
        # nvcc's commands (real cuda kernels) take no GCC header.
        if use_pch and command[0] == probe_.compile[".cpp"][0]:
            headers = runtime_includes(source, files)
            pch = precompiled_header(root, probe_, headers, pathlib.PurePath(source).suffix)
            if pch is not None:
                at = command.index("-o")
                command = command[:at] + ["-include", str(pch)] + command[at:]
        proc = subprocess.run(command, capture_output=True, text=True)
        if proc.returncode == 0:
            objects.store(key, obj)
        return command, proc

    results = []
    if jobs:
        with concurrent.futures.ThreadPoolExecutor(workers) as pool:
            results = list(pool.map(compile_one, jobs))
    failed = [(c, p) for c, p in results if p.returncode != 0]
    project = library.removeprefix("lib").removesuffix(".so")
    if failed:
        raise BuildError(
            f"building the C++ of {project} failed:\n"
            + "\n".join(f"$ {shlex.join(c)}\n{(p.stdout + p.stderr).strip()}" for c, p in failed)
        )
    built = out_dir / library
    objects = [str(out_dir / "obj" / (source + ".o")) for source in sources]
    run(probe_.link_command(objects, library), project, cwd=out_dir)
    return built


class _ObjectCache:
    """Objects of translation units, by content (see the module's doc).
    Each entry is `<key>.o` with `<key>.sha256` beside it; an entry whose
    object no longer matches its digest is compiled again."""

    def __init__(self, root, probe_: Probe, src_dir, files, target: str, context):
        self.dir = root / "objects" if context is not None else None
        if self.dir is None:
            return
        self.root = root
        self.src_dir = str(src_dir)
        self.target = target
        self.files = files
        self.base = json.dumps([_OBJECT_FORMAT, probe_.key, context])

    def key(self, source: str, obj: pathlib.Path, command: Sequence[str]) -> Optional[str]:
        if self.dir is None:
            return None
        # The program's directories and its target's export macro are its
        # own; nothing the sources or the runtime include reads the macro.
        general = [
            "@OBJ@"
            if token == str(obj)
            else "-D@TARGET@_EXPORTS"
            if token == f"-D{self.target}_EXPORTS"
            else token.replace(self.src_dir, "@SRC@")
            for token in command
        ]
        # The text as compiled, and the program's headers it includes.
        with open(os.path.join(self.src_dir, source), encoding="utf-8") as f:
            text = [f.read()]
        text += [[h, self.files[h]] for h in _includes(source, self.files)[1]]
        digest = hashlib.sha256(json.dumps([self.base, general, text]).encode())
        return digest.hexdigest()[:32]

    def fetch(self, key: Optional[str], obj: pathlib.Path) -> bool:
        """Whether the cached object of `key` is now at `obj`."""
        if key is None:
            return False
        entry = self.dir / key[:2] / f"{key}.o"
        try:
            data = entry.read_bytes()
            if hashlib.sha256(data).hexdigest() != (entry.with_suffix(".sha256")).read_text():
                return False
        except OSError:
            return False
        obj.write_bytes(data)
        return True

    def store(self, key: Optional[str], obj: pathlib.Path) -> None:
        if key is None:
            return
        entry = self.dir / key[:2] / f"{key}.o"
        data = obj.read_bytes()
        entry.parent.mkdir(parents=True, exist_ok=True)
        (self.root / "tmp").mkdir(parents=True, exist_ok=True)
        # The digest first: an object published without it is never used.
        for path, content in [
            (entry.with_suffix(".sha256"), hashlib.sha256(data).hexdigest().encode()),
            (entry, data),
        ]:
            fd, staged = tempfile.mkstemp(dir=self.root / "tmp")
            with os.fdopen(fd, "wb") as f:
                f.write(content)
            os.replace(staged, path)


def project_sources(files: Dict[str, str]) -> Tuple[List[str], List[str]]:
    """The sources of the generated library in CMake's order (the top
    directory's, then each stage's), and the stage directories."""
    stages = re.findall(r"^add_subdirectory\(stages/([^)]+)\)$", files["CMakeLists.txt"], re.M)
    top = sorted(p for p in files if p.endswith((".cpp", ".cu")) and not p.startswith("stages/"))
    staged = [
        p
        for stage in stages
        for p in sorted(files)
        if p.startswith(f"stages/{stage}/") and p.endswith((".cpp", ".cu"))
    ]
    return top + staged, stages


class _locked:
    def __init__(self, root: pathlib.Path, name: str):
        (root / "locks").mkdir(parents=True, exist_ok=True)
        self.path = root / "locks" / f"{name}.lock"

    def __enter__(self):
        self.file = open(self.path, "w")
        fcntl.flock(self.file, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        self.file.close()


def run(command, project: str, cwd=None) -> None:
    proc = subprocess.run(command, capture_output=True, text=True, cwd=cwd)
    if proc.returncode != 0:
        output = (proc.stdout + proc.stderr).strip()
        raise BuildError(f"building the C++ of {project} failed:\n$ {' '.join(command)}\n{output}")
