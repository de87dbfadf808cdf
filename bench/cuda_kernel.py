"""`cuda_kernel`: the flagship y = x @ w + res at 4096 cubed on the cuda
target, x and w in BF16 and in FP32 (res and y FP32), against
`torch.addmm(res, x, w)` (cuBLAS; x, w, res and y all in the dtype) in the
same run. Value: TFLOP/s (2 M N K per call; higher is better); ratio =
ours / torch's, goal >= 0.5 in BF16 (issue 15).

A GPU machine has no compiler, so the benchmark runs in two steps:

    .venv/bin/python bench/cuda_kernel.py prepare DIR [--size N]   # here
    python3 DIR/cuda_kernel.py run DIR                            # there: numpy, torch

`prepare` compiles and builds the program for cuda (DIR/bf16, DIR/fp32)
and copies bp-run, the runtime (built without MPI, as scripts/st_bundle.py
does) and this script into DIR. `run` writes the inputs
(DIR/<dtype>/inputs.npz; bf16 as its bits), times our calls with `bp-run --resident` (the
tensors stay on the GPU; each call is its launches alone) and torch's with
CUDA events, in alternating rounds, checks our result against torch's, and
prints one JSON line per dtype.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import shutil
import statistics
import subprocess
import sys

import numpy as np

SIZE = 4096
# Block b computes the TM x TN tile (b // (N / TN), b % (N / TN)) of y over
# the whole K: M N / (TM TN) blocks, 4096 at 4096^2, waves over the H100's
# 132 SMs. (128 x 128 tiles need 3 x 64 KiB of acc memory while they
# accumulate, more than the cuda target's 64 KiB.)
TM, TK, TN = 64, 64, 64
DTYPES = ("bf16", "fp32")
ROUNDS, CALLS = 5, 10


def make_program(size: int, dtype_name: str):
    import blockpipe.language as pl

    dtype = {"bf16": pl.BF16, "fp32": pl.FP32}[dtype_name]
    M = N = K = size
    COL_TILES = N // TN
    BLOCKS = (M // TM) * COL_TILES

    @pl.program
    class FlagshipGpu:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(
            self,
            x: pl.Tensor[[M, K], dtype],
            w: pl.Tensor[[K, N], dtype],
            res: pl.Tensor[[M, N], pl.FP32],
            out: pl.Out[pl.Tensor[[M, N], pl.FP32]],
        ) -> pl.Tensor[[M, N], pl.FP32]:
            block = pl.tile.get_block_idx()
            row = (block // COL_TILES) * TM
            col = (block % COL_TILES) * TN
            acc = pl.matmul(pl.load(x, [row, 0], [TM, TK]), pl.load(w, [0, col], [TK, TN]))
            for k in pl.range(1, K // TK):
                acc = pl.matmul(
                    pl.load(x, [row, k * TK], [TM, TK]),
                    pl.load(w, [k * TK, col], [TK, TN]),
                    acc=acc,
                )
            y = pl.add(acc, pl.load(res, [row, col], [TM, TN]))
            return pl.store(y, [row, col], out)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(
            self,
            x: pl.Tensor[[M, K], dtype],
            w: pl.Tensor[[K, N], dtype],
            res: pl.Tensor[[M, N], pl.FP32],
            out: pl.Out[pl.Tensor[[M, N], pl.FP32]],
        ) -> pl.Tensor[[M, N], pl.FP32]:
            with pl.spmd(BLOCKS):
                out = self.kernel(x, w, res, out)
            return out

    return FlagshipGpu


def bf16_bits(values: np.ndarray) -> np.ndarray:
    """float32 -> bf16 bits, rounding to nearest even."""
    bits = values.astype(np.float32).view(np.uint32)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def prepare(out: pathlib.Path, size: int):
    root = pathlib.Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(root / "scripts"))
    import st_bundle

    import blockpipe

    out.mkdir(parents=True, exist_ok=True)
    rt = st_bundle.runtime_build(
        "cuda", pathlib.Path(os.environ.get("BLOCKPIPE_BUILD_DIR", root / "build")).resolve()
    )
    shutil.copy2(__file__, out / "cuda_kernel.py")
    # What run() needs to know, in the bench's own file (the GPU machine has
    # no bindings to read kernel_config.json with).
    (out / "bench.json").write_text(json.dumps({"size": size}))
    for name in DTYPES:
        where = out / name
        compiled = blockpipe.compile(
            make_program(size, name), output_dir=where, target="cuda", quiet=True
        )
        if compiled.library_path.parent != where:
            shutil.copy2(compiled.library_path, where)
    st_bundle.copy_runtime(rt, out, list(out.glob("*/lib*.so")))
    print(f"{out}: run it where the GPU is with: python3 {out}/cuda_kernel.py run {out}")


def ours_ms(bundle: pathlib.Path, name: str, outputs: pathlib.Path) -> float:
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = os.pathsep.join(
        p for p in (str(bundle / "lib"), env.get("LD_LIBRARY_PATH")) if p
    )
    proc = subprocess.run(
        [
            str(bundle / "bin" / "bp-run"),
            str(bundle / name),
            "--inputs",
            str(bundle / name / "inputs.npz"),
            "--outputs",
            str(outputs),
            "--repeat",
            str(CALLS),
            "--resident",
        ],
        capture_output=True,
        text=True,
        env=env,
    )
    if proc.returncode != 0:
        sys.exit(f"cuda_kernel: bp-run failed for {name}: {proc.stderr.strip()}")
    return float(re.search(r"median ([\d.]+) ms", proc.stderr).group(1))


def addmm_ms(res, x, w):
    """The median time of CALLS torch.addmm calls in ms (CUDA events), and
    the last call's result."""
    import torch

    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(CALLS):
        start.record()
        y = torch.addmm(res, x, w)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times), y


def run(bundle: pathlib.Path):
    import torch

    if not torch.cuda.is_available():
        print("cuda_kernel: skipped: torch sees no GPU", file=sys.stderr)
        sys.exit(77)
    size = json.loads((bundle / "bench.json").read_text())["size"]
    for name in DTYPES:
        # Made here: at 4096^3 they are 192 MiB, more than a device run
        # carries.
        rng = np.random.default_rng(0)
        cast = bf16_bits if name == "bf16" else (lambda a: a)
        inputs = {
            "x": cast(rng.standard_normal((size, size), dtype=np.float32)),
            "w": cast(rng.standard_normal((size, size), dtype=np.float32)),
            "res": rng.standard_normal((size, size), dtype=np.float32),
        }
        np.savez(bundle / name / "inputs.npz", **inputs)
        if name == "bf16":

            def to_gpu(a):
                t = (
                    torch.from_numpy(a.view(np.int16)).view(torch.bfloat16)
                    if a.dtype == np.uint16
                    else torch.from_numpy(a).to(torch.bfloat16)
                )
                return t.cuda()
        else:

            def to_gpu(a):
                return torch.from_numpy(a).cuda()

        torch.backends.cuda.matmul.allow_tf32 = False  # exact FP32, as ours without TF32
        x, w, res = to_gpu(inputs["x"]), to_gpu(inputs["w"]), to_gpu(inputs["res"])
        addmm_ms(res, x, w)  # warm-up: cuBLAS picks its kernel
        outputs = bundle / name / "outputs.npz"
        ours, anchors = [], []
        for _ in range(ROUNDS):
            ours.append(ours_ms(bundle, name, outputs))
            ms, reference = addmm_ms(res, x, w)
            anchors.append(ms)
        got = np.load(outputs)["out"]
        want = reference.float().cpu().numpy()
        # Sums of 4096 products: BF16 inputs round to 8 bits of mantissa
        # (torch's y is BF16 too), FP32 ones differ only in the order.
        tolerance = 0.05 * np.sqrt(size) if name == "bf16" else 1e-3 * np.sqrt(size)
        error = float(np.max(np.abs(got - want)))
        flops = 2.0 * size**3
        value = flops / (statistics.median(ours) * 1e-3) / 1e12
        anchor_value = flops / (statistics.median(anchors) * 1e-3) / 1e12
        print(
            json.dumps(
                {
                    "bench": "cuda_kernel",
                    "case": f"flagship {size}^3 {name}",
                    "value": round(value, 2),
                    "unit": "TFLOP/s",
                    "anchor": "torch.addmm (cuBLAS)",
                    "anchor_value": round(anchor_value, 2),
                    "ratio": round(value / anchor_value, 4),
                    "ms": statistics.median(ours),
                    "anchor_ms": statistics.median(anchors),
                    "max_abs_error": error,
                    "correct": bool(error <= tolerance),
                    "device": torch.cuda.get_device_name(),
                }
            ),
            flush=True,
        )
        if error > tolerance:
            sys.exit(f"cuda_kernel: {name}: our y differs from torch's by {error} (> {tolerance})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", choices=("prepare", "run"))
    parser.add_argument("dir", type=pathlib.Path)
    parser.add_argument("--size", type=int, default=SIZE, help="M = N = K (prepare)")
    args = parser.parse_args()
    if args.step == "prepare":
        prepare(args.dir.resolve(), args.size)
    else:
        run(args.dir.resolve())


if __name__ == "__main__":
    main()
