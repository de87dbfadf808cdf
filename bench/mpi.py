"""mpi: meshes over 2 MPI ranks against raw MPI and against one process.

Runs the C++ benchmark `mpi_bench` (bench/mpi/mpi.cpp, which explains the
figures) on 2 ranks with the same mpirun command line as
`python -m blockpipe launch`. It needs a runtime built with OpenMPI.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))


def run(quick: bool):
    from blockpipe import distributed

    build = Path(os.environ.get("BLOCKPIPE_BUILD_DIR", ROOT / "build"))
    binary = build / "bin" / "mpi_bench"
    if not binary.is_file():
        raise RuntimeError(
            f"{binary} is not built (the runtime needs OpenMPI: scripts/setup.sh installs it)"
        )
    command = distributed.mpirun_command(
        2, [str(binary)] + (["--quick"] if quick else []), python=False
    )
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    for raw in proc.stdout:
        raw = raw.strip()
        if raw.startswith("{"):
            yield json.loads(raw)
    if proc.wait() != 0:
        raise RuntimeError(f"bench mpi: {' '.join(command)} exited {proc.returncode}")
