// passes/reorder/reorder_events.h — the event-limited reorder engine (entry point).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "passes/reorder/segment.h"

namespace tilec::reorder {

struct ReorderOptions {
  int max_events = 8;                        // live cross-pipe events allowed per pipe pair
  std::int64_t exact_state_budget = 30000;  // exact search: states expanded at most
  int beam_width = 16;
  std::int64_t beam_work_budget = 200000000;  // beam: width · n² at most
};

struct ReorderResult {
  std::vector<int> order;  // statement indices, a topological order of the dependences
  bool feasible = false;   // every pair within max_events
  // "original", "min-max-then-sum", "min-sum-then-max", "min-max", "exact-search",
  // "beam-search", or "relaxed-<strategy>" when no order within the limit was found.
  std::string strategy;
  int max_peak = 0;
  std::map<std::string, int> peak;  // per pipe pair carrying a dependence, "MTE2->V"
  std::vector<std::string> warnings;
};

ReorderResult reorder_events(const Segment& segment, const ReorderOptions& options = {});

}  // namespace tilec::reorder
