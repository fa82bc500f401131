// passes/schedule/cost_evaluators.cpp — cost vector, threshold search, distance closure and
// the two evaluators.
//
// Both evaluators are boolean probes "does the seat pass under threshold c?" that the
// galloping-then-binary search turns into a score, as in seeds/001: monotone in c, so the
// search finds the smallest passing c in O(log c) probes. The closure is O(V³) time and
// O(V²) memory, so the cost-based generator builds it only for loops up to a size limit.
#include "passes/schedule/cost_evaluators.h"

#include <algorithm>

namespace tilec::schedule {

CostVector& CostVector::operator+=(const CostVector& other) {
  resource_gate += other.resource_gate;
  slot_pressure += other.slot_pressure;
  bank_pressure += other.bank_pressure;
  structural_distance += other.structural_distance;
  return *this;
}

int search_threshold(const std::function<bool(int)>& probe, int lower, int upper) {
  if (lower > upper) return -1;
  int high = lower == 0 ? std::min(1, upper) : lower;
  while (high < upper && !probe(high)) high = std::min(upper, high * 2);
  if (!probe(high)) return -1;
  int low = lower;
  while (low < high) {
    int middle = low + (high - low) / 2;
    if (probe(middle)) high = middle;
    else low = middle + 1;
  }
  return low;
}

DistanceClosure::DistanceClosure(const LoopGraph& graph, int ii)
    : size_(graph.op_count()), distance_(static_cast<size_t>(size_) * size_, no_path) {
  for (int op = 0; op < size_; ++op) distance_[static_cast<size_t>(op) * size_ + op] = 0;
  for (const LoopEdge& edge : graph.edges) {
    int& cell = distance_[static_cast<size_t>(edge.from) * size_ + edge.to];
    cell = std::max(cell, edge.latency - ii * edge.distance);
  }
  for (int k = 0; k < size_; ++k) {
    const int* row_k = &distance_[static_cast<size_t>(k) * size_];
    for (int i = 0; i < size_; ++i) {
      int* row_i = &distance_[static_cast<size_t>(i) * size_];
      int through_k = row_i[k];
      if (through_k == no_path) continue;
      for (int j = 0; j < size_; ++j)
        if (row_k[j] != no_path) row_i[j] = std::max(row_i[j], through_k + row_k[j]);
    }
  }
}

int evaluate_slot_pressure(const ReservationTable& table, int op, int cycle) {
  if (!table.touches_cells(op)) return 0;
  int upper = 0;
  table.for_each_cell(op, cycle, [&](const ReservationTable::Cell& cell) {
    upper = std::max(upper, table.capacity(cell.resource));
  });
  auto probe = [&](int cap) {
    bool fits = true;
    table.for_each_cell(op, cycle, [&](const ReservationTable::Cell& cell) {
      int after = table.held(cell.resource, cell.row) + cell.units;
      if (after > table.capacity(cell.resource) || after > cap) fits = false;
    });
    return fits;
  };
  int threshold = search_threshold(probe, 0, upper);
  return threshold < 0 ? upper + 1 : threshold;
}

int evaluate_bank_pressure(const ReservationTable& table, const std::vector<int>& cycles,
                           int op, int cycle) {
  int ii = table.ii();
  auto stage_of = [ii](int at) { return at >= 0 ? at / ii : -((-at + ii - 1) / ii); };
  int in_iteration = 0;
  int carried = 0;
  table.for_each_cell(op, cycle, [&](const ReservationTable::Cell& cell) {
    for (int holder : table.holders(cell.resource, cell.row)) {
      if (stage_of(cycles[holder]) == stage_of(cycle)) ++in_iteration;
      else ++carried;
    }
  });
  auto probe = [&](int budget) { return in_iteration + carried <= budget; };
  return std::max(0, search_threshold(probe, 0, in_iteration + carried));
}

}  // namespace tilec::schedule
