// backend/cuda/emit_tensor_core_tcgen05.cpp — Tcgen05Kernel (tensor_core_kernel.h): the sm_100a
// family. The first compute warp allocates TMEM columns for the accumulators; one compute thread
// issues tcgen05.mma (only it waits on the stages' full barriers) and tcgen05.commit, which
// releases a stage and completes the accumulator barrier when the MMAs are done; register tiles
// and stores read TMEM back with tcgen05.ld, one row per TMEM lane.
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "backend/cuda/cuda_syntax.h"
#include "backend/cuda/tensor_core_analysis.h"
#include "backend/cuda/tensor_core_kernel.h"
#include "ir/ir.h"

namespace tilec::cuda::tensor_core {

// ---------------------------------------------------------------------------- decisions
// The values joined by mma (accumulator → result) and loops (init → argument →
// result, yield → argument) form groups; a group starting from one f32 `zeros` whose values
// only mmas reading shared memory, loops and lazy stores touch stays in TMEM.
void Tcgen05Analysis::find_accumulators() {
  std::unordered_map<const Value*, const Value*> parent;
  std::function<const Value*(const Value*)> root = [&](const Value* value) -> const Value* {
    auto it = parent.find(value);
    if (it == parent.end() || it->second == value) return value;
    return it->second = root(it->second);
  };
  auto unite = [&](const Value* x, const Value* y) { parent[root(x)] = root(y); };
  std::vector<const Value*> values;  // in program order
  walk(tc_.compute->region(), [&](const Operation& op) {
    if (op.kind() == OpKind::zeros) values.push_back(op.result());
    if (op.kind() == OpKind::mma) {
      unite(op.operand(2), op.result());
      values.push_back(op.result());
    }
    if (op.kind() != OpKind::for_) return;
    const Region& body = op.region();
    for (size_t i = 1; i < body.num_arguments(); ++i) {
      if (!body.argument(i)->type().is_tile()) continue;
      unite(op.operand(2 + i), body.argument(i));
      unite(op.result(i - 1), body.argument(i));
      unite(body.terminator()->operand(i - 1), body.argument(i));
      values.push_back(body.argument(i));
      values.push_back(op.result(i - 1));
    }
  });
  std::map<const Value*, std::vector<const Value*>> groups;
  std::vector<const Value*> order;
  for (const Value* value : values) {
    auto& members = groups[root(value)];
    if (members.empty()) order.push_back(root(value));
    if (std::find(members.begin(), members.end(), value) == members.end()) members.push_back(value);
  }
  for (const Value* key : order) {
    const std::vector<const Value*>& members = groups[key];
    const Value* zeros = nullptr;
    const Operation* reader = nullptr;  // the first user that keeps the chain out of TMEM
    const Operation* computed_a = nullptr;  // the first mma into it whose A or B is not a loaded stage
    std::vector<const Value*> loaded;   // loop results read other than by mmas and stores
    std::vector<const Value*> sliced;   // those read other than by stores only through column slices (two warpgroups)
    bool ok = true, written = false;
    for (const Value* value : members) {
      const Operation* def = value->defining_op();
      if (def && def->kind() == OpKind::zeros) {
        ok = ok && !zeros && (value->type().element() == ScalarKind::f32 || value->type().element() == ScalarKind::i32);
        zeros = value;
      } else if (def && def->kind() == OpKind::mma) {
        // A loaded; B loaded or computed (written into shared memory where the mma is: its staging
        // is rewritten once the MMA before it is done, computed_b_barrier). Any other B is refused.
        const bool loaded = tc_.is_stage_read(def->operand(0));
        if (!loaded && !computed_a) computed_a = def;
        ok = ok && loaded;
        written = true;
      } else if (!def && !value->is_argument()) {
        ok = false;
      }
      bool chained_use = false;
      const Operation* unheld = nullptr;
      bool only_slices = tc_.compute_threads > kWarpgroup;  // every user not held is a column slice
      for (const Operation* user : users_[value]) {
        bool chained =
            (user->kind() == OpKind::mma && user->operand(2) == value) || user->kind() == OpKind::for_ ||
            (user->kind() == OpKind::yield && user->parent_op() && user->parent_op()->kind() == OpKind::for_);
        const bool held = chained || user->kind() == OpKind::store ||
                          (lazy_capable(*user) && tc_.lazy.count(user->result()));
        chained_use = chained_use || chained;
        if (!held && !unheld) unheld = user;
        if (!held) only_slices = only_slices && user->kind() == OpKind::slice && !moves_positions(*user);
      }
      // A loop's result nothing chains on from is read into registers after the loop instead.
      if (unheld && def && def->kind() == OpKind::for_ && !chained_use) {
        (only_slices ? sliced : loaded).push_back(value);
      } else if (unheld) {
        if (!reader) reader = unheld;
        ok = false;
      }
      if (def && def->kind() != OpKind::zeros && def->kind() != OpKind::mma && def->kind() != OpKind::for_) ok = false;
    }
    if (!ok || !zeros || !written) {
      std::string why;
      if (zeros && written && reader)
        why = fmt::format("line {} ({}) reads it (TMEM keeps accumulators only mmas and stores read)",
                          reader->location().line, reader->name());
      else if (zeros && written && computed_a)
        why = fmt::format("the mma of line {} takes an A computed in registers (TMEM keeps accumulators of mmas "
                          "whose A is a loaded tile)",
                          computed_a->location().line);
      if (!why.empty())
        for (const Value* value : members) tc_.registers_because[value] = why;
      continue;
    }
    for (const Value* value : loaded) tc_.loaded_after_loop[value] = tc_.accumulators.size();
    for (const Value* value : sliced)
      for (const Operation* slice : users_[value])  // the ones stores do not compute from TMEM themselves
        if (!tc_.lazy.count(slice->result())) {
          tc_.sliced_after_loop[value].push_back(slice->result());
          tc_.loaded_slices.insert(slice->result());
        }
    Accumulator accumulator;
    accumulator.name = plan_.expression(zeros);
    accumulator.zeros = zeros->defining_op();
    accumulator.rows = zeros->type().shape()[0];
    accumulator.columns = zeros->type().shape()[1];
    accumulator.element = zeros->type().element();
    for (const Value* value : members)
      if (!tc_.loaded_after_loop.count(value)) tc_.accumulator_of[value] = tc_.accumulators.size();
    tc_.accumulators.push_back(accumulator);
  }
}

// tcgen05.mma's M is the CTA's.
int64_t Tcgen05Analysis::mma_units() const { return 1; }

// "M = 128 or 64": the rows' M.
std::string Tcgen05Analysis::unmatched_rows(int64_t m, const std::vector<const target::MmaInstruction*>& rows) const {
  std::vector<int64_t> ms;
  for (const target::MmaInstruction* candidate : rows) ms.push_back(candidate->m);
  return fmt::format("an mma of {} rows (tcgen05.mma M = {})", m, fmt::join(ms, " or "));
}

// A D in registers is computed in TMEM columns of its own (placed after the accumulators') and
// read back; an A from registers goes through shared memory (hold_mma's staging_bytes: tcgen05.mma
// reads no A from registers).
void Tcgen05Analysis::plan_mma(MmaPlan& plan, const MmaOperands& operands) {
  if (plan.registers) {
    plan.tmem_column = tmem_used_;
    tmem_used_ += operands.n;
  }
  if (plan.b_computed && !plan.registers) plan.b_staging_buffers = 2;
  needs_.tcgen05_kinds.emplace(plan.instruction->kind, plan.instruction);
}

bool Tcgen05Analysis::stores_64_rows() const { return true; }  // TMEM layout F, lanes 0..15 of each warp

// Each warpgroup stores its share of the columns (one row per TMEM lane).
int64_t Tcgen05Analysis::store_columns(int64_t columns) const { return columns * kWarpgroup / tc_.compute_threads; }

int64_t Tcgen05Analysis::store_box_rows() const { return 128; }  // one row per TMEM lane

// TMEM is allocated in powers of two from 32 columns.
bool Tcgen05Analysis::place_tensor_memory(int64_t columns) {
  tc_.tmem_columns = 32;
  while (tc_.tmem_columns < columns) tc_.tmem_columns *= 2;
  if (tc_.tmem_columns > target_.tensor_memory_columns)
    return unsupported(kernel_, fmt::format("accumulators of {} TMEM columns (the budget is {})", columns,
                                            target_.tensor_memory_columns));
  return true;
}

int64_t Tcgen05Analysis::release_arrivals() const { return 1; }  // tcgen05.commit arrives once

bool Tcgen05Analysis::waits_for_mma_groups() const { return false; }  // tcgen05.commit releases when the MMAs are done

// One thread issues tcgen05.mma: issuer-only-waits leaves the stages' full waits to it.
bool Tcgen05Analysis::one_thread_issues_mma() const { return true; }

bool Tcgen05Analysis::rows_split_across_warpgroups() const { return tc_.compute_threads > kWarpgroup; }

int64_t Tcgen05Analysis::family_shared_bytes() const { return computed_b_into_tmem() ? 32 : 16; }

bool Tcgen05Analysis::computed_b_into_tmem() const {
  return std::any_of(tc_.mma_plans.begin(), tc_.mma_plans.end(),
                     [](const auto& entry) { return entry.second.b_computed && !entry.second.registers; });
}

// The accumulator barrier, the TMEM base address tcgen05.alloc writes, and the barriers of the
// MMAs that read a computed B's staging buffers (two) into a TMEM accumulator.
void Tcgen05Analysis::place_family_shared(int64_t& offset) {
  tc_.accumulator_barrier_offset = offset;
  offset += 8;
  tc_.tmem_slot_offset = offset;
  offset += 8;
  if (computed_b_into_tmem()) {
    tc_.computed_b_barrier_offset = offset;
    offset += 16;
  }
}

// ---------------------------------------------------------------------------- writing
void Tcgen05Kernel::emit_setup(Setup point) {
  switch (point) {
    case Setup::shared_declarations:
      writer_.line(
          fmt::format("const uint32_t accumulator_barrier = shared_base + {};", tc_.accumulator_barrier_offset));
      writer_.line(fmt::format("const uint32_t tmem_slot = shared_base + {};", tc_.tmem_slot_offset));
      if (tc_.computed_b_barrier_offset >= 0)
        writer_.line(fmt::format("const uint32_t computed_b_barrier = shared_base + {};  // 2: the MMAs that read a "
                                 "computed B's staging buffer",
                                 tc_.computed_b_barrier_offset));
      return;
    case Setup::barrier_init:
      writer_.line("tilec_mbarrier_init(accumulator_barrier, 1);");
      if (tc_.computed_b_barrier_offset >= 0)
        writer_.line("for (uint32_t buffer = 0; buffer < 2; ++buffer) tilec_mbarrier_init(computed_b_barrier + 8 * buffer, 1);");
      return;
    case Setup::before_sync:
      writer_.line(
          fmt::format("if (threadIdx.x / 32 == {}) tilec_tmem_alloc<{}>(tmem_slot);  // the first compute warp",
                      kWarpgroup / 32, tc_.tmem_columns));
      writer_.line("tilec_tcgen05_before_sync();");
      return;
    case Setup::after_sync:
      writer_.line("tilec_tcgen05_after_sync();");
      writer_.line("const uint32_t tmem_base = "
                   "*reinterpret_cast<volatile uint32_t*>(shared_aligned + (tmem_slot - shared_base));");
      return;
    case Setup::compute_prologue:
      writer_.line("uint32_t accumulator_parity = 0;");
      if (tc_.computed_b_barrier_offset >= 0) {
        // The computed B's staging buffer written next, and per buffer (a bit each) whether MMAs
        // read it and its barrier's parity.
        writer_.line("uint32_t computed_b_buffer = 0, computed_b_read = 0, computed_b_parity = 0;");
      }
      return;
    case Setup::compute_epilogue:
      writer_.line("// Every compute thread is done with TMEM: the first compute warp frees it.");
      writer_.line("tilec_tcgen05_before_sync();");
      writer_.line(fmt::format("tilec_named_barrier_sync({}, {});", tc_.private_barrier, tc_.compute_threads));
      writer_.line(fmt::format("if (threadIdx.x / 32 == {}) tilec_tmem_dealloc<{}>(tmem_base);", kWarpgroup / 32,
                               tc_.tmem_columns));
      return;
  }
}

void Tcgen05Kernel::emit_release(const std::string& address) {
  writer_.line(
      fmt::format("if (compute_thread == 0) tilec_tcgen05_commit({});  // when the MMAs reading it are done", address));
}

// Never reached: the analysis refuses mma_wait where MMAs are not waited for in groups.
void Tcgen05Kernel::emit_mma_wait(const Operation& op) {
  writer_.line(fmt::format("#error \"'{}' has no tcgen05 form\"", op.name()));
}

std::string_view Tcgen05Kernel::event_order() const {
  return "within one agent: program order and the accumulator barrier";
}

namespace {

// A TMEM cell (32 bits read by tcgen05.ld) as D's element: f32 bits, or an s32.
std::string tmem_cell(ScalarKind element, const std::string& bits) {
  return element == ScalarKind::i32 ? fmt::format("static_cast<int32_t>({})", bits)
                                    : fmt::format("__uint_as_float({})", bits);
}

// C + the cell: f32 rounded once (add_f32), or an s32 sum that wraps as the tensor cores' does.
std::string accumulate_cell(ScalarKind element, const std::string& c, const std::string& bits) {
  if (element == ScalarKind::i32)
    return fmt::format("static_cast<int32_t>(static_cast<uint32_t>({}) + {})", c, bits);
  return fmt::format("add_f32({}, {})", c, tmem_cell(element, bits));
}

}  // namespace

uint32_t Tcgen05Kernel::instruction_descriptor(const MmaPlan& plan, int64_t rows, int64_t columns, bool b_k_major,
                                               bool a_k_major) {
  return (plan.instruction->d_format << 4) | (plan.instruction->input(plan.input)->format << 7) |
         (plan.instruction->input(plan.input_b)->format << 10) | (a_k_major ? 0u : 1u << 15) |
         (b_k_major ? 0u : 1u << 16) | (static_cast<uint32_t>(columns >> 3) << 17) |
         (static_cast<uint32_t>(rows >> 4) << 24);
}

std::string Tcgen05Kernel::mma_function(const target::MmaInstruction& instruction) {
  return instruction.kind == "f16" ? "tilec_tcgen05_mma" : "tilec_tcgen05_mma_" + std::string(instruction.kind);
}

void Tcgen05Kernel::issue_mma(const Operation& op, const MmaPlan& plan) {
  if (plan.registers) emit_into_registers(op, plan);
  else emit_into_tmem(op, plan);
}

// An accumulator kept in TMEM: the first mma overwrites it, the others add. A computed B is
// written into its staging buffers in turn, each once the MMAs that read it before are done
// (their commit on the buffer's barrier; every compute thread writes it), so it is written while
// the MMA of the K step before reads the other; this MMA's commit follows.
void Tcgen05Kernel::emit_into_tmem(const Operation& op, const MmaPlan& plan) {
  const Accumulator& accumulator = *tc_.accumulator(op.result());
  const StageBuffer& a = tc_.read_stage(op.operand(0));
  const StageBuffer& b = plan.b_computed ? plan.computed_b : tc_.read_stage(op.operand(1));
  std::string b_slot = plan_.expression(op.operand(1));
  if (plan.b_computed) {
    {
      CodeWriter::Block wait =
          writer_.block("if (computed_b_read >> computed_b_buffer & 1) {  // by MMAs issued before: wait until done");
      writer_.line("tilec_mbarrier_wait(computed_b_barrier + 8 * computed_b_buffer, computed_b_parity >> "
                   "computed_b_buffer & 1);");
      writer_.line("computed_b_parity ^= 1u << computed_b_buffer;");
    }
    // One buffer where two did not fit (place_shared_memory): computed_b_buffer stays 0.
    b_slot = stage_computed_b(op, plan, "tcgen05.mma", plan.b_staging_buffers == 2 ? "computed_b_buffer" : "");
  }
  {
    CodeWriter::Block issuer = writer_.block("if (compute_thread == 0) {");
    writer_.line("tilec_tcgen05_after_sync();");
    for (int64_t step = 0; step < a.tile.shape()[1] / plan.instruction->k; ++step)
      writer_.line(fmt::format("{}(tmem_base + {}, {}, {}, 0x{:08x}u, {});", mma_function(*plan.instruction),
                               accumulator.tmem_column, operand_descriptor(a, plan_.expression(op.operand(0)), step),
                               operand_descriptor(b, b_slot, step),
                               instruction_descriptor(plan, accumulator.rows, accumulator.columns, b.transposed,
                                                      a.k_major()),
                               step == 0 ? accumulator.name + "_started" : "true"));
    if (plan.b_computed)
      writer_.line("tilec_tcgen05_commit(computed_b_barrier + 8 * computed_b_buffer);  // the buffer may be rewritten");
  }
  writer_.line(fmt::format("{}_started = true;", accumulator.name));
  if (plan.b_computed) {
    writer_.line("computed_b_read |= 1u << computed_b_buffer;");
    if (plan.b_staging_buffers == 2) writer_.line("computed_b_buffer ^= 1;");
  }
}

// D in registers: A·B into TMEM columns of this mma's own (A from registers is
// first written to shared memory as TMA would have), then D = C + A·B read back.
void Tcgen05Kernel::emit_into_registers(const Operation& op, const MmaPlan& plan) {
  const Fragment& result = *tc_.fragment(op.result());
  const Fragment& acc = *tc_.fragment(op.operand(2));
  // A computed B is written where the MMA before read it, which is complete (waited for below).
  const StageBuffer& b = plan.b_computed ? plan.computed_b : tc_.read_stage(op.operand(1));
  const std::string b_slot =
      plan.b_computed ? stage_computed_b(op, plan, "tcgen05.mma") : plan_.expression(op.operand(1));
  std::string a_base = plan_.expression(op.operand(0));
  int64_t a_panel = 0, k = 0, a_swizzle = kPanelRowBytes;
  // A from a stage buffer, else staged from registers: K-major, or MN-major where A is the
  // transpose of the register tile (its rows, K, staged as they are).
  const StageBuffer* a_stage = nullptr;
  if (plan.a_registers) {
    const Fragment& a = *tc_.a_fragment(op);
    const StagedA staged = stage_register_a(a, plan.staging_offset, "tcgen05.mma");
    a_base = staged.base, a_panel = staged.panel, a_swizzle = staged.swizzle;
    k = plan.a_transposed ? a.rows : a.columns;
  } else {
    a_stage = &tc_.read_stage(op.operand(0));
    a_panel = a_stage->panel_bytes();
    k = a_stage->tile.shape()[1];
  }
  {
    CodeWriter::Block issuer = writer_.block("if (compute_thread == 0) {");
    writer_.line("tilec_tcgen05_after_sync();");
    for (int64_t step = 0; step < k / plan.instruction->k; ++step)
      writer_.line(fmt::format("{}(tmem_base + {}, {}, {}, 0x{:08x}u, {});", mma_function(*plan.instruction),
                               plan.tmem_column,
                               a_stage          ? operand_descriptor(*a_stage, a_base, step)
                               : plan.a_transposed ? mn_major_descriptor(a_base, a_panel, step, plan.input, "", a_swizzle)
                                                   : k_major_descriptor(a_base, a_panel, step, "", a_swizzle),
                               operand_descriptor(b, b_slot, step),
                               instruction_descriptor(plan, result.rows, result.columns, b.transposed,
                                                      a_stage ? a_stage->k_major() : !plan.a_transposed),
                               step == 0 ? "false" : "true"));
    writer_.line("tilec_tcgen05_commit(accumulator_barrier);");
  }
  emit_accumulator_phase_wait();
  if (plan.copy) declare_fragment(result);
  emit_tmem_into_fragment(result, plan.tmem_column, [&](const std::string& index) {
    return accumulate_cell(result.element, fmt::format("{}[{}]", acc.name, index), "values[i]");
  });
  emit_tmem_release();
}

// Each thread reads its row of `fragment`'s columns from TMEM (from `tmem_column`; each compute
// warpgroup its share), a tcgen05.ld width at a time, and sets register `index` of the fragment to
// value(index), in which `values[i]` is the 32-bit cell.
void Tcgen05Kernel::emit_tmem_into_fragment(const Fragment& fragment, int64_t tmem_column,
                                            const std::function<std::string(const std::string&)>& value) {
  const int64_t per_warpgroup = fragment.columns * kWarpgroup / tc_.compute_threads;
  const int64_t width = tmem_load_width(per_warpgroup);
  CodeWriter::Block scope = writer_.block("{");
  writer_.line(FragmentLayout::position_variables());
  CodeWriter::Block chunks =
      writer_.block(fmt::format("for (int chunk = 0; chunk < {}; ++chunk) {{", per_warpgroup / width));
  writer_.line(fmt::format("uint32_t values[{}];", width));
  writer_.line(fmt::format("tilec_tmem_load_{2}(tmem_base + (static_cast<uint32_t>(warp * 32) << 16) + {0} + "
                           "static_cast<uint32_t>(compute_warpgroup * {1} + chunk * {2}), values);",
                           tmem_column, per_warpgroup, width));
  writer_.line("#pragma unroll");
  const std::string index = fmt::format("chunk * {} + i", width);
  writer_.line(fmt::format("for (int i = 0; i < {}; ++i) {}[{}] = {};", width, fragment.name, index, value(index)));
}

// A loop result read from its TMEM accumulator once the loop is done (Plan::loaded_after_loop):
// the MMAs are waited for, each thread reads its row's columns into the register tile (zeros
// where no mma ran), and TMEM is released for the next tile's MMAs.
void Tcgen05Kernel::emit_after_loop(const Operation& op) {
  for (size_t r = 0; r < op.num_results(); ++r) {
    auto loaded = tc_.loaded_after_loop.find(op.result(r));
    auto sliced = tc_.sliced_after_loop.find(op.result(r));
    if (loaded == tc_.loaded_after_loop.end() && sliced == tc_.sliced_after_loop.end()) continue;
    const Accumulator& accumulator = loaded != tc_.loaded_after_loop.end() ? tc_.accumulators[loaded->second]
                                                                          : *tc_.accumulator(op.result(r));
    auto cell = [&](const std::string&) {
      return fmt::format("{}_started ? {} : {}", accumulator.name, tmem_cell(accumulator.element, "values[i]"),
                         zero_literal(accumulator.element));
    };
    if (loaded == tc_.loaded_after_loop.end()) {  // only its column slices (Plan::sliced_after_loop)
      std::vector<const Fragment*> slices;
      for (const Value* slice : sliced->second) {
        slices.push_back(tc_.fragment(slice));
        writer_.line(fmt::format("// {}: columns {}:{} of the accumulator {}, read from TMEM once the loop is done",
                                 slices.back()->name, slice_starts(*slice->defining_op())[1],
                                 slice_starts(*slice->defining_op())[1] + slices.back()->columns, accumulator.name));
        declare_fragment(*slices.back());
      }
      emit_accumulator_wait();
      for (size_t k = 0; k < slices.size(); ++k)
        emit_tmem_into_fragment(*slices[k], accumulator.tmem_column + slice_starts(*sliced->second[k]->defining_op())[1],
                                cell);
      emit_tmem_release();
      continue;
    }
    const Fragment& result = *tc_.fragment(op.result(r));
    writer_.line(fmt::format("// {}: the accumulator {}, read from TMEM once the loop is done", result.name,
                             accumulator.name));
    declare_fragment(result);
    emit_accumulator_wait();
    emit_tmem_into_fragment(result, accumulator.tmem_column, cell);
    emit_tmem_release();
  }
}

void Tcgen05Kernel::emit_element_store(const Value* value, const StorePlan& plan, const MatrixAccess& access,
                                       const std::string& row_base, const std::string& column_base) {
  const bool accumulators = !plan.accumulators.empty();
  const int64_t rows = value->type().shape()[0];
  const int64_t half = plan.warpgroup_columns;
  const int64_t width = accumulators ? tmem_load_width(half) : 0;
  ElementContext context;
  if (accumulators) {
    emit_accumulator_wait();
    context.index = fmt::format("chunk * {} + i", width);
  }
  if (rows == 64) {
    writer_.line("// M = 64 (TMEM layout F): warp w's lanes 0..15 hold rows 16·(w mod 4)..; lanes 16..31 load with");
    writer_.line("// their warp and store nothing. Each warpgroup takes its columns.");
  } else {
    writer_.line("// Warp w reads TMEM lanes 32·(w mod 4)..: one row per thread; each warpgroup takes its columns.");
  }
  writer_.line(FragmentLayout::position_variables());
  // One row per thread: every register of the fragment is in the same row (row_step is 0).
  const int64_t columns = value->type().shape()[1];
  declare_store_corner(access, row_base, column_base, tc_.layout.thread_row(rows), tc_.layout.thread_column(columns));
  const std::string row_step = tc_.layout.row_step("i", false);
  const std::string lanes = "(static_cast<uint32_t>(warp * 32) << 16)";  // the warp's 32 TMEM lanes
  if (accumulators) {
    writer_.line("#pragma unroll");
    {
      CodeWriter::Block chunks =
          writer_.block(fmt::format("for (int chunk = 0; chunk < {}; ++chunk) {{", half / width));
      emit_accumulator_loads(plan.accumulators, lanes, fmt::format("thread_column + chunk * {}", width), width,
                             context);
      writer_.line("#pragma unroll");
      CodeWriter::Block loop = writer_.block(fmt::format("for (int i = 0; i < {}; ++i) {{", width));
      emit_store_position(row_step, tc_.layout.column_step(fmt::format("chunk * {} + i", width), columns));
      emit_store_element(value, access, context, tc_.layout.owner(rows));
    }
    emit_tmem_release();
  } else {
    writer_.line("#pragma unroll");
    CodeWriter::Block loop = writer_.block(fmt::format("for (int i = 0; i < {}; ++i) {{", half));
    emit_store_position(row_step, tc_.layout.column_step("i", columns));
    emit_store_element(value, access, context, tc_.layout.owner(rows));
  }
}

void Tcgen05Kernel::emit_staging_chunk(const Value* value, const StorePlan& plan, std::string&,
                                       std::string& store_column) {
  const int64_t per_warpgroup = plan.warpgroup_columns;
  const ScalarKind kind = value->type().element();
  const int64_t width = plan.chunk_columns;
  // One row per thread (its TMEM lane); the warpgroup's columns 32 at a time.
  writer_.line("const int row = warp * 32 + lane, box_row = row;");
  writer_.line(fmt::format("const int first_column = compute_warpgroup * {} + chunk * {};", per_warpgroup, width));
  writer_.line("#pragma unroll");
  {
    CodeWriter::Block pieces = writer_.block(fmt::format("for (int piece = 0; piece < {}; ++piece) {{", width / 32));
    ElementContext context;
    context.index = "index";
    emit_accumulator_loads(plan.accumulators, "(static_cast<uint32_t>(warp * 32) << 16)", "first_column + piece * 32",
                           32, context);
    writer_.line("#pragma unroll");
    CodeWriter::Block loop = writer_.block("for (int i = 0; i < 32; ++i) {");
    writer_.line(
        fmt::format("const int column = first_column + piece * 32 + i, index = chunk * {} + piece * 32 + i;", width));
    writer_.line("(void)column, (void)index;");
    emit_staging_element(value, kind, "piece * 32 + i", context);
  }
  store_column = fmt::format("{} + compute_warpgroup * {} + chunk * {}", store_column, per_warpgroup, width);
}

void Tcgen05Kernel::emit_accumulators_ready(const StorePlan& plan) {
  if (!plan.accumulators.empty()) emit_accumulator_wait();
}

void Tcgen05Kernel::emit_accumulators_read(const StorePlan& plan) {
  if (!plan.accumulators.empty()) emit_tmem_release();
}

// sm_100a stores: load 32 columns of each accumulator the store reads (TMEM lane base `lanes`,
// first column `column`) into values, values_1, ..., and say in `context` where each element is.
void Tcgen05Kernel::emit_accumulator_loads(const std::vector<AccumulatorRead>& accumulators,
                                           const std::string& lanes, const std::string& column, int64_t width,
                                           ElementContext& context) {
  for (size_t k = 0; k < accumulators.size(); ++k) {
    const Accumulator& accumulator = *accumulators[k].accumulator;
    std::string values = k == 0 ? "values" : fmt::format("values_{}", k);
    writer_.line(fmt::format("uint32_t {}[{}];", values, width));
    // A column slice of the accumulator (acc[:, a:b]) reads from its column a on; a concat's
    // part only where the part lies, its load clamped into the accumulator elsewhere (the store
    // takes another part's values there: the parts meet at multiples of the width).
    const int64_t shift = accumulators[k].column;
    std::string first = shift == 0 ? column : fmt::format("{} {} {}", column, shift < 0 ? '-' : '+', std::abs(shift));
    if (accumulators[k].partial) {
      const std::string from = names_.unique("from");
      writer_.line(fmt::format("const int {} = {};", from, first));
      first = fmt::format("{0} < 0 ? 0 : {0} > {1} ? {1} : {0}", from, accumulator.columns - width);
    }
    writer_.line(fmt::format("tilec_tmem_load_{}(tmem_base + {} + {} + static_cast<uint32_t>({}), {});", width, lanes,
                             accumulator.tmem_column, first, values));
    context.accumulators[{&accumulator, shift}] =
        fmt::format("({}_started ? {} : {})", accumulator.name, tmem_cell(accumulator.element, values + "[i]"),
                    zero_literal(accumulator.element));
  }
}

int64_t Tcgen05Kernel::tmem_load_width(int64_t per_warpgroup) {
  const int64_t width = target::tmem_load_width(per_warpgroup);
  if (width == 0)  // the analysis refused such a tile
    throw std::logic_error(fmt::format("tmem_load_width: no tcgen05.ld reads {} columns per warpgroup", per_warpgroup));
  needs_.tmem_load_widths.insert(static_cast<int>(width));
  return width;
}

// The MMAs into TMEM issued so far are complete when the accumulator barrier's phase is.
void Tcgen05Kernel::emit_accumulator_wait() {
  writer_.line("// The MMAs into the accumulator are complete when the accumulator barrier's phase is.");
  writer_.line("if (compute_thread == 0) tilec_tcgen05_commit(accumulator_barrier);");
  emit_accumulator_phase_wait();
}

void Tcgen05Kernel::emit_accumulator_phase_wait() {
  writer_.line("tilec_mbarrier_wait(accumulator_barrier, accumulator_parity);");
  writer_.line("accumulator_parity ^= 1;");
  writer_.line("tilec_tcgen05_after_sync();");
}

void Tcgen05Kernel::emit_tmem_release() {
  writer_.line("// TMEM is read: a later MMA may overwrite it.");
  writer_.line("tilec_tcgen05_before_sync();");
  writer_.line(fmt::format("tilec_named_barrier_sync({}, {});", tc_.private_barrier, tc_.compute_threads));
  writer_.line("tilec_tcgen05_after_sync();");
}

}  // namespace tilec::cuda::tensor_core
