// passes/reorder/check_order.cpp — validate an order and recount its event peaks.
//
// 1. The order must name every statement exactly once.
// 2. Every edge must point forward in the order (positions compared per edge).
// 3. Replay: release the events this statement consumes, then allocate its own, tracking
//    the live count and its peak per pipe pair.
// Cost: O(n + E).
#include "passes/reorder/check_order.h"

#include <fmt/core.h>

#include <vector>

namespace tilec::reorder {

OrderCheck check_order(const Segment& segment, const DependenceGraph& graph, std::span<const int> order) {
  OrderCheck check;
  const int count = static_cast<int>(segment.statements.size());
  if (static_cast<int>(order.size()) != count) {
    check.problem = fmt::format("order has {} statements, the segment {}", order.size(), count);
    return check;
  }
  std::vector<int> position(count, -1);
  for (int step = 0; step < count; ++step) {
    int statement = order[step];
    if (statement < 0 || statement >= count || position[statement] >= 0) {
      check.problem = fmt::format("order position {} names statement {} twice or out of range", step, statement);
      return check;
    }
    position[statement] = step;
  }
  for (int consumer = 0; consumer < count; ++consumer) {
    for (int producer : graph.predecessors[consumer]) {
      if (position[producer] >= position[consumer]) {
        check.problem = fmt::format("'{}' runs before '{}' but depends on it", segment.statements[consumer].name,
                                    segment.statements[producer].name);
        return check;
      }
    }
  }

  auto pipe_of = [&](int statement) { return static_cast<int>(segment.statements[statement].pipe); };
  std::vector<std::uint16_t> live_events(count, 0);  // per producer: destination pipes still live
  std::array<int, kPairCount> live{};
  for (int step = 0; step < count; ++step) {
    int statement = order[step];
    int pipe = pipe_of(statement);
    for (int producer : graph.predecessors[statement]) {
      int source = pipe_of(producer);
      if (source == pipe) continue;
      check.used[pair_index(source, pipe)] = true;
      auto bit = static_cast<std::uint16_t>(1u << pipe);
      if (live_events[producer] & bit) {
        live_events[producer] &= static_cast<std::uint16_t>(~bit);
        --live[pair_index(source, pipe)];
      }
    }
    live_events[statement] = graph.consumer_pipes[statement];
    for (int destination = 0; destination < kPipeCount; ++destination) {
      if (!(graph.consumer_pipes[statement] >> destination & 1)) continue;
      int pair = pair_index(pipe, destination);
      if (++live[pair] > check.peak[pair]) {
        check.peak[pair] = live[pair];
        check.peak_statement[pair] = step;
      }
    }
  }
  for (int pair = 0; pair < kPairCount; ++pair) check.max_peak = std::max(check.max_peak, check.peak[pair]);
  check.valid = true;
  return check;
}

}  // namespace tilec::reorder
