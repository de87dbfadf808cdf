"""Every code block of the documentation runs, so that an example that stops
working fails a test named after its page and line (`README.md:42`).

Pages: README.md, docs/*.md, runtime/README.md and codegen/*.md
(bench/README.md is the benchmarks' record of figures, measured by hand, and
is left to them). A fenced block's language says what happens to it:

- ```python: the block is written to a file, padded with blank lines so that
  a traceback's line numbers are the page's, and run by this interpreter in
  a fresh process whose working directory is an empty temporary directory
  (relative paths a block writes land there).
- ```sh, ```bash, ```shell: run by `bash -euo pipefail` from the repository
  root, with this interpreter's directory (.venv/bin) first on PATH, as an
  activated virtual environment has it; files a block writes go under
  build_output/, which git ignores. ```console: the lines after `$ ` are the
  commands (run the same way); the other lines are output, not compared.
- ```cpp, ```c++: compiled with g++ -std=c++17 -Wall -Wextra -Werror against
  runtime/include. A block with `int main(` is linked with the runtime
  library (and the program that `generate=` names) and run, and must exit 0;
  any other block must be a whole translation unit and is only checked
  (-fsyntax-only).
- ```mlir: parsed and verified by build/bin/bp-opt.
- ```text, ```json, ```cmake, ```diff: listings and output, not run. A
  fence without a language, or with one not named here, fails its test:
  say what the block is.

A marker, an HTML comment on the last non-blank line before a fence,
changes that:

- `<!-- doc-test: skip reason="..." -->`: the block is not run and the test
  is reported as skipped with the reason, which must say why (installs
  packages, runs the whole suite, needs a GPU or several MPI ranks) and,
  where there is one, which test covers it instead.
- `<!-- doc-test: continue -->`: the block continues the page's previous
  block of the same language: both run as one program (the earlier blocks
  first), so a page can build an example up step by step.
- `<!-- doc-test: generate=FILE.py -->` (C++ only): FILE.py's one program is
  compiled first (`python -m blockpipe compile FILE.py -o DIR`); the block
  may include its generated headers (`#include "main.h"`) and links with its
  library.

A marker anywhere else, or a skip without a reason, fails the page's test.
Examples stay cheap: small shapes, one compile per program, and the compile
cache of the test run (BLOCKPIPE_CACHE_DIR) shared with every other test.
"""

from __future__ import annotations

import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Dict, List, Optional

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("BP_BUILD_DIR", REPO / "build"))
PAGES = ["README.md", "docs/*.md", "runtime/README.md", "codegen/*.md"]
# A block's time limit: a cache miss builds its programs.
TIMEOUT = 600

PYTHON, SHELL, CONSOLE, CPP, MLIR = "python", "sh", "console", "cpp", "mlir"
LANGUAGES = {
    "python": PYTHON,
    "py": PYTHON,
    "sh": SHELL,
    "bash": SHELL,
    "shell": SHELL,
    "console": CONSOLE,
    "cpp": CPP,
    "c++": CPP,
    "mlir": MLIR,
}
LISTINGS = {"text", "json", "cmake", "diff"}

FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>```+|~~~+)\s*(?P<info>[^`\s]*)")
MARKER = re.compile(r"^\s*<!--\s*doc-test:(?P<body>.*?)-->\s*$")


@dataclass
class Block:
    page: str  # relative to the repository
    line: int  # the opening fence's, 1-based
    language: str  # the fence's info word
    code: List[str]  # the block's lines, each at its page line (line + 1 + i)
    options: Dict[str, str] = field(default_factory=dict)
    problem: Optional[str] = None  # what makes the block fail before it runs
    chain: List[Block] = field(default_factory=list)  # blocks run before it

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"

    @property
    def kind(self) -> Optional[str]:
        return LANGUAGES.get(self.language.lower())


def parse_marker(body: str):
    """The options of a marker's body: `skip reason="..."`, `continue`,
    `generate=FILE`; a str when it does not parse."""
    try:
        words = shlex.split(body)
    except ValueError as err:
        return f"cannot read the marker: {err}"
    options = {}
    for word in words:
        key, _, value = word.partition("=")
        if key not in ("skip", "reason", "continue", "generate"):
            return f"unknown doc-test option '{key}' (skip reason=, continue, generate=)"
        options[key] = value
    if "skip" in options and not options.get("reason", "").strip():
        return 'a skipped block needs a reason: <!-- doc-test: skip reason="why" -->'
    if "reason" in options and "skip" not in options:
        return "reason= goes with skip"
    return options


def blocks_of(page: pathlib.Path) -> List[Block]:
    rel = page.relative_to(REPO).as_posix()
    lines = page.read_text(encoding="utf-8").splitlines()
    found: List[Block] = []
    pending = None  # (line, options or problem) of a marker not yet used
    i = 0
    while i < len(lines):
        text = lines[i]
        marker = MARKER.match(text)
        if marker:
            if pending is not None:
                found.append(stray(rel, pending[0]))
            pending = (i + 1, parse_marker(marker.group("body")))
            i += 1
            continue
        fence = FENCE.match(text)
        if not fence:
            if text.strip() and pending is not None:
                found.append(stray(rel, pending[0]))
                pending = None
            i += 1
            continue
        indent, mark = len(fence.group("indent")), fence.group("fence")
        closing = re.compile(r"^ {0,3}" + re.escape(mark[0]) + "{" + str(len(mark)) + r",}\s*$")
        end = i + 1
        while end < len(lines) and not closing.match(lines[end]):
            end += 1
        block = Block(rel, i + 1, fence.group("info"), [s[indent:] for s in lines[i + 1 : end]])
        if pending is not None:
            options = pending[1]
            if isinstance(options, str):
                block.problem = f"{rel}:{pending[0]}: {options}"
            else:
                block.options = options
            pending = None
        if not block.language:
            block.problem = (
                "a fence without a language: say what the block is (```python, ```sh, "
                "```cpp, ... to run it; ```text for a listing or output)"
            )
        elif block.kind is None and block.language.lower() not in LISTINGS:
            block.problem = (
                f"fence language '{block.language}' is neither run ({', '.join(LANGUAGES)}) "
                f"nor a listing ({', '.join(sorted(LISTINGS))})"
            )
        found.append(block)
        i = end + 1
    if pending is not None:
        found.append(stray(rel, pending[0]))
    link_chains(found)
    return found


def stray(page: str, line: int) -> Block:
    return Block(page, line, "marker", [], problem="a doc-test marker must be right before a fence")


def link_chains(blocks: List[Block]) -> None:
    last: Dict[str, Block] = {}
    for block in blocks:
        if block.kind is None:
            continue
        if "continue" in block.options:
            before = last.get(block.kind)
            if before is None:
                block.problem = block.problem or (
                    f"'continue' but no earlier {block.language} block on the page"
                )
            else:
                block.chain = before.chain + [before]
        last[block.kind] = block


def all_blocks() -> List[Block]:
    pages = sorted({p for pattern in PAGES for p in REPO.glob(pattern)})
    return [b for page in pages for b in blocks_of(page)]


BLOCKS = all_blocks()
RUN = [b for b in BLOCKS if b.kind is not None or b.problem]


def padded(blocks: List[Block], prefix: str = "") -> str:
    """The blocks' code with each line at its line on the page, so that an
    error's line number is the page's."""
    out: List[str] = []
    for block in blocks:
        first = block.line + 1  # the line of the block's first line of code
        out += [""] * max(first - 1 - len(out), 0)
        out += block.code
    if prefix and out and not out[0]:
        out[0] = prefix
    elif prefix:
        out.insert(0, prefix)
    return "\n".join(out) + "\n"


def run(command, cwd, what: str, env=None) -> subprocess.CompletedProcess:
    result = subprocess.run(
        [str(c) for c in command],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=TIMEOUT,
    )
    if result.returncode != 0:
        pytest.fail(f"{what} failed (exit status {result.returncode}):\n{result.stdout}", False)
    return result


def environment() -> Dict[str, str]:
    env = dict(os.environ)
    venv_bin = str(pathlib.Path(sys.executable).parent)
    env["PATH"] = venv_bin + os.pathsep + env.get("PATH", "")
    env["BLOCKPIPE_QUIET"] = "1"
    return env


def run_python(block: Block, tmp: pathlib.Path) -> None:
    script = tmp / (block.page.replace("/", "_") + ".py")
    script.write_text(padded(block.chain + [block]))
    run([sys.executable, script], tmp, f"{block.id} (python)", environment())


def shell_code(block: Block) -> Block:
    """A console block's commands (the lines after `$ `, with their
    backslash continuations); another block as it is."""
    if block.kind != CONSOLE:
        return block
    code, continued = [], False
    for text in block.code:
        if continued or text.startswith("$ "):
            line = text if continued else text[2:]
            code.append(line)
            continued = line.rstrip().endswith("\\")
        else:
            code.append("")
    return Block(block.page, block.line, block.language, code)


def run_shell(block: Block, tmp: pathlib.Path) -> None:
    script = tmp / (block.page.replace("/", "_") + ".sh")
    script.write_text(padded([shell_code(b) for b in block.chain + [block]]))
    run(["bash", "-euo", "pipefail", script], REPO, f"{block.id} (bash)", environment())


def run_cpp(block: Block, tmp: pathlib.Path) -> None:
    source = tmp / (block.page.replace("/", "_") + ".cpp")
    source.write_text(padded(block.chain + [block], prefix=f'#line 2 "{block.page}"'))
    command = [os.environ.get("CXX", "g++"), "-std=c++17", "-Wall", "-Wextra", "-Werror"]
    command += ["-I", REPO / "runtime" / "include"]
    libraries: List[str] = []
    generate = block.options.get("generate")
    if generate:
        program = tmp / "generated"
        run(
            [sys.executable, "-m", "blockpipe", "compile", REPO / generate, "-o", program],
            tmp,
            f"{block.id}: compiling {generate}",
            environment(),
        )
        command += ["-I", program / "orchestration"]
        libraries += [f"-L{program}", f"-Wl,-rpath,{program}"]
        libraries += ["-l:" + p.name for p in program.glob("lib*.so")]
    code = "\n".join(b for b in block.code)
    if "int main(" not in code:
        run(command + ["-fsyntax-only", source], tmp, f"{block.id} (g++ -fsyntax-only)")
        return
    runtime = BUILD / "lib"
    exe = tmp / "example"
    command += [source, "-o", exe] + libraries
    command += [f"-L{runtime}", f"-Wl,-rpath,{runtime}", "-lblockpipe_runtime"]
    run(command, tmp, f"{block.id} (g++)")
    run([exe], tmp, f"{block.id} (its program)", environment())


def run_mlir(block: Block, tmp: pathlib.Path) -> None:
    source = tmp / (block.page.replace("/", "_") + ".mlir")
    source.write_text(padded(block.chain + [block]))
    bp_opt = BUILD / "bin" / "bp-opt"
    run([bp_opt, source, "-o", os.devnull], tmp, f"{block.id} (bp-opt)")


RUNNERS = {PYTHON: run_python, SHELL: run_shell, CONSOLE: run_shell, CPP: run_cpp, MLIR: run_mlir}


@pytest.mark.parametrize("block", RUN, ids=[b.id for b in RUN])
def test_doc_block(block: Block, tmp_path: pathlib.Path) -> None:
    if block.problem:
        pytest.fail(f"{block.id}: {block.problem}", False)
    if "skip" in block.options:
        pytest.skip(block.options["reason"])
    if any("skip" in b.options for b in block.chain):
        pytest.fail(f"{block.id} continues a skipped block", False)
    RUNNERS[block.kind](block, tmp_path)


LINK = re.compile(r"\]\((?P<target>[^)#\s]+)(?:#[^)]*)?\)")


def test_readme_is_a_front_door() -> None:
    """The README stays short and links every docs page, and every relative
    link of every page leads to a file."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 150, "README.md is a front door: move topics to docs/"
    pages = sorted({p for pattern in PAGES for p in REPO.glob(pattern)})
    linked = {(REPO / m.group("target")).resolve() for m in LINK.finditer(readme)}
    unlinked = [p.relative_to(REPO).as_posix() for p in REPO.glob("docs/*.md") if p not in linked]
    assert not unlinked, f"docs pages the README does not link: {unlinked}"
    broken = []
    for page in pages:
        for number, text in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            for match in LINK.finditer(text):
                target = match.group("target")
                if "://" in target or target.startswith("mailto:"):
                    continue
                if not (page.parent / target).exists():
                    broken.append(f"{page.relative_to(REPO)}:{number}: {target}")
    assert not broken, "links to nothing:\n" + "\n".join(broken)


def test_the_examples_are_collected() -> None:
    """The collector finds the pages and their blocks (a change to its
    patterns that found nothing would pass every other test)."""
    pages = {b.page for b in BLOCKS}
    assert {"README.md", "docs/language.md", "runtime/README.md"} <= pages
    assert sum(b.kind == PYTHON for b in BLOCKS) >= 5
    assert shutil.which("bash")
