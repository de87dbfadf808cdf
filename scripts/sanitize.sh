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
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:detect_stack_use_after_return=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}

run() {
  local name=$1 dir="build/$1" want="${flags[$1]}"
  local stamp="$dir/.sanitize-flags"
  if [ ! -f "$dir/build.ninja" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    say "configuring $dir ($want)"
    # -O1 -g: what the sanitizers recommend, and quick to compile.
    cmake -S runtime -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
      -DCMAKE_CXX_FLAGS="$want" -DCMAKE_C_FLAGS="$want" \
      -DCMAKE_EXE_LINKER_FLAGS="$want" -DCMAKE_SHARED_LINKER_FLAGS="$want" \
      -DCMAKE_MODULE_LINKER_FLAGS="$want" \
      -DBLOCKPIPE_BUILD_BENCH=OFF >/dev/null
    echo "$want" >"$stamp"
  fi
  say "building $dir"
  ninja -C "$dir" -j "$jobs"
  say "testing $dir"
  ctest --test-dir "$dir" --output-on-failure -j "$jobs" --no-tests=error \
    --timeout 300
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
