// backend/cuda/tensor_core_prelude.h — the PTX helpers a tensor-core kernel's .cu file needs.
//
// One block of device functions for mbarriers, TMA, named barriers, setmaxnreg and shared-memory
// matrix descriptors, and the host function that encodes a 2-D tensor map through the driver
// entry point (no -lcuda); then, per shape a kernel uses, a WGMMA (sm_90a) or a TMEM load
// (sm_100a) wrapper, since their register lists are spelled out operand by operand.
#pragma once

#include <cstdint>
#include <set>
#include <string>

namespace tilec::cuda {

// What the kernels of one file use; the prelude spells exactly that.
struct TensorCoreNeeds {
  std::string target;                 // sm_90a or sm_100a
  // "64x256:bf16": WGMMA m64nNk16 with f32 accumulators; "64x64:bf16:registers": A from registers
  std::set<std::string> wgmma_shapes;
};

std::string tensor_core_prelude(const TensorCoreNeeds& needs);

// The name of the WGMMA wrapper for accumulator width `n` and input element `element` (bf16|f16),
// with A in shared memory or (`register_a`) in registers.
std::string wgmma_function(int64_t n, const std::string& element, bool register_a = false, bool b_k_major = false);

}  // namespace tilec::cuda
