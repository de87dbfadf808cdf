"""Where a test runs a program: on cpu-sim, on the CUDA target under
cuda-emu, or interpreted (BLOCKPIPE_INTERPRET=1)."""

import blockpipe

TARGETS = {
    "cpu-sim": dict(target="cpu-sim"),
    "cuda-emu": dict(target="cuda", device="cuda-emu"),
    "interpreted": None,
}


def compile_at(program, where: str, monkeypatch):
    """`program` compiled for `where` (a key of TARGETS)."""
    if TARGETS[where] is None:
        monkeypatch.setenv("BLOCKPIPE_INTERPRET", "1")
        return blockpipe.compile(program, quiet=True)
    return blockpipe.compile(program, quiet=True, **TARGETS[where])
