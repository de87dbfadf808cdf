"""A helper holding a pl.at scope, in a file of its own, for
test_pypto_language.py (pypto's models keep such helpers in kernel
modules): its scope's kernel is read from here, with this module's names."""

import blockpipe.language as pl

ROWS = 16
OFFSET = 0.5


@pl.jit.inline
def shifted(x, y):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="shift_rows"):
        t = pl.load(x, [0, 0], [ROWS, 16])
        pl.store(pl.add(t, OFFSET), [0, 0], y)
    return y


@pl.jit.inline
def broken(x, y):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [ROWS, 16, 1])  # error: pl.load's shapes has 3 dimensions
        pl.store(t, [0, 0], y)
    return y
