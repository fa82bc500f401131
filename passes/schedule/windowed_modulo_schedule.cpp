// passes/schedule/windowed_modulo_schedule.cpp — Rau-style iterative modulo scheduling with
// exact windows: the first half of the "deepest retry" rung, for loops small enough for the
// distance closure.
//
// Plain iterative modulo scheduling looks only at an op's direct, already-seated
// predecessors, so on a tight recurrence a forced seat evicts successors, which then shift the
// whole recurrence later without ever changing its ops' rows modulo ii. Here the window of an
// op v is exact: [max over seated u of cycle(u) + D(u, v), min over seated u of
// cycle(u) − D(v, u)] (D the closure), so a seat inside it never breaks a dependence and
// evictions are only ever needed for resources or groups.
// Phases:
//   1. Take the unseated op of highest height (ties: lowest index) and compute its window,
//      clipped to ii cycles (rows repeat beyond that) and to its max stage.
//   2. Seat it at the first cycle that fits the reservation table and its group's stage.
//   3. Otherwise force it: pick the cycle of the window that evicts the fewest ops (holders of
//      over-full cells, group members in another stage); ties rotate past the op's previous
//      seat so repeated forcing tries new rows. Evicted ops go back to the queue.
//   4. Stop on success, when the budget is spent, or when an op has an empty window.
// Invariants: every edge among seated ops holds; cells within capacity; seated group
// members share a stage. Removing seats only widens windows, so every unseated op keeps a
// non-empty dependence window (no positive cycle at ii ≥ RecMII). Cost per placement:
// O(V + ii·cells).
#include "passes/schedule/windowed_modulo_schedule.h"

#include <algorithm>
#include <limits>
#include <set>

#include "passes/schedule/reservation_table.h"

namespace tilec::schedule {
namespace {

constexpr int unseated = std::numeric_limits<int>::min();

int floor_div(long value, int divisor) {
  long quotient = value / divisor;
  return static_cast<int>((value % divisor != 0 && value < 0) ? quotient - 1 : quotient);
}

}  // namespace

ModuloAttempt windowed_modulo_schedule(const LoopGraph& graph, const LoopGraphIndex& index,
                                       const DistanceClosure& closure,
                                       const std::vector<long>& heights, int ii, int budget_per_op) {
  int count = graph.op_count();
  ModuloAttempt attempt;
  ReservationTable table(graph, ii);
  for (int op = 0; op < count; ++op)
    if (!table.fits_alone(op)) return attempt;
  std::set<std::pair<long, int>> waiting;
  for (int op = 0; op < count; ++op) waiting.insert({-heights[op], op});
  std::vector<int>& cycle = attempt.cycles;
  cycle.assign(count, unseated);
  std::vector<int> previous(count, unseated);
  long budget = static_cast<long>(budget_per_op) * std::max(count, 1);

  auto evict = [&](int op) {
    table.release(op, cycle[op]);
    cycle[op] = unseated;
    waiting.insert({-heights[op], op});
  };
  auto group_stage = [&](int op) {
    int group = index.group_of[op];
    if (group < 0) return std::numeric_limits<int>::min();
    for (int member : index.group_members[group])
      if (member != op && cycle[member] != unseated) return floor_div(cycle[member], ii);
    return std::numeric_limits<int>::min();
  };
  // Ops that seating `op` at `t` would evict (resource holders first, then group members).
  auto evictions = [&](int op, int t) {
    std::vector<int> victims;
    table.for_each_cell(op, t, [&](const ReservationTable::Cell& cell) {
      int excess = table.held(cell.resource, cell.row) + cell.units - table.capacity(cell.resource);
      for (int holder : table.holders(cell.resource, cell.row)) {
        if (excess <= 0) break;
        if (std::find(victims.begin(), victims.end(), holder) != victims.end()) continue;
        victims.push_back(holder);
        for (const ResourceUse& use : graph.ops[holder].uses)
          if (use.resource == cell.resource) excess -= use.occupancy;
      }
    });
    int group = index.group_of[op];
    if (group >= 0)
      for (int member : index.group_members[group])
        if (member != op && cycle[member] != unseated && floor_div(cycle[member], ii) != floor_div(t, ii) &&
            std::find(victims.begin(), victims.end(), member) == victims.end())
          victims.push_back(member);
    return victims;
  };

  while (!waiting.empty()) {
    if (budget-- <= 0) return attempt;
    int op = waiting.begin()->second;
    waiting.erase(waiting.begin());

    constexpr long none = std::numeric_limits<long>::min();
    long low = none;
    long high = std::numeric_limits<long>::max();
    for (int other = 0; other < count; ++other) {
      if (cycle[other] == unseated) continue;
      int after = closure.at(other, op);
      if (after != DistanceClosure::no_path) low = std::max(low, cycle[other] + static_cast<long>(after));
      int before = closure.at(op, other);
      if (before != DistanceClosure::no_path) high = std::min(high, cycle[other] - static_cast<long>(before));
    }
    if (low == none) low = high == std::numeric_limits<long>::max() ? 0 : std::min(0L, high - ii + 1);
    high = std::min(high, low + ii - 1);
    if (index.max_stage[op] >= 0) high = std::min(high, (index.max_stage[op] + 1L) * ii - 1);
    if (low > high) return attempt;

    int stage = group_stage(op);
    long chosen = none;
    for (long t = low; t <= high && chosen == none; ++t)
      if (table.fits(op, static_cast<int>(t)) &&
          (stage == std::numeric_limits<int>::min() || floor_div(t, ii) == stage))
        chosen = t;
    if (chosen == none) {
      long width = high - low + 1;
      long start = previous[op] == unseated ? 0 : ((previous[op] + 1 - low) % width + width) % width;
      size_t fewest = std::numeric_limits<size_t>::max();
      for (long step = 0; step < width; ++step) {
        long t = low + (start + step) % width;
        size_t victims = evictions(op, static_cast<int>(t)).size();
        if (victims < fewest) {
          fewest = victims;
          chosen = t;
        }
      }
      for (int victim : evictions(op, static_cast<int>(chosen))) evict(victim);
    }
    int t = static_cast<int>(chosen);
    table.reserve(op, t);
    cycle[op] = t;
    previous[op] = t;
    ++attempt.placements;
  }
  int lowest = *std::min_element(cycle.begin(), cycle.end());
  int shift = floor_div(lowest, ii);
  for (int op = 0; op < count; ++op)
    if (index.max_stage[op] >= 0 && floor_div(cycle[op], ii) - shift > index.max_stage[op]) return attempt;
  attempt.scheduled = true;
  return attempt;
}

}  // namespace tilec::schedule
