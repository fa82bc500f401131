// backend/cuda/emit_tensor_core.cpp — a warp-specialized kernel on the tensor cores (see header):
// the summary, the kernel's skeleton, control flow, sync ops and TMA, and the launcher. The class
// is in tensor_core_kernel.h; emit_tensor_core_mma.cpp writes mma, emit_tensor_core_tiles.cpp
// register tiles and the epilogue.
//
// The kernel is analyzed first (tensor_core_analysis.h: roles, places in shared memory, arrival
// counts, how each tile value is held, mma plans; everything unsupported reported at its op),
// then written: the summary comment; the kernel (top-level scalar ops, barrier init, the role
// switch by warpgroup, each agent's ops in program order, register tiles, the epilogue per
// element); the launcher (tensor maps, opt-in shared memory, the launch).
// Deterministic: every walk follows program order.
#include "backend/cuda/emit_tensor_core.h"

#include <fmt/core.h>

#include <algorithm>
#include <functional>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "backend/cuda/cuda_syntax.h"
#include "backend/cuda/emit_kernel_body.h"
#include "backend/cuda/tensor_core_analysis.h"
#include "backend/cuda/tensor_core_kernel.h"
#include "ir/attribute_keys.h"
#include "ir/diagnostic.h"
#include "ir/fold.h"
#include "ir/ir.h"

namespace tilec::cuda {

namespace {

std::string join(const std::vector<std::string>& parts, const char* separator) {
  std::string text;
  for (size_t i = 0; i < parts.size(); ++i) text += (i ? separator : "") + parts[i];
  return text;
}

// The product of extents [from, to) as C++ ("1" for none).
std::string extent_product(const std::vector<std::string>& extents, size_t from, size_t to) {
  if (from >= to) return "1";
  return join(std::vector<std::string>(extents.begin() + static_cast<std::ptrdiff_t>(from),
                                       extents.begin() + static_cast<std::ptrdiff_t>(to)), " * ");
}

// The number of matrices of a batched tensor's extents (rank 3 or more): the product of all but
// the last two.
std::string batch_extent(const std::vector<std::string>& extents) {
  return extent_product(extents, 0, extents.size() - 2);
}

const char* tensor_map_type(ScalarKind kind) {
  switch (kind) {
    case ScalarKind::bf16: return "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16";
    case ScalarKind::f16: return "CU_TENSOR_MAP_DATA_TYPE_FLOAT16";
    case ScalarKind::f8e4m3: case ScalarKind::f8e5m2: case ScalarKind::i8: case ScalarKind::u8:
      return "CU_TENSOR_MAP_DATA_TYPE_UINT8";  // TMA copies bytes
    case ScalarKind::i32: return "CU_TENSOR_MAP_DATA_TYPE_INT32";
    default: return "CU_TENSOR_MAP_DATA_TYPE_FLOAT32";  // the analysis maps 8-bit, 16-bit and 32-bit tensors only
  }
}

}  // namespace

namespace tensor_core {

void TensorCoreKernel::write(std::string& out) {
  compute_ring_counters();
  emit_summary();
  emit_kernel();
  emit_launcher();
  out += out_;
}

// ----------------------------------------------------------------------------- emission
void TensorCoreKernel::comment(const Operation& op) {
  std::vector<std::string> results, operands;
  for (size_t i = 0; i < op.num_results(); ++i) results.push_back(plan_.expression(op.result(i)));
  for (const Value* operand : op.operands()) operands.push_back(plan_.expression(operand));
  std::string text = "// ";
  if (!results.empty()) text += join(results, ", ") + " = ";
  text += std::string(op.name());
  if (!operands.empty()) text += " " + join(operands, ", ");
  if (op.location().known()) text += fmt::format("  (line {})", op.location().line);
  writer_.line(text);
}

void TensorCoreKernel::emit_summary() {
  const std::string rule(95, '-');
  writer_.line("// " + rule);
  writer_.line(fmt::format("// kernel @{}{}: tensor cores, {} ({})", kernel_name(kernel_),
                           kernel_.location().known() ? fmt::format(" (line {})", kernel_.location().line) : "",
                           target_.name, target_.mma_summary));
  writer_.line(fmt::format("// grid: {} CTAs of {} threads", describe_grid(plan_), total_threads()));
  auto registers = [&](const Operation* agent) {
    return rebalances_registers() ? fmt::format("{} registers", agent->int_attr("registers"))
                                  : std::string("registers as compiled");
  };
  writer_.line(fmt::format(
      "//   agents: producer warpgroup 0 (128 threads, {}, one elected thread issues TMA), "
      "compute warpgroups 1..{} ({} threads, {})",
      registers(tc_.producer), tc_.compute_threads / kWarpgroup, tc_.compute_threads, registers(tc_.compute)));
  walk(tc_.compute->region(), [&](const Operation& op) {
    if (op.kind() == OpKind::for_ && op.has(attr::ii))
      writer_.line(fmt::format("//   schedule: loop at line {}: ii {}, {} stage(s){}", op.location().line,
                               op.get(attr::ii), op.get(attr::stages, 1),
                               op.has_attr("pipeline") ? fmt::format(", pipeline({})", op.int_attr("pipeline")) : ""));
  });
  writer_.line(fmt::format("// shared memory: {} bytes (1024 of them for aligning the base)", tc_.shared_bytes));
  for (const StageBuffer& buffer : tc_.stages)
    writer_.line(fmt::format(
        "//   pipe {}: {} slots x {} bytes at {}: {} from {} ({}, {} panel(s) of {} columns, {}B swizzle)",
        buffer.name, buffer.depth, buffer.slot_bytes, buffer.offset,
        buffer.role == StageBuffer::Role::a          ? "A of mma"
        : buffer.role == StageBuffer::Role::computed ? "read element by element into a computed B"
                                                     : "B of mma",
        plan_.expression(buffer.tensor),
        buffer.role == StageBuffer::Role::computed ? "as stored"
        : buffer.k_major()                         ? "K-major"
                                                   : "MN-major",
        buffer.panels(),
        buffer.panel_columns(), buffer.swizzle_bytes));
  for (const Barrier& barrier : tc_.barriers)
    writer_.line(fmt::format("//   mbarrier {}: {} slot(s) at {}, {} arrival(s) per phase, {}", barrier.name,
                             barrier.slots, barrier.offset, barrier.arrivals, barrier.purpose));
  for (const Operation* mma : tc_.mma_ops)
    if (tc_.mma_plans.at(mma).staging_bytes > 0)
      writer_.line(fmt::format("//   A of the mma at line {} (from registers): {} bytes at {}, 128B swizzle",
                               mma->location().line, tc_.mma_plans.at(mma).staging_bytes,
                               tc_.mma_plans.at(mma).staging_offset));
  for (const Operation* mma : tc_.mma_ops)
    if (const MmaPlan& plan = tc_.mma_plans.at(mma); plan.b_computed)
      writer_.line(fmt::format("//   B of the mma at line {} (computed by the compute threads): {} bytes at {}, "
                               "{}, {}B swizzle{}",
                               mma->location().line, plan.computed_b.slot_bytes, plan.b_staging_offset,
                               plan.computed_b.k_major() ? "K-major ([N, K])" : "MN-major",
                               plan.computed_b.swizzle_bytes,
                               plan.b_staging_buffers == 2
                                   ? "; two such buffers, written in turn: one while the MMA before reads the other"
                                   : ""));
  for (const Operation* store : tc_.store_ops) {
    const StorePlan& plan = tc_.store_plans.at(store);
    if (plan.tma)
      writer_.line(fmt::format(
          "//   store at line {}: through shared memory ({} bytes per compute warpgroup at {}) and TMA{}, boxes "
          "of {}x{} (128B swizzle)",
          store->location().line, kStoreStagingBytes, tc_.store_staging_offset,
          accumulates(*store) ? " adding each box to the tensor (cp.reduce.async.bulk .add)" : "", plan.box_rows,
          plan.chunk_columns));
    else
      writer_.line(fmt::format("//   store at line {}: each thread writes its elements from registers: {}",
                               store->location().line, plan.direct_because));
  }
  if (tc_.exchange_offset >= 0)
    writer_.line(fmt::format("//   row-reduction exchange between the compute warpgroups: {} bytes at {}",
                             tc_.exchange_bytes, tc_.exchange_offset));
  walk(kernel_.region(), [&](const Operation& op) {
    if (op.kind() == OpKind::stage_buffer && tc_.register_pipes.count(op.result()))
      writer_.line(
          fmt::format("//   pipe {}: {} in registers (written and read by the compute agent in program order{})",
                      plan_.expression(op.result()), op.result()->type().to_string(),
                      tc_.register_pipes.at(op.result()).stored ? "; a loop carries it" : ""));
  });
  for (const Accumulator& accumulator : tc_.accumulators)
    writer_.line(fmt::format("//   accumulator {}: {}x{} {} in TMEM columns {}..{}", accumulator.name,
                             accumulator.rows, accumulator.columns, to_string(accumulator.element),
                             accumulator.tmem_column,
                             accumulator.tmem_column + accumulator.columns - 1));
  for (size_t i = 0; i < tc_.fragments.size(); ++i) {
    const Fragment& held = tc_.fragments[i];
    // sm_100a: a chain kept in registers rather than TMEM, and why (one reason per chain), or
    // a loop's result read from its TMEM accumulator.
    auto held_here = [&](const Value* value) {
      auto it = tc_.fragment_of.find(value);
      return it != tc_.fragment_of.end() && it->second == i;
    };
    std::string where;
    for (const auto& [value, why] : tc_.registers_because)
      if (held_here(value))
        where = fmt::format("; not in TMEM, since {}: each mma into it is waited for and read back from TMEM", why);
    for (const auto& [value, index] : tc_.loaded_after_loop)
      if (held_here(value))
        where = fmt::format("; read from the TMEM accumulator {} once its loop is done", tc_.accumulators[index].name);
    for (const Value* slice : tc_.loaded_slices)
      if (held_here(slice))
        where = fmt::format("; columns {}:{} of the TMEM accumulator {}, read once its loop is done",
                            slice_starts(*slice->defining_op())[1], slice_starts(*slice->defining_op())[1] + held.columns,
                            tc_.accumulator(slice->defining_op()->operand(0))->name);
    writer_.line(fmt::format("//   {} {}: {}x{} {} in registers, {} per thread{}",
                             held.accumulator ? "accumulator" : "register tile", held.name, held.rows, held.columns,
                             to_string(held.element), tc_.layout.count(held.columns), where));
  }
  writer_.line("// " + rule);
}

TensorCoreKernel::MatrixAccess TensorCoreKernel::matrix_access(const Operation& op, size_t first) const {
  const Value* tensor = op.operand(first - 1);
  const std::vector<std::string>& extents = plan_.tensor_dims.at(tensor);
  MatrixAccess access;
  access.base = plan_.expression(tensor);
  access.elements = op.has_attr("elements");
  access.combine = store_combine(op);
  const size_t rank = extents.size();
  const size_t row_dim = row_dimension(op, rank);  // rank - 2 but through a box with middle dimensions
  // The row and column coordinates (the last two; a vector's one), checked against 0 where they
  // may be negative (element coordinates always are).
  access.column_may_be_negative = access.elements || !never_negative(op.operand(first + rank - 1));
  access.row_may_be_negative = rank > 1 && (access.elements || !never_negative(op.operand(first + row_dim)));
  auto cast_to_index = [](const Value& value) {
    const Operation* cast = value.defining_op();
    return cast && cast->kind() == OpKind::cast && cast->operand(0)->type().element() != ScalarKind::index;
  };
  for (size_t d = 0; d < rank; ++d) access.wide = access.wide || computed_from(op.operand(first + d), cast_to_index);
  const bool column = column_box(op, rank);  // rows along the last dimension, one element apart
  if (column) {
    access.row_may_be_negative = access.column_may_be_negative;
    access.column_may_be_negative = false;
  }
  if (rank == 1 && !column) {  // a vector: one row
    access.rows = "1";
    access.columns = access.pitch = extents[0];
    access.row = "0";
    access.column = plan_.expression(op.operand(first));
    return access;
  }
  access.rows = extents[row_dim];
  access.columns = access.pitch = column ? "1" : extents[rank - 1];
  access.row = plan_.expression(op.operand(first + row_dim));
  access.column = column ? "0" : plan_.expression(op.operand(first + rank - 1));
  // Coordinates [from, to) as one index over the product of their extents (row-major); one
  // outside its extent (checked from the second on) gives -1, which TMA zero-fills and clips
  // like any other coordinate outside.
  auto fold = [&](size_t from, size_t to) {
    std::string index = plan_.expression(op.operand(first + from));
    std::vector<std::string> checks;
    for (size_t d = from + 1; d < to; ++d) {
      const std::string coordinate = plan_.expression(op.operand(first + d));
      index = fmt::format("{} * {} + {}", index, extents[d], coordinate);
      checks.push_back(fmt::format("0 <= {0} && {0} < {1}", coordinate, extents[d]));
    }
    return checks.empty() ? index : fmt::format("({} ? {} : -1)", join(checks, " && "), index);
  };
  if (row_dim + 2 < rank) {
    // Middle dimensions between the rows and the columns ([B, S, H, D] read as [BQ, 1, D]): the
    // rows lie H·D apart, and the middle coordinate picks the column block.
    const std::string middles = extent_product(extents, row_dim + 1, rank - 1);
    access.middle = fold(row_dim + 1, rank - 1);
    access.pitch = fmt::format("({} * {})", middles, access.columns);
    access.inside = fmt::format("0 <= {0} && {0} < {1} && ", access.middle, middles);
  }
  if (row_dim > 0) {
    // The leading coordinates fold into one batch index over the product of their extents (a
    // dense row-major [B, H, M, N] is B·H matrices, as TMA's 3-D map sees it).
    access.batch = fold(0, row_dim);
    access.base = fmt::format("({} + static_cast<int64_t>({}) * ({} * {}))", access.base, access.batch, access.rows,
                              access.pitch);
    access.inside += fmt::format("0 <= {0} && {0} < {1} && ", access.batch, extent_product(extents, 0, row_dim));
  }
  if (!access.middle.empty())
    access.base = fmt::format("({} + static_cast<int64_t>({}) * {})", access.base, access.middle, access.columns);
  return access;
}

int TensorCoreKernel::MatrixAccess::tma_rank() const { return !middle.empty() ? 4 : batch.empty() ? 2 : 3; }

std::string TensorCoreKernel::MatrixAccess::tma_coordinates(const std::string& inner, const std::string& outer) const {
  std::vector<std::string> coordinates{inner};
  if (!middle.empty()) coordinates.push_back(middle);
  coordinates.push_back(outer);
  if (!middle.empty() || !batch.empty()) coordinates.push_back(batch.empty() ? "0" : batch);
  for (std::string& coordinate : coordinates)
    coordinate = wide ? fmt::format("tilec_tma_coordinate({})", coordinate)
                      : fmt::format("static_cast<int32_t>({})", coordinate);
  return join(coordinates, ", ");
}

std::string TensorCoreKernel::MatrixAccess::row_origin(int64_t extent) const {
  return elements ? row : fmt::format("{} * {}", row, extent);
}

std::string TensorCoreKernel::MatrixAccess::column_origin(int64_t extent) const {
  return elements ? column : fmt::format("{} * {}", column, extent);
}

// One tensor map per tensor the stage buffers load from, in stage-buffer order, then one per
// tensor TMA stores write, in program order.
std::vector<TensorCoreKernel::TensorMap> TensorCoreKernel::tensor_maps() const {
  std::vector<TensorMap> maps;
  auto add = [&](const TensorMap& map) {
    if (std::none_of(maps.begin(), maps.end(), [&](const TensorMap& seen) { return seen.name == map.name; }))
      maps.push_back(map);
  };
  for (const StageBuffer& buffer : tc_.stages)
    add({buffer.map, buffer.tensor, buffer.tile.element(), buffer.stored()[0], buffer.panel_columns(),
         buffer.swizzle_bytes, buffer.row_dimension});
  for (const Operation* store : tc_.store_ops) {
    const StorePlan& plan = tc_.store_plans.at(store);
    if (plan.tma)
      add({plan.map, plan.tensor, plan.tensor->type().element(), plan.box_rows, plan.chunk_columns, kPanelRowBytes,
           plan.row_dimension});
  }
  return maps;
}

std::string TensorCoreKernel::kernel_parameters() const {
  std::vector<std::string> parts;
  for (const TensorMap& map : tensor_maps()) parts.push_back("const __grid_constant__ CUtensorMap " + map.name);
  std::string rest = parameter_list(plan_);
  if (!rest.empty()) parts.push_back(rest);
  return join(parts, ", ");
}

std::string TensorCoreKernel::kernel_arguments() const {
  std::vector<std::string> parts;
  for (const TensorMap& map : tensor_maps()) parts.push_back(map.name);
  std::string rest = argument_list(plan_);
  if (!rest.empty()) parts.push_back(rest);
  return join(parts, ", ");
}

void TensorCoreKernel::emit_kernel() {
  writer_.line(fmt::format("__global__ void TILEC_LAUNCH_BOUNDS({}, 1) {}_kernel({}) {{", total_threads(), plan_.name,
                           kernel_parameters()));
  writer_.line(fmt::format("#if defined({}) || defined({})", target_.feature_macro, target_.emulate_macro));
  {
    CodeWriter::Block kernel_body = writer_.indented();
    // Aligned as every kernel's (two alignments of the one extern array draw nvcc's warning
    // #1886-D in a file with plain kernels); the 1024 the swizzle needs is rounded up to here.
    writer_.line("TILEC_DYNAMIC_SHARED(16, shared_memory);");
    writer_.line("// The 128-byte swizzle repeats every 1024 bytes: stage buffers start on such a boundary.");
    writer_.line("const uint32_t shared_base = (tilec_shared_address(shared_memory) + 1023u) & ~1023u;");
    writer_.line(
        "unsigned char* const shared_aligned = shared_memory + (shared_base - tilec_shared_address(shared_memory));");
    writer_.line("(void)shared_aligned;");
    const std::vector<const Operation*> scalars = agent_scalars();
    for (const auto& op : kernel_.region().operations()) {
      if (op.get() == tc_.specialize) break;
      if (std::find(scalars.begin(), scalars.end(), op.get()) == scalars.end()) emit_top_level(*op);
    }
    auto emit_scalars = [&] {
      if (!scalars.empty())
        writer_.line("// The grid's values, computed here: not live across the register rebalance.");
      for (const Operation* op : scalars) emit_top_level(*op);
    };
    {
      CodeWriter::Block first_thread = writer_.block("if (threadIdx.x == 0) {");
      for (const Barrier& barrier : tc_.barriers)
        writer_.line(fmt::format("for (uint32_t slot = 0; slot < {}; ++slot) tilec_mbarrier_init({} + 8 * slot, {});",
                                 barrier.slots, barrier.name, barrier.arrivals));
      emit_setup(Setup::barrier_init);
      writer_.line("tilec_fence_barrier_init();");
    }
    emit_setup(Setup::before_sync);
    writer_.line("__syncthreads();");
    emit_setup(Setup::after_sync);
    comment(*tc_.specialize);
    const bool rebalance = rebalances_registers();
    CodeWriter::Block agents = writer_.block("if (threadIdx.x < 128) {");
    if (rebalance) writer_.line(fmt::format("tilec_lower_registers<{}>();", tc_.producer->int_attr("registers")));
    writer_.line("// One elected thread of warp 0 runs the producer; the other threads of the warpgroup are done.");
    {
      CodeWriter::Block producer = writer_.block("if (threadIdx.x / 32 == 0 && tilec_elect_one()) {");
      emit_scalars();
      emit_region(tc_.producer->region());
    }
    agents.next("} else {");
    if (rebalance) writer_.line(fmt::format("tilec_raise_registers<{}>();", tc_.compute->int_attr("registers")));
    writer_.line("const int compute_thread = static_cast<int>(threadIdx.x) - 128;");
    writer_.line("const int compute_warpgroup = compute_thread / 128;");
    writer_.line("(void)compute_warpgroup;");
    emit_scalars();
    emit_setup(Setup::compute_prologue);
    emit_region(tc_.compute->region());
    if (tc_.store_staging_offset >= 0)
      writer_.line("if (compute_thread % 128 == 0) tilec_bulk_wait_all();  // this warpgroup's TMA stores are written");
    emit_setup(Setup::compute_epilogue);
  }
  writer_.line("#else");
  {
    CodeWriter::Block kernel_body = writer_.indented();
    writer_.line(fmt::format("__trap();  // built for another architecture than {}", target_.name));
  }
  writer_.line("#endif");
  writer_.line("}");
  writer_.line("");
}

void TensorCoreKernel::compute_ring_counters() {
  // From every candidate (stage_advance's results, the index values loops carry and `if`s give),
  // leave out those that may hold anything else, until none is left out: a stage_advance must
  // advance counters, a loop's value must start from a counter or 0 or 1 and be yielded a
  // counter, an `if`'s must be one from both branches. (Loops carry the counters around `if`s
  // that yield the loop's own values: so every candidate starts in, and only leaves.)
  std::vector<const Operation*> holders;
  walk(kernel_.region(), [&](const Operation& op) {
    if (op.kind() == OpKind::stage_advance) {
      holders.push_back(&op);
      for (size_t i = 0; i < op.num_results(); ++i) ring_counters_.insert(op.result(i));
    } else if (op.kind() == OpKind::for_ || op.kind() == OpKind::if_) {
      holders.push_back(&op);
      for (size_t i = 0; i < op.num_results(); ++i)
        if (op.result(i)->type().is_index()) ring_counters_.insert(op.result(i));
      if (op.kind() == OpKind::for_)
        for (size_t i = 1; i < op.region().num_arguments(); ++i)
          if (op.region().argument(i)->type().is_index()) ring_counters_.insert(op.region().argument(i));
    }
  });
  auto counter_or_bit = [&](const Value* value) {
    const std::optional<int64_t> constant = constant_integer(value);
    return ring_counters_.count(value) > 0 || (constant && *constant >= 0 && *constant <= 1);
  };
  for (bool changed = true; changed;) {
    changed = false;
    auto leave_out = [&](const Value* value) { changed = ring_counters_.erase(value) > 0 || changed; };
    for (const Operation* op : holders) {
      if (op->kind() == OpKind::stage_advance) {  // advances a counter (hand-written IR may not)
        if (!counter_or_bit(op->operand(0)) || !counter_or_bit(op->operand(1))) {
          leave_out(op->result(0));
          leave_out(op->result(1));
        }
      } else if (op->kind() == OpKind::for_) {
        const Region& body = op->region();
        for (size_t i = 1; i < body.num_arguments(); ++i)
          if (!counter_or_bit(op->operand(2 + i)) || !ring_counters_.count(body.terminator()->operand(i - 1)) ||
              !ring_counters_.count(body.argument(i)) || !ring_counters_.count(op->result(i - 1))) {
            leave_out(body.argument(i));
            leave_out(op->result(i - 1));
          }
      } else {
        for (size_t i = 0; i < op->num_results(); ++i)
          if (!ring_counters_.count(op->region(0).terminator()->operand(i)) ||
              !ring_counters_.count(op->region(1).terminator()->operand(i)))
            leave_out(op->result(i));
      }
    }
  }
}

std::string_view TensorCoreKernel::scalar_type(const Value* value) const {
  return ring_counters_.count(value) ? "int32_t" : element_type(value->type().element());
}

std::vector<const Operation*> TensorCoreKernel::agent_scalars() const {
  std::vector<const Operation*> scalars;
  std::unordered_set<const Value*> values;
  for (const auto& op : kernel_.region().operations()) {
    if (op.get() == tc_.specialize) break;
    if (plan_.launch_checks.count(op.get())) continue;  // the launcher's: device code leaves them out
    bool scalar = op->kind() == OpKind::grid_ids || (op->info().has(kPure) && !op->info().has(kSync) &&
                                                     op->num_regions() == 0 && op->num_results() > 0);
    for (size_t i = 0; i < op->num_results(); ++i) scalar = scalar && op->result(i)->type().is_scalar();
    if (scalar) {
      scalars.push_back(op.get());
      for (size_t i = 0; i < op->num_results(); ++i) values.insert(op->result(i));
      continue;
    }
    for (const Value* operand : op->operands())
      if (values.count(operand)) return {};  // a barrier or buffer reads one: keep them at kernel scope
  }
  return scalars;
}

void TensorCoreKernel::emit_top_level(const Operation& op) {
  switch (op.kind()) {
    case OpKind::mbarrier_create: {
      if (tc_.register_barriers.count(op.result())) {
        writer_.line(fmt::format("// {}: a register pipe's barrier, not needed (one agent, program order)",
                                 plan_.expression(op.result())));
        return;
      }
      const Barrier& barrier = tc_.barriers[tc_.barrier_of.at(op.result())];
      writer_.line(fmt::format("const uint32_t {} = shared_base + {};  // {} mbarrier(s)", barrier.name, barrier.offset,
                               barrier.slots));
      if (&barrier == &tc_.barriers.back()) emit_setup(Setup::shared_declarations);
      return;
    }
    case OpKind::stage_buffer: {
      if (auto pipe = tc_.register_pipes.find(op.result()); pipe != tc_.register_pipes.end()) {
        writer_.line(fmt::format("// {}: {} in registers: the compute threads read what they wrote",
                                 plan_.expression(op.result()), op.result()->type().to_string()));
        if (pipe->second.stored) {
          writer_.line(
              "// (written before a loop and in it: its own registers, copied in by a write and out by a read)");
          declare_fragment(*tc_.fragment(op.result()));
        }
        return;
      }
      const StageBuffer& buffer = tc_.stages[tc_.stage_of.at(op.result())];
      writer_.line(fmt::format("const uint32_t {} = shared_base + {};  // {} slots of {}", buffer.name, buffer.offset,
                               buffer.depth, buffer.tile.to_string()));
      return;
    }
    case OpKind::grid_ids:
      writer_.line("const int64_t tile_number = blockIdx.x;");
      body_.emit_op(op);
      return;
    default: body_.emit_op(op);
  }
}

void TensorCoreKernel::emit_region(const Region& region) {
  for (const auto& op : region.operations()) emit_op(*op);
}

bool TensorCoreKernel::in_agent(const Operation& op, const Operation* agent) const {
  for (const Operation* parent = op.parent_op(); parent; parent = parent->parent_op())
    if (parent == agent) return true;
  return false;
}

std::string TensorCoreKernel::slot_address(const Value* barrier, const Value* slot) const {
  return fmt::format("{} + 8 * static_cast<uint32_t>({})", plan_.expression(barrier), plan_.expression(slot));
}

// One thread of each warpgroup releases a stage every compute thread waited for. An MMA after
// the wait makes the warpgroup's threads all pass it first (its instructions complete only when
// every warp issued them). With none between (the mmas in a loop that ran no step: a persistent
// tile whose K range is empty, with A loaded before the loop), a thread could release the stage
// while another still waits for it: the producer refills it, the full barrier completes two
// phases, and the late thread waits for the parity it missed forever. So: walk back from the
// release, out through `if`s, to the wait on the same slot; an mma on the way (not one inside a
// loop, which may run no step) settles it. A release defer-mma-releases held (its slot a carried
// value, released after a later step's MMA) finds no such wait; nor does it need one. Not when
// only the MMA issuer waited (issuer-only-waits): it is the thread that releases.
bool TensorCoreKernel::release_needs_sync(const Operation& arrive) const {
  const Value* slot = arrive.operand(1);
  const Operation* at = &arrive;
  for (const Region* region = arrive.parent_region(); region;) {
    for (size_t i = region->position_of(at); i-- > 0;) {
      const Operation& op = *region->operations()[i];
      if (op.kind() == OpKind::mma) return false;
      if (op.kind() == OpKind::mbarrier_wait && op.operand(1) == slot) return !op.has(attr::issuer);
    }
    at = region->parent_op();
    if (!at || at->kind() != OpKind::if_) return false;
    region = at->parent_region();
  }
  return false;
}

void TensorCoreKernel::emit_op(const Operation& op) {
  bool producer = in_agent(op, tc_.producer);
  if ((op.kind() == OpKind::mbarrier_wait || op.kind() == OpKind::mbarrier_arrive) &&
      tc_.register_barriers.count(op.operand(0))) {
    writer_.line(fmt::format("// {} {}: a register pipe's barrier; program order is its synchronization", op.name(),
                             plan_.expression(op.operand(0))));
    return;
  }
  switch (op.kind()) {
    case OpKind::yield: return;
    case OpKind::for_: emit_for(op); return;
    case OpKind::if_: emit_if(op); return;
    case OpKind::mbarrier_wait: {
      std::string wait = fmt::format("tilec_mbarrier_wait({}, static_cast<uint32_t>({}));",
                                     slot_address(op.operand(0), op.operand(1)), plan_.expression(op.operand(2)));
      if (op.has(attr::issuer))  // issuer-only-waits: only the MMA issuer reads the stage
        writer_.line("if (compute_thread == 0) " + wait + "  // the MMA issuer reads the stage");
      else
        writer_.line(wait);
      return;
    }
    case OpKind::mbarrier_arrive: {
      std::string address = slot_address(op.operand(0), op.operand(1));
      if (op.has_attr("expect_tx"))
        writer_.line(fmt::format("tilec_mbarrier_arrive_expect_tx({}, {});", address, op.int_attr("expect_tx")));
      else if (producer)
        writer_.line(fmt::format("tilec_mbarrier_arrive({});", address));
      else {
        if (release_needs_sync(op))
          writer_.line(fmt::format("tilec_named_barrier_sync({}, {});  // every compute thread is past its wait for "
                                   "the stage (no MMA since made it so)",
                                   tc_.private_barrier, tc_.compute_threads));
        emit_release(address);
      }
      return;
    }
    case OpKind::tma_load_async: emit_tma(op); return;
    case OpKind::mma_wait: emit_mma_wait(op); return;
    case OpKind::stage_advance: {
      const std::string& index = plan_.expression(op.operand(0));
      const std::string& phase = plan_.expression(op.operand(1));
      int64_t count = op.int_attr("count");
      writer_.line(fmt::format("const {} {} = {} + 1 == {} ? 0 : {} + 1;", scalar_type(op.result(0)),
                               plan_.expression(op.result(0)), index, count, index));
      writer_.line(fmt::format("const {} {} = {} + 1 == {} ? 1 - {} : {};", scalar_type(op.result(1)),
                               plan_.expression(op.result(1)), index, count, phase, phase));
      return;
    }
    case OpKind::stage_write:
      if (tc_.register_pipes.at(op.operand(0)).stored) {
        writer_.line(fmt::format("// stage_write {}: a copy of {}", plan_.expression(op.operand(0)),
                                 plan_.expression(op.operand(2))));
        copy_fragment(*tc_.fragment(op.operand(0)), *tc_.fragment(op.operand(2)));
        return;
      }
      writer_.line(fmt::format("// stage_write {}: {} {}", plan_.expression(op.operand(0)),
                               plan_.expression(op.operand(2)),
                               !tc_.lazy.count(op.operand(2)) ? "stays in registers"
                               : is_row(op.operand(2)->type())
                                   ? "(a row), computed per element where it is read"
                                   : "(read into a computed B), computed per element where it is read"));
      return;
    case OpKind::stage_read: {
      if (auto pipe = tc_.register_pipes.find(op.operand(0)); pipe != tc_.register_pipes.end()) {
        bool read = false;  // a loop's last value that nothing after the loop reads
        walk(tc_.compute->region(), [&](const Operation& user) {
          const auto& operands = user.operands();
          read = read || std::find(operands.begin(), operands.end(), op.result()) != operands.end();
        });
        if (pipe->second.stored && !read) {
          writer_.line(fmt::format("// {} = stage_read {}: not read, so not copied", plan_.expression(op.result()),
                                   plan_.expression(op.operand(0))));
          return;
        }
        if (pipe->second.stored) {
          writer_.line(fmt::format("// {} = stage_read {}: a copy, which later writes leave alone",
                                   plan_.expression(op.result()), plan_.expression(op.operand(0))));
          declare_fragment(*tc_.fragment(op.result()));
          copy_fragment(*tc_.fragment(op.result()), *tc_.fragment(op.operand(0)));
          return;
        }
        if (auto read = tc_.lazy_reads.find(op.result()); read != tc_.lazy_reads.end())
          writer_.line(fmt::format("// {} = stage_read {}: the {} {}, computed per element where it is read",
                                   plan_.expression(op.result()), plan_.expression(op.operand(0)),
                                   is_row(read->second->type()) ? "row" : "tile", plan_.expression(read->second)));
        else
          writer_.line(fmt::format("// {} = stage_read {}: the registers of {}", plan_.expression(op.result()),
                                   plan_.expression(op.operand(0)), tc_.fragment(op.result())->name));
        return;
      }
      const StageBuffer& buffer = tc_.stages[tc_.stage_of.at(op.operand(0))];
      writer_.line(fmt::format("const uint32_t {} = {} + static_cast<uint32_t>({}) * {};  // slot of {}",
                               plan_.expression(op.result()), buffer.name, plan_.expression(op.operand(1)),
                               buffer.slot_bytes, buffer.name));
      return;
    }
    case OpKind::named_barrier_sync:
    case OpKind::named_barrier_arrive: emit_named_barrier(op); return;
    case OpKind::event_set:
    case OpKind::event_wait:
      writer_.line(fmt::format("// {} {{event = {}, from = {}, to = {}}}: {}", op.name(), op.int_attr("event"),
                               op.string_attr("from"), op.string_attr("to"),
                               event_order()));
      return;
    case OpKind::zeros:
      if (const Accumulator* chain = tc_.accumulator(op.result())) {
        comment(op);
        writer_.line(fmt::format("bool {}_started = false;  // the first mma overwrites TMEM instead of adding",
                                 chain->name));
        return;
      }
      break;
    case OpKind::reduce_max: case OpKind::reduce_min: case OpKind::reduce_sum: emit_reduction(op); return;
    case OpKind::item: emit_item(op); return;
    case OpKind::mma: emit_mma(op); return;
    case OpKind::store: emit_store(op); return;
    default: break;
  }
  if (op.num_results() == 1 && op.result()->type().is_tile()) {
    // Else computed per element where a store writes it, or read from TMEM after its loop.
    if (tc_.fragment(op.result()) && !tc_.loaded_slices.count(op.result())) emit_fragment_op(op);
    return;
  }
  body_.emit_op(op);
}

// A mutex between the agents (prune-named-barriers removed those only one agent takes).
void TensorCoreKernel::emit_named_barrier(const Operation& op) {
  writer_.line(fmt::format("tilec_named_barrier_{}({}, {});",
                           op.kind() == OpKind::named_barrier_sync ? "sync" : "arrive", op.int_attr("id"),
                           op.int_attr("threads")));
}

void TensorCoreKernel::emit_tma(const Operation& op) {
  const StageBuffer& buffer = tc_.stages[tc_.stage_of.at(op.operand(0))];
  const Value* full = buffer.full;
  const MatrixAccess access = matrix_access(op, 3);
  comment(op);
  // Element coordinates (`load T at [r, c]`) are the box's first element already: TMA takes any,
  // negative ones too, and zero-fills outside the tensor.
  const std::string outer = access.row_origin(buffer.stored()[0]);
  for (int64_t panel = 0; panel < buffer.panels(); ++panel) {
    std::string inner = access.column_origin(buffer.stored()[1]);
    if (panel > 0) inner += fmt::format(" + {}", panel * buffer.panel_columns());
    writer_.line(
        fmt::format("tilec_tma_load_{}d({} + static_cast<uint32_t>({}) * {}{}, &{}, {}, {});", access.tma_rank(),
                    buffer.name, plan_.expression(op.operand(1)), buffer.slot_bytes,
                    panel > 0 ? fmt::format(" + {}", panel * buffer.panel_bytes()) : "", buffer.map,
                    access.tma_coordinates(inner, outer), slot_address(full, op.operand(1))));
  }
}

void TensorCoreKernel::emit_yield(const Region& region, const std::vector<const Value*>& targets) {
  const Operation* yield = region.terminator();
  std::vector<std::pair<const Value*, const Value*>> scalars;
  for (size_t i = 0; i < targets.size(); ++i) {
    const Value* source = yield->operand(i);
    const Fragment* to = tc_.fragment(targets[i]);
    const Fragment* from = tc_.fragment(source);
    if (to && from && to != from) copy_fragment(*to, *from);  // hold_loop: no two targets exchange
    if (!source->type().is_scalar() || plan_.expression(source) == plan_.expression(targets[i])) continue;
    scalars.emplace_back(targets[i], source);
  }
  std::vector<std::string> temporaries;  // read all before writing any (a yield may swap values)
  for (const auto& [target, source] : scalars) {
    temporaries.push_back(names_.unique("next_" + plan_.expression(target)));
    writer_.line(fmt::format("const {} {} = {};", scalar_type(target), temporaries.back(),
                             plan_.expression(source)));
  }
  for (size_t i = 0; i < scalars.size(); ++i)
    writer_.line(fmt::format("{} = {};", plan_.expression(scalars[i].first), temporaries[i]));
}

void TensorCoreKernel::emit_for(const Operation& op) {
  const Region& body = op.region();
  comment(op);
  std::vector<const Value*> carried;
  for (size_t i = 1; i < body.num_arguments(); ++i) {
    const Value* value = body.argument(i);
    carried.push_back(value);
    if (value->type().is_scalar())
      writer_.line(fmt::format("{} {} = {};", scalar_type(value), plan_.expression(value),
                               plan_.expression(op.operand(2 + i))));
  }
  if (auto copies = tc_.loop_copies.find(&op); copies != tc_.loop_copies.end())
    for (size_t i : copies->second) {
      declare_fragment(*tc_.fragment(body.argument(i)));
      copy_fragment(*tc_.fragment(body.argument(i)), *tc_.fragment(op.operand(2 + i)));
    }
  const std::string& iv = plan_.expression(body.argument(0));
  {
    CodeWriter::Block loop = writer_.block(fmt::format("for (int64_t {0} = {1}; {0} < {2}; {0} += {3}) {{", iv,
                                                       plan_.expression(op.operand(0)), plan_.expression(op.operand(1)),
                                                       plan_.expression(op.operand(2))));
    emit_region(body);
    emit_yield(body, carried);
  }
  emit_after_loop(op);
}

void TensorCoreKernel::emit_if(const Operation& op) {
  comment(op);
  std::vector<const Value*> results;
  for (size_t i = 0; i < op.num_results(); ++i) {
    results.push_back(op.result(i));
    if (const Fragment* tile = tc_.fragment(op.result(i))) declare_fragment(*tile);  // each branch copies into it
    else writer_.line(fmt::format("{} {}{{}};", scalar_type(op.result(i)), plan_.expression(op.result(i))));
  }
  CodeWriter::Block branches = writer_.block(fmt::format("if ({}) {{", plan_.expression(op.operand(0))));
  for (size_t r = 0; r < 2; ++r) {
    const bool empty_else = r == 1 && results.empty() && op.region(r).operations().size() == 1;  // its yield
    if (empty_else) break;
    if (r == 1) branches.next("} else {");
    emit_region(op.region(r));
    emit_yield(op.region(r), results);
  }
}

// The launcher: each tensor TMA reads or writes through TilecTmaTensor (the tensor itself, or a
// copy with rows padded to 16 bytes when TMA cannot address it), then its maps over that.
void TensorCoreKernel::emit_launcher() {
  LaunchSpec launch;
  // persistent-tiles' worker grid: one CTA per SM walking the tiles, or one per tile (`per_tile`).
  launch.summary = plan_.grid && plan_.grid->has_attr("per_tile")
                       ? "encodes the tensor maps, then one CTA per tile."
                       : "encodes the tensor maps, then one persistent CTA per worker.";
  const std::vector<TensorMap> maps = tensor_maps();
  std::vector<const Value*> tensors;
  for (const TensorMap& map : maps)
    if (std::find(tensors.begin(), tensors.end(), map.tensor) == tensors.end()) tensors.push_back(map.tensor);
  if (!tensors.empty())
    launch.setup += "// TMA addresses 16-byte aligned rows: a tensor without them goes through a padded copy.\n";
  for (const Value* tensor : tensors) {
    const std::vector<std::string>& extents = plan_.tensor_dims.at(tensor);
    const bool batched = extents.size() >= 3;  // a batch of matrices, copied (when it is) as one of B·M rows
    bool stored = std::any_of(tc_.store_ops.begin(), tc_.store_ops.end(), [&](const Operation* store) {
      return tc_.store_plans.at(store).tma && tc_.store_plans.at(store).tensor == tensor;
    });
    std::string name = plan_.expression(tensor);
    launch.setup += fmt::format("TilecTmaTensor {}_tma;\n", name);
    launch.setup += fmt::format(
        "if (const cudaError_t status = {0}_tma.prepare({0}, {1}, {2}, {3}, {4}, stream); status != cudaSuccess)\n"
        "  return status;\n",
        name, batched ? fmt::format("{} * {}", batch_extent(extents), extents[extents.size() - 2]) : extents[0],
        extents.back(),
        byte_size(tensor->type().element()), stored ? "true" : "false");
    launch.teardown +=
        fmt::format("if (const cudaError_t status = {}_tma.finish(); status != cudaSuccess) return status;\n", name);
  }
  if (!tensors.empty()) launch.teardown += "return cudaSuccess;\n";
  for (const TensorMap& map : maps) {
    std::string tensor = plan_.expression(map.tensor) + "_tma";
    const std::vector<std::string>& extents = plan_.tensor_dims.at(map.tensor);
    const size_t rank = extents.size();
    // Rank 3: B matrices of M rows, one box of one matrix; an empty tensor's copy is one element.
    // With middle dimensions (a 4-D map): B batches of M rows of H middles of columns.
    const bool middle = map.row_dimension + 2 < rank;
    std::string shape =
        middle ? fmt::format("{0}.empty() ? 1 : {1}, {0}.empty() ? 1 : {2}, {0}.empty() ? 1 : {3}", tensor,
                             extent_product(extents, 0, map.row_dimension), extents[map.row_dimension],
                             extent_product(extents, map.row_dimension + 1, rank - 1))
        : rank >= 3 ? fmt::format("3, {0}.empty() ? 1 : {1}, {0}.empty() ? 1 : {2}", tensor, batch_extent(extents),
                                  extents[rank - 2])
                    : fmt::format("2, 1, {}.map_rows()", tensor);
    launch.setup += fmt::format("CUtensorMap {};\n", map.name);
    launch.setup += fmt::format(
        "if (const cudaError_t status = tilec_tensor_map{7}(&{0}, {1}, {2}.data, {3}, {2}.map_columns(), {2}.pitch, {4}, "
        "{5}{6}); status != cudaSuccess)\n"
        "  return status;\n",
        map.name, tensor_map_type(map.element), tensor, shape, map.box_rows, map.box_columns,
        map.swizzle_bytes == kPanelRowBytes ? "" : fmt::format(", CU_TENSOR_MAP_SWIZZLE_{}B", map.swizzle_bytes),
        middle ? "_4d" : "");
  }
  launch.threads = std::to_string(total_threads());
  launch.arguments = kernel_arguments();
  launch.shared_bytes = tc_.shared_bytes;
  cuda::emit_launcher(plan_, launch, out_);
}

}  // namespace tensor_core

bool emit_tensor_core_kernel(const KernelPlan& plan, TensorCoreNeeds& needs, std::string& out,
                             DiagnosticEngine& diagnostics) {
  std::optional<tensor_core::Plan> tc = tensor_core::analyze_tensor_core_kernel(plan, needs, diagnostics);
  if (!tc) return false;
  tensor_core::make_tensor_core_kernel(plan, *tc, needs)->write(out);
  return true;
}

std::optional<TensorCorePlan> plan_tensor_core_kernel(const KernelPlan& plan, TensorCoreNeeds& needs,
                                                      DiagnosticEngine& diagnostics) {
  std::optional<tensor_core::Plan> tc = tensor_core::analyze_tensor_core_kernel(plan, needs, diagnostics);
  if (!tc) return std::nullopt;
  return tensor_core::summarize(*tc);
}

}  // namespace tilec::cuda
