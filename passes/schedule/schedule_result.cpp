// passes/schedule/schedule_result.cpp — stage/order assignment and the schedule validator.
//
// Validator invariants, in the order they are checked:
//   1. one placement per op, ii ≥ 1;
//   2. every edge: cycle(to) − cycle(from) ≥ latency − ii·distance;
//   3. every resource, every row r in [0, ii): the units held at cycles ≡ r (mod ii) are at
//      most the capacity (a use longer than ii wraps onto itself and counts each time);
//   4. stage = floor(cycle / ii), the lowest stage is 0, stages = highest stage + 1, and order
//      is the rank within the stage by (cycle, op index);
//   5. (optional) all ops of a group share one stage; every op's stage ≤ its max_depth.
// Cost O(V + E + Σ use durations + resources·ii).
#include "passes/schedule/schedule_result.h"

#include <fmt/core.h>

#include <algorithm>
#include <limits>

namespace tilec::schedule {

const char* generator_name(Generator generator) {
  switch (generator) {
    case Generator::automatic: return "auto";
    case Generator::serial: return "serial";
    case Generator::cost_based: return "cost-based";
  }
  return "?";
}

namespace {

int floor_div(int value, int divisor) {
  int quotient = value / divisor;
  return (value % divisor != 0 && value < 0) ? quotient - 1 : quotient;
}

}  // namespace

void assign_stages_and_orders(ScheduleResult& result) {
  if (result.ops.empty() || result.ii < 1) {
    result.stages = result.ops.empty() ? 0 : 1;
    return;
  }
  int lowest = std::numeric_limits<int>::max();
  for (const OpPlacement& op : result.ops) lowest = std::min(lowest, op.cycle);
  int shift = floor_div(lowest, result.ii) * result.ii;
  int highest_stage = 0;
  for (OpPlacement& op : result.ops) {
    op.cycle -= shift;
    op.stage = op.cycle / result.ii;
    highest_stage = std::max(highest_stage, op.stage);
  }
  result.stages = highest_stage + 1;
  std::vector<int> ranked(result.ops.size());
  for (int i = 0; i < static_cast<int>(ranked.size()); ++i) ranked[i] = i;
  std::sort(ranked.begin(), ranked.end(), [&](int a, int b) {
    const OpPlacement& x = result.ops[a];
    const OpPlacement& y = result.ops[b];
    if (x.stage != y.stage) return x.stage < y.stage;
    if (x.cycle != y.cycle) return x.cycle < y.cycle;
    return a < b;
  });
  int order = 0;
  for (int i = 0; i < static_cast<int>(ranked.size()); ++i) {
    if (i > 0 && result.ops[ranked[i]].stage != result.ops[ranked[i - 1]].stage) order = 0;
    result.ops[ranked[i]].order = order++;
  }
}

std::vector<std::string> validate_schedule(const LoopGraph& graph, const ScheduleResult& result,
                                           bool check_constraints) {
  std::vector<std::string> problems;
  int count = graph.op_count();
  if (static_cast<int>(result.ops.size()) != count) {
    problems.push_back(fmt::format("{} placements for {} ops", result.ops.size(), count));
    return problems;
  }
  if (result.ii < 1) {
    problems.push_back(fmt::format("ii is {}", result.ii));
    return problems;
  }
  int ii = result.ii;
  for (const LoopEdge& edge : graph.edges) {
    long gap = static_cast<long>(result.ops[edge.to].cycle) - result.ops[edge.from].cycle;
    long need = static_cast<long>(edge.latency) - static_cast<long>(ii) * edge.distance;
    if (gap < need)
      problems.push_back(fmt::format("edge {} -> {} (latency {}, distance {}) spans {} cycles, needs {}",
                                     graph.ops[edge.from].name, graph.ops[edge.to].name,
                                     edge.latency, edge.distance, gap, need));
  }
  std::vector<long> held(graph.resources.size() * static_cast<size_t>(ii), 0);
  for (int op = 0; op < count; ++op)
    for (const ResourceUse& use : graph.ops[op].uses)
      for (int k = 0; k < use.duration; ++k) {
        int row = ((result.ops[op].cycle + use.at + k) % ii + ii) % ii;
        held[static_cast<size_t>(use.resource) * ii + row] += use.occupancy;
      }
  for (size_t resource = 0; resource < graph.resources.size(); ++resource)
    for (int row = 0; row < ii; ++row)
      if (held[resource * ii + row] > graph.resources[resource].capacity)
        problems.push_back(fmt::format("resource '{}' holds {} units in row {} of {}; capacity {}",
                                       graph.resources[resource].name, held[resource * ii + row],
                                       row, ii, graph.resources[resource].capacity));
  ScheduleResult expected = result;
  assign_stages_and_orders(expected);
  for (int op = 0; op < count; ++op) {
    const OpPlacement& got = result.ops[op];
    const OpPlacement& want = expected.ops[op];
    if (got.cycle != want.cycle || got.stage != want.stage || got.order != want.order)
      problems.push_back(fmt::format("op '{}' at cycle {} stage {} order {}; expected {} {} {}",
                                     graph.ops[op].name, got.cycle, got.stage, got.order,
                                     want.cycle, want.stage, want.order));
  }
  if (count > 0 && expected.stages != result.stages)
    problems.push_back(fmt::format("stages is {}, the cycles give {}", result.stages, expected.stages));
  if (check_constraints) {
    LoopGraphIndex index = index_loop_graph(graph);
    for (int op = 0; op < count; ++op)
      if (index.max_stage[op] >= 0 && result.ops[op].stage > index.max_stage[op])
        problems.push_back(fmt::format("op '{}' is in stage {} beyond its max depth {}",
                                       graph.ops[op].name, result.ops[op].stage, index.max_stage[op]));
    for (const std::vector<int>& members : index.group_members)
      for (int member : members)
        if (result.ops[member].stage != result.ops[members.front()].stage)
          problems.push_back(fmt::format("ops '{}' and '{}' share a group but sit in stages {} and {}",
                                         graph.ops[members.front()].name, graph.ops[member].name,
                                         result.ops[members.front()].stage, result.ops[member].stage));
  }
  return problems;
}

}  // namespace tilec::schedule
