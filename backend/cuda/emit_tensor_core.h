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

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

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

// What the tensor-core analysis decided for one kernel, as plain values, in the order the kernel
// declares them: the shared-memory map (stage buffers, barriers, the TMA stores' staging), each
// barrier's arrivals per phase, each mma's MMA form and where its D lives, each store's path.
// The writer prints from the same decisions; tests assert them here, not in the printed CUDA.
struct TensorCorePlan {
  struct Stage {
    std::string name, tile;  // "pipe_a_buffer", "tile<128x64xbf16, smem>"
    int64_t depth = 0, slot_bytes = 0, offset = 0;
    bool k_major = false;     // the MMA reads it K-major
  };
  struct Barrier {
    std::string name, purpose;
    int64_t slots = 0, arrivals = 0, offset = 0;
  };
  struct Mma {
    std::string kind;          // the MMA form's class ("f16", "f8f6f4", "tf32", "i8")
    int64_t m = 0, k = 0;      // one instruction's M and K
    int64_t n = 0;             // the mma's N: its D's columns
    bool a_registers = false;  // A is a register tile (else a stage buffer)
    bool registers = false;    // D in registers (else a TMEM accumulator)
    int64_t tmem_column = -1;  // the TMEM column it computes into (sm_100a), else -1
    int64_t staging_offset = -1, staging_bytes = 0;  // A from registers through shared memory
  };
  struct Fragment {
    std::string name;  // the array
    int64_t rows = 0, columns = 0;  // columns 1: a row vector
    bool accumulator = false;       // an mma writes it
  };
  struct Store {
    bool tma = false;          // through shared memory and TMA (else each thread at its elements)
    int64_t box_rows = 0, chunk_columns = 0;
    int64_t warpgroup_columns = 0;  // the columns one compute warpgroup writes
    size_t accumulators = 0;   // TMEM accumulators it reads
  };
  std::vector<Stage> stages;
  std::vector<Barrier> barriers;
  std::vector<Mma> mmas;
  std::vector<Fragment> fragments;  // the register tiles, each array once
  std::vector<Store> stores;
  int64_t compute_threads = 0;  // 128 or 256: one or two compute warpgroups
  int64_t shared_bytes = 0, tmem_columns = 0, store_staging_offset = -1;
  int64_t exchange_offset = -1, exchange_bytes = 0;  // row reductions across warpgroups
};

// The plan of a kernel that went through warp-specialize; nullopt after reporting at the op's
// location what the tensor-core backend does not support.
std::optional<TensorCorePlan> plan_tensor_core_kernel(const KernelPlan& plan, TensorCoreNeeds& needs,
                                                      DiagnosticEngine& diagnostics);

}  // namespace tilec::cuda
