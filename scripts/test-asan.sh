#!/usr/bin/env bash
# scripts/test-asan.sh — build every test suite under AddressSanitizer + UndefinedBehaviorSanitizer
# (gcc) and run it.
#
# Usage: scripts/test-asan.sh [BUILD_DIR]   (default: build-asan)
# Configures a separate build directory with -Db_sanitize=address,undefined (benchmarks off;
# UBSan made fatal with -fno-sanitize-recover), builds the tests and tilec, and runs
# `meson test`. The end-to-end suites run the sanitized tilec binary, so a memory error or
# undefined behaviour anywhere on their paths fails the test that reached it.
set -euo pipefail
build_dir=${1:-build-asan}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

if [ ! -f "$build_dir/build.ninja" ]; then
  meson setup "$build_dir" --buildtype=debugoptimized -Db_sanitize=address,undefined -Db_lundef=false \
    -Dbenchmarks=disabled -Dcpp_args=-fno-sanitize-recover=undefined \
    -Dcpp_link_args=-fno-sanitize-recover=undefined >/dev/null
fi
ninja -C "$build_dir" -j2
# Leaks count as failures; a process that exits early through std::exit may still hold
# allocations, which LeakSanitizer reports, so leak checking stays on deliberately.
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:strict_string_checks=1 ${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1 ${UBSAN_OPTIONS:-}"
meson test -C "$build_dir" --print-errorlogs --num-processes 2 --timeout-multiplier 3
