// passes/schedule/schedule_result.h — what a schedule generator publishes, and its validator.
//
// The public ordering key is (stage, order): stage = cycle div ii, order = rank within the
// stage by (cycle, op index). Cycles are normalised so the first op sits in stage 0.
// validate_schedule checks the contract every generator keeps: for every edge
// cycle(to) − cycle(from) ≥ latency − ii·distance; no resource above capacity in any cycle
// modulo ii; stage, order and the stage count consistent with the cycles; every group in one
// stage and every op within its max_depth (optional: the serial generator may instead report a
// broken constraint as a warning, so its callers validate with check_constraints = false).
#pragma once

#include <string>
#include <vector>

#include "passes/schedule/loop_graph.h"

namespace tilec::schedule {

enum class Generator { automatic, serial, cost_based };

const char* generator_name(Generator generator);

struct OpPlacement {
  int cycle = 0;
  int stage = 0;
  int order = 0;
};

struct ScheduleResult {
  std::vector<std::string> errors;     // input errors; when not empty nothing else is set
  int ii = 0;
  int mii = 0;
  int res_mii = 0;
  int rec_mii = 0;
  Generator generator = Generator::serial;
  std::string strategy;                // the ladder rung (or "serial") that produced it
  int stages = 0;                      // highest stage + 1
  std::vector<OpPlacement> ops;        // per op, in graph order
  std::vector<std::string> warnings;   // constraints not honoured, fallbacks taken
  long placements = 0;                 // seats committed while searching (work measure)
  bool ok() const { return errors.empty(); }
};

// Shifts cycles by a multiple of ii so the lowest stage is 0, then fills stage, order and
// stages from the cycles.
void assign_stages_and_orders(ScheduleResult& result);

// Every way the schedule breaks its contract, one sentence each; empty when it is valid.
// With check_constraints false, group and max_depth are not checked.
std::vector<std::string> validate_schedule(const LoopGraph& graph, const ScheduleResult& result,
                                           bool check_constraints = true);

}  // namespace tilec::schedule
