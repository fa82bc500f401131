#!/usr/bin/env bash
# scripts/fuzz.sh — build tilec's libFuzzer targets (clang, ASan + UBSan) and run each one for a
# bounded time; any crash, leak, timeout or internal error fails the script.
#
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
#   SECONDS_PER_TARGET  default 30 (or $TILEC_FUZZ_SECONDS); passed as -max_total_time
#   TARGET              tile_source, ir_text, schedule_lab, reorder_lab (default: all four)
#   TILEC_FUZZ_JOBS     targets fuzzed at the same time (default 2)
# Build directory: build-sanitize (or $TILEC_FUZZ_BUILD), the sanitizer build the whole test
# suite also runs in (scripts/test-sanitizers.sh): scripts/setup-sanitize.sh installs clang and
# configures it with ASan + UBSan, coverage instrumentation everywhere but the test programs'
# own sources (-fsanitize=fuzzer-no-link) and -fsanitize=fuzzer on the fuzz executables only (-Dfuzzing=true).
# Each input may take at most 2 GiB (-rss_limit_mb) and 5 s (-timeout, wall clock), except
# tile_source's: it runs the whole pass pipeline for two targets, up to about 1.5 s of CPU per
# input under ASan, so its bound is 30 s, far enough above that for a loaded machine not to
# report a slow input as a hang.
# Seeds are the files listed in tests/fuzz/corpus_folders.h plus tests/fuzz/regressions/NAME;
# what a run finds goes to BUILD/corpus/NAME, a crashing input to BUILD/artifacts/NAME/.
# A crash is fixed in the code and its input added to tests/fuzz/regressions/NAME, which the
# normal suite replays (tests/fuzz/replay_test.cpp). See docs/robustness.md.
set -euo pipefail
seconds=${1:-${TILEC_FUZZ_SECONDS:-30}}
shift || true
targets=("$@")
((${#targets[@]})) || targets=(tile_source ir_text schedule_lab reorder_lab)
build_dir=${TILEC_FUZZ_BUILD:-build-sanitize}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

scripts/setup-sanitize.sh "$build_dir" >/dev/null
ninja -C "$build_dir" -j2 "${targets[@]/#/tests/fuzz/fuzz_}"

# Seed folders per target, read from the one list the replay test uses too.
seed_folders() {
  sed -n "s/.*{\"$1\", \"\([^\"]*\)\", {\(.*\)}},.*/\1 \2/p" tests/fuzz/corpus_folders.h | tr -d '",'
}

export ASAN_SYMBOLIZER_PATH=${ASAN_SYMBOLIZER_PATH:-/usr/lib/llvm-16/bin/llvm-symbolizer}
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:symbolize=1 ${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1 ${UBSAN_OPTIONS:-}"
# Two targets at a time (the machines CI runs on have two cores; libFuzzer uses one): each
# target still fuzzes for SECONDS_PER_TARGET, and the stage takes half as long.
jobs=${TILEC_FUZZ_JOBS:-2}
fuzz_one() {  # TARGET: prepare its seeds, fuzz it; the exit status is libFuzzer's
  local target=$1 extension folders seeds timeout
  read -r extension folders <<<"$(seed_folders "$target")"
  seeds="$build_dir/seeds/$target"
  rm -rf "$seeds"
  mkdir -p "$seeds" "$build_dir/corpus/$target" "$build_dir/artifacts/$target"
  # shellcheck disable=SC2086
  find $folders -type f -name "*$extension" -exec cp {} "$seeds/" \; 2>/dev/null || true
  cp tests/fuzz/regressions/"$target"/* "$seeds/" 2>/dev/null || true
  timeout=5
  [ "$target" != tile_source ] || timeout=30
  echo "fuzz: $target for ${seconds}s ($(ls "$seeds" | wc -l) seeds, ${timeout}s per input)"
  "$build_dir/tests/fuzz/fuzz_$target" -max_total_time="$seconds" -timeout="$timeout" -rss_limit_mb=2048 \
    -max_len=8192 -print_final_stats=1 -artifact_prefix="$build_dir/artifacts/$target/" \
    "$build_dir/corpus/$target" "$seeds" >"$build_dir/fuzz_$target.log" 2>&1
}
for target in "${targets[@]}"; do
  [ -n "$(seed_folders "$target")" ] || { echo "fuzz: unknown target '$target'" >&2; exit 1; }
done
failed=()
for ((first = 0; first < ${#targets[@]}; first += jobs)); do
  batch=("${targets[@]:first:jobs}")
  pids=()
  for target in "${batch[@]}"; do
    fuzz_one "$target" &
    pids+=($!)
  done
  for i in "${!batch[@]}"; do
    target=${batch[$i]}
    if ! wait "${pids[$i]}"; then
      tail -40 "$build_dir/fuzz_$target.log"
      echo "fuzz: $target FAILED; the input is in $build_dir/artifacts/$target/ (log: $build_dir/fuzz_$target.log)"
      failed+=("$target")
    else
      echo "fuzz: $target: $(grep -E '^Done [0-9]+ runs' "$build_dir/fuzz_$target.log" | tr '\n' ' ')"
    fi
  done
done
if ((${#failed[@]})); then
  echo "fuzz: ${#failed[@]} of ${#targets[@]} targets failed: ${failed[*]}"
  exit 1
fi
echo "fuzz: ${#targets[@]} targets ran ${seconds}s each without a crash, leak or timeout"
