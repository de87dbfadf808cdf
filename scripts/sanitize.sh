#!/usr/bin/env bash
# Builds the runtime and its tests on their own under AddressSanitizer +
# UndefinedBehaviorSanitizer (build/asan/) and ThreadSanitizer (build/tsan/),
# then runs each build's ctest. Incremental: a build directory is configured
# only when it is new or its flags changed. Fails when any sanitized test
# fails. Usage: scripts/sanitize.sh [asan|tsan]...  (default: both)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

say() { printf '[sanitize] %s\n' "$*" >&2; }
jobs=$(nproc)

declare -A flags=(
  [asan]="-O1 -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
  [tsan]="-O1 -fsanitize=thread"
)
# The tile tests are single-threaded: ThreadSanitizer has nothing to find
# there, and they are the slowest to compile; ASan builds them at -O0
# (BLOCKPIPE_TILE_TEST_FLAGS in tests/unit/runtime/CMakeLists.txt).
declare -A options=(
  [asan]="-DBLOCKPIPE_TILE_TESTS=ON -DBLOCKPIPE_TILE_TEST_FLAGS=-O0"
  [tsan]="-DBLOCKPIPE_TILE_TESTS=OFF"
)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:detect_stack_use_after_return=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}

run() {
  # Line tables only (-g1): enough for the sanitizers' reports to name files
  # and lines, and the tile tests compile in 60% of the time -g takes.
  local debug="-g1"
  local name=$1 dir="build/$1" want="${flags[$1]} ${options[$1]} $debug"
  local stamp="$dir/.sanitize-flags"
  if [ ! -f "$dir/build.ninja" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    say "configuring $dir ($want)"
    # -O1: what the sanitizers recommend, and quick to compile.
    local f="${flags[$name]}"
    cmake -S runtime -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
      -DCMAKE_CXX_FLAGS="$f" -DCMAKE_C_FLAGS="$f" \
      -DCMAKE_EXE_LINKER_FLAGS="$f" -DCMAKE_SHARED_LINKER_FLAGS="$f" \
      -DCMAKE_MODULE_LINKER_FLAGS="$f" ${options[$name]} \
      -DCMAKE_CXX_FLAGS_DEBUG="$debug" -DCMAKE_C_FLAGS_DEBUG="$debug" \
      -DBLOCKPIPE_BUILD_BENCH=OFF >/dev/null
    echo "$want" >"$stamp"
  fi
  # The logs are kept in the build directory; on failure the summary comes
  # first, so that the start of this script's output says what failed.
  say "building $dir (log: $dir/build.log)"
  if ! ninja -C "$dir" -j "$jobs" >"$dir/build.log" 2>&1; then
    say "$name: the build failed"
    grep -E -A20 'error|FAILED' "$dir/build.log" | head -n 200 >&2
    return 1
  fi
  say "testing $dir (log: $dir/test.log)"
  if ! ctest --test-dir "$dir" --output-on-failure -j "$jobs" \
    --no-tests=error --timeout 300 >"$dir/test.log" 2>&1; then
    say "$name: tests failed"
    sed -n '/tests passed/,$p' "$dir/test.log" >&2
    cat "$dir/test.log" >&2
    return 1
  fi
  grep -E 'tests passed|Skipped' "$dir/test.log" >&2
}

targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(asan tsan)
status=0
for target in "${targets[@]}"; do
  case $target in
  asan | tsan) run "$target" || status=1 ;;
  *) say "unknown target '$target' (asan, tsan)"; exit 2 ;;
  esac
done
exit $status
