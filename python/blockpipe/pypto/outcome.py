"""What a pypto case's exception means: a SKIP (blockpipe lacks what the
program uses, or the case needs what this machine has not) or a FAIL (the
program ran and was wrong, or the runner has a gap), with a one-line reason.
"""

from __future__ import annotations

import os
from typing import Optional, Tuple

SKIP, FAIL = "SKIP", "FAIL"


def first_line(text: str) -> str:
    lines = [line for line in str(text).splitlines() if line.strip()]
    return lines[0].strip() if lines else ""


def _owner_name(obj) -> Optional[str]:
    """How a pypto program spells a blockpipe object: `pl`, `pl.tile`, a
    jit function, ... (None when the object is not blockpipe's)."""
    import types

    if isinstance(obj, types.ModuleType):
        name = obj.__name__
        if name == "blockpipe.language":
            return "pl"
        if name.startswith("blockpipe.language.ops."):
            return "pl." + name.rsplit(".", 1)[1]
        return name if name.startswith("blockpipe") else None
    module = type(obj).__module__ or ""
    if not module.startswith("blockpipe"):
        return None
    if type(obj).__name__ == "JitFunction":
        return "pl.jit function"
    return type(obj).__name__


def classify(exc: BaseException) -> Tuple[str, str]:
    """(SKIP or FAIL, the reason) for an exception a case raised."""
    from blockpipe.errors import CompileError
    from blockpipe.language.unsupported import NotSupportedError

    # pytest wraps an import's failure; the cause says what it was.
    while type(exc).__name__ == "CollectError" and exc.__cause__ is not None:
        exc = exc.__cause__
    if isinstance(exc, CompileError):
        where = f" ({os.path.basename(exc.file)}:{exc.line})" if exc.file else ""
        return SKIP, f"CompileError: {first_line(exc.message)}{where}"
    if isinstance(exc, NotSupportedError):
        return SKIP, first_line(str(exc))
    if isinstance(exc, AttributeError):
        owner = _owner_name(getattr(exc, "obj", None))
        if owner is not None and getattr(exc, "name", None):
            return SKIP, f"blockpipe lacks {owner}.{exc.name}"
    if isinstance(exc, ModuleNotFoundError) and exc.name:
        return SKIP, f"needs module {exc.name}"
    skipped = _skip_reason(exc)
    if skipped is not None:
        return SKIP, skipped
    return FAIL, f"{type(exc).__name__}: {first_line(str(exc))}".rstrip(": ")


def _skip_reason(exc: BaseException) -> Optional[str]:
    """The reason of a pytest.skip(...), wherever it was called."""
    try:
        import _pytest.outcomes
    except ImportError:  # pragma: no cover - pytest is a requirement
        return None
    if isinstance(exc, _pytest.outcomes.Skipped):
        return first_line(exc.msg or "skipped")
    return None
