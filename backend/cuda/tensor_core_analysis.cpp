// backend/cuda/tensor_core_analysis.cpp — the tensor-core emitter's analysis (see the header).
// Deterministic: every walk follows program order.
#include "backend/cuda/tensor_core_analysis.h"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <set>
#include <functional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "ir/attribute_keys.h"
#include "ir/diagnostic.h"
#include "ir/ir.h"
#include "ir/program_order.h"
#include "ir/live_ranges.h"

namespace tilec::cuda::tensor_core {

Analysis::Analysis(const KernelPlan& plan, TensorCoreNeeds& needs, DiagnosticEngine& diagnostics)
    : plan_(plan), kernel_(*plan.kernel), target_(*needs.target), needs_(needs), diagnostics_(diagnostics) {}

std::optional<Plan> Analysis::run() {
  if (!analyze()) return std::nullopt;
  return std::move(tc_);
}

std::optional<Plan> analyze_tensor_core_kernel(const KernelPlan& plan, TensorCoreNeeds& needs,
                                               DiagnosticEngine& diagnostics) {
  switch (needs.target->mma) {
    case target::MmaFamily::wgmma: return WgmmaAnalysis(plan, needs, diagnostics).run();
    case target::MmaFamily::tcgen05: return Tcgen05Analysis(plan, needs, diagnostics).run();
  }
  throw std::logic_error("analyze_tensor_core_kernel: a target of no MMA family");
}

// "bf16, f16, f8e4m3, f8e5m2 or f32": the A types of the target's MMA forms.
std::string Analysis::mma_input_names() const {
  std::vector<std::string> names;
  for (const target::MmaInstruction& row : target_.mma_forms)
    for (const target::MmaInput& input : row.inputs)
      if (std::find(names.begin(), names.end(), to_string(input.type)) == names.end())
        names.emplace_back(to_string(input.type));
  std::string text;
  for (size_t i = 0; i < names.size(); ++i) text += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return text;
}

bool Analysis::unsupported(const Operation& op, const std::string& what) {
  diagnostics_.error(op.location(), fmt::format("the tensor-core CUDA backend ({}) does not support {}", target_.name, what));
  return false;
}

// persistent-tiles leaves an `sm_count` in the kernel body of every `grid persistent` kernel, and
// a `per_tile` worker grid in every `grid tiles` kernel with mma that it rewrote.
static bool persistent(const Operation& kernel) {
  for (const auto& op : kernel.region().operations())
    if (op->kind() == OpKind::sm_count || (op->kind() == OpKind::grid_ids && op->has_attr("per_tile"))) return true;
  return false;
}

// A `grid tiles` kernel with mma that persistent-tiles did not rewrite (IR text resumed after the
// scheduling passes): say what to write instead, at the grid.
bool Analysis::refuse_tile_grid() {
  const Operation* grid = &kernel_;
  for (const auto& op : kernel_.region().operations())
    if (op->kind() == OpKind::grid_ids) grid = op.get();
  diagnostics_.error(grid->location(),
                     fmt::format("the tensor-core CUDA backend ({}) runs mma kernels as persistent CTAs only: "
                                 "write `grid persistent(...)` with the same extents and coordinates instead of "
                                 "`grid tiles(...)`, e.g. grid persistent(cdiv(M, BM), cdiv(N, BN)) as (m, n)",
                                 target_.name));
  return false;
}

bool Analysis::analyze() {
  const Region& body = kernel_.region();
  bool tile_grid = !persistent(kernel_);
  for (const auto& op : body.operations()) {
    switch (op->kind()) {
      case OpKind::warp_specialize:
        if (tc_.specialize) return unsupported(*op, "a second warp_specialize in one kernel");
        tc_.specialize = op.get();
        break;
      case OpKind::mbarrier_create: add_barrier(*op); break;
      case OpKind::stage_buffer: add_stage_buffer(*op); break;
      case OpKind::return_: break;
      default:
        if (tc_.specialize) return unsupported(*op, fmt::format("'{}' after the warp_specialize", op->name()));
        // Before the agents split, only scalars (and launch asserts): an op of no result there (an
        // event_wait or a store moved up in IR text) has no thread to run on.
        if (op->num_regions() > 0 || (op->num_results() > 0 && !op->result(0)->type().is_scalar()) ||
            (op->num_results() == 0 && op->kind() != OpKind::assert_))
          return tile_grid ? refuse_tile_grid() : unsupported(*op, fmt::format("'{}' before the warp_specialize", op->name()));
    }
  }
  int64_t highest_barrier = 0;
  walk(body, [&](const Operation& op) {
    if (op.kind() == OpKind::named_barrier_sync || op.kind() == OpKind::named_barrier_arrive)
      highest_barrier = std::max(highest_barrier, op.int_attr("id"));
  });
  tc_.private_barrier = highest_barrier + 1;
  // A register pipe's barriers order one agent's own program: they need no mbarrier.
  std::erase_if(tc_.barriers,
                [&](const Barrier& barrier) { return tc_.register_barriers.count(barrier.op->result()); });
  tc_.barrier_of.clear();
  for (size_t i = 0; i < tc_.barriers.size(); ++i) tc_.barrier_of[tc_.barriers[i].op->result()] = i;
  if (!tc_.specialize) return unsupported(kernel_, "a kernel without warp_specialize");
  std::vector<const Operation*> agents;
  for (const auto& op : tc_.specialize->region().operations()) {
    if (op->kind() != OpKind::agent) continue;
    bool loads = false;
    walk(op->region(), [&](const Operation& inner) { loads = loads || inner.kind() == OpKind::tma_load_async; });
    (loads ? tc_.producer : tc_.compute) = op.get();
    agents.push_back(op.get());
  }
  if (agents.size() != 2 || !tc_.producer || !tc_.compute)
    return unsupported(*tc_.specialize, "agents other than one TMA producer and one compute agent");
  if (tc_.producer->int_attr("threads") != kWarpgroup)
    return unsupported(*tc_.producer, "a producer agent that is not one warpgroup of 128 threads");
  tc_.compute_threads = tc_.compute->int_attr("threads");
  if (tc_.compute_threads != kWarpgroup && tc_.compute_threads != 2 * kWarpgroup)
    return unsupported(*tc_.compute, "a compute agent that is not one or two warpgroups (128 or 256 threads)");
  tc_.layout = FragmentLayout(target_.mma, tc_.compute_threads / kWarpgroup);
  for (const Operation* agent : agents) {
    int64_t registers = agent->int_attr("registers");
    if (registers < 24 || registers > 256 || registers % 8 != 0)
      return unsupported(*agent, fmt::format("registers = {} (setmaxnreg takes a multiple of 8 in 24..256)", registers));
  }
  if (tc_.producer->int_attr("registers") * kWarpgroup + tc_.compute->int_attr("registers") * tc_.compute_threads >
      target_.register_file)
    return unsupported(*tc_.compute,
                       fmt::format("agents whose registers exceed the {} of an SM", target_.register_file));

  bool ok = check_agent(*tc_.producer, true) && check_agent(*tc_.compute, false);
  if (ok) {
    walk(tc_.compute->region(), [&](const Operation& op) {
      for (const Value* operand : op.operands()) users_[operand].push_back(&op);
    });
    mark_stored_register_pipes();
    find_lazy_values();
    find_accumulators();
    ok = hold_loads_stored_over() && refuse_computed_b() && place_register_pipes() && hold_region(tc_.compute->region()) &&
         refuse_column_broadcasts();
  }
  ok = ok && check_stage_buffers() && place_shared_memory();
  if (!ok) return false;
  if (!warn_accumulator_registers()) warn_register_tiles();
  // The 3-D TMA helpers, where a stage buffer or a TMA store addresses a batch of matrices; the
  // 4-D ones where its box has middle dimensions.
  auto need = [&](const Value* tensor, size_t rows) {
    const size_t rank = tensor->type().rank();
    (rows + 2 < rank ? needs_.tma_4d : needs_.tma_3d) |= rank >= 3;
  };
  for (const StageBuffer& buffer : tc_.stages) need(buffer.tensor, buffer.row_dimension);
  for (const auto& [store, plan] : tc_.store_plans)
    if (plan.tma) need(plan.tensor, plan.row_dimension);
  return !diagnostics_.has_errors();
}

static std::string describe(const Value* value);

// Whether `user` is an mma reading `value` as its B (and not as its A too).
static bool reads_as_b(const Operation& user, const Value* value) {
  return user.kind() == OpKind::mma && user.operand(1) == value && user.operand(0) != value;
}

bool Analysis::read_only_as_b(const Value* value) {
  const auto& users = users_[value];
  return !users.empty() &&
         std::all_of(users.begin(), users.end(), [&](const Operation* user) { return reads_as_b(*user, value); });
}

const Value* Analysis::computed_b(const Operation& mma, bool& transposed) const {
  const Value* b = mma.operand(1);
  transposed = false;
  if (tc_.is_stage_read(b)) return nullptr;
  if (const Operation* def = b->defining_op(); def && def->kind() == OpKind::transpose) {
    transposed = true;
    return def->operand(0);
  }
  return b;
}

bool Analysis::refuse_computed_b() {
  bool ok = true;
  // The compute agent's stores, by tensor, and every op's place in program order: a computed B
  // loaded from a tensor the agent stores into before the load (earlier, or in an earlier
  // iteration of a loop around both; the top-level loop walks tiles) reads elements other threads
  // stored, with nothing ordering the stores first (a helper's hunt: stale numbers from the
  // second iteration on).
  const Region& agent = tc_.compute->region();
  const ProgramOrder order(agent, &agent);
  std::unordered_map<const Value*, std::vector<const Operation*>> stores;
  walk(agent, [&](const Operation& op) {
    if (auto access = tensor_access(op); access && access->writes) stores[access->tensor].push_back(&op);
  });
  auto stored_before = [&](const Operation& load) -> std::string {
    auto found = stores.find(load.operand(0));
    if (found == stores.end()) return {};
    for (const Operation* store : found->second)
      if (const ProgramOrder::Before before = order.runs_before(*store, load); before)
        return before.earlier ? fmt::format("at line {}", store->location().line)
                              : fmt::format("at line {}, in an earlier iteration of the loop at line {}",
                                            store->location().line, before.loop->location().line);
    return {};
  };
  walk(tc_.compute->region(), [&](const Operation& op) {
    if (!ok || op.kind() != OpKind::mma || tc_.is_stage_read(op.operand(1))) return;
    // Computed element by element (stage_computed_b) from loads, positions and scalars: what
    // each thread can compute at any (k, n) of the tile (of x, at any (n, k), for B = transpose(x)).
    bool transposed = false;
    const Value* b = computed_b(op, transposed);
    std::string why;
    std::function<void(const Value*)> visit = [&](const Value* value) {
      if (!value->type().is_tile() || !why.empty()) return;
      if (auto read = tc_.lazy_reads.find(value); read != tc_.lazy_reads.end()) return visit(read->second);
      if (StageBuffer* shared = tc_.is_stage_read(value) ? &tc_.stages[tc_.stage_of.at(value->defining_op()->operand(0))]
                                                         : nullptr) {
        // A tile TMA copied (promote-mma-operands phase 4), read element by element from its slot
        // (hold_mma refuses it as an mma's operand too).
        shared->role = StageBuffer::Role::computed;
        return;
      }
      // Slices and concats along the columns and interleaves are read where each element lies
      // (op_element; hold_op refuses the others): the two int4 halves of a packed byte along K.
      const Operation* def = value->defining_op();
      if (def && (def->kind() == OpKind::transpose ||
                  (def->kind() == OpKind::reshape &&  // a row <N> as <1, N>, broadcast over K, is read per element
                   !(def->operand(0)->type().rank() == 1 && value->type().shape()[0] == 1))))
        why = fmt::format("reads a '{}'", def->name());
      else if (def && def->kind() == OpKind::stage_read && tc_.register_pipes.count(def->operand(0)))
        // The schedule put part of the B's computation in an earlier stage than the mma (a
        // helper's hunt: it depended on the order of unrelated statements).
        why = fmt::format("reads {}, which the loop's schedule computes a stage before the mma and carries to it "
                          "in registers (give the loop pipeline(1), which keeps one stage)",
                          describe(value));
      else if (!tc_.lazy.count(value) || !def || tc_.fragment(value) || tc_.accumulator(value))
        why = fmt::format("reads {}, which the compute threads hold in registers", describe(value));
      else if (def->kind() != OpKind::load)
        for (const Value* operand : def->operands()) visit(operand);
      else if (std::string store = stored_before(*def); !store.empty())
        why = fmt::format("reads {}, which this kernel stores into {}: the compute threads write the B from "
                          "elements other threads stored, with nothing ordering those stores first (read it from "
                          "another tensor, or store it in one kernel and read it in the next)",
                          describe(def->operand(0)), store);
    };
    visit(b);
    const Type& type = b->type();
    // Whole 128-byte rows, or one row of 64 or 32 bytes (the 64- and 32-byte swizzles).
    const bool wide = type.rank() == 2 && row_swizzle(type.shape()[1] * byte_size(type.element())) != 0;
    // 16-bit either way; 8-bit (W4A8: FP8 or int8 activations) only K-major, as 8-bit MMAs read B.
    const ScalarKind element = type.element();
    const bool sixteen_bit = element == ScalarKind::bf16 || element == ScalarKind::f16;
    const bool eight_bit = element == ScalarKind::f8e4m3 || element == ScalarKind::f8e5m2 ||
                           element == ScalarKind::i8 || element == ScalarKind::u8;
    if (why.empty() && eight_bit && !transposed)
      why = fmt::format("is {} [K, N] tile (8-bit MMAs read B K-major: compute the [N, K] tile and give mma its "
                        "transpose())",
                        with_article(element));
    else if (why.empty() && !sixteen_bit && !eight_bit)
      why = fmt::format("is {} tile", with_article(element));
    else if (why.empty() && !wide)
      why = fmt::format("{} {} columns{} wide", transposed ? "transposes a tile" : "is",
                        type.rank() == 2 ? type.shape()[1] : 0, transposed ? " (K)" : "");
    if (!why.empty())
      ok = unsupported(op, fmt::format("an mma whose computed B {}: the compute threads write a computed B into "
                                       "shared memory element by element from loads, positions and scalars, and "
                                       "column slices, concats and interleaves of them (a dequantized weight, "
                                       "cast(load W[k, n] : <BK, BN>, bf16) * scale), as a bf16 or f16 [K, N] tile "
                                       "whose rows are whole 128 bytes (N a multiple of 64) or one row of 64 or 32 "
                                       "bytes (N = 32 or 16), or the transpose of an [N, K] one, bf16, f16 or 8-bit, "
                                       "whose rows (K) are; or load B unchanged and scale the result",
                                       why));
  });
  return ok;
}

// An elementwise op broadcasts a one-column operand along its columns (acc * s[:, 2:3]): every
// element reads that column's element of its row (operand_element_shift). A loaded or computed
// column is read so; one of a register tile or an accumulator is not, as each thread holds only
// some columns of its rows.
bool Analysis::refuse_column_broadcasts() {
  bool ok = true;
  std::function<bool(const Value*)> thread_local_column = [&](const Value* value) {
    if (!value->type().is_tile()) return true;
    if (auto read = tc_.lazy_reads.find(value); read != tc_.lazy_reads.end()) return thread_local_column(read->second);
    if (tc_.accumulator(value)) return false;
    if (const Fragment* held = tc_.fragment(value)) return held->columns == 1;
    const Operation* def = value->defining_op();
    if (!def || !tc_.lazy.count(value)) return true;
    return std::all_of(def->operands().begin(), def->operands().end(), thread_local_column);
  };
  walk(tc_.compute->region(), [&](const Operation& op) {
    if (!ok || !op.info().has(kElementwise) || op.num_results() != 1) return;
    const Type& result = op.result()->type();
    if (!result.is_tile() || result.rank() != 2 || result.shape()[1] == 1) return;
    for (const Value* operand : op.operands())
      if (operand->type().is_tile() && operand->type().rank() == 2 && operand->type().shape()[1] == 1 &&
          !thread_local_column(operand)) {
        ok = unsupported(op, fmt::format("this '{}' of a column of a tile the compute threads hold in registers "
                                         "({}), broadcast along the columns: each thread holds only some columns of "
                                         "its rows (load the column as a tile of its own, or compute it with a row "
                                         "reduction, max(x, axis = 1))",
                                         op.name(), describe(operand)));
        return;
      }
  });
  return ok;
}

// The registers a compute thread has: the hardware's cap, or the agents' budgets where the
// register file cannot give every thread the cap.
int64_t Analysis::compute_thread_registers() const {
  const bool budgets = (kWarpgroup + tc_.compute_threads) * target_.max_thread_registers > target_.register_file;
  return budgets ? tc_.compute->int_attr("registers") : target_.max_thread_registers;
}

// What the accumulator warning leaves out: every register tile (a loaded or computed tile, a
// cast P, a row's statistics) counts, live from the first op that writes or reads it to the
// last, and through the whole of a loop it is live into (a later step reads it again). Above
// the registers a compute thread has at the busiest op, nvcc spills (found by helpers writing
// kernels from the docs: a blockwise FP8 GEMM's two 128x256 tiles, attention's backward with
// its S, P, dP and dS beside three accumulators, spilled with no word from tilec).
void Analysis::warn_register_tiles() {
  auto registers = [&](const Fragment& fragment) {
    return (tc_.layout.count(fragment.columns) * byte_size(fragment.element) + 3) / 4;
  };
  // A column slice held on its own (g = acc[:, :64]) is a copy of the registers nvcc keeps once;
  // an elementwise op's tile is computed element by element where it is read (nvcc interleaves
  // the unrolled loops), needing none of its own; so is an iota, each element its position (a
  // 64x256 column index counted 128 registers ptxas never gave it).
  const PeakLive peak = peak_live(
      tc_.compute->region(),
      [&](const Value* value) -> const void* {
        const Operation* def = value->defining_op();
        return def && (def->kind() == OpKind::slice || def->kind() == OpKind::iota || def->info().has(kElementwise))
                   ? nullptr
                   : tc_.fragment(value);
      },
      [&](const void* fragment) { return registers(*static_cast<const Fragment*>(fragment)); });
  const int64_t available = compute_thread_registers();
  if (peak.total <= available) return;
  std::vector<std::string> parts;
  for (const void* held : peak.holders) {
    const Fragment& fragment = *static_cast<const Fragment*>(held);
    parts.push_back(fmt::format("{} {}x{} {}: {}", fragment.name, fragment.rows, fragment.columns,
                                to_string(fragment.element), registers(fragment)));
  }
  diagnostics_.warning(peak.at->location().known() ? peak.at->location() : tc_.compute->location(),
                       fmt::format("the register tiles live here need {} registers per compute thread ({}), more "
                                   "than the {} a compute thread has on {}: nvcc is likely to spill them to local "
                                   "memory; give the tiles fewer columns (BN; attention's BKV or D){}, or keep fewer tiles "
                                   "live at once",
                                   peak.total, fmt::join(parts, ", "), available, target_.name,
                                   tc_.compute_threads == kWarpgroup ? ", or 128 rows (BM or BQ: two compute "
                                                                       "warpgroups share them)"
                                                                     : ""));
}

bool Analysis::warn_accumulator_registers() {
  // Accumulators live together in a loop whose mmas write them: those it writes, those a loop
  // around it carries, and those written before it and read after it. Loops one after another
  // whose accumulators end with them hold theirs in turn.
  std::map<const Operation*, std::vector<const Fragment*>> by_loop;
  std::unordered_map<const Operation*, size_t> position;  // in program order
  std::unordered_map<const Operation*, size_t> last;       // a loop's last nested op
  std::vector<const Operation*> order;
  walk(tc_.compute->region(), [&](const Operation& op) {
    position[&op] = order.size();
    order.push_back(&op);
    for (const Operation* parent = op.parent_op(); parent && parent != tc_.compute; parent = parent->parent_op())
      last[parent] = position[&op];
  });
  auto add = [](std::vector<const Fragment*>& held, const Fragment* fragment) {
    if (fragment && fragment->accumulator && std::find(held.begin(), held.end(), fragment) == held.end())
      held.push_back(fragment);
  };
  for (const Operation* op : order) {
    const Fragment* fragment = op->kind() == OpKind::mma ? tc_.fragment(op->result()) : nullptr;
    if (!fragment || !fragment->accumulator) continue;
    const Operation* loop = op->parent_op();
    while (loop && loop->kind() != OpKind::for_ && loop != tc_.compute) loop = loop->parent_op();
    add(by_loop[loop], fragment);
  }
  // sm_100a: an accumulator read into registers once its loop is done is held whole there too.
  for (const auto& [value, index] : tc_.loaded_after_loop)
    if (const Fragment* fragment = tc_.fragment(value)) by_loop[value->defining_op()].push_back(fragment);
  for (auto& [loop, held] : by_loop) {
    if (!loop || loop == tc_.compute) continue;
    for (const Operation* outer = loop->parent_op(); outer && outer != tc_.compute; outer = outer->parent_op())
      if (outer->kind() == OpKind::for_)
        for (size_t i = 1; i < outer->region().num_arguments(); ++i)
          add(held, tc_.fragment(outer->region().argument(i)));
    const size_t start = position.at(loop), end = last.count(loop) ? last.at(loop) : start;
    for (const Operation* op : order) {
      if (op->kind() != OpKind::mma || position.at(op) >= start) continue;
      const Fragment* written = tc_.fragment(op->result());
      for (size_t after = end + 1; written && after < order.size(); ++after) {
        const auto& operands = order[after]->operands();
        if (std::any_of(operands.begin(), operands.end(),
                        [&](const Value* value) { return tc_.fragment(value) == written; })) {
          add(held, written);
          break;
        }
      }
    }
  }
  int64_t total = 0;
  std::vector<std::string> parts;
  for (const auto& [loop, fragments] : by_loop) {
    int64_t sum = 0;
    std::vector<std::string> these;
    for (const Fragment* fragment : fragments) {
      const int64_t registers = tc_.layout.count(fragment->columns);
      sum += registers;
      these.push_back(fmt::format("{}x{} {}: {}", fragment->rows, fragment->columns, to_string(fragment->element),
                                  registers));
    }
    if (sum <= total) continue;
    total = sum;
    parts = std::move(these);
  }
  const int64_t available = compute_thread_registers();
  if (total <= available) return false;
  const Operation* mma = nullptr;
  walk(tc_.compute->region(), [&](const Operation& op) {
    if (!mma && op.kind() == OpKind::mma) mma = &op;
  });
  diagnostics_.warning((mma ? mma : tc_.compute)->location(),
                       fmt::format("the mma accumulators need {} registers per compute thread ({}), more than the {} "
                                   "a compute thread has on {}: nvcc will spill them to local memory; give the tiles "
                                   "fewer columns (BN; attention's BKV or D){}{}",
                                   total, fmt::join(parts, ", "), available, target_.name,
                                   tc_.compute_threads == kWarpgroup ? ", or 128 rows (BM or BQ: two compute "
                                                                       "warpgroups share them)"
                                                                     : "",
                                   target_.mma == target::MmaFamily::wgmma
                                       ? ", or compile for sm_100a, whose accumulators live in tensor memory"
                                       : ""));
  return true;
}

void Analysis::add_barrier(const Operation& op) {
  Barrier barrier;
  barrier.op = &op;
  barrier.name = plan_.expression(op.result());
  barrier.slots = op.int_attr("count", 1);
  barrier.arrivals = op.int_attr("arrivals", 1);
  tc_.barriers.push_back(barrier);
}

void Analysis::add_stage_buffer(const Operation& op) {
  if (op.result()->type().payload().space() == MemorySpace::reg) {
    tc_.register_pipes[op.result()].op = &op;
    tc_.register_barriers.insert(op.operand(0));
    tc_.register_barriers.insert(op.operand(1));
    return;
  }
  StageBuffer buffer;
  buffer.op = &op;
  buffer.name = plan_.expression(op.result());
  buffer.tile = op.result()->type().payload();
  buffer.depth = op.result()->type().depth();
  buffer.full = op.operand(0);
  buffer.empty = op.operand(1);
  tc_.stage_of[op.result()] = tc_.stages.size();
  tc_.stages.push_back(buffer);
}

namespace {

// Whether `value` is the result of a reduction along axis 0.
bool axis0_reduction(const Value& value) {
  const Operation* def = value.defining_op();
  return def && def->info().has(kReduction) && def->int_attr("axis", -1) == 0;
}

// The reduction along axis 0 whose row [1, C] `op` reshapes into the vector [C] a store into a
// vector takes (`store CS[n] += sum(acc, axis = 0)` with CS a [N] tensor), or null.
const Operation* row_of_axis0_reduction(const Operation& op) {
  if (op.kind() != OpKind::reshape) return nullptr;
  const Type &from = op.operand(0)->type(), &to = op.result()->type();
  if (from.rank() != 2 || from.shape()[0] != 1 || to.rank() != 1 || !axis0_reduction(*op.operand(0))) return nullptr;
  return op.operand(0)->defining_op();
}

}  // namespace

// Every op of an agent is one this emitter writes; records TMA sources and register pipes.
bool Analysis::check_agent(const Operation& agent, bool producer) {
  bool ok = true;
  walk(agent.region(), [&](const Operation& op) {
    if (!ok) return;
    ok = check_op(op, producer);
  });
  return ok;
}

constexpr const char* kTransposeRule =
    "this transpose in a tensor-core kernel: a loaded tile may be transposed where mmas read it (e.g. mma(a, "
    "transpose(load W[n, k] : <BN, BK>), acc)), and a register tile where it is the A of mmas only (dQ = dS·K "
    "from dSᵀ: mma(transpose(ds_t), k, dq)); give the other tiles in the layout they are used in (a transposed "
    "product is Cᵀ = Bᵀ·Aᵀ: mma(transpose(load B[k, n] : <BK, BN>), transpose(load A[m, k] : <BM, BK>), acc), "
    "stored as it is)";

bool Analysis::check_op(const Operation& op, bool producer) {
  switch (op.kind()) {
    case OpKind::mbarrier_wait:
      if (op.has(attr::issuer) && (producer || !one_thread_issues_mma()))
        return unsupported(op, "an `issuer` mbarrier_wait here (the compute agent of a target whose MMAs one thread issues)");
      return true;
    case OpKind::constant: case OpKind::yield: case OpKind::mbarrier_arrive:
    case OpKind::stage_advance: case OpKind::named_barrier_sync: case OpKind::named_barrier_arrive:
    case OpKind::event_set: case OpKind::event_wait: case OpKind::for_:
      return true;
    case OpKind::if_:  // a tile it assigns is a register tile of its own (hold_if)
      for (size_t i = 0; i < op.num_results(); ++i)
        if (!op.result(i)->type().is_scalar() && (producer || op.result(i)->type().rank() != 2))
          return unsupported(op, "an 'if' that assigns a tile other than a 2-D register tile of the compute agent: "
                                 "compute the tile on both paths and pick with where(), e.g. acc = where(keep, "
                                 "relu(acc), acc)");
      return true;
    case OpKind::tma_load_async: return check_tma(op);
    case OpKind::stage_read:
      if (producer) return unsupported(op, "a stage_read on the producer agent");
      if (auto pipe = tc_.register_pipes.find(op.operand(0)); pipe != tc_.register_pipes.end())
        pipe->second.reads.push_back(&op);
      return true;
    case OpKind::stage_write: {
      auto pipe = tc_.register_pipes.find(op.operand(0));
      if (producer || pipe == tc_.register_pipes.end())
        return unsupported(op, "a stage_write other than the compute agent's into a register pipe");
      pipe->second.writes.push_back(&op);
      return true;
    }
    case OpKind::reduce_max: case OpKind::reduce_min: case OpKind::reduce_sum: {
      const Type& input = op.operand(0)->type();
      // Along axis 0 only into combining stores (hold_op: folded_reduction).
      if (!producer && op.int_attr("axis", -1) == 0 && input.rank() == 2 &&
          (input.element() == ScalarKind::f32 || input.element() == ScalarKind::i32))
        return true;
      if (producer || op.int_attr("axis", -1) != 1 || input.rank() != 2 ||
          (input.element() != ScalarKind::f32 && input.element() != ScalarKind::i32))
        // Say which rule the tile breaks: its type, its rank or its axis (a 1-D f32 tile was told to
        // cast to f32: a hunt).
        return unsupported(op, fmt::format("this '{}' of a {} (compute agents reduce 2-D f32 and i32 tiles along axis "
                                           "1{})",
                                           op.name(), input.to_source_string(),
                                           producer ? ", on the compute threads"
                                           : input.element() != ScalarKind::f32 && input.element() != ScalarKind::i32
                                               ? "; cast to f32 first"
                                           : input.rank() != 2 ? "; this one is not 2-D"
                                                               : ", or along axis 0 into a combining store"));
      return true;
    }
    case OpKind::scan_sum:
    case OpKind::scan_prod:
    case OpKind::scan_max:
    case OpKind::scan_min:
      return unsupported(op, "a scan (cumsum, cumprod, cummax or cummin) in a tensor-core kernel (plain kernels "
                             "take it: compute it in a kernel of its own)");
    case OpKind::sort:
      return unsupported(op, "a sort in a tensor-core kernel (plain kernels take it: sort in a kernel of its own)");
    case OpKind::slice:
      // Columns a:b of every row stay in the threads holding them; rows and steps are computed
      // per element (hold_op checks the register tiles it reads).
      if (!producer && op.operand(0)->type().rank() == 2) return true;
      return unsupported(op, "this subscript in a tensor-core kernel: it takes a 2-D tile's columns a:b of every "
                             "row (x[:, 64:128], one part of a fused projection's accumulator), or rows and steps "
                             "of a loaded tile; a rank-1 subscript moves elements between the threads holding "
                             "them (plain kernels take it: compute it in a kernel of its own, or load the part as "
                             "a tile of its own)");
    case OpKind::concat:
      // Tiles side by side along the columns: each element is read where its part holds it; or
      // one after another along the rows, computed per element (hold_op checks what it reads).
      if (!producer && op.result()->type().rank() == 2) return true;
      return unsupported(op, "this concat() in a tensor-core kernel: it joins 2-D tiles (RoPE's rotate-half, "
                             "concat(-x[:, 32:], x[:, :32], axis = 1)); of rank-1 tiles its elements move between "
                             "the threads holding them (plain kernels take it: compute it in a kernel of its own, "
                             "or store the parts one by one)");
    case OpKind::interleave:
      // Computed per element, each part at its own position (hold_op checks that no register
      // tile is under it).
      if (!producer && op.result()->type().rank() == 2) return true;
      return unsupported(op, "this interleave() in a tensor-core kernel: it takes 2-D tiles (plain kernels take "
                             "others: compute it in a kernel of its own)");
    case OpKind::transpose:  // of a register tile read as mmas' A: hold_op checks its users
      if (!producer && op.result()->type().rank() == 2) return true;
      return unsupported(op, kTransposeRule);
    case OpKind::zeros: case OpKind::full: case OpKind::iota: case OpKind::mma: case OpKind::store:
      if (producer) return unsupported(op, fmt::format("'{}' on the producer agent", op.name()));
      if (op.has(attr::async) && !waits_for_mma_groups())
        return unsupported(op, "an async mma (this target's MMAs complete through their commit, not wait groups)");
      return true;
    case OpKind::mma_wait:
      if (producer || !waits_for_mma_groups())
        return unsupported(op, "'mma_wait' here (the compute agent of a target whose MMAs are waited for in groups)");
      return true;
    case OpKind::load: {
      const Type& type = op.result()->type();
      if (op.has_attr("box")) {  // read per element through the box (IR text; a folded load is a tma_load)
        std::string why = type.rank() == 2 ? box_problem(op, type.shape(), op.operand(0)->type().rank())
                                           : "a box around a tile that is not 2-D";
        if (!why.empty()) return unsupported(op, why);
      }
      if (producer && type.element_count() == 1) return true;  // one element, which item() reads
      if (producer || !(type.rank() == 2 || type.rank() == 1))
        return unsupported(op, "this 'load' (only 2-D tiles of a matrix or a batch of them, or a row of a vector "
                               "or of a matrix, read by a compute agent; or one element read by item())");
      return true;
    }
    case OpKind::item:  // every thread computes the element itself (hold_op checks the compute agent's)
      return true;
    case OpKind::reshape: {
      const Type& input = op.operand(0)->type();
      if (!producer && row_of_axis0_reduction(op)) return true;  // folded with it into its stores
      // The row of an axis-0 reduction computed on before a store into a vector: the reduction
      // says what to write (folded_reduction), not this reshape the store made.
      if (!producer && input.rank() == 2 && input.shape()[0] == 1 && op.result()->type().rank() == 1 &&
          computed_from(op.operand(0), axis0_reduction))
        return true;
      if (producer || input.rank() != 1 || op.result()->type().rank() != 2 || op.result()->type().shape()[0] != 1) {
        const std::vector<int64_t>&from = input.shape(), &to = op.result()->type().shape();
        const bool column_and_vector = (from.size() == 1 && to.size() == 2 && to[1] == 1) ||
                                       (from.size() == 2 && from[1] == 1 && to.size() == 1);
        const auto& block = op.parent_region()->operations();
        // A row <1, N> stored into a vector: a row of its own, which no thread holds.
        if (!producer && from.size() == 2 && from[0] == 1 && to.size() == 1 && to[0] == from[1])
          return unsupported(op, tc_.layout.unsupported(1, from[1]) +
                                     " (a column sum folds into a combining store of each tile: store CS[n] += "
                                     "sum(x, axis = 0))");
        if (to.size() >= 3 && std::any_of(block.begin(), block.end(), [&](const auto& user) {
              return store_mask(*user) && user->operands().back() == op.result();
            }))
          return unsupported(op, "a masked store of a tile reshaped between the tensor's dimensions whose mask is "
                                 "not computed from iotas along its rows or columns, scalars, a reshape of a 2-D "
                                 "tile and elementwise ops (those are computed again at the 2-D tile's shape): "
                                 "write it so, e.g. iota<BQ, 1, 1, i32>(0) < n");
        if (column_and_vector)
          return unsupported(op, "a reshape between a column <R, 1> and a vector <R> that is not straight from a "
                                 "load (reshape<BM, 1>(load X[m] : <BM>)) or straight into a store "
                                 "(store X[m] = reshape<BM>(column)): compute on the column <BM, 1> instead");
        return unsupported(op, "this reshape in a tensor-core kernel (only a row <N> broadcast as <1, N>: a row "
                               "vector added to or multiplied with a tile, e.g. a bias; and a column moved to or from "
                               "the vector holding it: reshape<BM, 1>(load X[m] : <BM>) reads one value per row, "
                               "store X[m] = reshape<BM>(column) writes one)");
      }
      return true;
    }
    default: break;
  }
  if (op.num_results() == 1 && op.result()->type().is_scalar() && op.num_regions() == 0 &&
      op.kind() != OpKind::grid_ids && op.kind() != OpKind::sm_count)
    return true;  // scalar arithmetic
  if (!producer && op.info().has(kElementwise) && op.num_results() == 1 && op.result()->type().is_tile() &&
      (op.result()->type().rank() == 2 || op.result()->type().rank() == 1))
    return true;  // tile arithmetic: per element at a store, or into a register tile (2-D)
  if (producer && op.info().has(kElementwise) && op.num_results() == 1 && op.result()->type().is_tile() &&
      op.result()->type().element_count() == 1)
    return true;  // arithmetic on a loaded element, computed where item() reads it
  return unsupported(op, fmt::format("'{}' inside an agent", op.name()));
}

bool Analysis::check_tma(const Operation& op) {
  const Value* buffer_value = op.operand(0);
  auto it = tc_.stage_of.find(buffer_value);
  if (it == tc_.stage_of.end()) return unsupported(op, "a tma_load_async into something other than a stage buffer");
  StageBuffer& buffer = tc_.stages[it->second];
  const Value* tensor = op.operand(2);
  if (tensor->type().rank() < 2)
    return unsupported(op, fmt::format("TMA from a rank-{} tensor (a matrix, or a batch of them: rank 2 or more)",
                                       tensor->type().rank()));
  if (buffer.tensor && buffer.tensor != tensor) return unsupported(op, "one stage buffer filled from two tensors");
  if (buffer.tensor && buffer.transposed != op.has_attr("transposed"))
    return unsupported(op, "one stage buffer filled both transposed and not");
  if (std::string why = box_problem(op, stored_shape(op, buffer.tile), tensor->type().rank()); !why.empty())
    return unsupported(op, why);
  const size_t rows = row_dimension(op, tensor->type().rank());
  for (const StageBuffer& other : tc_.stages)  // one tensor map per tensor (this buffer's included)
    if (other.tensor == tensor && other.row_dimension != rows)
      return unsupported(op, fmt::format("tensor %{} read through two box forms (rows in dimensions {} and {})",
                                         tensor->name_hint(), other.row_dimension, rows));
  buffer.tensor = tensor;
  buffer.row_dimension = rows;
  buffer.transposed = op.has_attr("transposed");
  buffer.map = plan_.expression(tensor) + "_map";
  return true;
}

// How the compute agent holds each tile value: lazily (computed per element where a store
// writes it), in shared memory (stage reads), in TMEM (sm_100a accumulators that only mmas
// and stores touch) or as a register fragment (everything else).
bool Analysis::lazy_capable(const Operation& op) {
  return op.num_results() == 1 && op.result()->type().is_tile() && op.num_regions() == 0 &&
         (op.kind() == OpKind::load || op.kind() == OpKind::full || op.kind() == OpKind::zeros || op.kind() == OpKind::iota ||
          op.kind() == OpKind::reshape || op.kind() == OpKind::slice || op.kind() == OpKind::concat ||
          op.kind() == OpKind::interleave || op.info().has(kElementwise));
}

// A value is lazy when every user is a store, an op that moves positions (an interleave, a slice
// of rows) or a lazy value (a fixpoint from "all lazy"). A row (a rank-1 tile, or one of one row:
// a bias, a scale), which no thread could hold as a fragment, is also lazy where elementwise ops
// into register tiles read it: they compute it per element; so is a column computed from loads
// alone (loaded_column).
void Analysis::find_lazy_values() {
  // A value that only elementwise ops into the B of mmas read (directly or transposed: a computed
  // B's [N, K] form), through register pipes too: a B the schedule computes across two stage
  // boundaries (attention over a dequantized V, pipeline(3): cast and scale in stage 0, the bf16
  // cast in stage 1, the mma in stage 2) crosses one pipe into another.
  std::set<const Value*> pipes_followed;  // a pipe met again (one a loop carries into itself) is no B's
  std::function<bool(const Value*)> into_computed_b = [&](const Value* value) {
    const auto& users = users_[value];
    return !users.empty() && std::all_of(users.begin(), users.end(), [&](const Operation* user) {
      if (user->kind() == OpKind::stage_write && user->operand(2) == value) {
        auto pipe = tc_.register_pipes.find(user->operand(0));
        if (pipe == tc_.register_pipes.end() || pipe->second.stored || !pipes_followed.insert(pipe->first).second)
          return false;
        const bool into_b = std::all_of(pipe->second.reads.begin(), pipe->second.reads.end(),
                                        [&](const Operation* read) { return into_computed_b(read->result()); });
        pipes_followed.erase(pipe->first);
        return into_b;
      }
      return reads_as_b(*user, value) ||
             (user->kind() == OpKind::transpose && read_only_as_b(user->result())) ||
             (lazy_capable(*user) && into_computed_b(user->result()));
    });
  };
  // A row may also pass through a register pipe that is not stored (the schedule loads it a
  // stage before its use; the write precedes every read in its block): each read is then the
  // written row, computed where it is read. So may a tile that only elementwise ops into an mma's
  // B read (a computed B's quantized weight): the B is computed element by element anyway.
  std::unordered_map<const Value*, const RegisterPipe*> pipe_of_read;
  // A value only ops that move positions read (through elementwise ops): an interleave's or an
  // axis-0 concat's part, computed where the op reads it.
  std::function<bool(const Value*)> into_moved = [&](const Value* value) {
    const auto& users = users_[value];
    return !users.empty() && std::all_of(users.begin(), users.end(), [&](const Operation* user) {
      return moves_positions(*user) || (lazy_capable(*user) && into_moved(user->result()));
    });
  };
  auto pass_through = [&](const RegisterPipe& pipe) {
    return !pipe.stored && !pipe.writes.empty() &&
           (is_row(pipe.writes.front()->operand(2)->type()) ||
            std::all_of(pipe.reads.begin(), pipe.reads.end(), [&](const Operation* read) {
              return into_computed_b(read->result()) || into_moved(read->result());
            }));
  };
  // A column computed from loads, positions and scalars alone (s[:, 2:3] of a loaded <BM, 4>
  // tile): each element a register tile's arithmetic reads is computed at its row, as a row's
  // is at its column (an mma's result or a reduction under it would be a register tile).
  std::function<bool(const Value*)> per_element = [&](const Value* value) {
    if (!value->type().is_tile()) return true;
    const Operation* def = value->defining_op();
    if (!def || !lazy_capable(*def)) return false;
    return def->kind() == OpKind::load ||
           std::all_of(def->operands().begin(), def->operands().end(), per_element);
  };
  auto loaded_column = [&](const Value* value) {
    const Type& type = value->type();
    return type.rank() == 2 && type.shape()[1] == 1 && type.shape()[0] > 1 && per_element(value);
  };
  std::vector<const Value*> candidates;
  walk(tc_.compute->region(), [&](const Operation& op) {
    if (lazy_capable(op)) candidates.push_back(op.result());
    if (op.kind() != OpKind::stage_read) return;
    if (auto pipe = tc_.register_pipes.find(op.operand(0)); pipe != tc_.register_pipes.end() && pass_through(pipe->second)) {
      candidates.push_back(op.result());
      pipe_of_read[op.result()] = &pipe->second;
    }
  });
  tc_.lazy.insert(candidates.begin(), candidates.end());
  auto reads_lazy = [&](const Operation& write) {
    auto pipe = tc_.register_pipes.find(write.operand(0));
    if (pipe == tc_.register_pipes.end() || !pass_through(pipe->second)) return false;
    return std::all_of(pipe->second.reads.begin(), pipe->second.reads.end(),
                       [&](const Operation* read) { return tc_.lazy.count(read->result()) != 0; });
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (const Value* value : candidates) {
      if (!tc_.lazy.count(value)) continue;
      bool lazy = true;
      if (auto read = pipe_of_read.find(value); read != pipe_of_read.end())
        lazy = tc_.lazy.count(read->second->writes.front()->operand(2)) != 0;
      for (const Operation* user : users_[value])
        lazy = lazy && (user->kind() == OpKind::store || user->kind() == OpKind::item ||
                        moves_positions(*user) ||  // read at its own positions (an interleave's part)
                        (lazy_capable(*user) && tc_.lazy.count(user->result())) ||
                        // a computed B, written element by element into shared memory (refuse_computed_b),
                        // or what a computed B transposes
                        reads_as_b(*user, value) ||
                        (user->kind() == OpKind::transpose && read_only_as_b(user->result())) ||
                        ((is_row(value->type()) || loaded_column(value)) && user->info().has(kElementwise)) ||
                        (user->kind() == OpKind::stage_write && reads_lazy(*user)));
      if (!lazy) {
        tc_.lazy.erase(value);
        changed = true;
      }
    }
  }
  for (const auto& [read, pipe] : pipe_of_read)
    if (tc_.lazy.count(read)) tc_.lazy_reads[read] = pipe->writes.front()->operand(2);
}


// A lazy value is computed where it is used. A load of a tensor the compute agent stores into
// between the load and a use would read there what the store wrote, not what was loaded (a fused
// SGD update's `w = load W[m, n]; store W[m, n] = w - lr * acc; store Old[m, n] = w;`): such a 2-D
// load becomes a register tile, read where it stands (each thread reads the elements it holds,
// the ones it stores: no other thread's store comes between). A row or a column, which no thread
// holds, is refused; so is item() of a tensor the agent stores into, which every thread reads
// while others may be storing.
bool Analysis::hold_loads_stored_over() {
  std::unordered_map<const Operation*, size_t> position;
  std::unordered_map<const Value*, std::vector<const Operation*>> stores;  // by tensor, in program order
  walk(tc_.compute->region(), [&](const Operation& op) {
    position.emplace(&op, position.size());
    if (op.kind() == OpKind::store) stores[op.operand(0)].push_back(&op);
  });
  // The last op that computes `value` where it stands: its non-lazy users, through lazy ones.
  std::function<size_t(const Value*)> last_use = [&](const Value* value) {
    size_t last = 0;
    for (const Operation* user : users_[value])
      last = std::max(last, user->num_results() == 1 && tc_.lazy.count(user->result()) ? last_use(user->result())
                                                                                        : position.at(user));
    return last;
  };
  bool ok = true;
  walk(tc_.compute->region(), [&](const Operation& op) {
    if (op.kind() != OpKind::load || !tc_.lazy.count(op.result())) return;
    auto stored = stores.find(op.operand(0));
    if (stored == stores.end()) return;
    const std::vector<const Operation*>& into = stored->second;
    auto reads_item = [&](const Operation* user) { return user->kind() == OpKind::item; };
    if (std::any_of(users_[op.result()].begin(), users_[op.result()].end(), reads_item)) {
      ok = unsupported(op, fmt::format("item() of {}, which this kernel also stores into (line {}): each compute "
                                       "thread reads it where it uses the value, while other threads may have "
                                       "stored; read it from another tensor, or in an earlier kernel",
                                       describe(op.operand(0)), into.front()->location().line)) &&
           ok;
      return;
    }
    const size_t at = position.at(&op), used = last_use(op.result());
    auto between = std::find_if(into.begin(), into.end(), [&](const Operation* store) {
      return position.at(store) > at && position.at(store) < used;
    });
    if (between == into.end()) return;
    const Type& type = op.result()->type();
    if (type.rank() != 2 || type.shape()[0] == 1 || type.shape()[1] == 1) {
      ok = unsupported(op, fmt::format("a {} of {} used after the store into it at line {} (a row or a column, "
                                       "which no thread holds in registers, is read where it is used): use it "
                                       "before that store, or load it from another tensor",
                                       type.rank() == 1 || type.shape()[0] == 1 ? "row" : "column",
                                       describe(op.operand(0)), (*between)->location().line)) &&
           ok;
      return;
    }
    tc_.lazy.erase(op.result());
  });
  return ok;
}

// Plan::read_stage, in the mutable form the analysis fills in (a buffer's role), or nullptr.
StageBuffer* Analysis::stage_operand(const Operation& op, size_t i) {
  if (!tc_.is_stage_read(op.operand(i))) return nullptr;
  return &tc_.stages[&tc_.read_stage(op.operand(i)) - tc_.stages.data()];
}

void Analysis::mark_stored_register_pipes() {
  for (auto& [buffer, pipe] : tc_.register_pipes) {
    if (pipe.reads.empty() || pipe.writes.empty()) continue;
    const Operation& write = *pipe.writes.front();
    const Region* block = write.parent_region();
    pipe.stored = pipe.writes.size() > 1 || std::any_of(pipe.reads.begin(), pipe.reads.end(), [&](const Operation* read) {
                    return read->parent_region() != block || block->position_of(read) < block->position_of(&write);
                  });
  }
}

// The stored register pipes get a fragment of their own named by the pipe; in the kernel's
// order of their stage_buffer ops, so the fragments' order is the same every run.
bool Analysis::place_register_pipes() {
  for (const auto& op : kernel_.region().operations()) {
    auto found = tc_.register_pipes.find(op->kind() == OpKind::stage_buffer ? op->result() : nullptr);
    if (found == tc_.register_pipes.end()) continue;
    const Value* buffer = found->first;
    RegisterPipe& pipe = found->second;
    if (pipe.reads.empty()) continue;
    if (pipe.writes.empty()) return unsupported(*pipe.reads.front(), "a read of a register pipe that nothing writes");
    // Refused (a register tile this target cannot hold) at the first write, where the value is.
    if (pipe.stored && !new_fragment(*pipe.writes.front(), buffer, buffer->type().payload())) return false;
  }
  return true;
}

bool Analysis::new_fragment(const Operation& op, const Value* value) { return new_fragment(op, value, value->type()); }

bool Analysis::new_fragment(const Operation& op, const Value* value, const Type& type) {
  if (type.rank() != 2) return unsupported(op, fmt::format("a register tile {} (2-D only)", type.to_source_string()));
  std::string why = tc_.layout.unsupported(type.shape()[0], type.shape()[1]);
  if (!why.empty()) return unsupported(op, fmt::format("a register tile {}: {}", type.to_source_string(), why));
  Fragment fragment;
  fragment.name = plan_.expression(value);
  fragment.element = type.element();
  fragment.rows = type.shape()[0];
  fragment.columns = type.shape()[1];
  tc_.fragment_of[value] = tc_.fragments.size();
  tc_.fragments.push_back(fragment);
  return true;
}

// True when `value` may be overwritten in place (by an mma into it, or a loop carrying it): it has
// one reader, and it is not a register pipe's read (the pipe's other reads share its registers).
bool Analysis::owns_registers(const Value* value) {
  const Operation* def = value->defining_op();
  return users_[value].size() == 1 && !(def && def->kind() == OpKind::stage_read);
}

// A tile an `if` assigns gets registers of its own; each branch's yield copies its register tile
// into them (emit_yield), so the paths may compute it from different tiles.
bool Analysis::hold_if(const Operation& op) {
  if (!hold_region(op.region(0)) || !hold_region(op.region(1))) return false;
  for (size_t i = 0; i < op.num_results(); ++i) {
    if (op.result(i)->type().is_scalar()) continue;
    for (size_t r = 0; r < 2; ++r)
      if (!tc_.fragment(op.region(r).terminator()->operand(i)))
        return unsupported(op, fmt::format("an 'if' whose {} branch gives its tile {} from something other than "
                                           "a register tile (a TMEM accumulator, a loaded tile, a row): make it a "
                                           "register tile first (x * 1.0), or pick with where()",
                                           r == 0 ? "then" : "else", i + 1));
    if (!new_fragment(op, op.result(i))) return false;
  }
  return true;
}

bool Analysis::hold_region(const Region& region) {
  for (const auto& op : region.operations())
    if (!hold_op(*op)) return false;
  return true;
}

bool Analysis::hold_op(const Operation& op) {
  switch (op.kind()) {
    case OpKind::for_: return hold_loop(op);
    case OpKind::if_: return hold_if(op);
    case OpKind::mma: return hold_mma(op);
    case OpKind::store: return hold_store(op);
    case OpKind::transpose: {
      // A register tile [K, M] read as the [M, K] A of mmas: staged to shared memory row by row
      // as it is held, the MN-major A (16-bit inputs only) of each mma (hold_mma).
      auto read_as_a = [&](const Value* value) {
        const auto& users = users_[value];
        return !users.empty() && std::all_of(users.begin(), users.end(), [&](const Operation* user) {
          return user->kind() == OpKind::mma && user->operand(0) == value && user->operand(1) != value;
        });
      };
      const auto& users = users_[op.result()];
      const bool only_a = read_as_a(op.result());
      // The B of mmas, of a tile computed per element: written transposed (K-major) into shared
      // memory where the mma is (stage_computed_b).
      if (tc_.lazy.count(op.operand(0)) && read_only_as_b(op.result())) return true;
      // cast(transpose(x)) read as an A: the same tile as transpose(cast(x)), which the rule takes.
      if (users.size() == 1 && users.front()->kind() == OpKind::cast && read_as_a(users.front()->result()) &&
          tc_.fragment(op.operand(0)))
        return unsupported(op, fmt::format("this transpose of a register tile cast afterwards (to {}): write the "
                                           "cast inside it, transpose(cast(x, {})), the form an mma's A takes",
                                           to_string(users.front()->result()->type().element()),
                                           to_string(users.front()->result()->type().element())));
      if (!only_a || !tc_.fragment(op.operand(0))) return unsupported(op, kTransposeRule);
      tc_.transposed_a[op.result()] = op.operand(0);
      return true;
    }
    case OpKind::stage_read:
      if (auto pipe = tc_.register_pipes.find(op.operand(0)); pipe != tc_.register_pipes.end()) {
        if (tc_.lazy_reads.count(op.result())) return true;  // a row computed where it is read
        if (pipe->second.stored) return new_fragment(op, op.result());
        const Value* written = pipe->second.writes.front()->operand(2);
        if (!tc_.fragment(written)) return unsupported(op, "a register pipe whose value is not a register tile");
        tc_.fragment_of[op.result()] = tc_.fragment_of.at(written);
      }
      return true;
    case OpKind::stage_write:
      if (tc_.lazy.count(op.operand(2)) && !tc_.register_pipes.at(op.operand(0)).stored) return true;
      if (tc_.register_pipes.at(op.operand(0)).stored && !tc_.fragment(op.operand(2)))
        return unsupported(op, "a register pipe whose value is not a register tile");
      return true;
    case OpKind::reduce_max: case OpKind::reduce_min: case OpKind::reduce_sum:
      if (!tc_.fragment(op.operand(0))) return unsupported(op, "a reduction of a tile that is not a register tile");
      if (op.int_attr("axis", -1) == 0) return folded_reduction(op);
      return new_fragment(op, op.result());
    case OpKind::item:  // every thread computes the element itself
      if (!tc_.lazy.count(op.operand(0)) && !tc_.lazy_reads.count(op.operand(0)))
        return unsupported(op, "item() of a tile the compute threads hold in registers (a reduction or an mma "
                               "result); it takes loaded elements and arithmetic on them (a scale, an index), e.g. "
                               "item(load Scale[0] : <1>)");
      return true;
    case OpKind::slice:  // computed per element where it is read, or held as a register tile of its own
    case OpKind::concat:
    case OpKind::interleave:
      if (tc_.loaded_slices.count(op.result())) return true;  // read from TMEM after its loop (hold_loop)
      if (!(moves_positions(op) ? check_moved_tiles(op) : check_sliced_registers(op))) return false;
      break;
    case OpKind::reshape:  // a row: computed per element where it is read, never held
      if (!tc_.lazy.count(op.result()))
        return unsupported(op, "a row <N> as <1, N> read other than by elementwise arithmetic or a store (combine it "
                               "with a tile first, e.g. acc + bias, and reduce, carry or multiply that tile)");
      return true;
    default: break;
  }
  if (op.num_results() == 1 && op.result()->type().is_tile() && !tc_.lazy.count(op.result()) &&
      !tc_.accumulator_of.count(op.result()))
    return new_fragment(op, op.result());
  return true;
}

// Why a tile of `columns` columns read from TMEM has a width tcgen05.ld cannot read: each compute
// warpgroup reads its share of the columns (a hunt's SwiGLU read acc[:, 40:80] and was told "a
// multiple of 8" of its 40 columns).
std::string Analysis::tmem_read_width(int64_t columns) const {
  // Of 256 columns, the share one compute warpgroup reads: the count of warpgroups splitting them
  // (store_columns of a narrower tile rounds down, to 0 for one column).
  const int64_t warpgroups = 256 / store_columns(256);
  const int64_t multiple = warpgroups * 8;
  return fmt::format("{} column{} wide: {}tcgen05.ld 32x32b reads 32, 16 or 8 columns at a time, so the tile must be "
                     "a multiple of {} columns wide{}",
                     columns, columns == 1 ? "" : "s",
                     warpgroups == 1              ? ""
                     : columns % warpgroups == 0 ? fmt::format("the compute warpgroups read {} columns each, and ",
                                                               columns / warpgroups)
                                                 : fmt::format("the {} compute warpgroups split the columns, and ",
                                                               warpgroups),
                     multiple, warpgroups > 1 ? " (or use 64-row tiles, which one warpgroup reads)" : "");
}

// Carried TMEM accumulators stay in place; a carried register tile lives in its initial
// value's registers when nothing else reads that value, else in a copy; the yield copies a
// new value into them.
bool Analysis::hold_loop(const Operation& loop) {
  const Region& body = loop.region();
  std::vector<size_t> carried;
  for (size_t i = 1; i < body.num_arguments(); ++i) {
    const Value* argument = body.argument(i);
    if (argument->type().is_scalar()) continue;
    const Value* init = loop.operand(2 + i);
    if (tc_.accumulator_of.count(argument)) {  // a TMEM group: its yield is in it too
      // The result is read from TMEM into a register tile after the loop (Plan::loaded_after_loop).
      if (tc_.loaded_after_loop.count(loop.result(i - 1)) && !new_fragment(loop, loop.result(i - 1))) return false;
      if (auto sliced = tc_.sliced_after_loop.find(loop.result(i - 1)); sliced != tc_.sliced_after_loop.end())
        for (const Value* slice : sliced->second) {  // each read from its TMEM columns (Plan::sliced_after_loop)
          const int64_t columns = slice->type().shape()[1];
          if (target::tmem_load_width(store_columns(columns)) == 0)
            return unsupported(*slice->defining_op(),
                               fmt::format("a slice of a TMEM accumulator read into registers, {}", tmem_read_width(columns)));
          if (!new_fragment(*slice->defining_op(), slice)) return false;
        }
      continue;
    }
    if (!tc_.fragment(init))
      return unsupported(loop, "a loop carrying a tile that is neither an mma accumulator nor a register tile");
    if (owns_registers(init)) {
      tc_.fragment_of[argument] = tc_.fragment_of.at(init);
    } else {
      if (!new_fragment(loop, argument)) return false;
      tc_.loop_copies[&loop].push_back(i);
    }
    tc_.fragment_of[loop.result(i - 1)] = tc_.fragment_of.at(argument);
    carried.push_back(i);
  }
  if (!hold_region(body)) return false;
  for (size_t i : carried) {
    const Value* yielded = body.terminator()->operand(i - 1);
    if (!tc_.fragment(yielded)) return unsupported(loop, "a loop yielding a tile that is not a register tile");
    size_t source = tc_.fragment_of.at(yielded);
    for (size_t j : carried)
      if (j != i && source == tc_.fragment_of.at(body.argument(j)))
        return unsupported(loop, "a loop whose yield exchanges its carried tiles");
  }
  return true;
}

bool Analysis::hold_mma(const Operation& op) {
  const Value* acc = op.operand(2);
  StageBuffer* a = stage_operand(op, 0);
  StageBuffer* b = stage_operand(op, 1);
  const bool a_transposed = tc_.transposed_a.count(op.operand(0)) != 0;
  const Fragment* a_registers = a ? nullptr : tc_.a_fragment(op);
  // A computed B (refuse_computed_b took it): written into shared memory as TMA would load it.
  StageBuffer computed;
  bool b_transposed = false;
  if (const Value* source = computed_b(op, b_transposed); !b && source && tc_.lazy.count(source)) {
    computed.op = &op;
    computed.tile = op.operand(1)->type();
    computed.transposed = b_transposed;  // [N, K] in shared memory: a K-major B
    computed.depth = 1;
    computed.slot_bytes = computed.tile.element_count() * byte_size(computed.tile.element());
    computed.role = StageBuffer::Role::b;
    // Rows of 64 or 32 bytes (32 or 16 bf16 columns: N of an [K, N] B, K of an [N, K] one) take
    // the swizzle of their width, as a TMA box of such rows does; longer rows the 128-byte one
    // (refuse_computed_b refused any other).
    if (const int64_t swizzle = row_swizzle(computed.stored()[1] * byte_size(computed.tile.element())))
      computed.swizzle_bytes = swizzle;
    b = &computed;
  }
  if (!b || (!a && !a_registers))
    return unsupported(op, "an mma whose B is not a stage buffer filled by TMA or whose A is neither such a stage "
                           "buffer nor a register tile");
  for (auto [buffer, role] : {std::pair{a, StageBuffer::Role::a}, std::pair{b, StageBuffer::Role::b}}) {
    if (!buffer || buffer == &computed) continue;
    if (buffer->role == StageBuffer::Role::computed)
      return unsupported(op, "a stage buffer read both as an mma operand and into a computed B");
    if (buffer->role != StageBuffer::Role::none && buffer->role != role)
      return unsupported(op, "a stage buffer read as both A and B of mma");
    buffer->role = role;
  }
  ScalarKind input = a ? a->tile.element() : a_registers->element;
  const ScalarKind input_b = b->tile.element();
  // The target's MMA forms for A's type (backend/target.cpp); they agree on operand sources and
  // layouts and differ in M.
  const std::vector<const target::MmaInstruction*> rows = target::mma_instructions(target_, input);
  if (rows.empty() || target::mma_instructions(target_, input_b).empty() || !mma_operands_combine(input, input_b))
    return unsupported(op, fmt::format("mma of {} x {} ({} inputs, both the same but for two 8-bit floats or two "
                                       "8-bit integers)",
                                       to_string(input), to_string(input_b), mma_input_names()));
  const target::MmaInstruction& form = *rows.front();
  if (a && a->transposed && !form.mn_major)
    return unsupported(op, fmt::format("an mma of {} whose A is [K, M] in memory: {} MMAs read A K-major. Give "
                                       "a as [M, K]", to_string(input), form.what));
  if (a_transposed && !form.mn_major)
    return unsupported(op, fmt::format("an mma of {} whose A is the transpose of a register tile: {} MMAs read A "
                                       "K-major (16-bit inputs take it)", to_string(input), form.what));
  // Staged as held, the transposed tile's rows are 128-byte swizzle panels of M (stage_register_a).
  if (a_transposed && a_registers->columns % panel_columns(input) != 0)
    return unsupported(op, fmt::format("an mma whose A is the transpose of a {}x{} register tile (its {} columns, "
                                       "A's M, must be a multiple of {}: whole 128-byte rows)",
                                       a_registers->rows, a_registers->columns, a_registers->columns,
                                       panel_columns(input)));
  if (!b->transposed && !form.mn_major)
    return unsupported(op, fmt::format("an mma of {} whose B is [K, N] in memory: {} MMAs read B K-major. Give "
                                       "the weight as [N, K] and write transpose(load W[n, k] : <BN, BK>) as mma's b",
                                       to_string(input), form.what));
  const Type& acc_type = acc->type();
  if (acc_type.rank() != 2 || acc_type.element() != form.accumulator)
    return unsupported(op, fmt::format("an mma of {} into {} ({} accumulators)", to_string(input), acc_type.to_source_string(),
                                       to_string(form.accumulator)));
  int64_t m = acc_type.shape()[0], n = acc_type.shape()[1],
          k = a ? a->tile.shape()[1] : a_transposed ? a_registers->rows : a_registers->columns;
  const int64_t units = mma_units();
  const target::MmaInstruction* row = nullptr;
  for (const target::MmaInstruction* candidate : rows)
    if (candidate->m * units == m) {
      row = candidate;
      break;
    }
  if (!row) return unsupported(op, unmatched_rows(m, rows));
  if (!row->takes_n(n, b->k_major())) {
    if (b->k_major())
      return unsupported(op, fmt::format("an mma {} columns wide (N: a multiple of {} up to {})", n, row->n_step,
                                         row->n_max));
    std::vector<int64_t> narrow;  // the powers of two below n_multiple, widest first
    for (int64_t width = row->n_multiple / 2; width >= row->n_min; width /= 2) narrow.push_back(width);
    return unsupported(op, fmt::format("an mma {} columns wide (N: a multiple of {} up to {}, or {}; any multiple of "
                                       "{} with B given as [N, K]: transpose(load W[n, k] : <BN, BK>) as mma's b)",
                                       n, row->n_multiple, row->n_max, fmt::join(narrow, " or "), row->n_step));
  }
  // K-major stage tiles (and A from registers staged for tcgen05) take the 64- or 32-byte
  // swizzle when K is that short.
  const int64_t k_bytes = k * byte_size(input);
  if (k % panel_columns(input) != 0 && k_bytes != 64 && k_bytes != 32)
    return unsupported(op, fmt::format("an mma of {} with K = {} per step (a multiple of {}: one 128-byte swizzle row; "
                                       "or {} or {}: a 64- or 32-byte one)",
                                       to_string(input), k, panel_columns(input), 64 / byte_size(input),
                                       32 / byte_size(input)));
  MmaPlan plan;
  plan.input = input;
  plan.input_b = input_b;
  plan.instruction = row;
  plan.a_registers = a_registers != nullptr;
  plan.a_transposed = a_transposed;
  // A register A the instruction does not read from registers (MmaInstruction::a_registers), or
  // a transposed one, is written to shared memory first (stage_register_a): its bytes, placed
  // with the stages.
  if (a_registers && (!row->a_registers || a_transposed)) plan.staging_bytes = m * k * byte_size(input);
  if (b == &computed) {
    plan.b_computed = true;
    plan.computed_b = computed;
  }
  if (auto chain = tc_.accumulator_of.find(acc); chain != tc_.accumulator_of.end()) {
    tc_.accumulators[chain->second].input = input;  // sm_100a: D stays in TMEM
  } else {
    if (!tc_.fragment(acc))
      return unsupported(op, "an mma whose accumulator is neither a zeros tile nor a register tile");
    if (owns_registers(acc)) {
      tc_.fragment_of[op.result()] = tc_.fragment_of.at(acc);
    } else {
      if (!new_fragment(op, op.result())) return false;
      plan.copy = true;
    }
    tc_.fragments[tc_.fragment_of.at(op.result())].accumulator = true;
    plan.registers = true;
    if (target_.mma == target::MmaFamily::tcgen05 && target::tmem_load_width(store_columns(n)) == 0)
      return unsupported(op, fmt::format("an mma into a register tile of {} columns, {} per warpgroup (tcgen05.ld "
                                         "32x32b reads 32, 16 or 8 columns at a time: a multiple of 8)",
                                         n, store_columns(n)));
  }
  plan_mma(plan, MmaOperands{.n = n, .a = a, .a_registers = a_registers, .a_transposed = a_transposed, .b = b});
  tc_.mma_plans[&op] = plan;
  tc_.mma_ops.push_back(&op);
  return true;
}

// "%acc", or "the value of line 12", for a message.
static std::string describe(const Value* value) {
  if (!value->name_hint().empty()) return "%" + value->name_hint();
  const Operation* def = value->defining_op();
  return def && def->location().known() ? fmt::format("the value of line {}", def->location().line) : "a value";
}

// An op that moves positions (an interleave, a slice of rows or with a step, a concat along axis
// 0) reads its operands at other positions than the element's: only what the compute threads
// compute there (loads, positions, rows, scalars, arithmetic on them), not a tile in registers,
// which holds each thread's own positions.
bool Analysis::check_moved_tiles(const Operation& op) {
  const Value* held = nullptr;
  std::function<void(const Value*)> visit = [&](const Value* value) {
    if (!value->type().is_tile() || held) return;
    if (auto read = tc_.lazy_reads.find(value); read != tc_.lazy_reads.end()) return visit(read->second);
    if (tc_.is_stage_read(value)) return;  // a tile TMA copied, read from its slot at any position
    if (tc_.fragment(value) || tc_.accumulator(value) || !tc_.lazy.count(value)) {
      held = value;
      return;
    }
    const Operation* def = value->defining_op();
    if (def && def->kind() != OpKind::load)
      for (const Value* operand : def->operands()) visit(operand);
  };
  for (const Value* part : op.operands()) visit(part);
  if (!held) return true;
  const std::string what = op.kind() == OpKind::interleave ? "interleave()"
                           : op.kind() == OpKind::concat   ? "concat() along axis 0"
                                                           : "subscript (rows, or a step)";
  const std::string name = describe(held);
  return unsupported(op, fmt::format("this {} of {} ({}): it reads {} at other positions than the elements it "
                                     "gives, and each compute thread holds only its own positions of it ({}); apply "
                                     "it to loaded tiles and arithmetic on them (interleave(w & 15, w >> 4) of a "
                                     "packed weight, rows of a loaded tile), or compute it in a plain kernel",
                                     what, name, held->type().to_source_string(), name,
                                     tc_.accumulator(held) ? "in tensor memory" : "in registers"));
}

// A column slice (or a concat's part) reads the elements `start` columns on in the tiles it is
// computed from: in their registers, where those stay in the thread
// (FragmentLayout::slice_problem); TMEM accumulators, loads and positions at any column.
bool Analysis::check_sliced_registers(const Operation& op) {
  const int64_t width = op.result()->type().shape()[1];
  const bool tcgen05 = target_.mma == target::MmaFamily::tcgen05;
  for (size_t k = 0; k < op.num_operands(); ++k) {
    const int64_t start = operand_column_shift(op, k);
    std::string why;
    const Value* held = nullptr;
    std::function<void(const Value*)> visit = [&](const Value* value) {
      if (!value->type().is_tile() || !why.empty()) return;
      if (auto read = tc_.lazy_reads.find(value); read != tc_.lazy_reads.end()) return visit(read->second);
      if (const Fragment* fragment = tc_.fragment(value)) {
        if (fragment->columns > 1) why = tc_.layout.slice_problem(fragment->columns, start, width);
        held = value;
        return;
      }
      const Operation* def = value->defining_op();
      if (!def || !tc_.lazy.count(value) || def->kind() == OpKind::load) return;
      for (const Value* operand : def->operands()) visit(operand);
    };
    visit(op.operand(k));
    if (why.empty()) continue;
    const std::string tile = fmt::format("{} ({}, held in registers)", describe(held), held->type().to_source_string());
    if (op.kind() == OpKind::concat) {
      const int64_t part = op.operand(k)->type().shape()[1];
      return unsupported(op, fmt::format("this concat() of {} as its columns {}:{}: {}; {}", tile, -start,
                                         -start + part, why,
                                         tcgen05 ? "concatenate accumulators only in what their stores compute (TMEM "
                                                   "is read at any column), or use 64-row tiles (one compute "
                                                   "warpgroup holds whole rows)"
                                                 : "make each part a multiple of 8 columns wide"));
    }
    const std::vector<int64_t>& shape = held->type().shape();
    const Operation* def = held->defining_op();
    if (def && def->kind() == OpKind::load)  // the columns may be loaded as a tile of their own
      return unsupported(op, fmt::format("this slice of {} at columns {}:{}: {}; load those columns as a tile of their "
                                         "own (at element coordinates: load T at [r, c + {}] : <{}, {}>)",
                                         tile, start, start + width, why, start, shape[0], width));
    if (width == 1)  // one column, read per row: a row reduction of the masked tile gives it
      return unsupported(
          op, fmt::format("this slice of {} at columns {}:{}: {}; take the column as a row reduction of the "
                          "masked tile instead: sum(where(iota<{}, {}, i32>(1) == {}, x, 0.0), axis = 1)",
                          tile, start, start + width, why, shape[0], shape[1], start));
    return unsupported(
        op, fmt::format("this slice of {} at columns {}:{}: {}; {}, or keep the tile whole and mask the columns "
                        "outside {}:{} (where() of an iota<{}, {}, i32>(1))",
                        tile, start, start + width, why,
                        tcgen05 ? "slice an accumulator only in what its stores compute (TMEM is read at any "
                                  "column), use 64-row tiles (one compute warpgroup holds whole rows)"
                                : "start it at a multiple of 8",
                        start, start + width, shape[0], shape[1]));
  }
  return true;
}

// A reduction along axis 0 of a held tile (check_op took only those; a column's, or a whole
// tile's second step) has no registers of its own: every reader must be a store that combines the
// same way (max=, min=, +=), which folds it in (emit_folded_store): the threads holding each
// column combine its rows atomically.
bool Analysis::folded_reduction(const Operation& op) {
  const StoreCombine combine = store_combine_of_reduction(op.kind());
  auto combining_stores = [&](const Value* value) {
    const auto& users = users_[value];
    return !users.empty() && std::all_of(users.begin(), users.end(), [&](const Operation* user) {
      return user->kind() == OpKind::store && user->operands().back() == value && store_combine(*user) == combine;
    });
  };
  // Its users: stores combining its way, or a reshape of its row into a vector that they store.
  const auto& users = users_[op.result()];
  if (users.empty() || !std::all_of(users.begin(), users.end(), [&](const Operation* user) {
        return user->kind() == OpKind::store ? combining_stores(op.result())
                                             : row_of_axis0_reduction(*user) == &op && combining_stores(user->result());
      }))
  {
    // What to write: the reduction straight into a store combining its way, into an f32 or i32
    // tensor (a cast after it is a reader too).
    const bool column = op.operand(0)->type().shape()[1] == 1;
    const char* function = combine == StoreCombine::add ? "sum" : combine == StoreCombine::max ? "max" : "min";
    const bool cast = std::any_of(users.begin(), users.end(), [](const Operation* user) {
      return user->kind() == OpKind::cast;
    });
    // A sum scaled after it: the scale goes inside, on each element.
    const bool scaled = combine == StoreCombine::add &&
                        std::any_of(users.begin(), users.end(), [](const Operation* user) {
                          return user->kind() == OpKind::mul || user->kind() == OpKind::div;
                        });
    return unsupported(op, fmt::format("a {}() along axis 0 ({}; '{}') read other than by a store that combines "
                                       "the same way: the threads hold a column's rows apart; write it straight into "
                                       "one, {}{}, or store the per-row results (a <BM, 1> column) and reduce them in "
                                       "a kernel of its own",
                                       function, column ? "of a whole tile, or a column" : "a column's", op.name(),
                                       column ? fmt::format("store T[0, 0] {} {}(x)", store_combine_spelling(combine),
                                                            function)
                                              : fmt::format("store T[0, n] {} {}(x, axis = 0) (T[n] for a vector T)",
                                                            store_combine_spelling(combine), function),
                                       cast ? fmt::format(" into an {} tensor (cast it in a kernel of its own)",
                                                          to_string(op.result()->type().element()))
                                       : scaled ? " with the scale inside, sum(x * s, axis = 0)"
                                                : ""));
  }
  tc_.folded_reductions.insert(&op);
  return true;
}

// A stored value is computed element by element from register tiles, TMEM accumulators of its
// shape, loads and scalars (or is a folded reduction).
bool Analysis::hold_store(const Operation& op) {
  const Value* value = op.operands().back();
  // A reduction along axis 0 folded into the store: its row, or the vector that row is reshaped
  // into for a store into a vector.
  const Operation* def = value->defining_op();
  const Operation* vector_of = def ? row_of_axis0_reduction(*def) : nullptr;
  if (vector_of) def = vector_of;
  if (def && tc_.folded_reductions.count(def)) {
    if (store_mask(op))
      return unsupported(op, fmt::format("a masked store of a reduction along axis 0; mask the reduced tile instead "
                                         "(where(mask, x, {}) before the reduction)",
                                         // the combine's identity in the stored type (-1.0e30 was refused for
                                         // an i32 accumulator: a hunt)
                                         is_float(value->type().element())
                                             ? (store_combine(op) == StoreCombine::add   ? "0.0"
                                                : store_combine(op) == StoreCombine::max ? "-1.0e30"
                                                                                          : "1.0e30")
                                             : (store_combine(op) == StoreCombine::add   ? "0"
                                                : store_combine(op) == StoreCombine::max ? "-2147483648"
                                                                                          : "2147483647")));
    StorePlan plan;
    plan.tensor = op.operand(0);
    plan.folded = def;
    const size_t rank = plan.tensor->type().rank();
    const int64_t columns = def->result()->type().shape()[1];
    if (rank < 2 && !vector_of)
      return unsupported(op, fmt::format("a reduction along axis 0 stored into a vector (give a [1, {}] tensor)",
                                         columns == 1 ? "1" : "N"));
    if (std::string box = box_problem(op, {1, columns}, rank); !box.empty()) return unsupported(op, box);
    plan.row_dimension = row_dimension(op, rank);
    plan.direct_because = fmt::format("it combines ({}) a reduction along axis 0: the threads holding each column "
                                      "combine its rows, atomically", store_combine_spelling(store_combine(op)));
    tc_.store_plans[&op] = plan;
    tc_.store_ops.push_back(&op);
    return true;
  }
  const bool column = column_box(op, op.operand(0)->type().rank());  // a column into a vector's elements
  if (!value->type().is_tile() || value->type().rank() != 2 || (op.operand(0)->type().rank() < 2 && !column))
    return unsupported(op, "a store that is not a 2-D tile into a matrix or a batch of them (a tensor of rank 2 or "
                           "more), or a column into a vector");
  int64_t rows = value->type().shape()[0], columns = value->type().shape()[1];
  // Where the family stores 64-row tiles (the rows of an M = 64 accumulator), directly, not through TMA.
  const bool rows_64 = stores_64_rows() && rows == 64;
  // A column (rows x 1, one value per row) is written from the threads holding each row.
  std::string why = rows_64 ? "" : tc_.layout.unsupported(rows, columns);
  if (!why.empty()) return unsupported(op, fmt::format("a stored tile {}: {}", value->type().to_source_string(), why));
  std::vector<AccumulatorRead> accumulators;
  std::string why_not;  // the first leaf that breaks the rule, said for a user
  // Where a concat()'s parts meet, in columns of the stored tile.
  std::vector<int64_t> seams;
  // `leaf` is read as a tile of `width` columns from its column `shift` on (a column slice of it,
  // or a concat's part: `partial`, read only where the part lies).
  std::function<void(const Value*, int64_t, int64_t, bool)> visit = [&](const Value* leaf, int64_t width,
                                                                        int64_t shift, bool partial) {
    if (!leaf->type().is_tile() || !why_not.empty()) return;
    if (const Accumulator* accumulator = tc_.accumulator(leaf)) {
      auto read = std::find_if(accumulators.begin(), accumulators.end(), [&](const AccumulatorRead& r) {
        return r.accumulator == accumulator && r.column == shift;
      });
      if (accumulator->rows != rows || accumulator->columns != width)
        why_not = fmt::format("it reads the accumulator {} ({}x{}) in a tile of {}x{}; a store reads accumulators "
                              "of its own shape", describe(leaf), accumulator->rows, accumulator->columns, rows, width);
      else if (read == accumulators.end())
        accumulators.push_back({accumulator, shift, partial});
      else
        read->partial = read->partial || partial;
      return;
    }
    if (const Fragment* held = tc_.fragment(leaf)) {
      if (held->rows != rows || (held->columns != width && held->columns != 1))
        why_not = fmt::format("it reads {} ({} rows, {} columns) in a tile of {}x{}; only tiles of the stored "
                              "shape or one column of it combine in a store", describe(leaf), held->rows,
                              held->columns, rows, width);
      return;
    }
    if (auto read = tc_.lazy_reads.find(leaf); read != tc_.lazy_reads.end()) {
      visit(read->second, width, shift, partial);
      return;
    }
    const Operation* def = leaf->defining_op();
    if (!def || !tc_.lazy.count(leaf)) {
      why_not = fmt::format("it reads {}, which is neither a load, a register tile nor computed element by "
                            "element from them", describe(leaf));
      return;
    }
    if (def->kind() == OpKind::load) return;
    if (moves_positions(*def)) {  // no register tile under it (check_moved_tiles)
      for (const Value* operand : def->operands()) visit(operand, operand->type().shape()[1], 0, partial);
      return;
    }
    if (def->kind() == OpKind::slice || def->kind() == OpKind::concat) {
      for (size_t k = 0; k < def->num_operands(); ++k) {
        const int64_t part_shift = shift + operand_column_shift(*def, k);
        if (def->kind() == OpKind::concat && k > 0) seams.push_back(-part_shift);
        visit(def->operand(k), def->operand(k)->type().shape()[1], part_shift,
              partial || def->kind() == OpKind::concat);
      }
      return;
    }
    for (const Value* operand : def->operands()) visit(operand, width, shift, partial);
  };
  visit(value, columns, 0, false);
  const Value* mask = store_mask(op);
  if (mask) visit(mask, columns, 0, false);  // read per element beside the value
  if (!why_not.empty()) return unsupported(op, fmt::format("this store: {}", why_not));
  // TMEM accumulators are read 32 (or 16 or 8) columns at a time, each load a part's or another's.
  const auto seam = std::find_if(seams.begin(), seams.end(), [](int64_t s) { return s % 32 != 0; });
  if (!accumulators.empty() && seam != seams.end())
    return unsupported(op, fmt::format("a concat() whose parts meet at column {} of the stored tile, with TMEM "
                                       "accumulators in it: a store reads TMEM 32 columns at a time, each from "
                                       "one part, so parts meet at multiples of 32",
                                       *seam));
  const int64_t per_warpgroup = store_columns(columns);
  if (!accumulators.empty() && target::tmem_load_width(per_warpgroup) == 0)
    return unsupported(op, fmt::format("a store of a tile read from a TMEM accumulator, {}", tmem_read_width(columns)));
  StorePlan plan;
  plan.accumulators = accumulators;
  plan.tensor = op.operand(0);
  const size_t rank = plan.tensor->type().rank();
  if (std::string box = box_problem(op, {rows, columns}, rank); !box.empty()) return unsupported(op, box);
  plan.row_dimension = row_dimension(op, rank);
  for (const auto& [other, other_plan] : tc_.store_plans)  // one store map per tensor
    if (other_plan.tensor == plan.tensor && other_plan.row_dimension != plan.row_dimension)
      return unsupported(op, fmt::format("tensor %{} written through two box forms", plan.tensor->name_hint()));
  plan.warpgroup_columns = per_warpgroup;
  // Through shared memory and TMA when rows of 128 bytes split the columns each warpgroup holds
  // (place_shared_memory falls back to direct stores when the staging does not fit).
  ScalarKind element = value->type().element();
  if (columns > 1 &&
      (element == ScalarKind::f32 || element == ScalarKind::i32 || element == ScalarKind::bf16 ||
       element == ScalarKind::f16) &&
      element == plan.tensor->type().element()) {
    plan.chunk_columns = kPanelRowBytes / byte_size(element);
    plan.box_rows = store_box_rows();
    plan.buffers = kStoreStagingBytes / (plan.box_rows * kPanelRowBytes);
    plan.tma = per_warpgroup % plan.chunk_columns == 0 && !rows_64;
    plan.map = plan_.expression(plan.tensor) + "_store_map";
    if (rows_64)
      plan.direct_because = "64 rows (TMEM layout F spreads them over the lanes of four warps)";
    else if (!plan.tma)
      plan.direct_because = fmt::format("each compute warpgroup writes {} columns, not a multiple of a 128-byte box "
                                        "row ({} {} columns)", per_warpgroup, plan.chunk_columns, to_string(element));
  } else {
    plan.direct_because = columns == 1 ? "a column (one value per row)"
                                       : fmt::format("{} values into a tensor of {} (TMA stores move f32, i32, bf16 "
                                                     "and f16 tiles of the tensor's own type)",
                                                     to_string(element), to_string(plan.tensor->type().element()));
  }
  // `+=` into a matrix goes through TMA as a plain store does, each box added to the tensor by TMA's
  // reducing store (cp.reduce.async.bulk .add takes every staged type: f32, i32, bf16, f16).
  // max= and min= combine element by element (its .max and .min take no f32), and so does `+=`
  // into a batch of matrices (the 3-D and 4-D reducing stores are not written yet).
  if (accumulates(op) && (store_combine(op) != StoreCombine::add || rank > 2)) {
    plan.tma = false;
    plan.direct_because = store_combine(op) == StoreCombine::add
                              ? fmt::format("it adds (+=) to a rank-{} tensor: each thread adds the elements it holds, "
                                            "atomically", rank)
                              : fmt::format("it combines ({}): each thread combines the elements it holds, atomically",
                                            store_combine_spelling(store_combine(op)));
  }
  if (mask) {  // TMA writes whole boxes
    plan.tma = false;
    plan.direct_because = "it is masked (TMA would write whole boxes)";
  }
  tc_.store_plans[&op] = plan;
  tc_.store_ops.push_back(&op);
  return true;
}

// A TMA store's writes land asynchronously, and bulk operations are not ordered with one another:
// a store that may write where an earlier TMA store of the tensor wrote waits for those writes
// first. That is a store after another of the same tensor (`=` then `+=`), and a store in a loop
// whose iterations store the same box (its coordinates are computed outside the loop).
void Analysis::plan_store_order() {
  for (size_t i = 0; i < tc_.store_ops.size(); ++i) {
    const Operation& op = *tc_.store_ops[i];
    StorePlan& plan = tc_.store_plans.at(&op);
    if (!plan.tma) continue;
    for (size_t j = 0; j < i && plan.waits_because.empty(); ++j) {
      const StorePlan& earlier = tc_.store_plans.at(tc_.store_ops[j]);
      if (earlier.tma && earlier.tensor == plan.tensor)
        plan.waits_because = fmt::format("the earlier store's writes (line {}) are done",
                                         tc_.store_ops[j]->location().line);
    }
    const auto& operands = op.operands();
    for (const Operation* loop = op.parent_op(); loop && loop != tc_.compute && plan.waits_because.empty();
         loop = loop->parent_op())
      if (loop->kind() == OpKind::for_ &&
          std::none_of(operands.begin() + 1, operands.begin() + 1 + static_cast<std::ptrdiff_t>(coordinate_count(op)),
                       [&](const Value* index) { return defined_inside(*index, *loop); }))
        plan.waits_because = fmt::format("the previous iteration's writes of this box (loop at line {}) are done",
                                         loop->location().line);
  }
}

bool Analysis::check_stage_buffers() {
  for (StageBuffer& buffer : tc_.stages) {
    const Type& tile = buffer.tile;
    if (!buffer.tensor) return unsupported(*buffer.op, "a stage buffer no TMA load fills");
    if (buffer.role == StageBuffer::Role::none) {
      // Nothing reads the tile TMA copies: the mma that read it computed an accumulator nothing
      // reads, and was dropped. Said at the load (it was said at the grid, as "a stage buffer
      // mma does not read"; found by a helper writing kernels from the docs).
      const Operation* fill = buffer.op;
      walk(kernel_.region(), [&](const Operation& op) {
        if (fill == buffer.op && op.kind() == OpKind::tma_load_async && op.operand(0) == buffer.op->result())
          fill = &op;
      });
      return unsupported(*fill, "a tile loaded for an mma whose result nothing reads (the loop's accumulator is "
                                "never stored or used after it, so the mma was dropped): store the accumulator, or "
                                "remove the loop");
    }
    if (buffer.role == StageBuffer::Role::computed && !computed_b_input_read_lazily(buffer)) return false;
    const int64_t row_bytes = tile.rank() == 2 ? buffer.stored()[1] * byte_size(tile.element()) : 0;
    if (const int64_t swizzle = row_swizzle(row_bytes)) buffer.swizzle_bytes = swizzle;
    if (tile.rank() != 2 || target::mma_instructions(target_, tile.element()).empty() ||
        buffer.stored()[1] % buffer.panel_columns() != 0 ||
        buffer.stored()[0] % 8 != 0 || buffer.stored()[0] > 256)
      return unsupported(*buffer.op, fmt::format("a stage tile {} (the mma input types, rows a multiple of 8 up to "
                                                 "256, rows of a multiple of 128 bytes, or of 64 or 32 bytes of K)",
                                                 tile.to_source_string()));
    buffer.slot_bytes = tile.element_count() * byte_size(tile.element());
    for (const Value* barrier : {buffer.full, buffer.empty}) {
      auto it = tc_.barrier_of.find(barrier);
      if (it == tc_.barrier_of.end() || tc_.barriers[it->second].slots < buffer.depth)
        return unsupported(*buffer.op, fmt::format("a stage buffer {} slots deep whose full or empty mbarrier has fewer "
                                                   "slots", buffer.depth));
    }
  }
  int64_t columns = 0;
  for (Accumulator& accumulator : tc_.accumulators) {
    accumulator.tmem_column = columns;
    columns += accumulator.columns;
  }
  for (auto& [op, plan] : tc_.mma_plans)  // sm_100a: an mma into registers goes through TMEM columns of its own
    if (plan.registers) plan.tmem_column += columns;
  columns += tmem_used_;
  if (!place_tensor_memory(columns)) return false;
  // Arrivals per phase: a compute agent arrives once per warpgroup (sm_90a) or once through
  // tcgen05.commit (sm_100a); the producer's single thread once.
  std::unordered_set<const Value*> compute_arrives;
  walk(tc_.compute->region(), [&](const Operation& op) {
    if (op.kind() == OpKind::mbarrier_arrive) compute_arrives.insert(op.operand(0));
  });
  for (Barrier& barrier : tc_.barriers) {
    if (compute_arrives.count(barrier.op->result())) barrier.arrivals *= release_arrivals();
    barrier.purpose = compute_arrives.count(barrier.op->result()) ? "released by the compute agent"
                                                                     : "filled by the producer's TMA";
  }
  return true;
}


// The slot of a computed B's input is read where the mma is (stage_computed_b), and released
// after it (materialize-schedule, last_computed_b_reader): so every read of it must be computed
// there, element by element, never held.
bool Analysis::computed_b_input_read_lazily(const StageBuffer& buffer) {
  bool ok = true;
  walk(tc_.compute->region(), [&](const Operation& read) {
    if (!ok || read.kind() != OpKind::stage_read || read.operand(0) != buffer.op->result()) return;
    for (const Operation* user : users_[read.result()])
      if (user->kind() == OpKind::mma || !tc_.lazy.count(user->result()))
        ok = unsupported(*user, fmt::format("this {} of a tile TMA copied for a computed B: the compute threads read "
                                            "such a tile only while they compute the B from it, element by element",
                                            user->name()));
  });
  return ok;
}

// Lays out shared memory. sm_100a's second staging buffer of a computed B
// (MmaPlan::b_staging_buffers) stays only where everything fits beside it and no TMA store gives
// way to it; otherwise each such staging has one buffer (each B then waits for the MMA before).
bool Analysis::place_shared_memory() {
  const std::unordered_map<const Operation*, StorePlan> planned = tc_.store_plans;
  const auto tma_stores = [&] {
    return std::count_if(tc_.store_plans.begin(), tc_.store_plans.end(), [](const auto& entry) { return entry.second.tma; });
  };
  std::vector<MmaPlan*> doubled;
  for (auto& [op, plan] : tc_.mma_plans)
    if (plan.b_staging_buffers == 2) doubled.push_back(&plan);
  lay_out_shared_memory();
  if (!doubled.empty()) {
    const bool fits = tc_.shared_bytes <= target_.shared_memory_bytes;
    const auto stores_with_two = tma_stores();
    for (MmaPlan* plan : doubled) plan->b_staging_buffers = 1;
    tc_.store_plans = planned;
    lay_out_shared_memory();
    if (fits && stores_with_two == tma_stores()) {
      for (MmaPlan* plan : doubled) plan->b_staging_buffers = 2;
      tc_.store_plans = planned;
      lay_out_shared_memory();
    }
  }
  return tc_.shared_bytes <= target_.shared_memory_bytes || report_shared_memory_overflow();
}

void Analysis::lay_out_shared_memory() {
  int64_t offset = 0;
  for (StageBuffer& buffer : tc_.stages) {
    buffer.offset = offset;
    offset += atom_rounded(buffer.depth * buffer.slot_bytes);
  }
  for (const Operation* mma : tc_.mma_ops) {  // A operands from registers, swizzled like a TMA panel
    MmaPlan& plan = tc_.mma_plans.at(mma);
    if (plan.staging_bytes == 0) continue;
    plan.staging_offset = offset;
    offset += atom_rounded(plan.staging_bytes);
  }
  for (const Operation* mma : tc_.mma_ops) {  // computed B operands, likewise
    MmaPlan& plan = tc_.mma_plans.at(mma);
    if (!plan.b_computed) continue;
    plan.b_staging_offset = offset;
    offset += plan.b_staging_buffers * plan.b_staging_buffer_bytes();
  }
  bool reduces = false;
  walk(tc_.compute->region(), [&](const Operation& op) {  // folded ones exchange nothing
    reduces = reduces || (op.info().has(kReduction) && !tc_.folded_reductions.count(&op));
  });
  if (reduces && rows_split_across_warpgroups()) {  // row reductions exchange partial results
    tc_.exchange_offset = offset;
    tc_.exchange_bytes = 4 * tc_.compute_threads;  // a float per compute thread
    offset += tc_.exchange_bytes;
  }
  // TMA stores share kStoreStagingBytes per compute warpgroup when it fits beside everything
  // else and a named barrier per warpgroup is free; otherwise every store is direct.
  int64_t fixed = kSwizzleAtomBytes + family_shared_bytes();
  for (const Barrier& barrier : tc_.barriers) fixed += 8 * barrier.slots;
  int64_t staging = kStoreStagingBytes * (tc_.compute_threads / kWarpgroup);
  // A tensor the kernel also reads is written directly: TMA's writes land asynchronously (the
  // bulk wait before the next box waits only for the staging to be read), so a later load could
  // miss them, and into the launcher's padded copy where rows are unaligned, which a load from
  // registers does not read.
  for (auto& [op, plan] : tc_.store_plans) {
    if (!plan.tma) continue;
    const Operation* reader = nullptr;
    walk(kernel_.region(), [&](const Operation& other) {
      std::optional<TensorAccess> access = tensor_access(other);
      if (!reader && other.kind() != OpKind::store && access && access->reads && access->tensor == plan.tensor)
        reader = &other;
    });
    if (reader) {
      plan.tma = false;
      plan.direct_because = fmt::format("the kernel also reads the tensor (line {}), which must see these writes in "
                                        "order (TMA's land asynchronously)",
                                        reader->location().line);
    }
  }
  // A tensor is written all through TMA or not at all: the launcher may give TMA a padded copy
  // of it and copy that back after the kernel, which would undo direct stores to the tensor.
  for (const Operation* op : tc_.store_ops)
    if (!tc_.store_plans.at(op).tma)
      for (auto& [other, plan] : tc_.store_plans)
        if (plan.tensor == tc_.store_plans.at(op).tensor && plan.tma) {
          plan.tma = false;
          plan.direct_because = fmt::format("the store at line {} writes the same tensor directly (a tensor is "
                                            "written all through TMA or not at all)", op->location().line);
        }
  bool tma_stores = std::any_of(tc_.store_ops.begin(), tc_.store_ops.end(),
                                [&](const Operation* op) { return tc_.store_plans.at(op).tma; });
  bool barriers_free = tc_.private_barrier + tc_.compute_threads / kWarpgroup <= kLastNamedBarrier;
  if (tma_stores && barriers_free && offset + staging + fixed <= target_.shared_memory_bytes) {
    tc_.store_staging_offset = offset;
    offset += staging;
  } else {
    for (auto& [op, plan] : tc_.store_plans)
      if (plan.tma) {
        plan.tma = false;
        plan.direct_because = barriers_free ? fmt::format("{} bytes of staging per compute warpgroup do not fit "
                                                          "beside the stage buffers", kStoreStagingBytes)
                                            : "no named barrier is left for the staging";
      }
  }
  plan_store_order();
  for (Barrier& barrier : tc_.barriers) {
    barrier.offset = offset;
    offset += 8 * barrier.slots;
  }
  place_family_shared(offset);
  // Dynamic shared memory is 16-byte aligned; the kernel rounds its base up to 1024 bytes.
  tc_.shared_bytes = offset + kSwizzleAtomBytes;
}

bool Analysis::report_shared_memory_overflow() {
  // The loop to fix: the deepest pipeline(S) the user wrote, else the deepest schedule (without
  // pipeline(S) a schedule chooses its own depth, which the user never asked for).
  const Operation* deepest = nullptr;
  const auto depth = [](const Operation& op) {
    return std::pair(op.has_attr("pipeline") ? op.int_attr("pipeline") : 0, op.get(attr::stages));
  };
  walk(kernel_.region(), [&](const Operation& op) {
    if (op.kind() == OpKind::for_ && op.has(attr::stages) && (!deepest || depth(op) > depth(*deepest)))
      deepest = &op;
  });
  // The deepest ring that fits: every stage buffer cut to `slots` (its barriers, a few bytes a
  // slot, are left as they are, so the estimate errs toward fewer).
  int64_t deepest_ring = 0, per_slot = 0, shallower = 0;  // the deepest ring's slot, the others' bytes
  for (const StageBuffer& buffer : tc_.stages) deepest_ring = std::max(deepest_ring, buffer.depth);
  for (const StageBuffer& buffer : tc_.stages) {
    if (buffer.depth == deepest_ring) per_slot += buffer.slot_bytes;
    else shallower += buffer.depth * buffer.slot_bytes;
  }
  int64_t fitting = 0;
  for (int64_t slots = deepest_ring - 1; slots >= 1 && fitting == 0; --slots) {
    int64_t bytes = tc_.shared_bytes;
    for (const StageBuffer& buffer : tc_.stages)
      bytes += atom_rounded(std::min(buffer.depth, slots) * buffer.slot_bytes) -
               atom_rounded(buffer.depth * buffer.slot_bytes);
    if (bytes <= target_.shared_memory_bytes) fitting = slots;
  }
  // What the ring takes, and apart from it what shallower buffers (a tile loaded once per tile,
  // before the loop) take: so the figures add up.
  std::string ring;
  if (deepest_ring > 1)
    ring = fmt::format("; the stage buffers {} slots deep take {} bytes a slot ({} bytes){}", deepest_ring, per_slot,
                       per_slot * deepest_ring,
                       shallower > 0 ? fmt::format(", the shallower ones {} bytes", shallower) : "");
  const std::string fits = fitting > 0 ? fmt::format(" ({} fit{})", fitting, fitting == 1 ? "s" : "") : "";
  // Fewer stages only where some count fits, and the count that does (a hunt followed "pipeline(2)
  // (or 3, 4)" into the same error, and "fewer stages: pipeline(1) here" had none to give).
  std::string fix = fitting > 0 ? "use smaller tiles"
                                : "no stage count fits, even one slot each: use smaller tiles (fewer columns of K per "
                                  "step, BK, or of the output, BN)";
  if (fitting > 0 && deepest && deepest->has_attr("pipeline") && fitting < deepest->int_attr("pipeline"))
    fix = fmt::format("use fewer stages: this loop's pipeline({}) as pipeline({}) fits, or use smaller tiles",
                      deepest->int_attr("pipeline"), fitting);
  else if (fitting > 0 && deepest && deepest->get(attr::stages) > 1)
    fix = fmt::format("this loop has no pipeline(S), and its schedule is {} stages deep: bound it with "
                      "pipeline({}), which fits, or use smaller tiles",
                      deepest->get(attr::stages), fitting);
  else if (fitting > 0)
    fix = fmt::format("use fewer stages{} or smaller tiles", fits);
  // At the loop whose ring overflows, which is where the fix is written.
  diagnostics_.error(deepest ? deepest->location() : kernel_.location(),
                     fmt::format("kernel @{} needs {} bytes of shared memory for its stage buffers and barriers{}; "
                                 "the {} budget is {} bytes ({} KiB): {}",
                                 kernel_name(kernel_), tc_.shared_bytes, ring, target_.name,
                                 target_.shared_memory_bytes, target_.shared_memory_bytes / 1024, fix));
  return false;
}

}  // namespace tilec::cuda::tensor_core
