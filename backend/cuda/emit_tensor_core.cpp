// backend/cuda/emit_tensor_core.cpp — a warp-specialized kernel on the tensor cores (see header).
//
// Phases:
//   1. Analyze (Analysis below): find the warp_specialize and its producer (the agent with the
//      TMA loads) and compute agents; give each stage buffer its role (mma's A: K-major; mma's
//      B: MN-major), its tensor map and its 1024-aligned place in shared memory; give each
//      mbarrier its arrival count (sm_90a: one arrival per compute warpgroup where the compute
//      agent arrives; sm_100a: tcgen05.commit arrives once); follow each f32 accumulator from its
//      `zeros` through loops and mmas to the stores; check every op against what is supported.
//   2. Emit: the summary comment; the kernel (top-level scalar ops, barrier init, the role switch
//      by warpgroup, each agent's ops in program order, the epilogue per element); the launcher
//      (tensor maps, opt-in shared memory, the launch).
// Layout facts (128-byte swizzle): a stage tile R x C of 16-bit elements is C/64 panels of
// R rows x 128 bytes, panel p at p·R·128 bytes; TMA fills one panel per box. A's descriptor:
// K-major, stride 1024 bytes between 8-row groups, a 16-element K step is +32 bytes inside the
// panel. B's: MN-major, leading offset = panel bytes (next 64 columns), stride 1024 (next 8
// K rows), a K step is +16 rows = +2048 bytes.
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
#include "ir/diagnostic.h"
#include "ir/ir.h"

namespace tilec::cuda {

namespace {

constexpr int64_t kWarpgroup = 128;
constexpr int64_t kPanelColumns = 64;  // 16-bit elements in one 128-byte swizzle row
constexpr int64_t kPanelRowBytes = 128;
constexpr int64_t kSwizzleAtomBytes = 1024;  // 8 rows of 128 bytes
constexpr int64_t kMmaK = 16;                // K of one WGMMA / tcgen05.mma (16-bit inputs)
constexpr int64_t kRegisterFile = 65536;
constexpr int64_t kTmemColumns = 512;

void walk_const(const Region& region, const std::function<void(const Operation&)>& visit) {
  for (const auto& op : region.operations()) {
    visit(*op);
    for (size_t r = 0; r < op->num_regions(); ++r) walk_const(op->region(r), visit);
  }
}

std::string join(const std::vector<std::string>& parts, const char* separator) {
  std::string text;
  for (size_t i = 0; i < parts.size(); ++i) text += (i ? separator : "") + parts[i];
  return text;
}

const char* tensor_map_type(ScalarKind kind) {
  return kind == ScalarKind::bf16 ? "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16" : "CU_TENSOR_MAP_DATA_TYPE_FLOAT16";
}

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
  int64_t panels() const { return tile.shape()[1] / kPanelColumns; }
  int64_t panel_bytes() const { return tile.shape()[0] * kPanelRowBytes; }
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

class TensorCoreKernel {
 public:
  TensorCoreKernel(const KernelPlan& plan, TensorCoreNeeds& needs, DiagnosticEngine& diagnostics)
      : plan_(plan), kernel_(*plan.kernel), target_(needs.target), needs_(needs), diagnostics_(diagnostics),
        names_(plan.names), body_(plan, BodyMode::cta, out_) {}

  bool run(std::string& out) {
    if (!analyze()) return false;
    emit_summary();
    emit_kernel();
    emit_launcher();
    out += out_;
    return true;
  }

 private:
  bool blackwell() const { return target_ == "sm_100a"; }

  bool unsupported(const Operation& op, const std::string& what) {
    diagnostics_.error(op.location(), fmt::format("the tensor-core CUDA backend ({}) does not support {}", target_, what));
    return false;
  }

  // ----------------------------------------------------------------------------- analysis
  bool analyze() {
    const Region& body = kernel_.region();
    for (const auto& op : body.operations())
      if (op->kind() == OpKind::stage_buffer && op->result(0)->type().payload().space() == MemorySpace::reg)
        return unsupported(*op, "a stage buffer in registers (a value crossing the stages of a software-pipelined "
                                "loop, as in attention's online softmax): elementwise ops, reductions and mma on "
                                "register fragments are not written yet");
    for (const auto& op : body.operations()) {
      switch (op->kind()) {
        case OpKind::warp_specialize:
          if (specialize_) return unsupported(*op, "a second warp_specialize in one kernel");
          specialize_ = op.get();
          break;
        case OpKind::mbarrier_create: add_barrier(*op); break;
        case OpKind::stage_buffer: add_stage_buffer(*op); break;
        case OpKind::return_: break;
        default:
          if (specialize_) return unsupported(*op, fmt::format("'{}' after the warp_specialize", op->name()));
          if (op->num_regions() > 0 || (op->num_results() > 0 && !op->result(0)->type().is_scalar()))
            return unsupported(*op, fmt::format("'{}' before the warp_specialize", op->name()));
      }
    }
    if (!specialize_) return unsupported(kernel_, "a kernel without warp_specialize");
    for (const auto& op : specialize_->region().operations()) {
      if (op->kind() != OpKind::agent) continue;
      bool loads = false;
      walk_const(op->region(), [&](const Operation& inner) { loads = loads || inner.kind() == OpKind::tma_load_async; });
      (loads ? producer_ : compute_) = op.get();
      agents_.push_back(op.get());
    }
    if (agents_.size() != 2 || !producer_ || !compute_)
      return unsupported(*specialize_, "agents other than one TMA producer and one compute agent");
    if (producer_->int_attr("threads") != kWarpgroup)
      return unsupported(*producer_, "a producer agent that is not one warpgroup of 128 threads");
    compute_threads_ = compute_->int_attr("threads");
    if (compute_threads_ != kWarpgroup && compute_threads_ != 2 * kWarpgroup)
      return unsupported(*compute_, "a compute agent that is not one or two warpgroups (128 or 256 threads)");
    for (const Operation* agent : agents_) {
      int64_t registers = agent->int_attr("registers");
      if (registers < 24 || registers > 256 || registers % 8 != 0)
        return unsupported(*agent, fmt::format("registers = {} (setmaxnreg takes a multiple of 8 in 24..256)", registers));
    }
    if (producer_->int_attr("registers") * kWarpgroup + compute_->int_attr("registers") * compute_threads_ > kRegisterFile)
      return unsupported(*compute_, "agents whose registers exceed the 65,536 of an SM");

    bool ok = check_agent(*producer_, true) && check_agent(*compute_, false);
    ok = ok && check_stage_buffers() && place_shared_memory();
    if (ok && !blackwell()) plan_deferred_releases();
    return ok && !diagnostics_.has_errors();
  }

  void add_barrier(const Operation& op) {
    Barrier barrier;
    barrier.op = &op;
    barrier.name = plan_.expression(op.result());
    barrier.slots = op.int_attr("count", 1);
    barrier.arrivals = op.int_attr("arrivals", 1);
    barrier_of_[op.result()] = barriers_.size();
    barriers_.push_back(barrier);
  }

  void add_stage_buffer(const Operation& op) {
    StageBuffer buffer;
    buffer.op = &op;
    buffer.name = plan_.expression(op.result());
    buffer.tile = op.result()->type().payload();
    buffer.depth = op.result()->type().depth();
    buffer.full = op.operand(0);
    buffer.empty = op.operand(1);
    stage_of_[op.result()] = stages_.size();
    stages_.push_back(buffer);
  }

  // Every op of an agent is one this emitter writes; records accumulators, TMA sources and the
  // operand roles of mma.
  bool check_agent(const Operation& agent, bool producer) {
    bool ok = true;
    walk_const(agent.region(), [&](const Operation& op) {
      if (!ok) return;
      ok = check_op(op, producer);
    });
    return ok;
  }

  bool check_op(const Operation& op, bool producer) {
    switch (op.kind()) {
      case OpKind::constant: case OpKind::yield: case OpKind::mbarrier_wait: case OpKind::mbarrier_arrive:
      case OpKind::stage_advance: case OpKind::named_barrier_sync: case OpKind::named_barrier_arrive:
      case OpKind::event_set: case OpKind::event_wait:
        return true;
      case OpKind::for_: return check_loop(op);
      case OpKind::if_:
        for (size_t i = 0; i < op.num_results(); ++i)
          if (!op.result(i)->type().is_scalar()) return unsupported(op, "an 'if' with a tile result");
        return true;
      case OpKind::tma_load_async: return check_tma(op);
      case OpKind::stage_read:
        if (producer) return unsupported(op, "a stage_read on the producer agent");
        return true;
      case OpKind::zeros:
        if (producer) return unsupported(op, "tile arithmetic on the producer agent");
        return add_accumulator(op);
      case OpKind::mma:
        if (producer) return unsupported(op, "mma on the producer agent");
        return check_mma(op);
      case OpKind::store:
        if (producer) return unsupported(op, "a store on the producer agent");
        return check_store(op);
      case OpKind::load:
        if (producer || op.result()->type().rank() != 2) return unsupported(op, "this 'load' (only 2-D tiles read by a compute agent's epilogue)");
        return true;
      default: break;
    }
    if (op.num_results() == 1 && op.result()->type().is_scalar() && op.num_regions() == 0 &&
        op.kind() != OpKind::grid_ids && op.kind() != OpKind::sm_count)
      return true;  // scalar arithmetic
    if (!producer && op.info().has(kElementwise) && op.num_results() == 1 && op.result()->type().is_tile() &&
        op.result()->type().rank() == 2)
      return true;  // epilogue arithmetic, evaluated per element at the store
    return unsupported(op, fmt::format("'{}' inside an agent", op.name()));
  }

  bool add_accumulator(const Operation& op) {
    const Type& type = op.result()->type();
    if (type.element() != ScalarKind::f32 || type.rank() != 2)
      return unsupported(op, fmt::format("a {} tile of zeros (accumulators are 2-D f32 tiles)", type.to_string()));
    Accumulator accumulator;
    accumulator.name = plan_.expression(op.result());
    accumulator.zeros = &op;
    accumulator.rows = type.shape()[0];
    accumulator.columns = type.shape()[1];
    accumulator_of_[op.result()] = accumulators_.size();
    accumulators_.push_back(accumulator);
    return true;
  }

  // Carried accumulators stay in place: the body argument, the loop result and the yielded value
  // are the same accumulator.
  bool check_loop(const Operation& loop) {
    const Region& body = loop.region();
    for (size_t i = 1; i < body.num_arguments(); ++i) {
      const Value* argument = body.argument(i);
      if (argument->type().is_scalar()) continue;
      auto init = accumulator_of_.find(loop.operand(2 + i));
      if (init == accumulator_of_.end()) return unsupported(loop, "a loop carrying a tile that is not an mma accumulator");
      accumulator_of_[argument] = init->second;
      accumulator_of_[loop.result(i - 1)] = init->second;
      pending_yields_.push_back({&loop, i});
    }
    return true;
  }

  bool check_tma(const Operation& op) {
    const Value* buffer_value = op.operand(0);
    auto it = stage_of_.find(buffer_value);
    if (it == stage_of_.end()) return unsupported(op, "a tma_load_async into something other than a stage buffer");
    StageBuffer& buffer = stages_[it->second];
    const Value* tensor = op.operand(2);
    if (tensor->type().rank() != 2) return unsupported(op, fmt::format("TMA from a rank-{} tensor (2-D only)", tensor->type().rank()));
    if (buffer.tensor && buffer.tensor != tensor) return unsupported(op, "one stage buffer filled from two tensors");
    buffer.tensor = tensor;
    buffer.map = plan_.expression(tensor) + "_map";
    return true;
  }

  bool check_mma(const Operation& op) {
    auto stage_operand = [&](size_t i) -> StageBuffer* {
      const Operation* read = op.operand(i)->defining_op();
      if (!read || read->kind() != OpKind::stage_read) return nullptr;
      auto it = stage_of_.find(read->operand(0));
      return it == stage_of_.end() ? nullptr : &stages_[it->second];
    };
    StageBuffer* a = stage_operand(0);
    StageBuffer* b = stage_operand(1);
    if (!a || !b) return unsupported(op, "an mma whose operands are not stage buffers filled by TMA");
    auto acc = accumulator_of_.find(op.operand(2));
    if (acc == accumulator_of_.end()) return unsupported(op, "an mma whose accumulator does not start from zeros");
    for (auto [buffer, role] : {std::pair{a, StageBuffer::Role::a}, std::pair{b, StageBuffer::Role::b}}) {
      if (buffer->role != StageBuffer::Role::none && buffer->role != role)
        return unsupported(op, "a stage buffer read as both A and B of mma");
      buffer->role = role;
    }
    Accumulator& accumulator = accumulators_[acc->second];
    ScalarKind input = a->tile.element();
    if (input != b->tile.element() || (input != ScalarKind::bf16 && input != ScalarKind::f16))
      return unsupported(op, fmt::format("mma of {} x {} (bf16 or f16 inputs)", to_string(input), to_string(b->tile.element())));
    accumulator.input = input;
    int64_t m = accumulator.rows, n = accumulator.columns, k = a->tile.shape()[1];
    if (blackwell()) {
      if (m != 128) return unsupported(op, fmt::format("an mma of {} rows (tcgen05.mma M = 128 here)", m));
    } else if (m != 64 * (compute_threads_ / kWarpgroup)) {
      return unsupported(op, fmt::format("an mma of {} rows on {} compute warpgroups (64 rows each)", m, compute_threads_ / kWarpgroup));
    }
    if (n % kPanelColumns != 0 || n > 256)
      return unsupported(op, fmt::format("an mma {} columns wide (a multiple of 64, at most 256)", n));
    if (k % kPanelColumns != 0)
      return unsupported(op, fmt::format("an mma with K = {} per step (a multiple of 64: one 128-byte swizzle row)", k));
    accumulator_of_[op.result()] = acc->second;
    if (!blackwell()) needs_.wgmma_shapes.insert(fmt::format("64x{}:{}", n, input == ScalarKind::bf16 ? "bf16" : "f16"));
    mma_ops_.push_back(&op);
    return true;
  }

  bool check_store(const Operation& op) {
    const Value* value = op.operands().back();
    if (!value->type().is_tile() || value->type().rank() != 2 || op.operand(0)->type().rank() != 2)
      return unsupported(op, "a store that is not a 2-D tile");
    const Accumulator* accumulator = nullptr;
    bool ok = true;
    std::function<void(const Value*)> visit = [&](const Value* leaf) {
      if (!leaf->type().is_tile()) return;
      auto it = accumulator_of_.find(leaf);
      if (it != accumulator_of_.end()) {
        if (accumulator && accumulator != &accumulators_[it->second]) ok = false;
        accumulator = &accumulators_[it->second];
        return;
      }
      const Operation* def = leaf->defining_op();
      if (!def || def->kind() == OpKind::stage_read) {
        ok = false;
        return;
      }
      if (def->kind() == OpKind::load) return;
      for (const Value* operand : def->operands()) visit(operand);
    };
    visit(value);
    if (!ok || !accumulator) return unsupported(op, "a stored value that is not computed element by element from one mma accumulator");
    if (value->type().shape() != std::vector<int64_t>{accumulator->rows, accumulator->columns})
      return unsupported(op, "a stored tile of another shape than its accumulator");
    store_accumulator_[&op] = accumulator;
    return true;
  }

  bool check_stage_buffers() {
    for (const auto& [loop, index] : pending_yields_) {
      const Value* yielded = loop->region().terminator()->operand(index - 1);
      auto it = accumulator_of_.find(yielded);
      if (it == accumulator_of_.end() || it->second != accumulator_of_.at(loop->region().argument(index)))
        return unsupported(*loop, "a loop that yields another tile than the accumulator it carries");
    }
    for (StageBuffer& buffer : stages_) {
      const Type& tile = buffer.tile;
      if (!buffer.tensor) return unsupported(*buffer.op, "a stage buffer no TMA load fills");
      if (buffer.role == StageBuffer::Role::none) return unsupported(*buffer.op, "a stage buffer mma does not read");
      if (tile.rank() != 2 || byte_size(tile.element()) != 2 || tile.shape()[1] % kPanelColumns != 0 ||
          tile.shape()[0] % 8 != 0 || tile.shape()[0] > 256)
        return unsupported(*buffer.op, fmt::format("a stage tile {} (16-bit, rows a multiple of 8 up to 256, "
                                                   "columns a multiple of 64)", tile.to_string()));
      buffer.slot_bytes = tile.element_count() * 2;
      for (const Value* barrier : {buffer.full, buffer.empty}) {
        auto it = barrier_of_.find(barrier);
        if (it == barrier_of_.end() || barriers_[it->second].slots < buffer.depth)
          return unsupported(*buffer.op, fmt::format("a stage buffer {} slots deep whose full or empty mbarrier has fewer "
                                                     "slots", buffer.depth));
      }
    }
    int64_t columns = 0;
    for (Accumulator& accumulator : accumulators_) {
      accumulator.tmem_column = columns;
      columns += accumulator.columns;
    }
    if (blackwell()) {
      tmem_columns_ = 32;
      while (tmem_columns_ < columns) tmem_columns_ *= 2;
      if (tmem_columns_ > kTmemColumns)
        return unsupported(kernel_, fmt::format("accumulators of {} TMEM columns (the budget is {})", columns, kTmemColumns));
    }
    // Arrivals per phase: a compute agent arrives once per warpgroup (sm_90a) or once through
    // tcgen05.commit (sm_100a); the producer's single thread once.
    std::unordered_set<const Value*> compute_arrives;
    walk_const(compute_->region(), [&](const Operation& op) {
      if (op.kind() == OpKind::mbarrier_arrive) compute_arrives.insert(op.operand(0));
    });
    for (Barrier& barrier : barriers_) {
      if (compute_arrives.count(barrier.op->result()) && !blackwell())
        barrier.arrivals *= compute_threads_ / kWarpgroup;
      barrier.purpose = compute_arrives.count(barrier.op->result()) ? "released by the compute agent"
                                                                       : "filled by the producer's TMA";
    }
    return true;
  }

  // sm_90a: keep one WGMMA group in flight. An mma in a loop body whose stages are released
  // by the arrives after it in the same body (every stage at least 2 deep) waits with
  // wait_group 1 instead of 0 and releases the slots of the previous iteration instead of its
  // own; after the loop, wait_group 0 and release the last ones. With depth >= 2 the producer
  // never needs the one slot still held, so no wait can deadlock; a stage is still released
  // only after the WGMMAs reading it are done.
  void plan_deferred_releases() {
    for (const Operation* mma : mma_ops_) {
      const Operation* loop = mma->parent_op();
      if (!loop || loop->kind() != OpKind::for_) continue;
      std::vector<const Operation*> arrives;
      bool after = false, shallow = false;
      for (const auto& op : loop->region().operations()) {
        if (op.get() == mma) after = true;
        if (!after || op->kind() != OpKind::mbarrier_arrive) continue;
        for (size_t operand = 0; operand < 2; ++operand) {
          const Operation* read = mma->operand(operand)->defining_op();
          const StageBuffer& buffer = stages_[stage_of_.at(read->operand(0))];
          if (op->operand(0) == buffer.empty && op->operand(1) == read->operand(1)) {
            arrives.push_back(op.get());
            shallow = shallow || buffer.depth < 2;
          }
        }
      }
      if (arrives.size() != 2 || shallow) continue;
      deferred_mma_.insert(mma);
      for (const Operation* arrive : arrives) {
        std::string name = names_.unique(plan_.expression(arrive->operand(0)) + "_held");
        deferred_arrive_[arrive] = name;
        loop_releases_[loop].push_back({arrive, name});
      }
    }
  }

  bool place_shared_memory() {
    int64_t offset = 0;
    for (StageBuffer& buffer : stages_) {
      buffer.offset = offset;
      offset += (buffer.depth * buffer.slot_bytes + kSwizzleAtomBytes - 1) / kSwizzleAtomBytes * kSwizzleAtomBytes;
    }
    for (Barrier& barrier : barriers_) {
      barrier.offset = offset;
      offset += 8 * barrier.slots;
    }
    if (blackwell()) {  // the accumulator barrier and the TMEM base address
      accumulator_barrier_offset_ = offset;
      offset += 8;
      tmem_slot_offset_ = offset;
      offset += 8;
    }
    // Dynamic shared memory is 16-byte aligned; the kernel rounds its base up to 1024 bytes.
    shared_bytes_ = offset + kSwizzleAtomBytes;
    if (shared_bytes_ > kSharedMemoryBudget) {
      diagnostics_.error(kernel_.location(),
                         fmt::format("kernel @{} needs {} bytes of shared memory for its stage buffers and barriers; the "
                                     "{} budget is {} bytes (227 KiB): use fewer stages or smaller tiles",
                                     kernel_name(kernel_), shared_bytes_, target_, kSharedMemoryBudget));
      return false;
    }
    return true;
  }

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

  void emit_summary() {
    const std::string rule(95, '-');
    line(0, "// " + rule);
    line(0, fmt::format("// kernel @{}{}: tensor cores, {} ({})", kernel_name(kernel_),
                        kernel_.location().known() ? fmt::format(" (line {})", kernel_.location().line) : "",
                        target_, blackwell() ? "tcgen05.mma into TMEM" : "WGMMA, accumulators in registers"));
    line(0, fmt::format("// grid: {} CTAs of {} threads", describe_grid(plan_), total_threads()));
    line(0, fmt::format("//   agents: producer warpgroup 0 (128 threads, {} registers, one elected thread issues TMA), "
                        "compute warpgroups 1..{} ({} threads, {} registers)",
                        producer_->int_attr("registers"), compute_threads_ / kWarpgroup, compute_threads_,
                        compute_->int_attr("registers")));
    walk_const(compute_->region(), [&](const Operation& op) {
      if (op.kind() == OpKind::for_ && op.has_attr("ii"))
        line(0, fmt::format("//   schedule: loop at line {}: ii {}, {} stage(s){}", op.location().line, op.int_attr("ii"),
                            op.int_attr("stages", 1),
                            op.has_attr("pipeline") ? fmt::format(", pipeline({})", op.int_attr("pipeline")) : ""));
    });
    line(0, fmt::format("// shared memory: {} bytes (1024 of them for aligning the base)", shared_bytes_));
    for (const StageBuffer& buffer : stages_)
      line(0, fmt::format("//   pipe {}: {} slots x {} bytes at {}: {} of mma from {} ({}, {} panel(s) of 64 columns, 128B swizzle)",
                          buffer.name, buffer.depth, buffer.slot_bytes, buffer.offset,
                          buffer.role == StageBuffer::Role::a ? "A" : "B", plan_.expression(buffer.tensor),
                          buffer.role == StageBuffer::Role::a ? "K-major" : "MN-major", buffer.panels()));
    for (const Barrier& barrier : barriers_)
      line(0, fmt::format("//   mbarrier {}: {} slot(s) at {}, {} arrival(s) per phase, {}", barrier.name, barrier.slots,
                          barrier.offset, barrier.arrivals, barrier.purpose));
    for (const Accumulator& accumulator : accumulators_)
      line(0, fmt::format("//   accumulator {}: {}x{} f32 {}", accumulator.name, accumulator.rows, accumulator.columns,
                          blackwell() ? fmt::format("in TMEM columns {}..{}", accumulator.tmem_column,
                                                    accumulator.tmem_column + accumulator.columns - 1)
                                      : fmt::format("in registers, {} per thread", accumulator.columns / 2)));
    line(0, "// " + rule);
  }

  // One tensor map per tensor the stage buffers load from, in stage-buffer order.
  std::vector<const StageBuffer*> tensor_maps() const {
    std::vector<const StageBuffer*> maps;
    for (const StageBuffer& buffer : stages_)
      if (std::none_of(maps.begin(), maps.end(), [&](const StageBuffer* seen) { return seen->map == buffer.map; }))
        maps.push_back(&buffer);
    return maps;
  }

  std::string kernel_parameters() const {
    std::vector<std::string> parts;
    for (const StageBuffer* buffer : tensor_maps()) parts.push_back("const __grid_constant__ CUtensorMap " + buffer->map);
    std::string rest = parameter_list(plan_);
    if (!rest.empty()) parts.push_back(rest);
    return join(parts, ", ");
  }

  std::string kernel_arguments() const {
    std::vector<std::string> parts;
    for (const StageBuffer* buffer : tensor_maps()) parts.push_back(buffer->map);
    std::string rest = argument_list(plan_);
    if (!rest.empty()) parts.push_back(rest);
    return join(parts, ", ");
  }

  void emit_kernel() {
    line(0, fmt::format("__global__ void __launch_bounds__({}, 1) {}_kernel({}) {{", total_threads(), plan_.name,
                        kernel_parameters()));
    line(0, blackwell() ? "#if defined(__CUDA_ARCH_FEAT_SM100_ALL)" : "#if defined(__CUDA_ARCH_FEAT_SM90_ALL)");
    line(1, "extern __shared__ __align__(1024) unsigned char shared_memory[];");
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
    if (blackwell()) line(2, "tilec_mbarrier_init(accumulator_barrier, 1);");
    line(2, "tilec_fence_barrier_init();");
    line(1, "}");
    if (blackwell()) {
      line(1, fmt::format("if (threadIdx.x / 32 == {}) tilec_tmem_alloc<{}>(tmem_slot);  // the first compute warp",
                          kWarpgroup / 32, tmem_columns_));
      line(1, "tilec_tcgen05_before_sync();");
    }
    line(1, "__syncthreads();");
    if (blackwell()) {
      line(1, "tilec_tcgen05_after_sync();");
      line(1, "const uint32_t tmem_base = *reinterpret_cast<volatile uint32_t*>(shared_aligned + (tmem_slot - shared_base));");
    }
    comment(1, *specialize_);
    line(1, "if (threadIdx.x < 128) {");
    line(2, fmt::format("tilec_lower_registers<{}>();", producer_->int_attr("registers")));
    line(2, "// One elected thread of warp 0 runs the producer; the other threads of the warpgroup are done.");
    line(2, "if (threadIdx.x / 32 == 0 && tilec_elect_one()) {");
    emit_region(producer_->region(), 3);
    line(2, "}");
    line(1, "} else {");
    line(2, fmt::format("tilec_raise_registers<{}>();", compute_->int_attr("registers")));
    line(2, "const int compute_thread = static_cast<int>(threadIdx.x) - 128;");
    line(2, "const int compute_warpgroup = compute_thread / 128;");
    line(2, "(void)compute_warpgroup;");
    if (blackwell()) line(2, "uint32_t accumulator_parity = 0;");
    emit_region(compute_->region(), 2);
    if (blackwell()) {
      line(2, "// Every compute thread is done with TMEM: the first compute warp frees it.");
      line(2, "tilec_tcgen05_before_sync();");
      line(2, fmt::format("tilec_named_barrier_sync({}, {});", private_barrier_id(), compute_threads_));
      line(2, fmt::format("if (threadIdx.x / 32 == {}) tilec_tmem_dealloc<{}>(tmem_base);", kWarpgroup / 32, tmem_columns_));
    }
    line(1, "}");
    line(0, "#else");
    line(1, fmt::format("__trap();  // built for another architecture than {}", target_));
    line(0, "#endif");
    line(0, "}");
    line(0, "");
  }

  // A named barrier id the IR does not use, for the emitter's own compute-agent barriers.
  int64_t private_barrier_id() {
    if (private_barrier_ == 0) {
      int64_t highest = 0;
      walk_const(kernel_.region(), [&](const Operation& op) {
        if (op.kind() == OpKind::named_barrier_sync || op.kind() == OpKind::named_barrier_arrive)
          highest = std::max(highest, op.int_attr("id"));
      });
      private_barrier_ = highest + 1;
    }
    return private_barrier_;
  }

  void emit_top_level(const Operation& op) {
    switch (op.kind()) {
      case OpKind::mbarrier_create: {
        const Barrier& barrier = barriers_[barrier_of_.at(op.result())];
        line(1, fmt::format("const uint32_t {} = shared_base + {};  // {} mbarrier(s)", barrier.name, barrier.offset, barrier.slots));
        if (blackwell() && &barrier == &barriers_.back()) {
          line(1, fmt::format("const uint32_t accumulator_barrier = shared_base + {};", accumulator_barrier_offset_));
          line(1, fmt::format("const uint32_t tmem_slot = shared_base + {};", tmem_slot_offset_));
        }
        return;
      }
      case OpKind::stage_buffer: {
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
        if (blackwell() && full && !producer)
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
        else if (blackwell())
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
      case OpKind::stage_read: {
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
                                 blackwell() ? "within one agent: program order and the accumulator barrier"
                                             : "within one agent: program order, wgmma.fence and wait_group"));
        return;
      case OpKind::zeros: emit_zeros(op, indent); return;
      case OpKind::mma: emit_mma(op, indent); return;
      case OpKind::store: emit_store(op, indent); return;
      case OpKind::load: return;  // read per element by the epilogue that stores it
      default: break;
    }
    if (op.num_results() == 1 && op.result()->type().is_tile()) return;  // epilogue arithmetic
    body_.emit_op(op, indent);
  }

  void emit_named_barrier(const Operation& op, int indent) {
    int64_t id = op.int_attr("id");
    bool shared = false;
    walk_const(kernel_.region(), [&](const Operation& other) {
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
    const std::string& row = plan_.expression(op.operand(3));
    const std::string& column = plan_.expression(op.operand(4));
    comment(indent, op);
    for (int64_t panel = 0; panel < buffer.panels(); ++panel) {
      std::string inner = fmt::format("{} * {}", column, buffer.tile.shape()[1]);
      if (panel > 0) inner += fmt::format(" + {}", panel * kPanelColumns);
      line(indent, fmt::format("tilec_tma_load_2d({} + static_cast<uint32_t>({}) * {}{}, &{}, static_cast<int32_t>({}), "
                               "static_cast<int32_t>({} * {}), {});",
                               buffer.name, plan_.expression(op.operand(1)), buffer.slot_bytes,
                               panel > 0 ? fmt::format(" + {}", panel * buffer.panel_bytes()) : "", buffer.map, inner, row,
                               buffer.tile.shape()[0], slot_address(full, op.operand(1))));
    }
  }

  void emit_zeros(const Operation& op, int indent) {
    const Accumulator& accumulator = accumulators_[accumulator_of_.at(op.result())];
    comment(indent, op);
    if (blackwell()) {
      line(indent, fmt::format("bool {}_started = false;  // the first mma overwrites TMEM instead of adding", accumulator.name));
      return;
    }
    line(indent, fmt::format("float {}[{}];", accumulator.name, accumulator.columns / 2));
    line(indent, fmt::format("#pragma unroll\n{}for (int i = 0; i < {}; ++i) {}[i] = 0.0f;",
                             std::string(2 * static_cast<size_t>(indent), ' '), accumulator.columns / 2, accumulator.name));
  }

  // The A operand of K step `step` for warpgroup rows starting at `row`.
  std::string a_address(const StageBuffer& a, const std::string& slot, int64_t step, const std::string& row_offset) const {
    int64_t element = step * kMmaK;
    int64_t offset = element / kPanelColumns * a.panel_bytes() + element % kPanelColumns * 2;
    return fmt::format("{} + {}{}", slot, offset, row_offset);
  }

  void emit_mma(const Operation& op, int indent) {
    const Accumulator& accumulator = accumulators_[accumulator_of_.at(op.result())];
    const StageBuffer& a = stages_[stage_of_.at(op.operand(0)->defining_op()->operand(0))];
    const StageBuffer& b = stages_[stage_of_.at(op.operand(1)->defining_op()->operand(0))];
    const std::string& a_slot = plan_.expression(op.operand(0));
    const std::string& b_slot = plan_.expression(op.operand(1));
    int64_t steps = a.tile.shape()[1] / kMmaK;
    comment(indent, op);
    if (blackwell()) {
      uint32_t instruction = (1u << 4) | (accumulator.input == ScalarKind::bf16 ? (1u << 7) | (1u << 10) : 0u) |
                             (1u << 16) | (static_cast<uint32_t>(accumulator.columns >> 3) << 17) |
                             (static_cast<uint32_t>(accumulator.rows >> 4) << 24);
      line(indent, "if (compute_thread == 0) {");
      line(indent + 1, "tilec_tcgen05_after_sync();");
      for (int64_t step = 0; step < steps; ++step)
        line(indent + 1, fmt::format("tilec_tcgen05_mma(tmem_base + {}, tilec_matrix_descriptor({}, 16, 1024), "
                                     "tilec_matrix_descriptor({} + {}, {}, 1024), 0x{:08x}u, {});",
                                     accumulator.tmem_column, a_address(a, a_slot, step, ""), b_slot,
                                     step * kMmaK * kPanelRowBytes, b.panel_bytes(), instruction,
                                     step == 0 ? accumulator.name + "_started" : "true"));
      line(indent, "}");
      line(indent, fmt::format("{}_started = true;", accumulator.name));
      return;
    }
    std::string function = wgmma_function(accumulator.columns, accumulator.input == ScalarKind::bf16 ? "bf16" : "f16");
    line(indent, "tilec_wgmma_fence();");
    for (int64_t step = 0; step < steps; ++step)
      line(indent, fmt::format("{}({}, tilec_matrix_descriptor({}, 16, 1024), tilec_matrix_descriptor({} + {}, {}, 1024));",
                               function, accumulator.name,
                               a_address(a, a_slot, step, fmt::format(" + static_cast<uint32_t>(compute_warpgroup) * {}", 64 * kPanelRowBytes)),
                               b_slot, step * kMmaK * kPanelRowBytes, b.panel_bytes()));
    line(indent, "tilec_wgmma_commit();");
    if (deferred_mma_.count(&op))
      line(indent, "tilec_wgmma_wait<1>();  // this step's WGMMAs stay in flight; the previous step's are done");
    else
      line(indent, "tilec_wgmma_wait<0>();  // the stage may be released once its last reader is done");
  }

  // The element (row, column) of the tile `value` (both relative to the tile) as a C++ expression.
  std::string element(const Value* value, const std::string& row, const std::string& column,
                      const std::string& accumulator_element) {
    if (!value->type().is_tile()) return plan_.expression(value);
    const std::vector<int64_t>& shape = value->type().shape();
    std::string r = shape[0] == 1 ? "0" : row, c = shape[1] == 1 ? "0" : column;
    if (accumulator_of_.count(value)) return accumulator_element;
    const Operation& op = *value->defining_op();
    if (op.kind() == OpKind::load) {
      const std::vector<std::string>& extents = plan_.tensor_dims.at(op.operand(0));
      std::string index0 = fmt::format("({} * {} + {})", plan_.expression(op.operand(1)), shape[0], r);
      std::string index1 = fmt::format("({} * {} + {})", plan_.expression(op.operand(2)), shape[1], c);
      return fmt::format("({0} < {2} && {1} < {3} ? {4}[{0} * {3} + {1}] : {5})", index0, index1, extents[0], extents[1],
                         plan_.expression(op.operand(0)), zero_literal(value->type().element()));
    }
    if (op.kind() == OpKind::full) return plan_.expression(op.operand(0));
    if (op.kind() == OpKind::zeros) return zero_literal(value->type().element());
    std::vector<std::string> operands;
    for (const Value* operand : op.operands()) operands.push_back(element(operand, r, c, accumulator_element));
    return body_.element_expression(op, operands);
  }

  void emit_store(const Operation& op, int indent) {
    const Accumulator& accumulator = *store_accumulator_.at(&op);
    const Value* value = op.operands().back();
    const Value* tensor = op.operand(0);
    const std::vector<std::string>& extents = plan_.tensor_dims.at(tensor);
    std::string row_base = fmt::format("{} * {}", plan_.expression(op.operand(1)), accumulator.rows);
    std::string column_base = fmt::format("{} * {}", plan_.expression(op.operand(2)), accumulator.columns);
    comment(indent, op);
    line(indent, "{");
    if (blackwell()) {
      line(indent + 1, "// The MMAs into the accumulator are complete when the accumulator barrier's phase is.");
      line(indent + 1, "if (compute_thread == 0) tilec_tcgen05_commit(accumulator_barrier);");
      line(indent + 1, "tilec_mbarrier_wait(accumulator_barrier, accumulator_parity);");
      line(indent + 1, "accumulator_parity ^= 1;");
      line(indent + 1, "tilec_tcgen05_after_sync();");
      int64_t half = accumulator.columns * kWarpgroup / compute_threads_;
      line(indent + 1, "// Warp w reads TMEM lanes 32·(w mod 4)..: one row per thread; each warpgroup takes its columns.");
      line(indent + 1, "const int row = static_cast<int>((threadIdx.x / 32) % 4) * 32 + static_cast<int>(threadIdx.x % 32);");
      line(indent + 1, fmt::format("const int first_column = compute_warpgroup * {};", half));
      line(indent + 1, fmt::format("for (int chunk = 0; chunk < {}; ++chunk) {{", half / 32));
      line(indent + 2, "uint32_t values[32];");
      line(indent + 2, fmt::format("tilec_tmem_load_32(tmem_base + ((static_cast<uint32_t>(row) & ~31u) << 16) + {} + "
                                   "static_cast<uint32_t>(first_column + chunk * 32), values);", accumulator.tmem_column));
      line(indent + 2, "#pragma unroll");
      line(indent + 2, "for (int i = 0; i < 32; ++i) {");
      line(indent + 3, "const int column = first_column + chunk * 32 + i;");
      emit_store_element(op, value, extents, row_base, column_base, fmt::format("({}_started ? __uint_as_float(values[i]) : 0.0f)", accumulator.name), indent + 3);
      line(indent + 2, "}");
      line(indent + 1, "}");
      line(indent + 1, "// TMEM is read: the next tile's MMA may overwrite it.");
      line(indent + 1, "tilec_tcgen05_before_sync();");
      line(indent + 1, fmt::format("tilec_named_barrier_sync({}, {});", private_barrier_id(), compute_threads_));
      line(indent + 1, "tilec_tcgen05_after_sync();");
    } else {
      line(indent + 1, "// WGMMA's accumulator layout: register i of lane l in warp w of the warpgroup holds row");
      line(indent + 1, "// 16w + l/4 + 8·((i/2) mod 2) and column 8·(i/4) + 2·(l mod 4) + (i mod 2).");
      line(indent + 1, "const int lane = compute_thread % 32, warp = (compute_thread % 128) / 32;");
      line(indent + 1, "#pragma unroll");
      line(indent + 1, fmt::format("for (int i = 0; i < {}; ++i) {{", accumulator.columns / 2));
      line(indent + 2, "const int row = compute_warpgroup * 64 + warp * 16 + lane / 4 + 8 * ((i / 2) % 2);");
      line(indent + 2, "const int column = 8 * (i / 4) + 2 * (lane % 4) + i % 2;");
      emit_store_element(op, value, extents, row_base, column_base, fmt::format("{}[i]", accumulator.name), indent + 2);
      line(indent + 1, "}");
    }
    line(indent, "}");
  }

  void emit_store_element(const Operation& op, const Value* value, const std::vector<std::string>& extents,
                          const std::string& row_base, const std::string& column_base,
                          const std::string& accumulator_element, int indent) {
    line(indent, fmt::format("const int64_t index0 = {} + row, index1 = {} + column;", row_base, column_base));
    line(indent, fmt::format("if (index0 < {} && index1 < {}) {}[index0 * {} + index1] = {};", extents[0], extents[1],
                             plan_.expression(op.operand(0)), extents[1],
                             element(value, "row", "column", accumulator_element)));
  }

  void emit_yield(const Region& region, const std::vector<const Value*>& targets, int indent) {
    const Operation* yield = region.terminator();
    std::vector<std::pair<const Value*, const Value*>> scalars;
    for (size_t i = 0; i < targets.size(); ++i) {
      const Value* source = yield->operand(i);
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

  void emit_launcher() {
    LaunchSpec launch;
    launch.summary = "encodes the tensor maps, then one persistent CTA per worker.";
    for (const StageBuffer* buffer : tensor_maps()) {
      const std::vector<std::string>& extents = plan_.tensor_dims.at(buffer->tensor);
      launch.setup += fmt::format("  CUtensorMap {};\n", buffer->map);
      launch.setup += fmt::format(
          "  if (const cudaError_t status = tilec_tensor_map_2d(&{}, {}, {}, {}, {}, {} * 2, {}, {}); status != cudaSuccess)\n"
          "    return status;  // e.g. a row pitch that is not a multiple of 16 bytes\n",
          buffer->map, tensor_map_type(buffer->tile.element()), plan_.expression(buffer->tensor), extents[0], extents[1],
          extents[1], buffer->tile.shape()[0], kPanelColumns);
    }
    launch.threads = std::to_string(total_threads());
    launch.arguments = kernel_arguments();
    launch.shared_bytes = shared_bytes_;
    cuda::emit_launcher(plan_, launch, out_);
  }

  const KernelPlan& plan_;
  const Operation& kernel_;
  std::string target_;
  TensorCoreNeeds& needs_;
  DiagnosticEngine& diagnostics_;
  NameTable names_;
  std::string out_;
  BodyEmitter body_;

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
  std::vector<std::pair<const Operation*, size_t>> pending_yields_;
  std::unordered_map<const Operation*, const Accumulator*> store_accumulator_;
  std::vector<const Operation*> mma_ops_;
  int64_t shared_bytes_ = 0, tmem_columns_ = 0, accumulator_barrier_offset_ = 0, tmem_slot_offset_ = 0;
  int64_t private_barrier_ = 0;
  // sm_90a's deferred releases (plan_deferred_releases): the mmas waiting with wait_group 1, the
  // arrives releasing the previous iteration's slot (with the variable holding it), per loop.
  std::unordered_set<const Operation*> deferred_mma_;
  std::unordered_map<const Operation*, std::string> deferred_arrive_;
  std::unordered_map<const Operation*, std::vector<std::pair<const Operation*, std::string>>> loop_releases_;
};

}  // namespace

bool emit_tensor_core_kernel(const KernelPlan& plan, TensorCoreNeeds& needs, std::string& out,
                             DiagnosticEngine& diagnostics) {
  return TensorCoreKernel(plan, needs, diagnostics).run(out);
}

}  // namespace tilec::cuda
