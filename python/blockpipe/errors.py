"""Errors that name the user's file, line and column."""

from __future__ import annotations

import contextlib
import dataclasses
import linecache
from contextvars import ContextVar
from typing import Iterable, List, Optional


@dataclasses.dataclass(frozen=True)
class Diagnostic:
    """One message from the compiler, at a position in the user's source."""

    severity: str
    file: str
    line: int
    column: int
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}:{self.column}: " if self.file else ""
        return f"{where}{self.severity}: {self.message}"


class CompileWarning(UserWarning):
    """Something the compiler accepts but doubts (an output left partly
    unwritten); issued through Python's `warnings` at the user's line."""


# Set while the text being compiled is IR a user wrote (blockpipe.verify_ir):
# then its diagnostics keep the IR's terms.
_READING_IR: ContextVar[bool] = ContextVar("blockpipe_reading_ir", default=False)


def in_dsl_terms(diagnostics: Iterable[Diagnostic]) -> List[Diagnostic]:
    """`diagnostics` with the dialect's terms ("'bp.sub' op", "!bp.tile<...>")
    put as the DSL spells them (blockpipe.dialect_terms). Kept as the compiler
    wrote them under BLOCKPIPE_TRACEBACK=full, for those debugging
    blockpipe, and for IR text a user wrote (verify_ir)."""
    import os

    diagnostics = list(diagnostics)
    if _READING_IR.get() or os.environ.get("BLOCKPIPE_TRACEBACK") == "full":
        return diagnostics
    from blockpipe.dialect_terms import to_dsl

    return [dataclasses.replace(d, message=to_dsl(d.message)) for d in diagnostics]


@contextlib.contextmanager
def reading_ir():
    """Within it, diagnostics keep the IR's terms: the input is IR text."""
    token = _READING_IR.set(True)
    try:
        yield
    finally:
        _READING_IR.reset(token)


def warn(diagnostics: Iterable[Diagnostic]) -> None:
    """Issues each warning in `diagnostics` (its notes appended) as a
    CompileWarning at the warning's file and line."""
    import warnings

    diagnostics = in_dsl_terms(diagnostics)
    pending: list = []

    def flush() -> None:
        if not pending:
            return
        first, notes = pending[0], pending[1:]
        text = "\n".join([first.message] + [str(note) for note in notes])
        warnings.warn_explicit(text, CompileWarning, first.file or "<blockpipe>", first.line or 0)
        pending.clear()

    for diag in diagnostics:
        if diag.severity == "warning":
            flush()
            pending.append(diag)
        elif pending:
            pending.append(diag)
    flush()


class SanitizerWarning(RuntimeWarning):
    """What the runtime's sanitizer (BLOCKPIPE_SANITIZE=1) finds without
    failing the call: an output left partly unwritten by every launch."""


def warn_runtime(messages: Iterable[str]) -> None:
    """Issues the runtime's warnings as SanitizerWarning at the first caller
    outside the blockpipe package (the user's call of the program)."""
    import os
    import sys
    import warnings

    messages = list(messages)
    if not messages:
        return
    package = os.path.dirname(os.path.abspath(__file__))
    level, frame = 2, sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(
        package + os.sep
    ):
        level += 1
        frame = frame.f_back
    for message in messages:
        warnings.warn(message, SanitizerWarning, stacklevel=level)


class CompileError(Exception):
    """A program the compiler rejects.

    `file`, `line` and `column` locate the first error; `diagnostics` holds
    every message, notes included, in the order they were emitted.
    """

    def __init__(
        self,
        message: str,
        file: Optional[str] = None,
        line: Optional[int] = None,
        column: Optional[int] = None,
        diagnostics: Iterable[Diagnostic] = (),
    ):
        self.message = message
        self.file = file
        self.line = line
        self.column = column
        self.diagnostics = list(diagnostics)
        super().__init__(self._render())

    @classmethod
    def from_diagnostics(cls, diagnostics: Iterable[Diagnostic], fallback: str) -> CompileError:
        """The error the compiler's `diagnostics` make (how the bindings
        raise one), in the DSL's terms (see in_dsl_terms)."""
        diagnostics = in_dsl_terms(diagnostics)
        first = next((d for d in diagnostics if d.severity == "error"), None)
        if first is None:
            return cls(fallback, diagnostics=diagnostics)
        return cls(
            first.message,
            file=first.file or None,
            line=first.line or None,
            column=first.column or None,
            diagnostics=diagnostics,
        )

    def _render(self) -> str:
        if self.diagnostics:
            lines = [str(d) for d in self.diagnostics]
        else:
            where = ""
            if self.file:
                where = f"{self.file}:{self.line or 0}:{self.column or 0}: "
            lines = [f"{where}error: {self.message}"]
        excerpt = _source_excerpt(self.file, self.line, self.column)
        if excerpt:
            lines[1:1] = excerpt
        return "\n".join(lines)


def _source_excerpt(file: Optional[str], line: Optional[int], column: Optional[int]):
    """The offending source line with a caret under the column."""
    if not file or not line:
        return []
    text = linecache.getline(file, line)
    if not text.strip():
        return []
    text = text.rstrip("\n").expandtabs(4)
    caret = " " * max((column or 1) - 1, 0) + "^"
    return ["    " + text, "    " + caret]


class BuildError(Exception):
    """The C++ build of a generated program failed; the message holds the
    command and its output."""


_EXECUTION_ERROR_DOC = """A call of a compiled program failed while it ran.

What only shows at run time: a tile window past a tensor's end, an
integer divisor of zero, a pipe wait that could never end, a failing
device, pipeline stage or MPI rank. The message names the kernel, the
block and the line of the program (and the device or rank). The call's
Out and InOut arrays keep what was passed in. A RuntimeError, so
`except RuntimeError` catches it too; arguments a call cannot take are
ValueErrors, raised before anything runs."""


def execution_error() -> type:
    """blockpipe.ExecutionError: the runtime's class (the one a failed call
    raises, made by the bindings), given its docstring here."""
    from blockpipe import _runtime

    error = _runtime.ExecutionError
    if error.__doc__ != _EXECUTION_ERROR_DOC:
        error.__doc__ = _EXECUTION_ERROR_DOC
    return error


_PACKAGE_DIR = __file__.rsplit("/", 1)[0] + "/"


def _internal(filename: str) -> bool:
    return filename.startswith(_PACKAGE_DIR)


def user_traceback(function):
    """Decorates a public entry point (compile(), a @pl.jit call): a
    CompileError or BuildError it raises keeps only the user's frames in its
    traceback, as JAX filters its own, and this wrapper's raise, whose line
    says how to see them all (BLOCKPIPE_TRACEBACK=full). The message
    already names the user's file and line."""
    import functools
    import os
    import types

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except (CompileError, BuildError) as error:
            if os.environ.get("BLOCKPIPE_TRACEBACK") == "full":
                raise
            kept = []
            tb = error.__traceback__
            while tb is not None:
                if not _internal(tb.tb_frame.f_code.co_filename):
                    kept.append(tb)
                tb = tb.tb_next
            filtered = None
            for tb in reversed(kept):
                filtered = types.TracebackType(filtered, tb.tb_frame, tb.tb_lasti, tb.tb_lineno)
            # The one frame of blockpipe's left: this line, which says why.
            raise error.with_traceback(filtered) from None  # BLOCKPIPE_TRACEBACK=full: all frames

    return wrapper
