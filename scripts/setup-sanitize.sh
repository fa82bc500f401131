#!/usr/bin/env bash
# scripts/setup-sanitize.sh — install clang and configure the one sanitizer build directory that
# serves both the whole test suite under AddressSanitizer + UndefinedBehaviorSanitizer
# (scripts/test-sanitizers.sh) and the libFuzzer targets (scripts/fuzz.sh), so it is built once.
#
# Usage: scripts/setup-sanitize.sh [BUILD_DIR]   (default: build-sanitize)
# The configuration: clang 16 (libFuzzer needs clang; Debian's default clang 14 has no
# _Float16 on x86-64, which the interpreter tests use as their half-precision reference),
# -fsanitize=address,undefined with UBSan made fatal, coverage instrumentation on every library
# (-fsanitize=fuzzer-no-link, so the fuzz targets see the code they reach), -O1 without debug
# info (a lean build: ASan reports still name each frame's function; add -gline-tables-only to
# cpp_args locally for line numbers), frame pointers kept for ASan's fast unwinder, benchmarks
# off, and -Dfuzzing=true, which adds the fuzz executables linked with -fsanitize=fuzzer.
# -Dinstrument_tests=false compiles the test programs' own sources without sanitizers: what
# they check is the libraries and tilec they drive, which stay instrumented, and an
# instrumented test source took up to three times as long (emulate_cli_test.cpp: 30 s against
# 11 s; 1.6 times over five sources taken at random).
# Safe to run twice.
set -euo pipefail
build_dir=${1:-build-sanitize}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

# setup.sh installs the packages (clang, its sanitizer and fuzzer runtimes, llvm-symbolizer) and
# makes a plain configuration; the sanitizer options come after. The test scripts point
# ASAN_SYMBOLIZER_PATH at /usr/lib/llvm-16/bin/llvm-symbolizer.
CC=clang-16 CXX=clang++-16 TILEC_SETUP_EXTRA="clang-16 libclang-rt-16-dev llvm-16 ${TILEC_SETUP_EXTRA:-}" \
  scripts/setup.sh "$build_dir" >/dev/null
meson configure "$build_dir" -Doptimization=1 -Ddebug=false -Db_sanitize=address,undefined -Db_lundef=false \
  -Dbenchmarks=disabled -Dfuzzing=true -Dinstrument_tests=false \
  -Dcpp_args="-fsanitize=fuzzer-no-link -fno-sanitize-recover=undefined -fno-omit-frame-pointer" \
  -Dcpp_link_args="-fno-sanitize-recover=undefined" >/dev/null
echo "setup-sanitize: configured $build_dir (clang, ASan + UBSan, fuzzing)"
