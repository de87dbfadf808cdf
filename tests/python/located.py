"""Checks that a bad program fails at the user's line."""

import inspect
import re

import pytest

from blockpipe import CompileError


def marked_line(function):
    """The line of `function`'s source marked `# error: <text>`, and the text.
    The mark ends the line it marks or, where the line would then pass 100
    columns (the formatter would split it), stands alone on the line above."""
    source, first = inspect.getsourcelines(function)
    marks = []
    for i, line in enumerate(source):
        if m := re.search(r"# error: (.*)$", line):
            alone = not line[: m.start()].strip()
            marks.append((first + i + (1 if alone else 0), m.group(1)))
    assert len(marks) == 1, "mark exactly one line with '# error: <text>'"
    return marks[0]


def expect_error(program_factory, build):
    """`build(program_factory())` raises CompileError at the line of the
    factory's source marked `# error: <text>` (see marked_line), with that
    text in the message, the file and line first and a caret under the source
    line."""
    file = inspect.getsourcefile(program_factory)
    line, text = marked_line(program_factory)
    with pytest.raises(CompileError) as info:
        build(program_factory())
    err = info.value
    assert text.strip() in err.message, err.message
    assert (err.file, err.line) == (file, line), (
        f"error at {err.file}:{err.line}, expected {line}: {err}"
    )
    rendered = str(err).splitlines()
    assert rendered[0].startswith(f"{file}:{line}:")
    assert rendered[2].strip().endswith("^") and not rendered[2].strip().strip("^")
    return err


def module_from(tmp_path, source: str, name: str = "misuse"):
    """The module `source` defines, written to a file first (the DSL reads
    a program's source from its file); its errors name that file."""
    import importlib.util

    path = tmp_path / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, str(path)
