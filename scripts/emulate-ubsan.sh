#!/usr/bin/env bash
# scripts/emulate-ubsan.sh — run the emitted CUDA of every sample and every emulation test kernel
# under UndefinedBehaviorSanitizer (an opt-in check, not part of CI: about two minutes).
#
# Usage: scripts/emulate-ubsan.sh [BUILD_DIR]   (default: build)
# `tilec emulate` builds each program with a host compiler that adds -fsanitize=undefined
# -fno-sanitize-recover=undefined (the emulation runtime too, in a cache of its own), so signed
# overflow, a shift past the width or an out-of-range conversion in the generated C++ stops the
# run with "runtime error" and the line of the .cu. Samples run at the first shape of their group
# in tests/emulate/sample_sweep.json on both targets (one schedule); the kernels of
# tests/emulate/kernels/ at the shape on their first line, in both plain forms. Exits non-zero
# when any run fails, after listing them.
set -uo pipefail
build_dir=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
tilec="$build_dir/tools/tilec"
[ -x "$tilec" ] || { echo "emulate-ubsan: no $tilec (build it first: ninja -C $build_dir)" >&2; exit 2; }
cxx=$(command -v "${TILEC_HOST_CXX:-g++}") || { echo "emulate-ubsan: no host compiler" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '#!/bin/sh\nexec %s -fsanitize=undefined -fno-sanitize-recover=undefined "$@"\n' "$cxx" > "$work/ubcxx"
chmod +x "$work/ubcxx"
export TILEC_CACHE_DIR="$build_dir/emulate-ubsan-cache"

failed=()
run() {  # label, then the arguments of `tilec emulate`
  local label=$1
  shift
  if output=$("$tilec" emulate "$@" --schedules 1 --host-cxx "$work/ubcxx" 2>&1); then
    echo "ok      $label"
  else
    echo "FAILED  $label"
    grep -m 3 "runtime error\|error:" <<<"$output" | sed 's/^/        /'
    failed+=("$label")
  fi
}

# The first shape of each sample's group: "sample dims sms" lines.
shapes=$(python3 - <<'PY'
import json
text = ''.join(line for line in open('tests/emulate/sample_sweep.json') if not line.lstrip().startswith('//'))
seen = set()
for group in json.loads(text)['groups']:
    for sample in group['samples']:
        if sample not in seen and group.get('shapes'):  # a 'like' group borrows another's
            seen.add(sample)
            shape = group['shapes'][0]
            print(sample, shape['dims'], shape.get('sms', 2))
PY
) || { echo "emulate-ubsan: cannot read the sample shapes of tests/emulate/sample_sweep.json" >&2; exit 2; }
while read -r sample dims sms; do
  for target in sm_90a sm_100a; do
    run "samples/$sample.tile $target --dims $dims" "samples/$sample.tile" --target "$target" --dims "$dims" --sms "$sms"
  done
done <<<"$shapes"
for kernel in tests/emulate/kernels/*.tile; do
  dims=$(head -1 "$kernel" | sed -n 's|^// dims: ||p')
  for form in registers shared; do
    run "$kernel $form --dims $dims" "$kernel" --dims "$dims" --plain-tiles "$form"
  done
done

if [ ${#failed[@]} -gt 0 ]; then
  echo "emulate-ubsan: ${#failed[@]} run(s) failed" >&2
  exit 1
fi
echo "emulate-ubsan: every run is free of undefined behaviour the sanitizer checks"
