#!/usr/bin/env bash
# scripts/test-sanitizers.sh — the sanitizer stage of CI: one clang build under AddressSanitizer
# + UndefinedBehaviorSanitizer runs the whole test suite, then each libFuzzer target for a
# bounded time.
#
# Usage: scripts/test-sanitizers.sh [BUILD_DIR]   (default: build-sanitize)
# Environment: TILEC_FUZZ_SECONDS per fuzz target (default 30; 0 skips fuzzing).
# 1. scripts/setup-sanitize.sh installs clang and configures BUILD_DIR (ASan + UBSan, -O1, no
#    debug info, coverage instrumentation, fuzz targets; the test programs' own sources are not
#    instrumented, the libraries and tilec they drive are); ninja builds what the suites that
#    run (2.) depend on, and the fuzz targets.
# 2. `meson test` runs every suite there; the end-to-end suites spawn the sanitized tilec, so a
#    memory error, a leak or undefined behaviour on any path they reach fails the test. Left
#    out, because they run no tilec code under the sanitizers that other tests do not:
#      cuda-nvcc                         nvcc compiling the checked-in expected .cu files
#      nvcc's part of any other test     TILEC_TEST_NVCC=off (tests/nvcc_path.h): the first stage ran
#                                        it, and it runs no tilec code; the SampleCuda.* cases skip,
#                                        the harness and cluster cases still run tilec's emits
#      integration-build-examples        meson/CMake projects built with nvcc (slow, nvcc-bound)
#      cuda-layout-tables                the test's own evaluator over emitted .cu text (about 4
#                                        minutes under ASan); the tilec compiles it makes are the
#                                        samples', which the samples and emulate suites run here
#      Report.ScreenshotInHeadlessChromium  a browser rendering a page the other Report tests check
#      emulate-planted-sm90a/-sm100a     one-line mutations of checked-in .cu files, which the host
#                                        compiler builds and the (unsanitized) emulation runtime
#                                        runs; tilec's part (`emulate --cu`, the interpreter, the
#                                        report) is what emulate-cli's hand-broken .cu tests run
#      SampleSweep.* but the ragged shapes  the sweep's other shapes (one tile, one k-step, rounds,
#                                        ...) take the tilec paths of each sample's ragged shape,
#                                        with other extents; most of their cost under ASan is the
#                                        sanitized interpreter's
#      Protocol/*TripCount.* but the ragged and longest trip counts  likewise: the other trip
#                                        counts run the same passes and interpreter paths
#      Sample.RunOutputDoesNotDependOnTheWorkerCount, EmulateRuntime.TwoWorkersGiveTheSameResultsAndReports,
#      RunCheck's --workers 3 runs (TILEC_TEST_WORKER_COUNTS=1, tests/samples/samples_test.cpp)
#                                        the same runs again with other worker counts: the
#                                        executor's threads are ThreadSanitizer's (scripts/test-tsan.sh),
#                                        and the emulated programs are not sanitized
#      TensorCore.EveryOneLineDeletionOf*'s second target, Determinism's second run  under
#                                        TILEC_SANITIZE (meson.build) each mutated IR compiles for
#                                        one target and each command runs once
#    $TILEC_TEST_EMULATE_CACHE (tests/emulate/emulate_test_support.h), when set, is the emulation
#    build cache the emulate suites use; .ci/run points it at the first stage's, so programs the
#    first stage built are not compiled again.
# 3. scripts/fuzz.sh runs the four fuzz targets from the same build directory, two at a time.
# It closes with "sanitizers: N passed, N failed, N skipped" and exits 1 when anything failed.
set -uo pipefail
build_dir=${1:-build-sanitize}
fuzz_seconds=${TILEC_FUZZ_SECONDS:-30}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

scripts/setup-sanitize.sh "$build_dir" || exit 1

# Leaks count as failures: LeakSanitizer runs at every sanitized process's exit. UBSan is fatal
# (the build also passes -fno-sanitize-recover=undefined).
export ASAN_SYMBOLIZER_PATH=${ASAN_SYMBOLIZER_PATH:-/usr/lib/llvm-16/bin/llvm-symbolizer}
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:strict_string_checks=1 ${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1 ${UBSAN_OPTIONS:-}"
skipped_tests='^(cuda-nvcc|integration-build-examples|cuda-layout-tables|emulate-planted-sm90a|emulate-planted-sm100a)$'
# The sweep's cases are named SAMPLE_TARGET_SHAPE; only the ragged shapes (ragged, ragged_t) run.
sweep_shapes='*SampleSweep*_one_kstep:*SampleSweep*_fewer_ksteps_than_stages:*SampleSweep*_persistent_rounds:'
sweep_shapes+='*SampleSweep*_rounds_short_k:*SampleSweep*_short_t:*SampleSweep*_long_t:*SampleSweep*_one_tile:'
sweep_shapes+='*SampleSweep*_sub_tile:*SampleSweep*_multi_tile'
trip_counts='*GemmTripCount*/one_iteration:*GemmTripCount*/fewer_iterations_than_stages:*GemmTripCount*/odd_iterations:'
trip_counts+='*GemmTripCount*/as_many_as_stages:*GemmTripCount*/not_a_multiple_of_two_stages:'
trip_counts+='*TensorCoreSampleTripCount*_one_iteration:*TensorCoreSampleTripCount*_fewer_than_stages:'
trip_counts+='*TensorCoreSampleTripCount*_two_stages:*TensorCoreSampleTripCount*/attention_odd_iterations:'
trip_counts+='*TensorCoreSampleTripCount*/attention_fewer_keys_than_a_block:*TensorCoreSampleTripCount*/attention_as_many_as_stages'
worker_counts='*Sample.RunOutputDoesNotDependOnTheWorkerCount*:EmulateRuntime.TwoWorkersGiveTheSameResultsAndReports'
mapfile -t tests < <(meson test -C "$build_dir" --list 2>/dev/null | sed -n 's/^.* \/ //p' | grep -vE "$skipped_tests")
((${#tests[@]})) || { echo "sanitizers: meson listed no tests in $build_dir" >&2; exit 1; }
# Build what those tests depend on and the fuzz targets, not the left-out suites' programs (about
# two minutes of sanitized compiling): meson's introspection names each test's targets.
mapfile -t targets < <(python3 - "$build_dir" "${tests[@]}" <<'PY'
import json, os, subprocess, sys
build_dir, names = sys.argv[1], set(sys.argv[2:])
def introspect(what):
    out = subprocess.run(["meson", "introspect", "--" + what, build_dir], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)
wanted = {dep for test in introspect("tests") if test["name"] in names for dep in test["depends"]}
for target in introspect("targets"):
    if target["id"] in wanted or target["name"].startswith("fuzz_"):
        for path in target["filename"]:
            print(os.path.relpath(path, build_dir))
PY
)
((${#targets[@]})) || { echo "sanitizers: no targets found for the tests in $build_dir" >&2; exit 1; }
ninja -C "$build_dir" -j2 "${targets[@]}" || exit 1
status=0
TILEC_TEST_NVCC=off TILEC_TEST_WORKER_COUNTS=1 GTEST_FILTER="-Report.ScreenshotInHeadlessChromium:$sweep_shapes:$trip_counts:$worker_counts" \
  meson test -C "$build_dir" --no-rebuild --print-errorlogs --num-processes 2 --timeout-multiplier 3 "${tests[@]}" || status=1
log="$build_dir/meson-logs/testlog.txt"
count() { awk -F: "/^$1:/{gsub(/ /,\"\",\$2);s+=\$2}END{print s+0}" "$log" 2>/dev/null || echo 0; }
ok=$(count Ok)
fail=$(count '(Fail|Timeout|Unexpected Pass)')
skip=$(count Skipped)
# Every meson test that did not run, and every gtest case the filter left out, counts as skipped.
skip=$((skip + $(meson test -C "$build_dir" --list 2>/dev/null | grep -cE " / ${skipped_tests#^}")))

if [ "$fuzz_seconds" -gt 0 ]; then
  if TILEC_FUZZ_BUILD="$build_dir" scripts/fuzz.sh "$fuzz_seconds"; then ok=$((ok + 1)); else fail=$((fail + 1)); status=1; fi
fi
echo "sanitizers: $ok passed, $fail failed, $skip skipped"
exit $status
