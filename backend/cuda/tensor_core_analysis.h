// backend/cuda/tensor_core_analysis.h — what a warp-specialized kernel needs on the tensor cores,
// found before a line of it is written (tensor_core_kernel.h writes it).
//
// Analysis::analyze finds the warp_specialize and its producer (the agent with the TMA loads)
// and compute agents; gives each stage buffer its role (mma's A: K-major; B: MN-major), its
// tensor map and its 1024-aligned place in shared memory; gives each mbarrier its arrival count
// (sm_90a: one arrival per compute warpgroup where the compute agent arrives; sm_100a:
// tcgen05.commit arrives once); decides how the compute agent holds each tile value (lazily at
// its store, in shared memory, in TMEM, or as a register fragment: tensor_core_fragments.h);
// plans each mma (A from shared memory or registers, D in TMEM or registers) and when stages are
// released; and reports, at the op, everything the emitter does not support. What differs by MMA
// family it asks of the family (the pure virtual functions below, implemented by the family's
// kernel writer).
// Internal to the CUDA backend: only the tensor-core emitter (tensor_core_kernel.h) includes it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "backend/cuda/kernel_plan.h"
#include "backend/cuda/tensor_core_fragments.h"
#include "backend/cuda/tensor_core_prelude.h"
#include "backend/target.h"

namespace tilec {
class DiagnosticEngine;
}

namespace tilec::cuda::tensor_core {

inline constexpr int64_t kWarpgroup = 128;
inline constexpr int64_t kPanelRowBytes = 128;
inline constexpr int64_t kSwizzleAtomBytes = 1024;  // 8 rows of 128 bytes
inline constexpr int64_t kMmaKBytes = 32;           // the K bytes of one WGMMA / tcgen05.mma step

// MMA inputs and the instructions that take them are rows of the target (target.h, Target::mma_forms).
// Elements in one 128-byte swizzle row: 32 tf32, 64 16-bit, 128 8-bit.
inline int64_t panel_columns(ScalarKind element) { return kPanelRowBytes / byte_size(element); }
// K of one MMA step, 32 bytes of it: 8 for tf32, 16 for 16-bit inputs, 32 for 8-bit ones (every
// row of Target::mma_forms has this K; a unit test holds them to it).
inline int64_t mma_k(ScalarKind element) { return kMmaKBytes / byte_size(element); }
// The WGMMA wrapper's type: A's PTX type, then "_" and B's when they differ ("e4m3_e5m2").
inline std::string wgmma_types(const target::MmaInstruction& form, ScalarKind a, ScalarKind b) {
  const std::string a_ptx(form.input(a)->ptx);
  return a == b ? a_ptx : a_ptx + "_" + std::string(form.input(b)->ptx);
}
inline constexpr int64_t kStoreStagingBytes = 16384;  // per compute warpgroup, for TMA stores
inline constexpr int64_t kLastNamedBarrier = 15;      // bar.sync ids are 0..15

struct StageBuffer {
  const Operation* op = nullptr;
  std::string name;  // uint32_t shared address of slot 0
  Type tile;
  int64_t depth = 0, slot_bytes = 0, offset = 0;
  const Value* full = nullptr;
  const Value* empty = nullptr;
  const Value* tensor = nullptr;  // filled by tma_load_async from this tensor
  std::string map;                // its CUtensorMap parameter
  enum class Role { none, a, b } role = Role::none;
  // Filled by `tma_load_async {transposed}`: the slot holds the transpose of the logical tile
  // (B: [N, K], K contiguous, a K-major B; A: [K, M], an MN-major A); `stored()` is the shape in
  // shared memory.
  bool transposed = false;
  std::vector<int64_t> stored() const {
    return transposed ? std::vector<int64_t>{tile.shape()[1], tile.shape()[0]} : tile.shape();
  }
  bool k_major() const { return (role == Role::a) != transposed; }
  // The swizzle's row: 128 bytes, or 64 or 32 for a K-major tile whose rows (K) are that short
  // (bf16 BK = 32 or 16); TMA fills one panel (rows x swizzle_bytes) per box.
  int64_t swizzle_bytes = kPanelRowBytes;
  int64_t panel_columns() const { return swizzle_bytes / byte_size(tile.element()); }
  int64_t panels() const { return stored()[1] / panel_columns(); }
  int64_t panel_bytes() const { return stored()[0] * swizzle_bytes; }
};

struct Barrier {
  const Operation* op = nullptr;
  std::string name;  // uint32_t shared address of slot 0
  int64_t slots = 0, arrivals = 0, offset = 0;
  std::string purpose;
};

struct Accumulator {
  std::string name;  // sm_90a: the float array; sm_100a: the `started` flag's prefix
  const Operation* zeros = nullptr;
  int64_t rows = 0, columns = 0, tmem_column = 0;
  ScalarKind input = ScalarKind::bf16;
};

// A tile the compute threads hold in registers (tensor_core_fragments.h says which elements).
struct Fragment {
  std::string name;  // the array
  ScalarKind element = ScalarKind::f32;
  int64_t rows = 0, columns = 0;  // columns == 1: a row vector
  bool accumulator = false;       // an mma writes it
};

// A value crossing the stages of a pipelined loop inside the compute agent (pipe<tile, reg>):
// written and read by the same threads in program order, so a read is the last value written.
// With one write that every read follows in its block, the reads are the written value's
// registers. Otherwise (a loop-carried value: written before the loop and in it, read in the
// loop before the write) the pipe is *stored*: registers of its own, which each write copies
// into and each read copies out of (a later write must not change what an earlier read gave).
struct RegisterPipe {
  const Operation* op = nullptr;
  std::vector<const Operation*> writes, reads;  // in program order
  bool stored = false;
};

struct MmaPlan {
  ScalarKind input = ScalarKind::bf16;    // A's element type
  ScalarKind input_b = ScalarKind::bf16;  // B's: the same, or the other 8-bit float (e4m3 x e5m2)
  const target::MmaInstruction* instruction = nullptr;  // the target's MMA form it matched
  bool registers = false;  // D is a register tile (else a TMEM accumulator, sm_100a)
  bool copy = false;       // D starts as a copy of the accumulator operand (something else reads it)
  int64_t tmem_column = 0;  // sm_100a, registers: where tcgen05.mma computes A·B
  int64_t staging_bytes = 0, staging_offset = 0;  // sm_100a: A from registers through shared memory
  WgmmaShape wgmma;  // sm_90a: the instruction (its wrapper is wgmma_function(wgmma))
};

// How a store is written: each thread at its elements (direct), or through shared memory and TMA:
// each compute warpgroup writes boxes of `box_rows` x `chunk_columns` (128 bytes a row, 128-byte
// swizzle) into its staging and one of its threads stores them.
struct StorePlan {
  // The TMEM accumulators it reads (sm_100a), in the order the stored expression meets them;
  // each is loaded 32 columns at a time beside the others.
  std::vector<const Accumulator*> accumulators;
  bool tma = false;
  int64_t chunk_columns = 0, box_rows = 0, buffers = 0;  // buffers: boxes of staging per warpgroup
  const Value* tensor = nullptr;
  std::string map;  // the tensor map parameter (TMA)
};

// The analysis and everything it found; the emitter derives from it and reads its members.
class Analysis {
 public:
  Analysis(const KernelPlan& plan, TensorCoreNeeds& needs, DiagnosticEngine& diagnostics);
  virtual ~Analysis() = default;

 protected:
  // ------------------------------------------------------------ the MMA family's decisions
  // Implemented by the family's kernel writer (tensor_core_kernel.h: WgmmaKernel for WGMMA,
  // each compute warpgroup 64 rows in its registers; Tcgen05Kernel for tcgen05, one issuing
  // thread, accumulators in TMEM, one row per TMEM lane). analyze() asks them, in this order.
  // Which accumulator chains stay out of the registers (tcgen05: in TMEM; fills accumulators_).
  virtual void find_accumulators() = 0;
  // How many instructions' M make up the CTA's (WGMMA: one per compute warpgroup).
  virtual int64_t mma_units() const = 0;
  // Why no MMA form of A's type (`rows`) takes an accumulator of `m` rows.
  virtual std::string unmatched_rows(int64_t m, const std::vector<const target::MmaInstruction*>& rows) const = 0;
  // The family's part of an mma's plan once its form matched (plan.instruction), and the prelude
  // it needs.
  struct MmaOperands {
    int64_t m = 0, n = 0, k = 0;
    const StageBuffer* a = nullptr;         // A from a stage buffer, or
    const Fragment* a_registers = nullptr;  // from registers
    const StageBuffer* b = nullptr;
  };
  virtual void plan_mma(MmaPlan& plan, const MmaOperands& operands) = 0;
  // Whether a 64-row tile may be stored (the rows of an M = 64 accumulator; directly).
  virtual bool stores_64_rows() const = 0;
  // The columns of a `columns`-wide stored tile one compute warpgroup writes, and the rows of
  // one TMA store box.
  virtual int64_t store_columns(int64_t columns) const = 0;
  virtual int64_t store_box_rows() const = 0;
  // Tensor memory for accumulators of `columns` columns in all; false after reporting.
  virtual bool place_tensor_memory(int64_t columns) = 0;
  // Arrivals per phase on a barrier the compute agent releases (WGMMA: one per warpgroup).
  virtual int64_t release_arrivals() const = 0;
  // Whether the MMAs are waited for in groups (WGMMA's wait_group): the IR's async mmas and
  // mma_waits (defer-mma-releases) are then this family's; otherwise the kernel has none.
  virtual bool waits_for_mma_groups() const = 0;
  // Whether one thread issues the MMAs for the CTA (tcgen05): the IR's `issuer` waits
  // (issuer-only-waits) are then this family's; otherwise every MMA thread waits itself.
  virtual bool one_thread_issues_mma() const = 0;
  // Whether a row's columns are split across compute warpgroups (row reductions then exchange
  // partial results through shared memory).
  virtual bool rows_split_across_warpgroups() const = 0;
  // Shared memory the family keeps beside the barriers, and its placement at `offset`.
  virtual int64_t family_shared_bytes() const = 0;
  virtual void place_family_shared(int64_t& offset) = 0;

  std::string mma_input_names() const;
  // Reports `what` at `op` as unsupported by this backend; returns false.
  bool unsupported(const Operation& op, const std::string& what);
  bool refuse_tile_grid();  // a `grid tiles` kernel with mma: what to write instead
  // False after reporting why the kernel cannot be emitted.
  bool analyze();
  // The register fragment holding `value`, or null.
  const Fragment* fragment(const Value* value) const;
  bool is_stage_read(const Value* value) const;
  // An op whose value may be computed at its store, element by element, instead of held.
  static bool lazy_capable(const Operation& op);

 private:
  // The steps of analyze(), in the order it takes them.
  void add_barrier(const Operation& op);
  void add_stage_buffer(const Operation& op);
  bool check_agent(const Operation& agent, bool producer);
  bool check_op(const Operation& op, bool producer);
  bool check_tma(const Operation& op);
  void find_lazy_values();
  StageBuffer* stage_operand(const Operation& op, size_t i);
  bool new_fragment(const Operation& op, const Value* value);
  bool new_fragment(const Operation& op, const Value* value, const Type& type);
  bool place_register_pipes();
  bool owns_registers(const Value* value);
  bool hold_region(const Region& region);
  bool hold_op(const Operation& op);
  bool hold_loop(const Operation& loop);
  bool hold_mma(const Operation& op);
  bool hold_store(const Operation& op);
  bool check_stage_buffers();
  bool place_shared_memory();

 protected:
  const KernelPlan& plan_;
  const Operation& kernel_;
  const target::Target& target_;
  TensorCoreNeeds& needs_;
  DiagnosticEngine& diagnostics_;
  NameTable names_;

  FragmentLayout layout_{target::MmaFamily::wgmma, 1};
  std::unordered_map<const Value*, RegisterPipe> register_pipes_;
  std::unordered_set<const Value*> register_barriers_;
  std::unordered_map<const Value*, std::vector<const Operation*>> users_;  // in the compute agent
  std::unordered_set<const Value*> lazy_;
  std::vector<Fragment> fragments_;
  std::unordered_map<const Value*, size_t> fragment_of_;
  std::unordered_map<const Operation*, MmaPlan> mma_plans_;
  std::unordered_map<const Operation*, std::vector<size_t>> loop_copies_;  // carried tiles copied at entry
  int64_t tmem_used_ = 0, exchange_offset_ = -1;

  const Operation* specialize_ = nullptr;
  const Operation* producer_ = nullptr;
  const Operation* compute_ = nullptr;
  std::vector<const Operation*> agents_;
  int64_t compute_threads_ = kWarpgroup;
  std::vector<StageBuffer> stages_;
  std::unordered_map<const Value*, size_t> stage_of_;
  std::vector<Barrier> barriers_;
  std::unordered_map<const Value*, size_t> barrier_of_;
  std::vector<Accumulator> accumulators_;
  std::unordered_map<const Value*, size_t> accumulator_of_;
  std::unordered_map<const Operation*, StorePlan> store_plans_;
  std::vector<const Operation*> store_ops_;
  int64_t store_staging_offset_ = -1;  // TMA stores: kStoreStagingBytes per compute warpgroup
  // A named barrier id the IR does not use, for the emitter's compute-agent barriers (TMA stores
  // take the next one per compute warpgroup).
  int64_t private_barrier_ = 0;
  std::vector<const Operation*> mma_ops_;
  int64_t shared_bytes_ = 0, tmem_columns_ = 0, accumulator_barrier_offset_ = 0, tmem_slot_offset_ = 0;
};

}  // namespace tilec::cuda::tensor_core
