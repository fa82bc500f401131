// passes/schedule/generate_cost_based_schedule.cpp — the cost-based generator.
//
// Phases:
//   1. II search from MII = max(ResMII, RecMII): one ladder per ii, ii + 1 on failure for the
//      first `linear_ii_steps` values, then galloping steps (+32, +64, ...) — a heuristic
//      placer is not monotone in ii, so no bisection on ii. The serial schedule's ii bounds
//      the search: failing up to it, the serial schedule is returned with a warning.
//   2. Strategy ladder at one ii, each rung returning at its first success:
//        initial-placement    the seed's arms (permute, fuse, retry, cost-based) and gates
//        rau-refinement       iterative modulo scheduling, height priority, budget 3 per op
//        deepest-retry        the same inside exact closure windows (windowed_modulo_schedule),
//                             then with critical-path priority; budget 6 per op
//        cost-based-placement the cost-based arm alone, on the snapshot the others left
//        clear state, then initial-placement and cost-based-placement again from scratch
//      The seed runs Rau first; here the arms run first so their lexicographic ranking picks
//      the seats whenever it can, and eviction repairs the loops where greedy seating stalls.
//      Loops above closure_limit ops skip the closure-based rungs (the closure is O(V³)).
//   3. The snapshot of dead ops is kept from one ii to the next (the retry arm revives them)
//      and is emptied only by the ladder's clear step; when it is already empty there is
//      nothing to clear, so the last two rungs are skipped.
// Cost: per ii, O(V³) closure (small loops) + the rungs' costs; see the rung files.
#include "passes/schedule/generate_cost_based_schedule.h"

#include <fmt/core.h>

#include <algorithm>
#include <memory>

#include "passes/schedule/cost_evaluators.h"
#include "passes/schedule/iterative_modulo_schedule.h"
#include "passes/schedule/place_with_arms.h"
#include "passes/schedule/windowed_modulo_schedule.h"

namespace tilec::schedule {
namespace {

struct LadderOutcome {
  ModuloAttempt attempt;
  const char* rung = "";
};

LadderOutcome run_strategy_ladder(const LoopGraph& graph, const LoopGraphIndex& index, int ii,
                                  const ScheduleOptions& options, PlacementSnapshot& snapshot,
                                  long& placements) {
  // The arms probe up to ii cycles per ready op; very long intervals on big loops leave it to
  // Rau alone.
  bool with_arms = graph.op_count() <= options.closure_limit &&
                   static_cast<long>(ii) * graph.op_count() <= (1L << 22);
  std::unique_ptr<DistanceClosure> closure;
  std::vector<long> heights = compute_heights(graph, index, ii);
  auto arms = [&](ArmSet set) {
    if (!closure) closure = std::make_unique<DistanceClosure>(graph, ii);
    ModuloAttempt attempt = place_with_arms(graph, index, *closure, heights, ii, set, snapshot);
    placements += attempt.placements;
    return attempt;
  };
  auto rau = [&](ModuloPriority priority, int budget) {
    ModuloAttempt attempt = iterative_modulo_schedule(graph, index, ii, priority, budget);
    placements += attempt.placements;
    return attempt;
  };

  auto windowed = [&](int budget) {
    if (!closure) closure = std::make_unique<DistanceClosure>(graph, ii);
    ModuloAttempt attempt = windowed_modulo_schedule(graph, index, *closure, heights, ii, budget);
    placements += attempt.placements;
    return attempt;
  };

  if (with_arms)
    if (ModuloAttempt a = arms(ArmSet::all); a.scheduled) return {a, "initial-placement"};
  if (ModuloAttempt a = rau(ModuloPriority::height, options.refinement_budget); a.scheduled)
    return {a, "rau-refinement"};
  if (with_arms)
    if (ModuloAttempt a = windowed(options.deepest_budget); a.scheduled)
      return {a, "deepest-retry"};
  if (ModuloAttempt a = rau(ModuloPriority::critical_path, options.deepest_budget); a.scheduled)
    return {a, "deepest-retry"};
  if (!with_arms) return {};
  if (ModuloAttempt a = arms(ArmSet::cost_based_only); a.scheduled) return {a, "cost-based-placement"};
  bool snapshot_empty = std::none_of(snapshot.dead.begin(), snapshot.dead.end(), [](char d) { return d; });
  if (snapshot_empty) return {};
  snapshot.clear();
  if (ModuloAttempt a = arms(ArmSet::all); a.scheduled) return {a, "initial-placement"};
  if (ModuloAttempt a = arms(ArmSet::cost_based_only); a.scheduled) return {a, "cost-based-placement"};
  return {};
}

}  // namespace

void generate_cost_based_schedule(const LoopGraph& graph, const LoopGraphIndex& index,
                                  const MinimumII& bound, const ScheduleOptions& options,
                                  const ScheduleResult& serial, ScheduleResult& result) {
  result.generator = Generator::cost_based;
  PlacementSnapshot snapshot;
  snapshot.dead.assign(graph.ops.size(), 0);
  long placements = 0;
  int step = 1;
  for (int ii = bound.mii(), tried = 0; ii <= serial.ii; ii += step, ++tried) {
    LadderOutcome outcome = run_strategy_ladder(graph, index, ii, options, snapshot, placements);
    if (outcome.attempt.scheduled) {
      result.ii = ii;
      result.strategy = outcome.rung;
      result.placements = placements;
      result.ops.assign(graph.ops.size(), {});
      for (int op = 0; op < graph.op_count(); ++op) result.ops[op].cycle = outcome.attempt.cycles[op];
      return;
    }
    if (tried + 1 >= options.linear_ii_steps) step = std::max(32, step * 2);
  }
  result.generator = Generator::serial;
  result.ii = serial.ii;
  result.strategy = "serial-fallback";
  result.warnings.insert(result.warnings.end(), serial.warnings.begin(), serial.warnings.end());
  result.placements = placements + serial.placements;
  result.ops = serial.ops;
  result.warnings.push_back(fmt::format(
      "cost-based generator found no schedule up to ii {} (the serial schedule's); "
      "using the serial schedule", serial.ii));
}

}  // namespace tilec::schedule
