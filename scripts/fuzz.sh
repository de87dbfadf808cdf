#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz/ with clang in build-fuzz/ and
# runs each for a while from a seed corpus made of the project's own inputs:
#   device_spec  DeviceSpec::fromJson   runtime/specs/*.json,
#                                       tests/lit/**/Inputs/*.json
#   manifest     parseManifest          tests/golden/*/expected/kernel_config.json
#   bp_opt       parse + verify + the   tests/lit/**/*.mlir, split at
#                default pipeline       `// -----`, comment lines dropped
# Dictionaries come from the same inputs and from the parsers' sources.
# Prints each target's number of executed inputs; fails when a target
# crashes, leaks, hangs or runs out of memory, leaving the input under
# build-fuzz/artifacts/<target>/ (replay it with
# `build-fuzz/bin/<target>_fuzzer FILE`). New coverage accumulates in
# build-fuzz/corpus/<target>/ from run to run.
#
# Usage: scripts/fuzz.sh [--build-only | --no-build] [SECONDS] [TARGET...]
#   SECONDS per target, 60 by default; every target by default.
#   CXX=clang++-NN picks the compiler (default clang++-19, else clang++).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

say() { printf '[fuzz] %s\n' "$*" >&2; }
all_targets=(device_spec manifest bp_opt)
dir=build-fuzz

build=1
run=1
case ${1:-} in
--build-only) run=0; shift ;;
--no-build) build=0; shift ;;
esac
seconds=60
if [ $# -gt 0 ] && [[ $1 =~ ^[0-9]+$ ]]; then
  seconds=$1
  shift
fi
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${all_targets[@]}")
for target in "${targets[@]}"; do
  case " ${all_targets[*]} " in
  *" $target "*) ;;
  *) say "unknown target '$target' (${all_targets[*]})"; exit 2 ;;
  esac
done

# -- build ------------------------------------------------------------------

if [ "$build" = 1 ]; then
  cxx=${CXX:-$(command -v clang++-19 || command -v clang++ || true)}
  [ -n "$cxx" ] || { say "no clang++ found (apt-get install clang-19 libclang-rt-19-dev)"; exit 1; }
  cc=${cxx/clang++/clang}
  # Coverage instrumentation (fuzzer-no-link) and ASan + UBSan for every
  # source this build compiles: the project's, never MLIR's. -O1 -g1: what
  # the sanitizers recommend, and quick to compile.
  flags="-O1 -gline-tables-only -fno-omit-frame-pointer"
  flags+=" -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined"
  want="$cxx $flags"
  stamp=$dir/.fuzz-config
  if [ ! -f "$dir/build.ninja" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    say "configuring $dir ($want)"
    rm -rf "$dir/CMakeCache.txt" "$dir/CMakeFiles"
    cmake -S tests/fuzz -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE= \
      -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_C_COMPILER="$cc" \
      -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_C_FLAGS="$flags" \
      -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
    echo "$want" >"$stamp"
  fi
  say "building $dir"
  ninja -C "$dir" -j "$(nproc)" "${targets[@]/%/_fuzzer}"
fi
[ "$run" = 1 ] || exit 0

# -- seeds and dictionaries ----------------------------------------------------

# `"key"` tokens for a JSON dictionary: every string in the inputs and every
# string literal of the parser's sources (field names, enum spellings).
json_dict() {
  {
    printf '%s\n' '"{"' '"}"' '"["' '"]"' '":"' '","' '"null"' '"true"' \
      '"false"' '"-1"' '"0"' '"1e999"' '"18446744073709551616"'
    grep -ohE '"[A-Za-z_][A-Za-z0-9_.:-]*"' "$@" | sort -u |
      sed 's/"/\\"/g; s/^/"/; s/$/"/'
  }
}

# Seeds: what the target is fed first; rewritten from the sources each run.
seed_device_spec() {
  cp runtime/specs/*.json "$1/"
  find tests/lit -path '*/Inputs/*.json' -exec cp {} "$1/" \;
  json_dict "$1"/*.json runtime/lib/Target/DeviceSpec.cpp >"$2"
}

seed_manifest() {
  for config in tests/golden/*/expected/kernel_config.json; do
    cp "$config" "$1/$(basename "$(dirname "$(dirname "$config")")").json"
  done
  json_dict "$1"/*.json runtime/lib/Target/Manifest.cpp \
    runtime/lib/Target/ManifestReader.h \
    runtime/lib/Target/ManifestSections.cpp \
    runtime/lib/Target/DeviceSpec.cpp runtime/include/blockpipe/Target/DType.h \
    >"$2"
}

seed_bp_opt() {
  local file name
  while read -r file; do
    name=${file#tests/lit/}
    # One seed per `// -----` chunk, without the RUN/CHECK/expected-error
    # comment lines the fuzzer would only waste mutations on.
    awk -v out="$1/${name//\//_}" '
      /^\/\/ -----/ { n++; next }
      /^[ \t]*\/\// { next }
      NF { print > (out "." n) }' n=0 "$file"
  done < <(find tests/lit -name '*.mlir' | sort)
  {
    printf '%s\n' '"->"' '": "' '"%"' '"@"' '"<"' '">"' '"{"' '"}"' '"("' \
      '")"' '"["' '"]"' '"!bp."' '"#bp<"' '"#bp."' '"?x"' '"0x"' '"dense<"'
    # Sizes at the edges of int32 and int64, where size arithmetic breaks.
    printf '%s\n' -1 0 2147483647 2147483648 4294967296 4611686018427387904 \
      9223372036854775807 9223372036854775808 -9223372036854775808
    # Identifiers of the seeds (op names, types, attributes, keywords) and
    # the dialect's op names and assembly keywords.
    cat "$1"/* | grep -ohE '[!#]?[A-Za-z_][A-Za-z0-9_.$]*' | sort -u
    grep -ohE 'BP_Op<"[a-z_0-9]+"' compiler/include/blockpipe/Dialect/*.td |
      sed -E 's/BP_Op<"(.*)"/bp.\1/'
    grep -ohE '`[a-z_0-9]+`' compiler/include/blockpipe/Dialect/*.td | tr -d '`'
  } | sort -u | sed -E 's/^"(.*)"$/\1/; s/"/\\"/g; s/^/"/; s/$/"/' >"$2"
}

# -- runs ------------------------------------------------------------------------

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

status=0
summary=()
for target in "${targets[@]}"; do
  bin=$dir/bin/${target}_fuzzer
  [ -x "$bin" ] || { say "$bin is not built (run scripts/fuzz.sh --build-only)"; exit 1; }
  seeds=$dir/seeds/$target
  corpus=$dir/corpus/$target
  artifacts=$dir/artifacts/$target
  dict=$dir/dicts/$target.dict
  log=$dir/logs/$target.log
  rm -rf "$seeds"
  mkdir -p "$seeds" "$corpus" "$artifacts" "$dir/dicts" "$dir/logs"
  "seed_$target" "$seeds" "$dict"
  say "$target: ${seconds}s from $(ls "$seeds" | wc -l) seeds, $(ls "$corpus" | wc -l) corpus inputs, $(wc -l <"$dict") dictionary tokens"
  # rss_limit_mb: two fuzzers (ctest -j2) at 4 GiB each leave most of a
  # 24 GiB machine; an input needing more is a bug (an OOM report).
  rc=0
  "$bin" -max_total_time="$seconds" -rss_limit_mb=4096 -timeout=30 \
    -print_final_stats=1 -dict="$dict" -artifact_prefix="$artifacts/" \
    "$corpus" "$seeds" >"$log" 2>&1 || rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  if [ "$rc" = 0 ]; then
    summary+=("$target: ${execs:-?} executions in ${seconds}s, no crash")
  else
    status=1
    tail -n 80 "$log" >&2
    summary+=("$target: FAILED (exit $rc) after ${execs:-?} executions; input in $artifacts/, log $log")
  fi
  say "${summary[-1]}"
done
say "summary:"
printf '  %s\n' "${summary[@]}" >&2
exit $status
