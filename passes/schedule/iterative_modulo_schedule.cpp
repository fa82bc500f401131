// passes/schedule/iterative_modulo_schedule.cpp — iterative modulo scheduling (B. R. Rau,
// "Iterative Modulo Scheduling", 1994), the engine's "Rau refinement" rung.
//
// Phases at a fixed ii:
//   1. Priority: HeightR (longest path to the end under latency − ii·distance), relaxed to a
//      fixed point in reverse topological order; optionally plus the depth from the start.
//   2. Repeatedly take the unscheduled op of highest priority (ties: lowest index). Its
//      earliest start is the latest of its scheduled predecessors' cycle + latency − ii·distance
//      (and 0). Its window is [earliest, earliest + ii − 1], narrowed to its group's stage
//      when a group member is already seated, and cut at its max stage.
//   3. Seat it at the first cycle of the window whose reservation fits. When none fits, force
//      it: at the earliest start, or one past its previous cycle when it was seated before
//      (so the schedule cannot cycle in place), then evict every op it collides with: holders
//      of over-full cells, successors whose edge it now breaks, group members in another stage.
//   4. Stop when every op is seated (success) or the budget of placements is spent, or an op
//      cannot start within its max stage (failure at this ii; the caller tries ii + 1).
// Invariants kept after every step: seated ops satisfy every edge among themselves, every
// cell is within capacity, seated group members share a stage. Cost: O(budget · (ii + deg +
// cells)) plus O(V·E) worst case for the priorities.
#include "passes/schedule/iterative_modulo_schedule.h"

#include <algorithm>
#include <limits>
#include <set>

#include "passes/schedule/reservation_table.h"

namespace tilec::schedule {
namespace {

constexpr int unscheduled = std::numeric_limits<int>::min();

long edge_weight(const LoopEdge& edge, int ii) {
  return edge.latency - static_cast<long>(ii) * edge.distance;
}

}  // namespace

std::vector<long> compute_depths(const LoopGraph& graph, const LoopGraphIndex& index, int ii) {
  std::vector<long> depth(graph.op_count(), 0);
  for (int pass = 0; pass <= graph.op_count(); ++pass) {
    bool changed = false;
    for (int op : index.topological_order)
      for (int edge_id : index.predecessors[op]) {
        const LoopEdge& edge = graph.edges[edge_id];
        long through = depth[edge.from] + edge_weight(edge, ii);
        if (through > depth[op]) {
          depth[op] = through;
          changed = true;
        }
      }
    if (!changed) break;
  }
  return depth;
}

namespace {

int floor_div(long value, int divisor) {
  long quotient = value / divisor;
  return static_cast<int>((value % divisor != 0 && value < 0) ? quotient - 1 : quotient);
}

}  // namespace

std::vector<long> compute_heights(const LoopGraph& graph, const LoopGraphIndex& index, int ii) {
  std::vector<long> height(graph.op_count(), 0);
  for (int pass = 0; pass <= graph.op_count(); ++pass) {
    bool changed = false;
    for (auto it = index.topological_order.rbegin(); it != index.topological_order.rend(); ++it)
      for (int edge_id : index.successors[*it]) {
        const LoopEdge& edge = graph.edges[edge_id];
        long through = height[edge.to] + edge_weight(edge, ii);
        if (through > height[*it]) {
          height[*it] = through;
          changed = true;
        }
      }
    if (!changed) break;
  }
  return height;
}

ModuloAttempt iterative_modulo_schedule(const LoopGraph& graph, const LoopGraphIndex& index,
                                        int ii, ModuloPriority priority, int budget_per_op) {
  int count = graph.op_count();
  ModuloAttempt attempt;
  ReservationTable table(graph, ii);
  for (int op = 0; op < count; ++op)
    if (!table.fits_alone(op)) return attempt;

  std::vector<long> rank = compute_heights(graph, index, ii);
  if (priority == ModuloPriority::critical_path) {
    std::vector<long> depth = compute_depths(graph, index, ii);
    for (int op = 0; op < count; ++op) rank[op] += depth[op];
  }
  std::set<std::pair<long, int>> waiting;  // (−priority, op)
  for (int op = 0; op < count; ++op) waiting.insert({-rank[op], op});

  std::vector<int>& cycle = attempt.cycles;
  cycle.assign(count, unscheduled);
  std::vector<int> previous(count, unscheduled);
  long budget = static_cast<long>(budget_per_op) * std::max(count, 1);

  auto evict = [&](int op) {
    table.release(op, cycle[op]);
    cycle[op] = unscheduled;
    waiting.insert({-rank[op], op});
  };

  while (!waiting.empty()) {
    if (budget-- <= 0) return attempt;
    int op = waiting.begin()->second;
    waiting.erase(waiting.begin());

    long earliest = 0;
    for (int edge_id : index.predecessors[op]) {
      const LoopEdge& edge = graph.edges[edge_id];
      if (edge.from != op && cycle[edge.from] != unscheduled)
        earliest = std::max(earliest, cycle[edge.from] + edge_weight(edge, ii));
    }
    long low = earliest;
    long high = earliest + ii - 1;
    int group = index.group_of[op];
    if (group >= 0) {
      for (int member : index.group_members[group]) {
        if (member == op || cycle[member] == unscheduled) continue;
        long stage_start = static_cast<long>(floor_div(cycle[member], ii)) * ii;
        if (low <= stage_start + ii - 1) {
          low = std::max(low, stage_start);
          high = stage_start + ii - 1;
        }
        break;
      }
    }
    long limit = index.max_stage[op] >= 0 ? (index.max_stage[op] + 1L) * ii - 1
                                         : std::numeric_limits<long>::max();
    high = std::min(high, limit);
    if (low > limit) return attempt;

    long chosen = -1;
    for (long t = low; t <= high; ++t)
      if (table.fits(op, static_cast<int>(t))) {
        chosen = t;
        break;
      }
    if (chosen < 0) {
      chosen = (previous[op] == unscheduled || low > previous[op]) ? low : previous[op] + 1L;
      if (chosen > limit) return attempt;
      table.for_each_cell(op, static_cast<int>(chosen), [&](const ReservationTable::Cell& cell) {
        while (table.held(cell.resource, cell.row) + cell.units > table.capacity(cell.resource))
          evict(table.holders(cell.resource, cell.row).front());
      });
    }
    int t = static_cast<int>(chosen);
    for (int edge_id : index.successors[op]) {
      const LoopEdge& edge = graph.edges[edge_id];
      if (edge.to != op && cycle[edge.to] != unscheduled && cycle[edge.to] - t < edge_weight(edge, ii))
        evict(edge.to);
    }
    if (group >= 0)
      for (int member : index.group_members[group])
        if (member != op && cycle[member] != unscheduled &&
            floor_div(cycle[member], ii) != floor_div(t, ii))
          evict(member);
    table.reserve(op, t);
    cycle[op] = t;
    previous[op] = t;
    ++attempt.placements;
  }
  attempt.scheduled = true;
  return attempt;
}

}  // namespace tilec::schedule
