// passes/schedule/iterative_modulo_schedule.h — Rau's iterative modulo scheduling with
// eviction under a placement budget, at one fixed ii.
#pragma once

#include <vector>

#include "passes/schedule/loop_graph.h"

namespace tilec::schedule {

enum class ModuloPriority {
  height,         // longest latency path to the loop's end (Rau's HeightR)
  critical_path,  // height + depth: ops on the longest path through the body first
};

struct ModuloAttempt {
  bool scheduled = false;
  std::vector<int> cycles;   // per op, when scheduled
  long placements = 0;       // seats committed, evicted ones included
};

// Tries to seat every op at this ii with at most budget_per_op · V placements. Honours each
// op's max stage and keeps every group in one stage. Requires ii ≥ RecMII and a graph that
// passed check_loop_graph.
ModuloAttempt iterative_modulo_schedule(const LoopGraph& graph, const LoopGraphIndex& index,
                                        int ii, ModuloPriority priority, int budget_per_op);

// Longest path from each op to the end of the body under weight latency − ii·distance (≥ 0).
std::vector<long> compute_heights(const LoopGraph& graph, const LoopGraphIndex& index, int ii);

// Longest path from the start of the body to each op under the same weight (≥ 0).
std::vector<long> compute_depths(const LoopGraph& graph, const LoopGraphIndex& index, int ii);

}  // namespace tilec::schedule
