#!/bin/sh
# scripts/reserved_macros.sh — writes backend/cuda/reserved_macros.inc: every macro not starting
# with '_' that the headers around a generated .cu define under g++ with glibc: its own includes
# as nvcc's host and device passes see them (gnu++17, with the CUDA toolkit's headers where it is
# installed; the device pass defines __CUDACC__ and __CUDA_ARCH__, under which nv/target adds
# NV_TARGET_MINIMUM_SM_INTEGER and others),
# and those of `tilec emulate`'s build (c++20, the emulation's CUDA headers, the driver's
# includes). A kernel, tensor or value the user names like one (PATH_MAX, BIG_ENDIAN, EINVAL)
# would be replaced by the preprocessor, so cuda::NameTable renames it. Rerun from the source
# root when the generated file or the driver includes another header:
#   scripts/reserved_macros.sh > backend/cuda/reserved_macros.inc
# The list is committed, not made at build time, so the emitted CUDA is the same on every machine.
set -eu
CXX=${CXX:-g++}
CUDA_INCLUDE=${CUDA_INCLUDE:-/usr/local/cuda/include}
standard="cstdint cstddef climits cmath cstring initializer_list"
cuda="cuda_runtime.h cuda_fp16.h cuda_bf16.h cuda_fp8.h cuda.h"
driver="cstdio cstdlib cstring"
includes() { for header in "$@"; do printf '#include <%s>\n' "$header"; done; }
{
  includes $standard | $CXX -std=gnu++17 -dM -E -x c++ -
  if [ -f "$CUDA_INCLUDE/cuda_runtime.h" ]; then
    includes $standard $cuda | $CXX -std=gnu++17 -I"$CUDA_INCLUDE" -dM -E -x c++ -
    includes $standard $cuda |
      $CXX -std=gnu++17 -I"$CUDA_INCLUDE" -D__CUDACC__ -D__NVCC__ -D__CUDA_ARCH__=900 -dM -E -x c++ -
  fi
  includes $standard $cuda $driver | $CXX -std=c++20 -Iruntime/emulate/include -DTILEC_EMULATE -DTILEC_EMULATE_SM90A -dM -E -x c++ -
} | awk '$1 == "#define" { name = $2; sub(/\(.*/, "", name); print name }' | grep -v '^_' | LC_ALL=C sort -u > /tmp/tilec_reserved_macros.$$
echo "// backend/cuda/reserved_macros.inc — written by scripts/reserved_macros.sh (do not edit): the"
echo "// $(wc -l < /tmp/tilec_reserved_macros.$$) macros of the headers around a generated .cu, which cuda::NameTable never gives as a name."
awk '{ printf "\"%s\",\n", $0 }' /tmp/tilec_reserved_macros.$$
rm -f /tmp/tilec_reserved_macros.$$
