// passes/schedule/windowed_modulo_schedule.h — iterative modulo scheduling inside exact
// dependence windows (distance closure), evicting only on resource or group conflicts.
#pragma once

#include <vector>

#include "passes/schedule/cost_evaluators.h"
#include "passes/schedule/iterative_modulo_schedule.h"
#include "passes/schedule/loop_graph.h"

namespace tilec::schedule {

// Seats every op at this ii with at most budget_per_op · V placements, or fails. heights rank
// the ops (highest first, then lowest index).
ModuloAttempt windowed_modulo_schedule(const LoopGraph& graph, const LoopGraphIndex& index,
                                       const DistanceClosure& closure,
                                       const std::vector<long>& heights, int ii, int budget_per_op);

}  // namespace tilec::schedule
