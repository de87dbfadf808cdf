"""blockpipe: a compiler backend and runtime for SPMD accelerator kernels."""

from blockpipe.errors import (
    BuildError,
    CompileError,
    CompileWarning,
    Diagnostic,
    SanitizerWarning,
    user_traceback,
)

__all__ = [
    "BuildError",
    "CompileError",
    "CompileWarning",
    "CompiledProgram",
    "Diagnostic",
    "ExecutionError",
    "SanitizerWarning",
    "compile",
    "verify_ir",
]

# Submodules reachable as attributes once `import blockpipe` ran (loaded on
# first use: each pulls in the runtime or numpy).
_SUBMODULES = ("build", "distributed", "errors", "trace", "traceplot")


@user_traceback
def compile(
    program,
    output_dir=None,
    target="cpu-sim",
    dump_passes=False,
    quiet=None,
    devices=None,
    device=None,
):
    """Compiles and builds a @pl.program; returns a CompiledProgram.

    See blockpipe.compiler.compile.
    """
    from blockpipe.compiler import compile as _compile

    return _compile(
        program,
        output_dir=output_dir,
        target=target,
        dump_passes=dump_passes,
        quiet=quiet,
        devices=devices,
        device=device,
    )


def __getattr__(name):
    if name == "CompiledProgram":
        from blockpipe.compiler import CompiledProgram

        return CompiledProgram
    if name == "ExecutionError":
        # What a program's failed call raises (a RuntimeError).
        from blockpipe import _runtime

        return _runtime.ExecutionError
    if name in _SUBMODULES:
        import importlib

        return importlib.import_module(f"blockpipe.{name}")
    raise AttributeError(f"module 'blockpipe' has no attribute {name!r}")


def verify_ir(text: str, filename: str = "<string>") -> str:
    """Parse and verify bp IR; return it in canonical form.

    Raises CompileError naming `filename` and the line and column of the first
    error.
    """
    from blockpipe import _core

    return _core.parse_and_verify(text, filename)
