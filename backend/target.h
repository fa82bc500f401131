// backend/target.h — what tilec knows about a GPU target, in one place.
//
// A Target is resolved once from `--target` (tools/pipeline_driver.cpp) and handed to the passes
// (PassContext::target) and the CUDA backend (CudaEmitOptions::target). It holds the machine
// model the scheduler reads, the budgets the passes and the emitter check (shared memory,
// registers, tensor memory, cluster size), the names nvcc and `tilec emulate` build it under,
// and its tensor-core family. No other file compares target names: code that differs between
// targets asks the Target a question (`target.mma == MmaFamily::tcgen05`, a budget), so a new
// target is a new row of the table in target.cpp (and, for a new MMA family, its emitter).
// docs/adding_a_target.md walks through it.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "backend/machine_model.h"
#include "ir/types.h"

namespace tilec::target {

// How a target's tensor cores are driven; the tensor-core emitter has one branch per family.
enum class MmaFamily {
  // Hopper's warpgroup MMA: each warpgroup computes 64 accumulator rows into its registers;
  // the compute warpgroups arrive on a stage's `empty` barrier when their MMAs have read it.
  wgmma,
  // Blackwell's tcgen05.mma: one thread issues for the CTA, accumulators live in tensor memory
  // (TMEM) and tcgen05.commit arrives on the barriers when the MMAs are done.
  tcgen05,
};

// One form of tensor-core MMA the backend emits for a target: a row of Target::mma_forms. The
// tensor-core analysis accepts an `mma` only where a row takes its A type, its rows (M) and its
// columns (N), and the operand sources and layouts it has; the emitter reads K and the kind
// from the row it matched. Adding an MMA shape is adding a row (docs/adding_a_target.md).
// An input type an MMA form takes, with its spellings.
struct MmaInput {
  ScalarKind type;
  std::string_view ptx;  // WGMMA's .atype/.btype: "bf16", "f16", "e4m3", "e5m2", "tf32", "s8", "u8"
  uint32_t format = 0;   // tcgen05's instruction-descriptor format within the kind (A: bits 7-9, B: 10-12)
};

struct MmaInstruction {
  // The inputs' class: tcgen05's `kind::` ("f16" for bf16 and f16, "f8f6f4", "tf32", "i8"); WGMMA's
  // rows name the same classes. `what` says it for a message ("16-bit", "8-bit", "tf32").
  std::string_view kind;
  std::string_view what;
  std::string_view about;  // the inputs in a few words, for the comment on its .cu wrapper
  std::span<const MmaInput> inputs;  // A's element types; B's is the same (8-bit: either one)
  // D's element type: f32, or s32 for integer inputs; tcgen05's instruction-descriptor D format
  // (bits 4-5: 1 is F32, 2 is S32). WGMMA spells D's type .f32 or .s32.
  ScalarKind accumulator = ScalarKind::f32;
  uint32_t d_format = 1;
  int64_t m = 0;           // accumulator rows of one instruction (WGMMA: per compute warpgroup)
  int64_t k = 0;           // K of one instruction, in elements (32 bytes of K)
  int64_t n_multiple = 0;  // N: a multiple of this (whole 128-byte panels of an MN-major B) ...
  int64_t n_max = 0;       // ... and at most this,
  int64_t n_min = 0;       // or a power of two from this below n_multiple (one narrower panel);
  int64_t n_step = 0;      // with a K-major B (N its rows), any multiple of this up to n_max
  // The instruction reads A from registers (WGMMA's register-A form, 16-bit inputs); otherwise a
  // register-tile A is first written to shared memory and read from there.
  bool a_registers = false;
  bool mn_major = false;       // operands may be MN-major (else both K-major)

  // Whether the backend emits this form N columns wide, B stored K-major ([N, K]: N its rows, in
  // 8-row swizzle atoms) or MN-major ([K, N]: N in 128-byte panels).
  bool takes_n(int64_t n, bool b_k_major) const {
    if (b_k_major && n % n_step == 0) return n > 0 && n <= n_max;
    if (n % n_multiple == 0) return n > 0 && n <= n_max;
    return n >= n_min && n < n_multiple && (n & (n - 1)) == 0;
  }

  // The input of this type, or nullptr.
  const MmaInput* input(ScalarKind type) const {
    for (const MmaInput& candidate : inputs)
      if (candidate.type == type) return &candidate;
    return nullptr;
  }
};

struct Target {
  std::string_view name;           // "sm_90a": --target, the module's `target` attribute
  std::string_view architecture;   // nvcc's: compute_<architecture>, sm_<architecture> ("90a")
  // Defined by nvcc while it compiles device code for this target's arch-specific features;
  // the tensor-core kernels' bodies are guarded by it (else they trap).
  std::string_view feature_macro;  // "__CUDA_ARCH_FEAT_SM90_ALL"
  // Defined by `tilec emulate` when the CPU runs a .cu built for this target.
  std::string_view emulate_macro;  // "TILEC_EMULATE_SM90A"
  const MachineModel& machine_model;
  MmaFamily mma;
  std::string_view mma_summary;    // a few words for the kernel's summary comment

  int64_t shared_memory_bytes;     // dynamic shared memory one CTA may use
  int64_t register_file;           // 32-bit registers per SM (a CTA of the tensor-core kernels)
  int64_t max_thread_registers;    // a thread's registers at most
  int64_t tensor_memory_columns;   // TMEM columns per CTA (0: no tensor memory)
  int64_t max_cluster;             // the largest (portable) thread-block cluster
  // setmaxnreg counts warp-specialize gives its agents: the producer warpgroup lowers its count
  // so the compute warpgroups may raise theirs (one producer and two compute warpgroups fit
  // the register file).
  int64_t producer_registers;
  int64_t compute_registers;
  std::span<const MmaInstruction> mma_forms;  // the MMA forms its backend emits (target.cpp)
};

// Every target tilec compiles for, in the order --help lists them.
std::span<const Target> targets();

// The target of this name, or nullptr.
const Target* find_target(std::string_view name);

// The rows of target.mma_forms that take A's element type `input`, in table order.
std::vector<const MmaInstruction*> mma_instructions(const Target& target, ScalarKind input);

// The columns one tcgen05.ld.32x32b reads into each thread from a TMEM tile of which each
// compute warpgroup holds `per_warpgroup` columns: the widest of 32, 16 and 8 (.x32, .x16, .x8)
// that divides them, loaded as many times as it takes (48: three .x16); 0 where none does (not a
// multiple of 8). The analysis refuses a tile of width 0, and the tcgen05 emitter loads with this
// width.
int64_t tmem_load_width(int64_t per_warpgroup);

// The target a PassContext or CudaEmitOptions gets when nobody names one: sm_90a.
const Target& default_target();

// "sm_90a, sm_100a": the names, for a message about an unknown target.
std::string target_names();

}  // namespace tilec::target
