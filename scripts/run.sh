#!/usr/bin/env bash
# The project's main job: set up, build, and run the flagship example.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/setup.sh"
cd "$root"
for f in examples/ir/*.mlir; do
  echo "// ---- $f (verified by bp-opt)"
  build/bin/bp-opt "$f"
done
