"""The process's trace: every device of the process records into it when
BLOCKPIPE_TRACE=<path> is set (Chrome trace JSON, for chrome://tracing or
ui.perfetto.dev). It is written at exit and on flush()."""

from typing import Optional


def flush(path: Optional[str] = None) -> None:
    """Writes the trace so far to `path` (default: BLOCKPIPE_TRACE's)."""
    from blockpipe import _runtime

    _runtime.trace_flush(path or "")


def json() -> str:
    """The trace so far as Chrome trace JSON text."""
    from blockpipe import _runtime

    return _runtime.trace_json()
