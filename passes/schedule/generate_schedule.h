// passes/schedule/generate_schedule.h — the modulo-scheduling engine's one entry point:
// loop graph in, (ii, stage, order) schedule out, serial or cost-based.
//
// An IR pass builds a LoopGraph from a loop's ops (kind → machine-model footprint), calls
// generate_schedule, and publishes result.ops[i].{stage, order} as the analysis.
#pragma once

#include "passes/schedule/loop_graph.h"
#include "passes/schedule/schedule_result.h"

namespace tilec::schedule {

struct ScheduleOptions {
  Generator generator = Generator::automatic;
  int serial_threshold = 8;     // auto: loops with fewer ops take the serial generator
  int closure_limit = 400;      // largest loop for which the O(V³) distance closure (and so
                                // the placement arms) is built; larger loops use Rau only
  int refinement_budget = 3;    // placements per op for the Rau refinement rung
  int deepest_budget = 6;       // placements per op for the deepest-retry rung
  int linear_ii_steps = 32;     // ii values tried one by one above MII before galloping
};

// Generator choice for `automatic`, in order: force_serial → serial; fewer than
// serial_threshold ops → serial; no op that is async (TMA, MMA: from its machine-model kind)
// or holds a limited resource → serial; otherwise cost-based.
Generator choose_generator(const LoopGraph& graph, const ScheduleOptions& options);

// Input errors come back in result.errors (nothing else is set). Otherwise the result is a
// valid schedule: every edge and resource holds, and constraints are honoured or each broken
// one is named in result.warnings. An internal inconsistency throws std::logic_error.
ScheduleResult generate_schedule(const LoopGraph& graph, const ScheduleOptions& options = {});

}  // namespace tilec::schedule
