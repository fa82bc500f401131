// passes/schedule/generate_schedule.cpp — the engine's entry point (DESIGN.md §1,
// generate-schedule): check the input, bound ii, pick a generator, publish (stage, order).
//
// Phases:
//   1. check_loop_graph: input errors are returned, never asserted.
//   2. MII = max(ResMII, RecMII) (compute_mii.cpp).
//   3. Generator choice (choose_generator); the serial schedule is always built: it is the
//      serial answer, the cost-based search's upper bound on ii, and its fallback.
//   4. Normalise cycles, derive stage and order, and run the validator once more as an
//      internal self-check: a failure there is a bug and throws std::logic_error.
// Invariants published: see schedule_result.h. Cost: dominated by the chosen generator.
#include "passes/schedule/generate_schedule.h"

#include <stdexcept>

#include "passes/schedule/compute_mii.h"
#include "passes/schedule/generate_cost_based_schedule.h"
#include "passes/schedule/generate_serial_schedule.h"

namespace tilec::schedule {

Generator choose_generator(const LoopGraph& graph, const ScheduleOptions& options) {
  if (options.generator != Generator::automatic) return options.generator;
  if (graph.force_serial) return Generator::serial;
  if (graph.op_count() < options.serial_threshold) return Generator::serial;
  for (const LoopOp& op : graph.ops)
    if (op.async || !op.uses.empty()) return Generator::cost_based;
  return Generator::serial;
}

ScheduleResult generate_schedule(const LoopGraph& graph, const ScheduleOptions& options) {
  ScheduleResult result;
  result.errors = check_loop_graph(graph);
  if (!result.errors.empty()) return result;

  LoopGraphIndex index = index_loop_graph(graph);
  MinimumII bound = compute_mii(graph);
  ScheduleResult serial;
  generate_serial_schedule(graph, index, serial);

  if (choose_generator(graph, options) == Generator::serial) {
    result = serial;
  } else {
    generate_cost_based_schedule(graph, index, bound, options, serial, result);
    if (result.generator == Generator::cost_based) result.placements += serial.placements;
  }
  result.res_mii = bound.res_mii;
  result.rec_mii = bound.rec_mii;
  result.mii = bound.mii();
  assign_stages_and_orders(result);

  bool constraints_promised = result.generator == Generator::cost_based;
  std::vector<std::string> problems = validate_schedule(graph, result, constraints_promised);
  if (!problems.empty())
    throw std::logic_error("generate_schedule produced an invalid schedule: " + problems.front());
  return result;
}

}  // namespace tilec::schedule
