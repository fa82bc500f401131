// passes/schedule/generate_cost_based_schedule.h — the cost-based generator: II search over
// the strategy ladder.
#pragma once

#include "passes/schedule/compute_mii.h"
#include "passes/schedule/generate_schedule.h"

namespace tilec::schedule {

// Searches ii upward from the bound; `serial` is a valid serial schedule of the same graph,
// used as the upper end of the search and as the fallback. Fills ii, cycles, generator,
// strategy, placements and warnings of `result`.
void generate_cost_based_schedule(const LoopGraph& graph, const LoopGraphIndex& index,
                                  const MinimumII& bound, const ScheduleOptions& options,
                                  const ScheduleResult& serial, ScheduleResult& result);

}  // namespace tilec::schedule
