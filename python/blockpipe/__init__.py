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
    "device_info",
    "verify_ir",
]

# Submodules reachable as attributes once `import blockpipe` ran (loaded on
# first use: each pulls in the runtime or numpy).
_SUBMODULES = (
    "build",
    "compiler",
    "distributed",
    "errors",
    "interpreter",
    "language",
    "trace",
    "traceplot",
)


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
        from blockpipe.errors import execution_error

        return execution_error()
    if name in _SUBMODULES:
        import importlib

        return importlib.import_module(f"blockpipe.{name}")
    raise AttributeError(f"module 'blockpipe' has no attribute {name!r}")


def device_info(target: str = "cpu-sim") -> dict:
    """What a program compiled for `target` is checked against, from the
    target's bundled device spec: `core_groups` (blocks that run at once),
    `aiv_per_core_group`, `local_memory_bytes` per memory space (vec, mat,
    left, right, acc: every tile must fit), `block_stack_bytes` (what one
    block's tiles may take together), `gm_bytes`, `gm_alignment`, and the
    `pipe` limits (slots, pipes per block); `description` says what the
    target is."""
    import json

    from blockpipe import _core

    if target not in _core.bundled_targets():
        raise ValueError(
            f"unknown target '{target}'; available: {', '.join(_core.bundled_targets())}"
        )
    return json.loads(_core.bundled_spec_json(target))


def verify_ir(text: str, filename: str = "<string>") -> str:
    """Parse and verify bp IR; return it in canonical form.

    Raises CompileError naming `filename` and the line and column of the first
    error, in the IR's terms.
    """
    from blockpipe import _core
    from blockpipe.errors import reading_ir

    with reading_ir():
        return _core.parse_and_verify(text, filename)
