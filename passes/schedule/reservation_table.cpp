// passes/schedule/reservation_table.cpp — folding footprints modulo ii and probing the MRT.
// A probe or a reservation costs O(cells the op touches), at most Σ min(duration, ii).
#include "passes/schedule/reservation_table.h"

#include <algorithm>
#include <map>

namespace tilec::schedule {

ReservationTable::ReservationTable(const LoopGraph& graph, int ii) : ii_(ii) {
  for (const Resource& resource : graph.resources) capacity_.push_back(resource.capacity);
  footprint_.resize(graph.ops.size());
  for (size_t op = 0; op < graph.ops.size(); ++op) {
    std::map<std::pair<int, int>, int> folded;
    for (const ResourceUse& use : graph.ops[op].uses)
      for (int k = 0; k < use.duration; ++k)
        folded[{use.resource, (use.at + k) % ii}] += use.occupancy;
    for (auto [key, units] : folded) footprint_[op].push_back({key.first, key.second, units});
  }
  held_.assign(capacity_.size() * static_cast<size_t>(ii), 0);
  holders_.assign(held_.size(), {});
}

bool ReservationTable::fits_alone(int op) const {
  for (const FoldedUse& use : footprint_[op])
    if (use.units > capacity_[use.resource]) return false;
  return true;
}

bool ReservationTable::fits(int op, int cycle) const {
  for (const FoldedUse& use : footprint_[op])
    if (held_[index(use.resource, row_of(cycle, use.offset))] + use.units > capacity_[use.resource])
      return false;
  return true;
}

void ReservationTable::reserve(int op, int cycle) {
  for (const FoldedUse& use : footprint_[op]) {
    int cell = index(use.resource, row_of(cycle, use.offset));
    held_[cell] += use.units;
    holders_[cell].push_back(op);
  }
}

void ReservationTable::release(int op, int cycle) {
  for (const FoldedUse& use : footprint_[op]) {
    int cell = index(use.resource, row_of(cycle, use.offset));
    held_[cell] -= use.units;
    auto& list = holders_[cell];
    auto found = std::find(list.begin(), list.end(), op);
    if (found != list.end()) list.erase(found);
  }
}

void ReservationTable::clear() {
  std::fill(held_.begin(), held_.end(), 0);
  for (auto& list : holders_) list.clear();
}

}  // namespace tilec::schedule
