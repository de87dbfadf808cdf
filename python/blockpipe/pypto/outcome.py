"""What a pypto case's exception means: a SKIP (blockpipe lacks what the
program uses, or the case needs what this machine has not) or a FAIL (the
program ran and was wrong, or the runner has a gap), with a one-line reason.
"""

from __future__ import annotations

import os
import re
from typing import Optional, Tuple

SKIP, FAIL = "SKIP", "FAIL"


def first_line(text: str) -> str:
    """The first line of `text`, without object addresses (so that equal
    reasons read alike)."""
    lines = [line for line in str(text).splitlines() if line.strip()]
    return re.sub(r" at 0x[0-9a-f]+", "", lines[0].strip()) if lines else ""


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
    if isinstance(exc, ImportError) and (exc.name or "").startswith(("blockpipe", "pypto")):
        # `from pypto.language import X`: the name X is what is lacking.
        found = re.search(r"cannot import name '([^']+)'", str(exc))
        module = "pl" if exc.name == "blockpipe.language" else exc.name
        return SKIP, f"blockpipe lacks {module}.{found.group(1) if found else '?'}"
    skipped = _skip_reason(exc)
    if skipped is not None:
        return SKIP, skipped
    if isinstance(exc, (TypeError, ValueError)) and (
        _raised_in_language(exc) or _names_a_language_type(exc)
    ):
        # The DSL refused a form it does not take (while the program was
        # defined): what blockpipe lacks, not a wrong result.
        return SKIP, f"blockpipe.language: {type(exc).__name__}: {first_line(str(exc))}"
    return FAIL, f"{type(exc).__name__}: {first_line(str(exc))}".rstrip(": ")


def _raised_in_language(exc: BaseException) -> bool:
    tb = exc.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    return f"{os.sep}blockpipe{os.sep}language{os.sep}" in tb.tb_frame.f_code.co_filename


def _names_a_language_type(exc: BaseException) -> bool:
    """Whether `exc` is Python refusing an operator on the DSL's values
    (`pl.dynamic("M") * 2`: blockpipe's NamedDim has no `*`)."""
    import inspect

    from blockpipe.language import types as language_types

    operands = re.findall(r"'(\w+)'", str(exc)) if "operand type" in str(exc) else []
    return any(inspect.isclass(getattr(language_types, name, None)) for name in operands)


def _skip_reason(exc: BaseException) -> Optional[str]:
    """The reason of a pytest.skip(...), wherever it was called."""
    try:
        import _pytest.outcomes
    except ImportError:  # pragma: no cover - pytest is a requirement
        return None
    if isinstance(exc, _pytest.outcomes.Skipped):
        return first_line(exc.msg or "skipped")
    return None
