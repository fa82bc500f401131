// backend/target.cpp — the table of targets (backend/target.h).
//
// Where the figures come from:
// - 227 KiB of dynamic shared memory per CTA, 65536 registers per SM and at most 255 per thread:
//   the CUDA C++ Programming Guide's table of compute capabilities 9.0 and 10.0.
// - 512 TMEM columns of 128 lanes: the PTX ISA's tensor memory (tcgen05.alloc takes 32..512).
// - Clusters of up to 8 CTAs: the portable cluster size (larger needs an opt-in attribute).
// - 40 producer and 232 compute registers: one producer and two compute warpgroups of 128
//   threads use 128 · (40 + 2 · 232) = 64512 of the 65536 registers (setmaxnreg takes multiples
//   of 8 in 24..256); two compute warpgroups of 232 hold a 128 x 256 f32 accumulator in
//   registers on sm_90a.
#include "backend/target.h"

namespace tilec::target {
namespace {

const Target kTargets[] = {
    {.name = "sm_90a",
     .architecture = "90a",
     .feature_macro = "__CUDA_ARCH_FEAT_SM90_ALL",
     .emulate_macro = "TILEC_EMULATE_SM90A",
     .machine_model = sm90a_machine_model(),
     .mma = MmaFamily::wgmma,
     .mma_summary = "WGMMA, accumulators in registers",
     .shared_memory_bytes = 227 * 1024,
     .register_file = 65536,
     .max_thread_registers = 255,
     .tensor_memory_columns = 0,
     .max_cluster = 8,
     .producer_registers = 40,
     .compute_registers = 232},
    {.name = "sm_100a",
     .architecture = "100a",
     .feature_macro = "__CUDA_ARCH_FEAT_SM100_ALL",
     .emulate_macro = "TILEC_EMULATE_SM100A",
     .machine_model = sm100a_machine_model(),
     .mma = MmaFamily::tcgen05,
     .mma_summary = "tcgen05.mma into TMEM",
     .shared_memory_bytes = 227 * 1024,
     .register_file = 65536,
     .max_thread_registers = 255,
     .tensor_memory_columns = 512,
     .max_cluster = 8,
     .producer_registers = 40,
     .compute_registers = 232},
};

}  // namespace

std::span<const Target> targets() { return kTargets; }

const Target* find_target(std::string_view name) {
  for (const Target& target : kTargets)
    if (target.name == name) return &target;
  return nullptr;
}

const Target& default_target() { return kTargets[0]; }

std::string target_names() {
  std::string names;
  for (const Target& target : kTargets) names += (names.empty() ? "" : ", ") + std::string(target.name);
  return names;
}

}  // namespace tilec::target
