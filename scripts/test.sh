#!/usr/bin/env bash
# scripts/test.sh — build tilec and run every test suite (README's test command).
#
# Usage: scripts/test.sh [BUILD_DIR]   (default: build)
# Installs missing packages and configures through scripts/setup.sh, builds with ninja, runs
# `meson test`, then the runtime suite again under ThreadSanitizer (scripts/test-tsan.sh). It
# closes with one line "N passed, N failed, N skipped" counting them all. The fuzz corpora and
# regressions are replayed by the normal suite (tests/fuzz, suite fuzz). The whole suite under
# ASan + UBSan and the fuzz targets are CI's second stage, scripts/test-sanitizers.sh (.ci/run).
set -uo pipefail
build_dir=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

scripts/setup.sh "$build_dir" || exit 1
ninja -C "$build_dir" || exit 1

log="$build_dir/meson-logs/testlog.txt"
meson test -C "$build_dir" --print-errorlogs --num-processes 2
status=$?
# meson's own summary is "Ok: N / Fail: N / Skipped: N"; restate it in the plain form.
summary=$(grep -E '^(Ok|Fail|Skipped|Timeout|Expected Fail|Unexpected Pass):' "$log" 2>/dev/null || true)
ok=$(awk -F: '/^Ok:/{gsub(/ /,"",$2);print $2}' <<<"$summary"); ok=${ok:-0}
fail=$(awk -F: '/^(Fail|Timeout|Unexpected Pass):/{gsub(/ /,"",$2);s+=$2}END{print s+0}' <<<"$summary")
skip=$(awk -F: '/^Skipped:/{gsub(/ /,"",$2);print $2}' <<<"$summary"); skip=${skip:-0}

# The executor's tests again under ThreadSanitizer, in their own build directory.
tsan_status=0
scripts/test-tsan.sh "${build_dir}-tsan" || tsan_status=$?
tsan_log="${build_dir}-tsan/meson-logs/testlog.txt"
tsan_ok=$(awk -F: '/^Ok:/{gsub(/ /,"",$2);print $2}' "$tsan_log" 2>/dev/null); tsan_ok=${tsan_ok:-0}
ok=$((ok + tsan_ok))
if [ "$tsan_status" -ne 0 ]; then fail=$((fail + 1)); status=1; fi

echo "tests: $ok passed, $fail failed, $skip skipped"
exit $status
