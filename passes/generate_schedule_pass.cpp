// passes/generate_schedule_pass.cpp — the generate-schedule pass (IR side of the engine).
//
// What: schedules every `for` loop body with the modulo-scheduling engine and publishes the
// result in the IR for reorder-events and materialize-schedule (docs/passes/generate_schedule.md):
//   body ops: stage, order (rank within the stage by cycle, then position), cycle;
//   the loop: ii, stages, generator ("serial" | "cost-based").
// Straight-line regions (kernel body, `if` branches): stage 0, order = position; no ii.
// Phases, per loop, innermost first (a nested loop or `if` is one node of its parent's graph):
//   1. Nodes: each body op with the footprint build-resources published (latency, resources;
//      slot capacities from the target's machine model). A nested loop/if has none.
//   2. Edges: SSA def-use inside the body (latency of the producer; uses inside a nested
//      region count), loop-carried edges from a yield operand's producer to the users of the
//      matching region argument (distance 1), and memory edges between ops that touch the same
//      tensor with at least one store: i → j (distance 0) and j → i (distance 1), latency of
//      the source; a store also depends on itself across iterations.
//   3. Constraints: gid / resolved `group`, max_depth; force_serial_execution on the loop or
//      a body op → serial (a forced cost-based generator overrides it, with a warning).
//   4. Generate with ctx.generator (auto | serial | cost-based). Only a loop whose body (nested
//      regions included) holds an `mma`, and whose TMA coordinates come from no data a plain
//      load in the body read, is software-pipelined: any other loop gets max_stages
//      = 1, and under auto the serial generator, so it runs its iterations one after another
//      (the plain CUDA backend emits no stage buffers or mbarriers; a `pipeline = S` on it
//      above 1 is ignored with a note). On an mma loop `pipeline = S` is the user's stage
//      budget: fewer stages are kept with a note; more → regenerate with max_stages = S (the
//      engine raises ii until the schedule fits), and when even that does not fit, keep the
//      first schedule and warn at the loop. Without `pipeline = S` the budget is
//      kStagesWithoutPipeline (4), silently.
//   Then a transpose that costs nothing moves to its first user's cycle (and stage): the
//   tensor-core backend reads a transposed register tile where an mma reads it
//   (keep_free_transposes_with_their_users).
//   5. Validate with the engine's validator (failure: internal error, exit 2); engine warnings
//      (constraints the serial generator cannot honour) become warnings at the op they name.
// Invariants: never moves ops or changes what a kernel computes; terminators get no schedule.
// Cost: the engine's, per loop, plus O(body²) for the memory edges.
#include "passes/generate_schedule_pass.h"

#include <fmt/core.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>

#include "backend/machine_model.h"
#include "backend/target.h"
#include "ir/ir.h"
#include "passes/pass_manager.h"
#include "passes/schedule/generate_schedule.h"

namespace tilec {

namespace {

// The stages an mma loop without pipeline(S) may take (the flagship GEMM's pipeline(4)).
constexpr int kStagesWithoutPipeline = 4;

namespace sched = schedule;

struct Scheduler {
  PassContext& ctx;
  const target::MachineModel& model;
  sched::Generator generator;
};

// Tensors an op (and everything nested in it) reads and writes.
struct MemoryAccess {
  std::set<const Value*> reads, writes;
};

void collect_access(const Operation& op, MemoryAccess& access) {
  if (auto tensor = tensor_access(op)) {
    if (tensor->reads) access.reads.insert(tensor->tensor);
    if (tensor->writes) access.writes.insert(tensor->tensor);
  }
  for (size_t r = 0; r < op.num_regions(); ++r)
    for (const auto& inner : op.region(r).operations()) collect_access(*inner, access);
}

// Every value `op` uses, its nested regions included.
void collect_uses(const Operation& op, std::set<const Value*>& uses) {
  for (const Value* v : op.operands()) uses.insert(v);
  for (size_t r = 0; r < op.num_regions(); ++r)
    for (const auto& inner : op.region(r).operations()) collect_uses(*inner, uses);
}

bool intersects(const std::set<const Value*>& a, const std::set<const Value*>& b) {
  for (const Value* v : a)
    if (b.count(v)) return true;
  return false;
}

std::string where(Location location) { return fmt::format("{}:{}", location.line, location.column); }

// A footprint the IR gives (build-resources' attributes, or a resumed .tir's edits of them) that
// the machine model or the scheduler cannot take: reported at `location` as an input error.
struct FootprintError : std::runtime_error {
  FootprintError(Location at, const std::string& message) : std::runtime_error(message), location(at) {}
  Location location;
};

int attr_or(const Operation& op, const std::string& name, int fallback) {
  return static_cast<int>(op.int_attr(name, fallback));
}

// Phase 1: one graph node per body op from its published footprint.
sched::LoopOp make_node(const Operation& op, std::string name, sched::LoopGraph& graph, const Scheduler& s) {
  sched::LoopOp node;
  node.name = std::move(name);
  node.latency = static_cast<int>(op.get(attr::latency, 0));
  if (std::string kind = op.get(attr::resource_kind); !kind.empty()) {
    node.kind = kind;
    const target::OpFootprint* footprint = s.model.find_footprint(node.kind);
    node.async = footprint && footprint->async;
  }
  if (const Attribute* resources = op.get(attr::resources); resources && resources->is_array()) {
    for (const Attribute& use : resources->as_array()) {
      const auto& fields = use.as_array();
      const std::string& slot_name = fields.at(0).as_string();
      const target::Slot* slot = s.model.find_slot(slot_name);
      if (!slot)
        throw FootprintError(op.location(), fmt::format("'{}' uses the slot '{}', which the {} machine model does "
                                                        "not have (its attribute 'resources')",
                                                        op.name(), slot_name, s.model.target));
      int resource = -1;
      for (size_t r = 0; r < graph.resources.size(); ++r)
        if (graph.resources[r].name == slot_name) resource = static_cast<int>(r);
      if (resource < 0) resource = graph.add_resource(slot_name, slot->capacity);
      node.uses.push_back({resource, static_cast<int>(fields.at(1).as_int()), static_cast<int>(fields.at(2).as_int()),
                           static_cast<int>(fields.at(3).as_int())});
    }
  }
  const Attribute* gid = op.attr("tileas.schedule.constraint.gid");
  if (gid && gid->is_int()) {
    node.constraints.group = static_cast<int>(gid->as_int());
    int root = static_cast<int>(op.get(attr::group, node.constraints.group));
    if (root != node.constraints.group) node.constraints.leader_group = root;
  }
  node.constraints.max_depth = attr_or(op, "tileas.schedule.constraint.max_depth", -1);
  return node;
}

const std::string kForceSerial = "tileas.schedule.constraint.force_serial_execution";

// Whether a TMA load's coordinates in `body` come from data a plain load in the body read (an
// expert or page index through item()). The TMA producer agent computes such a coordinate
// itself, in the stage of its TMA load: a schedule that put the plain load stages earlier would
// carry it to the producer in registers only the compute agent has.
bool coordinates_from_loaded_data(const Region& body) {
  std::set<const Operation*> seen;
  std::function<bool(const Value*)> from_load = [&](const Value* value) {
    const Operation* def = value->defining_op();
    if (!def || def->parent_region() != &body || !seen.insert(def).second) return false;
    if (def->kind() == OpKind::load) return true;
    for (const Value* operand : def->operands())
      if (from_load(operand)) return true;
    return false;
  };
  for (const auto& op : body.operations()) {
    if (op->kind() != OpKind::tma_load) continue;
    for (size_t i = 1; i < op->num_operands(); ++i)
      if (from_load(op->operand(i))) return true;
  }
  return false;
}

// A transpose that costs nothing (no latency, no resources: the tensor-core backend stages the
// tile it transposes where each mma reads it as A, mma(transpose(ds_t), k, dq)) moves to the
// cycle of its first user, so it shares that user's stage. Published a stage earlier, its
// transposed value would cross stages in registers, which no thread layout holds; its operand
// crosses instead. Its edges stay kept (its users' latency from it is 0). A transpose in a
// `group`, or read inside a nested region, stays.
void keep_free_transposes_with_their_users(const std::vector<Operation*>& ops, const sched::LoopGraph& graph,
                                           sched::ScheduleResult& result) {
  bool moved = false;
  for (size_t i = 0; i < ops.size(); ++i) {
    const Operation& op = *ops[i];
    if (op.kind() != OpKind::transpose || graph.ops[i].latency != 0 || !graph.ops[i].uses.empty() ||
        graph.ops[i].constraints.group >= 0)
      continue;
    int first = -1;
    bool nested = false;
    for (size_t j = i + 1; j < ops.size(); ++j) {
      const auto& operands = ops[j]->operands();
      if (std::find(operands.begin(), operands.end(), op.result()) != operands.end()) {
        if (first < 0 || result.ops[j].cycle < first) first = result.ops[j].cycle;
      } else {
        std::set<const Value*> inner;
        collect_uses(*ops[j], inner);
        nested = nested || inner.count(op.result()) != 0;
      }
    }
    if (first < 0 || nested || first == result.ops[i].cycle) continue;
    result.ops[i].cycle = first;
    moved = true;
  }
  if (moved) sched::assign_stages_and_orders(result);
}

void schedule_loop(Operation& loop, Scheduler& s) {
  Region& body = loop.region();
  std::vector<Operation*> ops;
  for (auto& op : body.operations())
    if (!op->info().has(kTerminator)) ops.push_back(op.get());

  // Phase 1: nodes, each named "<op>@line:col" (made unique) so warnings find their op.
  sched::LoopGraph graph;
  std::map<std::string, Operation*> by_name;
  std::map<const Value*, int> producer;
  for (size_t i = 0; i < ops.size(); ++i) {
    std::string name = fmt::format("{}@{}", ops[i]->name(), where(ops[i]->location()));
    if (by_name.count(name)) name += fmt::format("#{}", i);
    by_name[name] = ops[i];
    graph.add_op(make_node(*ops[i], name, graph, s));
    for (size_t r = 0; r < ops[i]->num_results(); ++r) producer[ops[i]->result(r)] = static_cast<int>(i);
  }

  // Phase 2: edges.
  std::vector<MemoryAccess> access(ops.size());
  for (size_t j = 0; j < ops.size(); ++j) {
    collect_access(*ops[j], access[j]);
    std::set<const Value*> uses;
    collect_uses(*ops[j], uses);
    for (const Value* v : uses) {
      if (auto it = producer.find(v); it != producer.end() && it->second != static_cast<int>(j))
        graph.add_edge(it->second, static_cast<int>(j), graph.ops[it->second].latency, 0);
      // Loop-carried: region argument k+1 receives yield operand k of the previous iteration.
      if (v->owner_region() == &body && v->index() > 0) {
        Operation* yield = body.terminator();
        if (!yield || v->index() - 1 >= yield->num_operands()) continue;
        if (auto it = producer.find(yield->operand(v->index() - 1)); it != producer.end())
          graph.add_edge(it->second, static_cast<int>(j), graph.ops[it->second].latency, 1);
      }
    }
  }
  for (size_t i = 0; i < ops.size(); ++i) {
    if (!access[i].writes.empty()) graph.add_edge(static_cast<int>(i), static_cast<int>(i), graph.ops[i].latency, 1);
    for (size_t j = i + 1; j < ops.size(); ++j) {
      bool conflict = intersects(access[i].writes, access[j].reads) || intersects(access[i].writes, access[j].writes) ||
                      intersects(access[i].reads, access[j].writes);
      if (!conflict) continue;
      graph.add_edge(static_cast<int>(i), static_cast<int>(j), graph.ops[i].latency, 0);
      graph.add_edge(static_cast<int>(j), static_cast<int>(i), graph.ops[j].latency, 1);
    }
  }

  // Phase 3: loop constraints.
  graph.force_serial = loop.has_attr(kForceSerial);
  for (Operation* op : ops) graph.force_serial |= op->has_attr(kForceSerial);

  // Phase 4: generate. A loop without mma keeps one stage (the serial generator under auto,
  // max_stages = 1 for a forced cost-based one); an mma loop honours pipeline(S) when the
  // schedule is deeper.
  sched::ScheduleOptions options;
  options.generator = s.generator;
  // Only mma loops are worth overlapping; the others are the plain CUDA backend's (registers and
  // global memory, no stage buffers).
  // A loop whose TMA coordinates come from loaded data keeps one stage too: the TMA ring between
  // the producer and the compute agent (pipeline(S) slots) still overlaps its loads with its mmas.
  const bool has_mma = contains(body, OpKind::mma);
  const bool loaded_coordinates = has_mma && coordinates_from_loaded_data(body);
  bool pipelined = has_mma && !loaded_coordinates;
  int requested = attr_or(loop, "pipeline", 0);
  if (!pipelined) {
    graph.max_stages = 1;
    if (options.generator == sched::Generator::automatic) options.generator = sched::Generator::serial;
    if (requested > 1 && !loaded_coordinates)
      s.ctx.diagnostics.note(loop.location(),
                             fmt::format("pipeline({}) has no effect on a loop without mma: only loops with mma are "
                                         "software-pipelined; this one keeps one stage and runs its iterations "
                                         "one after another", requested));
    requested = 0;
  }
  if (graph.ops.empty()) {
    loop.set(attr::ii, 1);
    loop.set(attr::stages, 1);
    loop.set(attr::generator, "serial");
    return;
  }
  if (!sched::check_loop_graph(graph).empty())
    throw FootprintError(loop.location(), fmt::format("the latencies and resources of this loop's ops (their "
                                                      "attributes 'latency' and 'resources') cannot be scheduled: {}",
                                                      sched::check_loop_graph(graph).front()));
  if (graph.force_serial && s.generator == sched::Generator::cost_based)
    s.ctx.diagnostics.warning(loop.location(), "@serial on this loop (force_serial_execution) is "
                                               "overridden by --generator cost-based");
  sched::ScheduleResult result = sched::generate_schedule(graph, options);
  const sched::LoopGraph* scheduled_graph = &graph;
  sched::LoopGraph bounded = graph;
  // An mma loop without pipeline(S) is bounded at kStagesWithoutPipeline: a deeper schedule (an
  // atomic store's latency gave one 33 stages) would take a stage buffer per stage and overflow
  // shared memory, in a loop whose author asked for nothing.
  const int bound = requested > 0 ? requested : pipelined ? kStagesWithoutPipeline : 0;
  if (result.ok() && bound > 0 && result.stages > bound) {
    bounded.max_stages = bound;
    sched::ScheduleResult retry = sched::generate_schedule(bounded, options);
    // The serial schedule (one stage, the cost-based ii ladder's upper end) fits any budget: the
    // fallback when the bounded search does not (pipeline(1) kept 17 stages and ran out of
    // shared memory).
    sched::ScheduleOptions serial = options;
    serial.generator = sched::Generator::serial;
    if (retry.ok() && retry.stages <= bound && retry.warnings.empty()) {
      result = std::move(retry);
      scheduled_graph = &bounded;
    } else if (sched::ScheduleResult fallback = sched::generate_schedule(bounded, serial);
               fallback.ok() && fallback.stages <= bound) {
      result = std::move(fallback);
      scheduled_graph = &bounded;
    } else if (requested > 0) {
      s.ctx.diagnostics.warning(loop.location(),
                                fmt::format("pipeline({}) asks for at most {} stages, but the schedule needs {}; "
                                            "keeping {} stages", requested, requested, result.stages, result.stages));
    }
  }
  // A schedule with fewer stages than `pipeline = S` is kept without a note: the pipelining the
  // user asked for still happens, as an S-slot ring between the TMA producer and the compute
  // agent (materialize-schedule sizes each pipe by max(stages, pipeline)).
  if (!result.ok())
    throw std::logic_error(fmt::format("generate-schedule: the engine rejected the loop at {}: {}",
                                       where(loop.location()), result.errors.front()));

  keep_free_transposes_with_their_users(ops, *scheduled_graph, result);

  // Phase 5: validate, report, publish.
  bool constraints_kept = result.generator == sched::Generator::cost_based && result.warnings.empty();
  auto problems = sched::validate_schedule(*scheduled_graph, result, constraints_kept);
  if (!problems.empty())
    throw std::logic_error(fmt::format("generate-schedule: invalid schedule for the loop at {}: {}",
                                       where(loop.location()), problems.front()));
  for (const std::string& warning : result.warnings) {
    Location location = loop.location();
    size_t open = warning.find('\'');
    size_t close = open == std::string::npos ? open : warning.find('\'', open + 1);
    if (close != std::string::npos)
      if (auto it = by_name.find(warning.substr(open + 1, close - open - 1)); it != by_name.end())
        location = it->second->location();
    s.ctx.diagnostics.warning(location, warning);
  }
  for (size_t i = 0; i < ops.size(); ++i) {
    ops[i]->set(attr::stage, result.ops[i].stage);
    ops[i]->set(attr::order, result.ops[i].order);
    ops[i]->set(attr::cycle, result.ops[i].cycle);
  }
  loop.set(attr::ii, result.ii);
  loop.set(attr::stages, result.stages);
  loop.set(attr::generator, std::string(sched::generator_name(result.generator)));
}

// Innermost loops first: a region's nested loops are scheduled before the region itself.
void schedule_region(Region& region, bool loop_body, Scheduler& s) {
  int position = 0;
  for (auto& op : region.operations()) {
    for (size_t r = 0; r < op->num_regions(); ++r) schedule_region(op->region(r), op->kind() == OpKind::for_, s);
    if (op->kind() == OpKind::for_) schedule_loop(*op, s);
    if (!loop_body && !op->info().has(kTerminator)) {
      op->set(attr::stage, 0);
      op->set(attr::order, position);
      op->remove(attr::cycle);
    }
    ++position;
  }
}

}  // namespace

bool generate_schedule_pass(Module& module, PassContext& ctx) {
  sched::Generator generator;
  if (ctx.generator == "auto") generator = sched::Generator::automatic;
  else if (ctx.generator == "serial") generator = sched::Generator::serial;
  else if (ctx.generator == "cost-based") generator = sched::Generator::cost_based;
  else {
    ctx.diagnostics.error({}, fmt::format("unknown generator '{}': expected auto, serial or cost-based", ctx.generator));
    return false;
  }
  Scheduler s{ctx, ctx.target.machine_model, generator};
  try {
    for (auto& kernel : module.kernels()) schedule_region(kernel->region(), false, s);
  } catch (const FootprintError& error) {
    ctx.diagnostics.error(error.location, error.what());
    return false;
  }
  return true;
}

}  // namespace tilec
