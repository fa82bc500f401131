// passes/schedule/generate_serial_schedule.h — the serial (non-overlapped) schedule generator.
#pragma once

#include "passes/schedule/loop_graph.h"
#include "passes/schedule/schedule_result.h"

namespace tilec::schedule {

// Every op in stage 0, issued in Kahn order over distance-0 edges with program-order ties.
// Fills ii, the ops' cycles/stages/orders, stages, strategy and warnings of `result`; mii
// fields are left as they are. Requires a graph that passed check_loop_graph.
void generate_serial_schedule(const LoopGraph& graph, const LoopGraphIndex& index,
                              ScheduleResult& result);

}  // namespace tilec::schedule
