// passes/schedule/cost_evaluators.h — the cost-based generator's ranking machinery: the
// lexicographic cost vector, the galloping-then-binary threshold search, the structural
// distance closure, and the two evaluators (pipe-slot and bank-pressure) of seeds/001.
#pragma once

#include <compare>
#include <functional>
#include <vector>

#include "passes/schedule/loop_graph.h"
#include "passes/schedule/reservation_table.h"

namespace tilec::schedule {

// Compared component by component, never summed into one scalar: the hard resource gate
// first, then slot pressure, bank pressure and structural distance.
struct CostVector {
  int resource_gate = 0;        // 0 when the seat fits the reservation table, 1 when not
  int slot_pressure = 0;        // peak units held in the cells the seat touches, after seating
  int bank_pressure = 0;        // other ops sharing those cells: this iteration + carried over
  int structural_distance = 0;  // cycles past the dependence-earliest start
  auto operator<=>(const CostVector&) const = default;
  CostVector& operator+=(const CostVector& other);
};

// Smallest threshold in [lower, upper] at which `probe` holds, assuming it stays true above;
// −1 when it holds nowhere. Gallops (lower, 2·lower, 4·lower, ...) to bracket, then bisects.
int search_threshold(const std::function<bool(int)>& probe, int lower, int upper);

// All-pairs longest path under weight latency − ii·distance (Floyd–Warshall, by max).
// at(i, j) is the least number of cycles j must start after i; no_path when unconstrained.
class DistanceClosure {
 public:
  static constexpr int no_path = -(1 << 30);
  DistanceClosure(const LoopGraph& graph, int ii);
  int at(int from, int to) const { return distance_[static_cast<size_t>(from) * size_ + to]; }

 private:
  int size_;
  std::vector<int> distance_;
};

// Pipe-slot evaluator: the smallest slot cap under which the seat fits (peak units in its
// cells after seating), found by search_threshold; 0 for an op with no resource use.
int evaluate_slot_pressure(const ReservationTable& table, int op, int cycle);

// Bank-pressure evaluator: the smallest combined budget that covers the ops already holding
// the seat's cells, counted as in-iteration (same stage) plus cross-iteration carry (another
// stage); cycles[u] is each seated op's cycle.
int evaluate_bank_pressure(const ReservationTable& table, const std::vector<int>& cycles,
                           int op, int cycle);

}  // namespace tilec::schedule
