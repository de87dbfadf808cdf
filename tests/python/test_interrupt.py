"""Ctrl-C during a long call: the call is cancelled, KeyboardInterrupt is
raised once the running blocks end, the output it was writing in place is
left as it was, and the device runs the next call."""

import os
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import json, os, signal, sys, threading, time
    import numpy as np
    import blockpipe, blockpipe.trace
    import blockpipe.language as pl

    BLOCKS, ROWS, COLS, REPEAT = 512, 8, 64, 20000

    @pl.program
    class Slow:
        @pl.function(type=pl.FunctionType.InCore)
        def work(self, x: pl.Tensor[[BLOCKS * ROWS, COLS], pl.FP32],
                 y: pl.Out[pl.Tensor[[BLOCKS * ROWS, COLS], pl.FP32]]
                 ) -> pl.Tensor[[BLOCKS * ROWS, COLS], pl.FP32]:
            row = pl.tile.get_block_idx() * ROWS
            t = pl.load(x, [row, 0], [ROWS, COLS])
            acc = t
            for i in pl.range(REPEAT):
                acc = pl.add(pl.mul(acc, 0.5), t)
            return pl.store(acc, [row, 0], y)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[BLOCKS * ROWS, COLS], pl.FP32],
                 y: pl.Out[pl.Tensor[[BLOCKS * ROWS, COLS], pl.FP32]]
                 ) -> pl.Tensor[[BLOCKS * ROWS, COLS], pl.FP32]:
            with pl.spmd(BLOCKS):
                y = self.work(x, y)
            return y

    program = blockpipe.compile(Slow, output_dir=sys.argv[1], quiet=True)
    x = np.ones((BLOCKS * ROWS, COLS), dtype=np.float32)

    # Time one block's worth of work to interrupt well inside the call.
    y = np.zeros_like(x)
    start = time.monotonic()
    program(x, y)
    full = time.monotonic() - start
    np.testing.assert_allclose(y, np.full_like(x, 2.0), rtol=1e-5)

    y = np.zeros_like(x)
    threading.Timer(full / 4, os.kill, (os.getpid(), signal.SIGINT)).start()
    try:
        program(x, y)
        print("NOT INTERRUPTED")
        sys.exit(1)
    except KeyboardInterrupt:
        pass
    # y is written in place (nothing in the kernel can fail): the blocks
    # that ran wrote it, and the interrupted call put it back as it was.
    assert (y == 0).all(), f"{int((y != 0).sum())} elements of y were left written"
    # Blocks not started when the interrupt came were skipped: the trace
    # has a block event for each block that ran, of launch 2 (this call).
    events = json.loads(blockpipe.trace.json())["traceEvents"]
    ran = sum(1 for e in events if e.get("cat") == "block" and e["args"]["launch"] == 2)
    print(f"blocks run {ran} of {BLOCKS} (full call {full:.2f} s)")
    assert ran < BLOCKS, ran

    # The device is usable: the next call runs everything.
    y = np.zeros_like(x)
    program(x, y)
    np.testing.assert_allclose(y, np.full_like(x, 2.0), rtol=1e-5)
    print("OK")
""")


def test_ctrl_c_cancels_the_call_and_leaves_the_device_usable(tmp_path):
    script = tmp_path / "slow.py"  # the DSL reads its source
    script.write_text(SCRIPT)
    result = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "slow")],
        capture_output=True,
        text=True,
        timeout=600,
        env=dict(os.environ, BLOCKPIPE_TRACE=str(tmp_path / "trace.json")),
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "OK" in result.stdout, result.stdout + result.stderr
    print(result.stdout)
