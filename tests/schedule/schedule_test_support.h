// tests/schedule/schedule_test_support.h — what the scheduling tests share: a seeded random
// loop-graph maker (splitmix64, so every standard library gives the same graphs) and an
// independent schedule checker that shares no code with the engine's validator.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "passes/schedule/loop_graph.h"
#include "passes/schedule/schedule_result.h"

namespace tilec::schedule::testing {

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  int between(int low, int high) { return low + static_cast<int>(next() % (high - low + 1)); }
  bool chance(int percent) { return between(0, 99) < percent; }

 private:
  uint64_t state_;
};

struct RandomGraphShape {
  int min_ops = 2;
  int max_ops = 24;
  bool constraints = false;   // add groups and max_depth to some ops
};

// Forward edges have distance 0, backward ones 1–2, so there is never a zero-distance cycle.
inline LoopGraph make_random_graph(SplitMix64& random, const RandomGraphShape& shape) {
  LoopGraph graph;
  int resources = random.between(0, 3);
  for (int r = 0; r < resources; ++r) graph.add_resource("r" + std::to_string(r), random.between(1, 3));
  int ops = random.between(shape.min_ops, shape.max_ops);
  for (int i = 0; i < ops; ++i) {
    LoopOp op;
    op.name = "op" + std::to_string(i);
    op.latency = random.between(0, 6);
    if (resources > 0 && random.chance(60)) {
      int uses = random.between(1, std::min(2, resources));
      int first = random.between(0, resources - 1);
      for (int u = 0; u < uses; ++u) {
        int resource = (first + u) % resources;  // distinct resources: an op never overfills one
        op.uses.push_back({resource, random.between(0, 2), random.between(1, 3),
                           random.between(1, graph.resources[resource].capacity)});
      }
    }
    if (shape.constraints && random.chance(25)) op.constraints.group = random.between(0, 2);
    if (shape.constraints && random.chance(15)) op.constraints.max_depth = random.between(0, 2);
    graph.add_op(op);
  }
  int edges = random.between(ops - 1, 2 * ops);
  for (int e = 0; e < edges; ++e) {
    int a = random.between(0, ops - 1);
    int b = random.between(0, ops - 1);
    if (a < b) graph.add_edge(a, b, graph.ops[a].latency + random.between(0, 1), 0);
    else graph.add_edge(a, b, random.between(0, 8), random.between(1, 2));
  }
  if (shape.constraints && random.chance(20)) graph.max_stages = random.between(1, 3);
  return graph;
}

inline long floor_divide(long value, long divisor) {
  long quotient = value / divisor;
  return (value % divisor != 0 && value < 0) ? quotient - 1 : quotient;
}

// Empty when the schedule keeps its contract (DESIGN.md §4.1), else the first broken rule.
inline std::string check_independently(const LoopGraph& graph, const ScheduleResult& result) {
  int count = static_cast<int>(graph.ops.size());
  if (static_cast<int>(result.ops.size()) != count) return "wrong number of placements";
  if (result.ii < 1) return "ii < 1";
  for (const LoopEdge& edge : graph.edges) {
    long from = result.ops[edge.from].cycle;
    long to = result.ops[edge.to].cycle;
    if (to - from < edge.latency - static_cast<long>(result.ii) * edge.distance)
      return "edge " + graph.ops[edge.from].name + " -> " + graph.ops[edge.to].name + " broken";
  }
  std::map<std::pair<int, long>, long> units;
  for (int op = 0; op < count; ++op)
    for (const ResourceUse& use : graph.ops[op].uses)
      for (int k = 0; k < use.duration; ++k) {
        long row = ((result.ops[op].cycle + use.at + k) % result.ii + result.ii) % result.ii;
        long& held = units[{use.resource, row}];
        held += use.occupancy;
        if (held > graph.resources[use.resource].capacity)
          return "resource " + graph.resources[use.resource].name + " over capacity";
      }
  long lowest_stage = 1L << 40;
  long highest_stage = -(1L << 40);
  for (int op = 0; op < count; ++op) {
    long stage = floor_divide(result.ops[op].cycle, result.ii);
    if (stage != result.ops[op].stage) return "stage of " + graph.ops[op].name + " is not cycle div ii";
    lowest_stage = std::min(lowest_stage, stage);
    highest_stage = std::max(highest_stage, stage);
  }
  if (count > 0 && lowest_stage != 0) return "lowest stage is not 0";
  if (count > 0 && result.stages != highest_stage + 1) return "stages is not highest stage + 1";
  for (int op = 0; op < count; ++op) {
    int rank = 0;
    for (int other = 0; other < count; ++other) {
      if (result.ops[other].stage != result.ops[op].stage) continue;
      if (result.ops[other].cycle < result.ops[op].cycle ||
          (result.ops[other].cycle == result.ops[op].cycle && other < op))
        ++rank;
    }
    if (rank != result.ops[op].order) return "order of " + graph.ops[op].name + " is not its rank";
  }
  return "";
}

}  // namespace tilec::schedule::testing
