// backend/cuda/tensor_core_plan.h — what the tensor-core analysis decided for one warp-specialized
// kernel, as one value (tensor_core::Plan), and the constants both read. The analysis
// (tensor_core_analysis.h) builds it; the writer (tensor_core_kernel.h) prints the kernel from it
// alone and cannot change it: every decision (roles, places in shared memory and TMEM, arrival
// counts, how each tile value is held, each mma's and store's plan) is made before the first line
// is written. Internal to the CUDA backend; emit_tensor_core.h summarizes it for tests
// (TensorCorePlan).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "backend/cuda/kernel_plan.h"
#include "backend/cuda/tensor_core_fragments.h"
#include "backend/cuda/tensor_core_prelude.h"
#include "backend/target.h"
#include "ir/ir.h"

namespace tilec::cuda {
struct TensorCorePlan;
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
// `bytes` rounded up to whole swizzle atoms: the room each tile takes in shared memory.
inline int64_t atom_rounded(int64_t bytes) {
  return (bytes + kSwizzleAtomBytes - 1) / kSwizzleAtomBytes * kSwizzleAtomBytes;
}
// The swizzle a tile of `row_bytes`-byte rows takes, as TMA would write it: 128 bytes for whole
// 128-byte rows, 64 or 32 for one row of that length; 0 where none does.
inline int64_t row_swizzle(int64_t row_bytes) {
  if (row_bytes > 0 && row_bytes % kPanelRowBytes == 0) return kPanelRowBytes;
  return row_bytes == 64 || row_bytes == 32 ? row_bytes : 0;
}
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
  // An mma's A or B, or (computed) the input of a computed B the compute threads read element by
  // element (a quantized weight: MmaPlan::b_computed, TensorCoreKernel::shared_element).
  enum class Role { none, a, b, computed } role = Role::none;
  // Filled by `tma_load_async {transposed}`: the slot holds the transpose of the logical tile
  // (B: [N, K], K contiguous, a K-major B; A: [K, M], an MN-major A); `stored()` is the shape in
  // shared memory.
  bool transposed = false;
  size_t row_dimension = 0;  // of the tensor (row_dimension()): its map's form
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
  ScalarKind element = ScalarKind::f32;  // D's: f32, or i32 for 8-bit integer inputs
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
  bool a_registers = false;  // A is a register tile (else a stage buffer TMA fills)
  bool a_transposed = false;  // A is transpose(register tile): staged as the MN-major A it is
  bool registers = false;    // D is a register tile (else a TMEM accumulator, sm_100a)
  bool copy = false;       // D starts as a copy of the accumulator operand (something else reads it)
  int64_t tmem_column = 0;  // sm_100a, registers: where tcgen05.mma computes A·B
  int64_t staging_bytes = 0, staging_offset = 0;  // sm_100a: A from registers through shared memory
  WgmmaShape wgmma;  // sm_90a: the instruction (its wrapper is wgmma_function(wgmma))
  // B computed element by element (a dequantized weight, cast(load W[k, n] : <BK, BN>, bf16)): the
  // compute threads write it into shared memory at b_staging_offset as TMA would have loaded it,
  // an MN-major [K, N] tile in the 128-byte swizzle that `computed_b` describes (no tensor, no
  // barriers; `transposed` for B = transpose(x), x [N, K] written as it is: K-major), and the MMA
  // reads it there (TensorCoreKernel::stage_computed_b).
  bool b_computed = false;
  StageBuffer computed_b;
  int64_t b_staging_offset = 0;
  // Buffers of that staging, computed_b.slot_bytes (rounded to 1024) apart: two on sm_100a with
  // a TMEM accumulator, written in turn, so the B of one K step is written while the MMA of the
  // one before reads the other (Tcgen05Kernel::emit_into_tmem); else one.
  int64_t b_staging_buffers = 1;
  // The bytes between those buffers (whole swizzle atoms).
  int64_t b_staging_buffer_bytes() const { return atom_rounded(computed_b.slot_bytes); }
};

// A TMEM accumulator as a store reads it: from its column `column` on (a column slice of it,
// acc[:, 64:128], reads from 64). `partial`: a part of a concat() reads it, only where the part
// lies; elsewhere the columns read may lie outside the accumulator (`column` may be negative), and
// are clamped into it (Tcgen05Kernel::emit_accumulator_loads).
struct AccumulatorRead {
  const Accumulator* accumulator = nullptr;
  int64_t column = 0;
  bool partial = false;
};

// A rank-1 tile, or one of one row: a bias, a scale (which no thread holds as a register tile).
inline bool is_row(const Type& type) { return type.rank() == 1 || (type.rank() == 2 && type.shape()[0] == 1); }

// Columns from an element of `op`'s column-sliced result to the element of operand `k` it reads:
// a slice x[:, a:b] reads column a + c of x (a); a concat() along axis 1, part k's column
// c - o_k where o_k is the part's first column (-o_k); 0 for every other op.
int64_t operand_column_shift(const Operation& op, size_t k);
// The part of a concat along axis 1 that holds column `column` of its result (the last part for
// a column past its end).
size_t concat_part_at(const Operation& concat, int64_t column);

// The column shift of operand `k`'s element that an element of `op` at `shift` reads: `shift`
// plus operand_column_shift, or, where an elementwise op broadcasts a one-column operand along
// its columns (acc * s[:, 2:3]), that operand's column 0 whatever the element's: kPinnedColumn,
// from which further shifts count (column_is_pinned; pinned_column gives the column).
constexpr int64_t kPinnedColumn = int64_t{1} << 40;
inline bool column_is_pinned(int64_t shift) { return shift >= kPinnedColumn / 2; }
inline int64_t pinned_column(int64_t shift) { return shift - kPinnedColumn; }
int64_t operand_element_shift(const Operation& op, size_t k, int64_t shift);
// Whether `op` reads its operands at other rows, or at columns not a fixed shift away, than the
// element it gives: an interleave; a slice of rows or with a step (x[8:24], x[:, ::2]); a concat
// along axis 0. Such an op is computed per element from what the compute threads compute at
// any position (loads, positions, rows, scalars), never from a register tile.
bool moves_positions(const Operation& op);

// How a store is written: each thread at its elements (direct), or through shared memory and TMA:
// each compute warpgroup writes boxes of `box_rows` x `chunk_columns` (128 bytes a row, 128-byte
// swizzle) into its staging and one of its threads stores them.
struct StorePlan {
  // The TMEM accumulators it reads (sm_100a), in the order the stored expression meets them;
  // each is loaded 32 columns at a time beside the others.
  std::vector<AccumulatorRead> accumulators;
  bool tma = false;
  std::string direct_because;  // why the stores are direct from registers, when !tma (the kernel's summary)
  int64_t chunk_columns = 0, box_rows = 0, buffers = 0;  // buffers: boxes of staging per warpgroup
  int64_t warpgroup_columns = 0;  // of the stored tile, the columns one compute warpgroup writes
  const Value* tensor = nullptr;
  size_t row_dimension = 0;  // of the tensor (row_dimension())
  std::string map;  // the tensor map parameter (TMA)
  // TMA: why its first box waits until the thread's earlier TMA stores have written (bulk
  // operations are not ordered with one another), empty when it need not.
  std::string waits_because;
  // A store of an axis-0 reduction of a held tile or column (`store CA[0, n] max= max(abs(acc),
  // axis = 0)`, `store AMAX[0, 0] max= max(abs(acc))`): the reduction, folded into the store.
  const Operation* folded = nullptr;
};

// The decisions for one kernel. Value -> index maps point into the vectors beside them; every
// vector is in program order (or the kernel's order of declarations), so the kernel written
// from a plan is the same every run.
struct Plan {
  // Moved, never copied: a StorePlan points at the plan's accumulators.
  Plan() = default;
  Plan(Plan&&) = default;
  Plan& operator=(Plan&&) = default;
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;

  // The warp_specialize and its two agents: the producer (TMA loads) and the compute agent.
  const Operation* specialize = nullptr;
  const Operation* producer = nullptr;
  const Operation* compute = nullptr;
  int64_t compute_threads = kWarpgroup;  // 128 or 256: one or two compute warpgroups
  FragmentLayout layout{target::MmaFamily::wgmma, 1};

  std::vector<StageBuffer> stages;
  std::unordered_map<const Value*, size_t> stage_of;  // a stage_buffer's value -> stages
  std::vector<Barrier> barriers;                       // without the register pipes'
  std::unordered_map<const Value*, size_t> barrier_of;
  std::unordered_set<const Value*> register_barriers;  // the register pipes' barriers: no mbarrier
  std::unordered_map<const Value*, RegisterPipe> register_pipes;
  std::vector<Accumulator> accumulators;  // sm_100a: the chains kept in TMEM
  std::unordered_map<const Value*, size_t> accumulator_of;
  // sm_100a: a chain from zeros through mmas kept in registers instead, by its values -> why
  // ("line 12 (reduce_max) reads it ..."): each mma into it is then waited for and read back
  // from TMEM columns of its own. The kernel's summary says so.
  std::unordered_map<const Value*, std::string> registers_because;
  // sm_100a: a loop's result that something other than mmas and stores reads (a row reduction in
  // the epilogue) -> the TMEM accumulator the loop carries: the chain stays in TMEM through the
  // loop, and the result is a register tile read from it once the loop is done.
  std::unordered_map<const Value*, size_t> loaded_after_loop;
  // sm_100a with two compute warpgroups: such a loop result that, besides stores (and what they
  // compute), only column slices read (acc[:, :BF] for a row reduction) -> those slices, in
  // program order; each is read from its columns of the TMEM accumulator into a register tile of
  // its own once the loop is done (a slice of the whole result's register tile would take columns
  // the other warpgroup holds), while the stores still read TMEM. loaded_slices: the slices.
  std::unordered_map<const Value*, std::vector<const Value*>> sliced_after_loop;
  std::unordered_set<const Value*> loaded_slices;
  std::vector<Fragment> fragments;
  std::unordered_map<const Value*, size_t> fragment_of;  // values sharing registers share a fragment
  // transpose(register tile) read only as mmas' A -> that tile: the registers are written to shared
  // memory as they are, rows along K, which the MMA reads as an MN-major A (no element moves).
  std::unordered_map<const Value*, const Value*> transposed_a;
  std::unordered_set<const Value*> lazy;                 // computed element by element at their store
  // Axis-0 reductions of held tiles or columns, folded into the combining stores that read them
  // (StorePlan::folded): no registers, nothing emitted where they stand.
  std::unordered_set<const Operation*> folded_reductions;
  // A lazy row read from a register pipe (a row loaded a stage before it is used): the value the
  // pipe's one write gave, computed where the read is used.
  std::unordered_map<const Value*, const Value*> lazy_reads;
  std::unordered_map<const Operation*, std::vector<size_t>> loop_copies;  // carried tiles copied at entry
  std::vector<const Operation*> mma_ops;
  std::unordered_map<const Operation*, MmaPlan> mma_plans;
  std::vector<const Operation*> store_ops;
  std::unordered_map<const Operation*, StorePlan> store_plans;

  // The shared-memory map, in bytes from the 1024-aligned base (stage buffers and sm_100a's
  // staged A operands first, then these), and its size with the alignment's slack.
  int64_t exchange_offset = -1, exchange_bytes = 0;  // row reductions across warpgroups
  int64_t store_staging_offset = -1;  // TMA stores: kStoreStagingBytes per compute warpgroup
  int64_t accumulator_barrier_offset = 0, tmem_slot_offset = 0;  // sm_100a
  // sm_100a: the barriers, one per staging buffer, tcgen05.commit arrives on once the MMAs reading
  // a computed B's staging buffer into a TMEM accumulator are done (-1: no such mma).
  int64_t computed_b_barrier_offset = -1;
  int64_t shared_bytes = 0;
  int64_t tmem_columns = 0;  // sm_100a: allocated (a power of two from 32), else 0
  // A named barrier id the IR does not use, for the emitter's compute-agent barriers (TMA stores
  // take the next one per compute warpgroup).
  int64_t private_barrier = 0;

  // The register fragment holding `value`, or null.
  const Fragment* fragment(const Value* value) const;
  // The register tile an mma's A comes from: A's fragment, or the one transpose(A) reads.
  const Fragment* a_fragment(const Operation& mma) const;
  // Whether `value` is a stage_read of a stage buffer in shared memory, and that buffer.
  bool is_stage_read(const Value* value) const;
  const StageBuffer& read_stage(const Value* value) const;
  // The TMEM accumulator `value` is in, or null.
  const Accumulator* accumulator(const Value* value) const;
};

// The plan as the plain values tests assert (emit_tensor_core.h).
TensorCorePlan summarize(const Plan& tc);

}  // namespace tilec::cuda::tensor_core
