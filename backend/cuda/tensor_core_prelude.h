// backend/cuda/tensor_core_prelude.h — the PTX helpers a tensor-core kernel's .cu file needs.
//
// One block of device functions for mbarriers, TMA, named barriers, setmaxnreg and shared-memory
// matrix descriptors, and the host function that encodes a 2-D or 3-D tensor map through the driver
// entry point (no -lcuda); then, per shape a kernel uses, a WGMMA (sm_90a) or a TMEM load
// (sm_100a) wrapper, since their register lists are spelled out operand by operand.
#pragma once

#include <cstdint>
#include <set>
#include <string>

namespace tilec::target {
struct Target;
}  // namespace tilec::target

namespace tilec::cuda {

// What the kernels of one file use; the prelude spells exactly that.
struct TensorCoreNeeds {
  const target::Target* target = nullptr;  // backend/target.h
  // "64x256:bf16": WGMMA m64nNk16 with f32 accumulators; "64x64:bf16:registers": A from registers;
  // ":am": A MN-major (a transposed A); ":kb": B K-major. "64x256:e4m3:kb": m64nNk32 of 8-bit floats,
  // "64x256:tf32:kb": m64nNk8 of tf32 (both K-major only).
  std::set<std::string> wgmma_shapes;
  bool tcgen05_f8f6f4 = false;  // sm_100a: a tcgen05.mma of kind::f8f6f4 (8-bit inputs)
  bool tcgen05_tf32 = false;    // sm_100a: a tcgen05.mma of kind::tf32 (f32 inputs)
  bool tma_3d = false;          // a TMA load or store of a rank-3 tensor (a batch of matrices)
};

std::string tensor_core_prelude(const TensorCoreNeeds& needs);

// The name of the WGMMA wrapper for accumulator width `n` and input element `element` (bf16, f16,
// e4m3, e5m2, tf32), with A in shared memory or (`register_a`) in registers.
std::string wgmma_function(int64_t n, const std::string& element, bool register_a = false, bool b_k_major = false,
                           bool a_mn_major = false);

}  // namespace tilec::cuda
