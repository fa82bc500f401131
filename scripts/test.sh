#!/usr/bin/env bash
# scripts/test.sh — build tilec and run every test suite (README's test command).
#
# Usage: scripts/test.sh [BUILD_DIR]   (default: build)
# Installs missing packages and configures through scripts/setup.sh, builds with ninja, runs
# `meson test`, then the runtime suite again under ThreadSanitizer (scripts/test-tsan.sh); the
# fuzz targets run for TILEC_FUZZ_SECONDS each when it is set above 0 (scripts/fuzz.sh), the
# whole suite under ASan + UBSan when TILEC_TEST_ASAN=1 (scripts/test-asan.sh). It closes with
# one line "N passed, N failed, N skipped" counting them all. The fuzz corpora and regressions
# are replayed by the normal suite (tests/fuzz, suite fuzz-replay) either way.
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

# The four fuzz targets (clang, ASan + UBSan), TILEC_FUZZ_SECONDS each; opt-in (default 0)
# because their cold clang build adds about ten minutes. Counted as one test.
fuzz_seconds=${TILEC_FUZZ_SECONDS:-0}
if [ "$fuzz_seconds" -gt 0 ]; then
  if TILEC_FUZZ_BUILD="${build_dir}-fuzz" scripts/fuzz.sh "$fuzz_seconds"; then ok=$((ok + 1)); else fail=$((fail + 1)); status=1; fi
fi

# The whole suite under ASan + UBSan is opt-in (TILEC_TEST_ASAN=1): its build alone takes longer
# than the rest of this script on a 2-core machine (docs/robustness.md has the figures).
if [ "${TILEC_TEST_ASAN:-0}" = 1 ]; then
  asan_status=0
  scripts/test-asan.sh "${build_dir}-asan" || asan_status=$?
  asan_ok=$(awk -F: '/^Ok:/{gsub(/ /,"",$2);print $2}' "${build_dir}-asan/meson-logs/testlog.txt" 2>/dev/null)
  ok=$((ok + ${asan_ok:-0}))
  if [ "$asan_status" -ne 0 ]; then fail=$((fail + 1)); status=1; fi
fi
echo "tests: $ok passed, $fail failed, $skip skipped"
exit $status
