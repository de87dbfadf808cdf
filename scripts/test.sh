#!/usr/bin/env bash
# Set up, build, and run every test suite (lit, GoogleTest, pytest, and the
# sanitizer builds of the runtime) through ctest.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/setup.sh"
cd "$root"
ctest --test-dir build --output-on-failure -j "$(nproc)" --no-tests=error --label-summary "$@"
