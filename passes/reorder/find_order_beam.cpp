// passes/reorder/find_order_beam.cpp — bounded beam search for an order within the event limit.
//
// 1. A beam holds up to `width` partial orders, each with its own event state and ready list;
//    it starts with the empty order.
// 2. Each step scores, for every partial order, the kCandidateWindow lowest-index ready
//    statements that keep all pairs within the limit: (compute first, predicted max,
//    predicted sum, waiting events, frees nothing, rank of the parent, index). "Waiting
//    events" looks one step ahead: the destination pipes on which no consumer would be ready
//    right after the statement, i.e. events that must stay live for a while (the trap that
//    makes greedy dead-end: taking loads whose consumers still wait for something else).
//    Each parent offers at most kChildrenPerParent children.
// 3. Children are sorted by score; children that reach a set of run statements already taken
//    (Zobrist hash of the set) are dropped; the first `width` become the next beam.
// 4. A partial order with no fitting child dies. Success: a partial order reaches n
//    statements. Failure: the beam empties (which proves nothing).
// Deterministic: the hash keys come from a fixed-seed generator, ties fall back to indices.
// Cost: O(n · width · (n + window · (pipes + degree))); the width is cut so that
// width · n² ≤ work budget (the copy of a partial order is O(n)).
#include <algorithm>
#include <array>
#include <bit>
#include <random>
#include <unordered_set>

#include "passes/reorder/event_state.h"
#include "passes/reorder/find_order.h"

namespace tilec::reorder {

namespace {

constexpr int kChildrenPerParent = 6;
constexpr int kCandidateWindow = 64;

struct PartialOrder {
  EventState events;
  std::vector<int> order;
  std::vector<int> ready;  // sorted by index
  std::uint64_t hash = 0;
};

struct Child {
  std::array<std::int64_t, 7> key;
  int parent;
  int statement;
  std::uint64_t hash;
};

// Destination pipes of `statement`'s events with no consumer that would be ready right after it.
int waiting_events(const Segment& segment, const DependenceGraph& graph, const EventState& events, int statement) {
  std::uint16_t waiting = graph.consumer_pipes[statement];
  for (int consumer : graph.successors[statement]) {
    if (events.unmet(consumer) == 1) {
      waiting &= static_cast<std::uint16_t>(~(1u << static_cast<int>(segment.statements[consumer].pipe)));
    }
  }
  return std::popcount(waiting);
}

}  // namespace

SearchOutcome find_order_beam(const Segment& segment, const DependenceGraph& graph, int limit, int width,
                              std::int64_t work_budget) {
  SearchOutcome outcome;
  const int count = static_cast<int>(segment.statements.size());
  const std::int64_t square = std::max<std::int64_t>(1, std::int64_t{count} * count);
  width = static_cast<int>(std::clamp<std::int64_t>(work_budget / square, 1, std::max(1, width)));

  std::mt19937_64 generator(0x7e11c0de);
  std::vector<std::uint64_t> zobrist(count);
  for (auto& key : zobrist) key = generator();

  std::vector<PartialOrder> beam;
  beam.push_back(PartialOrder{EventState(segment, graph), {}, {}, 0});
  for (int statement = 0; statement < count; ++statement) {
    if (graph.predecessors[statement].empty()) beam.front().ready.push_back(statement);
  }

  std::vector<Child> children;
  std::vector<Child> local;
  for (int step = 0; step < count; ++step) {
    children.clear();
    for (int rank = 0; rank < static_cast<int>(beam.size()); ++rank) {
      PartialOrder& partial = beam[rank];
      partial.events.sort_busy_pairs();
      local.clear();
      const int window = std::min<int>(kCandidateWindow, static_cast<int>(partial.ready.size()));
      for (int slot = 0; slot < window; ++slot) {
        const int statement = partial.ready[slot];
        EventPrediction prediction = partial.events.predict(statement, limit);
        ++outcome.states;
        if (!prediction.fits) continue;
        bool control = segment.statements[statement].kind != StatementKind::compute;
        local.push_back(Child{{control ? 1 : 0, prediction.max, prediction.sum,
                               waiting_events(segment, graph, partial.events, statement),
                               prediction.freed > 0 ? 0 : 1, rank, statement},
                              rank, statement, partial.hash ^ zobrist[statement]});
      }
      auto keep = std::min<std::size_t>(local.size(), kChildrenPerParent);
      std::partial_sort(local.begin(), local.begin() + static_cast<std::ptrdiff_t>(keep), local.end(),
                        [](const Child& a, const Child& b) { return a.key < b.key; });
      children.insert(children.end(), local.begin(), local.begin() + static_cast<std::ptrdiff_t>(keep));
    }
    if (children.empty()) return outcome;
    std::sort(children.begin(), children.end(), [](const Child& a, const Child& b) { return a.key < b.key; });

    std::vector<PartialOrder> next;
    std::unordered_set<std::uint64_t> taken;
    std::vector<int> freed;
    for (const Child& child : children) {
      if (static_cast<int>(next.size()) == width) break;
      if (!taken.insert(child.hash).second) continue;
      PartialOrder partial = beam[child.parent];
      partial.events.run(child.statement, freed);
      partial.order.push_back(child.statement);
      partial.hash = child.hash;
      partial.ready.erase(std::find(partial.ready.begin(), partial.ready.end(), child.statement));
      for (int successor : graph.successors[child.statement]) {
        if (partial.events.is_ready(successor)) {
          partial.ready.insert(std::lower_bound(partial.ready.begin(), partial.ready.end(), successor), successor);
        }
      }
      next.push_back(std::move(partial));
    }
    beam = std::move(next);
  }
  outcome.found = true;
  outcome.order = std::move(beam.front().order);
  return outcome;
}

}  // namespace tilec::reorder
