"""blockpipe: a compiler backend and runtime for SPMD accelerator kernels."""

from blockpipe.errors import CompileError, Diagnostic

__all__ = ["CompileError", "Diagnostic", "verify_ir"]


def verify_ir(text: str, filename: str = "<string>") -> str:
    """Parse and verify bp IR; return it in canonical form.

    Raises CompileError naming `filename` and the line and column of the first
    error.
    """
    from blockpipe import _core

    return _core.parse_and_verify(text, filename)
