// passes/reorder/find_order.h — searches for an order within the event limit when greedy fails.
#pragma once

#include <cstdint>
#include <vector>

#include "passes/reorder/compute_dependences.h"

namespace tilec::reorder {

struct SearchOutcome {
  std::vector<int> order;   // complete and within the limit when found
  bool found = false;
  bool exhausted = false;   // exact search only: every state was explored, so no order exists
  std::int64_t states = 0;  // states expanded (exact) or children scored (beam)
};

// Exact depth-first search over scheduled sets (segments of at most 64 statements). The live
// events depend only on which statements have run, so a set that failed once fails always and
// is memoized. Stops after `state_budget` expansions without a verdict.
SearchOutcome find_order_exact(const Segment& segment, const DependenceGraph& graph, int limit,
                               std::int64_t state_budget);

// Beam search for any size: keeps the `width` best partial orders (fewest live events) per
// step; the width shrinks so that width · n² stays under `work_budget`. Finds orders greedy
// misses but proves nothing when it fails.
SearchOutcome find_order_beam(const Segment& segment, const DependenceGraph& graph, int limit, int width,
                              std::int64_t work_budget);

}  // namespace tilec::reorder
