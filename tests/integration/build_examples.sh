#!/usr/bin/env bash
# tests/integration/build_examples.sh — builds samples/integration/{meson,cmake} with nvcc.
#
# Usage: build_examples.sh TILEC SOURCE_DIR
# For each example (copied, with the tilec binary, into a temporary directory so nothing in
# the source tree is touched) it checks that:
#   1. the project configures and builds, and the host program vector_add_demo exists;
#   2. a second build has nothing to do (the depfile causes no spurious work);
#   3. touching the .tile regenerates vector_add.cu (newer mtime, same bytes);
#   4. touching the tilec binary regenerates vector_add.cu;
#   5. (meson) a parameter added to the kernel makes main.cpp's call, against vector_add.h, fail;
#   6. (CMake) .tile files of one name in two folders get a .cu each, and OUTPUT and OPTIONS work.
# Exit 77 (meson's "skipped") with the reason when nvcc is absent; the CMake half is skipped
# with a printed reason when cmake is absent. The GPU code is only built, never run.
set -euo pipefail

tilec=$1
source_dir=$2

nvcc_path=${NVCC:-}
[ -n "$nvcc_path" ] || nvcc_path=$(command -v nvcc || true)
[ -n "$nvcc_path" ] || { [ -x /usr/local/cuda/bin/nvcc ] && nvcc_path=/usr/local/cuda/bin/nvcc; } || true
if [ -z "$nvcc_path" ] || [ ! -x "$nvcc_path" ]; then
  echo "SKIP: no usable nvcc (NVCC='${NVCC:-}'; set NVCC, put nvcc on PATH or install /usr/local/cuda)"
  exit 77
fi
# meson's cuda language and CMake's CUDA detection both look for nvcc on PATH.
export PATH="$(dirname "$nvcc_path"):$PATH"
export CUDACXX="$nvcc_path"

work=$(mktemp -d "${TMPDIR:-/tmp}/tilec_integration.XXXXXX")
trap 'rm -rf "$work"' EXIT
cp "$tilec" "$work/tilec"
failures=0

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
mtime() { stat -c %Y "$1"; }

# check_project NAME BUILD_DIR: steps 1–4 after the project was configured into BUILD_DIR.
check_project() {
  local name=$1 build=$2 source=$work/$1
  echo "== $name: build"
  if ! ninja -C "$build" >"$work/$name.log" 2>&1; then
    cat "$work/$name.log"; fail "$name: the build failed"; return
  fi
  [ -x "$build/vector_add_demo" ] || fail "$name: $build/vector_add_demo was not built"
  [ -f "$build/vector_add.cu" ] || { fail "$name: no vector_add.cu in $build"; return; }
  grep -q 'extern "C" cudaError_t launch_vector_add' "$build/vector_add.cu" \
    || fail "$name: vector_add.cu has no launch_vector_add"
  grep -q 'extern "C" cudaError_t launch_vector_add(.*);' "$build/vector_add.h" \
    || fail "$name: vector_add.h does not declare launch_vector_add"

  echo "== $name: second build is a no-op"
  ninja -C "$build" -n | grep -q 'no work to do' || fail "$name: a second build still has work to do"

  echo "== $name: touching the .tile regenerates the .cu"
  local before_bytes before_time
  before_bytes=$(cat "$build/vector_add.cu")
  before_time=$(mtime "$build/vector_add.cu")
  sleep 1.1
  touch "$source/vector_add.tile"
  ninja -C "$build" vector_add.cu >/dev/null 2>&1 || fail "$name: regenerating after touching the .tile failed"
  [ "$(mtime "$build/vector_add.cu")" -gt "$before_time" ] || fail "$name: vector_add.cu was not regenerated after touching the .tile"
  [ "$(cat "$build/vector_add.cu")" == "$before_bytes" ] || fail "$name: regenerating changed vector_add.cu's bytes"

  echo "== $name: touching tilec regenerates the .cu"
  before_time=$(mtime "$build/vector_add.cu")
  sleep 1.1
  touch "$work/tilec"
  ninja -C "$build" vector_add.cu >/dev/null 2>&1 || fail "$name: regenerating after touching tilec failed"
  [ "$(mtime "$build/vector_add.cu")" -gt "$before_time" ] || fail "$name: vector_add.cu was not regenerated after touching tilec"
}

cp -r "$source_dir/samples/integration/meson" "$work/meson"
echo "== meson: configure"
if meson setup "$work/meson-build" "$work/meson" -Dtilec="$work/tilec" >"$work/meson-setup.log" 2>&1; then
  # meson puts the generated file at the build root: the target is named vector_add.cu there.
  check_project meson "$work/meson-build"
  # A parameter added to the kernel: main.cpp's call, compiled against the regenerated header,
  # fails instead of passing the stream as N.
  echo "== meson: a changed kernel signature fails to compile at the call"
  sed -i 's/Z: tensor<N, f32>)/Z: tensor<N, f32>, alpha: f32)/' "$work/meson/vector_add.tile"
  if ninja -C "$work/meson-build" >"$work/meson-stale.log" 2>&1; then
    fail "meson: main.cpp still built against a kernel that takes alpha"
  elif ! grep -q 'launch_vector_add' "$work/meson-stale.log"; then
    cat "$work/meson-stale.log"; fail "meson: the build failed, but not at the launcher's call"
  fi
else
  cat "$work/meson-setup.log"; fail "meson: configure failed"
fi

if command -v cmake >/dev/null; then
  cp -r "$source_dir/samples/integration/cmake" "$work/cmake"
  echo "== cmake: configure"
  if cmake -G Ninja -S "$work/cmake" -B "$work/cmake-build" -DTILEC_EXECUTABLE="$work/tilec" \
      -DCMAKE_CUDA_COMPILER="$nvcc_path" >"$work/cmake-setup.log" 2>&1; then
    check_project cmake "$work/cmake-build"
    # Kernels whose names collide, and tilec options: .tile files of one name in two folders,
    # a name with a dot in it, -D through OPTIONS (only their .cu files are built: no nvcc).
    echo "== cmake: kernels of one name in two folders, OPTIONS"
    mkdir -p "$work/cmake/kernels/a" "$work/cmake/kernels/b"
    cp "$work/cmake/vector_add.tile" "$work/cmake/kernels/a/vector_add.tile"
    cp "$work/cmake/vector_add.tile" "$work/cmake/kernels/b/vector_add.tile"
    cp "$work/cmake/vector_add.tile" "$work/cmake/vector_add.fwd.tile"
    cat >> "$work/cmake/CMakeLists.txt" <<'CMAKE'
add_library(tilec_variants OBJECT main.cu)
tilec_add_kernel(tilec_variants kernels/a/vector_add.tile)
tilec_add_kernel(tilec_variants kernels/b/vector_add.tile OPTIONS -D BLOCK=512)
tilec_add_kernel(tilec_variants vector_add.fwd.tile OUTPUT forward/vector_add.cu)
CMAKE
    if cmake "$work/cmake-build" >"$work/cmake-variants.log" 2>&1 &&
        ninja -C "$work/cmake-build" kernels/a/vector_add.cu kernels/b/vector_add.cu forward/vector_add.cu \
          >>"$work/cmake-variants.log" 2>&1; then
      grep -q 'cdiv(N, 1024)' "$work/cmake-build/kernels/a/vector_add.cu" || fail "cmake: kernels/a/vector_add.cu is not BLOCK=1024's"
      grep -q 'cdiv(N, 512)' "$work/cmake-build/kernels/b/vector_add.cu" || fail "cmake: OPTIONS -D BLOCK=512 did not reach tilec"
      [ -f "$work/cmake-build/forward/vector_add.cu" ] || fail "cmake: OUTPUT forward/vector_add.cu was not written"
    else
      cat "$work/cmake-variants.log"; fail "cmake: kernels of one name in two folders did not configure and generate"
    fi
  else
    cat "$work/cmake-setup.log"; fail "cmake: configure failed"
  fi
else
  echo "SKIP (cmake half): cmake not found on PATH"
fi

if [ "$failures" -ne 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all checks passed"
