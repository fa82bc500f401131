// passes/reorder/event_state.h — live cross-pipe events while an order is being built.
//
// Shared by the two searches (find_order_exact, find_order_beam): which statements may run,
// which events are live (broadcast model), what running one statement would do to the live
// counts, and running or un-running it. The greedy scheduler keeps its own, class-based copy
// of this bookkeeping because it must not rescan candidates.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "passes/reorder/compute_dependences.h"

namespace tilec::reorder {

struct EventPrediction {
  bool fits = true;  // no pair above the limit after the statement runs
  int max = 0;       // largest live count over all pairs afterwards
  int sum = 0;       // total live events afterwards
  int freed = 0;     // events the statement frees
};

class EventState {
 public:
  EventState(const Segment& segment, const DependenceGraph& graph);

  bool is_ready(int statement) const { return indegree_[statement] == 0; }
  // Predecessors that have not run yet (-1 once the statement itself ran).
  int unmet(int statement) const { return indegree_[statement]; }
  // Call before a round of predict() after the state changed.
  void sort_busy_pairs();
  EventPrediction predict(int statement, int limit) const;
  // Runs the statement; `freed` receives the producers whose event it freed (for unrun()).
  void run(int statement, std::vector<int>& freed);
  void unrun(int statement, const std::vector<int>& freed);
  // Statements made ready by running `statement` are its successors with indegree 0 now.
  const std::vector<int>& successors(int statement) const { return graph_->successors[statement]; }

 private:
  int pipe_of(int statement) const { return static_cast<int>(segment_->statements[statement].pipe); }

  const Segment* segment_;
  const DependenceGraph* graph_;
  std::vector<int> indegree_;
  std::vector<std::uint16_t> live_events_;
  std::array<int, kPairCount> live_{};
  int live_total_ = 0;
  std::vector<int> busy_pairs_;
};

}  // namespace tilec::reorder
