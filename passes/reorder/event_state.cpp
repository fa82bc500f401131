// passes/reorder/event_state.cpp — live-event bookkeeping for the searches.
//
// predict() is O(pipes + predecessors): the largest pair a statement leaves unchanged is found
// by walking the nonzero pairs sorted by count (sort_busy_pairs) and skipping changed ones.
#include "passes/reorder/event_state.h"

#include <algorithm>

namespace tilec::reorder {

EventState::EventState(const Segment& segment, const DependenceGraph& graph) : segment_(&segment), graph_(&graph) {
  const int count = static_cast<int>(segment.statements.size());
  indegree_.resize(count);
  live_events_.assign(count, 0);
  for (int index = 0; index < count; ++index) indegree_[index] = static_cast<int>(graph.predecessors[index].size());
}

void EventState::sort_busy_pairs() {
  busy_pairs_.clear();
  for (int pair = 0; pair < kPairCount; ++pair) {
    if (live_[pair] > 0) busy_pairs_.push_back(pair);
  }
  std::sort(busy_pairs_.begin(), busy_pairs_.end(),
            [&](int a, int b) { return live_[a] != live_[b] ? live_[a] > live_[b] : a < b; });
}

EventPrediction EventState::predict(int statement, int limit) const {
  EventPrediction prediction;
  const int pipe = pipe_of(statement);
  const std::uint16_t allocates = graph_->consumer_pipes[statement];
  std::array<int, kPipeCount> frees{};
  for (int producer : graph_->predecessors[statement]) {
    if (live_events_[producer] >> pipe & 1) {
      ++frees[pipe_of(producer)];
      ++prediction.freed;
    }
  }
  int allocated = 0;
  for (int destination = 0; destination < kPipeCount; ++destination) {
    if (!(allocates >> destination & 1)) continue;
    int value = live_[pair_index(pipe, destination)] + 1;
    if (value > limit) prediction.fits = false;
    prediction.max = std::max(prediction.max, value);
    ++allocated;
  }
  for (int source = 0; source < kPipeCount; ++source) {
    if (frees[source] > 0) prediction.max = std::max(prediction.max, live_[pair_index(source, pipe)] - frees[source]);
  }
  for (int pair : busy_pairs_) {
    int from = pair / kPipeCount;
    int to = pair % kPipeCount;
    bool changed = (from == pipe && (allocates >> to & 1)) || (to == pipe && frees[from] > 0);
    if (!changed) {
      prediction.max = std::max(prediction.max, live_[pair]);
      break;
    }
  }
  prediction.sum = live_total_ - prediction.freed + allocated;
  return prediction;
}

void EventState::run(int statement, std::vector<int>& freed) {
  freed.clear();
  const int pipe = pipe_of(statement);
  const auto bit = static_cast<std::uint16_t>(1u << pipe);
  for (int producer : graph_->predecessors[statement]) {
    if (!(live_events_[producer] & bit)) continue;
    live_events_[producer] &= static_cast<std::uint16_t>(~bit);
    --live_[pair_index(pipe_of(producer), pipe)];
    --live_total_;
    freed.push_back(producer);
  }
  live_events_[statement] = graph_->consumer_pipes[statement];
  for (int destination = 0; destination < kPipeCount; ++destination) {
    if (!(live_events_[statement] >> destination & 1)) continue;
    ++live_[pair_index(pipe, destination)];
    ++live_total_;
  }
  indegree_[statement] = -1;  // ran
  for (int successor : graph_->successors[statement]) --indegree_[successor];
}

void EventState::unrun(int statement, const std::vector<int>& freed) {
  const int pipe = pipe_of(statement);
  for (int successor : graph_->successors[statement]) ++indegree_[successor];
  indegree_[statement] = 0;
  for (int destination = 0; destination < kPipeCount; ++destination) {
    if (!(live_events_[statement] >> destination & 1)) continue;
    --live_[pair_index(pipe, destination)];
    --live_total_;
  }
  live_events_[statement] = 0;
  const auto bit = static_cast<std::uint16_t>(1u << pipe);
  for (int producer : freed) {
    live_events_[producer] |= bit;
    ++live_[pair_index(pipe_of(producer), pipe)];
    ++live_total_;
  }
}

}  // namespace tilec::reorder
