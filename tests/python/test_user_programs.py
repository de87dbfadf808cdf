"""Small programs a user would write, run on the simulator and compared with
numpy; and mistakes a user would make, each a clean CompileError at the
user's line (or a ValueError naming the parameter)."""

import inspect
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import blockpipe
import blockpipe.language as pl
from blockpipe import CompileError

T32 = pl.Tensor[[32, 32], pl.FP32]


def build(program):
    return blockpipe.compile(program, quiet=True)


def expect_error(program_factory, full=False):
    """The program the factory builds fails at the line marked
    `# error: <text>`, with that text in the message and a caret under the
    source line. `full` runs the whole compile (passes and codegen)."""
    source, first = inspect.getsourcelines(program_factory)
    marks = [(first + i, m.group(1)) for i, line in enumerate(source)
             if (m := re.search(r"# error: (.*)$", line))]
    assert len(marks) == 1, "mark exactly one line with '# error: <text>'"
    line, text = marks[0]
    with pytest.raises(CompileError) as info:
        build(program_factory())
    err = info.value
    assert text.strip() in err.message, err.message
    assert (err.file, err.line) == (__file__, line), str(err)
    rendered = str(err).splitlines()
    assert rendered[0].startswith(f"{__file__}:{line}:")
    assert rendered[2].strip() == "^"
    return err


# --------------------------------------------------------------- errors


def test_callee_signature_error_is_reported_not_a_keyerror():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: T32, y):  # error: parameter 'y' of 'k' needs a type annotation
                return pl.store(pl.load(x, [0, 0], [32, 32]), [0, 0], y)

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: T32, y: pl.Out[T32]):
                y = self.k(x, y)
                return y
        return P
    expect_error(make)


def test_callee_return_annotation_error_is_reported():
    def make():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: T32, y: pl.Out[T32]) -> tuple:  # error: unsupported return annotation
                return pl.store(pl.load(x, [0, 0], [32, 32]), [0, 0], y)

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: T32, y: pl.Out[T32]):
                y = self.k(x, y)
                return y
        return P
    expect_error(make)
