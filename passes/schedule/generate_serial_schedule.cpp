// passes/schedule/generate_serial_schedule.cpp — the serial generator: one greedy walk, no
// overlap between iterations, every op in stage 0.
//
// Phases:
//   1. Kahn walk over distance-0 edges; the ready op with the lowest index goes first, so the
//      output is the same on every build.
//   2. Issue each op in walk order at the earliest cycle that is (a) no earlier than the op
//      issued before it, (b) after every distance-0 predecessor's latency, and (c) free in a
//      linear (non-modulo) reservation table.
//   3. ii = the smallest value ≥ last cycle + 1 that satisfies every loop-carried edge and
//      every resource modulo ii. At ii ≥ the end of the last reservation nothing wraps, so the
//      search ends.
//   4. Constraints: with every op in stage 0 a group always shares one stage and max_depth ≥ 0
//      always holds; the check still runs and reports any constraint the schedule breaks as
//      a warning — the serial path never drops a constraint silently (unlike the seed's).
// Cost: O((V + E) log V + Σ reservation cycles + ii search · (E + Σ uses)); a conflicting start
// skips past the cell one use alone overfills, and the ii search starts at ResMII.
#include "passes/schedule/generate_serial_schedule.h"

#include <fmt/core.h>

#include <algorithm>
#include <map>

namespace tilec::schedule {
namespace {

// Linear reservation table: cycle → units held per resource, grown on demand.
struct LinearTable {
  const LoopGraph& graph;
  std::vector<std::vector<int>> held;  // [resource][cycle]

  explicit LinearTable(const LoopGraph& graph) : graph(graph), held(graph.resources.size()) {}

  // The earliest cycle after `cycle` that can fit `op`, where one of its uses alone finds a cell
  // over capacity at `cycle` (every start before it keeps that use on that cell); `cycle` itself
  // when no single use conflicts. Skipping so, a reservation of N cycles behind another of N is
  // found in O(N), not O(N²) (a learner's 2 x 8192-cycle lab input took 5 s; 65536 minutes).
  int skip_conflicts(int op, int cycle) const {
    for (const ResourceUse& use : graph.ops[op].uses) {
      const auto& row = held[use.resource];
      const int capacity = graph.resources[use.resource].capacity;
      for (int k = 0; k < use.duration; ++k) {
        const int at = cycle + use.at + k;
        if (at >= static_cast<int>(row.size())) break;
        if (row[at] + use.occupancy > capacity) return at - use.at + 1;
      }
    }
    return cycle;
  }
  bool fits(int op, int cycle) const {
    std::map<std::pair<int, int>, int> wanted;  // (resource, cycle) → units, own uses summed
    for (const ResourceUse& use : graph.ops[op].uses)
      for (int k = 0; k < use.duration; ++k) wanted[{use.resource, cycle + use.at + k}] += use.occupancy;
    for (auto [cell, units] : wanted) {
      const auto& row = held[cell.first];
      int already = cell.second < static_cast<int>(row.size()) ? row[cell.second] : 0;
      if (already + units > graph.resources[cell.first].capacity) return false;
    }
    return true;
  }
  void reserve(int op, int cycle) {
    for (const ResourceUse& use : graph.ops[op].uses)
      for (int k = 0; k < use.duration; ++k) {
        auto& row = held[use.resource];
        int at = cycle + use.at + k;
        if (at >= static_cast<int>(row.size())) row.resize(at + 1, 0);
        row[at] += use.occupancy;
      }
  }
};

bool resources_fit_modulo(const LoopGraph& graph, const std::vector<OpPlacement>& ops, int ii) {
  std::vector<long> held(graph.resources.size() * static_cast<size_t>(ii), 0);
  for (int op = 0; op < graph.op_count(); ++op)
    for (const ResourceUse& use : graph.ops[op].uses)
      for (int k = 0; k < use.duration; ++k) {
        size_t cell = static_cast<size_t>(use.resource) * ii + (ops[op].cycle + use.at + k) % ii;
        held[cell] += use.occupancy;
        if (held[cell] > graph.resources[use.resource].capacity) return false;
      }
  return true;
}

}  // namespace

void generate_serial_schedule(const LoopGraph& graph, const LoopGraphIndex& index,
                              ScheduleResult& result) {
  int count = graph.op_count();
  result.generator = Generator::serial;
  result.strategy = "serial";
  result.ops.assign(count, {});
  std::vector<int> ready_at(count, 0);
  LinearTable table(graph);
  int previous = 0;
  int last_cycle = 0;
  for (int op : index.topological_order) {
    int cycle = std::max(previous, ready_at[op]);
    for (int skipped = table.skip_conflicts(op, cycle); skipped != cycle; skipped = table.skip_conflicts(op, cycle))
      cycle = skipped;
    while (!table.fits(op, cycle)) ++cycle;  // own uses that overlap on one resource
    table.reserve(op, cycle);
    result.ops[op].cycle = cycle;
    ++result.placements;
    previous = cycle;
    last_cycle = std::max(last_cycle, cycle);
    for (int edge_id : index.successors[op]) {
      const LoopEdge& edge = graph.edges[edge_id];
      if (edge.distance == 0) ready_at[edge.to] = std::max(ready_at[edge.to], cycle + edge.latency);
    }
  }

  // No ii below the busiest resource's units per iteration fits: start the modulo search there.
  std::vector<long> demand(graph.resources.size(), 0);
  for (const LoopOp& op : graph.ops)
    for (const ResourceUse& use : op.uses) demand[use.resource] += static_cast<long>(use.duration) * use.occupancy;
  long ii = std::max(last_cycle + 1, 1);
  for (size_t r = 0; r < demand.size(); ++r)
    ii = std::max(ii, (demand[r] + graph.resources[r].capacity - 1) / std::max(1, graph.resources[r].capacity));
  for (const LoopEdge& edge : graph.edges) {
    if (edge.distance == 0) continue;
    long gap = static_cast<long>(result.ops[edge.to].cycle) - result.ops[edge.from].cycle;
    long shortfall = edge.latency - gap;  // needs ii·distance ≥ shortfall
    if (shortfall > 0) ii = std::max(ii, (shortfall + edge.distance - 1) / edge.distance);
  }
  while (!resources_fit_modulo(graph, result.ops, static_cast<int>(ii))) ++ii;
  result.ii = static_cast<int>(ii);
  assign_stages_and_orders(result);

  for (int op = 0; op < count; ++op)
    if (index.max_stage[op] >= 0 && result.ops[op].stage > index.max_stage[op])
      result.warnings.push_back(fmt::format(
          "serial schedule: op '{}' is in stage {}, beyond its max depth {}", graph.ops[op].name,
          result.ops[op].stage, index.max_stage[op]));
  for (const std::vector<int>& members : index.group_members)
    for (int member : members)
      if (result.ops[member].stage != result.ops[members.front()].stage)
        result.warnings.push_back(fmt::format(
            "serial schedule: ops '{}' and '{}' share a group but sit in different stages",
            graph.ops[members.front()].name, graph.ops[member].name));
}

}  // namespace tilec::schedule
