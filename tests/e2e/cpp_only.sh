#!/usr/bin/env bash
# The C++ path with no Python: IR file -> bp-opt default pipeline ->
# bp-translate -> cmake build -> a host program runs it on cpu-sim (sanitizer
# on) and checks the numbers.
# Usage: cpp_only.sh BIN_DIR INPUT HOST_CPP WORK CXX BLOCKPIPE_DIR
set -euo pipefail
bin=$1 input=$2 host=$3 work=$4 cxx=$5 blockpipe_dir=$6
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
rm -rf "$work"
mkdir -p "$work"
"$bin/bp-opt" --bp-default-pipeline "$input" -o "$work/lowered.mlir"
"$bin/bp-translate" --bp-to-cpp -o "$work/project" "$work/lowered.mlir"
bash "$here/build_and_run.sh" "$work/project" "$host" "$work/build" "$cxx" \
  "$blockpipe_dir"
