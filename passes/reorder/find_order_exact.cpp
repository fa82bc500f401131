// passes/reorder/find_order_exact.cpp — exact search for an order within the event limit.
//
// Notation: a state is the set of statements already run (a 64-bit mask). The live events of
// a state are a function of that set alone (an event is live iff its producer ran and no
// consumer on its destination pipe did), so whether a state can be completed within the limit
// does not depend on the path to it.
// 1. Depth first from the empty set; at each state the ready statements that keep every pair
//    within the limit are tried best first (compute, frees an event, min max, min sum, index),
//    so the first leaf is usually greedy's answer or close to it.
// 2. A ready statement with no cross-pipe consumer allocates nothing and can only free events,
//    so moving it to the front of any completion keeps that completion within the limit: when
//    one is ready it is the only child tried. Only statements that allocate events branch.
// 3. A state whose every child failed is recorded; reaching it again fails at once.
// 4. The search stops at the first complete order, when the whole space is exhausted (no
//    order exists), or after the state budget (no verdict).
// Cost: at most min(budget, 2^n) expansions of O(n · pipes) each.
#include <algorithm>
#include <array>
#include <unordered_set>

#include "passes/reorder/event_state.h"
#include "passes/reorder/find_order.h"

namespace tilec::reorder {

namespace {

class ExactSearch {
 public:
  ExactSearch(const Segment& segment, const DependenceGraph& graph, int limit, std::int64_t budget)
      : segment_(segment), graph_(graph), events_(segment, graph), limit_(limit), budget_(budget),
        count_(static_cast<int>(segment.statements.size())) {}

  SearchOutcome run() {
    SearchOutcome outcome;
    outcome.found = visit(0);
    outcome.exhausted = !outcome.found && !aborted_;
    outcome.states = states_;
    if (outcome.found) outcome.order = order_;
    return outcome;
  }

 private:
  bool visit(std::uint64_t done) {
    if (static_cast<int>(order_.size()) == count_) return true;
    if (failed_.contains(done)) return false;
    if (++states_ > budget_) {
      aborted_ = true;
      return false;
    }
    events_.sort_busy_pairs();
    std::vector<std::array<int, 5>> candidates;
    for (int statement = 0; statement < count_; ++statement) {
      if (!events_.is_ready(statement)) continue;
      if (graph_.consumer_pipes[statement] == 0) {
        // Allocates nothing: running it first never hurts (phase 2), so it is the only child.
        candidates.assign(1, {0, 0, 0, 0, statement});
        break;
      }
      EventPrediction prediction = events_.predict(statement, limit_);
      if (!prediction.fits) continue;
      bool control = segment_.statements[statement].kind != StatementKind::compute;
      candidates.push_back({control ? 1 : 0, prediction.freed > 0 ? 0 : 1, prediction.max, prediction.sum, statement});
    }
    std::sort(candidates.begin(), candidates.end());
    std::vector<int> freed;
    for (const auto& candidate : candidates) {
      int statement = candidate[4];
      events_.run(statement, freed);
      order_.push_back(statement);
      if (visit(done | (std::uint64_t{1} << statement))) return true;
      order_.pop_back();
      events_.unrun(statement, freed);
      if (aborted_) return false;
    }
    failed_.insert(done);
    return false;
  }

  const Segment& segment_;
  const DependenceGraph& graph_;
  EventState events_;
  int limit_;
  std::int64_t budget_;
  int count_;
  std::int64_t states_ = 0;
  bool aborted_ = false;
  std::vector<int> order_;
  std::unordered_set<std::uint64_t> failed_;
};

}  // namespace

SearchOutcome find_order_exact(const Segment& segment, const DependenceGraph& graph, int limit,
                               std::int64_t state_budget) {
  if (segment.statements.size() > 64) return {};
  return ExactSearch(segment, graph, limit, state_budget).run();
}

}  // namespace tilec::reorder
