#!/usr/bin/env bash
# The project's main job: set up, build, verify the example IR with bp-opt,
# and run the flagship example (compile, build, run on the cpu-sim device,
# check against numpy).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/setup.sh"
cd "$root"
for f in examples/ir/*.mlir; do
  echo "// ---- $f (verified by bp-opt)"
  build/bin/bp-opt "$f"
done
.venv/bin/python -m blockpipe run examples/down_proj_residual.py
