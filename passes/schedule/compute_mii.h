// passes/schedule/compute_mii.h — the lower bound on the initiation interval of a loop graph.
#pragma once

#include "passes/schedule/loop_graph.h"

namespace tilec::schedule {

struct MinimumII {
  int res_mii = 1;   // max over resources of ceil(units demanded per iteration / capacity)
  int rec_mii = 1;   // smallest ii with no positive cycle under weight latency − ii·distance
  int mii() const { return res_mii > rec_mii ? res_mii : rec_mii; }
};

// Requires a graph that passed check_loop_graph (no zero-distance cycle).
MinimumII compute_mii(const LoopGraph& graph);

// True when some dependence cycle has positive weight latency − ii·distance, i.e. no schedule
// with this ii can satisfy every edge.
bool has_positive_cycle(const LoopGraph& graph, int ii);

}  // namespace tilec::schedule
