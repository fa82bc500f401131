// backend/cuda/emit_tensor_core.cpp — a warp-specialized kernel on the tensor cores (see header).
//
// The kernel is analyzed first (tensor_core_analysis.h: roles, places in shared memory, arrival
// counts, how each tile value is held, mma plans; everything unsupported reported at its op),
// then written: the summary comment; the kernel (top-level scalar ops, barrier init, the role
// switch by warpgroup, each agent's ops in program order, register tiles, the epilogue per
// element); the launcher (tensor maps, opt-in shared memory, the launch).
// Layout facts (128-byte swizzle): a stage tile R x C as stored is C/P panels of R rows x 128
// bytes (P = 64 16-bit or 128 8-bit elements), panel p at p·R·128 bytes; TMA fills one panel per
// box. K-major operands (A as loaded, a transposed B): stride 1024 bytes between 8-row groups, a
// K step (16 16-bit or 32 8-bit elements) is +32 bytes inside the panel. MN-major ones (B as
// loaded, a transposed A): leading offset = panel bytes (the next 128 bytes of M or N), stride
// 1024 (next 8 K rows), a K step is +16 rows = +2048 bytes.
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
#include "backend/cuda/tensor_core_fragments.h"
#include "ir/diagnostic.h"
#include "ir/ir.h"

namespace tilec::cuda {

namespace {

using namespace tensor_core;  // NOLINT: the analysis' layout constants and records

std::string join(const std::vector<std::string>& parts, const char* separator) {
  std::string text;
  for (size_t i = 0; i < parts.size(); ++i) text += (i ? separator : "") + parts[i];
  return text;
}

const char* tensor_map_type(ScalarKind kind) {
  switch (kind) {
    case ScalarKind::bf16: return "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16";
    case ScalarKind::f16: return "CU_TENSOR_MAP_DATA_TYPE_FLOAT16";
    case ScalarKind::f8e4m3: case ScalarKind::f8e5m2: return "CU_TENSOR_MAP_DATA_TYPE_UINT8";  // TMA copies bytes
    default: return "CU_TENSOR_MAP_DATA_TYPE_FLOAT32";  // the analysis maps 8-bit, 16-bit and f32 tensors only
  }
}

class TensorCoreKernel : public tensor_core::Analysis {
 public:
  TensorCoreKernel(const KernelPlan& plan, TensorCoreNeeds& needs, DiagnosticEngine& diagnostics)
      : Analysis(plan, needs, diagnostics), body_(plan, BodyMode::cta, out_) {}

  bool run(std::string& out) {
    if (!analyze()) return false;
    emit_summary();
    emit_kernel();
    emit_launcher();
    out += out_;
    return true;
  }

 private:
  // ----------------------------------------------------------------------------- emission
  void line(int indent, const std::string& text) {
    out_.append(2 * static_cast<size_t>(indent), ' ');
    out_ += text;
    out_ += '\n';
  }

  void comment(int indent, const Operation& op) {
    std::vector<std::string> results, operands;
    for (size_t i = 0; i < op.num_results(); ++i) results.push_back(plan_.expression(op.result(i)));
    for (const Value* operand : op.operands()) operands.push_back(plan_.expression(operand));
    std::string text = "// ";
    if (!results.empty()) text += join(results, ", ") + " = ";
    text += std::string(op.name());
    if (!operands.empty()) text += " " + join(operands, ", ");
    if (op.location().known()) text += fmt::format("  (line {})", op.location().line);
    line(indent, text);
  }

  int64_t total_threads() const { return kWarpgroup + compute_threads_; }

  // setmaxnreg pays only where the register file limits the launch. With one compute warpgroup
  // (256 threads) every thread may already hold 255 registers, above the compute agent's count,
  // and an increase may not lower a count: no rebalancing then.
  bool rebalances_registers() const { return total_threads() * target_.max_thread_registers > target_.register_file; }

  void emit_summary() {
    const std::string rule(95, '-');
    line(0, "// " + rule);
    line(0, fmt::format("// kernel @{}{}: tensor cores, {} ({})", kernel_name(kernel_),
                        kernel_.location().known() ? fmt::format(" (line {})", kernel_.location().line) : "",
                        target_.name, target_.mma_summary));
    line(0, fmt::format("// grid: {} CTAs of {} threads", describe_grid(plan_), total_threads()));
    auto registers = [&](const Operation* agent) {
      return rebalances_registers() ? fmt::format("{} registers", agent->int_attr("registers")) : std::string("registers as compiled");
    };
    line(0, fmt::format("//   agents: producer warpgroup 0 (128 threads, {}, one elected thread issues TMA), "
                        "compute warpgroups 1..{} ({} threads, {})",
                        registers(producer_), compute_threads_ / kWarpgroup, compute_threads_, registers(compute_)));
    walk(compute_->region(), [&](const Operation& op) {
      if (op.kind() == OpKind::for_ && op.has_attr("ii"))
        line(0, fmt::format("//   schedule: loop at line {}: ii {}, {} stage(s){}", op.location().line, op.int_attr("ii"),
                            op.int_attr("stages", 1),
                            op.has_attr("pipeline") ? fmt::format(", pipeline({})", op.int_attr("pipeline")) : ""));
    });
    line(0, fmt::format("// shared memory: {} bytes (1024 of them for aligning the base)", shared_bytes_));
    for (const StageBuffer& buffer : stages_)
      line(0, fmt::format("//   pipe {}: {} slots x {} bytes at {}: {} of mma from {} ({}, {} panel(s) of {} columns, 128B swizzle)",
                          buffer.name, buffer.depth, buffer.slot_bytes, buffer.offset,
                          buffer.role == StageBuffer::Role::a ? "A" : "B", plan_.expression(buffer.tensor),
                          buffer.k_major() ? "K-major" : "MN-major", buffer.panels(), panel_columns(buffer.tile.element())));
    for (const Barrier& barrier : barriers_)
      line(0, fmt::format("//   mbarrier {}: {} slot(s) at {}, {} arrival(s) per phase, {}", barrier.name, barrier.slots,
                          barrier.offset, barrier.arrivals, barrier.purpose));
    for (const Operation* mma : mma_ops_)
      if (mma_plans_.at(mma).staging_bytes > 0)
        line(0, fmt::format("//   A of the mma at line {} (from registers): {} bytes at {}, 128B swizzle", mma->location().line,
                            mma_plans_.at(mma).staging_bytes, mma_plans_.at(mma).staging_offset));
    if (store_staging_offset_ >= 0)
      for (const Operation* store : store_ops_) {
        const StorePlan& plan = store_plans_.at(store);
        if (plan.tma)
          line(0, fmt::format("//   store at line {}: through shared memory ({} bytes per compute warpgroup at {}) and TMA, boxes "
                              "of {}x{} (128B swizzle)", store->location().line, kStoreStagingBytes, store_staging_offset_,
                              plan.box_rows, plan.chunk_columns));
      }
    if (exchange_offset_ >= 0)
      line(0, fmt::format("//   row-reduction exchange between the compute warpgroups: {} bytes at {}", 4 * compute_threads_,
                          exchange_offset_));
    walk(kernel_.region(), [&](const Operation& op) {
      if (op.kind() == OpKind::stage_buffer && register_pipes_.count(op.result()))
        line(0, fmt::format("//   pipe {}: {} in registers (written and read by the compute agent in program order)",
                            plan_.expression(op.result()), op.result()->type().to_string()));
    });
    for (const Accumulator& accumulator : accumulators_)
      line(0, fmt::format("//   accumulator {}: {}x{} f32 in TMEM columns {}..{}", accumulator.name, accumulator.rows,
                          accumulator.columns, accumulator.tmem_column, accumulator.tmem_column + accumulator.columns - 1));
    for (const Fragment& held : fragments_)
      line(0, fmt::format("//   {} {}: {}x{} {} in registers, {} per thread", held.accumulator ? "accumulator" : "register tile",
                          held.name, held.rows, held.columns, to_string(held.element), layout_.count(held.columns)));
    line(0, "// " + rule);
  }

  struct TensorMap {
    std::string name;
    const Value* tensor = nullptr;
    ScalarKind element = ScalarKind::bf16;
    int64_t box_rows = 0, box_columns = 0;
  };

  // Where a load or store of a 2-D tile meets its tensor: the matrix of a rank-2 tensor, or the
  // one a rank-3 tensor's leading (batch) coordinate picks (shape_in_tensor). `first` is the
  // operand of the first coordinate; the tensor is the operand before it.
  struct MatrixAccess {
    std::string base;           // the matrix's first element: "C", or "(C + static_cast<int64_t>(b) * (M * N))"
    std::string inside;         // "" or "0 <= b && b < B && ": the batch exists
    std::string batch;          // the batch coordinate ("" for a rank-2 tensor)
    std::string row, column;    // the tile coordinates
    std::string rows, columns;  // the matrix's extents
  };
  MatrixAccess matrix_access(const Operation& op, size_t first) const {
    const Value* tensor = op.operand(first - 1);
    const std::vector<std::string>& extents = plan_.tensor_dims.at(tensor);
    const bool batched = extents.size() == 3;
    MatrixAccess access;
    access.rows = extents[batched ? 1 : 0];
    access.columns = extents[batched ? 2 : 1];
    access.row = plan_.expression(op.operand(first + (batched ? 1 : 0)));
    access.column = plan_.expression(op.operand(first + (batched ? 2 : 1)));
    access.base = plan_.expression(tensor);
    if (batched) {
      access.batch = plan_.expression(op.operand(first));
      access.base = fmt::format("({} + static_cast<int64_t>({}) * ({} * {}))", access.base, access.batch, access.rows,
                                access.columns);
      access.inside = fmt::format("0 <= {0} && {0} < {1} && ", access.batch, extents[0]);
    }
    return access;
  }

  // One tensor map per tensor the stage buffers load from, in stage-buffer order, then one per
  // tensor TMA stores write, in program order.
  std::vector<TensorMap> tensor_maps() const {
    std::vector<TensorMap> maps;
    auto add = [&](const TensorMap& map) {
      if (std::none_of(maps.begin(), maps.end(), [&](const TensorMap& seen) { return seen.name == map.name; }))
        maps.push_back(map);
    };
    for (const StageBuffer& buffer : stages_)
      add({buffer.map, buffer.tensor, buffer.tile.element(), buffer.stored()[0], panel_columns(buffer.tile.element())});
    for (const Operation* store : store_ops_) {
      const StorePlan& plan = store_plans_.at(store);
      if (plan.tma) add({plan.map, plan.tensor, plan.tensor->type().element(), plan.box_rows, plan.chunk_columns});
    }
    return maps;
  }

  std::string kernel_parameters() const {
    std::vector<std::string> parts;
    for (const TensorMap& map : tensor_maps()) parts.push_back("const __grid_constant__ CUtensorMap " + map.name);
    std::string rest = parameter_list(plan_);
    if (!rest.empty()) parts.push_back(rest);
    return join(parts, ", ");
  }

  std::string kernel_arguments() const {
    std::vector<std::string> parts;
    for (const TensorMap& map : tensor_maps()) parts.push_back(map.name);
    std::string rest = argument_list(plan_);
    if (!rest.empty()) parts.push_back(rest);
    return join(parts, ", ");
  }

  void emit_kernel() {
    line(0, fmt::format("__global__ void TILEC_LAUNCH_BOUNDS({}, 1) {}_kernel({}) {{", total_threads(), plan_.name,
                        kernel_parameters()));
    line(0, fmt::format("#if defined({}) || defined({})", target_.feature_macro, target_.emulate_macro));
    line(1, "TILEC_DYNAMIC_SHARED(1024, shared_memory);");
    line(1, "// The 128-byte swizzle repeats every 1024 bytes: stage buffers start on such a boundary.");
    line(1, "const uint32_t shared_base = (tilec_shared_address(shared_memory) + 1023u) & ~1023u;");
    line(1, "unsigned char* const shared_aligned = shared_memory + (shared_base - tilec_shared_address(shared_memory));");
    line(1, "(void)shared_aligned;");
    for (const auto& op : kernel_.region().operations()) {
      if (op.get() == specialize_) break;
      emit_top_level(*op);
    }
    line(1, "if (threadIdx.x == 0) {");
    for (const Barrier& barrier : barriers_)
      line(2, fmt::format("for (uint32_t slot = 0; slot < {}; ++slot) tilec_mbarrier_init({} + 8 * slot, {});",
                          barrier.slots, barrier.name, barrier.arrivals));
    if (tcgen05()) line(2, "tilec_mbarrier_init(accumulator_barrier, 1);");
    line(2, "tilec_fence_barrier_init();");
    line(1, "}");
    if (tcgen05()) {
      line(1, fmt::format("if (threadIdx.x / 32 == {}) tilec_tmem_alloc<{}>(tmem_slot);  // the first compute warp",
                          kWarpgroup / 32, tmem_columns_));
      line(1, "tilec_tcgen05_before_sync();");
    }
    line(1, "__syncthreads();");
    if (tcgen05()) {
      line(1, "tilec_tcgen05_after_sync();");
      line(1, "const uint32_t tmem_base = *reinterpret_cast<volatile uint32_t*>(shared_aligned + (tmem_slot - shared_base));");
    }
    comment(1, *specialize_);
    const bool rebalance = rebalances_registers();
    line(1, "if (threadIdx.x < 128) {");
    if (rebalance) line(2, fmt::format("tilec_lower_registers<{}>();", producer_->int_attr("registers")));
    line(2, "// One elected thread of warp 0 runs the producer; the other threads of the warpgroup are done.");
    line(2, "if (threadIdx.x / 32 == 0 && tilec_elect_one()) {");
    emit_region(producer_->region(), 3);
    line(2, "}");
    line(1, "} else {");
    if (rebalance) line(2, fmt::format("tilec_raise_registers<{}>();", compute_->int_attr("registers")));
    line(2, "const int compute_thread = static_cast<int>(threadIdx.x) - 128;");
    line(2, "const int compute_warpgroup = compute_thread / 128;");
    line(2, "(void)compute_warpgroup;");
    if (tcgen05()) line(2, "uint32_t accumulator_parity = 0;");
    emit_region(compute_->region(), 2);
    if (store_staging_offset_ >= 0)
      line(2, "if (compute_thread % 128 == 0) tilec_bulk_wait_all();  // this warpgroup's TMA stores are written");
    if (tcgen05()) {
      line(2, "// Every compute thread is done with TMEM: the first compute warp frees it.");
      line(2, "tilec_tcgen05_before_sync();");
      line(2, fmt::format("tilec_named_barrier_sync({}, {});", private_barrier_, compute_threads_));
      line(2, fmt::format("if (threadIdx.x / 32 == {}) tilec_tmem_dealloc<{}>(tmem_base);", kWarpgroup / 32, tmem_columns_));
    }
    line(1, "}");
    line(0, "#else");
    line(1, fmt::format("__trap();  // built for another architecture than {}", target_.name));
    line(0, "#endif");
    line(0, "}");
    line(0, "");
  }

  void emit_top_level(const Operation& op) {
    switch (op.kind()) {
      case OpKind::mbarrier_create: {
        if (register_barriers_.count(op.result())) {
          line(1, fmt::format("// {}: a register pipe's barrier, not needed (one agent, program order)", plan_.expression(op.result())));
          return;
        }
        const Barrier& barrier = barriers_[barrier_of_.at(op.result())];
        line(1, fmt::format("const uint32_t {} = shared_base + {};  // {} mbarrier(s)", barrier.name, barrier.offset, barrier.slots));
        if (tcgen05() && &barrier == &barriers_.back()) {
          line(1, fmt::format("const uint32_t accumulator_barrier = shared_base + {};", accumulator_barrier_offset_));
          line(1, fmt::format("const uint32_t tmem_slot = shared_base + {};", tmem_slot_offset_));
        }
        return;
      }
      case OpKind::stage_buffer: {
        if (register_pipes_.count(op.result())) {
          line(1, fmt::format("// {}: {} in registers: the compute threads read what they wrote", plan_.expression(op.result()),
                              op.result()->type().to_string()));
          return;
        }
        const StageBuffer& buffer = stages_[stage_of_.at(op.result())];
        line(1, fmt::format("const uint32_t {} = shared_base + {};  // {} slots of {}", buffer.name, buffer.offset,
                            buffer.depth, buffer.tile.to_string()));
        return;
      }
      case OpKind::grid_ids:
        line(1, "const int64_t tile_number = blockIdx.x;");
        body_.emit_op(op, 1);
        return;
      default: body_.emit_op(op, 1);
    }
  }

  void emit_region(const Region& region, int indent) {
    for (const auto& op : region.operations()) emit_op(*op, indent);
  }

  bool in_agent(const Operation& op, const Operation* agent) const {
    for (const Operation* parent = op.parent_op(); parent; parent = parent->parent_op())
      if (parent == agent) return true;
    return false;
  }

  std::string slot_address(const Value* barrier, const Value* slot) const {
    return fmt::format("{} + 8 * static_cast<uint32_t>({})", plan_.expression(barrier), plan_.expression(slot));
  }

  void emit_op(const Operation& op, int indent) {
    bool producer = in_agent(op, producer_);
    if ((op.kind() == OpKind::mbarrier_wait || op.kind() == OpKind::mbarrier_arrive) &&
        register_barriers_.count(op.operand(0))) {
      line(indent, fmt::format("// {} {}: a register pipe's barrier; program order is its synchronization", op.name(),
                               plan_.expression(op.operand(0))));
      return;
    }
    switch (op.kind()) {
      case OpKind::yield: return;
      case OpKind::for_: emit_for(op, indent); return;
      case OpKind::if_: emit_if(op, indent); return;
      case OpKind::mbarrier_wait: {
        std::string wait = fmt::format("tilec_mbarrier_wait({}, static_cast<uint32_t>({}));",
                                       slot_address(op.operand(0), op.operand(1)), plan_.expression(op.operand(2)));
        bool full = std::any_of(stages_.begin(), stages_.end(), [&](const StageBuffer& b) { return b.full == op.operand(0); });
        // sm_100a: only the thread issuing tcgen05.mma reads the stages. The others must not wait
        // on full barriers: nothing keeps them within a lap of the producer, and a thread a whole
        // lap behind would wait on the parity of a phase that already completed twice.
        if (tcgen05() && full && !producer)
          line(indent, "if (compute_thread == 0) " + wait + "  // the MMA issuer reads the stage");
        else
          line(indent, wait);
        return;
      }
      case OpKind::mbarrier_arrive: {
        std::string address = slot_address(op.operand(0), op.operand(1));
        if (op.has_attr("expect_tx"))
          line(indent, fmt::format("tilec_mbarrier_arrive_expect_tx({}, {});", address, op.int_attr("expect_tx")));
        else if (producer)
          line(indent, fmt::format("tilec_mbarrier_arrive({});", address));
        else if (tcgen05())
          line(indent, fmt::format("if (compute_thread == 0) tilec_tcgen05_commit({});  // when the MMAs reading it are done", address));
        else if (auto held = deferred_arrive_.find(&op); held != deferred_arrive_.end()) {
          line(indent, fmt::format("// Release the slot the previous iteration read (its WGMMAs are done: wait_group 1); hold this one."));
          line(indent, fmt::format("if ({0} >= 0 && compute_thread % 128 == 0) tilec_mbarrier_arrive({1} + 8 * static_cast<uint32_t>({0}));",
                                   held->second, plan_.expression(op.operand(0))));
          line(indent, fmt::format("{} = {};", held->second, plan_.expression(op.operand(1))));
        } else
          line(indent, fmt::format("if (compute_thread % 128 == 0) tilec_mbarrier_arrive({});  // one arrival per warpgroup", address));
        return;
      }
      case OpKind::tma_load_async: emit_tma(op, indent); return;
      case OpKind::stage_advance: {
        const std::string& index = plan_.expression(op.operand(0));
        const std::string& phase = plan_.expression(op.operand(1));
        int64_t count = op.int_attr("count");
        line(indent, fmt::format("const int64_t {} = {} + 1 == {} ? 0 : {} + 1;", plan_.expression(op.result(0)), index, count, index));
        line(indent, fmt::format("const int64_t {} = {} + 1 == {} ? 1 - {} : {};", plan_.expression(op.result(1)), index, count, phase, phase));
        return;
      }
      case OpKind::stage_write:
        line(indent, fmt::format("// stage_write {}: {} stays in registers", plan_.expression(op.operand(0)),
                                 plan_.expression(op.operand(2))));
        return;
      case OpKind::stage_read: {
        if (auto pipe = register_pipes_.find(op.operand(0)); pipe != register_pipes_.end()) {
          line(indent, fmt::format("// {} = stage_read {}: the registers of {}", plan_.expression(op.result()),
                                   plan_.expression(op.operand(0)), fragment(op.result())->name));
          return;
        }
        const StageBuffer& buffer = stages_[stage_of_.at(op.operand(0))];
        line(indent, fmt::format("const uint32_t {} = {} + static_cast<uint32_t>({}) * {};  // slot of {}",
                                 plan_.expression(op.result()), buffer.name, plan_.expression(op.operand(1)),
                                 buffer.slot_bytes, buffer.name));
        return;
      }
      case OpKind::named_barrier_sync:
      case OpKind::named_barrier_arrive: emit_named_barrier(op, indent); return;
      case OpKind::event_set:
      case OpKind::event_wait:
        line(indent, fmt::format("// {} {{event = {}, from = {}, to = {}}}: {}", op.name(), op.int_attr("event"),
                                 op.string_attr("from"), op.string_attr("to"),
                                 tcgen05() ? "within one agent: program order and the accumulator barrier"
                                             : "within one agent: program order, wgmma.fence and wait_group"));
        return;
      case OpKind::zeros:
        if (auto chain = accumulator_of_.find(op.result()); chain != accumulator_of_.end()) {
          comment(indent, op);
          line(indent, fmt::format("bool {}_started = false;  // the first mma overwrites TMEM instead of adding",
                                   accumulators_[chain->second].name));
          return;
        }
        break;
      case OpKind::reduce_max: case OpKind::reduce_min: case OpKind::reduce_sum: emit_reduction(op, indent); return;
      case OpKind::mma: emit_mma(op, indent); return;
      case OpKind::store: emit_store(op, indent); return;
      default: break;
    }
    if (op.num_results() == 1 && op.result()->type().is_tile()) {
      if (fragment(op.result())) emit_fragment_op(op, indent);
      return;  // else computed per element where a store writes it
    }
    body_.emit_op(op, indent);
  }

  void emit_named_barrier(const Operation& op, int indent) {
    int64_t id = op.int_attr("id");
    bool shared = false;
    walk(kernel_.region(), [&](const Operation& other) {
      if ((other.kind() == OpKind::named_barrier_sync || other.kind() == OpKind::named_barrier_arrive) &&
          other.int_attr("id") == id && !in_agent(other, in_agent(op, producer_) ? producer_ : compute_))
        shared = true;
    });
    if (!shared) {
      line(indent, fmt::format("// {} {{id = {}}}: a mutex only this agent takes orders nothing", op.name(), id));
      return;
    }
    line(indent, fmt::format("tilec_named_barrier_{}({}, {});", op.kind() == OpKind::named_barrier_sync ? "sync" : "arrive",
                             id, op.int_attr("threads")));
  }

  void emit_tma(const Operation& op, int indent) {
    const StageBuffer& buffer = stages_[stage_of_.at(op.operand(0))];
    const Value* full = buffer.full;
    const MatrixAccess access = matrix_access(op, 3);
    comment(indent, op);
    for (int64_t panel = 0; panel < buffer.panels(); ++panel) {
      std::string inner = fmt::format("{} * {}", access.column, buffer.stored()[1]);
      if (panel > 0) inner += fmt::format(" + {}", panel * panel_columns(buffer.tile.element()));
      line(indent, fmt::format("tilec_tma_load_{}d({} + static_cast<uint32_t>({}) * {}{}, &{}, static_cast<int32_t>({}), "
                               "static_cast<int32_t>({} * {}), {}{});",
                               access.batch.empty() ? 2 : 3, buffer.name, plan_.expression(op.operand(1)), buffer.slot_bytes,
                               panel > 0 ? fmt::format(" + {}", panel * buffer.panel_bytes()) : "", buffer.map, inner,
                               access.row, buffer.stored()[0],
                               access.batch.empty() ? "" : fmt::format("static_cast<int32_t>({}), ", access.batch),
                               slot_address(full, op.operand(1))));
    }
  }

  // A loop over the registers of a fragment with `columns` columns: `name[i] = value;`, with
  // `row` and `column` declared when the value reads them.
  void emit_fragment_loop(int indent, int64_t columns, const std::string& assignment, bool position) {
    int64_t count = layout_.count(columns);
    line(indent, "#pragma unroll");
    if (!position) {
      line(indent, fmt::format("for (int i = 0; i < {}; ++i) {}", count, assignment));
      return;
    }
    line(indent, fmt::format("for (int i = 0; i < {}; ++i) {{", count));
    line(indent + 1, FragmentLayout::position_variables());
    line(indent + 1, fmt::format("const int row = {}, column = {};", layout_.row("i", columns == 1), layout_.column("i", columns)));
    line(indent + 1, "(void)row, (void)column;");
    line(indent + 1, assignment);
    line(indent, "}");
  }

  void declare_fragment(int indent, const Fragment& fragment) {
    line(indent, fmt::format("{} {}[{}];", element_type(fragment.element), fragment.name, layout_.count(fragment.columns)));
  }

  void copy_fragment(int indent, const Fragment& to, const Fragment& from) {
    emit_fragment_loop(indent, to.columns, fmt::format("{}[i] = {}[i];", to.name, from.name), false);
  }

  // A tile op whose result the compute threads keep in registers.
  void emit_fragment_op(const Operation& op, int indent) {
    const Fragment& result = *fragment(op.result());
    comment(indent, op);
    declare_fragment(indent, result);
    position_used_ = false;
    ElementContext context;
    context.row_vector = result.columns == 1;
    std::string value = op_element(op, context);
    emit_fragment_loop(indent, result.columns, fmt::format("{}[i] = {};", result.name, value), position_used_);
  }

  // reduce_max / reduce_min / reduce_sum along the columns: each thread over its registers, then
  // across the threads holding the other columns of its rows.
  void emit_reduction(const Operation& op, int indent) {
    const Fragment& result = *fragment(op.result());
    const Fragment& input = *fragment(op.operand(0));
    OpKind kind = op.kind();
    std::string combine = kind == OpKind::reduce_max   ? "max_f32({0}, {1})"
                          : kind == OpKind::reduce_min ? "min_f32({0}, {1})"
                                                       : "add_f32({0}, {1})";
    comment(indent, op);
    declare_fragment(indent, result);
    line(indent, "{");
    line(indent + 1, "#pragma unroll");
    line(indent + 1, fmt::format("for (int i = 0; i < {}; ++i) {}[i] = {};", layout_.count(1), result.name,
                                 kind == OpKind::reduce_max   ? "-INFINITY"
                                 : kind == OpKind::reduce_min ? "INFINITY"
                                                              : "0.0f"));
    std::string slot = fmt::format("{}[{}]", result.name, layout_.row_slot("i"));
    line(indent + 1, "#pragma unroll");
    line(indent + 1, fmt::format("for (int i = 0; i < {}; ++i) {} = {};", layout_.count(input.columns), slot,
                                 fmt::format(fmt::runtime(combine), slot, input.name + "[i]")));
    std::string exchange, barrier;
    if (exchange_offset_ >= 0) {
      line(indent + 1, FragmentLayout::position_variables());
      line(indent + 1, fmt::format("float* const exchange = reinterpret_cast<float*>(shared_aligned + {});", exchange_offset_));
      exchange = "exchange";
      barrier = fmt::format("tilec_named_barrier_sync({}, {});", private_barrier_, compute_threads_);
    }
    std::string rows = layout_.combine_rows(result.name, combine, exchange, barrier);
    for (size_t start = 0, end; (end = rows.find('\n', start)) != std::string::npos; start = end + 1)
      line(indent + 1, rows.substr(start, end - start));
    line(indent, "}");
  }

  // The A operand of K step `step` (32 bytes of K) in a 128-byte-swizzled K-major tile at `base`
  // whose panels (128 bytes of each row) are `panel_bytes` apart, for rows starting `row_offset`
  // bytes in.
  static std::string a_address(const std::string& base, int64_t panel_bytes, int64_t step, const std::string& row_offset) {
    int64_t byte = step * kMmaKBytes;
    int64_t offset = byte / kPanelRowBytes * panel_bytes + byte % kPanelRowBytes;
    return fmt::format("{} + {}{}", base, offset, row_offset);
  }

  // MN-major operands (B as loaded, a transposed A): leading offset = panel bytes (the next 128
  // bytes of M or N), a K step = its K rows of the stored tile; `mn_offset`: bytes to the
  // first panel. K-major ones (A as loaded, a transposed B) start at a_address.
  static std::string operand_descriptor(const StageBuffer& operand, const std::string& slot, int64_t step,
                                        const std::string& k_major_row_offset = "", const std::string& mn_offset = "") {
    if (operand.k_major())
      return fmt::format("tilec_matrix_descriptor({}, 16, 1024)", a_address(slot, operand.panel_bytes(), step, k_major_row_offset));
    return fmt::format("tilec_matrix_descriptor({} + {}{}, {}, 1024)", slot, step * mma_k(operand.tile.element()) * kPanelRowBytes,
                       mn_offset, operand.panel_bytes());
  }

  // Bits 4-5: D is f32. Bits 7-9 and 10-12, A's and B's format: kind::f16 has f16 0 and bf16 1,
  // kind::tf32 tf32 2, kind::f8f6f4 e4m3 0 and e5m2 1 (A's and B's may differ). Bits 15 and 16
  // (A's and B's major-ness): 0 for K-major, 1 for MN-major. Bits 17-22: N / 8; bits 24-28: M / 16.
  static uint32_t tcgen05_format(ScalarKind input) {
    return tf32_input(input) ? 2u : input == ScalarKind::bf16 || input == ScalarKind::f8e5m2 ? 1u : 0u;
  }
  static uint32_t tcgen05_instruction(const MmaPlan& plan, int64_t rows, int64_t columns, bool b_k_major = false,
                                      bool a_k_major = true) {
    return (1u << 4) | (tcgen05_format(plan.input) << 7) | (tcgen05_format(plan.input_b) << 10) | (a_k_major ? 0u : 1u << 15) |
           (b_k_major ? 0u : 1u << 16) | (static_cast<uint32_t>(columns >> 3) << 17) | (static_cast<uint32_t>(rows >> 4) << 24);
  }

  static const char* tcgen05_function(ScalarKind input) {
    if (tf32_input(input)) return "tilec_tcgen05_mma_tf32";
    return eight_bit_input(input) ? "tilec_tcgen05_mma_f8f6f4" : "tilec_tcgen05_mma";
  }

  void emit_mma(const Operation& op, int indent) {
    const MmaPlan& plan = mma_plans_.at(&op);
    comment(indent, op);
    if (!tcgen05()) emit_wgmma(op, plan, indent);
    else if (plan.registers) emit_tcgen05_into_registers(op, plan, indent);
    else emit_tcgen05_into_tmem(op, plan, indent);
  }

  // sm_100a, an accumulator kept in TMEM: the first mma overwrites it, the others add.
  void emit_tcgen05_into_tmem(const Operation& op, const MmaPlan& plan, int indent) {
    const Accumulator& accumulator = accumulators_[accumulator_of_.at(op.result())];
    const StageBuffer& a = stages_[stage_of_.at(op.operand(0)->defining_op()->operand(0))];
    const StageBuffer& b = stages_[stage_of_.at(op.operand(1)->defining_op()->operand(0))];
    line(indent, "if (compute_thread == 0) {");
    line(indent + 1, "tilec_tcgen05_after_sync();");
    for (int64_t step = 0; step < a.tile.shape()[1] / mma_k(plan.input); ++step)
      line(indent + 1, fmt::format("{}(tmem_base + {}, {}, {}, 0x{:08x}u, {});", tcgen05_function(plan.input),
                                   accumulator.tmem_column, operand_descriptor(a, plan_.expression(op.operand(0)), step),
                                   operand_descriptor(b, plan_.expression(op.operand(1)), step),
                                   tcgen05_instruction(plan, accumulator.rows, accumulator.columns, b.transposed, a.k_major()),
                                   step == 0 ? accumulator.name + "_started" : "true"));
    line(indent, "}");
    line(indent, fmt::format("{}_started = true;", accumulator.name));
  }

  // sm_100a, D in registers: A·B into TMEM columns of this mma's own (A from registers is
  // first written to shared memory as TMA would have), then D = C + A·B read back.
  void emit_tcgen05_into_registers(const Operation& op, const MmaPlan& plan, int indent) {
    const Fragment& result = *fragment(op.result());
    const Fragment& acc = *fragment(op.operand(2));
    const StageBuffer& b = stages_[stage_of_.at(op.operand(1)->defining_op()->operand(0))];
    int64_t per_warpgroup = result.columns * kWarpgroup / compute_threads_;
    std::string a_base = plan_.expression(op.operand(0));
    int64_t a_panel = 0, k = 0;
    const StageBuffer* a_stage = nullptr;  // A from a stage buffer (else staged from registers, K-major)
    if (const Fragment* a = fragment(op.operand(0))) {
      int64_t a_columns = a->columns * kWarpgroup / compute_threads_;
      a_panel = a->rows * kPanelRowBytes;
      k = a->columns;
      a_base = fmt::format("(shared_base + {})", plan.staging_offset);
      line(indent, "{  // A to shared memory in the 128-byte swizzle: 16-byte chunk c of row r goes to chunk c ^ (r % 8)");
      line(indent + 1, FragmentLayout::position_variables());
      line(indent + 1, fmt::format("unsigned char* const staging = shared_aligned + {};", plan.staging_offset));
      line(indent + 1, "#pragma unroll");
      line(indent + 1, fmt::format("for (int i = 0; i < {}; ++i) {{", a_columns));
      line(indent + 2, fmt::format("const int row = {}, column = {};", layout_.row("i", false), layout_.column("i", a->columns)));
      line(indent + 2, fmt::format("*reinterpret_cast<{}*>(staging + column / 64 * {} + row * 128 + ((column % 64 / 8) ^ (row % 8)) * 16 + "
                                   "column % 8 * 2) = {}[i];", element_type(a->element), a_panel, a->name));
      line(indent + 1, "}");
      line(indent, "}");
      line(indent, "tilec_fence_proxy_async();  // the writes above are read by tcgen05.mma");
      line(indent, fmt::format("tilec_named_barrier_sync({}, {});", private_barrier_, compute_threads_));
    } else {
      a_stage = &stages_[stage_of_.at(op.operand(0)->defining_op()->operand(0))];
      a_panel = a_stage->panel_bytes();
      k = a_stage->tile.shape()[1];
    }
    line(indent, "if (compute_thread == 0) {");
    line(indent + 1, "tilec_tcgen05_after_sync();");
    for (int64_t step = 0; step < k / mma_k(plan.input); ++step)
      line(indent + 1, fmt::format("{}(tmem_base + {}, {}, {}, 0x{:08x}u, {});", tcgen05_function(plan.input), plan.tmem_column,
                                   a_stage ? operand_descriptor(*a_stage, a_base, step)
                                           : fmt::format("tilec_matrix_descriptor({}, 16, 1024)", a_address(a_base, a_panel, step, "")),
                                   operand_descriptor(b, plan_.expression(op.operand(1)), step),
                                   tcgen05_instruction(plan, result.rows, result.columns, b.transposed,
                                                       !a_stage || a_stage->k_major()),
                                   step == 0 ? "false" : "true"));
    line(indent + 1, "tilec_tcgen05_commit(accumulator_barrier);");
    line(indent, "}");
    line(indent, "tilec_mbarrier_wait(accumulator_barrier, accumulator_parity);");
    line(indent, "accumulator_parity ^= 1;");
    line(indent, "tilec_tcgen05_after_sync();");
    if (plan.copy) declare_fragment(indent, result);
    line(indent, "{");
    line(indent + 1, FragmentLayout::position_variables());
    line(indent + 1, fmt::format("for (int chunk = 0; chunk < {}; ++chunk) {{", per_warpgroup / 32));
    line(indent + 2, "uint32_t values[32];");
    line(indent + 2, fmt::format("tilec_tmem_load_32(tmem_base + (static_cast<uint32_t>(warp * 32) << 16) + {} + "
                                 "static_cast<uint32_t>(compute_warpgroup * {} + chunk * 32), values);",
                                 plan.tmem_column, per_warpgroup));
    line(indent + 2, "#pragma unroll");
    line(indent + 2, fmt::format("for (int i = 0; i < 32; ++i) {0}[chunk * 32 + i] = add_f32({1}[chunk * 32 + i], __uint_as_float(values[i]));",
                                 result.name, acc.name));
    line(indent + 1, "}");
    line(indent, "}");
    emit_tmem_release(indent);
  }

  // sm_90a: WGMMA into the register tile, A from shared memory or from registers.
  void emit_wgmma(const Operation& op, const MmaPlan& plan, int indent) {
    const Fragment& result = *fragment(op.result());
    const StageBuffer& b = stages_[stage_of_.at(op.operand(1)->defining_op()->operand(0))];
    const std::string& b_slot = plan_.expression(op.operand(1));
    const Fragment* a_registers = fragment(op.operand(0));
    if (plan.copy) {
      declare_fragment(indent, result);
      copy_fragment(indent, result, *fragment(op.operand(2)));
    }
    const StageBuffer* a_stage = a_registers ? nullptr : &stages_[stage_of_.at(op.operand(0)->defining_op()->operand(0))];
    const std::string function = wgmma_function(plan.wgmma);
    std::string packed;
    if (a_registers) {
      // Columns 16s..16s+15 of A are registers 8s..8s+7 of its fragment, two per 32-bit register;
      // packed before the fence so that no instruction touches WGMMA registers between the MMAs.
      packed = names_.unique(a_registers->name + "_pairs");
      line(indent, fmt::format("uint32_t {}[{}];", packed, a_registers->columns / 4));
      line(indent, "#pragma unroll");
      line(indent, fmt::format("for (int i = 0; i < {}; ++i) {}[i] = tilec_pack_pair({}[2 * i], {}[2 * i + 1]);",
                               a_registers->columns / 4, packed, a_registers->name, a_registers->name));
    }
    line(indent, "tilec_wgmma_fence();");
    if (a_registers) {
      for (int64_t step = 0; step < a_registers->columns / mma_k(plan.input); ++step)
        line(indent, fmt::format("{0}({1}, {2}[{3}], {2}[{4}], {2}[{5}], {2}[{6}], {7});", function, result.name, packed, 4 * step,
                                 4 * step + 1, 4 * step + 2, 4 * step + 3, operand_descriptor(b, b_slot, step)));
    } else {
      // Each warpgroup's 64 rows of A: 64 rows further in a K-major A, one panel (128 bytes of M)
      // further in an MN-major one.
      const StageBuffer& a = *a_stage;
      for (int64_t step = 0; step < a.tile.shape()[1] / mma_k(plan.input); ++step)
        line(indent, fmt::format("{}({}, {}, {});", function, result.name,
                                 operand_descriptor(a, plan_.expression(op.operand(0)), step,
                                                    fmt::format(" + static_cast<uint32_t>(compute_warpgroup) * {}", 64 * kPanelRowBytes),
                                                    fmt::format(" + static_cast<uint32_t>(compute_warpgroup) * {}", a.panel_bytes())),
                                 operand_descriptor(b, b_slot, step)));
    }
    line(indent, "tilec_wgmma_commit();");
    if (deferred_mma_.count(&op))
      line(indent, "tilec_wgmma_wait<1>();  // this step's WGMMAs stay in flight; the previous step's are done");
    else
      line(indent, "tilec_wgmma_wait<0>();  // the stage may be released once its last reader is done");
  }

  struct ElementContext {
    std::string index = "i";   // the register of the fragment being computed
    bool row_vector = false;   // that fragment is a row vector
    // Each TMEM accumulator's element (stores on sm_100a), from the registers tcgen05.ld filled.
    std::map<const Accumulator*, std::string> accumulators;
  };

  // sm_100a stores: load 32 columns of each accumulator the store reads (TMEM lane base `lanes`,
  // first column `column`) into values, values_1, ..., and say in `context` where each element is.
  void emit_accumulator_loads(const std::vector<const Accumulator*>& accumulators, const std::string& lanes,
                              const std::string& column, ElementContext& context, int indent) {
    for (size_t k = 0; k < accumulators.size(); ++k) {
      const Accumulator& accumulator = *accumulators[k];
      std::string values = k == 0 ? "values" : fmt::format("values_{}", k);
      line(indent, fmt::format("uint32_t {}[32];", values));
      line(indent, fmt::format("tilec_tmem_load_32(tmem_base + {} + {} + static_cast<uint32_t>({}), {});", lanes,
                               accumulator.tmem_column, column, values));
      context.accumulators[&accumulator] =
          fmt::format("({}_started ? __uint_as_float({}[i]) : 0.0f)", accumulator.name, values);
    }
  }

  // An iota's element at tile position (row, column): the position along its axis.
  std::string iota_element(const Operation& op, const std::string& row, const std::string& column) {
    position_used_ = true;
    return fmt::format("static_cast<{}>({})", element_type(op.result()->type().element()),
                       op.int_attr("axis") == 0 ? row : column);
  }

  // A load's element at tile position (row, column): zero outside the tensor.
  std::string load_element(const Operation& op, const std::string& row, const std::string& column) {
    position_used_ = true;
    const std::vector<int64_t>& shape = op.result()->type().shape();
    std::string r = shape[0] == 1 ? "0" : row, c = shape[1] == 1 ? "0" : column;
    const MatrixAccess access = matrix_access(op, 1);
    std::string index0 = fmt::format("({} * {} + {})", access.row, shape[0], r);
    std::string index1 = fmt::format("({} * {} + {})", access.column, shape[1], c);
    return fmt::format("({6}{0} < {2} && {1} < {3} ? {4}[{0} * {3} + {1}] : {5})", index0, index1, access.rows,
                       access.columns, access.base, zero_literal(op.result()->type().element()), access.inside);
  }

  // One element of `value` as a C++ expression: registers of fragments, a TMEM accumulator's
  // element, lazily computed values at (`row`, `column`), scalars.
  std::string element(const Value* value, const ElementContext& context) {
    if (!value->type().is_tile()) return plan_.expression(value);
    if (auto it = accumulator_of_.find(value); it != accumulator_of_.end())
      return context.accumulators.at(&accumulators_[it->second]);
    if (const Fragment* held = fragment(value)) {
      if (held->columns == 1 && !context.row_vector) return fmt::format("{}[{}]", held->name, layout_.row_slot(context.index));
      return fmt::format("{}[{}]", held->name, context.index);
    }
    return op_element(*value->defining_op(), context);
  }

  // One element of the tile `op` computes, from its operands' elements.
  std::string op_element(const Operation& op, const ElementContext& context) {
    if (op.kind() == OpKind::load) return load_element(op, "row", "column");
    if (op.kind() == OpKind::full) return plan_.expression(op.operand(0));
    if (op.kind() == OpKind::zeros) return zero_literal(op.result()->type().element());
    if (op.kind() == OpKind::iota) return iota_element(op, "row", "column");
    std::vector<std::string> operands;
    for (const Value* operand : op.operands()) operands.push_back(element(operand, context));
    return body_.element_expression(op, operands);
  }

  void emit_store(const Operation& op, int indent) {
    const StorePlan& plan = store_plans_.at(&op);
    if (plan.tma) {
      emit_tma_store(op, plan, indent);
      return;
    }
    const bool accumulators = !plan.accumulators.empty();
    const Value* value = op.operands().back();
    const MatrixAccess access = matrix_access(op, 1);
    int64_t rows = value->type().shape()[0], columns = value->type().shape()[1];
    std::string row_base = fmt::format("{} * {}", access.row, rows);
    std::string column_base = fmt::format("{} * {}", access.column, columns);
    comment(indent, op);
    line(indent, "{");
    if (tcgen05()) {
      int64_t half = columns * kWarpgroup / compute_threads_;
      ElementContext context;
      if (accumulators) {
        emit_accumulator_wait(indent + 1);
        context.index = "chunk * 32 + i";
      }
      std::string lanes = "((static_cast<uint32_t>(row) & ~31u) << 16)";
      if (rows == 64) {
        line(indent + 1, "// M = 64 (TMEM layout F): warp w's lanes 0..15 hold rows 16·(w mod 4)..; lanes 16..31 load with");
        line(indent + 1, "// their warp and store nothing. Each warpgroup takes its columns.");
        line(indent + 1, "const int row = static_cast<int>((threadIdx.x / 32) % 4) * 16 + static_cast<int>(threadIdx.x % 32);");
        lanes = "(static_cast<uint32_t>((threadIdx.x / 32) % 4 * 32) << 16)";
      } else {
        line(indent + 1, "// Warp w reads TMEM lanes 32·(w mod 4)..: one row per thread; each warpgroup takes its columns.");
        line(indent + 1, "const int row = static_cast<int>((threadIdx.x / 32) % 4) * 32 + static_cast<int>(threadIdx.x % 32);");
      }
      line(indent + 1, fmt::format("const int first_column = compute_warpgroup * {};", half));
      if (accumulators) {
        line(indent + 1, "#pragma unroll");
        line(indent + 1, fmt::format("for (int chunk = 0; chunk < {}; ++chunk) {{", half / 32));
        emit_accumulator_loads(plan.accumulators, lanes, "first_column + chunk * 32", context, indent + 2);
        line(indent + 2, "#pragma unroll");
        line(indent + 2, "for (int i = 0; i < 32; ++i) {");
        line(indent + 3, "const int column = first_column + chunk * 32 + i;");
        emit_store_element(value, access, row_base, column_base, context, indent + 3);
        line(indent + 2, "}");
        line(indent + 1, "}");
        emit_tmem_release(indent + 1);
      } else {
        line(indent + 1, "#pragma unroll");
        line(indent + 1, fmt::format("for (int i = 0; i < {}; ++i) {{", half));
        line(indent + 2, "const int column = first_column + i;");
        emit_store_element(value, access, row_base, column_base, context, indent + 2);
        line(indent + 1, "}");
      }
    } else {
      line(indent + 1, "// WGMMA's accumulator layout: register i of lane l in warp w of the warpgroup holds row");
      line(indent + 1, "// 16w + l/4 + 8·((i/2) mod 2) and column 8·(i/4) + 2·(l mod 4) + (i mod 2).");
      line(indent + 1, "const int lane = compute_thread % 32, warp = (compute_thread % 128) / 32;");
      line(indent + 1, "#pragma unroll");
      line(indent + 1, fmt::format("for (int i = 0; i < {}; ++i) {{", layout_.count(columns)));
      line(indent + 2, "const int row = compute_warpgroup * 64 + warp * 16 + lane / 4 + 8 * ((i / 2) % 2);");
      line(indent + 2, "const int column = 8 * (i / 4) + 2 * (lane % 4) + i % 2;");
      emit_store_element(value, access, row_base, column_base, ElementContext{}, indent + 2);
      line(indent + 1, "}");
    }
    line(indent, "}");
  }

  // sm_100a: the MMAs into TMEM issued so far are complete when the accumulator barrier's phase is.
  void emit_accumulator_wait(int indent) {
    line(indent, "// The MMAs into the accumulator are complete when the accumulator barrier's phase is.");
    line(indent, "if (compute_thread == 0) tilec_tcgen05_commit(accumulator_barrier);");
    line(indent, "tilec_mbarrier_wait(accumulator_barrier, accumulator_parity);");
    line(indent, "accumulator_parity ^= 1;");
    line(indent, "tilec_tcgen05_after_sync();");
  }

  void emit_tmem_release(int indent) {
    line(indent, "// TMEM is read: a later MMA may overwrite it.");
    line(indent, "tilec_tcgen05_before_sync();");
    line(indent, fmt::format("tilec_named_barrier_sync({}, {});", private_barrier_, compute_threads_));
    line(indent, "tilec_tcgen05_after_sync();");
  }

  // Through shared memory and TMA: each compute warpgroup writes its part of the tile box by box
  // (rows of 128 bytes, the 128-byte swizzle: 16-byte chunk c of box row r at chunk c ^ (r % 8))
  // into its staging, and one of its threads stores the box. A staging box is written again only
  // once the store reading it is done (bulk wait_group.read); TMA leaves out what lies outside
  // the tensor.
  void emit_tma_store(const Operation& op, const StorePlan& plan, int indent) {
    const Value* value = op.operands().back();
    ScalarKind kind = value->type().element();
    int64_t rows = value->type().shape()[0], columns = value->type().shape()[1];
    int64_t per_warpgroup = tcgen05() ? columns * kWarpgroup / compute_threads_ : columns;
    int64_t width = plan.chunk_columns, box_bytes = plan.box_rows * kPanelRowBytes;
    const MatrixAccess access = matrix_access(op, 1);
    std::string row_base = fmt::format("{} * {}", access.row, rows);
    std::string column_base = fmt::format("{} * {}", access.column, columns);
    std::string sync = fmt::format("tilec_named_barrier_sync({} + compute_warpgroup, 128);", private_barrier_ + 1);
    comment(indent, op);
    line(indent, "{");
    if (!plan.accumulators.empty()) emit_accumulator_wait(indent + 1);
    line(indent + 1, FragmentLayout::position_variables());
    line(indent + 1, "const bool storer = compute_thread % 128 == 0;  // issues this warpgroup's TMA stores");
    line(indent + 1, fmt::format("const uint32_t staging = shared_base + {} + static_cast<uint32_t>(compute_warpgroup) * {};",
                                 store_staging_offset_, kStoreStagingBytes));
    line(indent + 1, "unsigned char* const staging_bytes = shared_aligned + (staging - shared_base);");
    line(indent + 1, "#pragma unroll");
    line(indent + 1, fmt::format("for (int chunk = 0; chunk < {}; ++chunk) {{", per_warpgroup / width));
    line(indent + 2, fmt::format("const uint32_t box = static_cast<uint32_t>(chunk % {}) * {};", plan.buffers, box_bytes));
    line(indent + 2, fmt::format("if (storer) {{  // the box is free once at most {} newer store(s) still read staging", plan.buffers - 1));
    line(indent + 3, fmt::format("if (chunk == 0) tilec_bulk_wait_read<0>(); else tilec_bulk_wait_read<{}>();", plan.buffers - 1));
    line(indent + 2, "}");
    line(indent + 2, sync);
    std::string store_row, store_column;
    if (!tcgen05()) {
      // Registers chunk·W/2 .. of WGMMA's layout hold columns chunk·W .. of the warpgroup's 64 rows.
      line(indent + 2, "#pragma unroll");
      line(indent + 2, fmt::format("for (int j = 0; j < {}; ++j) {{", width / 2));
      line(indent + 3, fmt::format("const int i = chunk * {} + j;", width / 2));
      line(indent + 3, "const int box_row = warp * 16 + lane / 4 + 8 * ((i / 2) % 2);");
      line(indent + 3, "const int row = compute_warpgroup * 64 + box_row, column = 8 * (i / 4) + 2 * (lane % 4) + i % 2;");
      line(indent + 3, "(void)row;");
      emit_staging_element(value, kind, fmt::format("column - chunk * {}", width), ElementContext{}, indent + 3);
      line(indent + 2, "}");
      store_row = row_base + " + compute_warpgroup * 64";
      store_column = fmt::format("{} + chunk * {}", column_base, width);
    } else {
      // One row per thread (its TMEM lane); the warpgroup's columns 32 at a time.
      line(indent + 2, "const int row = warp * 32 + lane, box_row = row;");
      line(indent + 2, fmt::format("const int first_column = compute_warpgroup * {} + chunk * {};", per_warpgroup, width));
      line(indent + 2, "#pragma unroll");
      line(indent + 2, fmt::format("for (int piece = 0; piece < {}; ++piece) {{", width / 32));
      ElementContext context;
      context.index = "index";
      emit_accumulator_loads(plan.accumulators, "(static_cast<uint32_t>(warp * 32) << 16)", "first_column + piece * 32",
                             context, indent + 3);
      line(indent + 3, "#pragma unroll");
      line(indent + 3, "for (int i = 0; i < 32; ++i) {");
      line(indent + 4, fmt::format("const int column = first_column + piece * 32 + i, index = chunk * {} + piece * 32 + i;", width));
      line(indent + 4, "(void)column, (void)index;");
      emit_staging_element(value, kind, "piece * 32 + i", context, indent + 4);
      line(indent + 3, "}");
      line(indent + 2, "}");
      store_row = row_base;
      store_column = fmt::format("{} + compute_warpgroup * {} + chunk * {}", column_base, per_warpgroup, width);
    }
    line(indent + 2, "tilec_fence_proxy_async();  // the box is read by TMA");
    line(indent + 2, sync);
    line(indent + 2, fmt::format("if (storer) {{ tilec_tma_store_{}d(&{}, staging + box, static_cast<int32_t>({}), "
                                 "static_cast<int32_t>({}){}); tilec_bulk_commit(); }}", access.batch.empty() ? 2 : 3,
                                 plan.map, store_column, store_row,
                                 access.batch.empty() ? "" : fmt::format(", static_cast<int32_t>({})", access.batch)));
    line(indent + 1, "}");
    if (!plan.accumulators.empty()) emit_tmem_release(indent + 1);
    line(indent, "}");
  }

  // The stored value's element at (row, column) into the staging box at (box_row, box_column).
  void emit_staging_element(const Value* value, ScalarKind kind, const std::string& box_column,
                            const ElementContext& context, int indent) {
    line(indent, fmt::format("const int byte = ({}) * {};", box_column, byte_size(kind)));
    line(indent, fmt::format("*reinterpret_cast<{}*>(staging_bytes + box + box_row * 128 + ((byte / 16) ^ (box_row % 8)) * 16 + "
                             "byte % 16) = {};", element_type(kind), element(value, context)));
  }

  void emit_store_element(const Value* value, const MatrixAccess& access, const std::string& row_base,
                          const std::string& column_base, const ElementContext& context, int indent) {
    // sm_100a, 64 rows: only lanes 0..15 of a warp hold one.
    const bool half_warp = tcgen05() && value->type().shape()[0] == 64;
    line(indent, fmt::format("const int64_t index0 = {} + row, index1 = {} + column;", row_base, column_base));
    line(indent, fmt::format("if ({}{}index0 < {} && index1 < {}) {}[index0 * {} + index1] = {};",
                             half_warp ? "threadIdx.x % 32 < 16 && " : "", access.inside, access.rows, access.columns,
                             access.base, access.columns, element(value, context)));
  }

  void emit_yield(const Region& region, const std::vector<const Value*>& targets, int indent) {
    const Operation* yield = region.terminator();
    std::vector<std::pair<const Value*, const Value*>> scalars;
    for (size_t i = 0; i < targets.size(); ++i) {
      const Value* source = yield->operand(i);
      const Fragment* to = fragment(targets[i]);
      const Fragment* from = fragment(source);
      if (to && from && to != from) copy_fragment(indent, *to, *from);  // hold_loop: no two targets exchange
      if (!source->type().is_scalar() || plan_.expression(source) == plan_.expression(targets[i])) continue;
      scalars.emplace_back(targets[i], source);
    }
    std::vector<std::string> temporaries;  // read all before writing any (a yield may swap values)
    for (const auto& [target, source] : scalars) {
      temporaries.push_back(names_.unique("next_" + plan_.expression(target)));
      line(indent, fmt::format("const {} {} = {};", element_type(source->type().element()), temporaries.back(),
                               plan_.expression(source)));
    }
    for (size_t i = 0; i < scalars.size(); ++i)
      line(indent, fmt::format("{} = {};", plan_.expression(scalars[i].first), temporaries[i]));
  }

  void emit_for(const Operation& op, int indent) {
    const Region& body = op.region();
    comment(indent, op);
    std::vector<const Value*> carried;
    for (size_t i = 1; i < body.num_arguments(); ++i) {
      const Value* value = body.argument(i);
      carried.push_back(value);
      if (value->type().is_scalar())
        line(indent, fmt::format("{} {} = {};", element_type(value->type().element()), plan_.expression(value),
                                 plan_.expression(op.operand(2 + i))));
    }
    if (auto copies = loop_copies_.find(&op); copies != loop_copies_.end())
      for (size_t i : copies->second) {
        declare_fragment(indent, *fragment(body.argument(i)));
        copy_fragment(indent, *fragment(body.argument(i)), *fragment(op.operand(2 + i)));
      }
    auto releases = loop_releases_.find(&op);
    if (releases != loop_releases_.end())
      for (const auto& [arrive, held] : releases->second)
        line(indent, fmt::format("int64_t {} = -1;  // the slot of {} this warpgroup still reads", held,
                                 stages_name_of_empty(arrive->operand(0))));
    const std::string& iv = plan_.expression(body.argument(0));
    line(indent, fmt::format("for (int64_t {0} = {1}; {0} < {2}; {0} += {3}) {{", iv, plan_.expression(op.operand(0)),
                             plan_.expression(op.operand(1)), plan_.expression(op.operand(2))));
    emit_region(body, indent + 1);
    emit_yield(body, carried, indent + 1);
    line(indent, "}");
    if (releases != loop_releases_.end()) {
      line(indent, "tilec_wgmma_wait<0>();  // the last step's WGMMAs, then release the slots they read");
      for (const auto& [arrive, held] : releases->second)
        line(indent, fmt::format("if ({0} >= 0 && compute_thread % 128 == 0) tilec_mbarrier_arrive({1} + 8 * static_cast<uint32_t>({0}));",
                                 held, plan_.expression(arrive->operand(0))));
    }
  }

  std::string stages_name_of_empty(const Value* empty) const {
    for (const StageBuffer& buffer : stages_)
      if (buffer.empty == empty) return buffer.name;
    return plan_.expression(empty);
  }

  void emit_if(const Operation& op, int indent) {
    comment(indent, op);
    std::vector<const Value*> results;
    for (size_t i = 0; i < op.num_results(); ++i) {
      results.push_back(op.result(i));
      line(indent, fmt::format("{} {}{{}};", element_type(op.result(i)->type().element()), plan_.expression(op.result(i))));
    }
    line(indent, fmt::format("if ({}) {{", plan_.expression(op.operand(0))));
    for (size_t r = 0; r < 2; ++r) {
      if (r == 1) line(indent, "} else {");
      emit_region(op.region(r), indent + 1);
      emit_yield(op.region(r), results, indent + 1);
    }
    line(indent, "}");
  }

  // The launcher: each tensor TMA reads or writes through TilecTmaTensor (the tensor itself, or a
  // copy with rows padded to 16 bytes when TMA cannot address it), then its maps over that.
  void emit_launcher() {
    LaunchSpec launch;
    launch.summary = "encodes the tensor maps, then one persistent CTA per worker.";
    const std::vector<TensorMap> maps = tensor_maps();
    std::vector<const Value*> tensors;
    for (const TensorMap& map : maps)
      if (std::find(tensors.begin(), tensors.end(), map.tensor) == tensors.end()) tensors.push_back(map.tensor);
    if (!tensors.empty())
      launch.setup += "  // TMA addresses 16-byte aligned rows: a tensor without them goes through a padded copy.\n";
    for (const Value* tensor : tensors) {
      const std::vector<std::string>& extents = plan_.tensor_dims.at(tensor);
      const bool batched = extents.size() == 3;  // a batch of matrices, copied (when it is) as one of B·M rows
      bool stored = std::any_of(store_ops_.begin(), store_ops_.end(), [&](const Operation* store) {
        return store_plans_.at(store).tma && store_plans_.at(store).tensor == tensor;
      });
      std::string name = plan_.expression(tensor);
      launch.setup += fmt::format("  TilecTmaTensor {}_tma;\n", name);
      launch.setup += fmt::format(
          "  if (const cudaError_t status = {0}_tma.prepare({0}, {1}, {2}, {3}, {4}, stream); status != cudaSuccess)\n"
          "    return status;\n",
          name, batched ? fmt::format("{} * {}", extents[0], extents[1]) : extents[0], extents.back(),
          byte_size(tensor->type().element()), stored ? "true" : "false");
      launch.teardown += fmt::format("  if (const cudaError_t status = {}_tma.finish(); status != cudaSuccess) return status;\n", name);
    }
    if (!tensors.empty()) launch.teardown += "  return cudaSuccess;\n";
    for (const TensorMap& map : maps) {
      std::string tensor = plan_.expression(map.tensor) + "_tma";
      const std::vector<std::string>& extents = plan_.tensor_dims.at(map.tensor);
      // Rank 3: B matrices of M rows, one box of one matrix; an empty tensor's copy is one element.
      std::string shape = extents.size() == 3
                              ? fmt::format("3, {0}.empty() ? 1 : {1}, {0}.empty() ? 1 : {2}", tensor, extents[0], extents[1])
                              : fmt::format("2, 1, {}.map_rows()", tensor);
      launch.setup += fmt::format("  CUtensorMap {};\n", map.name);
      launch.setup += fmt::format(
          "  if (const cudaError_t status = tilec_tensor_map(&{0}, {1}, {2}.data, {3}, {2}.map_columns(), {2}.pitch, {4}, "
          "{5}); status != cudaSuccess)\n"
          "    return status;\n",
          map.name, tensor_map_type(map.element), tensor, shape, map.box_rows, map.box_columns);
    }
    launch.threads = std::to_string(total_threads());
    launch.arguments = kernel_arguments();
    launch.shared_bytes = shared_bytes_;
    cuda::emit_launcher(plan_, launch, out_);
  }

  std::string out_;
  BodyEmitter body_;
  bool position_used_ = false;  // the element expression being built reads `row` / `column`
};

}  // namespace

bool emit_tensor_core_kernel(const KernelPlan& plan, TensorCoreNeeds& needs, std::string& out,
                             DiagnosticEngine& diagnostics) {
  return TensorCoreKernel(plan, needs, diagnostics).run(out);
}

}  // namespace tilec::cuda
