"""One trace per process: two programs run in one process both appear in
BLOCKPIPE_TRACE's file, each block on the lane of the unit that ran it."""

import json
import os
import pathlib
import subprocess
import sys
import textwrap

ROOT = pathlib.Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent("""
    import sys
    sys.path[:0] = [{examples!r}, {tests!r}]
    import numpy as np
    import blockpipe, blockpipe.trace
    from down_proj_residual import DownProjResidual, ROWS, K, COLS
    from test_compile import Scale

    rng = np.random.default_rng(0)
    x = rng.standard_normal((ROWS, K), dtype=np.float32)
    w = rng.standard_normal((K, COLS), dtype=np.float32)
    res = rng.standard_normal((ROWS, COLS), dtype=np.float32)
    out = np.zeros((ROWS, COLS), dtype=np.float32)
    blockpipe.compile(DownProjResidual, quiet=True)(x, w, res, out)
    np.testing.assert_allclose(out, x @ w + res, rtol=1e-5, atol=1e-4)

    a = np.ones((32, 16), dtype=np.float32)
    b = np.zeros_like(a)
    blockpipe.compile(Scale, quiet=True)(a, 2.0, b)
    assert (b == 2.0).all()
    blockpipe.trace.flush(sys.argv[1])
    # BLOCKPIPE_TRACE is written at exit.
""")


def _lanes(trace, kernel):
    return sorted(
        {
            e["tid"] % 4
            for e in trace["traceEvents"]
            if e.get("cat") == "block" and e["name"] == kernel
        }
    )


def test_two_programs_share_one_trace(tmp_path):
    script = tmp_path / "two.py"
    script.write_text(
        SCRIPT.format(examples=str(ROOT / "examples"), tests=str(ROOT / "tests" / "python"))
    )
    env = dict(os.environ, BLOCKPIPE_TRACE=str(tmp_path / "exit.json"))
    result = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "flushed.json")],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert result.returncode == 0, result.stdout + result.stderr

    for name in ("flushed.json", "exit.json"):
        trace = json.loads((tmp_path / name).read_text())
        assert trace["displayTimeUnit"] in ("ms", "ns")
        processes = {
            e["pid"]: e["args"]["name"]
            for e in trace["traceEvents"]
            if e["ph"] == "M" and e["name"] == "process_name"
        }
        pids = {name: pid for pid, name in processes.items()}
        assert any(n.startswith("DownProjResidual (") for n in pids), processes
        assert any(n.startswith("Scale (") for n in pids), processes
        assert len(processes) == len(set(processes)) >= 2
        launches = {
            e["name"]: e["pid"]
            for e in trace["traceEvents"]
            if e.get("cat") == "launch" and e["ph"] == "b"
        }
        # Each program's launches are under its own device.
        assert processes[launches["scale"]].startswith("Scale (")
        assert processes[launches["kernel"]].startswith("DownProjResidual (")
        # The group's halves on the AIC (0) and AIV (1) lanes; the
        # vector-only incore kernel on the AIV lane.
        assert _lanes(trace, "kernel") == [0, 1]
        assert _lanes(trace, "scale") == [1]
        blocks = [e for e in trace["traceEvents"] if e.get("cat") == "block"]
        assert len([e for e in blocks if e["name"] == "scale"]) == 2
        assert len([e for e in blocks if e["name"] == "kernel"]) == 8
