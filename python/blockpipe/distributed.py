"""Scale-out on MPI: the same script on every rank of an `mpirun` job.

Under `mpirun -n P python prog.py` (or `python -m blockpipe launch -n P
prog.py`) every rank runs the whole script. A mesh or Pipeline program's
devices are spread over the ranks, each hosting a contiguous share, and its
channels between ranks go through OpenMPI; `compile()` and each call are
collective (every rank makes them, in the same order), and after a call
every rank's Out arrays hold the whole result.

A rank that fails ends the job: an error inside a call is raised on every
rank (naming the ranks that failed), and an exception that nobody catches on
a rank that joined the job aborts it (`MPI_Abort`), so `mpirun` exits
non-zero instead of waiting for ranks that never arrive.
"""

from __future__ import annotations

import os
import shutil
import sys
import traceback
from typing import List, Optional, Sequence, Tuple


def launched() -> bool:
    """Whether mpirun started this process (from its environment; MPI need
    not be initialized)."""
    from blockpipe import _runtime

    return _runtime.mpi_launched()


def world() -> Tuple[int, int]:
    """(rank, size) of this process: (0, 1) when not under mpirun. Joins the
    MPI job (initializes MPI) when under mpirun."""
    from blockpipe import _runtime

    if not launched():
        return 0, 1
    _joined()
    return _runtime.mpi_world()


def rank() -> int:
    return world()[0]


def size() -> int:
    return world()[1]


_hook_installed = False


def _joined() -> None:
    """This process takes part in the MPI job: an uncaught exception from
    now on aborts the whole job (the other ranks may be waiting for this
    one, and MPI_Finalize at exit would wait for them)."""
    global _hook_installed
    if _hook_installed:
        return
    _hook_installed = True
    previous = sys.excepthook

    def abort_job(kind, value, tb):
        from blockpipe import _runtime

        # The rank is known without MPI (mpirun's environment); say which
        # one failed before the traceback.
        rank_text = os.environ.get("OMPI_COMM_WORLD_RANK") or os.environ.get("PMIX_RANK") or "?"
        sys.stderr.write(
            f"blockpipe: rank {rank_text}: uncaught {kind.__name__}; ending the MPI job\n"
        )
        try:
            previous(kind, value, tb)
        except Exception:  # pragma: no cover - a broken hook must not stop the abort
            traceback.print_exception(kind, value, tb)
        sys.stdout.flush()
        sys.stderr.flush()
        if _runtime.mpi_initialized():
            _runtime.mpi_abort(1)

    sys.excepthook = abort_job


def transport() -> str:
    """The transport a mesh opened now gets: "mpi" under mpirun, else
    "in-process"."""
    if launched():
        _joined()
        return "mpi"
    return "in-process"


# ---------------------------------------------------------------- launcher


def _hostfile_slots(path: str) -> Optional[int]:
    """The slots an OpenMPI hostfile offers (a host without `slots=` counts
    one); None when it cannot be read."""
    total = 0
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                words = line.split("#", 1)[0].split()
                if not words:
                    continue
                slots = 1
                for word in words[1:]:
                    if word.startswith("slots="):
                        try:
                            slots = int(word.split("=", 1)[1])
                        except ValueError:
                            return None
                total += slots
    except OSError:
        return None
    return total


# The environment a rank on another host needs (ranks on this host inherit
# all of it anyway).
_FORWARDED_PREFIXES = ("BLOCKPIPE_", "OMP_")
_FORWARDED = ("PYTHONPATH", "LD_LIBRARY_PATH", "PATH")


def mpirun_command(
    processes: int,
    argv: Sequence[str],
    hostfile: Optional[str] = None,
    mpirun: Optional[str] = None,
    python: bool = True,
) -> List[str]:
    """The mpirun command line that runs `argv` (a script and its arguments,
    run with this Python; with `python=False` an executable) on `processes`
    ranks."""
    if processes < 1:
        raise ValueError(f"launch: -n must be at least 1, got {processes}")
    mpirun = mpirun or shutil.which("mpirun")
    if mpirun is None:
        raise FileNotFoundError(
            "launch: mpirun is not on PATH (install OpenMPI: "
            "apt-get install openmpi-bin libopenmpi-dev)"
        )
    command = [mpirun, "-n", str(processes)]
    if hostfile:
        command += ["--hostfile", hostfile]
    slots = _hostfile_slots(hostfile) if hostfile else (os.cpu_count() or 1)
    if slots is None or processes > slots:
        command.append("--oversubscribe")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-run-as-root")
    # blockpipe's devices run their own threads: no pinning of a rank to
    # one core.
    command += ["--bind-to", "none"]
    for name in sorted(os.environ):
        if name in _FORWARDED or name.startswith(_FORWARDED_PREFIXES):
            command += ["-x", name]
    return command + ([sys.executable] if python else []) + list(argv)


def launch(processes: int, argv: Sequence[str], hostfile: Optional[str] = None) -> int:
    """Runs script `argv[0]` with `argv[1:]` on `processes` ranks; returns
    mpirun's exit status. Already under mpirun, runs it in this process."""
    if not argv:
        raise ValueError("launch: no program to run")
    if launched():
        import runpy

        sys.argv = list(argv)
        runpy.run_path(argv[0], run_name="__main__")
        return 0
    import subprocess

    return subprocess.call(mpirun_command(processes, argv, hostfile))
