#!/usr/bin/env bash
# `pip install .` into a fresh virtual environment gives a working blockpipe
# with no reference to the source tree: the package imports from the
# environment, examples compile, build (against the CMake package installed
# inside it) and match numpy, the command line and the tools run, and the
# programs it builds link the installed runtime.
# Usage: pip_install.sh SOURCE_DIR WORK PYTHON [BUILD_DIR [BUILD_TYPE [NAME=VALUE...]]]
#   BUILD_DIR: the package's CMake build directory (default WORK/build), kept
#   between runs; BUILD_TYPE replaces the package's Release, and NAME=VALUE
#   are CMake definitions (ctest gives the main build's type, compilers and
#   pybind11, so that ccache finds the same compiles there).
set -euo pipefail
src=$1 work=$2 python=$3 build=${4:-$2/build}
settings=(--config-settings=build-dir="$build")
[ -z "${5:-}" ] || settings+=(--config-settings=cmake.build-type="$5")
for define in "${@:6}"; do
  settings+=(--config-settings=cmake.define."$define")
done
venv=$work/venv
rm -rf "$venv" "$work/run" "$work/cache"
mkdir -p "$work/run"
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check \
  "${settings[@]}" "$src"

cd "$work/run"  # outside the source tree
export BLOCKPIPE_CACHE_DIR=$work/cache BLOCKPIPE_QUIET=1
unset PYTHONPATH BLOCKPIPE_BUILD_DIR
"$venv/bin/python" - "$venv" <<'PY'
import pathlib, sys
import blockpipe
from blockpipe import build
venv = pathlib.Path(sys.argv[1]).resolve()
for path in (pathlib.Path(blockpipe.__file__), build.runtime_location().cmake):
    assert venv in path.resolve().parents, f"{path} is not inside {venv}"
print("imports", blockpipe.__file__)
PY
"$venv/bin/python" -m blockpipe run "$src/examples/spmd_add.py"
"$venv/bin/python" "$src/examples/row_softmax.py"
"$venv/bin/blockpipe" compile "$src/examples/down_proj_residual.py" -o flagship
test -f flagship/kernel_config.json
"$venv/bin/bp-opt" "$src/examples/ir/two_stage_pipeline.mlir" >/dev/null
"$venv/bin/bp-translate" --help >/dev/null

library=$(find "$work/cache/builds" -name 'lib*.so' | head -n1)
deps=$(ldd "$library")
if ! grep -qF "$venv/" <<<"$deps"; then
  echo "error: $library does not link the runtime installed in $venv:" >&2
  echo "$deps" >&2
  exit 1
fi
echo "OK pip install"
