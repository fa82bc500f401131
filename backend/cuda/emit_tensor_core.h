// backend/cuda/emit_tensor_core.h — the tensor-core CUDA backend: one warp-specialized kernel.
//
// A kernel whose IR went through insert-sync and warp-specialize (KernelPlan::tensor_core) is
// written op by op with the synchronization the passes chose: mbarriers in shared memory, TMA
// loads of 128-byte swizzled boxes through tensor maps, a producer warpgroup (one elected thread,
// registers lowered with setmaxnreg) and a compute agent of one or two warpgroups issuing WGMMA
// (sm_90a, f32 accumulators in registers) or one thread issuing tcgen05.mma into TMEM (sm_100a),
// and an epilogue that evaluates the stored value element by element from the accumulator.
// docs/backend_tensor_core.md says what is emitted and what is not supported.
#pragma once

#include <string>

#include "backend/cuda/kernel_plan.h"
#include "backend/cuda/tensor_core_prelude.h"

namespace tilec {
class DiagnosticEngine;
}

namespace tilec::cuda {

// Appends the kernel's summary comment, __global__ function and extern "C" launcher to `out`,
// and records in `needs` the prelude helpers it uses. False, after reporting at the op's
// location, when the kernel uses something this emitter does not support (so `out` is unusable).
bool emit_tensor_core_kernel(const KernelPlan& plan, TensorCoreNeeds& needs, std::string& out,
                             DiagnosticEngine& diagnostics);

}  // namespace tilec::cuda
