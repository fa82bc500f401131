// passes/reorder/schedule_greedy.cpp — Kahn scheduling under a live-event limit.
//
// Notation: live[pair] counts the events of a pipe pair that are live now (broadcast model:
// one per producer and destination pipe, freed by the first consumer on that pipe).
// 1. Ready candidates (all predecessors run) are kept in classes. A class is everything that
//    decides a candidate's score: compute or control, its pipe, the destination pipes it
//    allocates (static) and, per source pipe, how many live events it would free. Candidates
//    of one class score the same, so the best of a class is its lowest index.
// 2. Each step scores each class once: predicted sum = sum - freed + allocated; predicted
//    max = the largest of the changed pairs' new counts and of the largest unchanged pair
//    (a walk down the nonzero pairs sorted by count, skipping changed ones). Strict mode drops
//    classes that would exceed the limit. Key: (control, frees nothing, strategy, index).
// 3. Running the winner frees its producers' events (each freed event moves the other ready
//    consumers of that producer on that pipe to a new class), allocates its own events and
//    makes successors ready.
// Invariants: only ready statements run, so the order is topological; live counts never go
// negative. Cost per step: O(classes · pipes + pairs log pairs), plus O(E · pipes · log n)
// over the whole run for class moves; classes stay few (pipe × masks × freed counts), so
// 10,000 statements take milliseconds.
#include "passes/reorder/schedule_greedy.h"

#include <algorithm>
#include <array>
#include <map>
#include <set>

namespace tilec::reorder {

std::string_view strategy_name(Strategy strategy) {
  switch (strategy) {
    case Strategy::min_max_then_sum: return "min-max-then-sum";
    case Strategy::min_sum_then_max: return "min-sum-then-max";
    case Strategy::min_max: return "min-max";
  }
  return "unknown";
}

namespace {

struct CandidateClass {
  bool control = false;
  std::uint8_t pipe = 0;
  std::uint16_t allocates = 0;                 // destination pipes
  std::array<std::uint16_t, kPipeCount> frees{};  // live events freed, per source pipe
  auto operator<=>(const CandidateClass&) const = default;
};

class GreedyScheduler {
 public:
  GreedyScheduler(const Segment& segment, const DependenceGraph& graph, Strategy strategy, std::optional<int> limit)
      : segment_(segment), graph_(graph), strategy_(strategy), limit_(limit) {
    const int count = static_cast<int>(segment.statements.size());
    indegree_.resize(count);
    live_events_.assign(count, 0);
    class_of_.resize(count);
    ready_.assign(count, 0);
    for (int index = 0; index < count; ++index) {
      indegree_[index] = static_cast<int>(graph.predecessors[index].size());
      if (indegree_[index] == 0) make_ready(index);
    }
  }

  GreedyRun run() {
    GreedyRun result;
    const int count = static_cast<int>(segment_.statements.size());
    result.order.reserve(count);
    while (static_cast<int>(result.order.size()) < count) {
      int chosen = choose();
      if (chosen < 0) return result;
      execute(chosen);
      result.order.push_back(chosen);
    }
    result.complete = true;
    return result;
  }

 private:
  int pipe_of(int statement) const { return static_cast<int>(segment_.statements[statement].pipe); }

  CandidateClass classify(int statement) const {
    CandidateClass candidate;
    candidate.control = segment_.statements[statement].kind != StatementKind::compute;
    candidate.pipe = static_cast<std::uint8_t>(pipe_of(statement));
    candidate.allocates = graph_.consumer_pipes[statement];
    for (int producer : graph_.predecessors[statement]) {
      if (live_events_[producer] >> candidate.pipe & 1) ++candidate.frees[pipe_of(producer)];
    }
    return candidate;
  }

  void make_ready(int statement) {
    ready_[statement] = 1;
    class_of_[statement] = classify(statement);
    classes_[class_of_[statement]].insert(statement);
  }

  void leave_class(int statement) {
    auto found = classes_.find(class_of_[statement]);
    found->second.erase(statement);
    if (found->second.empty()) classes_.erase(found);
  }

  // Best ready statement under the strategy, or -1 when none may run (strict dead end).
  int choose() {
    // Nonzero pairs, largest count first, to find the largest pair a candidate leaves alone.
    busy_pairs_.clear();
    for (int pair = 0; pair < kPairCount; ++pair) {
      if (live_[pair] > 0) busy_pairs_.push_back(pair);
    }
    std::sort(busy_pairs_.begin(), busy_pairs_.end(),
              [&](int a, int b) { return live_[a] != live_[b] ? live_[a] > live_[b] : a < b; });

    std::array<int, 5> best_key{};
    int best = -1;
    for (const auto& [candidate, members] : classes_) {
      const int pipe = candidate.pipe;
      bool fits = true;
      int predicted_max = 0;
      int allocated = 0;
      for (int destination = 0; destination < kPipeCount; ++destination) {
        if (!(candidate.allocates >> destination & 1)) continue;
        int value = live_[pair_index(pipe, destination)] + 1;
        if (limit_ && value > *limit_) fits = false;
        predicted_max = std::max(predicted_max, value);
        ++allocated;
      }
      if (!fits) continue;
      int freed = 0;
      for (int source = 0; source < kPipeCount; ++source) {
        if (candidate.frees[source] == 0) continue;
        freed += candidate.frees[source];
        predicted_max = std::max(predicted_max, live_[pair_index(source, pipe)] - candidate.frees[source]);
      }
      for (int pair : busy_pairs_) {
        int from = pair / kPipeCount;
        int to = pair % kPipeCount;
        bool changed = (from == pipe && (candidate.allocates >> to & 1)) || (to == pipe && candidate.frees[from] > 0);
        if (!changed) {
          predicted_max = std::max(predicted_max, live_[pair]);
          break;
        }
      }
      const int predicted_sum = live_total_ - freed + allocated;
      const int index = *members.begin();
      std::array<int, 5> key{candidate.control ? 1 : 0, freed > 0 ? 0 : 1, 0, 0, index};
      switch (strategy_) {
        case Strategy::min_max_then_sum: key[2] = predicted_max; key[3] = predicted_sum; break;
        case Strategy::min_sum_then_max: key[2] = predicted_sum; key[3] = predicted_max; break;
        case Strategy::min_max: key[2] = predicted_max; break;
      }
      if (best < 0 || key < best_key) {
        best_key = key;
        best = index;
      }
    }
    return best;
  }

  void execute(int statement) {
    leave_class(statement);
    ready_[statement] = 0;
    const int pipe = pipe_of(statement);
    const auto bit = static_cast<std::uint16_t>(1u << pipe);
    for (int producer : graph_.predecessors[statement]) {
      if (!(live_events_[producer] & bit)) continue;
      live_events_[producer] &= static_cast<std::uint16_t>(~bit);
      const int source = pipe_of(producer);
      --live_[pair_index(source, pipe)];
      --live_total_;
      for (int sibling : graph_.successors[producer]) {
        if (!ready_[sibling] || pipe_of(sibling) != pipe) continue;
        leave_class(sibling);
        --class_of_[sibling].frees[source];
        classes_[class_of_[sibling]].insert(sibling);
      }
    }
    live_events_[statement] = graph_.consumer_pipes[statement];
    for (int destination = 0; destination < kPipeCount; ++destination) {
      if (!(graph_.consumer_pipes[statement] >> destination & 1)) continue;
      ++live_[pair_index(pipe, destination)];
      ++live_total_;
    }
    for (int successor : graph_.successors[statement]) {
      if (--indegree_[successor] == 0) make_ready(successor);
    }
  }

  const Segment& segment_;
  const DependenceGraph& graph_;
  Strategy strategy_;
  std::optional<int> limit_;
  std::vector<int> indegree_;
  std::vector<std::uint16_t> live_events_;  // per producer: destination pipes still live
  std::vector<CandidateClass> class_of_;
  std::vector<char> ready_;
  std::map<CandidateClass, std::set<int>> classes_;
  std::array<int, kPairCount> live_{};
  int live_total_ = 0;
  std::vector<int> busy_pairs_;
};

}  // namespace

GreedyRun schedule_greedy(const Segment& segment, const DependenceGraph& graph, Strategy strategy,
                          std::optional<int> limit) {
  return GreedyScheduler(segment, graph, strategy, limit).run();
}

}  // namespace tilec::reorder
