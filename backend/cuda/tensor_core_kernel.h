// backend/cuda/tensor_core_kernel.h — the writer of one warp-specialized tensor-core kernel
// (emit_tensor_core.h), internal to the CUDA backend. It prints from the plan the analysis made
// (tensor_core_plan.h, tensor_core_analysis.h), which it reads and never changes; what it keeps of
// its own is only what writing needs: the text, fresh names, the prelude helpers it used.
// TensorCoreKernel is what every MMA family shares; what differs by family is its "family
// interface" below, which one subclass per family implements (make_tensor_core_kernel picks it
// from Target::mma):
//   emit_tensor_core.cpp          the summary comment, the kernel's skeleton (barrier init, the
//                                 agents' role switch), control flow, sync ops, TMA loads and the
//                                 launcher;
//   emit_tensor_core_mma.cpp      the shared-memory matrix descriptors both families read;
//   emit_tensor_core_tiles.cpp    register tiles (fragments, elementwise ops, reductions) and the
//                                 epilogue (stores per element or through TMA);
//   emit_tensor_core_wgmma.cpp    WgmmaKernel (sm_90a): WGMMA into register tiles;
//   emit_tensor_core_tcgen05.cpp  Tcgen05Kernel (sm_100a): tcgen05.mma into TMEM, TMEM allocation
//                                 and loads, the instruction descriptor.
// The family's decisions (WgmmaAnalysis, Tcgen05Analysis: tensor_core_analysis.h) are in the same
// file as its writer, so everything one family does is in its file. Adding a target of a new MMA
// family is a new analysis subclass and a new writer subclass (docs/adding_a_target.md).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "backend/cuda/emit_kernel_body.h"
#include "backend/cuda/kernel_plan.h"
#include "backend/cuda/tensor_core_fragments.h"
#include "backend/cuda/tensor_core_plan.h"
#include "backend/cuda/tensor_core_prelude.h"

namespace tilec::cuda::tensor_core {

class TensorCoreKernel {
 public:
  // `tc` is the analysis's plan of `plan`'s kernel; the writer reads it while it lives.
  TensorCoreKernel(const KernelPlan& plan, const Plan& tc, TensorCoreNeeds& needs)
      : plan_(plan), kernel_(*plan.kernel), target_(*needs.target), tc_(tc), needs_(needs), names_(plan.names),
        body_(plan, BodyMode::cta, writer_) {}
  virtual ~TensorCoreKernel() = default;

  // Appends the summary comment, the kernel and its launcher to `out`.
  void write(std::string& out);

 protected:
  struct ElementContext;
  struct MatrixAccess;

  // ------------------------------------------------------------------ the family interface
  // The points of the kernel's skeleton where a family adds its own statements.
  enum class Setup {
    shared_declarations,  // after the last mbarrier's address (kernel scope)
    barrier_init,         // inside thread 0's mbarrier initialization
    before_sync,          // before the __syncthreads() that publishes the barriers
    after_sync,           // after it
    compute_prologue,     // first in the compute agent
    compute_epilogue,     // last in the compute agent
  };
  virtual void emit_setup(Setup point) = 0;
  // A compute agent's release of a stage: an mbarrier_arrive on its empty barrier at `address`.
  virtual void emit_release(const std::string& address) = 0;
  // What orders two pipes' work within one agent, for an event's comment.
  virtual std::string_view event_order() const = 0;
  // The MMA instructions of one mma op (emit_mma prints its comment first); an `async` mma is
  // only issued and committed, a plain one also waited for.
  virtual void issue_mma(const Operation& op, const MmaPlan& plan) = 0;
  // mma_wait {pending = N} (a family that waits_for_mma_groups; the analysis refuses it on others).
  virtual void emit_mma_wait(const Operation& op) = 0;
  // A store element by element: the statements inside its block, each thread writing the
  // elements it holds (or loads from the accumulators) through declare_store_corner and
  // emit_store_element.
  virtual void emit_element_store(const Value* value, const StorePlan& plan, const MatrixAccess& access,
                                  const std::string& row_base, const std::string& column_base) = 0;
  // A store through TMA: the staging of chunk `chunk` of the columns a compute warpgroup writes
  // (plan.warpgroup_columns) into the box (through emit_staging_element); it moves `store_row`
  // and `store_column` (the tile's origin) to the box's.
  virtual void emit_staging_chunk(const Value* value, const StorePlan& plan, std::string& store_row,
                                  std::string& store_column) = 0;
  // Before a store reads the accumulators it names, and after.
  virtual void emit_accumulators_ready(const StorePlan& plan) = 0;
  virtual void emit_accumulators_read(const StorePlan& plan) = 0;
  // After a loop: its results that are read from accumulators once it is done.
  virtual void emit_after_loop(const Operation& op) = 0;

  // ----------------------------------------------------------------------------- emission
  void comment(const Operation& op);

  int64_t total_threads() const { return kWarpgroup + tc_.compute_threads; }

  // setmaxnreg pays only where the register file limits the launch. With one compute warpgroup
  // (256 threads) every thread may already hold 255 registers, above the compute agent's count,
  // and an increase may not lower a count: no rebalancing then.
  bool rebalances_registers() const { return total_threads() * target_.max_thread_registers > target_.register_file; }

  void emit_summary();

  struct TensorMap {
    std::string name;
    const Value* tensor = nullptr;
    ScalarKind element = ScalarKind::bf16;
    int64_t box_rows = 0, box_columns = 0;
    int64_t swizzle_bytes = kPanelRowBytes;
    size_t row_dimension = 0;  // of the tensor (row_dimension()): a 4-D map when a middle lies before the columns
  };

  // Where a load or store of a 2-D tile meets its tensor: the matrix of a rank-2 tensor, or the
  // one a rank-3 tensor's leading (batch) coordinate picks (shape_in_tensor), or, through a box
  // with middle dimensions (row_dimension()), the one the batch and the middle coordinates pick,
  // whose rows lie `pitch` elements apart. `first` is the operand of the first coordinate; the
  // tensor is the operand before it.
  struct MatrixAccess {
    std::string base;           // the matrix's first element: "C", or "(C + static_cast<int64_t>(b) * (M * N))"
    std::string inside;         // "" or "0 <= b && b < B && ": the batch (and middle) exist
    std::string batch;          // the batch coordinate ("" for a rank-2 tensor)
    std::string middle;         // the middle coordinates as one ("" without), -1 when one is outside
    std::string row, column;    // the tile coordinates (element coordinates when `elements`)
    std::string rows, columns;  // the matrix's extents
    std::string pitch;          // elements from one row to the next: columns, or middles · columns
    bool elements = false;      // `load T at [r, c]` / `store T at [r, c]`
    // `store T[i, j] += tile` (max=, min=): each element combined atomically; none overwrites.
    StoreCombine combine = StoreCombine::none;
    // Whether the row (column) coordinate may be negative (never_negative, emit_tensor_core.cpp):
    // the elements there are outside the tensor, read as zeros and not written.
    bool row_may_be_negative = false, column_may_be_negative = false;
    // Whether a coordinate is computed from a value cast to an index (loaded data, a scalar
    // parameter): it may lie past the 32 bits of a TMA coordinate, which saturate (not wrap).
    bool wide = false;
    // The first row (column) of a tile of `extent` rows (columns): coordinate · extent, or the
    // element coordinate itself.
    std::string row_origin(int64_t extent) const;
    std::string column_origin(int64_t extent) const;
    // The TMA form that addresses it (2-D, 3-D with a batch, 4-D with a middle) and its
    // coordinates, innermost first, for a box at column `inner` and row `outer`.
    int tma_rank() const;
    std::string tma_coordinates(const std::string& inner, const std::string& outer) const;
  };
  MatrixAccess matrix_access(const Operation& op, size_t first) const;

  // One tensor map per tensor the stage buffers load from, in stage-buffer order, then one per
  // tensor TMA stores write, in program order.
  std::vector<TensorMap> tensor_maps() const;

  std::string kernel_parameters() const;

  std::string kernel_arguments() const;

  void emit_kernel();

  void emit_top_level(const Operation& op);
  // The kernel-scope scalar ops (the grid's extents, SM count and coordinates) when nothing at
  // kernel scope reads them: each agent computes them after setting its register budget, so
  // they do not live across `setmaxnreg` (ptxas spilled them there: attention at BKV = 128 on
  // sm_100a). Empty when some kernel-scope op needs one: then they stay at kernel scope.
  std::vector<const Operation*> agent_scalars() const;
  // The ring indices and phases of the pipes (stage_advance's results, and the loop-carried and
  // `if` values that only ever hold them, from small constants): below a pipe's depth and 0 or 1.
  // They are int32_t: as int64_t a kernel of nine pipes spent 18 registers on them (gate_up at
  // BM = 64, BN = 192 spilled on sm_90a).
  void compute_ring_counters();
  // The C++ type a scalar value is declared with: int32_t for a ring counter, else its element's.
  std::string_view scalar_type(const Value* value) const;

  void emit_region(const Region& region);

  bool in_agent(const Operation& op, const Operation* agent) const;

  std::string slot_address(const Value* barrier, const Value* slot) const;
  // Whether a compute agent's release of a stage (`arrive`, by one thread of each warpgroup)
  // must first sync the compute threads: every thread waited for the stage, and no MMA between
  // that wait and the release made them all pass it (a loop that ran no step); see emit_op.
  bool release_needs_sync(const Operation& arrive) const;

  void emit_op(const Operation& op);

  void emit_named_barrier(const Operation& op);

  void emit_tma(const Operation& op);

  // A loop over the registers of a fragment of `rows` x `columns`: `name[i] = value;`, with
  // `row` and `column` declared when the value reads them.
  void emit_fragment_loop(int64_t rows, int64_t columns, const std::string& assignment, bool position);

  void declare_fragment(const Fragment& fragment);

  void copy_fragment(const Fragment& to, const Fragment& from);

  // A tile op whose result the compute threads keep in registers.
  void emit_fragment_op(const Operation& op);

  // reduce_max / reduce_min / reduce_sum along the columns: each thread over its registers, then
  // across the threads holding the other columns of its rows.
  void emit_reduction(const Operation& op);
  // A reduce_max / reduce_min / reduce_sum's identity and its step ("{0}" the running value,
  // "{1}" the next), for f32 or i32 elements.
  static std::pair<const char*, std::string> reduction_step(OpKind kind, ScalarKind element);
  void emit_folded_store(const Operation& op, const StorePlan& plan);

  // The W-byte swizzle (W = `swizzle_bytes`: 128, 64 or 32) puts 16-byte chunk c of row `row` of
  // a tile at chunk c ^ swizzle_row_bits(row): the row start's address bits 7.. (row·W/128),
  // modulo the W/16 chunks of a row. As C++ over the expression `row`.
  static std::string swizzle_row_bits(const std::string& row, int64_t swizzle_bytes);
  // The offset of byte `byte` (< W) of row `row` in a tile of W-byte rows in that swizzle: the
  // one address formula of every swizzled write (the TMA-store staging, sm_100a's staged A).
  static std::string swizzled_offset(const std::string& row, const std::string& byte, int64_t swizzle_bytes);

  // The descriptor of K step `step` (32 bytes of K) of a swizzled K-major tile at `base` whose
  // panels (`swizzle_bytes` of each row) are `panel_bytes` apart, for rows starting `row_offset`
  // bytes in.
  static std::string k_major_descriptor(const std::string& base, int64_t panel_bytes, int64_t step,
                                        const std::string& row_offset, int64_t swizzle_bytes);

  // MN-major operands (B as loaded, a transposed A): leading offset = panel bytes (the next 128
  // bytes of M or N), a K step = its K rows of the stored tile; `mn_offset`: bytes to the
  // first panel. K-major ones (A as loaded, a transposed B): k_major_descriptor.
  static std::string operand_descriptor(const StageBuffer& operand, const std::string& slot, int64_t step,
                                        const std::string& k_major_row_offset = "", const std::string& mn_offset = "");
  // An MN-major operand's descriptor for K step `step` (operand_descriptor's, for a staged one too).
  static std::string mn_major_descriptor(const std::string& base, int64_t panel, int64_t step, ScalarKind element,
                                         const std::string& mn_offset, int64_t swizzle);

  void emit_mma(const Operation& op);

  // A register tile `a` written to the shared memory at `staging_offset` as TMA would have
  // loaded it: panels of `swizzle` bytes of each row (128, or 64 or 32 when its rows are that
  // short), `panel` bytes apart; then fence.proxy.async and a barrier of the compute threads, so
  // that `reader` (the MMA instruction, for the comment) may read it: as a K-major A through
  // k_major_descriptor(base, panel, step, ..., swizzle), or, when the mma's A is its transpose
  // (rows along K, columns along M), as an MN-major A through mn_major_descriptor.
  struct StagedA {
    std::string base;  // the staging's uint32_t shared address
    int64_t panel = 0, swizzle = 0;
  };
  StagedA stage_register_a(const Fragment& a, int64_t staging_offset, std::string_view reader);

  // A computed B (MmaPlan::b_computed) written into its staging as TMA would have loaded it (an
  // MN-major [K, N] tile: 64-column panels of K rows of 128 bytes, 128-byte swizzle; for B =
  // transpose(x), x as an [N, K] tile, panels of 64 K columns: a K-major B), compute
  // thread t computing elements t, t + T, t + 2T, ... (T compute threads: consecutive threads
  // take consecutive columns) from the loads and scalars it reads; then
  // fence.proxy.async and a barrier of the compute threads, so that `reader` may read it. The
  // staging's shared address, for the descriptors: operand_descriptor(plan.computed_b, address, step).
  // With `buffer` (a C++ expression), into that one of the plan's staging buffers.
  std::string stage_computed_b(const Operation& mma, const MmaPlan& plan, std::string_view reader,
                               const std::string& buffer = "");
  // An element of the slot `slot` (its uint32_t shared address) of a computed B's input, which TMA
  // filled (StageBuffer::Role::computed): at tile position (`row`, `column`), in the panels and
  // swizzle the buffer's tensor map gives.
  std::string shared_element(const StageBuffer& buffer, const std::string& slot, const std::string& row,
                             const std::string& column);

  struct ElementContext {
    // The register of the fragment being computed; empty where no fragment is (a computed B's
    // elements, at the position variables row and column).
    std::string index = "i";
    bool row_vector = false;   // that fragment is a row vector
    // Columns from the element being computed to the one read: the starts of the column slices
    // (x[:, 64:128]) the read is inside (FragmentLayout::sliced_register for registers).
    int64_t column_shift = 0;
    // The element's row and column as C++ before column_shift: the position variables, or, in
    // an operand of an op that moves positions (moves_positions), where the operand's element
    // lies ((column / 2) in an interleave's part of two, (row + 64) in x[64:]).
    std::string row = "row";
    std::string column_base = "column";
    // Each TMEM accumulator's element (stores on sm_100a), from the registers tcgen05.ld filled,
    // by the accumulator and the column it is read from (AccumulatorRead).
    std::map<std::pair<const Accumulator*, int64_t>, std::string> accumulators;
    // Values computed per element that a stored expression reads more than once, each declared
    // as a local before it (hoist_repeated_elements): their names, by the value and the column
    // shift it is read at.
    std::map<std::pair<const Value*, int64_t>, std::string> named;
    // The tile column of the element read, as C++ (`column`, shifted by a slice).
    std::string column() const;
    // The element is at its fragment's position (no op moved it): registers and the layout's
    // position tests apply.
    bool in_place() const { return column_base == "column" && row == "row"; }
  };

  // Declares each value computed per element that `value`'s element reads more than once (GELU's
  // x = acc + bias, read four times) as a local `const auto`, operands first, and returns
  // `context` naming them, so that the stored expression reads each once.
  ElementContext hoist_repeated_elements(const Value* value, ElementContext context);

  // An iota's element at tile position (row, column): the position along its axis.
  std::string iota_element(const Operation& op, const std::string& row, const std::string& column);

  // A load's element at tile position (row, column): zero outside the tensor.
  std::string load_element(const Operation& op, const std::string& row, const std::string& column);

  // item(): the one element, which each thread computes (a load, arithmetic on it).
  void emit_item(const Operation& op);

  // One element of `value` as a C++ expression: registers of fragments, a TMEM accumulator's
  // element, lazily computed values at (`row`, `column`), scalars.
  std::string element(const Value* value, const ElementContext& context);

  // One element of the tile `op` computes, from its operands' elements.
  std::string op_element(const Operation& op, const ElementContext& context);
  std::string moved_element(const Operation& op, const ElementContext& context);
  // C++ that holds where the element `context` computes lies left of column `bound` of its own
  // tile: from its register where the layout tells it without the thread (a constant once the
  // loop is unrolled), else from the position variable `column`. How a concat picks its part.
  std::string column_below(const ElementContext& context, int64_t bound);

  void emit_store(const Operation& op);

  // Through shared memory and TMA: each compute warpgroup writes its part of the tile box by box
  // (rows of 128 bytes, the 128-byte swizzle: 16-byte chunk c of box row r at chunk c ^ (r % 8))
  // into its staging, and one of its threads stores the box. A staging box is written again only
  // once the store reading it is done (bulk wait_group.read); TMA leaves out what lies outside
  // the tensor.
  void emit_tma_store(const Operation& op, const StorePlan& plan);

  // The stored value's element at (row, column) into the staging box at (box_row, box_column).
  void emit_staging_element(const Value* value, ScalarKind kind, const std::string& box_column,
                            const ElementContext& context);

  // Before a loop over the registers a thread stores: `thread_row` and `thread_column` (the tile
  // position of its register 0: FragmentLayout::thread_row, thread_column), `origin0` and
  // `origin1` (that element's in the tensor, from the tile's first row `row_base` and column
  // `column_base`) and `corner`, its address. In the loop, emit_store_position declares each
  // register's `row_step` and `column_step` from it (constants once the loop is unrolled) and its
  // `row` and `column`; the stores address the element as `corner` plus the steps. Spelled as
  // `base[index0 * pitch + index1]`, the 64-bit offsets of the registers, the same for every store
  // of the tile, were computed once and held across all of them, and so were the masks and
  // bounds at each register, which the thread's position through tilec_opaque now keeps apart:
  // six masked stores of a 128 x 128 accumulator spilled 288 bytes on sm_90a and 396 on sm_100a.
  void declare_store_corner(const MatrixAccess& access, const std::string& row_base, const std::string& column_base,
                            const std::string& thread_row, const std::string& thread_column);
  void emit_store_position(const std::string& row_step, const std::string& column_step);
  // The stored value's element at (row, column), written (or combined) into the tensor where it
  // lies inside, in a loop of declare_store_corner. `owner`: FragmentLayout::owner of the stored
  // tile, the threads that write ("" for all). emit_stored_expression: the same for an expression
  // already spelled (`stored`, of type `element`).
  void emit_store_element(const Value* value, const MatrixAccess& access, const ElementContext& context,
                          const std::string& owner);
  // `condition`: a masked store's mask at the element ("" for none).
  void emit_stored_expression(const std::string& stored, ScalarKind element, const MatrixAccess& access,
                              const std::string& owner, const std::string& condition = "");

  void emit_yield(const Region& region, const std::vector<const Value*>& targets);

  void emit_for(const Operation& op);

  void emit_if(const Operation& op);

  // The launcher: each tensor TMA reads or writes through TilecTmaTensor (the tensor itself, or a
  // copy with rows padded to 16 bytes when TMA cannot address it), then its maps over that.
  void emit_launcher();

  const KernelPlan& plan_;
  const Operation& kernel_;
  const target::Target& target_;
  const Plan& tc_;  // what the analysis decided
  TensorCoreNeeds& needs_;
  NameTable names_;  // the plan's names and the ones the writer adds

  std::string out_;
  CodeWriter writer_{out_};  // every statement of the kernel, at the depth of the blocks around it
  BodyEmitter body_;
  bool position_used_ = false;  // the element expression being built reads `row` / `column`
  std::unordered_set<const Value*> ring_counters_;  // compute_ring_counters
  const Value* store_mask_ = nullptr;  // the mask of the masked store being written (emit_store)
};

// sm_90a (emit_tensor_core_wgmma.cpp): WGMMA into register tiles, each compute warpgroup 64 rows;
// the compute warpgroups release a stage by arriving once each, where the IR releases it
// (defer-mma-releases holds a release one step, behind `mma_wait {pending = 1}`).
class WgmmaKernel final : public TensorCoreKernel {
 public:
  using TensorCoreKernel::TensorCoreKernel;

 private:
  void emit_setup(Setup point) override;
  void emit_release(const std::string& address) override;
  std::string_view event_order() const override;
  // A from shared memory or from registers.
  void issue_mma(const Operation& op, const MmaPlan& plan) override;
  void emit_mma_wait(const Operation& op) override;
  void emit_element_store(const Value* value, const StorePlan& plan, const MatrixAccess& access,
                          const std::string& row_base, const std::string& column_base) override;
  void emit_staging_chunk(const Value* value, const StorePlan& plan, std::string& store_row,
                          std::string& store_column) override;
  void emit_accumulators_ready(const StorePlan& plan) override;
  void emit_accumulators_read(const StorePlan& plan) override;
  void emit_after_loop(const Operation&) override {}  // every loop result is a register tile already
};

// sm_100a (emit_tensor_core_tcgen05.cpp): one thread issues tcgen05.mma into TMEM columns the
// first compute warp allocates; tcgen05.commit releases stages and completes the accumulator
// barrier; register tiles and stores read TMEM with tcgen05.ld (one row per TMEM lane).
class Tcgen05Kernel final : public TensorCoreKernel {
 public:
  using TensorCoreKernel::TensorCoreKernel;

 private:
  void emit_setup(Setup point) override;
  void emit_release(const std::string& address) override;
  std::string_view event_order() const override;
  void issue_mma(const Operation& op, const MmaPlan& plan) override;
  void emit_mma_wait(const Operation& op) override;
  void emit_element_store(const Value* value, const StorePlan& plan, const MatrixAccess& access,
                          const std::string& row_base, const std::string& column_base) override;
  void emit_staging_chunk(const Value* value, const StorePlan& plan, std::string& store_row,
                          std::string& store_column) override;
  void emit_accumulators_ready(const StorePlan& plan) override;
  void emit_accumulators_read(const StorePlan& plan) override;
  void emit_after_loop(const Operation& op) override;
  void emit_tmem_into_fragment(const Fragment& fragment, int64_t tmem_column,
                               const std::function<std::string(const std::string&)>& value);

  // tcgen05.mma's instruction descriptor. Bits 4-5: D is f32. Bits 7-9 and 10-12, A's and B's
  // format within the kind (MmaInput::format: kind::f16 has f16 0 and bf16 1, kind::tf32 tf32 2,
  // kind::f8f6f4 e4m3 0 and e5m2 1; A's and B's may differ). Bits 15 and 16
  // (A's and B's major-ness): 0 for K-major, 1 for MN-major. Bits 17-22: N / 8; bits 24-28: M / 16.
  static uint32_t instruction_descriptor(const MmaPlan& plan, int64_t rows, int64_t columns, bool b_k_major = false,
                                         bool a_k_major = true);

  static std::string mma_function(const target::MmaInstruction& instruction);

  // An accumulator kept in TMEM: the first mma overwrites it, the others add.
  void emit_into_tmem(const Operation& op, const MmaPlan& plan);

  // D in registers: A·B into TMEM columns of this mma's own (A from registers is first written
  // to shared memory as TMA would have), then D = C + A·B read back.
  void emit_into_registers(const Operation& op, const MmaPlan& plan);

  // target::tmem_load_width, noting its tilec_tmem_load_W for the prelude.
  int64_t tmem_load_width(int64_t per_warpgroup);

  // Load `width` columns of each accumulator a store reads (TMEM lane base `lanes`, first column
  // `column`) into values, values_1, ..., and say in `context` where each element is.
  void emit_accumulator_loads(const std::vector<AccumulatorRead>& accumulators, const std::string& lanes,
                              const std::string& column, int64_t width, ElementContext& context);

  // The MMAs into TMEM issued so far are complete when the accumulator barrier's phase is: the
  // issuing thread commits them to the barrier, then emit_accumulator_phase_wait.
  void emit_accumulator_wait();
  // Every compute thread waits for that phase, flips the parity and orders its TMEM reads after.
  void emit_accumulator_phase_wait();

  void emit_tmem_release();
};

// The kernel writer of the target's MMA family, for `tc`, the analysis's plan of `plan`'s kernel.
std::unique_ptr<TensorCoreKernel> make_tensor_core_kernel(const KernelPlan& plan, const Plan& tc,
                                                          TensorCoreNeeds& needs);

}  // namespace tilec::cuda::tensor_core
