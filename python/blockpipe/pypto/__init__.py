"""Runs pypto programs and test files unmodified on blockpipe.

    python -m blockpipe pypto SCRIPT.py [ARGS...]
    python -m blockpipe pypto-test FILE.py... [-k EXPR]

An import hook (`hook`) resolves `pypto.language` to blockpipe.language and
stands in for the rest of pypto's Python API the programs touch
(`pypto.runtime.run`, `RunConfig`, `pypto.ir.compile`, the enums of
`pypto.backend`; `stubs`), for the names of pypto's test harness
(`harness.core.harness`; `harness`) and, when torch is not installed, for
torch (a NumPy stand-in; `torch_standin`). Test files are collected and run
by pytest with a plugin (`plugin`) that supplies pypto's fixtures, folds a
test's platform variants into one case and turns what blockpipe lacks into
a SKIP naming it (`outcome`); `cli` prints one line per case and the count.
"""
