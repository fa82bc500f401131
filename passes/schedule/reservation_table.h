// passes/schedule/reservation_table.h — the modulo reservation table (MRT) of one ii.
//
// A row per cycle modulo ii and a column per resource; each cell counts the units held and
// remembers which ops hold them (for eviction and pressure costs). An op's footprint is
// folded modulo ii once, so a use longer than ii correctly counts against itself.
#pragma once

#include <vector>

#include "passes/schedule/loop_graph.h"

namespace tilec::schedule {

class ReservationTable {
 public:
  ReservationTable(const LoopGraph& graph, int ii);

  int ii() const { return ii_; }
  // False when the op alone exceeds a capacity at this ii (no cycle can ever hold it).
  bool fits_alone(int op) const;
  // True when the op's footprint starting at `cycle` fits beside what is reserved.
  bool fits(int op, int cycle) const;
  void reserve(int op, int cycle);
  void release(int op, int cycle);
  void clear();

  struct Cell {
    int resource;
    int row;
    int units;   // what the op needs in this cell
  };
  // Calls visit(Cell) for each cell the op touches when it starts at `cycle` (a visitor, not a
  // vector: the cost-based generator probes cells millions of times, and an allocation each was
  // most of its time under AddressSanitizer).
  template <typename Visit>
  void for_each_cell(int op, int cycle, Visit&& visit) const {
    for (const FoldedUse& use : footprint_[op]) visit(Cell{use.resource, row_of(cycle, use.offset), use.units});
  }
  bool touches_cells(int op) const { return !footprint_[op].empty(); }
  int held(int resource, int row) const { return held_[index(resource, row)]; }
  int capacity(int resource) const { return capacity_[resource]; }
  // Ops holding units of the cell, one entry per op.
  const std::vector<int>& holders(int resource, int row) const { return holders_[index(resource, row)]; }

 private:
  struct FoldedUse {
    int resource;
    int offset;  // cycle offset modulo ii
    int units;
  };
  int index(int resource, int row) const { return resource * ii_ + row; }
  int row_of(int cycle, int offset) const { return ((cycle + offset) % ii_ + ii_) % ii_; }

  int ii_;
  std::vector<int> capacity_;
  std::vector<std::vector<FoldedUse>> footprint_;  // per op
  std::vector<int> held_;
  std::vector<std::vector<int>> holders_;
};

}  // namespace tilec::schedule
