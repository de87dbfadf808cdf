"""Mesh and Pipeline programs with their devices spread over the ranks of an
MPI job (`python -m blockpipe launch -n P`), against the same programs in one
process and against numpy; faults that end the job; the launcher's mpirun
command line; the ranks' traces merged into one.

The programs are in mpi/job.py. Skipped (visibly) when this runtime was built
without MPI or mpirun is missing."""

import json
import os
import pathlib
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest

from blockpipe import _runtime, distributed

HERE = pathlib.Path(__file__).resolve().parent
JOB = HERE / "mpi" / "job.py"
sys.path.insert(0, str(HERE.parents[1] / "examples"))
import pipeline_mlp as mlp  # noqa: E402 - importable once examples/ is on sys.path

pytestmark = pytest.mark.skipif(
    not _runtime.mpi_available() or shutil.which("mpirun") is None,
    reason="MPI tests need a runtime built with OpenMPI and mpirun on PATH",
)

# What a job may take at most (compiling included): a hang fails the test.
JOB_LIMIT_S = 240


def _env(**extra):
    env = dict(os.environ)
    # Not under mpirun ourselves, whatever started pytest.
    for name in list(env):
        if name.startswith(("OMPI_", "PMIX_", "PMI_")):
            del env[name]
    env.update(extra)
    return env


def launch(ranks, *args, env=None):
    """Runs job.py ARGS on `ranks` ranks; (exit status, output, seconds)."""
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "blockpipe", "launch", "-n", str(ranks), str(JOB), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=JOB_LIMIT_S,
        env=env or _env(),
    )
    return proc.returncode, proc.stdout + proc.stderr, time.monotonic() - start


def in_process(*args):
    proc = subprocess.run(
        [sys.executable, str(JOB), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=JOB_LIMIT_S,
        env=_env(),
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def results(out: pathlib.Path, case: str, ranks: int):
    return [np.load(out / f"{case}.rank{r}.npy") for r in range(ranks)]


def reported(out: pathlib.Path, case: str, rank: int, output: str) -> str:
    """What RANK reported (job.report), read from its own file: in mpirun's
    output two ranks' lines can run together."""
    path = out / f"{case}.rank{rank}.txt"
    assert path.exists(), output
    line = path.read_text()
    assert line.startswith(f"rank {rank}: the call failed"), line
    return line


@pytest.mark.parametrize("ranks", [4, 2])
def test_a_ring_of_4_devices_over_the_ranks(tmp_path, ranks):
    # A cache of its own: exactly one rank builds, the others wait and load.
    cache = tmp_path / "cache"
    rc, output, _ = launch(ranks, "ring", tmp_path, env=_env(BLOCKPIPE_CACHE_DIR=str(cache)))
    assert rc == 0, output
    alone = tmp_path / "alone"
    alone.mkdir()
    in_process("ring", alone)
    (expected,) = results(alone, "ring", 1)
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 16, 16), dtype=np.float32)
    np.testing.assert_array_equal(expected, 2 * x[[3, 0, 1, 2]])
    for rank, y in enumerate(results(tmp_path, "ring", ranks)):
        np.testing.assert_array_equal(y, expected, err_msg=f"rank {rank}")
    builds = [json.loads((tmp_path / f"ring.rank{r}.json").read_text()) for r in range(ranks)]
    assert sum(b["built"] for b in builds) == 1, builds
    assert sum(b["cached"] for b in builds) == ranks - 1, builds
    # Each rank counts what its devices received; a transfer from another
    # rank is cross-rank, never host-staged; the ranks' sums are the job's.
    counters = [
        json.loads((tmp_path / f"ring.counters.rank{r}.json").read_text()) for r in range(ranks)
    ]
    assert [c["rank"] for c in counters] == list(range(ranks))
    nbytes = 16 * 16 * 4
    assert sum(c["transfers"] for c in counters) == 4, counters
    assert all(c["host_staged_bytes"] == 0 for c in counters), counters
    crossing = sum(c["cross_rank_bytes"] for c in counters)
    within = sum(c["device_to_device_bytes"] for c in counters)
    assert crossing + within == 4 * nbytes, counters
    # 4 ranks: every hop of the ring crosses; 2 ranks (2 devices each): 2 do.
    assert crossing == (4 if ranks == 4 else 2) * nbytes, counters


def test_a_2_stage_pipeline_over_2_ranks(tmp_path):
    rc, output, _ = launch(2, "pipeline", tmp_path)
    assert rc == 0, output
    alone = tmp_path / "alone"
    alone.mkdir()
    in_process("pipeline", alone)
    (expected,) = results(alone, "pipeline", 1)
    inputs = np.load(tmp_path / "pipeline.inputs.npy")
    x, w0, w1 = np.split(inputs, [4 * mlp.ROWS, 4 * mlp.ROWS + mlp.WIDTH])
    np.testing.assert_allclose(expected, mlp.reference(x, [w0, w1]), rtol=1e-5, atol=1e-4)
    for rank, y in enumerate(results(tmp_path, "pipeline", 2)):
        np.testing.assert_array_equal(y, expected, err_msg=f"rank {rank}")


def test_a_failing_rank_ends_the_job_naming_it(tmp_path):
    rc, output, seconds = launch(2, "mesh-fails", tmp_path)
    assert rc != 0, output
    # Both ranks raise, in bounded time, with outputs untouched; the error
    # names the rank, the device, the kernel and the user's line.
    for rank in (0, 1):
        line = reported(tmp_path, "mesh-fails", rank, output)
        assert float(line.split(" after ")[1].split(" s")[0]) < 10, line
        assert "outputs untouched: True" in line
        assert "device 1" in line and "a divisor is zero" in line and "job.py:" in line
    assert "rank 1: device 1" in output  # as rank 0 reports it
    # Rank 1's device is the cause, told first and once. Rank 0's kernel
    # usually ends before the news arrives (1 of 2 ranks failed); when it
    # is cancelled by it, rank 0 failed too and its line points up.
    summary = reported(tmp_path, "mesh-fails", 0, output).split(": ", 3)[3]
    lines = summary.splitlines()
    assert lines[1].startswith("  rank 1: device 1: "), summary
    assert summary.count("a divisor is zero") == 1, summary
    if len(lines) == 2:
        assert lines[0] == "mesh program failed on 1 of 2 ranks:", summary
    else:
        assert lines[0] == "mesh program failed on 2 of 2 ranks:", summary
        assert lines[2].startswith("  rank 0: device 0: ") and "rank 1 failed (above)" in lines[2]
        assert len(lines) == 3, summary
    # Every rank tells the job's view, rank 1 too, whose own device failed.
    assert reported(tmp_path, "mesh-fails", 1, output).split(": ", 3)[3] == summary
    # The run-time error class is public now: blockpipe.ExecutionError.
    assert "uncaught ExecutionError; ending the MPI job" in output
    assert seconds < JOB_LIMIT_S


def test_a_dying_rank_ends_the_job(tmp_path):
    rc, output, seconds = launch(2, "dies", tmp_path)
    assert rc != 0, output
    assert "rank 1" in output and "signal 9" in output, output
    assert "finished without rank 1" not in output
    assert seconds < JOB_LIMIT_S


def test_a_rank_whose_script_ends_early_fails_the_others_call(tmp_path):
    rc, output, seconds = launch(2, "exits", tmp_path)
    assert rc != 0, output
    line = reported(tmp_path, "exits", 0, output)
    assert float(line.split(" after ")[1].split(" s")[0]) < 10, line
    assert "rank 1 has exited" in line, line
    assert seconds < JOB_LIMIT_S


def test_each_rank_writes_its_trace_and_trace_merge_joins_them(tmp_path):
    trace = tmp_path / "trace.json"
    rc, output, _ = launch(2, "ring", tmp_path, env=_env(BLOCKPIPE_TRACE=str(trace)))
    assert rc == 0, output
    parts = sorted(p.name for p in tmp_path.glob("trace.rank*.json"))
    assert parts == ["trace.rank0.json", "trace.rank1.json"]
    merged_path = tmp_path / "merged.json"
    proc = subprocess.run(
        [sys.executable, "-m", "blockpipe", "trace-merge", str(trace), "-o", str(merged_path)],
        capture_output=True,
        text=True,
        env=_env(),
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    merged = json.loads(merged_path.read_text())
    names = {
        e["pid"]: e["args"]["name"]
        for e in merged["traceEvents"]
        if e.get("ph") == "M" and e.get("name") == "process_name"
    }
    # One lane per rank and device: devices 0, 1 on rank 0 and 2, 3 on rank 1.
    for device, rank in ((0, 0), (1, 0), (2, 1), (3, 1)):
        assert any(
            n.startswith(f"rank {rank} ") and f": Ring device {device} " in n
            for n in names.values()
        ), names
    # Every kernel of every device is in the merged timeline.
    kernels = [e for e in merged["traceEvents"] if e.get("ph") == "X" and "double" in e["name"]]
    assert {names[e["pid"]].split(" (")[0] for e in kernels} == {"rank 0", "rank 1"}
    assert all(e["ts"] >= 0 for e in kernels)


def test_the_launcher_builds_the_mpirun_command(tmp_path):
    cores = os.cpu_count() or 1
    command = distributed.mpirun_command(cores + 1, ["prog.py", "--flag"], mpirun="mpirun")
    assert command[:3] == ["mpirun", "-n", str(cores + 1)]
    assert "--oversubscribe" in command
    assert command[command.index("--bind-to") + 1] == "none"
    assert ("--allow-run-as-root" in command) == (os.geteuid() == 0)
    assert command[-3:] == [sys.executable, "prog.py", "--flag"]
    assert "--oversubscribe" not in distributed.mpirun_command(1, ["prog.py"], mpirun="mpirun")
    hostfile = tmp_path / "hosts"
    hostfile.write_text("# two hosts\nnode1 slots=4\nnode2 slots=2\n")
    command = distributed.mpirun_command(6, ["prog.py"], hostfile=str(hostfile), mpirun="mpirun")
    assert command[command.index("--hostfile") + 1] == str(hostfile)
    assert "--oversubscribe" not in command
    assert "--oversubscribe" in distributed.mpirun_command(
        7, ["prog.py"], hostfile=str(hostfile), mpirun="mpirun"
    )
    with pytest.raises(ValueError, match="-n must be at least 1"):
        distributed.mpirun_command(0, ["prog.py"], mpirun="mpirun")


def test_the_launcher_under_mpirun_runs_the_program_itself(tmp_path):
    script = tmp_path / "show.py"
    script.write_text("import sys\nprint('args', sys.argv[1:])\n")
    proc = subprocess.run(
        [sys.executable, "-m", "blockpipe", "launch", "-n", "3", str(script), "a", "b"],
        capture_output=True,
        text=True,
        timeout=60,
        env=_env(OMPI_COMM_WORLD_SIZE="1", OMPI_COMM_WORLD_RANK="0"),
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # Once, in this process: no nested mpirun starting 3 more.
    assert proc.stdout.count("args ['a', 'b']") == 1, proc.stdout
