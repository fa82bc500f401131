// backend/cuda/tensor_core_analysis.h — what a warp-specialized kernel needs on the tensor cores,
// decided before a line of it is written: analyze_tensor_core_kernel returns the plan
// (tensor_core_plan.h) that the writer (tensor_core_kernel.h) prints.
//
// The analysis finds the warp_specialize and its producer (the agent with the TMA loads)
// and compute agents; gives each stage buffer its role (mma's A: K-major; B: MN-major), its
// tensor map and its 1024-aligned place in shared memory; gives each mbarrier its arrival count
// (sm_90a: one arrival per compute warpgroup where the compute agent arrives; sm_100a:
// tcgen05.commit arrives once); decides how the compute agent holds each tile value (lazily at
// its store, in shared memory, in TMEM, or as a register fragment: tensor_core_fragments.h);
// plans each mma (A from shared memory or registers, D in TMEM or registers) and when stages are
// released; and reports, at the op, everything the emitter does not support. What differs by MMA
// family it asks of the family: the pure virtual functions below, which one subclass per family
// implements (WgmmaAnalysis, Tcgen05Analysis, in the family's file beside its writer).
// Internal to the CUDA backend.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "backend/cuda/kernel_plan.h"
#include "backend/cuda/tensor_core_plan.h"
#include "backend/cuda/tensor_core_prelude.h"
#include "backend/target.h"

namespace tilec {
class DiagnosticEngine;
}

namespace tilec::cuda::tensor_core {

// The plan of a kernel that went through warp-specialize, made by the analysis of the target's MMA
// family; nullopt after reporting at the op's location what the tensor-core backend does not
// support. Notes in `needs` the prelude helpers the plan's instructions take.
std::optional<Plan> analyze_tensor_core_kernel(const KernelPlan& plan, TensorCoreNeeds& needs,
                                               DiagnosticEngine& diagnostics);

// The analysis, building one Plan; a family subclass makes the family's decisions.
class Analysis {
 public:
  Analysis(const KernelPlan& plan, TensorCoreNeeds& needs, DiagnosticEngine& diagnostics);
  virtual ~Analysis() = default;
  // The plan, or nullopt after reporting why the kernel cannot be emitted. Once per analysis.
  std::optional<Plan> run();

 protected:
  // ------------------------------------------------------------ the MMA family's decisions
  // WgmmaAnalysis for WGMMA (each compute warpgroup 64 rows in its registers); Tcgen05Analysis
  // for tcgen05 (one issuing thread, accumulators in TMEM, one row per TMEM lane). analyze() asks
  // them, in this order.
  // Which accumulator chains stay out of the registers (tcgen05: in TMEM; fills tc_.accumulators).
  virtual void find_accumulators() = 0;
  // How many instructions' M make up the CTA's (WGMMA: one per compute warpgroup).
  virtual int64_t mma_units() const = 0;
  // Why no MMA form of A's type (`rows`) takes an accumulator of `m` rows.
  virtual std::string unmatched_rows(int64_t m, const std::vector<const target::MmaInstruction*>& rows) const = 0;
  // The family's part of an mma's plan once its form matched (plan.instruction), and the prelude
  // it needs.
  struct MmaOperands {
    int64_t n = 0;
    const StageBuffer* a = nullptr;         // A from a stage buffer, or
    const Fragment* a_registers = nullptr;  // from registers
    bool a_transposed = false;              // the transpose of a_registers, staged MN-major
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
  // An op whose value may be computed at its store, element by element, instead of held.
  static bool lazy_capable(const Operation& op);

 private:
  // False after reporting why the kernel cannot be emitted.
  bool analyze();
  // The steps of analyze(), in the order it takes them.
  void add_barrier(const Operation& op);
  void add_stage_buffer(const Operation& op);
  bool check_agent(const Operation& agent, bool producer);
  bool check_op(const Operation& op, bool producer);
  bool check_tma(const Operation& op);
  // Whether each register pipe is stored (RegisterPipe): before the lazy values, which may pass
  // through the others.
  void mark_stored_register_pipes();
  void find_lazy_values();
  bool hold_loads_stored_over();
  StageBuffer* stage_operand(const Operation& op, size_t i);
  bool new_fragment(const Operation& op, const Value* value);
  bool new_fragment(const Operation& op, const Value* value, const Type& type);
  bool place_register_pipes();
  bool owns_registers(const Value* value);
  bool hold_if(const Operation& op);
  bool hold_region(const Region& region);
  bool hold_op(const Operation& op);
  bool hold_loop(const Operation& loop);
  std::string tmem_read_width(int64_t columns) const;  // why tcgen05.ld cannot read that width
  bool hold_mma(const Operation& op);
  bool hold_store(const Operation& op);
  bool folded_reduction(const Operation& op);
  bool check_sliced_registers(const Operation& slice);
  bool check_moved_tiles(const Operation& op);
  void plan_store_order();
  bool check_stage_buffers();
  // An mma's B is a stage buffer TMA fills, or computed element by element (MmaPlan::b_computed);
  // any other is refused before the compute agent's tiles are laid out (whose errors, about the
  // computed tile's rows, named the wrong problem).
  bool refuse_computed_b();
  bool refuse_column_broadcasts();
  // An mma's B the compute threads compute (MmaPlan::b_computed): the value they compute per
  // element, B itself or, for B = transpose(x) (a PyTorch-layout [N, K] weight), x; or null for a
  // B TMA loads. `transposed` says which.
  const Value* computed_b(const Operation& mma, bool& transposed) const;
  // A stage buffer holding a computed B's input: every read of it computed where the mma is; false
  // after reporting.
  bool computed_b_input_read_lazily(const StageBuffer& buffer);
  // Whether every reader of `value` is an mma reading it as B (and not as A too).
  bool read_only_as_b(const Value* value);
  // Accumulators in registers stay live across the whole K loop: when they alone need more
  // registers than a compute thread has, nvcc spills them (a warning that says what to change).
  // Warn where nvcc will spill register tiles: the accumulators (true when it warned), else
  // every register tile live at once.
  bool warn_accumulator_registers();
  void warn_register_tiles();
  int64_t compute_thread_registers() const;
  bool place_shared_memory();
  // place_shared_memory's steps: the offsets and tc_.shared_bytes; the error when they overflow
  // the target's budget (false).
  void lay_out_shared_memory();
  bool report_shared_memory_overflow();

 protected:
  const KernelPlan& plan_;
  const Operation& kernel_;
  const target::Target& target_;
  TensorCoreNeeds& needs_;
  DiagnosticEngine& diagnostics_;
  Plan tc_;  // what the analysis decided so far
  // The compute agent's users of each value, in program order.
  std::unordered_map<const Value*, std::vector<const Operation*>> users_;
  int64_t tmem_used_ = 0;  // sm_100a: TMEM columns of the mmas into registers
};

// sm_90a (emit_tensor_core_wgmma.cpp): every accumulator a register tile, 64 rows per compute
// warpgroup; a compute warpgroup arrives once where the IR releases a stage.
class WgmmaAnalysis final : public Analysis {
 public:
  using Analysis::Analysis;

 private:
  void find_accumulators() override;
  int64_t mma_units() const override;
  std::string unmatched_rows(int64_t m, const std::vector<const target::MmaInstruction*>& rows) const override;
  void plan_mma(MmaPlan& plan, const MmaOperands& operands) override;
  bool stores_64_rows() const override;
  int64_t store_columns(int64_t columns) const override;
  int64_t store_box_rows() const override;
  bool place_tensor_memory(int64_t columns) override;
  int64_t release_arrivals() const override;
  bool waits_for_mma_groups() const override;
  bool one_thread_issues_mma() const override;
  bool rows_split_across_warpgroups() const override;
  int64_t family_shared_bytes() const override;
  void place_family_shared(int64_t& offset) override;
};

// sm_100a (emit_tensor_core_tcgen05.cpp): accumulator chains in TMEM, mmas into register tiles
// through TMEM columns of their own; tcgen05.commit arrives once.
class Tcgen05Analysis final : public Analysis {
 public:
  using Analysis::Analysis;

 private:
  void find_accumulators() override;
  int64_t mma_units() const override;
  std::string unmatched_rows(int64_t m, const std::vector<const target::MmaInstruction*>& rows) const override;
  void plan_mma(MmaPlan& plan, const MmaOperands& operands) override;
  bool stores_64_rows() const override;
  int64_t store_columns(int64_t columns) const override;
  int64_t store_box_rows() const override;
  bool place_tensor_memory(int64_t columns) override;
  int64_t release_arrivals() const override;
  bool waits_for_mma_groups() const override;
  bool one_thread_issues_mma() const override;
  bool rows_split_across_warpgroups() const override;
  int64_t family_shared_bytes() const override;
  void place_family_shared(int64_t& offset) override;
  // Whether an mma reads a computed B into a TMEM accumulator (its staging needs a barrier).
  bool computed_b_into_tmem() const;
};

}  // namespace tilec::cuda::tensor_core
