// passes/reorder/check_order.h — the independent validator and peak counter for an order.
#pragma once

#include <array>
#include <span>
#include <string>

#include "passes/reorder/compute_dependences.h"

namespace tilec::reorder {

struct OrderCheck {
  bool valid = false;      // a permutation of the segment and a topological order of the graph
  std::string problem;     // why not, when !valid
  std::array<int, kPairCount> peak{};            // most live events per pipe pair
  std::array<int, kPairCount> peak_statement{};  // position in the order where the peak is first reached
  std::array<bool, kPairCount> used{};           // the pair carries at least one dependence
  int max_peak = 0;
};

// Replays `order` (statement indices) under the broadcast event model: before a statement
// runs, each live event (producer, its pipe) of its producers is freed; after it runs, one
// event per destination pipe of its cross-pipe consumers becomes live. Shares nothing with the
// scheduler but the graph, so tests and the IR pass can trust its figures.
OrderCheck check_order(const Segment& segment, const DependenceGraph& graph, std::span<const int> order);

}  // namespace tilec::reorder
