#!/usr/bin/env bash
# Brings a Debian 12 machine to a built tree: Debian packages, the project's
# virtual environment (.venv/) and the CMake build (build/). Idempotent: with
# nothing changed it only runs an up-to-date ninja.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

say() { printf '[setup] %s\n' "$*" >&2; }

apt_packages=(
  cmake ninja-build ccache g++ clang clang-19 libclang-rt-19-dev
  llvm-19-dev llvm-19-tools libmlir-19-dev mlir-19-tools
  nlohmann-json3-dev libgtest-dev libgmock-dev libbenchmark-dev
  libopenmpi-dev openmpi-bin zlib1g-dev
  # Debian 12's clang-format (14): the C++ half of the lint gate,
  # scripts/format.sh, which wants that version.
  clang-format
)
python_bin=$(command -v python3 || true)
# Debian's own interpreter needs its venv and header packages; others (e.g. a
# pyenv build) ship both.
if [ -z "$python_bin" ] || [ "$(readlink -f "$python_bin")" = /usr/bin/python3.11 ]; then
  apt_packages+=(python3 python3-venv python3-dev)
fi

missing=()
for p in "${apt_packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [ "$status" = "install ok installed" ] || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  say "installing Debian packages: ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq \
    --no-install-recommends "${missing[@]}" >/dev/null
fi

python_bin=$(command -v python3)
if [ ! -x .venv/bin/python ]; then
  say "creating .venv from $python_bin"
  "$python_bin" -m venv .venv
fi
req_hash=$(sha256sum requirements.txt | cut -d' ' -f1)
if [ "$(cat .venv/.requirements.sha256 2>/dev/null)" != "$req_hash" ]; then
  say "installing Python packages into .venv"
  .venv/bin/python -m pip install -q --disable-pip-version-check -r requirements.txt
  echo "$req_hash" > .venv/.requirements.sha256
fi
# The package is used from the source tree (an editable install by path), with
# the extension module built into it by CMake.
site=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
echo "$root/python" > "$site/blockpipe.pth"

if [ ! -f build/build.ninja ]; then
  say "configuring build/"
  cmake -S . -B build -G Ninja \
    -DPython_EXECUTABLE="$root/.venv/bin/python" \
    -Dpybind11_DIR="$(.venv/bin/python -m pybind11 --cmakedir)" >/dev/null
fi
say "building"
ninja -C build
