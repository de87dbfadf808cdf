"""Checks that a bad program fails at the user's line."""

import inspect
import re

import pytest

from blockpipe import CompileError


def expect_error(program_factory, build):
    """`build(program_factory())` raises CompileError at the line of the
    factory's source marked `# error: <text>`, with that text in the message,
    the file and line first and a caret under the source line."""
    source, first = inspect.getsourcelines(program_factory)
    file = inspect.getsourcefile(program_factory)
    marks = [(first + i, m.group(1)) for i, line in enumerate(source)
             if (m := re.search(r"# error: (.*)$", line))]
    assert len(marks) == 1, "mark exactly one line with '# error: <text>'"
    line, text = marks[0]
    with pytest.raises(CompileError) as info:
        build(program_factory())
    err = info.value
    assert text.strip() in err.message, err.message
    assert (err.file, err.line) == (file, line), f"error at {err.file}:{err.line}, expected {line}: {err}"
    rendered = str(err).splitlines()
    assert rendered[0].startswith(f"{file}:{line}:")
    assert rendered[2].strip().endswith("^") and not rendered[2].strip().strip("^")
    return err
