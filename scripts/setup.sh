#!/usr/bin/env bash
# scripts/setup.sh — install what tilec's build needs (Debian packages) and configure the build.
#
# Safe to run twice: packages already present are skipped, an existing build directory is
# reconfigured rather than recreated. Usage:
#   scripts/setup.sh [BUILD_DIR]        (default: build)
# Environment: TILEC_SETUP_EXTRA="pkg ..." adds packages (the sanitizer/fuzz builds use this).
set -euo pipefail

build_dir=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)

packages=(
  g++ ninja-build meson pkg-config
  libboost-dev libboost-graph-dev libboost-container-dev libboost-context-dev
  libfmt-dev libcli11-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libtbb-dev
)
# shellcheck disable=SC2206
packages+=(${TILEC_SETUP_EXTRA:-})

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "setup: all packages present"
fi

cd "$root"
if [ -f "$build_dir/build.ninja" ]; then
  meson setup --reconfigure "$build_dir" >/dev/null
else
  meson setup "$build_dir" --buildtype=debugoptimized >/dev/null
fi
echo "setup: configured $build_dir (build with: ninja -C $build_dir)"
