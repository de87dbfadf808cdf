#!/usr/bin/env bash
# One golden test: translate <case>/input.mlir into <work> and compare it
# byte for byte with <case>/expected. Usage: check.sh BP_TRANSLATE CASE WORK
set -euo pipefail
translate=$1 case=$2 work=$3
rm -rf "$work"
# A case's `flags` file (e.g. --bp-target=cuda) adds options.
flags=()
if [ -f "$case/flags" ]; then read -r -a flags < "$case/flags"; fi
"$translate" --bp-to-cpp --bp-default-pipeline "${flags[@]}" -o "$work" \
  "$case/input.mlir"
if ! diff -r -u "$case/expected" "$work"; then
  echo "golden mismatch for $(basename "$case"); if intended, run" \
       "tests/golden/regenerate.sh $(basename "$case") and review the diff" >&2
  exit 1
fi
