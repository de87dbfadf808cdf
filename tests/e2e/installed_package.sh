#!/usr/bin/env bash
# `cmake --install` of blockpipe provides the package generated projects use:
# installs the build tree into a fresh prefix, then builds and runs a golden
# case against that prefix (find_package(blockpipe) through
# <prefix>/lib/cmake/blockpipe) and checks the library links the installed
# runtime.
# Usage: installed_package.sh BUILD_DIR CASE_DIR WORK CXX
set -euo pipefail
build=$1 case_dir=$2 work=$3 cxx=$4
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
rm -rf "$work"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
test -f "$work/prefix/lib/cmake/blockpipe/blockpipeConfig.cmake"
bash "$here/build_and_run.sh" "$case_dir/expected" "$case_dir/host.cpp" \
  "$work/project" "$cxx" "$work/prefix/lib/cmake/blockpipe"
library=$(find "$work/project" -maxdepth 1 -name 'lib*.so' | head -n1)
# Capture first: `ldd | grep -q` under pipefail fails at random when grep
# exits early and ldd dies of SIGPIPE.
deps=$(ldd "$library")
if ! grep -qF "$work/prefix/lib/libblockpipe_runtime.so" <<<"$deps"; then
  echo "error: $library does not link the installed runtime:" >&2
  echo "$deps" >&2
  exit 1
fi
echo "links $work/prefix/lib/libblockpipe_runtime.so"
