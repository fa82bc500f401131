// backend/cuda/emit_tensor_core_wgmma.cpp — WgmmaKernel (tensor_core_kernel.h): the sm_90a
// family. WGMMA computes 64 accumulator rows per compute warpgroup into its registers; nothing
// but the mbarriers is set up; a compute warpgroup releases a stage with one arrival where the IR
// releases it (after the mma_wait retiring the WGMMAs that read it: defer-mma-releases).
#include <fmt/core.h>

#include <optional>
#include <string>

#include "backend/cuda/tensor_core_analysis.h"
#include "backend/cuda/tensor_core_kernel.h"
#include "backend/cuda/tensor_core_prelude.h"
#include "ir/attribute_keys.h"
#include "ir/ir.h"

namespace tilec::cuda::tensor_core {

// ---------------------------------------------------------------------------- decisions
void WgmmaAnalysis::find_accumulators() {}  // every accumulator is a register fragment

// WGMMA's M is per compute warpgroup.
int64_t WgmmaAnalysis::mma_units() const { return tc_.compute_threads / kWarpgroup; }

std::string WgmmaAnalysis::unmatched_rows(int64_t m, const std::vector<const target::MmaInstruction*>& rows) const {
  return fmt::format("an mma of {} rows on {} compute warpgroups ({} rows each)", m, mma_units(), rows.front()->m);
}

// A register tile is the A operand itself where the instruction reads A from registers (16-bit
// and 8-bit floats); the others (tf32, 8-bit integers) are staged in shared memory (hold_mma's
// staging_bytes).
void WgmmaAnalysis::plan_mma(MmaPlan& plan, const MmaOperands& operands) {
  const target::MmaInstruction& row = *plan.instruction;
  plan.wgmma = {.n = operands.n, .k = row.k, .types = wgmma_types(row, plan.input, plan.input_b),
                .integer = row.accumulator == ScalarKind::i32, .transposes = row.mn_major,
                .register_a = operands.a_registers != nullptr && row.a_registers && !operands.a_transposed,
                .a_mn_major = (operands.a && !operands.a->k_major()) || operands.a_transposed,
                .b_k_major = operands.b->transposed};
  needs_.wgmma_shapes.insert(plan.wgmma);
  // A computed B of an mma whose wait lets it run on (defer-mma-releases: pending = 1) is written
  // into two staging buffers in turn: the next one while this WGMMA still reads its own.
  if (plan.b_computed) {
    const Operation& mma = *operands.b->op;
    const Region& region = *mma.parent_region();
    const size_t next = region.position_of(&mma) + 1;
    const Operation* wait = next < region.operations().size() ? region.operations()[next].get() : nullptr;
    if (wait && wait->kind() == OpKind::mma_wait && wait->int_attr("pending") > 0) plan.b_staging_buffers = 2;
  }
}

bool WgmmaAnalysis::stores_64_rows() const { return false; }  // a warpgroup's 64 rows are half of an M = 128 tile

int64_t WgmmaAnalysis::store_columns(int64_t columns) const { return columns; }  // each warpgroup: its 64 rows

int64_t WgmmaAnalysis::store_box_rows() const { return 64; }  // each warpgroup's rows

bool WgmmaAnalysis::place_tensor_memory(int64_t) { return true; }  // none

int64_t WgmmaAnalysis::release_arrivals() const { return tc_.compute_threads / kWarpgroup; }

// WGMMAs are committed in groups and waited for with wgmma.wait_group: defer-mma-releases makes
// them async, with the waits and the (deferred) releases in the IR.
bool WgmmaAnalysis::waits_for_mma_groups() const { return true; }

bool WgmmaAnalysis::one_thread_issues_mma() const { return false; }  // every thread of a warpgroup issues its WGMMAs

bool WgmmaAnalysis::rows_split_across_warpgroups() const { return false; }

int64_t WgmmaAnalysis::family_shared_bytes() const { return 0; }

void WgmmaAnalysis::place_family_shared(int64_t&) {}

// ---------------------------------------------------------------------------- writing
// Registers need no allocation; a computed B's staging buffers (MmaPlan::b_staging_buffers) take
// turns.
void WgmmaKernel::emit_setup(Setup point) {
  if (point != Setup::compute_prologue) return;
  if (std::any_of(tc_.mma_plans.begin(), tc_.mma_plans.end(),
                  [](const auto& entry) { return entry.second.b_staging_buffers == 2; }))
    writer_.line("uint32_t computed_b_buffer = 0;  // the computed B's staging buffer written next");
}

void WgmmaKernel::emit_release(const std::string& address) {
  writer_.line(
      fmt::format("if (compute_thread % 128 == 0) tilec_mbarrier_arrive({});  // one arrival per warpgroup", address));
}

std::string_view WgmmaKernel::event_order() const {
  return "within one agent: program order, wgmma.fence and wait_group";
}

// WGMMA into the register tile, A from shared memory or from registers.
void WgmmaKernel::issue_mma(const Operation& op, const MmaPlan& plan) {
  const Fragment& result = *tc_.fragment(op.result());
  std::string b_slot = plan_.expression(op.operand(1));
  if (plan.b_computed) {  // written where the WGMMAs before this one read it: after they are done, in every warpgroup
    if (plan.b_staging_buffers == 2)  // the wait after the last step's WGMMAs (pending = 1) retired the ones before
      writer_.line("tilec_wgmma_wait<1>();  // this buffer's readers (two steps before) are done; the other's may run");
    else
      writer_.line("tilec_wgmma_wait<0>();  // the WGMMAs that read the computed B before are done");
    if (tc_.compute_threads > kWarpgroup)
      writer_.line(fmt::format("tilec_named_barrier_sync({}, {});  // and every other warpgroup's", tc_.private_barrier,
                               tc_.compute_threads));
    b_slot = stage_computed_b(op, plan, "wgmma.mma_async", plan.b_staging_buffers == 2 ? "computed_b_buffer" : "");
  }
  const StageBuffer& b = plan.b_computed ? plan.computed_b : tc_.read_stage(op.operand(1));
  const Fragment* a_registers = plan.wgmma.register_a ? tc_.fragment(op.operand(0)) : nullptr;
  if (plan.copy) {
    declare_fragment(result);
    copy_fragment(result, *tc_.fragment(op.operand(2)));
  }
  std::optional<StagedA> staged;  // a register A the instruction reads from shared memory
  if (plan.a_registers && !a_registers) {
    writer_.line("tilec_wgmma_wait<0>();  // the WGMMAs that read the staged A before are done");
    // A staged Aᵀ's rows are K, not M: each warpgroup writes rows every warpgroup's WGMMAs read.
    if (plan.a_transposed && tc_.compute_threads > kWarpgroup)
      writer_.line(fmt::format("tilec_named_barrier_sync({}, {});  // and every other warpgroup's", tc_.private_barrier,
                               tc_.compute_threads));
    staged = stage_register_a(*tc_.a_fragment(op), plan.staging_offset, "wgmma.mma_async");
  }
  const StageBuffer* a_stage = a_registers || staged ? nullptr : &tc_.read_stage(op.operand(0));
  const std::string function = wgmma_function(plan.wgmma);
  std::string packed;
  if (a_registers && plan.instruction->k == 16) {
    // Columns 16s..16s+15 of A are registers 8s..8s+7 of its fragment, two per 32-bit register;
    // packed before the fence so that no instruction touches WGMMA registers between the MMAs.
    packed = names_.unique(a_registers->name + "_pairs");
    writer_.line(fmt::format("uint32_t {}[{}];", packed, a_registers->columns / 4));
    writer_.line("#pragma unroll");
    writer_.line(fmt::format("for (int i = 0; i < {}; ++i) {}[i] = tilec_pack_pair({}[2 * i], {}[2 * i + 1]);",
                             a_registers->columns / 4, packed, a_registers->name, a_registers->name));
  } else if (a_registers) {
    // 8-bit: register r of step s (word 4s + r) holds row half r mod 2 of the 8-column groups
    // 4s + 2(r / 2) and the next, lane q's columns 4q..4q+3 of their 16 (tilec_wgmma_a_bytes moves
    // them between the quad's lanes). In the accumulator layout, register 4g + 2h + c of a lane is
    // column c of its pair in group g, row half h.
    packed = names_.unique(a_registers->name + "_words");
    writer_.line(fmt::format("uint32_t {}[{}];", packed, a_registers->columns / 8));
    writer_.line("#pragma unroll");
    CodeWriter::Block loop = writer_.block(fmt::format("for (int i = 0; i < {}; ++i) {{", a_registers->columns / 8));
    writer_.line("// group 4s + 2(r / 2), row half r mod 2");
    writer_.line("const int first = 4 * (4 * (i / 4) + 2 * (i % 4 / 2)) + 2 * (i % 2);");
    writer_.line(fmt::format("{0}[i] = tilec_wgmma_a_bytes(tilec_pack_bytes({1}[first], {1}[first + 1], "
                             "{1}[first + 4], {1}[first + 5]));",
                             packed, a_registers->name));
  }
  // An accumulator computed before this mma (a fill, a copy, a rescale: anything but a loop's
  // carried tile or an mma's result used in place) is pinned: its registers are final before the
  // fence, so nvcc may not sink that work past it (ptxas would inject a warpgroup.arrive, note
  // C7519, and serialize the WGMMAs). A chain (gemm's K loop) is left as it was.
  const Value* acc = op.operand(2);
  const bool chained = acc->is_argument() || (acc->defining_op() && acc->defining_op()->kind() == OpKind::mma);
  if (!chained || plan.copy) {
    needs_.wgmma_operand_fence = true;
    writer_.line(fmt::format("tilec_wgmma_pin({});  // its fill, copy or rescale stays before the fence", result.name));
  }
  writer_.line("tilec_wgmma_fence();");
  if (a_registers) {
    for (int64_t step = 0; step < a_registers->columns / plan.instruction->k; ++step)
      writer_.line(fmt::format("{0}({1}, {2}[{3}], {2}[{4}], {2}[{5}], {2}[{6}], {7});", function, result.name, packed,
                               4 * step, 4 * step + 1, 4 * step + 2, 4 * step + 3,
                               operand_descriptor(b, b_slot, step)));
  } else if (staged && plan.a_transposed) {
    // The staged tile is Aᵀ as held, K rows of M: an MN-major A, each warpgroup's 64 rows of M one
    // panel further, each K step 16 rows of the swizzle further.
    for (int64_t step = 0; step < tc_.a_fragment(op)->rows / plan.instruction->k; ++step)
      writer_.line(fmt::format("{}({}, {}, {});", function, result.name,
                               mn_major_descriptor(staged->base, staged->panel, step, plan.input,
                                                   fmt::format(" + static_cast<uint32_t>(compute_warpgroup) * {}",
                                                               staged->panel),
                                                   staged->swizzle),
                               operand_descriptor(b, b_slot, step)));
  } else if (staged) {
    // Each warpgroup's 64 rows of the staged (K-major) A.
    const std::string rows = fmt::format(" + static_cast<uint32_t>(compute_warpgroup) * {}", 64 * staged->swizzle);
    for (int64_t step = 0; step < tc_.a_fragment(op)->columns / plan.instruction->k; ++step)
      writer_.line(fmt::format("{}({}, {}, {});", function, result.name,
                               k_major_descriptor(staged->base, staged->panel, step, rows, staged->swizzle),
                               operand_descriptor(b, b_slot, step)));
  } else {
    // Each warpgroup's 64 rows of A: 64 rows further in a K-major A, one panel (128 bytes of M)
    // further in an MN-major one.
    const StageBuffer& a = *a_stage;
    for (int64_t step = 0; step < a.tile.shape()[1] / plan.instruction->k; ++step)
      writer_.line(fmt::format(
          "{}({}, {}, {});", function, result.name,
          operand_descriptor(a, plan_.expression(op.operand(0)), step,
                             fmt::format(" + static_cast<uint32_t>(compute_warpgroup) * {}", 64 * a.swizzle_bytes),
                             fmt::format(" + static_cast<uint32_t>(compute_warpgroup) * {}", a.panel_bytes())),
          operand_descriptor(b, b_slot, step)));
  }
  writer_.line("tilec_wgmma_commit();");
  if (plan.b_staging_buffers == 2) writer_.line("computed_b_buffer ^= 1;");
  if (!op.has(attr::async)) writer_.line("tilec_wgmma_wait<0>();  // an mma completes where it stands");
}

// wgmma.wait_group N: at most N of this warpgroup's committed groups still in flight.
void WgmmaKernel::emit_mma_wait(const Operation& op) {
  const int64_t pending = op.int_attr("pending");
  const Region& region = *op.parent_region();
  const size_t position = region.position_of(&op);
  const bool after_mma = position > 0 && region.operations()[position - 1]->kind() == OpKind::mma;
  std::string_view why = pending > 0 ? "this step's WGMMAs stay in flight; the previous step's are done"
                         : after_mma ? "the stage may be released once its last reader is done"
                                     : "the last step's WGMMAs, then release the slots they read";
  writer_.line(fmt::format("tilec_wgmma_wait<{}>();  // {}", pending, why));
  if (pending > 0 || after_mma) return;
  // The wait's asm names no register: an epilogue's read of an accumulator as integers (a bitcast)
  // could be moved above it, and ptxas then serialized every WGMMA of the kernel (C7514; an nvcc
  // hunt). An empty asm naming each register of the loops' accumulators keeps reads after it.
  for (size_t i = 0; i < position; ++i) {
    const Operation& before = *region.operations()[i];
    if (before.kind() != OpKind::for_) continue;
    for (size_t r = 0; r < before.num_results(); ++r) {
      const Fragment* fragment = tc_.fragment(before.result(r));
      if (!fragment || !fragment->accumulator || fragment->element != ScalarKind::f32) continue;
      writer_.line("#pragma unroll");
      writer_.line(fmt::format("for (int q = 0; q < {}; ++q) tilec_wgmma_hold({}[q]);  // read after the wait",
                               tc_.layout.count(fragment->columns), fragment->name));
    }
  }
}

void WgmmaKernel::emit_element_store(const Value* value, const StorePlan&, const MatrixAccess& access,
                                     const std::string& row_base, const std::string& column_base) {
  const int64_t columns = value->type().shape()[1];
  writer_.line("// WGMMA's accumulator layout: register i of lane l in warp w of the warpgroup holds row");
  writer_.line("// 16w + l/4 + 8·((i/2) mod 2) and column 8·(i/4) + 2·(l mod 4) + (i mod 2).");
  writer_.line(FragmentLayout::position_variables());
  declare_store_corner(access, row_base, column_base, tc_.layout.thread_row(value->type().shape()[0]),
                       tc_.layout.thread_column(columns));
  writer_.line("#pragma unroll");
  CodeWriter::Block loop = writer_.block(fmt::format("for (int i = 0; i < {}; ++i) {{", tc_.layout.count(columns)));
  emit_store_position(tc_.layout.row_step("i", false), tc_.layout.column_step("i", columns));
  emit_store_element(value, access, ElementContext{}, "");
}

void WgmmaKernel::emit_staging_chunk(const Value* value, const StorePlan& plan, std::string& store_row,
                                     std::string& store_column) {
  const ScalarKind kind = value->type().element();
  const int64_t width = plan.chunk_columns;
  // Registers chunk·W/2 .. of WGMMA's layout hold columns chunk·W .. of the warpgroup's 64 rows.
  writer_.line("#pragma unroll");
  {
    CodeWriter::Block loop = writer_.block(fmt::format("for (int j = 0; j < {}; ++j) {{", width / 2));
    writer_.line(fmt::format("const int i = chunk * {} + j;", width / 2));
    writer_.line("const int box_row = warp * 16 + lane / 4 + 8 * ((i / 2) % 2);");
    writer_.line("const int row = compute_warpgroup * 64 + box_row, column = 8 * (i / 4) + 2 * (lane % 4) + i % 2;");
    writer_.line("(void)row;");
    emit_staging_element(value, kind, fmt::format("column - chunk * {}", width), ElementContext{});
  }
  store_row += " + compute_warpgroup * 64";
  store_column = fmt::format("{} + chunk * {}", store_column, width);
}

// Register accumulators are the stored values themselves.
void WgmmaKernel::emit_accumulators_ready(const StorePlan&) {}
void WgmmaKernel::emit_accumulators_read(const StorePlan&) {}

}  // namespace tilec::cuda::tensor_core
