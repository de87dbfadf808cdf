#!/usr/bin/env bash
# Regenerates the expected output of golden cases for review:
#   tests/golden/regenerate.sh              # every case
#   tests/golden/regenerate.sh mixed_static # some cases
# Each case is <case>/input.mlir; its expected/ directory is what
#   bp-translate --bp-to-cpp --bp-default-pipeline [flags] -o <case>/expected input.mlir
# writes, with the options in <case>/flags if it has one (--bp-target=cuda).
# Review the change with `git diff tests/golden` before committing.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
translate=${BP_TRANSLATE:-$here/../../build/bin/bp-translate}
cases=("$@")
if [ ${#cases[@]} -eq 0 ]; then
  for input in "$here"/*/input.mlir; do
    cases+=("$(basename "$(dirname "$input")")")
  done
fi
for case in "${cases[@]}"; do
  rm -rf "$here/$case/expected"
  flags=()
  if [ -f "$here/$case/flags" ]; then read -r -a flags < "$here/$case/flags"; fi
  "$translate" --bp-to-cpp --bp-default-pipeline "${flags[@]}" \
    -o "$here/$case/expected" "$here/$case/input.mlir"
  echo "regenerated $case"
done
