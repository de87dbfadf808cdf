#!/usr/bin/env bash
# Formats the tree: ruff for the Python (lint fixes, then the formatter) and
# clang-format for the C++ and CUDA. With --check it changes nothing, lists
# each file that is not formatted or has lint findings, and fails if any is.
# `ctest -L lint` runs the checks one tool at a time.
#
# Usage: scripts/format.sh [--check] [--only TOOL]... [PATH...]
#   --check      check only; exit 1 listing the offending files
#   --only TOOL  run only TOOL: ruff-check, ruff-format or clang-format
#                (repeatable; default all three)
#   PATH         files to format or check instead of the tree's (the gate's
#                own test passes files of its own); .py files go to ruff,
#                C++ and CUDA files to clang-format
#
# The tools are pinned, so that the result does not depend on the machine:
# ruff at the version requirements.txt names (found as $RUFF, .venv/bin/ruff
# or on PATH), clang-format at major version 14, Debian 12's (found as
# $CLANG_FORMAT, clang-format-14 or clang-format).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

clang_format_major=14
cpp_extensions=(cpp h hpp cc cu cuh)

say() { printf '[format] %s\n' "$*" >&2; }
die() {
  say "$*"
  exit 2
}

# The C++ and CUDA files of the tree: every file with a C++ extension under
# the source folders, except build folders and the golden tests' expected
# outputs (generated code compared byte for byte, not clang-formatted). The
# Python files are the ones pyproject.toml's [tool.ruff] includes: ruff finds
# them from ".".
cpp_files() {
  local names=() ext
  for ext in "${cpp_extensions[@]}"; do names+=(-o -name "*.$ext"); done
  find compiler codegen runtime python tests bench examples \
    \( -type d \( -name 'build*' -o -name .venv -o -name __pycache__ \) -prune \) -o \
    \( -path 'tests/golden/*/expected' -prune \) -o \
    \( -type f \( "${names[@]:1}" \) -print \) | LC_ALL=C sort
}

is_cpp() {
  local ext
  for ext in "${cpp_extensions[@]}"; do [[ $1 == *."$ext" ]] && return 0; done
  return 1
}

check=0
tools=()
paths=()
while [ $# -gt 0 ]; do
  case $1 in
  --check) check=1 ;;
  --only)
    [ $# -ge 2 ] || die "--only needs a tool: ruff-check, ruff-format or clang-format"
    case $2 in
    ruff-check | ruff-format | clang-format) tools+=("$2") ;;
    *) die "unknown tool '$2': ruff-check, ruff-format or clang-format" ;;
    esac
    shift
    ;;
  -h | --help)
    sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
    exit 0
    ;;
  -*) die "unknown option '$1' (see --help)" ;;
  /*) paths+=("$1") ;;
  *) paths+=("$PWD/$1") ;;
  esac
  shift
done
cd "$root"
[ ${#tools[@]} -gt 0 ] || tools=(ruff-check ruff-format clang-format)
wants() {
  local t
  for t in "${tools[@]}"; do [ "$t" = "$1" ] && return 0; done
  return 1
}

# What each tool runs on: the tree's files, or the given paths sorted by kind.
python_targets=(.)
cpp_targets=()
if [ ${#paths[@]} -gt 0 ]; then
  python_targets=()
  for p in "${paths[@]}"; do
    [ -f "$p" ] || die "no such file: $p"
    if [[ $p == *.py ]]; then
      python_targets+=("$p")
    elif is_cpp "$p"; then
      cpp_targets+=("$p")
    else
      die "neither Python nor C++: $p"
    fi
  done
else
  mapfile -t cpp_targets < <(cpp_files)
fi

find_ruff() {
  local want ruff version
  want=$(sed -n 's/^ruff==\([^ ;]*\).*/\1/p' requirements.txt)
  [ -n "$want" ] || die "requirements.txt pins no ruff version (ruff==X)"
  for ruff in "${RUFF:-}" .venv/bin/ruff "$(command -v ruff || true)"; do
    [ -n "$ruff" ] && [ -x "$ruff" ] || continue
    version=$("$ruff" --version | awk '{print $2}')
    [ "$version" = "$want" ] && { echo "$ruff"; return; }
    say "skipping $ruff: version $version, requirements.txt pins $want"
  done
  die "ruff $want not found: run scripts/setup.sh, or" \
    ".venv/bin/python -m pip install ruff==$want"
}

find_clang_format() {
  local cf major
  for cf in "${CLANG_FORMAT:-}" "$(command -v clang-format-$clang_format_major || true)" \
    "$(command -v clang-format || true)"; do
    [ -n "$cf" ] && [ -x "$cf" ] || continue
    major=$("$cf" --version | sed -n 's/.*clang-format version \([0-9]*\).*/\1/p')
    [ "$major" = "$clang_format_major" ] && { echo "$cf"; return; }
    say "skipping $cf: version $major, the tree is kept with $clang_format_major"
  done
  die "clang-format $clang_format_major not found: install Debian's clang-format" \
    "package (scripts/setup.sh does)"
}

# --config: the project's settings also for files outside the tree.
ruff_args=(--config "$root/pyproject.toml")
failed=()

if [ ${#python_targets[@]} -gt 0 ] && { wants ruff-check || wants ruff-format; }; then
  ruff=$(find_ruff)
  if [ $check = 0 ]; then
    fix=(--fix)
    format=()
  else
    fix=(--no-fix)
    format=(--check)
  fi
  # Lint first: a fix can leave code the formatter changes. ruff lists the
  # findings it did not fix, and with --check the files it would reformat.
  if wants ruff-check && ! "$ruff" check "${ruff_args[@]}" "${fix[@]}" \
    --output-format concise "${python_targets[@]}"; then
    failed+=(ruff-check)
  fi
  if wants ruff-format && ! "$ruff" format "${ruff_args[@]}" "${format[@]}" \
    "${python_targets[@]}"; then
    failed+=(ruff-format)
  fi
fi

if [ ${#cpp_targets[@]} -gt 0 ] && wants clang-format; then
  clang_format=$(find_clang_format)
  # The repository's .clang-format, also for files outside the tree.
  style=(--style="file:$root/.clang-format")
  if [ $check = 0 ]; then
    printf '%s\0' "${cpp_targets[@]}" | xargs -0 -n 32 -P "$(nproc)" \
      "$clang_format" "${style[@]}" -i
  else
    # --dry-run -Werror fails a file that would change; list those files.
    mapfile -t unformatted < <(printf '%s\0' "${cpp_targets[@]}" |
      xargs -0 -n 1 -P "$(nproc)" sh -c \
        '"$1" "$2" --dry-run -Werror "$3" >/dev/null 2>&1 || echo "$3"' \
        sh "$clang_format" "${style[0]}" | LC_ALL=C sort)
    if [ ${#unformatted[@]} -gt 0 ]; then
      printf 'Would reformat: %s\n' "${unformatted[@]}"
      say "${#unformatted[@]} of ${#cpp_targets[@]} C++ files need clang-format" \
        "(scripts/format.sh fixes them)"
      failed+=(clang-format)
    fi
  fi
fi

if [ ${#failed[@]} -gt 0 ]; then
  say "failed: ${failed[*]}"
  exit 1
fi
