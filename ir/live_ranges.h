// ir/live_ranges.h — the most a region's values hold at once, in program order.
//
// The backends estimate register pressure with it: each value (or what holds it: a register
// tile several values share) is live from the first op that writes or reads it to the last, in
// the order a walk visits the ops, and through the whole of a loop it is live into (a later step
// reads it again); its registers are free again at its last use. A straight-line estimate: an
// `if`'s two regions count one after the other.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "ir/ir.h"

namespace tilec {

struct PeakLive {
  int64_t total = 0;                // the most live at one op
  const Operation* at = nullptr;    // that op (null when nothing is live anywhere)
  std::vector<const void*> holders;  // the holders live there, in first-use order
};

// `holder` names what holds a value (null: nothing to count, a scalar), `weight` what a holder
// takes (registers per thread).
PeakLive peak_live(const Region& region, const std::function<const void*(const Value*)>& holder,
                   const std::function<int64_t(const void*)>& weight);

}  // namespace tilec
