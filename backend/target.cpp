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

// The formats are the PTX ISA's instruction-descriptor table for each kind.
constexpr MmaInput k16Bit[] = {{ScalarKind::bf16, "bf16", 1}, {ScalarKind::f16, "f16", 0}};
constexpr MmaInput k8Bit[] = {{ScalarKind::f8e4m3, "e4m3", 0}, {ScalarKind::f8e5m2, "e5m2", 1}};
constexpr MmaInput kTf32[] = {{ScalarKind::f32, "tf32", 2}};  // f32 data read as tf32
constexpr MmaInput kInt8[] = {{ScalarKind::i8, "s8", 1}, {ScalarKind::u8, "u8", 0}};

// WGMMA (PTX ISA, "Asynchronous Warpgroup Level Matrix Multiply-Accumulate"): m64nNkK per
// warpgroup, K 32 bytes; only 16-bit inputs take transposes. A register A is fed as registers
// for 16-bit inputs, whose A fragment is the accumulator's layout, and for 8-bit floats, whose
// fragment the backend builds from that layout with shuffles within each quad of lanes (tf32 and
// 8-bit integer A from registers are written to shared memory). N may be any
// multiple of 8 up to 256: the backend takes that with B K-major ([N, K], N its rows); with B
// MN-major ([K, N]), multiples of 64 (whole 128-byte panels of B) and 32 or 16 (one 64- or
// 32-byte panel).
constexpr MmaInstruction kWgmma[] = {
    {.kind = "f16", .what = "16-bit", .about = "16-bit floats",
     .inputs = k16Bit, .m = 64, .k = 16, .n_multiple = 64, .n_max = 256, .n_min = 16, .n_step = 8,
     .a_registers = true, .mn_major = true},
    {.kind = "f8f6f4", .what = "8-bit", .about = "8-bit floats (the instruction descriptor gives e4m3 or e5m2)",
     .inputs = k8Bit, .m = 64, .k = 32, .n_multiple = 64, .n_max = 256, .n_min = 16, .n_step = 8,
     .a_registers = true, .mn_major = false},
    {.kind = "tf32", .what = "tf32", .about = "f32 inputs read as tf32 (the instruction descriptor's formats are 2)",
     .inputs = kTf32, .m = 64, .k = 8, .n_multiple = 64, .n_max = 256, .n_min = 16, .n_step = 8,
     .a_registers = false, .mn_major = false},
    // Integer N: multiples of 16 (and 8, 24, which the backend does not take): ptxas refuses
    // m64n40k32 with "Illegal matrix shape".
    {.kind = "i8", .what = "8-bit integer", .about = "8-bit integers into s32 (the types say signed or unsigned)",
     .inputs = kInt8, .accumulator = ScalarKind::i32, .d_format = 2, .m = 64, .k = 32, .n_multiple = 64,
     .n_max = 256, .n_min = 16, .n_step = 16, .a_registers = false, .mn_major = false},
};

// tcgen05.mma cta_group::1 (PTX ISA, "TensorCore 5th Generation"): M 128 or 64 into TMEM, N a
// multiple of 16 (M = 128) or 8 (M = 64) up to 256 with B K-major, as for WGMMA otherwise. The
// backend reads a register-tile D back with tcgen05.ld 32x32b: one row per TMEM lane for M = 128,
// lanes 0..15 of each warp's 32 for M = 64 (TMEM layout F; FragmentLayout). tcgen05.mma reads A
// from shared memory (or TMEM, which the backend does not use): a register A goes through shared
// memory, as on sm_90a for the inputs WGMMA reads from shared memory only.
constexpr MmaInstruction kTcgen05[] = {
    {.kind = "f16", .what = "16-bit", .about = "16-bit floats",
     .inputs = k16Bit, .m = 128, .k = 16, .n_multiple = 64, .n_max = 256, .n_min = 16, .n_step = 16,
     .a_registers = false, .mn_major = true},
    {.kind = "f16", .what = "16-bit", .about = "16-bit floats",
     .inputs = k16Bit, .m = 64, .k = 16, .n_multiple = 64, .n_max = 256, .n_min = 16, .n_step = 8,
     .a_registers = false, .mn_major = true},
    {.kind = "f8f6f4", .what = "8-bit", .about = "8-bit floats (the instruction descriptor gives e4m3 or e5m2)",
     .inputs = k8Bit, .m = 128, .k = 32, .n_multiple = 64, .n_max = 256, .n_min = 16, .n_step = 16,
     .a_registers = false, .mn_major = false},
    {.kind = "f8f6f4", .what = "8-bit", .about = "8-bit floats (the instruction descriptor gives e4m3 or e5m2)",
     .inputs = k8Bit, .m = 64, .k = 32, .n_multiple = 64, .n_max = 256, .n_min = 16, .n_step = 8,
     .a_registers = false, .mn_major = false},
    {.kind = "tf32", .what = "tf32", .about = "f32 inputs read as tf32 (the instruction descriptor's formats are 2)",
     .inputs = kTf32, .m = 128, .k = 8, .n_multiple = 64, .n_max = 256, .n_min = 16, .n_step = 16,
     .a_registers = false, .mn_major = false},
    {.kind = "tf32", .what = "tf32", .about = "f32 inputs read as tf32 (the instruction descriptor's formats are 2)",
     .inputs = kTf32, .m = 64, .k = 8, .n_multiple = 64, .n_max = 256, .n_min = 16, .n_step = 8,
     .a_registers = false, .mn_major = false},
    {.kind = "i8", .what = "8-bit integer", .about = "8-bit integers into s32 (the instruction descriptor's formats: 1 signed, 0 unsigned)",
     .inputs = kInt8, .accumulator = ScalarKind::i32, .d_format = 2, .m = 128, .k = 32, .n_multiple = 64,
     .n_max = 256, .n_min = 16, .n_step = 16, .a_registers = false, .mn_major = false},
    {.kind = "i8", .what = "8-bit integer", .about = "8-bit integers into s32 (the instruction descriptor's formats: 1 signed, 0 unsigned)",
     .inputs = kInt8, .accumulator = ScalarKind::i32, .d_format = 2, .m = 64, .k = 32, .n_multiple = 64,
     .n_max = 256, .n_min = 16, .n_step = 8, .a_registers = false, .mn_major = false},
};

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
     .compute_registers = 232,
     .mma_forms = kWgmma},
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
     .compute_registers = 232,
     .mma_forms = kTcgen05},
};

}  // namespace

std::span<const Target> targets() { return kTargets; }

const Target* find_target(std::string_view name) {
  for (const Target& target : kTargets)
    if (target.name == name) return &target;
  return nullptr;
}

std::vector<const MmaInstruction*> mma_instructions(const Target& target, ScalarKind input) {
  std::vector<const MmaInstruction*> rows;
  for (const MmaInstruction& row : target.mma_forms)
    if (row.input(input)) rows.push_back(&row);
  return rows;
}

int64_t tmem_load_width(int64_t per_warpgroup) {
  if (per_warpgroup <= 0) return 0;
  for (int64_t width : {32, 16, 8})
    if (per_warpgroup % width == 0) return width;
  return 0;
}

const Target& default_target() { return kTargets[0]; }

std::string target_names() {
  std::string names;
  for (const Target& target : kTargets) names += (names.empty() ? "" : ", ") + std::string(target.name);
  return names;
}

}  // namespace tilec::target
