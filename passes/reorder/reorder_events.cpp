// passes/reorder/reorder_events.cpp — reorder a segment so no pipe pair holds more than
// max_events live cross-pipe events, keeping every dependence.
//
// Model (broadcast): a dependence p → c across pipes makes the event (p, pipe(c)) live from
// p's execution until the first of p's consumers on pipe(c) runs; events are freed before a
// statement runs and allocated after it.
// 1. Derive the dependences (compute_dependences). If program order already fits, keep it.
// 2. Greedy Kahn, strict, with the three strategies in turn (schedule_greedy): first order
//    that completes wins.
// 3. All three dead-ended: search, unless a simple lower bound on the peak (a consumer that
//    alone frees the events of more than max_events producers) already exceeds the limit. Exact over scheduled sets for n ≤ 64 within a state budget
//    (a verdict of "no order exists" ends the search); otherwise, or without a verdict, a
//    bounded beam search.
// 4. Still nothing: relaxed greedy runs (no limit) with each strategy; the order with the
//    lowest max peak wins (program order when it is no worse), with one warning per pair
//    above the limit naming the pair, its peak and where it is reached.
// Invariants: every returned order is checked by check_order (topological, peaks recounted);
// a failed check is an internal error and throws std::logic_error. Deterministic.
// Cost: O(n + E log E) to derive, O((n + E) · pipes · log n) per greedy run; the searches are
// bounded by their budgets.
#include "passes/reorder/reorder_events.h"

#include <fmt/core.h>

#include <array>
#include <numeric>
#include <optional>
#include <stdexcept>

#include "passes/reorder/check_order.h"
#include "passes/reorder/find_order.h"
#include "passes/reorder/schedule_greedy.h"

namespace tilec::reorder {

namespace {

constexpr Strategy kStrategies[] = {Strategy::min_max_then_sum, Strategy::min_sum_then_max, Strategy::min_max};

// A peak every order reaches: when a statement c is the only consumer on its pipe of k
// producers on one other pipe, their k events are all live once the last of them ran (only c
// frees them). O(n + E).
int compute_peak_lower_bound(const Segment& segment, const DependenceGraph& graph) {
  auto pipe_of = [&](int statement) { return static_cast<int>(segment.statements[statement].pipe); };
  const int count = static_cast<int>(segment.statements.size());
  std::vector<std::array<int, kPipeCount>> consumers_on_pipe(count);
  for (int producer = 0; producer < count; ++producer) {
    consumers_on_pipe[producer].fill(0);
    for (int successor : graph.successors[producer]) ++consumers_on_pipe[producer][pipe_of(successor)];
  }
  int bound = 0;
  for (int consumer = 0; consumer < count; ++consumer) {
    std::array<int, kPipeCount> sole{};
    for (int producer : graph.predecessors[consumer]) {
      if (pipe_of(producer) == pipe_of(consumer) || consumers_on_pipe[producer][pipe_of(consumer)] != 1) continue;
      bound = std::max(bound, ++sole[pipe_of(producer)]);
    }
  }
  return bound;
}

ReorderResult finish(const Segment& segment, const DependenceGraph& graph, std::vector<int> order,
                     std::string strategy, const ReorderOptions& options, bool proven_infeasible = false) {
  OrderCheck check = check_order(segment, graph, order);
  if (!check.valid) throw std::logic_error("reorder produced a bad order (" + strategy + "): " + check.problem);
  ReorderResult result;
  result.strategy = std::move(strategy);
  result.max_peak = check.max_peak;
  result.feasible = check.max_peak <= options.max_events;
  for (int pair = 0; pair < kPairCount; ++pair) {
    if (!check.used[pair]) continue;
    result.peak[pair_name(pair)] = check.peak[pair];
    if (check.peak[pair] <= options.max_events) continue;
    const Statement& where = segment.statements[order[check.peak_statement[pair]]];
    result.warnings.push_back(fmt::format(
        "{}cannot keep {} within {} live events: peak {} after '{}' ({})",
        where.location.empty() ? "" : where.location + ": ", pair_name(pair), options.max_events, check.peak[pair],
        where.name, proven_infeasible ? "no order within the limit exists" : "no order within the limit was found"));
  }
  result.order = std::move(order);
  return result;
}

}  // namespace

ReorderResult reorder_events(const Segment& segment, const ReorderOptions& options) {
  const DependenceGraph graph = compute_dependences(segment);
  const int count = static_cast<int>(segment.statements.size());
  const int limit = options.max_events;

  std::vector<int> program_order(count);
  std::iota(program_order.begin(), program_order.end(), 0);
  OrderCheck original = check_order(segment, graph, program_order);
  if (original.max_peak <= limit) return finish(segment, graph, program_order, "original", options);

  for (Strategy strategy : kStrategies) {
    GreedyRun run = schedule_greedy(segment, graph, strategy, limit);
    if (run.complete) return finish(segment, graph, std::move(run.order), std::string(strategy_name(strategy)), options);
  }

  bool proven_infeasible = compute_peak_lower_bound(segment, graph) > limit;
  if (count <= 64 && !proven_infeasible) {
    SearchOutcome exact = find_order_exact(segment, graph, limit, options.exact_state_budget);
    if (exact.found) return finish(segment, graph, std::move(exact.order), "exact-search", options);
    proven_infeasible = exact.exhausted;
  }
  if (!proven_infeasible) {
    SearchOutcome beam = find_order_beam(segment, graph, limit, options.beam_width, options.beam_work_budget);
    if (beam.found) return finish(segment, graph, std::move(beam.order), "beam-search", options);
  }

  std::vector<int> best_order = program_order;
  std::string best_strategy = "original";
  int best_peak = original.max_peak;
  for (Strategy strategy : kStrategies) {
    GreedyRun run = schedule_greedy(segment, graph, strategy, std::nullopt);
    int peak = check_order(segment, graph, run.order).max_peak;
    if (peak < best_peak) {
      best_peak = peak;
      best_order = std::move(run.order);
      best_strategy = "relaxed-" + std::string(strategy_name(strategy));
    }
  }
  return finish(segment, graph, std::move(best_order), std::move(best_strategy), options, proven_infeasible);
}

}  // namespace tilec::reorder
