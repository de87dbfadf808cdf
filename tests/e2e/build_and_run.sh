#!/usr/bin/env bash
# Builds a generated project (a golden case's expected/ directory, or any
# output of bp-translate) with its own CMakeLists.txt and the case's host
# program, warnings as errors, then runs it on the cpu-sim runtime with the
# pipe sanitizer on.
# Usage: build_and_run.sh PROJECT_DIR HOST_CPP WORK CXX BLOCKPIPE_DIR [SANITIZE]
# (SANITIZE: BLOCKPIPE_SANITIZE's value, 1 by default; "pipes" for a case
# whose blocks write one place on purpose.)
set -euo pipefail
project=$1 host=$2 work=$3 cxx=$4 blockpipe_dir=$5 sanitize=${6:-1}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
rm -rf "$work"
cmake -S "$project" -B "$work" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_COMPILER="$cxx" \
  -DCMAKE_CXX_FLAGS="-Wall -Wextra -Werror -I$here" \
  -Dblockpipe_DIR="$blockpipe_dir" \
  -DBLOCKPIPE_HOST_SOURCES="$host" >/dev/null
ninja -C "$work" -j1
host_exe=$(find "$work" -maxdepth 1 -name '*_host' -type f | head -n1)
BLOCKPIPE_SANITIZE=$sanitize "$host_exe"
