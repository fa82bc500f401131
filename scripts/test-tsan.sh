#!/usr/bin/env bash
# scripts/test-tsan.sh — build the runtime tests under ThreadSanitizer and run the runtime suite.
#
# Usage: scripts/test-tsan.sh [BUILD_DIR]   (default: build-tsan)
# Configures a separate build directory with -Db_sanitize=thread (benchmarks off), builds only
# the runtime test executable, and runs `meson test --suite runtime`. Any data race reported by
# TSan fails the test (halt_on_error), so a zero exit status means the executor ran race-free.
set -euo pipefail
build_dir=${1:-build-tsan}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

if [ -f "$build_dir/build.ninja" ]; then
  meson setup --reconfigure "$build_dir" >/dev/null
else
  meson setup "$build_dir" --buildtype=debugoptimized -Db_sanitize=thread -Db_lundef=false \
    -Dbenchmarks=disabled >/dev/null
fi
ninja -C "$build_dir" tests/runtime/runtime_tests
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}"
meson test -C "$build_dir" --suite runtime --print-errorlogs --num-processes 2
