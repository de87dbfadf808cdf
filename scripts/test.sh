#!/usr/bin/env bash
# Set up, build, and run every test suite through ctest: lit, gtest, pytest,
# st, golden, e2e, sanitize, fuzz, mpi, package, lint (docs/testing.md).
# Extra arguments go to ctest: `-L quick` runs the subset for while you
# work (a few minutes on a built tree), `-L lit` one suite, `-R NAME` a test.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/setup.sh"
cd "$root"
ctest --test-dir build --output-on-failure -j "$(nproc)" --no-tests=error --label-summary "$@"
