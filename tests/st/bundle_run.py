"""Runs a bundle of system-test cases with bp-run (scripts/st_bundle.py
writes the bundle; this file is its run.py). Needs Python 3 and numpy only.

    python3 BUNDLE/run.py [--filter TEXT] [--sanitize] [--json FILE]

Each case runs its program with `bp-run` on its inputs and compares the
outputs with what the system test checked: the test's numpy reference with
the test's tolerances, or cpu-sim's result (an output the test did not
compare whole) within the dtype's tolerance below. A case recorded as
failing must fail alike: exit status 1, its message naming the same blocks
and the same file:line places. A case whose program the target cannot run
is SKIP, with the reason. Prints one line per case and a summary; exits 1
when a case failed.
"""

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
# Against cpu-sim's result, by dtype (kernel_config.json's names): float32
# sums may run in another order on another target; 16-bit floats round at
# every step. Other dtypes compare exactly.
TOLERANCE = {
    "fp32": (1e-5, 1e-5),
    "fp16": (1e-2, 1e-2),
    "bf16": (2e-2, 2e-2),
}


def as_float(array, dtype_name):
    """bp-run writes bf16 as the uint16 bits; those as float32."""
    if dtype_name == "bf16":
        return (array.astype(np.uint32) << 16).view(np.float32)
    return array


def run_case(directory, bp_run, env, sanitize, device):
    case = json.loads((directory / "case.json").read_text())
    name = case["name"]
    if case.get("skip"):
        return "SKIP", name, case["skip"]
    program = HERE / case["program"]
    dtypes = case["dtypes"]
    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(tmp) / "outputs.npz"
        command = [
            str(bp_run),
            str(program),
            "--entry",
            case["entry"],
            "--inputs",
            str(directory / "inputs.npz"),
            "--outputs",
            str(out),
            "--target",
            device,
        ]
        for scalar, value in case["scalars"].items():
            command += [
                "--scalar",
                f"{scalar}={value!r}" if isinstance(value, float) else f"{scalar}={value}",
            ]
        if sanitize:
            command.append("--sanitize")
        start = time.monotonic()
        proc = subprocess.run(command, capture_output=True, text=True, env=env)
        seconds = time.monotonic() - start
        if "error" in case:
            want = case["error"]
            if proc.returncode != 1:
                return (
                    "FAIL",
                    name,
                    f"expected a failed run (exit 1), got exit {proc.returncode}: {proc.stderr.strip()}",
                )
            missing = [t for t in want["blocks"] + want["places"] if t not in proc.stderr]
            if missing:
                return (
                    "FAIL",
                    name,
                    f"the error does not name {', '.join(missing)}: {proc.stderr.strip()}",
                )
            return (
                "PASS",
                name,
                f"failed as expected ({seconds:.2f} s): {proc.stderr.strip().splitlines()[0]}",
            )
        if proc.returncode != 0:
            return "FAIL", name, f"bp-run exit {proc.returncode}: {proc.stderr.strip()}"
        outputs = np.load(out)
        expected = np.load(directory / "expected.npz")
        details = []
        for output, check in case["checks"].items():
            got = as_float(outputs[output], dtypes.get(output)).astype(np.float64)
            want = expected[output].astype(np.float64)
            if check["against"] == "numpy":
                rtol, atol = check["rtol"], check["atol"]
            else:
                rtol, atol = TOLERANCE.get(str(dtypes.get(output)), (0.0, 0.0))
            if got.shape != want.shape:
                return "FAIL", name, f"'{output}' has shape {got.shape}, expected {want.shape}"
            bad = ~np.isclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
            if bad.any():
                first = tuple(int(i) for i in np.argwhere(bad)[0])
                return (
                    "FAIL",
                    name,
                    (
                        f"'{output}' differs from {check['against']} at {bad.sum()} of "
                        f"{bad.size} elements (rtol {rtol}, atol {atol}); first at {first}: "
                        f"{got[first]} vs {want[first]}"
                    ),
                )
            details.append(f"{output} vs {check['against']}")
        return "PASS", name, f"{seconds:.2f} s; " + ", ".join(details)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--filter", default="", help="only cases whose name contains this")
    parser.add_argument("--sanitize", action="store_true", help="run with bp-run --sanitize")
    parser.add_argument("--json", help="also write the results here, one object per case")
    args = parser.parse_args()

    bp_run = HERE / "bin" / "bp-run"
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = os.pathsep.join(
        p for p in (str(HERE / "lib"), env.get("LD_LIBRARY_PATH")) if p
    )
    target = (HERE / "target").read_text().strip()
    # The device kind the programs were built for (cuda-emu: the CPU
    # emulation of CUDA); bundles without the file ran on their target.
    device_file = HERE / "device"
    device = device_file.read_text().strip() if device_file.is_file() else target
    cases = sorted(p for p in (HERE / "cases").iterdir() if (p / "case.json").is_file())
    cases = [c for c in cases if args.filter in c.name]
    print(f"{len(cases)} cases for target {target} on {device}")
    results = []
    for directory in cases:
        status, name, detail = run_case(directory, bp_run, env, args.sanitize, device)
        results.append({"status": status, "case": name, "detail": detail})
        print(f"{status} {name}: {detail}", flush=True)
    counts = {s: sum(r["status"] == s for r in results) for s in ("PASS", "FAIL", "SKIP")}
    print(
        f"{counts['PASS']} passed, {counts['FAIL']} failed, {counts['SKIP']} skipped "
        f"(target {target} on {device})"
    )
    if args.json:
        pathlib.Path(args.json).write_text("\n".join(json.dumps(r) for r in results) + "\n")
    return 1 if counts["FAIL"] or not results else 0


if __name__ == "__main__":
    sys.exit(main())
