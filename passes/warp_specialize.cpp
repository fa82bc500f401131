// passes/warp_specialize.cpp — the warp-specialize pass (DESIGN.md §1; docs/passes/warp_specialize.md).
//
// What: after insert-sync a kernel that fills stage buffers still runs as one agent, doing its
// own TMA loads and its own compute in program order. This pass gives the filling to a producer
// agent and everything else to a compute agent, per kernel:
//   1. Split point: after the last top-level grid_ids, mbarrier_create or stage_buffer. The ops
//      from there to the `return` (the split body) move into one `warp_specialize`; values
//      defined before it stay shared by both agents.
//   2. Roles: an op without regions that is not pure and not a plain global read (an op with a
//      result that only reads global memory) is an anchor. Producer anchors: the ops of
//      agent_of's producer (the TMA pipe), stage_write, mbarrier_arrive on a stage buffer's full
//      barrier and mbarrier_wait on its empty barrier, except for stage buffers whose slots are
//      registers (a value crossing the stages of a compute loop). Every other anchor is compute.
//   3. Each agent gets a clone of the split body without the other agent's anchors; a liveness
//      walk from its own anchors back through pure ops, loop-carried slots and if results keeps
//      what it needs (its backward slice); dead pure ops, dead carried values and loops or ifs
//      left with nothing to do are removed.
//   4. Checks: no kept op uses a value of an anchor that went to the other agent; every empty
//      barrier expects one arrival (one consumer agent). Named barriers keep their ids and get
//      the compute agent's thread count (only compute ops use them).
// Requires insert-sync. Keeps: what the kernel computes, SSA dominance, the order of the ops
// each agent keeps. Kernels without tma_load_async or a stage_write into shared memory are unchanged.
// Deterministic. Cost: O(n) per agent for cloning, liveness and the sweep (n = ops and values
// of the split body), plus O(n) per rebuilt loop or if for rewriting uses. A kernel that already
// holds a warp_specialize (IR written by hand) is left as it is.
#include "passes/warp_specialize.h"

#include <fmt/core.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "backend/target.h"
#include "ir/clone.h"
#include "ir/diagnostic.h"
#include "ir/ir.h"
#include "ir/program_order.h"
#include "passes/agent_of.h"
#include "passes/pass_manager.h"

namespace tilec {
namespace {

constexpr int64_t kProducerThreads = 128;  // one warpgroup (setmaxnreg is per warpgroup)
constexpr int64_t kWarpgroupThreads = 128;
// A warpgroup's MMA covers 64 accumulator rows (WGMMA m64); a 128-row accumulator in registers
// needs two compute warpgroups (128 f32 registers each for a 64x256 half, within the target's compute_registers).
constexpr int64_t kRowsPerWarpgroup = 64;
constexpr int64_t kMaxComputeWarpgroups = 2;

using ValueSet = std::unordered_set<const Value*>;
using Graveyard = std::vector<std::unique_ptr<Operation>>;

// A plain read of global memory (`load`, a `tma_load` left outside any pipe) has no effect but
// its result: like a pure op it is cloned into each agent that needs it and removed where unused.
// (tma_load_async has no result: it fills a stage buffer and is a producer anchor.)
bool is_plain_read(const Operation& op) {
  const OpInfo& info = op.info();
  return info.has(kReadsMemory) && !info.has(kWritesMemory) && op.num_results() > 0;
}

bool is_anchor(const Operation& op) {
  return op.num_regions() == 0 && !op.info().has(kPure) && !op.info().has(kTerminator) && !is_plain_read(op);
}

// The full and empty barriers of the kernel's stage buffers.
struct BarrierRoles {
  ValueSet full;
  ValueSet empty;
};

// A stage buffer whose slots live in registers carries a value between the stages of a
// software-pipelined loop on the compute side: its writes and barriers stay with compute.
bool in_registers(const Value* buffer) {
  const Type& type = buffer->type();
  return type.kind() == Type::Kind::pipe && type.payload().space() == MemorySpace::reg;
}

AgentRole role_of(const Operation& op, const BarrierRoles& barriers) {
  if (agent_of(op) == AgentRole::producer) return AgentRole::producer;
  if (op.kind() == OpKind::stage_write && !in_registers(op.operand(0))) return AgentRole::producer;
  if (op.kind() == OpKind::mbarrier_arrive && barriers.full.count(op.operand(0))) return AgentRole::producer;
  if (op.kind() == OpKind::mbarrier_wait && barriers.empty.count(op.operand(0))) return AgentRole::producer;
  return AgentRole::compute;
}

bool contains_anchor(const Operation& op) {
  if (is_anchor(op)) return true;
  for (size_t r = 0; r < op.num_regions(); ++r)
    for (const auto& inner : op.region(r).operations())
      if (contains_anchor(*inner)) return true;
  return false;
}

// Removes, at any depth, the anchors that belong to the agent other than `keep`; their results
// are recorded in `removed_results` (the ops stay alive in `graveyard` for the final check).
void remove_other_anchors(Region& region, AgentRole keep, const BarrierRoles& barriers,
                          ValueSet& removed_results, Graveyard& graveyard) {
  auto& ops = region.operations();
  for (size_t i = 0; i < ops.size();) {
    Operation& op = *ops[i];
    for (size_t r = 0; r < op.num_regions(); ++r)
      remove_other_anchors(op.region(r), keep, barriers, removed_results, graveyard);
    if (is_anchor(op) && role_of(op, barriers) != keep) {
      for (size_t k = 0; k < op.num_results(); ++k) removed_results.insert(op.result(k));
      graveyard.push_back(region.take(i));
      continue;
    }
    ++i;
  }
}

// Liveness of one agent's clone: values its anchors need, and the carried slots of its loops.
class Liveness {
 public:
  explicit Liveness(Region& agent_body) {
    walk(agent_body, [this](Operation& op) { inside_.insert(&op); });
    walk(agent_body, [this](Operation& op) {
      if (is_anchor(op)) {
        for (Value* operand : op.operands()) mark(operand);
      } else if (op.num_regions() > 0 && contains_anchor(op)) {
        mark_control(op);
      }
    });
    while (!worklist_.empty()) {
      const Value* value = worklist_.back();
      worklist_.pop_back();
      propagate(value);
    }
  }

  bool live(const Value* value) const { return live_.count(value) != 0; }
  bool slot_live(const Operation* loop, size_t slot) const { return live_slots_.count({loop, slot}) != 0; }

 private:
  struct SlotHash {
    size_t operator()(const std::pair<const Operation*, size_t>& key) const {
      return std::hash<const Operation*>()(key.first) ^ (key.second * 0x9e3779b97f4a7c15ull);
    }
  };

  void mark(const Value* value) {
    if (live_.insert(value).second) worklist_.push_back(value);
  }
  // The operands that decide whether and how often a loop or if runs.
  void mark_control(const Operation& op) {
    if (op.kind() == OpKind::for_)
      for (size_t i = 0; i < 3; ++i) mark(op.operand(i));
    else if (op.kind() == OpKind::if_)
      mark(op.operand(0));
  }
  void mark_slot(const Operation& loop, size_t slot) {
    if (!live_slots_.insert({&loop, slot}).second) return;
    mark_control(loop);
    mark(loop.operand(3 + slot));
    mark(loop.region().terminator()->operand(slot));
  }
  void propagate(const Value* value) {
    if (Operation* op = value->defining_op()) {
      if (!inside_.count(op)) return;  // shared: defined before the warp_specialize
      if (op->kind() == OpKind::for_) {
        mark_slot(*op, value->index());
      } else if (op->kind() == OpKind::if_) {
        mark_control(*op);
        for (size_t r = 0; r < op->num_regions(); ++r) mark(op->region(r).terminator()->operand(value->index()));
      } else {
        for (Value* operand : op->operands()) mark(operand);
      }
      return;
    }
    Operation* owner = value->owner_region()->parent_op();
    if (!owner || !inside_.count(owner) || owner->kind() != OpKind::for_) return;
    if (value->index() == 0) mark_control(*owner);
    else mark_slot(*owner, value->index() - 1);
  }

  std::unordered_set<const Operation*> inside_;
  ValueSet live_;
  std::vector<const Value*> worklist_;
  std::unordered_set<std::pair<const Operation*, size_t>, SlotHash> live_slots_;
};

// Replaces the for/if at `position` of `region` by a copy keeping only the results (and, for a
// loop, carried slots) in `keep`; its regions' ops move over. Uses under `root` are rewritten.
void rebuild_with_results(Region& region, size_t position, const std::vector<bool>& keep, Region& root,
                          Graveyard& graveyard) {
  Operation& old = *region.operations()[position];
  bool loop = old.kind() == OpKind::for_;
  auto fresh = std::make_unique<Operation>(old.kind(), old.location());
  for (const auto& [name, value] : old.attributes()) fresh->set_attr(name, value);
  size_t control = loop ? 3 : 1;
  for (size_t i = 0; i < control; ++i) fresh->add_operand(old.operand(i));
  for (size_t i = 0; i < keep.size(); ++i)
    if (keep[i] && loop) fresh->add_operand(old.operand(control + i));
  std::vector<std::pair<Value*, Value*>> renamed;
  for (size_t i = 0; i < keep.size(); ++i) {
    if (!keep[i]) continue;
    Value* result = fresh->add_result(old.result(i)->type());
    result->set_name_hint(old.result(i)->name_hint());
    renamed.push_back({old.result(i), result});
  }
  for (size_t r = 0; r < old.num_regions(); ++r) {
    Region& from = old.region(r);
    Region& to = fresh->add_region();
    std::vector<std::pair<Value*, Value*>> arguments;
    for (size_t a = 0; a < from.num_arguments(); ++a) {
      if (loop && a > 0 && !keep[a - 1]) continue;
      arguments.push_back({from.argument(a), to.add_argument(from.argument(a)->type(), from.argument(a)->name_hint())});
    }
    while (!from.empty()) to.append(from.take(0));
    for (auto [before, after] : arguments) replace_all_uses(to, before, after);
    Operation* yield = to.terminator();
    std::vector<Value*> yielded;
    for (size_t i = 0; i < keep.size(); ++i)
      if (keep[i]) yielded.push_back(yield->operand(i));
    yield->set_operands(std::move(yielded));
  }
  graveyard.push_back(region.take(position));
  region.insert(position, std::move(fresh));
  for (auto [before, after] : renamed) replace_all_uses(root, before, after);
}

// Removes what the liveness left dead, innermost first.
void sweep(Region& region, const Liveness& liveness, Region& root, Graveyard& graveyard) {
  auto& ops = region.operations();
  for (size_t i = ops.size(); i-- > 0;) {
    Operation& op = *ops[i];
    if (op.info().has(kTerminator) || is_anchor(op)) continue;
    if (op.num_regions() == 0) {
      bool used = false;
      for (size_t k = 0; k < op.num_results(); ++k) used = used || liveness.live(op.result(k));
      if (!used) graveyard.push_back(region.take(i));
      continue;
    }
    for (size_t r = 0; r < op.num_regions(); ++r) sweep(op.region(r), liveness, root, graveyard);
    std::vector<bool> keep(op.num_results());
    bool any = false, all = true;
    for (size_t k = 0; k < op.num_results(); ++k) {
      keep[k] = op.kind() == OpKind::for_ ? liveness.slot_live(&op, k) : liveness.live(op.result(k));
      any = any || keep[k];
      all = all && keep[k];
    }
    if (!any && !contains_anchor(op)) graveyard.push_back(region.take(i));
    else if (!all) rebuild_with_results(region, i, keep, root, graveyard);
  }
}

class KernelSplitter {
 public:
  // `tiles_walked`: persistent-tiles has run, so a tensor-core kernel's top-level loop is its walk
  // over tiles (one CTA per tile, or per SM), the user's loops inside it.
  KernelSplitter(Operation& kernel, const target::Target& target, DiagnosticEngine& diagnostics, bool tiles_walked)
      : kernel_(kernel), target_(target), diagnostics_(diagnostics), tiles_walked_(tiles_walked) {}

  bool run() {
    Region& body = kernel_.region();
    auto& ops = body.operations();
    size_t split = 0;
    for (size_t i = 0; i < ops.size(); ++i) {
      OpKind kind = ops[i]->kind();
      if (kind == OpKind::grid_ids || kind == OpKind::mbarrier_create || kind == OpKind::stage_buffer) split = i + 1;
    }
    size_t end = ops.empty() ? 0 : ops.size() - 1;  // the return stays last
    // Work to give a producer, in a kernel not already specialized (IR written by hand).
    bool producer_work = false, specialized_already = false;
    for (size_t i = split; i < end; ++i)
      walk_op(*ops[i], [&](Operation& op) {
        producer_work = producer_work || op.kind() == OpKind::tma_load_async ||
                        (op.kind() == OpKind::stage_write && !in_registers(op.operand(0)));
        specialized_already = specialized_already || op.kind() == OpKind::warp_specialize;
      });
    if (!producer_work || specialized_already) return true;
    if (!check_reads_ahead_of_stores(body, split, end)) return false;

    BarrierRoles barriers;
    bool creation_inside = false;
    for (size_t i = 0; i < ops.size(); ++i)
      walk_op(*ops[i], [&](Operation& op) {
        if (op.kind() == OpKind::stage_buffer && !in_registers(op.result(0))) {
          barriers.full.insert(op.operand(0));
          barriers.empty.insert(op.operand(1));
        }
        if ((op.kind() == OpKind::stage_buffer || op.kind() == OpKind::mbarrier_create) && i >= split) creation_inside = true;
      });
    if (creation_inside)
      return internal_error(ops[split]->location(), "an mbarrier_create or stage_buffer lies inside the split body");
    if (!check_arrivals(barriers)) return false;

    compute_threads_ = kWarpgroupThreads * compute_warpgroups(body, split, end);
    Location location = ops[split]->location();
    auto specialized = std::make_unique<Operation>(OpKind::warp_specialize, location);
    Region& agents = specialized->add_region();
    for (AgentRole role : {AgentRole::producer, AgentRole::compute}) {
      auto agent = build_agent(body, split, end, role, barriers, location);
      if (!agent) return false;
      agents.append(std::move(agent));
    }
    agents.append(std::make_unique<Operation>(OpKind::yield, location));
    for (size_t i = end; i-- > split;) graveyard_.push_back(body.take(i));
    body.insert(split, std::move(specialized));
    return true;
  }

 private:
  static void walk_op(Operation& op, const std::function<void(Operation&)>& visit) {
    visit(op);
    for (size_t r = 0; r < op.num_regions(); ++r) walk(op.region(r), visit);
  }

  bool internal_error(Location location, const std::string& what) {
    diagnostics_.error(location, fmt::format("internal error: warp-specialize: kernel @{}: {}", kernel_name(kernel_), what));
    return false;
  }

  // The producer's loads (its TMA loads, and the loads its stage writes copy) run ahead of the
  // compute agent, as far as the stages allow, with nothing ordering them after the compute
  // agent's stores. A load of a tensor the kernel stores into would not see a store that comes
  // before it: one earlier in the body, or one later in a loop around both (the next iteration's
  // load). Refused, by name (found by a helper writing chunked linear attention with its state
  // in a tensor). The loop over tiles does not count, a persistent grid's included (an in-place
  // kernel reading and writing its own tile): two tiles that read and write one element race,
  // which the interpreter reports.
  bool check_reads_ahead_of_stores(Region& body, size_t split, size_t end) {
    const Region* tile_walk = nullptr;  // the kernel body, when its tiles are walked in a loop
    for (const auto& op : body.operations())
      if (op->kind() == OpKind::grid_ids &&
          (op->has_attr("per_tile") || (tiles_walked_ && op->string_attr("schedule") == "tiles")))
        tile_walk = &body;
    std::vector<const Operation*> reads, stores;
    for (size_t i = split; i < end; ++i)
      walk_op(*body.operations()[i], [&](Operation& op) {
        auto access = tensor_access(op);
        if (access && access->writes) stores.push_back(&op);
        if (access && access->reads && agent_of(op) == AgentRole::producer) reads.push_back(&op);
        if (op.kind() == OpKind::stage_write && !in_registers(op.operand(0)))
          if (const Operation* copied = op.operand(2)->defining_op(); copied && is_plain_read(*copied))
            reads.push_back(copied);
      });
    const ProgramOrder order(body, tile_walk);
    for (const Operation* read : reads) {
      const Value* tensor = tensor_access(*read)->tensor;
      for (const Operation* store : stores) {
        if (tensor_access(*store)->tensor != tensor) continue;
        const ProgramOrder::Before before = order.runs_before(*store, *read);
        if (!before) continue;
        const std::string where =
            before.earlier ? fmt::format("the store into it at line {}", store->location().line)
                           : fmt::format("the store into it at line {} in an earlier iteration of the loop at line {}",
                                         store->location().line, before.loop->location().line);
        diagnostics_.error(read->location(),
                           fmt::format("kernel @{}: this load of {} is issued by the TMA producer warp, which runs "
                                       "ahead of the compute warps, so it would not see {}; a tensor-core kernel "
                                       "cannot read back what it stores: carry the value in a variable, or store "
                                       "it in one kernel and read it in the next",
                                       kernel_name(kernel_), describe_tensor(tensor), where));
        return false;
      }
    }
    return true;
  }


  static std::string describe_tensor(const Value* tensor) {
    return tensor->name_hint().empty() ? std::string("a tensor") : tensor->name_hint();
  }

  // One producer and one consumer agent: every full barrier (the producer's one arrival with its
  // transaction bytes) and every empty one (the consumer's release) must expect exactly one
  // arrival per phase. insert-sync writes 1; edited IR text may not, and a barrier expecting two
  // never completes a phase (the kernel deadlocks on the GPU).
  bool check_arrivals(const BarrierRoles& barriers) {
    for (const auto& [set, kind, agent] : {std::tuple{&barriers.full, "full", "producer agent arrives once, with "
                                                                              "its transaction bytes"},
                                           std::tuple{&barriers.empty, "empty", "consumer agent arrives once"}})
      for (const Value* barrier : *set) {
        const Operation* create = barrier->defining_op();
        if (!create || create->kind() != OpKind::mbarrier_create) continue;
        if (create->int_attr("arrivals") != 1) {
          diagnostics_.error(create->location(),
                             fmt::format("kernel @{}: the {} mbarrier %{} expects {} arrivals per phase, but its one {} "
                                         "(give it arrivals = 1, as insert-sync does)",
                                         kernel_name(kernel_), kind, barrier->name_hint(), create->int_attr("arrivals"),
                                         agent));
          return false;
        }
      }
    return true;
  }

  std::unique_ptr<Operation> build_agent(Region& body, size_t split, size_t end, AgentRole role,
                                         const BarrierRoles& barriers, Location location) {
    bool producer = role == AgentRole::producer;
    auto agent = std::make_unique<Operation>(OpKind::agent, location);
    agent->set_attr("name", std::string(to_string(role)));
    agent->set_attr("threads", producer ? kProducerThreads : compute_threads_);
    agent->set_attr("registers", producer ? target_.producer_registers : target_.compute_registers);
    Region& slice = agent->add_region();
    ValueMapping mapping;
    for (size_t i = split; i < end; ++i) slice.append(clone_operation(*body.operations()[i], mapping));
    slice.append(std::make_unique<Operation>(OpKind::yield, location));

    ValueSet removed;
    remove_other_anchors(slice, role, barriers, removed, graveyard_);
    Liveness liveness(slice);
    sweep(slice, liveness, slice, graveyard_);

    std::string crossing;
    walk(slice, [&](Operation& op) {
      if (op.kind() == OpKind::named_barrier_sync || op.kind() == OpKind::named_barrier_arrive)
        op.set_attr("threads", compute_threads_);
      for (Value* operand : op.operands())
        if (crossing.empty() && removed.count(operand))
          crossing = fmt::format("'{}' at {}:{} on the {} agent uses a value defined on the other agent",
                                 op.name(), op.location().line, op.location().column, to_string(role));
    });
    if (!crossing.empty()) {
      internal_error(location, crossing);
      return nullptr;
    }
    return agent;
  }

  // Warpgroups of the compute agent: enough for the tallest mma accumulator, 64 rows each, at
  // most two; one when the body has no mma.
  static int64_t compute_warpgroups(Region& body, size_t split, size_t end) {
    int64_t rows = kRowsPerWarpgroup;
    for (size_t i = split; i < end; ++i)
      walk_op(*body.operations()[i], [&](Operation& op) {
        if (op.kind() == OpKind::mma && op.result()->type().is_tile() && op.result()->type().rank() == 2)
          rows = std::max(rows, op.result()->type().shape()[0]);
      });
    return std::min(kMaxComputeWarpgroups, (rows + kRowsPerWarpgroup - 1) / kRowsPerWarpgroup);
  }

  Operation& kernel_;
  const target::Target& target_;
  DiagnosticEngine& diagnostics_;
  Graveyard graveyard_;
  int64_t compute_threads_ = kWarpgroupThreads;
  bool tiles_walked_ = false;
};

}  // namespace

bool warp_specialize(Module& module, PassContext& ctx) {
  const std::vector<std::string> ran = passes_run(module);
  const bool tiles_walked = std::find(ran.begin(), ran.end(), "persistent-tiles") != ran.end();
  for (auto& kernel : module.kernels())
    if (!KernelSplitter(*kernel, ctx.target, ctx.diagnostics, tiles_walked).run()) return false;
  return true;
}

}  // namespace tilec
