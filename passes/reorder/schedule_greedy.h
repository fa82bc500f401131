// passes/reorder/schedule_greedy.h — one Kahn pass with an event-aware candidate choice.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "passes/reorder/compute_dependences.h"

namespace tilec::reorder {

// How a ready candidate is scored after "compute before control" and "frees an event":
// max/sum are the largest and the total live-event count over all pipe pairs predicted after
// the candidate runs; the original index breaks ties.
enum class Strategy { min_max_then_sum, min_sum_then_max, min_max };
std::string_view strategy_name(Strategy strategy);

struct GreedyRun {
  std::vector<int> order;  // statement indices; shorter than the segment when it dead-ended
  bool complete = false;
};

// limit: with a value, a candidate that would push a pair above it is never chosen (strict;
// the run may dead-end); without, every ready candidate may run (relaxed; always completes).
GreedyRun schedule_greedy(const Segment& segment, const DependenceGraph& graph, Strategy strategy,
                          std::optional<int> limit);

}  // namespace tilec::reorder
