"""Programs that tests/st/test_mpi.py runs on several ranks with
`python -m blockpipe launch -n P job.py CASE OUT_DIR`, and once without
mpirun for the in-process result. Every rank saves what its Out arrays hold
after the call as OUT_DIR/<case>.rank<r>.npy (rank 0 without mpirun), and
what building did as OUT_DIR/<case>.rank<r>.json.

Cases:
  ring        collective_permute ring on 4 devices
  pipeline    a 2-stage MLP pipeline (examples/pipeline_mlp.py), 4 microbatches
  mesh-fails  a mesh program whose device 1 divides by zero
  dies        rank 1 is killed (SIGKILL) as the others enter a call
  exits       rank 1 ends its script (sys.exit) as the others enter a call
"""

import json
import os
import pathlib
import signal
import sys
import time

import numpy as np

import blockpipe
import blockpipe.language as pl
from blockpipe import build, distributed

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "examples"))
import pipeline_mlp as mlp  # noqa: E402 - importable once examples/ is on sys.path

DEVICES = 4
N = 16
T = pl.Tensor[[N, N], pl.FP32]
I = pl.Tensor[[N, N], pl.INT32]  # noqa: E741 - T and I: the FP32 and INT32 tensor types
RING = [[0, 1], [1, 2], [2, 3], [3, 0]]


@pl.program
class Ring:
    @pl.function(type=pl.FunctionType.InCore)
    def double(self, x: T, out: pl.Out[T]) -> T:
        t = pl.load(x, [0, 0], [N, N])
        return pl.store(pl.add(t, t), [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: T, y: pl.Out[T]) -> T:
        t = pl.create_tensor([N, N], dtype=pl.FP32)
        t = self.double(x, t)
        y = pl.collective_permute(t, y, source_target_pairs=RING)
        return y


@pl.program
class Dividing:
    @pl.function(type=pl.FunctionType.InCore)
    def divide(self, x: I, d: I, out: pl.Out[I]) -> I:
        q = pl.div(pl.load(x, [0, 0], [N, N]), pl.load(d, [0, 0], [N, N]))
        return pl.store(q, [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: I, d: I, q: pl.Out[I]) -> I:
        q = self.divide(x, d, q)
        return q


def save(out: pathlib.Path, case: str, result: np.ndarray) -> None:
    rank = distributed.rank()
    np.save(out / f"{case}.rank{rank}.npy", result)
    (out / f"{case}.rank{rank}.json").write_text(json.dumps(build.stats))


def report(out: pathlib.Path, case: str, line: str) -> None:
    """Prints LINE and keeps it in a file of the rank's own: mpirun forwards
    the ranks' output in chunks, so two ranks' lines can run together."""
    (out / f"{case}.rank{distributed.rank()}.txt").write_text(line)
    print(line, flush=True)


def joined_ring(rng):
    """The Ring program after one call that every rank has joined."""
    compiled = blockpipe.compile(Ring, devices=DEVICES)
    x = rng.standard_normal((DEVICES, N, N), dtype=np.float32)
    y = np.zeros_like(x)
    compiled(x, y)
    return compiled, x, y


def main() -> None:
    case, out = sys.argv[1], pathlib.Path(sys.argv[2])
    rng = np.random.default_rng(5)  # the same data on every rank
    if case == "ring":
        compiled = blockpipe.compile(Ring, devices=DEVICES)
        x = rng.standard_normal((DEVICES, N, N), dtype=np.float32)
        y = np.full_like(x, np.nan)
        compiled(x, y)
        save(out, case, y)
        counters = compiled.transfer_counters()
        (out / f"{case}.counters.rank{distributed.rank()}.json").write_text(json.dumps(counters))
    elif case == "pipeline":
        microbatches = 4
        x = rng.standard_normal((microbatches * mlp.ROWS, mlp.WIDTH), dtype=np.float32)
        w = [rng.standard_normal((mlp.WIDTH, mlp.WIDTH), dtype=np.float32) / 8 for _ in range(2)]
        y = np.full_like(x, np.nan)
        blockpipe.compile(mlp.two_stage_mlp(microbatches))(x, *w, y)
        save(out, case, y)
        np.save(out / "pipeline.inputs.npy", np.concatenate([x, *w]))
    elif case == "mesh-fails":
        compiled = blockpipe.compile(Dividing, devices=2)
        x = rng.integers(-1000, 1000, (2, N, N), dtype=np.int32)
        d = rng.integers(1, 9, (2, N, N), dtype=np.int32)
        d[1, 3, 5] = 0  # device 1
        q = np.full_like(x, -7)
        start = time.monotonic()
        try:
            compiled(x, d, q)
        except RuntimeError as err:
            untouched = bool((q == -7).all())
            report(
                out,
                case,
                f"rank {distributed.rank()}: the call failed after "
                f"{time.monotonic() - start:.2f} s, outputs untouched: {untouched}: {err}",
            )
            raise
    elif case == "dies":
        compiled, x, y = joined_ring(rng)
        if distributed.rank() == 1:
            os.kill(os.getpid(), signal.SIGKILL)
        compiled(x, y)  # the others wait for rank 1
        print(f"rank {distributed.rank()}: a call finished without rank 1", flush=True)
    elif case == "exits":
        compiled, x, y = joined_ring(rng)
        if distributed.rank() == 1:
            sys.exit(3)
        start = time.monotonic()
        try:
            compiled(x, y)  # the others wait for rank 1
        except RuntimeError as err:
            report(
                out,
                case,
                f"rank {distributed.rank()}: the call failed after "
                f"{time.monotonic() - start:.2f} s: {err}",
            )
            raise
    else:
        raise SystemExit(f"unknown case {case!r}")


if __name__ == "__main__":
    main()
