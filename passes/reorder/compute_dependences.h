// passes/reorder/compute_dependences.h — the dependence graph of a segment (program order).
#pragma once

#include <cstdint>
#include <vector>

#include "passes/reorder/segment.h"

namespace tilec::reorder {

// Edges always point from an earlier statement to a later one; each list is sorted and holds
// each neighbour once (one edge per producer/consumer pair, whatever made it).
struct DependenceGraph {
  std::vector<std::vector<int>> predecessors;
  std::vector<std::vector<int>> successors;
  // Per statement: bit d set when some successor runs on pipe d != the statement's own pipe,
  // i.e. the cross-pipe events the statement allocates when it runs (broadcast model).
  std::vector<std::uint16_t> consumer_pipes;
  int edge_count = 0;
};

// RAW, WAW and WAR by memory identity; a chain through the control statements; a barrier
// after every statement since the previous barrier that has no successor yet, and before
// every later statement (up to the next barrier) that has no predecessor after it.
DependenceGraph compute_dependences(const Segment& segment);

}  // namespace tilec::reorder
