#!/usr/bin/env bash
# Builds a generated project for the cuda target (a golden case's expected/
# directory, or any output of bp-translate --bp-target=cuda) with its own
# CMakeLists.txt: nvcc for the kernels, for sm_90 and its PTX, every warning
# an error on the host and device side.
# Usage: build_cuda.sh PROJECT_DIR WORK NVCC BLOCKPIPE_DIR
set -euo pipefail
project=$1 work=$2 nvcc=$3 blockpipe_dir=$4
rm -rf "$work"
cmake -S "$project" -B "$work" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CUDA_COMPILER="$nvcc" \
  -DCMAKE_CXX_FLAGS="-Wall -Wextra -Werror" \
  -DCMAKE_CUDA_FLAGS="-Werror=all-warnings -Xcompiler=-Wall,-Wextra,-Werror" \
  -Dblockpipe_DIR="$blockpipe_dir" >/dev/null
ninja -C "$work" -j1
# The library exports the launchers' table.
library=$(find "$work" -maxdepth 1 -name 'lib*.so' -type f | head -n1)
nm -D --defined-only "$library" | grep -q ' bp_cuda_kernel_table$'
