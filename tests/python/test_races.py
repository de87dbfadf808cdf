"""Races between the blocks of a launch: two blocks writing one element of
an output. The compiler warns where it can evaluate the store windows; the
sanitizer (BLOCKPIPE_SANITIZE=1) fails the call where it cannot, naming
both blocks, the tensor, the first element and both lines; the version
whose blocks write apart runs clean under both."""

import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np

import blockpipe
import blockpipe.language as pl

T = pl.Tensor[[64, 32], pl.FP32]


@pl.program
class Rows:
    @pl.function(type=pl.FunctionType.InCore)
    def copy(self, x: T, y: pl.Out[T], step: pl.Scalar[pl.INDEX]) -> T:
        row = pl.tile.get_block_idx() * step
        return pl.store(pl.load(x, [row, 0], [16, 32]), [row, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: T, y: pl.Out[T], step: pl.Scalar[pl.INDEX]) -> T:
        with pl.spmd(4):
            y = self.copy(x, y, step)
        return y


def test_the_compiler_warns_of_blocks_writing_one_row():
    @pl.program
    class Overlapping:
        @pl.function(type=pl.FunctionType.InCore)
        def copy(self, x: T, y: pl.Out[T]) -> T:
            row = pl.tile.get_block_idx() * 12
            return pl.store(pl.load(x, [row, 0], [16, 32]), [row, 0], y)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: T, y: pl.Out[T]) -> T:
            with pl.spmd(4):
                y = self.copy(x, y)
            return y

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        blockpipe.compile(Overlapping, quiet=True)
    races = [str(w.message) for w in caught if "both write" in str(w.message)]
    assert len(races) == 1, [str(w.message) for w in caught]
    assert (
        "blocks 0 and 1 of the launch of 'copy' both write element [12, 0] of output 'y'"
        in (races[0])
    )
    assert races[0].count("test_races.py:") == 2  # each block's store line


SCRIPT = textwrap.dedent("""
    import os, sys
    os.environ["BLOCKPIPE_SANITIZE"] = "1"
    sys.path.insert(0, os.path.dirname(sys.argv[1]))
    import numpy as np
    import blockpipe
    from test_races import Rows
    compiled = blockpipe.compile(Rows, quiet=True)
    x = np.arange(64 * 32, dtype=np.float32).reshape(64, 32)
    y = np.zeros_like(x)
    compiled(x, y, 16)  # blocks 16 rows apart: no race
    assert (y == x).all()
    y = np.full_like(x, 7.0)
    try:
        compiled(x, y, 8)  # 16 rows 8 apart: blocks b and b + 1 meet
    except blockpipe.ExecutionError as error:
        print("RACE", error)
        assert (y == 7.0).all(), "a failed call left its output written"
    else:
        print("NO RACE REPORTED")
""")


def test_the_sanitizer_fails_a_call_whose_blocks_write_one_row(tmp_path):
    script = tmp_path / "race.py"
    script.write_text(SCRIPT)
    result = subprocess.run(
        [sys.executable, str(script), __file__],
        capture_output=True,
        text=True,
        timeout=600,
        env=dict(os.environ),
    )
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "RACE" in out, out + result.stderr
    assert "sanitizer:" in out and "both write element [" in out and "of 'y'" in out, out
    # Blocks b and b + 1 (whichever pair met first) and both stores' lines.
    assert out.count("test_races.py:26") == 2, out
    first, second = (int(n) for n in out.split("blocks ")[1].split(" both")[0].split(" and "))
    assert second == first + 1, out


def test_without_the_sanitizer_a_run_time_race_is_not_checked():
    x = np.arange(64 * 32, dtype=np.float32).reshape(64, 32)
    y = np.zeros_like(x)
    blockpipe.compile(Rows, quiet=True)(x, y, 8)
    assert (y[:40] == x[:40]).all()  # each row holds x's, whichever block won
