#!/usr/bin/env bash
# Negative control for the central bug: take the no_block_idx golden output,
# remove the wrappers' `block_idx * per_block_bytes` offset, and check that
# the run fails with the sanitizer's slice violation. This proves the e2e
# tests would notice an unsliced pipe buffer.
# Usage: unsliced_is_caught.sh CASE_DIR WORK CXX BLOCKPIPE_DIR
set -uo pipefail
case_dir=$1 work=$2 cxx=$3 blockpipe_dir=$4
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
rm -rf "$work"
mkdir -p "$work"
cp -r "$case_dir/expected" "$work/project"
sed -i 's/ + static_cast<int64_t>(bp_ctx->block_idx) \* [0-9]*;/;/' \
  "$work"/project/kernels/*/*.cpp
if grep -q 'block_idx) \*' "$work"/project/kernels/*/*.cpp; then
  echo "could not remove the pipe buffer offset" >&2
  exit 1
fi
# The pipe checks alone: the case's blocks all write one place on purpose.
output=$(bash "$here/build_and_run.sh" "$work/project" "$case_dir/host.cpp" \
  "$work/build" "$cxx" "$blockpipe_dir" pipes 2>&1)
status=$?
if [ $status -eq 0 ] || ! grep -q "sanitizer" <<<"$output"; then
  echo "$output" >&2
  echo "an unsliced pipe buffer was not caught" >&2
  exit 1
fi
echo "caught: $(grep -o 'sanitizer:.*' <<<"$output" | head -n1)"
